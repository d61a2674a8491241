"""Copies that move no byte (``spyre_mlir.analysis.reinterpret``, spyre-fold-views rule 7).

Attention's output ``[1, H, L, D]``, read as ``[L, H * D]`` by the output projection, is copied
because a matmul cannot read K through ``k floordiv D``, ``k mod D``.  Laid out ``H, D-sticks, L``
its bytes already are the copy's: fold-views orders the cast that writes it so, memory planning
gives the copy's result the cast's buffer (its loop's, when the cast is tiled), and no copy runs.  The decision is checked against
enumerating every element, and the programs it drops a copy from against eager.
"""

from __future__ import annotations

import json

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.ir.affine import AffineExpr, AffineMap

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint
from spyre_mlir.analysis.reinterpret import reinterprets
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import RestickifyOp
from spyre_mlir.layout import device_offset, stick_layout
from spyre_mlir.mlir_text import make_context, parse_module
from spyre_mlir.pipeline import compile_stages

from e2e_support import ImportedPrograms, compile_and_check

D = [AffineExpr.dimension(i) for i in range(3)]
HEADS_TO_ROWS = AffineMap(3, 0, (AffineExpr.constant(0), D[2], D[0], D[1]))
"""A copy over (l, d, h) reading [1, H, L, D] at (0, h, l, d)."""


def rows_map(head_dim: int) -> AffineMap:
    """... and writing [L, H * D] at (l, h * D + d)."""
    return AffineMap(3, 0, (D[0], D[2] * head_dim + D[1]))


def test_attention_output_in_head_major_order_is_its_projection_input():
    rows = stick_layout((512, 4096), "float16")
    orders = {order: reinterprets((512, 128, 32), HEADS_TO_ROWS, rows_map(128),
                                  stick_layout((1, 32, 512, 128), "float16", order), rows)
              for order in [(0, 1, 2, 3), (2, 0, 1, 3), (0, 2, 1, 3), (1, 2, 0, 3)]}
    assert orders == {(0, 1, 2, 3): False, (2, 0, 1, 3): True, (0, 2, 1, 3): False, (1, 2, 0, 3): False}


def test_heads_of_one_stick_are_their_projection_input_in_the_default_order():
    assert reinterprets((512, 64, 32), HEADS_TO_ROWS, rows_map(64), stick_layout((1, 32, 512, 64), "float16"),
                        stick_layout((512, 2048), "float16"))


def test_padding_and_another_dtype_are_never_reinterpreted():
    rows = stick_layout((8, 128), "float16")
    heads = stick_layout((1, 4, 8, 32), "float16", (2, 0, 1, 3))  # a head of half a stick: padded
    assert not reinterprets((8, 32, 4), HEADS_TO_ROWS, rows_map(32), heads, rows)
    assert not reinterprets((8, 64, 2), HEADS_TO_ROWS, rows_map(64), stick_layout((1, 2, 8, 64), "float32"), rows)


def _unpadded(layout) -> bool:
    return not layout.is_padded and layout.host_shape[layout.stick_dim] % layout.elems_per_stick == 0


def _by_every_element(space, heads, rows, head_dim) -> bool:
    """The copy moves no byte, found by visiting every element."""
    if not (_unpadded(heads) and _unpadded(rows)) or heads.nbytes != rows.nbytes:
        return False
    return all(device_offset(heads, (0, h, l, d)) == device_offset(rows, (l, h * head_dim + d))
               for l in range(space[0]) for d in range(space[1]) for h in range(space[2]))


@settings(max_examples=80, deadline=None)
@given(heads=st.integers(1, 4), tokens=st.sampled_from([1, 2, 3, 32, 64]), head_dim=st.sampled_from([32, 64, 128]),
       dtype=st.sampled_from(["float16", "float32"]), order=st.permutations([0, 1, 2, 3]),
       rows_order=st.sampled_from([(0, 1), (1, 0)]))
def test_the_decision_equals_visiting_every_element(heads, tokens, head_dim, dtype, order, rows_order):
    space = (tokens, head_dim, heads)
    heads_layout = stick_layout((1, heads, tokens, head_dim), dtype, order)
    rows = stick_layout((tokens, heads * head_dim), dtype, rows_order)
    assert reinterprets(space, HEADS_TO_ROWS, rows_map(head_dim), heads_layout, rows) \
        == _by_every_element(space, heads_layout, rows, head_dim)


class ProjectedHeads(torch.nn.Module):
    """Attention's output in float32, cast and projected as transformers' attention does."""

    def __init__(self, heads: int, head_dim: int, width: int):
        super().__init__()
        self.o_proj = torch.nn.Linear(heads * head_dim, width, bias=False).half()

    def forward(self, attn: torch.Tensor) -> torch.Tensor:
        tokens = attn.shape[2]
        return self.o_proj(attn.to(torch.float16).transpose(1, 2).reshape(tokens, -1))


class ProjectedAndReturnedHeads(ProjectedHeads):
    """The same, the cast heads also returned: the copy stays."""

    def forward(self, attn: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        heads = attn.to(torch.float16)
        return self.o_proj(heads.transpose(1, 2).reshape(attn.shape[2], -1)), heads


class TiledHeads(ProjectedHeads):
    """The same, the cast tiled over the tokens (a ``tiles`` hint): it writes its loop's buffer."""

    def forward(self, attn: torch.Tensor) -> torch.Tensor:
        with spyre_hint(tiles={"L": 2}):
            heads = attn.to(torch.float16)
        return self.o_proj(heads.transpose(1, 2).reshape(attn.shape[2], -1))


def projected(cls: type[ProjectedHeads], heads: int, head_dim: int):
    def factory():
        for name, size in (("B", 1), ("H", heads), ("L", 64), ("D", head_dim)):
            declare_tensor_dim(name, size)
        attn = name_tensor_dims(torch.randn(1, heads, 64, head_dim), ["B", "H", "L", "D"])
        return cls(heads, head_dim, 256), (attn,)
    return factory


PROGRAMS = {
    "heads_of_128": projected(ProjectedHeads, 4, 128),
    "heads_of_64": projected(ProjectedHeads, 4, 64),
    "heads_returned": projected(ProjectedAndReturnedHeads, 4, 128),
    "heads_tiled": projected(TiledHeads, 4, 128),
}
imported = ImportedPrograms(PROGRAMS)


def _copies(out) -> int:
    """How many SDSC files of ``out`` restickify."""
    return sum(any("ReStickify" in key for key in json.loads(f.read_text())) for f in out.glob("sdsc_*.json"))


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("name", ["heads_of_128", "heads_of_64", "heads_tiled"])
def test_the_projected_attention_output_is_read_in_place_and_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)
    assert _copies(tmp_path / "out") == 0


@pytest.mark.parametrize("cores", [1, 32])
def test_heads_read_by_another_op_keep_their_copy_and_match_eager(cores, tmp_path):
    compile_and_check("heads_returned", cores, tmp_path / "out", imported)
    assert _copies(tmp_path / "out") == 1


COPIED = """
func.func @main(%o: tensor<1x4x64x128xf32>, %w: tensor<256x512xf16>) -> (tensor<64x256xf16>, tensor<1x4x64x128xf16>) {
  %c = spyre.pointwise "identity" (%o) : (tensor<1x4x64x128xf32>) -> tensor<1x4x64x128xf16>
  %t = spyre.view %c affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)> : tensor<1x4x64x128xf16> -> tensor<1x64x4x128xf16>
  %r = spyre.view %t affine_map<(d0, d1) -> (0, d0, d1 floordiv 128, d1 mod 128)> : tensor<1x64x4x128xf16> -> tensor<64x512xf16>
  %wt = spyre.view %w affine_map<(d0, d1) -> (d1, d0)> : tensor<256x512xf16> -> tensor<512x256xf16>
  %y = spyre.matmul (%r, %wt) : (tensor<64x512xf16>, tensor<512x256xf16>) -> tensor<64x256xf16>
  %e = spyre.pointwise "exp" (%c) : (tensor<1x4x64x128xf16>) -> tensor<1x4x64x128xf16>
  func.return %y, %e : tensor<64x256xf16>, tensor<1x4x64x128xf16>
}
"""


def test_regression_a_copy_placed_in_its_operands_buffer_must_move_no_byte():
    """A restickify that moves bytes, placed where its operand lives, is one located error in the
    lowering, not a program that reads the operand's bytes in the wrong order."""
    ctx = make_context()
    module = parse_module(ctx, COPIED, "copied.mlir")
    stages = compile_stages(4)
    for stage in stages[:-1]:
        stage.apply(ctx, module)
    (copy,) = [op for op in module.walk() if isinstance(op, RestickifyOp) and op.has_explicit_maps()]
    copy.placement = copy.inputs[0].owner.placement
    with pytest.raises(SpyreError, match="placed in its operand's buffer must copy nothing") as raised:
        stages[-1].apply(ctx, module)
    assert raised.value.location() == "copied.mlir:5:3"  # the view the copy materialises
