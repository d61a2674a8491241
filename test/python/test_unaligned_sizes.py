"""Sizes that are not whole sticks, end to end: what an op iterates past a tensor's extent is padding
its layout holds, and padding a matmul reads along K is zero.

An iteration dim that drives a tensor's stick is padded to whole sticks (SDSC ``N_``); every other
tensor that steps along it is addressed that far too.  These programs once compiled to wrong
numbers (a matmul B operand copied from a view lost its K padding and read the next head's rows or
a stale pool block) or to SDSC files the interpreter rejected (an fp32 result of an fp16 op of 96
columns has four sticks' worth of them to hold, not three).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from xdsl.dialects.func import FuncOp

from spyre_mlir.analysis.storage import Constant, recorded_constants
from spyre_mlir.codegen.writer import write_output
from spyre_mlir.dialects.spyre import MatmulOp, PlacementAttr, PlacementKind, tensor_layout
from spyre_mlir.interpreter import run
from spyre_mlir.manifest import read_manifest
from spyre_mlir.mlir_text import make_context
from spyre_mlir.pipeline import compile_stages

from e2e_support import ImportedPrograms, compile_and_check


def repeat_kv(v: torch.Tensor, groups: int) -> torch.Tensor:
    """transformers' grouped-query attention: each of the kv heads serves ``groups`` query heads."""
    b, kv, length, d = v.shape
    return v[:, :, None].expand(b, kv, groups, length, d).reshape(b, kv * groups, length, d)


class GroupedAttention(torch.nn.Module):
    def forward(self, q, k, v, mask):
        scores = q @ k.transpose(-1, -2) + mask
        return torch.softmax(scores, dim=-1) @ repeat_kv(v, q.shape[1] // v.shape[1])


class ShiftedScores(torch.nn.Module):
    """No softmax: the scores' stick padding is 1.0, not 0, so only the B operand's zero K rows
    keep it out of the result."""

    def forward(self, q, k, v):
        return (q @ k.transpose(-1, -2) + 1.0) @ repeat_kv(v, q.shape[1] // v.shape[1])


class CausalSelfAttention(torch.nn.Module):
    """q, k, v from three nn.Linear, two heads of 64, a causal additive mask."""

    def __init__(self, dtype: torch.dtype):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(128, 128, dtype=dtype) for _ in range(3))

    def forward(self, x, mask):
        b, length, _ = x.shape

        def heads(t):
            return t.view(b, length, 2, 64).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        p = torch.softmax(q @ k.transpose(-1, -2) / 8.0 + mask, dim=-1)
        return (p @ v).transpose(1, 2).reshape(b, length, 128)


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


class LlamaLikeLayer(torch.nn.Module):
    """A Llama decoder layer as transformers writes it with eager attention (rotary tables, the
    rotate-half matrix and the causal mask passed in): RMS norms, grouped-query attention with
    rotary embeddings and repeat_kv, a SiLU-gated MLP, residuals."""

    hidden, heads, kv_heads, head_dim, ffn = 256, 4, 2, 64, 512

    def __init__(self):
        super().__init__()
        hidden, d = self.hidden, self.head_dim
        self.input_norm, self.post_norm = RMSNorm(hidden), RMSNorm(hidden)
        self.q = torch.nn.Linear(hidden, self.heads * d, bias=False)
        self.k = torch.nn.Linear(hidden, self.kv_heads * d, bias=False)
        self.v = torch.nn.Linear(hidden, self.kv_heads * d, bias=False)
        self.o = torch.nn.Linear(self.heads * d, hidden, bias=False)
        self.gate = torch.nn.Linear(hidden, self.ffn, bias=False)
        self.up = torch.nn.Linear(hidden, self.ffn, bias=False)
        self.down = torch.nn.Linear(self.ffn, hidden, bias=False)

    def forward(self, x, cos, sin, rotate_half, mask):
        b, length, _ = x.shape
        groups = self.heads // self.kv_heads

        def heads(t, n):
            return t.view(b, length, n, self.head_dim).transpose(1, 2)

        h = self.input_norm(x)
        q, k, v = heads(self.q(h), self.heads), heads(self.k(h), self.kv_heads), heads(self.v(h), self.kv_heads)
        q, k = q * cos + (q @ rotate_half) * sin, k * cos + (k @ rotate_half) * sin
        k, v = repeat_kv(k, groups), repeat_kv(v, groups)
        p = torch.softmax(q @ k.transpose(2, 3) / self.head_dim ** 0.5 + mask, dim=-1)
        x = x + self.o((p @ v).transpose(1, 2).reshape(b, length, self.heads * self.head_dim))
        h = self.post_norm(x)
        return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))


def llama_like_layer(length: int):
    def factory():
        dtype, d = torch.float16, LlamaLikeLayer.head_dim
        angles = torch.arange(length)[:, None] * torch.pow(10000.0, -torch.arange(d // 2) / (d // 2))
        angles = torch.cat([angles, angles], -1)
        rotate_half = torch.zeros(d, d)  # t @ rotate_half == cat(-t[..., d/2:], t[..., :d/2])
        rotate_half[d // 2:, :d // 2] = -torch.eye(d // 2)
        rotate_half[:d // 2, d // 2:] = torch.eye(d // 2)
        mask = torch.triu(torch.full((length, length), torch.finfo(dtype).min), 1)[None, None]
        x = torch.randn(1, length, LlamaLikeLayer.hidden, dtype=dtype)
        inputs = (x, angles.cos(), angles.sin(), rotate_half, mask)
        return LlamaLikeLayer().to(dtype).eval(), tuple(t.to(dtype) for t in inputs)
    return factory


def grouped_attention(length: int, dtype: torch.dtype, module=GroupedAttention, mask: bool = True):
    def factory():
        q = torch.randn(1, 4, length, 64, dtype=dtype) * 0.5
        k = torch.randn(1, 4, length, 64, dtype=dtype) * 0.5
        v = torch.randn(1, 2, length, 64, dtype=dtype)
        extra = (torch.zeros(1, 1, length, length, dtype=dtype),) if mask else ()
        return module(), (q, k, v, *extra)
    return factory


def causal_attention(length: int, dtype: torch.dtype):
    def factory():
        x = torch.randn(1, length, 128, dtype=dtype) * 0.5
        mask = torch.triu(torch.full((length, length), torch.finfo(dtype).min, dtype=dtype), 1)[None, None]
        return CausalSelfAttention(dtype), (x, mask)
    return factory


def cast(shape, source: torch.dtype, target: torch.dtype, scale: float | None):
    def factory():
        def fn(x):
            y = x.to(target)
            return y if scale is None else y * scale
        return fn, (torch.randn(*shape, dtype=source),)
    return factory


def row_max_with_a_row_of_minus_inf():
    """A max over a padded stick (100 of 128) masks the padding with the largest finite DLFloat16,
    not -inf (which the SDSC's constants cannot hold) nor 65504 (which a row of -inf would return)."""
    x = torch.randn(8, 100, dtype=torch.float16)
    x[3] = float("-inf")
    return (lambda t: t.amax(-1)), (x,)


PROGRAMS = {
    "row_max_minus_inf": row_max_with_a_row_of_minus_inf,
    "gqa_96_fp16": grouped_attention(96, torch.float16),
    "gqa_100_fp32": grouped_attention(100, torch.float32),
    "gqa_160_fp16": grouped_attention(160, torch.float16),
    "gqa_100_fp16": grouped_attention(100, torch.float16),
    "gqa_1_fp32": grouped_attention(1, torch.float32),
    "gqa_1_fp16": grouped_attention(1, torch.float16),
    "shifted_scores_100": grouped_attention(100, torch.float16, ShiftedScores, mask=False),
    "causal_100_fp16": causal_attention(100, torch.float16),
    "causal_100_fp32": causal_attention(100, torch.float32),
    "llama_layer_100": llama_like_layer(100),
    "cast_96": cast((64, 96), torch.float16, torch.float32, None),
    "cast_160_scaled": cast((64, 160), torch.float16, torch.float32, 2.0),
    "cast_3d_96_scaled": cast((2, 8, 96), torch.float16, torch.float32, 0.5),
    "narrow_96": cast((64, 96), torch.float32, torch.float16, None),
}

imported = ImportedPrograms(PROGRAMS)


@pytest.mark.parametrize("name, cores", [
    ("gqa_96_fp16", 4), ("gqa_100_fp32", 1), ("gqa_160_fp16", 32), ("gqa_100_fp16", 32),
])
def test_grouped_query_attention_at_a_length_of_partial_sticks_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("name, cores", [("gqa_1_fp32", 1), ("gqa_1_fp32", 4), ("gqa_1_fp16", 32)])
def test_grouped_query_attention_over_one_key_matches_eager(name, cores, tmp_path):
    """A sequence of one: the probabilities, a matmul's A, are sticked on a K of one element,
    one element per stick, which the product reads once."""
    compile_and_check(name, cores, tmp_path / "out", imported)


def test_scores_shifted_by_one_times_repeated_values_matches_eager(tmp_path):
    compile_and_check("shifted_scores_100", 4, tmp_path / "out", imported)


@pytest.mark.parametrize("name, cores", [("causal_100_fp16", 4), ("causal_100_fp32", 1), ("causal_100_fp16", 32)])
def test_causal_attention_from_linear_projections_at_length_100_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_llama_decoder_layer_at_length_100_matches_eager(cores, tmp_path):
    compile_and_check("llama_layer_100", cores, tmp_path / "out", imported)


@pytest.mark.parametrize("name", ["cast_96", "cast_160_scaled", "cast_3d_96_scaled", "narrow_96"])
@pytest.mark.parametrize("cores", [1, 4])
def test_a_cast_between_fp16_and_fp32_of_partial_sticks_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


def test_a_returned_fp32_cast_of_96_columns_is_an_output_with_a_fourth_stick(tmp_path):
    compile_and_check("cast_96", 4, tmp_path / "out", imported)
    (output,) = read_manifest(tmp_path / "out").outputs
    assert output.layout.padded_shape == (64, 128) and output.layout.device_size == (4, 64, 32)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the output holds -inf, as eager's does
@pytest.mark.parametrize("cores", [1, 4])
def test_a_max_over_a_padded_stick_of_a_row_of_minus_inf_is_minus_inf(cores, tmp_path):
    compile_and_check("row_max_minus_inf", cores, tmp_path / "out", imported)


def _planned(name: str, cores: int = 4):
    """``name`` after every stage up to spyre-plan-memory, and its last matmul's B operand."""
    _, module = imported(name)
    module = module.clone()
    stages = compile_stages(cores)
    assert stages[-1].name == "spyre-lower-to-bundle"
    for stage in stages[:-1]:
        stage.apply(make_context(), module)
    matmul = [op for op in module.walk() if isinstance(op, MatmulOp)][-1]
    return module, matmul.inputs[1]


def test_the_repeated_values_are_a_zeroed_buffer_padded_along_k():
    """The copy that feeds the second matmul (the 2 value heads, which the matmul reads broadcast
    over each group of query heads) holds 128 key rows, 100 of them written: its buffer is a
    constant kernel argument the runtime fills with zeros."""
    module, values = _planned("gqa_100_fp16")
    layout = tensor_layout(values.type)
    assert layout.host_shape[1] == 2  # the value heads, not the 4 query heads
    assert (layout.host_shape[-2], layout.padded_host_shape[-2]) == (100, 128)
    placement = values.owner.placement
    body = next(op for op in module.walk() if isinstance(op, FuncOp))
    fixed = len(body.body.block.args) + len(body.function_type.outputs.data)
    assert placement.placement_kind is PlacementKind.ARG
    assert recorded_constants(body)[placement.value.data - fixed] == Constant(values.type, 0.0)


def test_padding_nothing_wrote_shows_in_the_result(tmp_path):
    """The interpreter starts the pool as nan: the repeated values placed in the pool instead of a
    zeroed buffer leave their 28 padding rows unwritten, and the matmul reads them."""
    module, values = _planned("gqa_100_fp16")
    values.owner.placement = PlacementAttr(PlacementKind.POOL, 1 << 24)
    compile_stages(4)[-1].apply(make_context(), module)
    write_output(module, tmp_path / "out")
    manifest = read_manifest(tmp_path / "out")
    outputs, _ = run(tmp_path / "out", imported.inputs("gqa_100_fp16", manifest))
    assert np.isnan(outputs[manifest.outputs[0].name]).all()
