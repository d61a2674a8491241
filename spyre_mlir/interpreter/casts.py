# Element conversions of the interpreter: its numerics modes (how SEN169_FP16
# elements are held: IEEE float16 or DLFloat16), device elements (float16,
# DLFloat16, bfloat16, float32, int8) to the float32 the op funcs compute in,
# float32 results back into device memory, and the staging copies between host
# and device layouts.  Reads and writes numpy arrays.
"""float16, DLFloat16 and bfloat16 <-> float32 casts, and the numerics modes.

bfloat16 is held as its bit patterns (uint16, ``hardware.FORMAT_NUMPY_DTYPES``):
reading one is exact, storing into one rounds to nearest even, as torch does.

SEN169_FP16, the device's float16 format, is held by numerics mode
(``hardware.NUMERICS``):
``ieee`` holds it as IEEE float16 (every op's result rounded to nearest even,
past 65504 infinity); ``dlfloat16`` as the device stores it, DLFloat16 (1-6-9,
bias 31: ``hardware.to_dlfloat16_bits``), held as its bit patterns in int16
(:data:`DLFLOAT16_BITS`; uint16 is bfloat16's): staging and every op's result
round half away from zero to 9 fraction bits, values up to about 8.6e9 stay
finite, and one beyond is the NaN-or-infinity pattern, read as NaN (a staged infinity, a
mask's ``-inf``, is the largest finite DLFloat16 of its sign: :func:`staged`).

numpy converts float16 with scalar code unless it was built for F16C, and
its x86-64 wheels are not (~2 ns an element, more than the op funcs take);
torch's casts are vectorised (~0.2 ns).  When the caller has already imported
torch (every run that checks a torch program has), copies and casts between
float16 and float32 go through torch on the same numpy memory; otherwise
numpy does them.  torch is never
imported here (it costs a second).  The casts run in one torch thread (the
intra-op thread count is set to 1 for each cast and restored): they are many
and small, and on a busy machine torch's thread pool makes each one up to 50x
slower.

Both are the IEEE conversions (float16 -> float32 is exact, float32 -> float16
rounds to nearest even and overflows to infinity), so the bits are the same
either way; only NaN payloads may differ.
"""

from __future__ import annotations

import sys
from types import ModuleType

import numpy as np

from spyre_mlir.hardware import (
    DLFLOAT16_MAX,
    FORMAT_NUMPY_DTYPES,
    NUMERICS_DLFLOAT16,
    check_numerics,
    from_bfloat16_bits,
    from_dlfloat16_bits,
    to_bfloat16_bits,
    to_dlfloat16_bits,
)

_F16_TO_F32 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
"""Every float16 bit pattern's float32 value (a table lookup beats numpy's float16 cast on strided views)."""

BFLOAT16_BITS = FORMAT_NUMPY_DTYPES["SEN169_BFP16"]
"""How the interpreter holds bfloat16 elements."""

DLFLOAT16_BITS = np.dtype(np.int16)
"""How the interpreter holds SEN169_FP16 elements in ``dlfloat16`` numerics: their DLFloat16
bit patterns, in a dtype of their own (bfloat16's are uint16) that says which format they are."""


def _to_dlfloat16(values: np.ndarray) -> np.ndarray:
    """The DLFloat16 bit patterns of ``values``, as :data:`DLFLOAT16_BITS`."""
    return to_dlfloat16_bits(values).view(DLFLOAT16_BITS)


_BIT_PATTERNS = {BFLOAT16_BITS: (from_bfloat16_bits, to_bfloat16_bits),
                 DLFLOAT16_BITS: (from_dlfloat16_bits, _to_dlfloat16)}
"""Each dtype holding bit patterns: its decoding to float32 and its (rounding) encoding."""

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32))
"""The dtypes whose copies and casts go through torch."""


def element_dtypes(numerics: str) -> dict[str, np.dtype]:
    """The numpy dtype that holds the elements of each device data format in ``numerics``."""
    check_numerics(numerics)
    if numerics == NUMERICS_DLFLOAT16:
        return {**FORMAT_NUMPY_DTYPES, "SEN169_FP16": DLFLOAT16_BITS}
    return FORMAT_NUMPY_DTYPES


def to_float32(x: np.ndarray) -> np.ndarray:
    """``x`` (any strides, zero strides included) as a new C-contiguous float32 array."""
    if x.dtype in _BIT_PATTERNS:
        return _BIT_PATTERNS[x.dtype][0](x)
    if x.dtype != np.float16:
        return x.astype(np.float32, order="C")
    torch = _torch_for(x)
    if torch is None:
        return np.take(_F16_TO_F32, x.view(np.uint16))
    out = np.empty(x.shape, np.float32)
    _copy(torch, out, x)
    return out


def store(dst: np.ndarray, values: np.ndarray) -> None:
    """Write ``values`` (broadcastable to ``dst``) into ``dst``, converting to ``dst``'s dtype.

    ``dst`` must not address one element twice.  float16 and bfloat16 round to nearest even,
    DLFloat16 half away from zero; int8 truncates.
    """
    if values.dtype in _BIT_PATTERNS and values.dtype != dst.dtype:
        values = to_float32(values)
    if dst.dtype in _BIT_PATTERNS and values.dtype != dst.dtype:
        values = _BIT_PATTERNS[dst.dtype][1](values)
    torch = _torch_for(dst, values) if dst.dtype in _FLOATS and values.dtype in _FLOATS else None
    if torch is None:
        np.copyto(dst, values, casting="unsafe")
    else:
        _copy(torch, dst, values)


def staged(host: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``host`` as staging writes it into device elements of ``dtype``.  DLFloat16 has no
    infinity: an infinity of the host's (a mask's ``-inf``) is staged as the largest finite
    DLFloat16 of its sign, as torch-spyre masks with a finite value, so that ``exp`` of a masked
    score is 0 as in eager; a value an op computes past the range is still the NaN-or-infinity
    pattern."""
    if dtype != DLFLOAT16_BITS or host.dtype.kind != "f" or np.isfinite(host).all():
        return host
    values = host.astype(np.float32)
    return np.where(np.isinf(values), np.copysign(np.float32(DLFLOAT16_MAX), values), values)


def host_form(x: np.ndarray) -> np.ndarray:
    """``x`` as ``ieee`` numerics holds it: DLFloat16 bit patterns as a new float16 array
    (rounded to nearest even, past 65504 infinity, the NaN-or-infinity pattern NaN), any
    other array as it is."""
    if x.dtype != DLFLOAT16_BITS:
        return x
    out = np.empty(x.shape, np.float16)
    store(out, x)
    return out


def _torch_for(*arrays: np.ndarray) -> ModuleType | None:
    """torch, if already imported and able to share the memory of every array in ``arrays``
    (writeable, no negative strides); else None."""
    torch = sys.modules.get("torch")
    if torch is None or not all(a.flags.writeable and min(a.strides, default=0) >= 0 for a in arrays):
        return None
    return torch


def _copy(torch: ModuleType, dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` (broadcast, cast) by torch in one thread, on the arrays' own memory."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.from_numpy(dst).copy_(torch.from_numpy(src))
    finally:
        torch.set_num_threads(threads)
