# Convolutions as matmuls, in the decomposition table the importer hands to
# run_decompositions(): a 1-d convolution (Whisper's encoder front end) is, per kernel
# tap, the kernel's column for that tap times the input shifted by it (a slice of the
# zero-padded input, strided by the convolution's stride), summed over the taps.  Reads
# an aten.convolution call; writes ATen zeros, cat, slices, matmuls and adds.  Other
# convolutions are left to the importer, which names them.
"""1-d convolutions decomposed into shifted matmuls (:func:`shifted_matmuls`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

aten = torch.ops.aten


def shifted_matmuls(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: Sequence[int],
                    padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                    output_padding: Sequence[int], groups: int) -> Any:
    """``aten.convolution`` of a 1-d convolution (``[B, C, T]`` input, ``[O, C, K]`` kernel, one
    group, not transposed) as ``sum_k W[:, :, k] @ x_pad[:, :, k + s * t]`` plus the bias: ``K``
    matmuls of the kernel's taps by the zero-padded input read at each tap's offset, every
    ``s``-th position.  ``NotImplemented`` for any other convolution."""
    if transposed or groups != 1 or x.dim() != 3 or weight.dim() != 3:
        return NotImplemented
    (s,), (p,), (d,) = stride, padding, dilation
    batch, channels, length = x.shape
    out_channels, _, taps = weight.shape
    if p:
        zeros = aten.zeros.default([batch, channels, p], dtype=x.dtype, device=x.device)
        padded = aten.cat.default([zeros, x, zeros], 2)
    else:
        padded = x
    steps = (length + 2 * p - d * (taps - 1) - 1) // s + 1
    out = None
    for k in range(taps):
        start = k * d
        window = aten.slice.Tensor(padded, 2, start, start + s * (steps - 1) + 1, s)
        tap = aten.matmul.default(weight[:, :, k], window)
        out = tap if out is None else out + tap
    assert out is not None
    if bias is not None:
        out = out + bias[:, None]
    return out
