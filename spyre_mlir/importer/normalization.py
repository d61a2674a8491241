# Normalisations torch.export keeps whole, in the decomposition table the importer hands
# to run_decompositions(): batch norm at inference (after the convolutions of vision
# models) as a per-channel scale and shift, group norm (wav2vec2's feature encoder,
# diffusion blocks) as means over each group's channels and positions.  Reads an
# aten._native_batch_norm_legit_no_training or aten.native_group_norm call; writes ATen
# views, means, rsqrt, subtractions, multiplications, additions and casts.
"""Batch norm at inference (:func:`batch_norm_inference`) and group norm (:func:`group_norm`),
computed in float32 as eager computes them for float16 and bfloat16 inputs."""

from __future__ import annotations

import torch

aten = torch.ops.aten


def batch_norm_inference(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                         running_mean: torch.Tensor, running_var: torch.Tensor, momentum: float,
                         eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``aten._native_batch_norm_legit_no_training``: ``(x - mean) * rsqrt(var + eps) * weight +
    bias`` per channel (dim 1), and the two empty statistics it returns beside."""
    per_channel = [1, -1, *[1] * (x.dim() - 2)]
    scale = aten.rsqrt.default(running_var.float() + eps)
    if weight is not None:
        scale = scale * weight.float()
    out = (x.float() - running_mean.float().view(per_channel)) * scale.view(per_channel)
    if bias is not None:
        out = out + bias.float().view(per_channel)
    empty = aten.zeros.default([0], dtype=x.dtype, device=x.device)
    return out.to(x.dtype), empty, empty


def group_norm(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None, batch: int,
               channels: int, positions: int, groups: int,
               eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``aten.native_group_norm``: each group of ``channels / groups`` channels normalised over its
    channels and positions (the channel dim split, not merged with the positions), then scaled and
    shifted per channel; with the groups' means and reciprocal deviations (``[batch, groups]``)."""
    grouped = x.float().view(batch, groups, channels // groups, -1)
    mean = aten.mean.dim(grouped, [2, 3], True)
    centred = grouped - mean
    rstd = aten.rsqrt.default(aten.mean.dim(centred * centred, [2, 3], True) + eps)
    per_channel = [1, -1, *[1] * (x.dim() - 2)]
    out = (centred * rstd).view(x.shape)
    if weight is not None:
        out = out * weight.float().view(per_channel)
    if bias is not None:
        out = out + bias.float().view(per_channel)
    return out.to(x.dtype), mean.view(batch, groups).to(x.dtype), rstd.view(batch, groups).to(x.dtype)
