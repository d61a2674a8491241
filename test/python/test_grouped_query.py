"""Grouped-query attention reads its K and V heads in place, compiled and compared with eager.

transformers' ``repeat_kv`` expands 2 key/value heads over 4 query heads (``expand`` + ``reshape``:
query head ``h`` reads K/V head ``h floordiv 2``), and the float16 attention of PyTorch's CPU
decomposition casts K and V to float32 and scales K.  The casts and the scaling run on the 2 heads
(the importer computes an elementwise op of an expanding view on the view's source), and the
matmuls read them through the view, their head dim split in two (spyre-fold-views), so no
tensor of the 4 expanded heads is written (``test/Transforms/stickify/grouped-query.mlir``).
A decode step (one token) and a prefill, on 1, 4 and 32 cores.
"""

from __future__ import annotations

import pytest
import torch

from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.passes.fold_views import fold_views
from spyre_mlir.passes.stickify import stickify

from e2e_support import ImportedPrograms, compile_and_check

HEADS, KV_HEADS, HEAD_DIM, CACHE = 4, 2, 64, 128


class GroupedQueryAttention(torch.nn.Module):
    """Scaled dot-product attention of ``HEADS`` query heads over ``KV_HEADS`` cached K/V heads."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        group = q.shape[1] // k.shape[1]

        def repeat_kv(x: torch.Tensor) -> torch.Tensor:  # transformers' repeat_kv
            b, h, s, d = x.shape
            return x[:, :, None, :, :].expand(b, h, group, s, d).reshape(b, h * group, s, d)

        return torch.nn.functional.scaled_dot_product_attention(q, repeat_kv(k), repeat_kv(v), scale=0.3)


def _attention(tokens: int):
    def build():
        g = torch.Generator().manual_seed(1)
        q = torch.randn(1, HEADS, tokens, HEAD_DIM, generator=g).half()
        k, v = (torch.randn(1, KV_HEADS, CACHE, HEAD_DIM, generator=g).half() for _ in range(2))
        return GroupedQueryAttention(), (q, k, v)
    return build


PROGRAMS = {"decode": _attention(1), "prefill": _attention(32)}
imported = ImportedPrograms(PROGRAMS)


@pytest.mark.parametrize("name", PROGRAMS)
def test_no_tensor_of_the_expanded_heads_is_written(name):
    fn, inputs = PROGRAMS[name]()
    module = import_program(export_model(fn, inputs))
    stickify(module)
    fold_views(module)
    expanded = sorted((HEADS, CACHE, HEAD_DIM))
    shapes = [(op.op_func().name, op.result.type.get_shape()) for op in module.walk() if isinstance(op, ComputeOp)]
    written = [(name, shape) for name, shape in shapes if sorted(n for n in shape if n > 1) == expanded]
    assert not written, written


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_grouped_query_attention_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


def test_the_scores_stay_in_lx_where_the_softmax_overwrites_them(tmp_path):
    """At 32 heads and 512 tokens on 32 cores each core's share of the f32 scores is 1 MiB: they fit
    LX once, not beside a second tensor of theirs.  The scores matmul writes them in the shape the
    softmax reads ([1, h, 512, 512], not torch's bmm shape [h, 512, 512], whose layout differs),
    so the mask's add overwrites them in place and no score leaves LX (before, the matmul wrote all
    33.5 MB of them to HBM and the add read them back).  spyre-auto-tile runs the softmax on 8
    heads at a time, where its tensors fit side by side (2.42 -> 1.64 ms predicted)."""
    from spyre_mlir.pipeline import compile

    g = torch.Generator().manual_seed(2)
    q = torch.randn(1, 32, 512, 128, generator=g).half()
    k, v = (torch.randn(1, 8, 512, 128, generator=g).half() for _ in range(2))
    program = compile(GroupedQueryAttention(), (q, k, v), cores=32, out_dir=tmp_path / "out")
    scores = [c for c in program.report.ops if c.op.op_func().kind.name == "MATMUL"][0]
    batch, heads, *rows = scores.op.result.type.get_shape()
    assert (batch, rows, heads * scores.runs) == (1, [512, 512], 32)
    assert scores.traffic.hbm_written == 0
    assert scores.traffic.lx_written == 32 * 512 * 512 * 4
    torch.testing.assert_close(program.run(q, k, v), GroupedQueryAttention()(q, k, v), atol=4e-3, rtol=4e-3)


def test_span_tiling_divides_the_key_value_heads_not_the_heads_within_a_group(tmp_path):
    """Regression: on one core the f32 [1, 32, 2048, 2048] scores (537 MB) overflow the per-core
    span limit, and spyre-coarse-tile tiled their matmul along the first dim driving the heads,
    the query head within its group (``kv * 4 + q``): a tile of every fourth head, which no
    matmul can address (the lowering crashed).  It now tiles the key/value heads, the digit of the
    largest step: each tile is consecutive heads (whole groups, or heads of one group: spyre-auto-tile
    takes one head a tile here)."""
    from spyre_mlir.pipeline import compile

    q = torch.zeros(1, 32, 2048, 128, dtype=torch.float16)
    k = v = torch.zeros(1, 8, 2048, 128, dtype=torch.float16)
    report = compile(GroupedQueryAttention(), (q, k, v), cores=1, out_dir=tmp_path / "out").report
    scores = next(c for c in report.ops if c.op.op_func().kind.name == "MATMUL")
    group, kv_heads = scores.op.get_iteration_space()[:2]
    assert scores.runs > 1 and (group == 4 or kv_heads == 1)  # consecutive heads: no stride
