# Address computation: where each element of a core's work slice of an SDSC
# tensor lives, derived only from the SDSC JSON (layoutDimOrder_, stick size,
# N_, ss_, scale_, backGapCore_, start addresses), plus the hardware checks on
# those addresses.  Reads SdscSpec records and device memory; writes nothing.
"""Tensor geometry and per-core accesses.

Rules (derived from torch-spyre's emitted files, ``reference/``):

1. A tensor's dims are the labels of its ``layoutDimOrder_``, innermost device
   dim first; the within-stick position is an implicit innermost dim of
   ``stick_size`` elements.  Its stick dim (``stickDimOrder_`` of the
   ``primaryDsInfo_`` entry named by its ``dsType_``) appears at its position
   as a stick count.
2. Extent of a dim per core (elements): ``ss_`` when ``scale_`` is 1, 1 when
   -1, one stick when -2 (a reduction's output, or an input broadcast along
   the dim: see ``execute``).  Full extent: the same with ``N_`` instead of
   ``ss_``, plus ``backGapCore_`` (a tile that is a window of a bigger
   tensor).  Stick dims count whole sticks.
3. Byte strides: the within-stick position has stride ``wordLength``; the
   innermost listed dim has the stick stride (128 B); each next dim's stride
   is the previous stride times the previous dim's extent in units (sticks for
   the stick dim).  HBM tensors use full extents (the start address points
   into the whole tensor); LX tensors hold only the core's slice and use the
   per-core extents.
4. Element address = start + sum(local index x stride), start per core from
   ``startAddressCoreCorelet_`` (a number, or a negative symbol id bound by
   the ``sdsc_execute``).  For HBM, core starts must agree with the work
   slices: start = origin + sum over dims of slice x (per-core extent x stride),
   one origin for all cores (reduced dims contribute nothing: a K cohort
   shares its output start).
5. ``layoutDimOrder_`` may list more labels than the storage has host dims: a
   host dim indexed by several iteration dims (a folded view, ``d0*256 + d2``)
   is several device dims, and rule 3 gives each its stride from the extents
   inside it (the stick label counts sticks, the labels outside it count
   steps of their own extent).  Only the manifest knows host dims.
6. ``coordinates_`` core folds: a kept label's alpha is its per-core extent;
   a -1/-2 label split over cores must have alpha 0 (the cores share it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import FORMAT_NUMPY_DTYPES
from spyre_mlir.interpreter.device import Device
from spyre_mlir.interpreter.sdsc import SCALE_KEPT, SCALE_STICK_REDUCED, SdscSpec, TensorSpec

_F16_TO_F32 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
"""Every float16 bit pattern's float32 value."""


@dataclass(frozen=True)
class Geometry:
    """How one tensor of one SDSC file is laid out, the same for every core."""

    tensor: TensorSpec
    dims: tuple[str, ...]
    """The tensor's dims in iteration (``N_``) order."""
    core_extent: Mapping[str, int]
    """Elements per core along each dim."""
    shape: tuple[int, ...]
    """Per-core view shape in device order (outermost first), within-stick last."""
    strides: tuple[int, ...]
    """Byte strides of ``shape``."""
    slice_step: Mapping[str, int]
    """Bytes a core's start advances per work-slice index along each dim (HBM)."""
    to_logical: tuple[int, ...]
    """Axis permutation from device order to iteration order (stick dim as sticks, within)."""

    @functools.cached_property
    def span(self) -> int:
        """Bytes from a core's first element to one past its last."""
        return sum((n - 1) * s for n, s in zip(self.shape, self.strides)) + self.tensor.word_bytes

    @functools.cached_property
    def nbytes(self) -> int:
        """Bytes of one core's slice."""
        return math.prod(self.shape) * self.tensor.word_bytes

    @property
    def logical_shape(self) -> tuple[int, ...]:
        """Per-core extents in iteration order."""
        return tuple(self.core_extent[d] for d in self.dims)

    @property
    def split_shape(self) -> tuple[int, ...]:
        """``logical_shape`` with the stick dim split into (sticks, within)."""
        return tuple(self.shape[a] for a in self.to_logical)


def geometry(spec: SdscSpec, tensor: TensorSpec) -> Geometry:
    """The :class:`Geometry` of ``tensor`` in ``spec`` (rules 1-3)."""
    def fail(msg: str) -> SpyreError:
        return SpyreError(f"{tensor.name}: {msg}", loc=spec.filename)

    stick, lx = tensor.stick_size, tensor.component == "lx"
    if lx and tensor.back_gap:
        raise fail("backGapCore_ on an LX tensor (LX holds only the core's slice)")
    core, full = {}, {}
    for label in tensor.layout_order:
        scale = tensor.scale[label]
        per_core = {SCALE_KEPT: spec.core_sizes[label], SCALE_STICK_REDUCED: stick}.get(scale, 1)
        whole = {SCALE_KEPT: spec.sizes[label], SCALE_STICK_REDUCED: stick}.get(scale, 1)
        core[label] = per_core
        full[label] = per_core if lx else whole + tensor.back_gap.get(label, 0)
        factor, alpha = tensor.core_fold.get(label, (1, 0))
        if scale == SCALE_KEPT and label in tensor.core_fold and alpha != per_core:
            raise fail(f"coordinates_ core_fold of '{label}' gives {alpha} elements per "
                       f"core, dataStageParam_ ss_ gives {per_core}")
        if scale != SCALE_KEPT and factor > 1 and alpha != 0:
            raise fail(f"coordinates_ core_fold of '{label}' (scale_ {scale}) advances {alpha} elements per "
                       f"core; {factor} cores share the tensor's element there, alpha must be 0")
    for label in (tensor.stick_label,):
        if core[label] % stick or full[label] % stick:
            raise fail(f"stick dim '{label}' extent {core[label]} per core / {full[label]} in all is not a "
                       f"whole number of {stick}-element sticks")

    def units(label: str, extents: Mapping[str, int]) -> int:
        return extents[label] // stick if label == tensor.stick_label else extents[label]

    stride: dict[str, int] = {}
    step = stick * tensor.word_bytes
    for label in tensor.layout_order:
        stride[label] = step
        step *= units(label, full)
    outer_first = tuple(reversed(tensor.layout_order))
    shape = tuple(units(label, core) for label in outer_first) + (stick,)
    strides = tuple(stride[label] for label in outer_first) + (tensor.word_bytes,)
    dims = tuple(label for label in spec.labels if label in tensor.layout_order)
    to_logical: list[int] = []
    for label in dims:
        to_logical.append(outer_first.index(label))
        if label == tensor.stick_label:
            to_logical.append(len(outer_first))
    slice_step = {label: units(label, core) * stride[label] if tensor.scale[label] == SCALE_KEPT else 0
                  for label in dims}
    return Geometry(tensor, dims, core, shape, strides, slice_step, tuple(to_logical))


@dataclass(frozen=True)
class Access:
    """One core's view of one tensor in one execution."""

    geometry: Geometry
    core: int
    start: int
    """HBM address or LX offset."""
    view: np.ndarray
    """Device-order strided view of the core's elements (writeable)."""

    def read(self) -> np.ndarray:
        """The core's elements in iteration order as float32 (a copy)."""
        g = self.geometry
        ordered = self.view.transpose(g.to_logical)
        if ordered.dtype == np.float16:  # a table lookup converts a core slice ~3x faster than astype
            return np.take(_F16_TO_F32, ordered.view(np.uint16)).reshape(g.logical_shape)
        return ordered.astype(np.float32, order="C").reshape(g.logical_shape)

    def write(self, values: np.ndarray) -> None:
        """Store ``values`` (iteration order, ``logical_shape``) in the tensor's format."""
        g = self.geometry
        np.copyto(self.view.transpose(g.to_logical), values.reshape(g.split_shape), casting="unsafe")


def core_access(spec: SdscSpec, g: Geometry, core: int, start: int, device: Device) -> Access:
    """Check ``start`` for ``core`` (alignment, span, bounds) and build the core's view."""
    tensor, config = g.tensor, device.config
    where = f"{tensor.name} on core {core}"

    def fail(msg: str) -> SpyreError:
        return SpyreError(f"{where}: {msg}", loc=spec.filename)

    if start % config.alignment:
        raise fail(f"start address {start} is not {config.alignment}-byte aligned")
    if g.span > config.span_limit_bytes:
        raise fail(f"per-core span {g.span} bytes exceeds the limit of {config.span_limit_bytes}")
    dtype = FORMAT_NUMPY_DTYPES[tensor.data_format]
    if tensor.component == "lx":
        if core >= config.cores:
            raise fail(f"core {core} does not exist ({config.cores} cores)")
        if start < 0 or start + g.span > config.usable_lx_bytes:
            raise fail(f"LX offset {start} + {g.span} bytes exceeds the usable LX of {config.usable_lx_bytes} bytes")
        raw = device.lx[core, start: start + g.span]
    else:
        alloc = device.locate(start)
        offset = start - alloc.base if alloc is not None else -1
        if alloc is None or offset + g.span > alloc.arg.nbytes:
            owner = f"argument '{alloc.arg.name}' ({alloc.arg.nbytes} bytes)" if alloc else "no allocation"
            raise fail(f"HBM bytes [{start:#x}, {start + g.span:#x}) fall outside their allocation: "
                       f"offset {offset} in {owner}")
        raw = alloc.data[offset: offset + g.span]
    view = as_strided(raw.view(dtype), g.shape, g.strides)
    return Access(g, core, start, view)


def check_origins(spec: SdscSpec, accesses: list[Access]) -> None:
    """HBM rule 4: every core's start is one origin plus its work slice's offset."""
    g = accesses[0].geometry
    if g.tensor.component != "hbm":
        return
    expected = None
    for a in accesses:
        offset = sum(spec.slices[a.core][d] * g.slice_step[d] for d in g.dims)
        if expected is None:
            expected = a.start - offset
        elif a.start - offset != expected:
            raise SpyreError(
                f"{g.tensor.name} on core {a.core}: start address {a.start:#x} does not match its work slice "
                f"{dict(spec.slices[a.core])} (expected {expected + offset:#x} from core {accesses[0].core})",
                loc=spec.filename)
