# Address computation: where each element of every core's work slice of an
# SDSC tensor lives, derived only from the SDSC JSON (layoutDimOrder_, stick
# size, N_, ss_, scale_, backGapCore_, start addresses), the hardware checks on
# those addresses, and numpy views of the slices.  Reads SdscSpec records;
# reads and writes device memory through the views.
"""Tensor geometry and the accesses of all cores at once.

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

All used cores' slices of a tensor are accessed together (:class:`TensorAccess`):
when the cores' first bytes form a lattice (the usual case: a work division
splits each dim into equal slices, in core order), they are one strided numpy
view with leading core axes, read or written by one copy; otherwise one view
per core.  How the cores' starts differ from the first core's start does not
change across loop iterations (only the first start moves), so everything
that depends only on those differences (:class:`Placement`) is derived and
checked once per pattern; each execution checks the first start and the
bounds of the whole set.  A failed check re-runs the per-core checks, so the
error names the first offending core.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.interpreter.casts import store, to_float32
from spyre_mlir.interpreter.device import Device
from spyre_mlir.interpreter.sdsc import SCALE_KEPT, SCALE_STICK_REDUCED, SdscSpec, TensorSpec
from spyre_mlir.limits import (
    alignment_problem,
    allocation_problem,
    lx_problem,
    span_bytes,
    span_problem,
    tensor_box,
    whole_sticks_problem,
)


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
        """Bytes from a core's first element to one past its last (:func:`spyre_mlir.limits.span_bytes`)."""
        return span_bytes(self.shape, self.strides, self.tensor.word_bytes)

    @functools.cached_property
    def nbytes(self) -> int:
        """Bytes of one core's slice."""
        return math.prod(self.shape) * self.tensor.word_bytes

    @functools.cached_property
    def logical_shape(self) -> tuple[int, ...]:
        """Per-core extents in iteration order."""
        return tuple(self.core_extent[d] for d in self.dims)

    @functools.cached_property
    def split_shape(self) -> tuple[int, ...]:
        """``logical_shape`` with the stick dim split into (sticks, within)."""
        return tuple(self.shape[a] for a in self.to_logical)

    def to_logical_behind(self, axes: int) -> tuple[int, ...]:
        """``to_logical`` behind ``axes`` leading (core) axes, which stay in place."""
        return (*range(axes), *(axes + a for a in self.to_logical))


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
    problem = whole_sticks_problem(tensor.stick_label, core[tensor.stick_label], full[tensor.stick_label], stick)
    if problem is not None:
        raise fail(problem)
    shape, strides, stride = tensor_box(tensor.layout_order, tensor.stick_label, stick, tensor.word_bytes, core, full)
    outer_first = tuple(reversed(tensor.layout_order))
    dims = tuple(label for label in spec.labels if label in tensor.layout_order)
    to_logical: list[int] = []
    for label in dims:
        to_logical.append(outer_first.index(label))
        if label == tensor.stick_label:
            to_logical.append(len(outer_first))
    slice_step = {label: shape[outer_first.index(label)] * stride[label] if tensor.scale[label] == SCALE_KEPT else 0
                  for label in dims}
    return Geometry(tensor, dims, core, shape, strides, slice_step, tuple(to_logical))


@dataclass(frozen=True)
class Access:
    """One core's slice of one tensor in one execution."""

    geometry: Geometry
    core: int
    start: int
    """HBM address or LX offset."""


def check_start(spec: SdscSpec, g: Geometry, core: int, start: int, device: Device) -> None:
    """Check ``start`` for ``core`` against the limits (:mod:`spyre_mlir.limits`): alignment, span,
    and bounds of LX or of the HBM allocation."""
    tensor, config = g.tensor, device.config

    def fail(msg: str) -> SpyreError:
        return SpyreError(f"{tensor.name} on core {core}: {msg}", loc=spec.filename)

    for problem in (alignment_problem(start, config.alignment), span_problem(g.span, config.span_limit_bytes)):
        if problem is not None:
            raise fail(problem)
    if tensor.component == "lx":
        if (problem := lx_problem(start, g.span, config.usable_lx_bytes)) is not None:
            raise fail(problem)
        return
    alloc = device.locate(start)
    problem = allocation_problem(start - alloc.base, g.span, alloc.arg.nbytes) if alloc else "no allocation holds it"
    if problem is not None:
        owner = f" of argument '{alloc.arg.name}'" if alloc else ""
        raise fail(f"HBM start {start:#x}{owner}: {problem}")


def check_origins(spec: SdscSpec, g: Geometry, starts: Sequence[int]) -> None:
    """HBM rule 4: every core's start is one origin plus its work slice's offset."""
    if g.tensor.component != "hbm":
        return
    cores = spec.cores
    offsets = [_slice_offset(spec, g, core) for core in cores]
    expected = starts[0] - offsets[0]
    for core, start, offset in zip(cores, starts, offsets):
        if start - offset != expected:
            raise SpyreError(
                f"{g.tensor.name} on core {core}: start address {start:#x} does not match its work slice "
                f"{dict(spec.slices[core])} (expected {expected + offset:#x} from core {cores[0]})",
                loc=spec.filename)


def _slice_offset(spec: SdscSpec, g: Geometry, core: int) -> int:
    return sum(spec.slices[core][d] * g.slice_step[d] for d in g.dims)


@dataclass(frozen=True)
class Placement:
    """Where the used cores' slices of one tensor lie relative to the first core's.

    A function of the differences between the cores' starts only.
    """

    low: int
    high: int
    """Least and greatest difference (bytes) of a core's start from the first core's."""
    aligned: bool
    """Every difference is a multiple of the alignment."""
    origins: bool
    """HBM rule 4 holds (always true in LX)."""
    offsets: tuple[int, ...]
    """Each core's first byte in the tensor's buffer (HBM allocation or all LX), from the first core's."""
    lattice: tuple[tuple[int, int], ...] | None
    """(cores, step) of each axis, outermost first, when the offsets enumerate a row-major lattice
    with steps >= 0 (the cores of a work division over several dims): one strided view holds
    every slice."""
    disjoint: bool
    """``lattice`` is set and no byte is in two slices: one copy writes every slice."""

    @property
    def shared(self) -> bool:
        """Every core's slice is the first core's."""
        return not any(self.offsets)


def placement(spec: SdscSpec, g: Geometry, differences: tuple[int, ...], config: SpyreConfig) -> Placement:
    """The :class:`Placement` of ``g``'s slices whose starts differ by ``differences`` from the first core's."""
    cores = spec.cores
    if g.tensor.component == "lx":
        offsets = tuple((core - cores[0]) * config.lx_bytes + d for core, d in zip(cores, differences))
        origins = True
    else:
        offsets = differences
        slice_offsets = [_slice_offset(spec, g, core) for core in cores]
        origins = all(d == o - slice_offsets[0] for d, o in zip(differences, slice_offsets))
    grid = _lattice(offsets)
    disjoint = grid is not None and _disjoint([n for n, _ in grid] + list(g.shape),
                                              [step for _, step in grid] + list(g.strides), g.tensor.word_bytes)
    return Placement(min(differences), max(differences), all(d % config.alignment == 0 for d in differences),
                     origins, offsets, grid, disjoint)


def _lattice(offsets: Sequence[int]) -> tuple[tuple[int, int], ...] | None:
    """(count, step) of each axis, outermost first, if ``offsets[i]`` is the sum over the axes of
    (digit of ``i`` in the row-major lattice index) x (step), every step >= 0; else None.

    Each axis is taken as long as the offsets keep its step (greedily), then the whole
    lattice is checked.
    """
    axes: list[tuple[int, int]] = []
    period = 1
    while period < len(offsets):
        step, count = offsets[period], 1
        while period * (count + 1) <= len(offsets) and offsets[period * count] == count * step:
            count += 1
        if step < 0 or len(offsets) % (period * count):
            return None
        axes.append((count, step))
        period *= count
    grid = tuple(reversed(axes)) or ((1, 0),)
    expected = [0]
    for count, step in grid:
        expected = [e + k * step for e in expected for k in range(count)]
    return grid if expected == list(offsets) else None


def _disjoint(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> bool:
    """True if no two indices of the strided view reach the same byte (each stride, smallest first,
    steps past everything the smaller strides reach; a sufficient condition)."""
    reach = itemsize
    for n, stride in sorted(((n, s) for n, s in zip(shape, strides) if n > 1), key=lambda d: d[1]):
        if stride < reach:
            return False
        reach += (n - 1) * stride
    return True


class TensorAccess:
    """One tensor's slices on every used core in one execution, checked."""

    def __init__(self, spec: SdscSpec, g: Geometry, starts: tuple[int, ...], where: Placement,
                 buffer: np.ndarray, base: int, dtype: np.dtype):
        self.spec, self.geometry, self.starts, self.placement = spec, g, starts, where
        self.buffer, self.base = buffer, base
        """The slices live in ``buffer`` (uint8); the first core's first byte at ``base``."""
        self.dtype = dtype
        """The numpy dtype that holds the elements (by the device's numerics mode)."""

    @property
    def cores(self) -> tuple[int, ...]:
        """The used cores, in ``starts`` order."""
        return self.spec.cores

    def per_core(self) -> dict[int, Access]:
        """Each core's :class:`Access`."""
        return {core: Access(self.geometry, core, start) for core, start in zip(self.cores, self.starts)}

    def read(self) -> np.ndarray:
        """Every core's elements in iteration order as float32 (a copy): shape ``(cores, *logical_shape)``,
        or ``(1, *logical_shape)`` when all cores read the same bytes."""
        g, where = self.geometry, self.placement
        if where.shared:
            device = self._core_view(0)[None]
        elif where.lattice is not None:
            device = self._lattice_view()
        else:
            device = np.stack([self._core_view(i) for i in range(len(self.cores))])
        axes = device.ndim - len(g.shape)
        values = to_float32(device.transpose(g.to_logical_behind(axes)))
        return values.reshape((1 if where.shared else len(self.cores), *g.logical_shape))

    def read_indices(self) -> np.ndarray:
        """Like :meth:`read`, the integer elements as they are (int64): the index of an indirect access."""
        g = self.geometry
        device = np.stack([self._core_view(i) for i in range(len(self.cores))])
        return device.transpose(g.to_logical_behind(1)).astype(np.int64).reshape((len(self.cores), *g.logical_shape))

    def read_rows(self, label: str, rows: int) -> np.ndarray:
        """A table every core reads whole at one start, with ``rows`` elements along ``label`` (its
        gathered dim, one element per core in the geometry): shape ``(1, *logical_shape)`` with
        ``rows`` at ``label``, as float32.  Bytes past its allocation are an error."""
        g = self.geometry
        assert label != g.tensor.stick_label
        axis = len(g.shape) - 2 - g.tensor.layout_order.index(label)
        shape = [rows if a == axis else n for a, n in enumerate(g.shape)]
        span = span_bytes(shape, g.strides, g.tensor.word_bytes)
        if self.base + span > len(self.buffer):
            raise SpyreError(f"{g.tensor.name}: its {rows} rows along '{label}' ({span} bytes) fall outside "
                             "its allocation", loc=self.spec.filename)
        device = self._view(shape, g.strides)
        logical = [rows if d == label else g.core_extent[d] for d in g.dims]
        return to_float32(device.transpose(g.to_logical)).reshape((1, *logical))

    def write_rows(self, label: str, rows: int, values: np.ndarray, indices: np.ndarray) -> None:
        """A row store into a table the cores share at one start, ``rows`` elements along
        ``label`` (:meth:`read_rows`' layout): every core's ``values`` (``(cores, *logical_shape)``,
        its entries along ``label``) go to the rows its ``indices`` (``(cores, entries)``) name; an
        index of -1 (a masked entry) writes nothing."""
        g = self.geometry
        axis = len(g.shape) - 2 - g.tensor.layout_order.index(label)
        shape = [rows if a == axis else n for a, n in enumerate(g.shape)]
        span = span_bytes(shape, g.strides, g.tensor.word_bytes)
        if self.base + span > len(self.buffer):
            raise SpyreError(f"{g.tensor.name}: its {rows} rows along '{label}' ({span} bytes) fall outside "
                             "its allocation", loc=self.spec.filename)
        position = g.to_logical.index(axis)  # the label's axis in the (split) logical view
        table = np.moveaxis(self._view(shape, g.strides).transpose(g.to_logical), position, 0)
        entries = indices.shape[1]
        split = [entries if a == position else n for a, n in enumerate(g.split_shape)]
        for core_values, core_indices in zip(values, indices):
            core_values = np.moveaxis(core_values.reshape(split), position, 0)
            for entry, row in enumerate(core_indices):
                if row >= 0:  # a masked (padding) entry writes nothing
                    store(table[row], core_values[entry])

    def write(self, values: np.ndarray, rows: Sequence[int] | None = None) -> None:
        """Store ``values`` (``(len(rows), *logical_shape)``, or a leading 1 for the same values on
        every core) in the slices of the cores at positions ``rows`` (default: every core)."""
        g, where = self.geometry, self.placement
        split = values.reshape((values.shape[0], *g.split_shape))
        if rows is None and where.disjoint:
            assert where.lattice is not None
            counts = [n for n, _ in where.lattice] if len(split) > 1 else [1] * len(where.lattice)
            store(self._lattice_view().transpose(g.to_logical_behind(len(counts))),
                  split.reshape((*counts, *g.split_shape)))
            return
        for k, i in enumerate(range(len(self.cores)) if rows is None else rows):
            store(self._core_view(i).transpose(g.to_logical), split[k if len(split) > 1 else 0])

    def _lattice_view(self) -> np.ndarray:
        """Every core's slice in one view: the lattice axes, then the slice's device axes."""
        g, grid = self.geometry, self.placement.lattice
        assert grid is not None
        return self._view([n for n, _ in grid] + list(g.shape), [step for _, step in grid] + list(g.strides))

    def _core_view(self, i: int) -> np.ndarray:
        g = self.geometry
        return self._view(g.shape, g.strides, self.placement.offsets[i])

    def _view(self, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> np.ndarray:
        return np.ndarray(tuple(shape), self.dtype, buffer=self.buffer, offset=self.base + offset,
                          strides=tuple(strides))


def access_tensor(spec: SdscSpec, g: Geometry, starts: tuple[int, ...], device: Device,
                  placements: dict[tuple[int, ...], Placement]) -> TensorAccess:
    """Check every used core's start (``starts``, in ``spec.cores`` order) and access the slices.

    ``placements`` caches :class:`Placement` records by start differences across executions.
    A problem is the :class:`SpyreError` of :func:`check_start` or :func:`check_origins` for
    the first offending core.
    """
    first = starts[0]
    differences = tuple(map(first.__rsub__, starts))  # start - first, for each core
    where = placements.get(differences)
    if where is None:
        where = placements[differences] = placement(spec, g, differences, device.config)
    if not _fits(spec, g, where, first, device):
        for core, start in zip(spec.cores, starts):
            check_start(spec, g, core, start, device)
        check_origins(spec, g, starts)
        raise AssertionError(f"{spec.filename}: {g.tensor.name}: a start check failed that no core fails")
    dtype = device.element_dtypes[g.tensor.data_format]
    if g.tensor.component == "lx":
        return TensorAccess(spec, g, starts, where, device.lx, spec.cores[0] * device.config.lx_bytes + first, dtype)
    alloc = device.locate(first)
    assert alloc is not None
    return TensorAccess(spec, g, starts, where, alloc.data, first - alloc.base, dtype)


def _fits(spec: SdscSpec, g: Geometry, where: Placement, first: int, device: Device) -> bool:
    """:func:`check_start` and :func:`check_origins` for every core at once, from the first core's start."""
    config = device.config
    if not (where.aligned and first % config.alignment == 0 and g.span <= config.span_limit_bytes):
        return False
    if g.tensor.component == "lx":
        return first + where.low >= 0 and first + where.high + g.span <= config.usable_lx_bytes
    alloc = device.locate(first + where.low)
    return where.origins and alloc is not None and first + where.high + g.span <= alloc.base + alloc.arg.nbytes
