# Tensor types of the `spyre` dialect: element dtypes, the stick layout of a
# tensor type and the checks every op runs on its tensor types.  Reads tensor
# types and their `#spyre.layout` encodings, the stick-layout model
# (spyre_mlir.layout) and the data formats (spyre_mlir.hardware); writes
# nothing.
"""Tensor types of the ``spyre`` dialect: dtypes, stick layouts, verification."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType, NoneAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre.attributes import LayoutAttr
from spyre_mlir.hardware import data_format
from spyre_mlir.layout import ABSENT, StickLayout, stick_layout


_DTYPES: tuple[tuple[type[Attribute], str], ...] = (
    (Float16Type, "float16"),
    (BFloat16Type, "bfloat16"),
    (Float32Type, "float32"),
)


def element_dtype(element_type: Attribute) -> str | None:
    """The canonical dtype name of an MLIR element type, None if Spyre has none."""
    for cls, name in _DTYPES:
        if isinstance(element_type, cls):
            return name
    if isinstance(element_type, IntegerType) and element_type.width.data in (8, 32):
        return f"int{element_type.width.data}"
    return None


def tensor_shape(value: SSAValue | Attribute) -> tuple[int, ...]:
    """The static shape of a tensor value or tensor type."""
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def padded_shape(t: Attribute) -> tuple[int, ...]:
    """The extent of each host dim of a tensor type on the device: its shape, or wider where its
    layout pads the dim (an op may iterate the padding: spyre-pad-dims)."""
    return tensor_layout(t).padded_host_shape


@functools.lru_cache(maxsize=4096)
def tensor_layout(t: Attribute) -> StickLayout:
    """The stick layout of a tensor type: its ``#spyre.layout``, else its shape's default.

    A ``device_size`` beyond the default of the dim order pads host dims (e.g. a
    matmul B operand's K dim padded to whole sticks).
    """
    assert isinstance(t, TensorType)
    dtype = element_dtype(t.get_element_type())
    assert dtype is not None, f"no Spyre dtype for {t}"
    order = list(t.encoding.order) if isinstance(t.encoding, LayoutAttr) else None
    layout = stick_layout(t.get_shape(), dtype, order or None)
    if isinstance(t.encoding, LayoutAttr) and list(t.encoding.sizes) != layout.device_size:
        padded = _padded_host_shape(layout, t.encoding.sizes)
        layout = stick_layout(t.get_shape(), dtype, order or None, padded_shape=padded)
    return layout


def _padded_host_shape(layout: StickLayout, sizes: Sequence[int]) -> list[int]:
    """The host-dim extents held by device ``sizes`` (at least ``layout``'s default sizes)."""
    padded = list(layout.host_shape)
    default = layout.device_size
    for size, minimum, dim in zip(sizes[:-1], default[:-1], layout.device_dims[:-1]):
        if dim == ABSENT or size == minimum:
            continue
        padded[dim] = size * layout.elems_per_stick if dim == layout.stick_dim else size
    return padded


def verify_tensor_type(t: Attribute, what: str, index: bool = True) -> None:
    """Static shape, a Spyre element type, and a layout consistent with both.

    i32 is the type of indices: a compute op takes it only where it reads an index (``index``).
    """
    assert isinstance(t, TensorType)
    shape = tuple(t.get_shape())
    if any(s < 0 for s in shape):
        raise VerifyException(f"{what} has a dynamic shape {t}; only static shapes are supported")
    if 0 in shape:
        raise VerifyException(f"{what} has an empty dimension {t}; every dimension must be at least 1")
    dtype = element_dtype(t.get_element_type())
    if dtype is None or (dtype == "int32" and not index):
        expected = "f16, bf16, f32, i8, i32" if index else "f16, bf16, f32, i8"
        raise VerifyException(f"{what} has element type {t.get_element_type()}, expected one of {expected}")
    layout = t.encoding
    if isinstance(layout, NoneAttr):
        return
    if not isinstance(layout, LayoutAttr):
        raise VerifyException(f"{what} has encoding {layout}, expected #spyre.layout")
    if len(layout.order) != len(shape):
        raise VerifyException(f"{what}: layout dim_order {list(layout.order)} does not match rank {len(shape)}")
    expected = stick_layout(shape, dtype, list(layout.order) or None)
    if layout.data_format.data != data_format(dtype):
        raise VerifyException(f"{what}: layout format '{layout.data_format.data}' does not match "
                              f"element type {dtype} ('{data_format(dtype)}')")
    minimum = expected.device_size
    if len(layout.sizes) != len(minimum) or any(a < b for a, b in zip(layout.sizes, minimum)):
        raise VerifyException(f"{what}: layout device_size {list(layout.sizes)} cannot hold the "
                              f"tensor; needs at least {list(minimum)}")
