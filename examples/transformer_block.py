"""A small Granite-like decoder block in fp16 (all sizes multiples of 64).

RMS norm -> Q/K/V projections -> RoPE (seed 001's rotation-matrix form) ->
causal attention with softmax -> output projection + residual -> RMS norm ->
SiLU-gated MLP + residual.  The MLP runs under ``spyre_hint(tiles={"L": 2})``.

    spyre-import examples/transformer_block.py:build          # one block
    build_layers(n)                                           # n stacked blocks
"""

import math

import torch

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint

BATCH, SEQ, HIDDEN, HEADS, FFN = 1, 128, 256, 2, 512
HEAD_DIM = HIDDEN // HEADS  # 128, Granite's head dim: RoPE's halves are whole sticks
EPS = 1e-6


class RMSNorm(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


def rope(cached_freqs, q):
    """Seed 001's RoPE: q [B, L, H*D] -> [B, L, H, D]."""
    b, l = q.shape[0], q.shape[1]
    q_ = q.view(b, l, HEADS, HEAD_DIM).view(b, l, HEADS, 2, HEAD_DIM // 2)
    mul_out = cached_freqs[:, :, None, :, :, :] * q_.unsqueeze(-3)
    return mul_out.sum(4, keepdim=True).flatten(3)


class DecoderBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm(HIDDEN)
        self.q_proj = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k_proj = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v_proj = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o_proj = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.mlp_norm = RMSNorm(HIDDEN)
        self.gate_proj = torch.nn.Linear(HIDDEN, FFN, bias=False)
        self.up_proj = torch.nn.Linear(HIDDEN, FFN, bias=False)
        self.down_proj = torch.nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, x, freqs, mask):
        b, l, _ = x.shape
        h = self.attn_norm(x)
        q = rope(freqs, self.q_proj(h)).transpose(1, 2)  # B H L D
        k = rope(freqs, self.k_proj(h)).transpose(1, 2)
        v = self.v_proj(h).view(b, l, HEADS, HEAD_DIM).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(HEAD_DIM)) + mask
        attn = torch.softmax(scores, dim=-1) @ v  # B H L D
        x = x + self.o_proj(attn.transpose(1, 2).reshape(b, l, HIDDEN))
        with spyre_hint(tiles={"L": 2}):
            h = self.mlp_norm(x)
            x = x + self.down_proj(torch.nn.functional.silu(self.gate_proj(h)) * self.up_proj(h))
        return x


class Decoder(torch.nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = torch.nn.ModuleList(DecoderBlock() for _ in range(layers))

    def forward(self, x, freqs, mask):
        for layer in self.layers:
            x = layer(x, freqs, mask)
        return x


def _inputs():
    angles = torch.arange(SEQ)[:, None] * torch.pow(10000.0, -torch.arange(HEAD_DIM // 2) / (HEAD_DIM // 2))
    cos, sin = angles.cos(), angles.sin()  # L, D/2
    rot = torch.stack([torch.stack([cos, -sin], -2), torch.stack([sin, cos], -2)], -3)  # L 2 2 D/2
    freqs = rot[None].expand(BATCH, -1, -1, -1, -1).to(torch.float16).contiguous()
    mask = torch.full((SEQ, SEQ), -1e4).triu(1).to(torch.float16)
    x = torch.randn(BATCH, SEQ, HIDDEN, dtype=torch.float16)
    name_tensor_dims(x, ["B", "L", "E"])
    return x, freqs, mask


def build_layers(n):
    """``n`` stacked decoder blocks and their example inputs."""
    for name, size in (("B", BATCH), ("L", SEQ), ("E", HIDDEN)):
        declare_tensor_dim(name, size)
    torch.manual_seed(0)
    model = Decoder(n).to(torch.float16).eval()
    return model, _inputs()


def build():
    return build_layers(1)
