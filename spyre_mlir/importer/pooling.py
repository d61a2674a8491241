# Pooling, in the decomposition table the importer hands to run_decompositions(): a
# 2-d max pool (ResNet's stem) is, channels last, the maximum of the windows of the input
# padded with -inf, and its indices the first window position holding it; an adaptive
# average pool into a size that divides the input's (a pooler's 1 x 1), the mean of
# each block; a 2-d average pool (in ceil mode too), the sum of the windows of the
# zero-padded input over the count its divisor names; nearest upsampling by whole
# factors (decoder heads), each element repeated along new dims merged into its own (a
# view); bilinear upsampling into
# the same size (BEiT's relative position table) or by whole factors, per phase of the
# factor two weighted neighbours, the phases interleaved.  Reads an
# aten.max_pool2d_with_indices, aten.avg_pool2d, aten.adaptive_avg_pool2d,
# aten.upsample_nearest2d or aten.upsample_bilinear2d call; writes ATen fills, cat,
# permutes, slices, views, expands, sums, means, divisions, maximums, minimums,
# comparisons and wheres.
"""Max pooling (:func:`max_pooled`), average pooling (:func:`average_pooled`), adaptive average
pooling (:func:`block_means`), nearest upsampling (:func:`nearest_upsampled`) and bilinear
upsampling (:func:`bilinear_upsampled`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from spyre_mlir.importer.convolution import filled, padded, windows

aten = torch.ops.aten


def _pairs(kernel: Sequence[int], *values: Sequence[int]) -> list[list[int]]:
    """A 2-d pool's ``kernel`` and ``values`` as two ints each: one int stands for both dims, and an
    empty stride is the kernel (ATen's defaults)."""
    return [[*v] * (2 // len(v)) if v else [*kernel] for v in (kernel, *values)]


def max_pooled(x: torch.Tensor, kernel: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
               dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Any:
    """``aten.max_pool2d_with_indices`` of a ``[B, C, H, W]`` input, channels last: the maximum
    of the windows of the input padded with -inf, and each maximum's index into its channel's
    ``H x W`` plane, the first window position holding it in the kernel's row-major order (the
    lowest such index: an input row outweighs any column), computed in the float32 of the
    positions (exact below 2**24).  ``NotImplemented`` with ``ceil_mode`` or another rank."""
    if ceil_mode or x.dim() != 4:
        return NotImplemented
    kernel, stride, padding, dilation = _pairs(kernel, stride, padding, dilation)
    height, width = x.shape[2:]
    steps = [(n + 2 * p - d * (k - 1) - 1) // s + 1 for n, p, d, k, s in zip((height, width), padding, dilation,
                                                                             kernel, stride)]
    last = aten.permute.default(x, [0, 2, 3, 1])
    for dim in (1, 0):
        last = padded(last, dim + 1, padding[dim], stride[dim], -float("inf"))
    taps = windows(last, kernel, stride, dilation, steps)
    out = taps[0][1]
    for _, window in taps[1:]:
        out = aten.maximum.default(out, window)
    beyond = height * width
    index = None
    for (i, j), window in taps:
        rows = aten.arange.default(steps[0], dtype=torch.int64, device=x.device) * stride[0] + (i * dilation[0] - padding[0])
        cols = aten.arange.default(steps[1], dtype=torch.int64, device=x.device) * stride[1] + (j * dilation[1] - padding[1])
        at = aten.view.default(rows, [1, steps[0], 1, 1]) * width + aten.view.default(cols, [1, 1, steps[1], 1])
        candidate = torch.where(aten.eq.Tensor(window, out), at, beyond)
        index = candidate if index is None else aten.minimum.default(index, candidate)
    assert index is not None
    return aten.permute.default(out, [0, 3, 1, 2]), aten.permute.default(index, [0, 3, 1, 2])


def _ceil_steps(n: int, kernel: int, stride: int, padding: int) -> int:
    """The positions of a pooling window along a dim of ``n`` with ``ceil_mode``: a last, partial
    window too, unless it would start past the input and its left padding (ATen's rule)."""
    steps = -(-(n + 2 * padding - kernel) // stride) + 1
    return steps - 1 if (steps - 1) * stride >= n + padding else steps


def average_pooled(x: torch.Tensor, kernel: Sequence[int], stride: Sequence[int] = (),
                   padding: Sequence[int] = (0,), ceil_mode: bool = False, count_include_pad: bool = True,
                   divisor_override: int | None = None) -> Any:
    """``aten.avg_pool2d`` of a ``[B, C, H, W]`` input, channels last: the sum of the windows of
    the zero-padded input divided by the window's size, or, without ``count_include_pad``, by the
    count of its positions inside the input (the same sum over ones: known when compiling), or
    by ``divisor_override``.  With ``ceil_mode`` a last window may reach past the padding
    (:func:`_ceil_steps`; EfficientNet's pooler, a kernel of 320 over a 1 x 1 map): the input is
    padded with zeros that far, the taps that read nothing but them are left out, and such a
    window's divisor counts only its positions inside the input and its padding (ones there, the
    same sum).  ``NotImplemented`` for another rank."""
    if x.dim() != 4:
        return NotImplemented
    kernel, stride, padding = _pairs(kernel, stride, padding)
    sizes = x.shape[2:]
    steps = [_ceil_steps(n, k, s, p) if ceil_mode else (n + 2 * p - k) // s + 1
             for n, p, k, s in zip(sizes, padding, kernel, stride)]
    taps = [min(k, n + 2 * p) for n, p, k in zip(sizes, padding, kernel)]
    beyond = [max(0, (m - 1) * s + t - n - 2 * p) for m, s, t, n, p in zip(steps, stride, taps, sizes, padding)]
    step = [s if m > 1 else 1 for s, m in zip(stride, steps)]  # one window: no stride to span
    partial = any((m - 1) * s + k > n + 2 * p for m, s, k, n, p in zip(steps, stride, kernel, sizes, padding))

    def window_sums(source: torch.Tensor, before: Sequence[int]) -> torch.Tensor:
        last = aten.permute.default(source, [0, 2, 3, 1])
        for dim in (1, 0):
            extent, reach = last.shape[dim + 1] + before[dim], sizes[dim] + 2 * padding[dim] + beyond[dim]
            last = filled(last, dim + 1, before[dim], -(-reach // step[dim]) * step[dim] - extent, 0.0)
        found = [window for _, window in windows(last, taps, step, (1, 1), steps)]
        total = found[0]
        for window in found[1:]:
            total = total + window
        return total

    if divisor_override:
        divisor: Any = divisor_override
    elif not partial and (count_include_pad or not any(padding)):
        divisor = kernel[0] * kernel[1]
    else:
        inside = [n + 2 * p if count_include_pad else n for n, p in zip(sizes, padding)]
        ones = aten.ones.default([1, 1, *inside], dtype=x.dtype, device=x.device)
        divisor = window_sums(ones, [0, 0] if count_include_pad else padding)
    return aten.permute.default(window_sums(x, padding) / divisor, [0, 3, 1, 2])


def block_means(x: torch.Tensor, size: Sequence[int]) -> Any:
    """``aten.adaptive_avg_pool2d`` into ``size`` dividing the input's last two dims (a pooler's
    ``(1, 1)``): the input viewed as blocks, the mean of each.  ``NotImplemented`` when a dim of
    ``size`` does not divide the input's (the windows would overlap)."""
    *lead, height, width = x.shape
    rows, cols = size
    if height % rows or width % cols:
        return NotImplemented
    blocks = aten.view.default(x, [*lead, rows, height // rows, cols, width // cols])
    return aten.mean.dim(blocks, [len(lead) + 1, len(lead) + 3])


def nearest_upsampled(x: torch.Tensor, output_size: Sequence[int] | None,
                      scale_factors: Sequence[float] | None) -> Any:
    """``aten.upsample_nearest2d.vec`` into whole multiples of the input's last two dims: each
    element repeated ``f`` times along a new dim after its own, merged into it (a view: output
    ``i`` reads input ``i floordiv f``, as eager's nearest does).  ``NotImplemented`` for a size
    that is not a whole multiple."""
    *lead, height, width = x.shape
    size = list(output_size) if output_size else [int(n * f) for n, f in zip((height, width), scale_factors or ())]
    if len(size) != 2 or size[0] % height or size[1] % width or (
            scale_factors and any(f != n // m for f, n, m in zip(scale_factors, size, (height, width)))):
        return NotImplemented
    rows, cols = size[0] // height, size[1] // width
    spread = aten.expand.default(aten.view.default(x, [*lead, height, 1, width, 1]), [*lead, height, rows, width, cols])
    return aten.view.default(aten.clone.default(spread, memory_format=torch.contiguous_format), [*lead, *size])


def bilinear_upsampled(x: torch.Tensor, output_size: Sequence[int] | None, align_corners: bool,
                       scale_factors: Sequence[float] | None) -> Any:
    """``aten.upsample_bilinear2d.vec`` of a ``[B, C, H, W]`` input into its own size (a copy)
    or, without ``align_corners``, into whole multiples of it.  Channels last, along each
    position dim in turn: output ``f * q + r`` reads ``x[q]`` and its neighbour towards the
    phase's offset ``(r + 0.5) / f - 0.5`` with weights that depend on ``r`` only, the input's
    edges repeated (eager clamps there); the ``f`` phases are stacked after the dim and merged
    into it, off the channels' stick.  ``NotImplemented`` for another size."""
    *lead, height, width = x.shape
    size = list(output_size) if output_size else [int(n * f) for n, f in zip((height, width), scale_factors or ())]
    if len(size) != 2 or (size != [height, width] and (align_corners or size[0] % height or size[1] % width)):
        return NotImplemented
    if size == [height, width]:
        return aten.clone.default(x)
    last = aten.permute.default(x, [0, 2, 3, 1])
    for dim, factor in ((1, size[0] // height), (2, size[1] // width)):
        last = _interpolated(last, dim, factor)
    return aten.permute.default(last, [0, 3, 1, 2])


def _interpolated(x: torch.Tensor, dim: int, factor: int) -> torch.Tensor:
    """``x`` linearly interpolated along ``dim`` to ``factor`` times its extent, as
    :func:`bilinear_upsampled` describes, in its own dtype."""
    n = x.shape[dim]
    edges = aten.cat.default([aten.slice.Tensor(x, dim, 0, 1), x, aten.slice.Tensor(x, dim, n - 1, n)], dim)
    phases = []
    for r in range(factor):
        offset = (r + 0.5) / factor - 0.5
        start, weight = (1, offset) if offset >= 0 else (0, 1 + offset)
        low = aten.slice.Tensor(edges, dim, start, start + n)
        high = aten.slice.Tensor(edges, dim, start + 1, start + 1 + n)
        phases.append(aten.unsqueeze.default(low * (1 - weight) + high * weight, dim + 1))
    shape = list(x.shape)
    shape[dim] *= factor
    return aten.view.default(aten.cat.default(phases, dim + 1), shape)
