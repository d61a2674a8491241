# Unit tests of spyre_mlir.hardware: dtype names, data formats and SpyreConfig.
"""Tests of the hardware model (DESIGN §6)."""

import numpy as np
import pytest

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import (
    SpyreConfig,
    canonical_dtype,
    data_format,
    decode_scalar,
    device_numpy_dtype,
    driver_cores,
    element_bytes,
    encode_scalar,
    round_up,
    target_overrides,
)


class _FakeTorchDtype:
    """Stands in for a torch dtype, which prints as e.g. 'torch.float16'."""

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


@pytest.mark.parametrize(
    "spelling, canonical",
    [
        ("float16", "float16"),
        ("f16", "float16"),
        ("half", "float16"),
        ("bfloat16", "bfloat16"),
        ("bf16", "bfloat16"),
        ("float32", "float32"),
        ("f32", "float32"),
        ("float", "float32"),
        ("int8", "int8"),
        ("i8", "int8"),
        ("int32", "int32"),
        ("i32", "int32"),
        (np.float16, "float16"),
        (np.dtype("float32"), "float32"),
        (np.int8, "int8"),
        (_FakeTorchDtype("float16"), "float16"),
        (_FakeTorchDtype("bfloat16"), "bfloat16"),
        (_FakeTorchDtype("float32"), "float32"),
        (_FakeTorchDtype("int8"), "int8"),
    ],
)
def test_canonical_dtype(spelling, canonical):
    assert canonical_dtype(spelling) == canonical


@pytest.mark.parametrize("dtype", ["float64", np.float64, "int16", _FakeTorchDtype("int64"), None])
def test_unsupported_dtype_is_named(dtype):
    with pytest.raises(SpyreError, match="unsupported dtype") as info:
        canonical_dtype(dtype)
    assert str(dtype) in info.value.msg
    assert "float16, float32, int32, int8" in info.value.msg


@pytest.mark.parametrize(
    "dtype, fmt, nbytes, numpy_dtype",
    [
        ("float16", "SEN169_FP16", 2, np.float16),
        ("bfloat16", "SEN169_BFP16", 2, np.uint16),
        ("float32", "IEEE_FP32", 4, np.float32),
        ("int8", "SENINT8", 1, np.int8),
        ("int32", "IEEE_INT32", 4, np.int32),
    ],
)
def test_data_formats(dtype, fmt, nbytes, numpy_dtype):
    assert data_format(dtype) == fmt
    assert element_bytes(dtype) == nbytes
    assert device_numpy_dtype(dtype) == np.dtype(numpy_dtype)


@pytest.mark.parametrize("dtype, elems", [("float16", 64), ("bfloat16", 64), ("float32", 32), ("int8", 128), ("int32", 32)])
def test_elems_per_stick(dtype, elems):
    assert SpyreConfig().elems_per_stick(dtype) == elems


def test_defaults():
    config = SpyreConfig()
    assert config.cores == 32
    assert config.stick_bytes == 128
    assert config.alignment == 128
    assert config.usable_lx_bytes == 1_625_344
    assert config.span_limit_bytes == 268_431_360


def test_usable_lx_is_aligned():
    config = SpyreConfig(backend_lx_fraction=0.3)
    assert config.usable_lx_bytes % config.alignment == 0
    assert config.usable_lx_bytes >= int((config.lx_bytes - config.lx_reserved_bytes) * 0.7)


@pytest.mark.parametrize("value, multiple, expected", [(0, 128, 0), (1, 128, 128), (128, 128, 128), (129, 128, 256)])
def test_round_up(value, multiple, expected):
    assert round_up(value, multiple) == expected


@pytest.mark.parametrize("cores", [1, 8, 32])
def test_valid_cores(cores):
    assert SpyreConfig(cores=cores).cores == cores


@pytest.mark.parametrize("cores", [0, 33, -1, 2.0, True, "8"])
def test_invalid_cores(cores):
    with pytest.raises(SpyreError, match="cores must be an integer between 1 and 32, got"):
        SpyreConfig(cores=cores)


@pytest.mark.parametrize("fraction", [-0.1, 1.0, 1.5])
def test_invalid_backend_fraction(fraction):
    with pytest.raises(SpyreError, match="backend_lx_fraction"):
        SpyreConfig(backend_lx_fraction=fraction)


def test_driver_cores_without_sencores_leaves_the_target(monkeypatch):
    monkeypatch.delenv("SENCORES", raising=False)
    assert driver_cores(None, "spyre-compile") is None


def test_driver_cores_honours_sencores(monkeypatch):
    monkeypatch.setenv("SENCORES", "8")
    assert driver_cores(None, "spyre-compile") == 8


def test_explicit_cores_override_sencores(monkeypatch):
    monkeypatch.setenv("SENCORES", "64")
    assert driver_cores(4, "spyre-compile") == 4


@pytest.mark.parametrize("env, message", [
    ("abc", "spyre-compile: error: SENCORES=abc: cores must be an integer between 1 and 32, got 'abc'"),
    ("33", "spyre-compile: error: SENCORES=33: cores must be an integer between 1 and 32, got 33"),
])
def test_bad_sencores_is_located_at_the_driver(monkeypatch, env, message):
    monkeypatch.setenv("SENCORES", env)
    with pytest.raises(SpyreError) as info:
        driver_cores(None, "spyre-compile")
    assert info.value.format("model.py") == message


def test_bad_cores_option_names_it(monkeypatch):
    monkeypatch.setenv("SENCORES", "4")
    with pytest.raises(SpyreError) as info:
        driver_cores(33, "spyre-compile")
    assert info.value.msg == "spyre-compile: cores=33: cores must be an integer between 1 and 32, got 33"


def test_target_overrides_set_only_the_options_given():
    assert target_overrides(None, None, "p") == {}
    assert target_overrides(4, None, "p") == {"cores": 4}
    assert target_overrides(None, 0.5, "p") == {"backend_lx_fraction": 0.5}


def test_target_overrides_name_the_bad_option():
    with pytest.raises(SpyreError, match="^p: lx-fraction: backend_lx_fraction must satisfy 0 <= fraction < 1, got 1.5$"):
        target_overrides(4, 1.5, "p")
    with pytest.raises(SpyreError, match="^p: cores=0: cores must be"):
        target_overrides(0, 0.5, "p")


@pytest.mark.parametrize("value, bits", [
    (1 / 1024, 10752), (1e-5, 7327), (0.00390625, 11776), (0.000347222222222222, 9944),  # torch-spyre's
    (0.0, 0), (-0.0, 0x8000), (1.0, 31 << 9), (-2.5, 0x8000 | 32 << 9 | 128), (1e-12, 0),
])
def test_sen169_fp16_constants_are_dlfloat16(value, bits):
    """SEN169_FP16 constants are DLFloat16 (1-6-9, bias 31), not IEEE binary16 (1/1024 would be 5120)."""
    assert encode_scalar(value, "SEN169_FP16") == bits
    assert decode_scalar(bits, "SEN169_FP16") == pytest.approx(value, rel=2 ** -10, abs=1e-12)


def test_dlfloat16_rounds_half_away_from_zero_and_keeps_nine_fraction_bits():
    """As IBM's converter (zDNN): a tie rounds away from zero, exponent field 0 is a number."""
    assert encode_scalar(1 + 0.5 / 512, "SEN169_FP16") == 31 << 9 | 1
    assert encode_scalar(-(1 + 1.5 / 512), "SEN169_FP16") == 0x8000 | 31 << 9 | 2
    smallest = 2.0 ** -31 * (1 + 2 ** -9)
    assert encode_scalar(smallest, "SEN169_FP16") == 1 and decode_scalar(1, "SEN169_FP16") == smallest
    for value in np.linspace(-1000, 1000, 101):
        decoded = decode_scalar(encode_scalar(float(value), "SEN169_FP16"), "SEN169_FP16")
        assert abs(decoded - value) <= abs(value) * 2 ** -10


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 1e10])
def test_a_constant_dlfloat16_cannot_hold_is_an_error(value):
    with pytest.raises(SpyreError, match="SEN169_FP16"):
        encode_scalar(value, "SEN169_FP16")


def test_fp32_and_int8_constants_are_their_bits():
    assert encode_scalar(1.0, "IEEE_FP32") == 0x3F800000
    assert decode_scalar(encode_scalar(float("-inf"), "IEEE_FP32"), "IEEE_FP32") == float("-inf")
    assert encode_scalar(-3, "SENINT8") == 0xFD and decode_scalar(0xFD, "SENINT8") == -3
