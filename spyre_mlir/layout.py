# Stick layouts (DESIGN §6): where each element of a host tensor lives in Spyre
# device memory, and numpy conversion between the host and device forms.
# Reads host shapes, dtypes, dim orders and numpy arrays; writes numpy arrays.
"""Stick layouts.

Device memory is organised in sticks of ``SpyreConfig.stick_bytes`` bytes.  A
host tensor of rank r with ``dim_order`` d (default ``[0..r-1]``; ``d[-1]`` is
the stick dim) is stored row-major over the device dims ``d[1:]``, ``d[0]``
and the within-stick position.  The stick dim therefore appears twice: once
as a stick count ``ceil(size / elems_per_stick)`` (the stick dim is padded to
whole sticks with zeros) and once as the innermost dim of ``elems_per_stick``
elements.  A rank-0 tensor occupies one stick, a rank-1 tensor
``[stick count, elems_per_stick]``.

A layout may also pad host dims beyond their size (``padded_shape``): a
matmul's B operand has its K dim padded to whole sticks even though K is not
its stick dim.  Padding elements are zero on the device.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import (
    SpyreConfig,
    canonical_dtype,
    data_format,
    device_values,
    host_values,
    element_bytes,
)

ABSENT = -1
"""Marks a device dim that no host dim maps to, in ``device_dims`` and ``stride_map``."""


@dataclass(frozen=True)
class StickLayout:
    """The device layout of one host tensor.

    Only the host shape, dtype, dim order and stick width are stored; the
    device view (``device_size``, ``stride_map``, ``device_dims``, ``nbytes``)
    is derived from them, so a layout is immutable, hashable and always
    consistent.  Build layouts with :func:`stick_layout`.
    """

    host_shape: tuple[int, ...]
    """Shape of the (row-major, contiguous) host tensor."""

    dtype: str
    """Canonical dtype: 'float16', 'bfloat16', 'float32' or 'int8'."""

    dim_order: tuple[int, ...]
    """Permutation of the host dims; the last entry is the stick dim."""

    elems_per_stick: int
    """Elements of ``dtype`` in one stick."""

    padded_shape: tuple[int, ...] | None = None
    """Device extent of each host dim before stick padding (None: the host shape).

    Normalised to None when it equals ``host_shape``, so equal layouts compare equal.
    """

    def __post_init__(self) -> None:
        shape = _checked_shape(self.host_shape)
        object.__setattr__(self, "host_shape", shape)
        object.__setattr__(self, "dtype", canonical_dtype(self.dtype))
        object.__setattr__(self, "dim_order", _checked_dim_order(self.dim_order, shape))
        if not isinstance(self.elems_per_stick, int) or self.elems_per_stick < 1:
            raise SpyreError(f"elems_per_stick must be a positive integer, got {self.elems_per_stick!r}")
        object.__setattr__(self, "padded_shape", _checked_padded_shape(self.padded_shape, shape))

    @property
    def padded_host_shape(self) -> tuple[int, ...]:
        """The extent of each host dim on the device, before stick padding."""
        return self.padded_shape or self.host_shape

    @property
    def is_padded(self) -> bool:
        """True when the layout has a ``padded_shape``: some host dim padded beyond its extent
        (off the stick, or on it beyond the host extent), bytes a writer of the host extent may
        leave alone."""
        return self.padded_shape is not None

    @property
    def data_format(self) -> str:
        """The device data format of the elements."""
        return data_format(self.dtype)

    @property
    def stick_dim(self) -> int | None:
        """The host dim laid out along sticks, or None for a rank-0 tensor."""
        return self.dim_order[-1] if self.dim_order else None

    @property
    def device_dims(self) -> list[int]:
        """For each device dim, the host dim it comes from (-1 for none).

        The stick dim appears twice: as the stick count and as the innermost
        within-stick dim.
        """
        order = list(self.dim_order)
        if not order:
            return [ABSENT, ABSENT]
        return order[1:] + order[:1] + order[-1:]

    @property
    def device_size(self) -> list[int]:
        """Extent of each device dim, outermost first."""
        return [size for size, _ in self._device_view]

    @property
    def host_nbytes(self) -> int:
        """Bytes of the host tensor's elements, without the device's padding."""
        return math.prod(self.host_shape) * element_bytes(self.dtype)

    @property
    def stride_map(self) -> list[int]:
        """Host-element stride of each device dim (-1 for a dim absent from the host tensor)."""
        return [stride for _, stride in self._device_view]

    @functools.cached_property
    def nbytes(self) -> int:
        """Bytes the tensor occupies in device memory, padding included."""
        stick_bytes = self.elems_per_stick * element_bytes(self.dtype)
        return stick_bytes * math.prod(self.device_size[:-1])

    @functools.cached_property
    def _device_view(self) -> tuple[tuple[int, int], ...]:
        """(extent, host stride) of each device dim (derived once per layout)."""
        host_strides = _row_major_strides(self.host_shape)
        extents = self.padded_host_shape
        dims = self.device_dims
        view = []
        for j, host_dim in enumerate(dims):
            if j == len(dims) - 1:
                stride = ABSENT if host_dim == ABSENT else host_strides[host_dim]
                view.append((self.elems_per_stick, stride))
            elif host_dim == ABSENT:
                view.append((1, ABSENT))
            elif host_dim == self.stick_dim:
                count = _ceil_div(extents[host_dim], self.elems_per_stick)
                view.append((count, self.elems_per_stick * host_strides[host_dim]))
            else:
                view.append((extents[host_dim], host_strides[host_dim]))
        return tuple(view)


def stick_layout(
    shape: Sequence[int],
    dtype: Any,
    dim_order: Sequence[int] | None = None,
    config: SpyreConfig | None = None,
    padded_shape: Sequence[int] | None = None,
) -> StickLayout:
    """The stick layout of a host tensor of ``shape`` and ``dtype``.

    ``dim_order`` defaults to ``[0..rank-1]`` (the last host dim is sticked);
    ``config`` supplies the stick size (default :class:`SpyreConfig`);
    ``padded_shape`` (default ``shape``) pads host dims with zeros on the device.
    Raises :class:`SpyreError` for an unsupported dtype, a dim that is not a
    positive integer, a ``dim_order`` that is not a permutation of the host
    dims, or a ``padded_shape`` smaller than ``shape``.
    """
    config = config or SpyreConfig()
    host_shape = _checked_shape(shape)
    order = tuple(range(len(host_shape))) if dim_order is None else dim_order
    padded = None if padded_shape is None else tuple(padded_shape)
    return StickLayout(host_shape, dtype, order, config.elems_per_stick(dtype), padded)


WHOLE, STICKS, IN_STICK = range(3)
"""How a device dim indexes its host coordinate ``c``: as is, in whole sticks (``c // elems_per_stick``),
or within the stick (``c % elems_per_stick``)."""


@functools.lru_cache(maxsize=4096)
def offset_terms(layout: StickLayout) -> tuple[tuple[int, int, int], ...]:
    """Per device dim of a host dim, outermost first: ``(host dim, how, bytes per step)``, ``how`` one
    of :data:`WHOLE`, :data:`STICKS`, :data:`IN_STICK`; an element's byte offset is the sum over
    them (:func:`device_offset`)."""
    sizes, dims = layout.device_size, layout.device_dims
    last, word = len(dims) - 1, element_bytes(layout.dtype)
    terms = []
    for j, h in enumerate(dims):
        if h == ABSENT:
            continue
        how = IN_STICK if j == last else STICKS if h == layout.stick_dim else WHOLE
        terms.append((h, how, math.prod(sizes[j + 1:]) * word))
    return tuple(terms)


def device_offset(layout: StickLayout, coords: Sequence[int]) -> int:
    """Byte offset of the element at host ``coords`` in device memory."""
    eps, offset = layout.elems_per_stick, 0
    for h, how, step in offset_terms(layout):
        c = coords[h]
        offset += (c if how == WHOLE else c // eps if how == STICKS else c % eps) * step
    return offset


def to_device(array: Any, layout: StickLayout) -> np.ndarray:
    """The device form of a host array: shape ``device_size``, stick padding zero-filled.

    The result is contiguous and has the numpy dtype of the layout's data format.
    """
    host = np.asarray(array)
    if host.shape != layout.host_shape:
        raise SpyreError(
            f"host array has shape {list(host.shape)}, the layout expects {list(layout.host_shape)}"
        )
    shape, stick = _sticked_shape(layout)
    host = device_values(host, layout.dtype).reshape(shape)
    padding = [(0, padded - size) for size, padded in zip(shape, _padded_shape(layout))]
    split = np.pad(host, padding).reshape(_split_shape(layout))
    return np.ascontiguousarray(split.transpose(_device_axes(layout)))


def from_device(device_array: Any, layout: StickLayout) -> np.ndarray:
    """The host form of a device array (the inverse of :func:`to_device`), padding dropped.

    The result has shape ``host_shape`` and the device array's dtype (bfloat16's bit patterns
    become their float32 values).
    """
    device = np.asarray(device_array)
    if list(device.shape) != layout.device_size:
        raise SpyreError(
            f"device array has shape {list(device.shape)}, the layout expects {layout.device_size}"
        )
    shape, _ = _sticked_shape(layout)
    split = device.transpose(np.argsort(_device_axes(layout)))
    padded = split.reshape(_padded_shape(layout))
    host = padded[tuple(slice(0, size) for size in shape)]
    return host_values(host.reshape(layout.host_shape).copy(), layout.dtype)


def _checked_shape(shape: Any) -> tuple[int, ...]:
    """``shape`` as a tuple of ints, each at least 1."""
    try:
        dims = tuple(operator.index(size) for size in shape)
    except TypeError:
        raise SpyreError(f"shape must be a sequence of integers, got {shape!r}") from None
    for i, size in enumerate(dims):
        if size < 1:
            raise SpyreError(
                f"dimension {i} of shape {list(dims)} has size {size}; "
                "stick layouts need every dimension to be at least 1"
            )
    return dims


def _checked_dim_order(dim_order: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``dim_order`` as a tuple, checked to be a permutation of the dims of ``shape``."""
    try:
        order = tuple(operator.index(d) for d in dim_order)
    except TypeError:
        raise SpyreError(f"dim_order must be a sequence of integers, got {dim_order!r}") from None
    if sorted(order) != list(range(len(shape))):
        raise SpyreError(
            f"dim_order {list(order)} is not a permutation of "
            f"{list(range(len(shape)))} for host shape {list(shape)}"
        )
    return order


def _checked_padded_shape(padded: Any, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """``padded`` as a tuple (None when it equals ``shape``), checked to cover ``shape``."""
    if padded is None:
        return None
    dims = _checked_shape(padded)
    if len(dims) != len(shape) or any(p < s for p, s in zip(dims, shape)):
        raise SpyreError(f"padded shape {list(dims)} does not cover host shape {list(shape)}")
    return None if dims == shape else dims


def _row_major_strides(shape: tuple[int, ...]) -> list[int]:
    """Element strides of a contiguous row-major array of ``shape``."""
    return [math.prod(shape[i + 1 :]) for i in range(len(shape))]


def _ceil_div(value: int, divisor: int) -> int:
    return -(-value // divisor)


def _sticked_shape(layout: StickLayout) -> tuple[tuple[int, ...], int]:
    """The host shape and stick dim, with a rank-0 tensor viewed as shape (1,)."""
    if layout.stick_dim is None:
        return (1,), 0
    return layout.host_shape, layout.stick_dim


def _padded_shape(layout: StickLayout) -> tuple[int, ...]:
    """The device extents of the (sticked) host dims: padded dims, stick dim in whole sticks."""
    if layout.stick_dim is None:
        return (layout.elems_per_stick,)
    padded = list(layout.padded_host_shape)
    stick = layout.stick_dim
    padded[stick] = _ceil_div(padded[stick], layout.elems_per_stick) * layout.elems_per_stick
    return tuple(padded)


def _split_shape(layout: StickLayout) -> tuple[int, ...]:
    """The padded host shape with the stick dim split into (stick count, within stick)."""
    shape, stick = _padded_shape(layout), _sticked_shape(layout)[1]
    eps = layout.elems_per_stick
    return shape[:stick] + (shape[stick] // eps, eps) + shape[stick + 1 :]


def _device_axes(layout: StickLayout) -> list[int]:
    """For each device dim, its axis in the split shape (see :func:`_split_shape`)."""
    _, stick = _sticked_shape(layout)
    order = list(layout.dim_order) or [0]
    axes = [dim + (dim > stick) for dim in order[1:] + order[:1]]
    return axes + [stick + 1]
