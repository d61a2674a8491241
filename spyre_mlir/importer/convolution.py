# Convolutions as matmuls, in the decomposition table the importer hands to
# run_decompositions(): a 1-d convolution (Whisper's encoder front end) is, per kernel
# tap, the kernel's column for that tap times the input shifted by it (a slice of the
# zero-padded input, strided by the convolution's stride), summed over the taps; a 2-d
# one (a vision transformer's patch embedding) the same channels last.  A grouped one is
# a convolution per group, concatenated along the channels; a depthwise one (one input
# channel per group: ConvNeXt's 7x7, ConvBERT's separable 1-d) is, channels last, per tap
# the shifted input times the tap's per-channel weights, summed; a transposed one, per
# tap the input times the tap's kernel placed every stride-th position, the positions
# of each phase of the stride summed and the phases interleaved.  An explicit constant
# padding (ConvBERT's, before its separable convolution) is slices and a concatenation
# with fills; an unfold (im2col), per tap the window of the zero-padded input, the taps
# concatenated.  Reads an aten.convolution, aten.constant_pad_nd or aten.im2col call;
# writes ATen zeros, fills, cat, permutes, slices, views, matmuls, muls and adds.  Other
# convolutions (grouped transposed, 3-d) are left to the importer, which names them.
"""1-d and 2-d convolutions decomposed into shifted matmuls (:func:`shifted_matmuls`), or, one
input channel per group, into shifted products (:func:`_shifted_products`); transposed ones into
placed matmuls (:func:`_placed_matmuls`); constant padding
(:func:`constant_padded`); unfolding (:func:`unfolded`)."""

from __future__ import annotations

import itertools
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
    ``s``-th position; a 2-d one likewise, channels last (:func:`_shifted_matmuls_2d`).  With
    ``groups``, one such convolution per group, concatenated along the channels, or, one input
    and one output channel per group (depthwise), :func:`_shifted_products`; transposed (one
    group), :func:`_placed_matmuls`.  A stride, padding, dilation or output padding of one value
    applies to every spatial dim (``padding="valid"`` arrives as ``[0]``).  ``NotImplemented``
    for any other convolution."""
    if x.dim() != weight.dim() or x.dim() not in (3, 4) or transposed and groups != 1:
        return NotImplemented
    spatial = x.dim() - 2
    stride, padding, dilation, output_padding = (
        [*v] * spatial if len(v) == 1 else v for v in (stride, padding, dilation, output_padding))
    if groups != 1 and groups == x.shape[1] == weight.shape[0] and not transposed:
        return _shifted_products(x, weight, bias, stride, padding, dilation)
    if groups != 1:
        inputs, outputs = x.shape[1] // groups, weight.shape[0] // groups
        out = aten.cat.default([
            shifted_matmuls(x[:, g * inputs:(g + 1) * inputs], weight[g * outputs:(g + 1) * outputs], None,
                            stride, padding, dilation, transposed, output_padding, 1) for g in range(groups)], 1)
        return out if bias is None else out + bias.view(-1, *[1] * (x.dim() - 2))
    if transposed:
        return _placed_matmuls(x, weight, bias, stride, padding, dilation, output_padding)
    if x.dim() == 4:
        return _shifted_matmuls_2d(x, weight, bias, stride, padding, dilation)
    (s,), (p,), (d,) = stride, padding, dilation
    length = x.shape[2]
    taps = weight.shape[2]
    wide = padded(x, 2, p)
    steps = (length + 2 * p - d * (taps - 1) - 1) // s + 1
    out = None
    for k in range(taps):
        start = k * d
        window = aten.slice.Tensor(wide, 2, start, start + s * (steps - 1) + 1, s)
        tap = aten.matmul.default(weight[:, :, k], window)
        out = tap if out is None else out + tap
    assert out is not None
    if bias is not None:
        out = out + bias[:, None]
    return out


def padded(x: torch.Tensor, dim: int, pad: int, step: int = 1, value: float = 0.0) -> torch.Tensor:
    """``x`` with ``pad`` elements of ``value`` before and after it along ``dim``, and more after it
    up to a whole number of ``step`` (a dim read every ``step``-th element spans whole steps)."""
    return filled(x, dim, pad, pad + (-(x.shape[dim] + 2 * pad)) % step, value)


def windows(source: torch.Tensor, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
             steps: Sequence[int]) -> list[tuple[tuple[int, ...], torch.Tensor]]:
    """Per kernel tap, in row-major order, the window of the channels-last padded ``source``
    (``[B, *positions, C]``) it reads: every ``stride``-th position from the tap's offset."""
    found = []
    for tap in itertools.product(*map(range, kernel)):
        window = source
        for dim, (t, d, s, n) in enumerate(zip(tap, dilation, stride, steps)):
            window = aten.slice.Tensor(window, dim + 1, t * d, t * d + s * (n - 1) + 1, s)
        found.append((tap, window))
    return found


def filled(x: torch.Tensor, dim: int, before: int, after: int, value: float) -> torch.Tensor:
    """``x`` with ``before`` and ``after`` elements of ``value`` around it along ``dim``."""
    def fill(count: int) -> list[torch.Tensor]:
        shape = [count if d == dim else n for d, n in enumerate(x.shape)]
        return [aten.full.default(shape, value, dtype=x.dtype, device=x.device)] if count else []

    parts = [*fill(before), x, *fill(after)]
    return aten.cat.default(parts, dim) if len(parts) > 1 else x


def constant_padded(x: torch.Tensor, pad: Sequence[int], value: float = 0.0) -> torch.Tensor:
    """``aten.constant_pad_nd``: from the last dim back, ``pad[2 * i]`` elements of ``value``
    before dim ``-1 - i`` and ``pad[2 * i + 1]`` after it; a negative count crops instead."""
    for i in range(len(pad) // 2):
        dim, before, after = x.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]
        x = aten.slice.Tensor(x, dim, max(-before, 0), x.shape[dim] - max(-after, 0))
        x = filled(x, dim, max(before, 0), max(after, 0), value)
    return x


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
        last = padded(last, dim, pad, step)
    out = None
    for (i, j), window in windows(last, (kh, kw), stride, dilation, (rows, cols)):
        window = aten.view.default(aten.clone.default(window, memory_format=torch.contiguous_format),
                                   [batch, rows * cols, channels])
        tap = aten.matmul.default(window, aten.permute.default(weight[:, :, i, j], [1, 0]))
        out = tap if out is None else out + tap
    assert out is not None
    if bias is not None:
        out = out + bias
    return aten.permute.default(aten.view.default(out, [batch, rows, cols, out_channels]), [0, 3, 1, 2])


def _shifted_products(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: Sequence[int],
                      padding: Sequence[int], dilation: Sequence[int]) -> Any:
    """A depthwise convolution (``[C, 1, *kernel]``: output channel ``c`` reads input channel
    ``c`` alone) channels last: per tap, the window of the zero-padded input (``[B, *positions,
    C]``) times the tap's ``[C]`` weights, summed.  No matmul: each channel's sum is over its own
    taps only."""
    sizes = x.shape[2:]
    kernel = weight.shape[2:]
    rank = len(sizes)
    last = aten.permute.default(x, [0, *range(2, rank + 2), 1])
    for dim in reversed(range(rank)):
        last = padded(last, dim + 1, padding[dim], stride[dim])
    steps = [(n + 2 * p - d * (k - 1) - 1) // s + 1
             for n, p, d, k, s in zip(sizes, padding, dilation, kernel, stride)]
    out = None
    for tap, window in windows(last, kernel, stride, dilation, steps):
        term = window * weight[(slice(None), 0, *tap)]
        out = term if out is None else out + term
    assert out is not None
    if bias is not None:
        out = out + bias
    return aten.permute.default(out, [0, rank + 1, *range(1, rank + 1)])


def _placed_matmuls(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: Sequence[int],
                    padding: Sequence[int], dilation: Sequence[int], output_padding: Sequence[int]) -> Any:
    """A transposed convolution (``[B, C, *positions]`` input, ``[C, O, *kernel]`` kernel, one
    group) channels last: per tap, the input times the tap's ``[C, O]`` kernel, placed at
    ``stride * t + dilation * k``.  Positions of one phase ``r`` (their remainder by the stride)
    are each tap's of that phase shifted by whole strides and summed; the phases are stacked
    along a dim of their own after each position dim and merged into it (``q * stride + r``,
    outside the channels' stick: a view), then cropped by the padding."""
    rank = x.dim() - 2
    sizes, kernel = x.shape[2:], weight.shape[2:]
    full = [(n - 1) * s + d * (k - 1) + 1 for n, s, d, k in zip(sizes, stride, dilation, kernel)]
    lengths = [(n - 1) * s - 2 * p + d * (k - 1) + o + 1
               for n, s, p, d, k, o in zip(sizes, stride, padding, dilation, kernel, output_padding)]
    blocks = [-(-max(f, p + n) // s) for f, p, n, s in zip(full, padding, lengths, stride)]
    last = aten.permute.default(x, [0, *range(2, rank + 2), 1])
    phases: dict[tuple[int, ...], torch.Tensor] = {}
    for tap in itertools.product(*map(range, kernel)):
        placed = aten.matmul.default(last, weight[(slice(None), slice(None), *tap)])
        for dim, (t, d, s, n, q) in enumerate(zip(tap, dilation, stride, sizes, blocks)):
            placed = filled(placed, dim + 1, t * d // s, q - n - t * d // s, 0.0)
        phase = tuple(t * d % s for t, d, s in zip(tap, dilation, stride))
        phases[phase] = placed if phase not in phases else phases[phase] + placed
    empty = [x.shape[0], *blocks, weight.shape[1]]
    stacked = {phase: phases[phase] if phase in phases else aten.zeros.default(empty, dtype=x.dtype, device=x.device)
               for phase in itertools.product(*map(range, stride))}
    for dim in reversed(range(rank)):
        merged = {}
        for prefix in itertools.product(*map(range, stride[:dim])):
            parts = [stacked[(*prefix, r)] for r in range(stride[dim])]
            shape = list(parts[0].shape)
            shape[dim + 1] *= stride[dim]
            together = aten.cat.default([aten.unsqueeze.default(part, dim + 2) for part in parts], dim + 2)
            merged[prefix] = aten.view.default(together, shape)
        stacked = merged
    out = stacked[()]
    for dim, (p, n) in enumerate(zip(padding, lengths)):
        out = aten.slice.Tensor(out, dim + 1, p, p + n)
    if bias is not None:
        out = out + bias
    return aten.permute.default(out, [0, rank + 1, *range(1, rank + 1)])


def unfolded(x: torch.Tensor, kernel: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
             stride: Sequence[int]) -> Any:
    """``aten.im2col`` (``nn.Unfold``: ConvBERT's span-based dynamic convolution) of a ``[B, C, H,
    W]`` input: per kernel tap, in row-major order, the window of the zero-padded input it reads
    (``[B, C, H', W']``, every stride-th row and column), its positions flattened; the taps
    concatenated inside each channel, ``[B, C * taps, H' * W']``.  A window is a slice, never
    an overlapping view of the input.  ``NotImplemented`` for another rank."""
    if x.dim() != 4:
        return NotImplemented
    batch, channels, height, width = x.shape
    steps = [(n + 2 * p - d * (k - 1) - 1) // s + 1
             for n, p, d, k, s in zip((height, width), padding, dilation, kernel, stride)]
    source = x
    for dim in (2, 3):
        source = padded(source, dim, padding[dim - 2], stride[dim - 2])
    taps = []
    for tap in itertools.product(*map(range, kernel)):
        window = source
        for dim, (t, d, s, n) in enumerate(zip(tap, dilation, stride, steps)):
            window = aten.slice.Tensor(window, dim + 2, t * d, t * d + s * (n - 1) + 1, s)
        taps.append(aten.view.default(aten.clone.default(window, memory_format=torch.contiguous_format),
                                      [batch, channels, 1, steps[0] * steps[1]]))
    return aten.view.default(aten.cat.default(taps, 2), [batch, channels * len(taps), steps[0] * steps[1]])
