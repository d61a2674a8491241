# Element conversions of the interpreter: device elements (float16, bfloat16,
# float32, int8) to the float32 the op funcs compute in, float32 results back
# into device memory, and the staging copies between host and device layouts.
# Reads and writes numpy arrays.
"""float16 <-> float32 and bfloat16 <-> float32 casts.

bfloat16 is held as its bit patterns (uint16, ``hardware.FORMAT_NUMPY_DTYPES``):
reading one is exact, storing into one rounds to nearest even, as torch does.

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

from spyre_mlir.hardware import FORMAT_NUMPY_DTYPES, from_bfloat16_bits, to_bfloat16_bits

_F16_TO_F32 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
"""Every float16 bit pattern's float32 value (a table lookup beats numpy's float16 cast on strided views)."""

BFLOAT16_BITS = FORMAT_NUMPY_DTYPES["SEN169_BFP16"]
"""How the interpreter holds bfloat16 elements."""

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32))
"""The dtypes whose copies and casts go through torch."""


def to_float32(x: np.ndarray) -> np.ndarray:
    """``x`` (any strides, zero strides included) as a new C-contiguous float32 array."""
    if x.dtype == BFLOAT16_BITS:
        return from_bfloat16_bits(x)
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

    ``dst`` must not address one element twice.  float16 and bfloat16 round to nearest even;
    int8 truncates.
    """
    if values.dtype == BFLOAT16_BITS and dst.dtype != BFLOAT16_BITS:
        values = to_float32(values)
    elif dst.dtype == BFLOAT16_BITS and values.dtype != BFLOAT16_BITS:
        values = to_bfloat16_bits(values)
    torch = _torch_for(dst, values) if dst.dtype in _FLOATS and values.dtype in _FLOATS else None
    if torch is None:
        np.copyto(dst, values, casting="unsafe")
    else:
        _copy(torch, dst, values)


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
