# Unit tests of spyre_mlir.hardware: dtype names, data formats and SpyreConfig.
"""Tests of the hardware model (DESIGN §6)."""

import numpy as np
import pytest

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import (
    DLFLOAT16_MAX,
    NUMERICS,
    SpyreConfig,
    check_numerics,
    canonical_dtype,
    data_format,
    decode_scalar,
    device_numpy_dtype,
    driver_cores,
    element_bytes,
    encode_scalar,
    from_dlfloat16_bits,
    round_up,
    target_overrides,
    to_dlfloat16_bits,
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


_ULP_1 = 2.0 ** -9
"""DLFloat16's last place at 1.0 (9 fraction bits)."""


@pytest.mark.parametrize("value, bits, decoded", [
    (1.0, 0x3E00, 1.0),
    (1 / 1024, 10752, 1 / 1024),  # torch-spyre's constants
    (1e-5, 7327, 9.998679161071777e-06),
    (-2.5, 0xC080, -2.5),
    (1 + _ULP_1 / 2, 0x3E01, 1 + _ULP_1),  # a tie rounds away from zero (nearest even would give 1.0) ...
    (-(1 + _ULP_1 / 2), 0xBE01, -(1 + _ULP_1)),  # ... of either sign
    (1 + 2.5 * _ULP_1, 0x3E03, 1 + 3 * _ULP_1),  # (nearest even would give 2 ulps)
    (1 + 2.4 * _ULP_1, 0x3E02, 1 + 2 * _ULP_1),
    (float(np.float16(1.0009765625)), 0x3E01, 1.001953125),  # a float16 with 10 fraction bits: staging rounds
    (70000.0, 0x5E23, 70016.0),  # finite in DLFloat16, past float16's 65504
    (DLFLOAT16_MAX, 0x7FFE, DLFLOAT16_MAX),  # the largest finite, (1 + 510/512) * 2**32
    (-DLFLOAT16_MAX, 0xFFFE, -DLFLOAT16_MAX),
    (DLFLOAT16_MAX + 2.0 ** 22 - 2.0 ** 9, 0x7FFE, DLFLOAT16_MAX),  # the float32 below that tie rounds down
    (2.0 ** -31 * (1 + _ULP_1), 0x0001, 2.0 ** -31 * (1 + _ULP_1)),  # the smallest nonzero magnitude
    (2.0 ** -31, 0x0000, 0.0),  # would be magnitude 0: zero (no subnormals)
    (1e-12, 0x0000, 0.0),
    (-1e-12, 0x8000, -0.0),
    (-0.0, 0x8000, -0.0),
])
def test_dlfloat16_bits_of_finite_values(value, bits, decoded):
    """float32 -> DLFloat16 rounds to 9 fraction bits half away from zero, as IBM's converter;
    below the smallest magnitude is zero of the value's sign; the patterns read back exactly."""
    assert int(to_dlfloat16_bits(value)) == bits
    back = from_dlfloat16_bits(np.array(bits, np.uint16))
    assert back.dtype == np.float32 and float(back) == decoded
    assert np.signbit(back) == (bits >= 0x8000)


@pytest.mark.parametrize("value, bits", [
    (DLFLOAT16_MAX + 2.0 ** 22, 0x7FFF),  # half its last place past the largest finite: a tie, away from zero
    (2.0 ** 33, 0x7FFF), (1e30, 0x7FFF), (-1e30, 0xFFFF),
    (float("inf"), 0x7FFF), (float("-inf"), 0xFFFF), (float("nan"), 0x7FFF),
])
def test_dlfloat16_beyond_its_range_is_the_nan_or_infinity_pattern_read_as_nan(value, bits):
    """DLFloat16 has no infinity: overflow, infinities and NaN are the all-ones magnitude of
    their sign, which zDNN reads back as NaN."""
    assert int(to_dlfloat16_bits(value)) == bits
    assert np.isnan(from_dlfloat16_bits(np.array(bits, np.uint16)))


def test_dlfloat16_conversions_are_vectorised_and_invert_each_other():
    """Every finite pattern reads as a float32 that converts back to it, from any 16-bit
    integer array (the interpreter holds the patterns as int16), strided or 0-d; a strided
    float16 input converts as its values; the scalar encoding of constants is the same."""
    patterns = np.arange(1 << 16, dtype=np.uint16)
    finite = patterns & 0x7FFF != 0x7FFF
    values = from_dlfloat16_bits(patterns.view(np.int16))
    assert values.shape == patterns.shape and values.flags.c_contiguous
    np.testing.assert_array_equal(to_dlfloat16_bits(values[finite]), patterns[finite])
    assert np.isnan(values[~finite]).all()
    halves = np.array([[1.0009765625, np.inf], [-3.0, 1 / 1024]], np.float16)
    np.testing.assert_array_equal(to_dlfloat16_bits(halves.T), [[0x3E01, 0xC100], [0x7FFF, 10752]])
    for value in (1.0009765625, -3.0, 1e-5, DLFLOAT16_MAX):
        assert encode_scalar(value, "SEN169_FP16") == int(to_dlfloat16_bits(value))
        assert decode_scalar(encode_scalar(value, "SEN169_FP16"), "SEN169_FP16") == \
            float(from_dlfloat16_bits(to_dlfloat16_bits(value)))


def test_numerics_modes_are_checked_in_one_place():
    assert NUMERICS == ("ieee", "dlfloat16")
    for mode in NUMERICS:
        check_numerics(mode)
    with pytest.raises(SpyreError, match=r"^unknown numerics mode 'fp16' \(choose from ieee, dlfloat16\)$"):
        check_numerics("fp16")
