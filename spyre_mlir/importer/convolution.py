# Convolutions as matmuls, in the decomposition table the importer hands to
# run_decompositions(): a 1-d convolution (Whisper's encoder front end) is, per kernel
# tap, the kernel's column for that tap times the input shifted by it (a slice of the
# zero-padded input, strided by the convolution's stride), summed over the taps; a 2-d
# one (a vision transformer's patch embedding) the same channels last.  Reads an
# aten.convolution call; writes ATen zeros, pads, cat, permutes, slices, matmuls and
# adds.  Other convolutions (grouped, transposed, 3-d) are left to the importer, which
# names them.
"""1-d and 2-d convolutions decomposed into shifted matmuls (:func:`shifted_matmuls`)."""

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
    ``s``-th position; a 2-d one likewise, channels last (:func:`_shifted_matmuls_2d`).
    ``NotImplemented`` for any other convolution."""
    if transposed or groups != 1 or x.dim() != weight.dim() or x.dim() not in (3, 4):
        return NotImplemented
    if x.dim() == 4:
        return _shifted_matmuls_2d(x, weight, bias, stride, padding, dilation)
    (s,), (p,), (d,) = stride, padding, dilation
    length = x.shape[2]
    taps = weight.shape[2]
    padded = _zero_padded(x, 2, p)
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


def _zero_padded(x: torch.Tensor, dim: int, pad: int, step: int = 1) -> torch.Tensor:
    """``x`` with ``pad`` zeros before and after it along ``dim``, and more after it up to a
    whole number of ``step`` (a dim read every ``step``-th element spans whole steps)."""
    after = pad + (-(x.shape[dim] + 2 * pad)) % step

    def zeros(count: int) -> list[torch.Tensor]:
        shape = [count if d == dim else n for d, n in enumerate(x.shape)]
        return [aten.zeros.default(shape, dtype=x.dtype, device=x.device)] if count else []

    parts = [*zeros(pad), x, *zeros(after)]
    return aten.cat.default(parts, dim) if len(parts) > 1 else x


def _shifted_matmuls_2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: Sequence[int],
                        padding: Sequence[int], dilation: Sequence[int]) -> Any:
    """A 2-d convolution (``[B, C, H, W]`` input, ``[O, C, KH, KW]`` kernel) channels last: per
    tap, the window of the zero-padded input (``[B, H', W', C]``, every ``s``-th row and column
    from the tap's offset) times the tap's ``[C, O]`` kernel, summed, then viewed as ``[B, O, H',
    W']``.  The result is sticked on its channels, so a patch embedding's ``flatten(2)`` merges
    the two position dims without a copy."""
    batch, channels, height, width = x.shape
    out_channels, _, kh, kw = weight.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    rows = (height + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    cols = (width + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    last = aten.permute.default(x, [0, 2, 3, 1])
    for dim, pad, step in ((2, pw, sw), (1, ph, sh)):
        last = _zero_padded(last, dim, pad, step)
    out = None
    for i in range(kh):
        for j in range(kw):
            window = aten.slice.Tensor(last, 1, i * dh, i * dh + sh * (rows - 1) + 1, sh)
            window = aten.slice.Tensor(window, 2, j * dw, j * dw + sw * (cols - 1) + 1, sw)
            window = aten.view.default(aten.clone.default(window, memory_format=torch.contiguous_format),
                                       [batch, rows * cols, channels])
            tap = aten.matmul.default(window, aten.permute.default(weight[:, :, i, j], [1, 0]))
            out = tap if out is None else out + tap
    assert out is not None
    if bias is not None:
        out = out + bias
    return aten.permute.default(aten.view.default(out, [batch, rows, cols, out_channels]), [0, 3, 1, 2])
