# Hardware model of the IBM Spyre accelerator: data formats, element sizes and
# the per-compile SpyreConfig (cores, stick size, LX scratchpad, span limit; the
# hardware's values are spyre_mlir.limits).
# Reads the environment variable SENCORES, once per compile, for the drivers'
# default core count (driver_cores); writes nothing.
"""The Spyre hardware model (DESIGN §6).

Dtypes are named canonically as ``'float16'``, ``'bfloat16'``, ``'float32'``,
``'int8'`` or ``'int32'`` (the indices of indirect access, 32 per stick); :func:`canonical_dtype` maps the spellings users, numpy and torch
use onto these names.  :class:`SpyreConfig` holds every machine quantity the
compiler plans against; a compile's target facts (cores, LX fraction) come from
the module's ``#spyre.target`` (DESIGN §14), which the drivers set from their
options (:func:`target_overrides`, :func:`driver_cores`).

The device stores float16 (SEN169_FP16) as DLFloat16: :func:`to_dlfloat16_bits` and
:func:`from_dlfloat16_bits` convert arrays, :func:`encode_scalar` SDSC constants; the
reference interpreter holds it as IEEE float16 or as DLFloat16 by its numerics mode
(:data:`NUMERICS`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.limits import (
    ALIGNMENT,
    LX_BYTES,
    LX_RESERVED_BYTES,
    MAX_CORES,
    SPAN_LIMIT_BYTES,
    STICK_BYTES,
    cores_problem,
)

DATA_FORMATS: dict[str, str] = {
    "float16": "SEN169_FP16",
    "bfloat16": "SEN169_BFP16",
    "float32": "IEEE_FP32",
    "int8": "SENINT8",
    "int32": "IEEE_INT32",
}
"""Device data format of each canonical dtype (int32 holds the indices of indirect access)."""

FORMAT_BYTES: dict[str, int] = {"SEN169_FP16": 2, "SEN169_BFP16": 2, "IEEE_FP32": 4, "SENINT8": 1, "IEEE_INT32": 4}
"""Bytes per element of each device data format."""

FORMAT_NUMPY_DTYPES: dict[str, np.dtype] = {
    "SEN169_FP16": np.dtype(np.float16),
    "SEN169_BFP16": np.dtype(np.uint16),
    "IEEE_FP32": np.dtype(np.float32),
    "SENINT8": np.dtype(np.int8),
    "IEEE_INT32": np.dtype(np.int32),
}
"""The numpy dtype that holds device data of each format: SEN169_FP16 as IEEE fp16 (the interpreter's
``dlfloat16`` numerics holds DLFloat16 bit patterns instead), SEN169_BFP16
(bfloat16, which numpy lacks) as its 16-bit patterns, the upper half of a float32's
(:func:`to_bfloat16_bits`, :func:`from_bfloat16_bits`)."""

_DTYPE_ALIASES: dict[str, str] = {
    "float16": "float16",
    "f16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float32": "float32",
    "f32": "float32",
    "float": "float32",
    "int8": "int8",
    "i8": "int8",
    "int32": "int32",
    "i32": "int32",
}

_DLFLOAT_NINF = 0x7FFF
"""DLFloat16's one non-finite magnitude (all exponent and fraction bits): NaN and infinity alike."""

DLFLOAT16_MAX = (1 + 510 / 512) * 2.0 ** 32
"""The largest finite DLFloat16 (magnitude 0x7FFE, about 8.57e9): a max or min over a padded
SEN169_FP16 stick masks with it, DLFloat16 having no infinity.  Past every float16, so a row of
-inf still reduces to -inf once the result is float16 again (torch-spyre masks with 65504)."""

NUMERICS_IEEE = "ieee"
"""Numerics mode of the reference interpreter: SEN169_FP16 elements are IEEE float16 (the default)."""

NUMERICS_DLFLOAT16 = "dlfloat16"
"""Numerics mode of the reference interpreter: SEN169_FP16 elements are DLFloat16, as the device
stores them (:func:`to_dlfloat16_bits`)."""

NUMERICS = (NUMERICS_IEEE, NUMERICS_DLFLOAT16)
"""The reference interpreter's numerics modes: how it holds SEN169_FP16 elements (``numerics=`` of
``spyre_mlir.interpreter.run``, ``spyre-run --numerics``)."""

CORES_ENV_VAR = "SENCORES"
"""Environment variable that sets the default core count."""


def round_up(value: int, multiple: int) -> int:
    """The smallest multiple of ``multiple`` that is >= ``value``."""
    return -(-value // multiple) * multiple


def _dtype_name(dtype: Any) -> str:
    """A lower-case name for a dtype given as a string, numpy or torch dtype."""
    if isinstance(dtype, type) and issubclass(dtype, np.generic):
        return np.dtype(dtype).name
    name = str(dtype).strip().lower()
    return name.removeprefix("torch.")


def canonical_dtype(dtype: Any) -> str:
    """The canonical name ('float16', 'bfloat16', 'float32', 'int8' or 'int32') of ``dtype``.

    Accepts the canonical names and their aliases ('f16', 'half', 'bf16',
    'f32', 'float', 'i8', 'i32'), numpy dtypes and scalar types, and torch dtypes
    (recognised by their string form, so torch is never imported).  Raises
    :class:`SpyreError` for any other dtype.
    """
    canonical = _DTYPE_ALIASES.get(_dtype_name(dtype))
    if canonical is None:
        supported = ", ".join(sorted(set(_DTYPE_ALIASES.values())))
        raise SpyreError(f"unsupported dtype '{dtype}'; Spyre supports {supported}")
    return canonical


def data_format(dtype: Any) -> str:
    """The device data format ('SEN169_FP16', 'SEN169_BFP16', 'IEEE_FP32', 'SENINT8' or 'IEEE_INT32')
    of ``dtype``."""
    return DATA_FORMATS[canonical_dtype(dtype)]


def element_bytes(dtype: Any) -> int:
    """Bytes one element of ``dtype`` occupies on the device."""
    return FORMAT_BYTES[data_format(dtype)]


def device_numpy_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype that holds device data of ``dtype`` (bfloat16 as its bit patterns, uint16)."""
    return FORMAT_NUMPY_DTYPES[data_format(dtype)]


def to_bfloat16_bits(values: Any) -> np.ndarray:
    """The bfloat16 bit patterns (uint16) of ``values`` rounded to nearest even, as torch's
    ``.to(torch.bfloat16)``: past the largest bfloat16 is infinity, a NaN stays a (quiet) NaN."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + (0x7FFF + (bits >> 16 & 1))) >> 16
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, bits >> 16 | 0x40, rounded).astype(np.uint16)


def from_bfloat16_bits(bits: np.ndarray) -> np.ndarray:
    """The float32 values (exact) of bfloat16 bit patterns, as a new C-contiguous array."""
    return (bits.astype(np.uint32, order="C") << 16).view(np.float32)


def device_values(host: np.ndarray, dtype: Any) -> np.ndarray:
    """``host`` converted to the numpy dtype that holds device data of ``dtype`` (floats rounded
    to nearest even, bfloat16 to its bit patterns)."""
    if data_format(dtype) == "SEN169_BFP16":
        return to_bfloat16_bits(host)
    return host.astype(device_numpy_dtype(dtype))


def host_values(device: np.ndarray, dtype: Any) -> np.ndarray:
    """Device data of ``dtype`` as host values (the inverse of :func:`device_values`): bfloat16's
    bit patterns as their float32 values, any other dtype as it is."""
    if data_format(dtype) == "SEN169_BFP16":
        return from_bfloat16_bits(device)
    return device


_DLFLOAT16_ROUND = 1 << 13
"""Half the last of the 9 fraction bits DLFloat16 keeps of float32's 23: added to a float32's
magnitude bits, it rounds them half away from zero (a carry reaches the exponent)."""

_DLFLOAT16_REBIAS = (127 - 31) << 9
"""float32's exponent bias less DLFloat16's, in the place of DLFloat16's exponent field."""

_DLFLOAT16_LARGEST_FP32 = (63 + 127 - 31) << 23 | 510 << 14 | (_DLFLOAT16_ROUND - 1)
"""The largest float32 magnitude (bits) that rounds to a finite DLFloat16 (:data:`DLFLOAT16_MAX`)."""


def to_dlfloat16_bits(values: Any) -> np.ndarray:
    """The DLFloat16 bit patterns (uint16) of ``values``, as IBM's converter (zDNN's
    ``zdnn_fl32_to_dlflt16``, the NNP1 conversion) computes them.

    DLFloat16 is the device's SEN169_FP16: 1 sign bit, 6 exponent bits (bias 31), 9 fraction
    bits, and no subnormals: exponent field 0 is a normal number.  ``values`` is rounded to
    float32, then to 9 fraction bits half away from zero (a float16 DLFloat16 cannot hold, one
    with its 10th fraction bit set, is always such a tie).  Below the smallest nonzero magnitude
    once rounded, 2**-31 x (1 + 2**-9) (about 4.7e-10), is zero of the value's sign (magnitude 0,
    which 2**-31 itself would be, is zero).  Past :data:`DLFLOAT16_MAX` once rounded, and infinity
    and NaN, is the all-ones magnitude 0x7FFF of the value's sign: DLFloat16's one NaN-or-infinity
    pattern, which :func:`from_dlfloat16_bits` reads as NaN.
    """
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    magnitude = bits & 0x7FFFFFFF
    rounded = (magnitude + _DLFLOAT16_ROUND) >> 14  # float32's exponent field and 9 fraction bits
    encoded = np.maximum(rounded, _DLFLOAT16_REBIAS) - _DLFLOAT16_REBIAS  # below the range: magnitude 0
    encoded = np.where(magnitude > _DLFLOAT16_LARGEST_FP32, _DLFLOAT_NINF, encoded)
    return (bits >> 16 & 0x8000 | encoded).astype(np.uint16)


def from_dlfloat16_bits(bits: np.ndarray) -> np.ndarray:
    """The float32 values (exact) of DLFloat16 bit patterns (any 16-bit integer dtype), as a new
    C-contiguous array: the NaN-or-infinity pattern 0x7FFF of either sign is NaN, as IBM's
    converter (zDNN's DLFloat16 to float32) reads it, so a value that overflowed DLFloat16 is NaN
    once read, not infinity; magnitude 0 is zero of its sign."""
    bits = np.asarray(bits).astype(np.uint32, order="C") & 0xFFFF
    magnitude = bits & 0x7FFF
    value = np.where(magnitude == 0, 0, (magnitude + _DLFLOAT16_REBIAS) << 14) | bits >> 15 << 31
    return np.where(magnitude == _DLFLOAT_NINF, 0x7FC00000, value).astype(np.uint32).view(np.float32)


def encode_scalar(value: float, data_format: str) -> int:
    """The bit pattern of the scalar ``value`` in ``data_format``, as an unsigned integer (how an
    SDSC constant holds it).

    SEN169_FP16 is DLFloat16, not IEEE binary16 (:func:`to_dlfloat16_bits`): 1 sign bit, 6
    exponent bits (bias 31), 9 fraction bits, rounded half away from zero as IBM's converter
    does.  torch-spyre's constants show the format: 1/1024 is 10752, 1e-5 is 7327 (IEEE
    binary16 would be 5120 and 168).  A value it cannot hold (inf, nan, 2**33 and beyond) is a
    :class:`SpyreError`; IEEE_FP32 takes any float, SEN169_BFP16 (bfloat16) any float rounded to
    nearest even, SENINT8 an integer.
    """
    if data_format == "IEEE_FP32":
        return int(np.array(value, dtype=np.float32).view(np.uint32))
    if data_format == "SEN169_BFP16":
        return int(to_bfloat16_bits(value))
    if data_format == "SENINT8":
        return int(value) & 0xFF
    if not math.isfinite(value):
        raise SpyreError(f"the constant {value} has no {data_format} encoding (DLFloat16 holds no "
                         "infinity or NaN); compute in float32")
    bits = int(to_dlfloat16_bits(value))
    if bits & 0x7FFF == _DLFLOAT_NINF:
        raise SpyreError(f"the constant {value} is beyond the {data_format} range (about 8.6e9)")
    return bits


def decode_scalar(bits: int, data_format: str) -> float:
    """The value of the bit pattern ``bits`` in ``data_format`` (the inverse of :func:`encode_scalar`)."""
    if data_format == "IEEE_FP32":
        return float(np.array(bits & 0xFFFFFFFF, np.uint32).view(np.float32))
    if data_format == "SENINT8":
        return float(np.array(bits & 0xFF, np.uint8).view(np.int8))
    if data_format == "SEN169_BFP16":
        return float(from_bfloat16_bits(np.array(bits & 0xFFFF, np.uint16)))
    return float(from_dlfloat16_bits(np.array(bits & 0xFFFF, np.uint16)))


@dataclass(frozen=True)
class SpyreConfig:
    """Machine quantities the compiler plans against; one instance per compile.  The target sets
    ``cores`` and ``backend_lx_fraction``; the others are the hardware's (:mod:`spyre_mlir.limits`)."""

    cores: int = MAX_CORES
    """Cores the work is divided over, 1..32."""

    stick_bytes: int = STICK_BYTES
    """Bytes in one stick, the unit of device memory layout."""

    lx_bytes: int = LX_BYTES
    """Size of each core's LX scratchpad."""

    lx_reserved_bytes: int = LX_RESERVED_BYTES
    """LX bytes reserved by the runtime and never planned."""

    backend_lx_fraction: float = 0.2
    """Share of the remaining LX kept by the back end (DXP_LX_FRAC_AVAIL), 0 <= f < 1."""

    span_limit_bytes: int = SPAN_LIMIT_BYTES
    """Largest span of one tensor one core may address (:func:`spyre_mlir.limits.span_bytes`)."""

    alignment: int = ALIGNMENT
    """Alignment in bytes of LX offsets and device addresses."""

    def __post_init__(self) -> None:
        problem = cores_problem(self.cores)
        if problem is not None:
            raise SpyreError(problem)
        if not 0 <= self.backend_lx_fraction < 1:
            raise SpyreError(
                "backend_lx_fraction must satisfy 0 <= fraction < 1, "
                f"got {self.backend_lx_fraction!r}"
            )

    @property
    def usable_lx_bytes(self) -> int:
        """LX bytes per core available to memory planning (1,625,344 by default)."""
        available = int((self.lx_bytes - self.lx_reserved_bytes) * (1 - self.backend_lx_fraction))
        return round_up(available, self.alignment)

    def elems_per_stick(self, dtype: Any) -> int:
        """Elements of ``dtype`` in one stick (64 fp16/bf16, 32 fp32, 128 int8)."""
        return self.stick_bytes // element_bytes(dtype)


def check_target_option(field: str, value: Any) -> None:
    """One :class:`SpyreError` stating the rule unless ``value`` is a valid ``field`` of
    :class:`SpyreConfig` (``cores``, ``backend_lx_fraction``)."""
    SpyreConfig(**{field: value})


def check_numerics(numerics: Any) -> None:
    """One :class:`SpyreError` unless ``numerics`` is one of :data:`NUMERICS`."""
    if not isinstance(numerics, str) or numerics not in NUMERICS:
        raise SpyreError(f"unknown numerics mode {numerics!r} (choose from {', '.join(NUMERICS)})")


def _checked_option(label: str, field: str, value: Any, who: str) -> None:
    """One :class:`SpyreError` ``who: label: reason`` unless ``value`` is a valid ``field`` of SpyreConfig."""
    try:
        check_target_option(field, value)
    except SpyreError as e:
        raise SpyreError(f"{who}: {label}: {e.msg}") from None


def target_overrides(cores: int | None, lx_fraction: float | None, who: str) -> dict[str, Any]:
    """The :class:`SpyreConfig` fields the target options ``cores`` and ``lx_fraction`` set.

    None means the option was not given (it sets nothing).  A bad value is one
    :class:`SpyreError` naming ``who`` (the pass or tool) and the option:
    ``spyre-compile: cores=33: cores must be an integer between 1 and 32, got 33``.
    """
    overrides: dict[str, Any] = {}
    if cores is not None:
        _checked_option(f"cores={cores}", "cores", cores, who)
        overrides["cores"] = cores
    if lx_fraction is not None:
        _checked_option("lx-fraction", "backend_lx_fraction", lx_fraction, who)
        overrides["backend_lx_fraction"] = float(lx_fraction)
    return overrides


def driver_cores(cores: int | None, who: str) -> int | None:
    """The core count a driver compiles for: ``cores``, else ``$SENCORES``, else None.

    None leaves the module's ``#spyre.target`` (else the default, 32 cores) as it
    is.  This is the one read of the environment, shared by the ``spyre-compile``
    command line and the Python API; no pass reads it.  A bad ``cores`` is one
    :class:`SpyreError` naming ``who`` and the option (``spyre-compile: cores=33:
    cores must be ...``); a bad ``$SENCORES`` one located at ``who`` (the driver
    that read it), naming the variable: ``spyre-compile: error: SENCORES=64: cores
    must be ...``.
    """
    if cores is not None:
        target_overrides(cores, None, who)
        return cores
    env_cores = os.environ.get(CORES_ENV_VAR)
    if env_cores is None:
        return None
    source = f"{CORES_ENV_VAR}={env_cores}"
    try:
        value: Any = int(env_cores)
    except ValueError:
        value = env_cores
    if (problem := cores_problem(value)) is not None:
        raise SpyreError(f"{source}: {problem}", loc=who)
    return value
