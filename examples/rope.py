"""The Granite RoPE block (seed 001): views, an unsqueeze, a reduction and a flatten.

``q`` is [B, L, H*D] = [2, 256, 4096] fp16; ``cached_freqs`` holds, for every
position, the 2x2 rotation matrix per frequency: [B, L, 2, 2, D/2].

    spyre-import examples/rope.py:build
"""

import torch

from spyre_mlir import declare_tensor_dim, name_tensor_dims

B, L, H, D = 2, 256, 32, 128


def rope(cached_freqs, q):
    q_ = q.view(B, L, H, D).view(B, L, H, 2, D // 2)  # B L H 2 D/2
    mul_out = cached_freqs[:, :, None, :, :, :] * q_.unsqueeze(-3)  # B L H 2 2 D/2
    sum_out = mul_out.sum(4, keepdim=True)  # B L H 2 1 D/2
    return sum_out.flatten(3)  # B L H D


def build():
    for name, size in (("B", B), ("L", L), ("H", H), ("D", D)):
        declare_tensor_dim(name, size)
    torch.manual_seed(0)
    angles = torch.randn(B, L, D // 2)
    cos, sin = angles.cos(), angles.sin()
    rot = torch.stack([torch.stack([cos, -sin], -2), torch.stack([sin, cos], -2)], -3)  # B L 2 2 D/2
    cached_freqs = rot.to(torch.float16).contiguous()  # B L 2 2 D/2
    q = torch.randn(B, L, H * D, dtype=torch.float16)
    name_tensor_dims(q, ["B", "L", "H", "D"])
    return rope, (cached_freqs, q)
