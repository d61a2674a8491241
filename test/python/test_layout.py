# Unit tests of spyre_mlir.layout: the DESIGN §6 stick layout table, stride maps
# checked numerically against to_device, and host<->device round trips.
"""Tests of stick layouts (DESIGN §6)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import SpyreConfig, host_values
from spyre_mlir.layout import StickLayout, from_device, stick_layout, to_device

DTYPES = ["float16", "bfloat16", "float32", "int8"]

# host shape, dim_order, device_size, stride_map, nbytes (None: not given in DESIGN §6)
DESIGN_TABLE = [
    ([], None, [1, 64], [-1, -1], None),
    ([120], None, [2, 64], [64, 1], None),
    ([512, 240], None, [4, 512, 64], [64, 240, 1], None),
    ([512, 8, 240], None, [8, 4, 512, 64], [240, 64, 1920, 1], None),
    ([1024, 4096], None, [64, 1024, 64], [64, 4096, 1], 8 * 1024 * 1024),
    ([512, 256], [1, 0], [8, 256, 64], [16384, 1, 256], None),
    ([5, 100, 150], None, [100, 3, 5, 64], [150, 64, 15000, 1], None),
]


@pytest.mark.parametrize("shape, dim_order, device_size, stride_map, nbytes", DESIGN_TABLE)
def test_design_table(shape, dim_order, device_size, stride_map, nbytes):
    layout = stick_layout(shape, "float16", dim_order)
    assert layout.device_size == device_size
    assert layout.stride_map == stride_map
    assert layout.nbytes == 128 * math.prod(device_size[:-1])
    if nbytes is not None:
        assert layout.nbytes == nbytes


def test_reversed_dim_order():
    layout = stick_layout([512, 8, 256], "float16", [2, 1, 0])
    assert layout.device_size == [8, 8, 256, 64]
    assert str(layout.device_size) == "[8, 8, 256, 64]"
    assert layout.stick_dim == 0
    assert layout.device_dims == [1, 0, 2, 0]


@pytest.mark.parametrize(
    "dtype, device_size, stride_map",
    [
        ("int8", [2, 512, 128], [128, 240, 1]),
        ("float32", [8, 512, 32], [32, 240, 1]),
        ("bfloat16", [4, 512, 64], [64, 240, 1]),
    ],
)
def test_stick_width_per_dtype(dtype, device_size, stride_map):
    layout = stick_layout([512, 240], dtype)
    assert layout.device_size == device_size
    assert layout.stride_map == stride_map
    assert layout.nbytes == 128 * math.prod(device_size[:-1])


def test_layout_properties():
    layout = stick_layout((5, 100, 150), np.float32)
    assert layout.dtype == "float32"
    assert layout.data_format == "IEEE_FP32"
    assert layout.elems_per_stick == 32
    assert layout.stick_dim == 2
    assert layout.device_dims == [1, 2, 0, 2]
    assert stick_layout([], "int8").stick_dim is None
    assert stick_layout([], "int8").device_dims == [-1, -1]


def test_layout_is_hashable_and_immutable():
    layout = stick_layout([512, 240], "f16")
    assert layout == stick_layout((512, 240), "float16", [0, 1])
    assert len({layout, stick_layout([512, 240], "float16")}) == 1
    layout.device_size.append(1)
    assert layout.device_size == [4, 512, 64]


def test_config_sets_stick_width():
    layout = stick_layout([512, 240], "float16", config=SpyreConfig(stick_bytes=64))
    assert layout.device_size == [8, 512, 32]
    assert layout.nbytes == 64 * 8 * 512


@pytest.mark.parametrize(
    "dim_order, message",
    [([0, 0], "not a permutation"), ([0], "not a permutation"), ([0, 2], "not a permutation"), ([0, "a"], "integers")],
)
def test_bad_dim_order(dim_order, message):
    with pytest.raises(SpyreError, match=message):
        stick_layout([4, 5], "float16", dim_order)


@pytest.mark.parametrize("shape, message", [([4, 0], "size 0"), ([-3], "size -3"), ([2.5], "integers"), (7, "integers")])
def test_bad_shape(shape, message):
    with pytest.raises(SpyreError, match=message):
        stick_layout(shape, "float16")


def test_bad_dtype():
    with pytest.raises(SpyreError, match="unsupported dtype 'float64'"):
        stick_layout([4], "float64")


def test_to_device_rejects_wrong_shape():
    with pytest.raises(SpyreError, match=r"shape \[4, 5\], the layout expects \[5, 4\]"):
        to_device(np.zeros((4, 5)), stick_layout([5, 4], "float16"))


def test_from_device_rejects_wrong_shape():
    with pytest.raises(SpyreError, match=r"the layout expects \[1, 64\]"):
        from_device(np.zeros((1, 32)), stick_layout([], "float16"))


def _host_tensor(shape, dtype, seed):
    """Random integer-valued data, exactly representable in every device format."""
    rng = np.random.default_rng(seed)
    return rng.integers(-100, 100, size=shape).astype(np.float32 if dtype != "int8" else np.int8)


def _padding_mask(layout):
    """True at device positions that hold padding rather than a host element."""
    if layout.stick_dim is None:
        mask = np.ones(layout.device_size, dtype=bool)
        mask[0, 0] = False
        return mask
    count_axis = layout.device_dims.index(layout.stick_dim)
    index = np.indices(layout.device_size)
    position = index[count_axis] * layout.elems_per_stick + index[-1]
    return position >= layout.host_shape[layout.stick_dim]


@pytest.mark.parametrize("shape, dim_order", [(row[0], row[1]) for row in DESIGN_TABLE[:4]] + [([5, 7, 9], [2, 0, 1])])
def test_padding_is_zero(shape, dim_order):
    layout = stick_layout(shape, "float16", dim_order)
    host = np.full(shape, 3.0, dtype=np.float16)
    device = to_device(host, layout)
    padding = _padding_mask(layout)
    assert device.shape == tuple(layout.device_size)
    assert device.dtype == np.float16
    assert np.all(device[padding] == 0)
    assert np.all(device[~padding] == 3)


def _check_stride_map(host, layout):
    """Each non-padding device element equals host.flat[sum(index * stride)]."""
    device = host_values(to_device(host, layout), layout.dtype)
    index = np.indices(layout.device_size).reshape(len(layout.device_size), -1)
    strides = np.array([max(s, 0) for s in layout.stride_map]).reshape(-1, 1)
    flat_offset = (index * strides).sum(axis=0)
    real = ~_padding_mask(layout).reshape(-1)
    assert real.sum() == host.size
    np.testing.assert_array_equal(device.reshape(-1)[real], host.reshape(-1)[flat_offset[real]])


@pytest.mark.parametrize("shape, dim_order", [(row[0], row[1]) for row in DESIGN_TABLE[:4]] + [([5, 7, 9], [2, 0, 1])])
def test_stride_map_addresses_host_elements(shape, dim_order):
    host = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    _check_stride_map(host, stick_layout(shape, "float32", dim_order))


@st.composite
def _shapes(draw, max_rank=4, max_dim=70, max_elems=20000):
    """Shapes of rank 0..max_rank with dims 1..max_dim and at most max_elems elements."""
    rank = draw(st.integers(0, max_rank))
    shape = []
    for _ in range(rank):
        budget = max_elems // math.prod(shape)
        shape.append(draw(st.integers(1, min(max_dim, budget))))
    return shape


@settings(max_examples=60, deadline=None)
@given(shape=_shapes(), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_round_trip_every_dim_order(shape, dtype, seed):
    host = _host_tensor(shape, dtype, seed)
    for dim_order in itertools.permutations(range(len(shape))):
        layout = stick_layout(shape, dtype, dim_order)
        device = to_device(host, layout)
        assert list(device.shape) == layout.device_size
        assert device.nbytes == layout.nbytes
        assert not np.any(device[_padding_mask(layout)])
        back = from_device(device, layout)
        assert back.shape == tuple(shape)
        np.testing.assert_array_equal(back, host)
        _check_stride_map(host, layout)


def test_direct_construction_is_validated():
    with pytest.raises(SpyreError, match="not a permutation"):
        StickLayout((4, 5), "float16", (1, 1), 64)
    assert StickLayout([4, 5], "f16", [1, 0], 64) == stick_layout([4, 5], "float16", [1, 0])


def test_padded_shape_pads_non_stick_dims():
    # A matmul B operand [100, 150] with K = 100 padded to 128 (fp32: 32 per stick).
    layout = stick_layout([100, 150], "float32", padded_shape=[128, 150])
    assert layout.device_size == [5, 128, 32]
    assert layout.padded_shape == (128, 150)
    assert layout.nbytes == 128 * 5 * 128
    assert stick_layout([100, 150], "float32", padded_shape=[100, 150]) == stick_layout([100, 150], "float32")
    host = np.arange(100 * 150, dtype=np.float32).reshape(100, 150) + 1
    device = to_device(host, layout)
    assert device.shape == (5, 128, 32)
    assert not device[:, 100:, :].any() and not device[4, :, 22:].any()
    np.testing.assert_array_equal(from_device(device, layout), host)
    # Device element [c, k, e] holds host[k, 32 * c + e]: the stride map ignores the padding.
    assert layout.stride_map == [32, 150, 1]
    np.testing.assert_array_equal(device[1, 7, 3], host[7, 35])


@settings(max_examples=40, deadline=None)
@given(shape=_shapes(max_rank=3, max_dim=40), pad=st.lists(st.integers(0, 5), min_size=3, max_size=3),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_padded_round_trip(shape, pad, dtype, seed):
    host = _host_tensor(shape, dtype, seed)
    padded = [s + p for s, p in zip(shape, pad)]
    for dim_order in itertools.permutations(range(len(shape))):
        layout = stick_layout(shape, dtype, dim_order, padded_shape=padded)
        device = to_device(host, layout)
        assert list(device.shape) == layout.device_size
        assert int(np.count_nonzero(device)) == int(np.count_nonzero(host))
        np.testing.assert_array_equal(from_device(device, layout), host)


def test_bad_padded_shape():
    with pytest.raises(SpyreError, match="does not cover host shape"):
        stick_layout([4, 5], "float16", padded_shape=[3, 5])


def test_tensor_layout_reads_padding_from_device_size():
    from xdsl.dialects.builtin import TensorType, f16

    from spyre_mlir.dialects.spyre import LayoutAttr, layout_attr, tensor_layout

    layout = stick_layout([100, 150], "float16", padded_shape=[128, 150])
    t = TensorType(f16, [100, 150], layout_attr(layout))
    assert tensor_layout(t) == layout
    assert tensor_layout(TensorType(f16, [100, 150], LayoutAttr([3, 100, 64], [0, 1], "SEN169_FP16"))) == \
        stick_layout([100, 150], "float16")
    # Extra sticks pad the stick dim.
    assert tensor_layout(TensorType(f16, [100, 150], LayoutAttr([4, 100, 64], [0, 1], "SEN169_FP16"))).padded_shape \
        == (100, 256)
