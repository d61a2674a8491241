"""Tests of spyre-stickify: stick drivers, the decision rules on small
programs, K padding read back through tensor_layout, the result record,
idempotence and round trips on the example models."""

from __future__ import annotations

import pytest
import torch
from xdsl.dialects import func
from xdsl.ir.affine import AffineMap

import spyre_mlir
from e2e_support import outputs_match_eager
from spyre_mlir.dialects.spyre import ComputeOp, RestickifyOp, tensor_layout
from spyre_mlir.importer import import_program, load_program
from spyre_mlir.interpreter import compare, tolerance_for
from spyre_mlir.mlir_text import make_context, parse_module, verify_located
from spyre_mlir.analysis.views import map_coords, to_expr
from spyre_mlir.passes.fold_views import fold_views
from spyre_mlir.passes.stage_layouts import stage_layouts
from spyre_mlir.passes.stickify import BROADCAST, dim_order, stick_driver, stickify
from spyre_mlir.passes.stickify.nests import row_major_nest


def _driver(fn, space):
    return stick_driver(map_coords(AffineMap.from_callable(lambda d0, d1: (fn(d0, d1),)), space)[0])


@pytest.mark.parametrize("fn, driver", [
    (lambda d0, d1: d1, 1),
    (lambda d0, d1: d0 * 128 + d1, 1),
    (lambda d0, d1: d0 % 64, 0),
    (lambda d0, d1: d0 // 64, None),
    (lambda d0, d1: 0, BROADCAST),
])
def test_stick_driver(fn, driver):
    assert _driver(fn, [256, 64]) == driver


def test_dim_order_puts_the_stick_last():
    assert dim_order(3, 0) == (1, 2, 0)
    assert dim_order(0, None) == ()


def _coords(fn, space):
    return map_coords(AffineMap.from_callable(lambda d0, d1: (fn(d0, d1), d1)), space)


@pytest.mark.parametrize("fn, extent, space, factors, digits", [
    (lambda d0, d1: d0 * 100 + d1, 200, [2, 100], (2, 100), ("d0", "d1")),
    (lambda d0, d1: d0 * 100 + d1, 300, [2, 100], (3, 100), ("d0", "d1")),
    (lambda d0, d1: d0 * 100 + d1 + 101, 300, [2, 99], (3, 100), ("(d0 + 1)", "(d1 + 1)")),
    (lambda d0, d1: d0 * 100 + d1 + 1, 200, [2, 100], None, None),  # l + 1 carries into the next b
    (lambda d0, d1: d0 * 96 + d1 * 2, 192, [2, 48], None, None),  # no unit term
    (lambda d0, d1: d0 * 64 + d1, 200, [2, 64], None, None),  # 64 does not divide 200
    (lambda d0, d1: d1, 100, [2, 100], None, None),  # one term: nothing to unflatten
])
def test_row_major_nest(fn, extent, space, factors, digits):
    nest = row_major_nest(_coords(fn, space), 0, extent, space)
    if factors is None:
        assert nest is None
        return
    assert nest.factors == factors and nest.inner == 1
    assert tuple(str(to_expr(d)) for d in nest.digits) == digits
    assert nest.shape([extent, 7]) == (*factors, 7)
    assert [str(to_expr(c)) for c in nest.flat(2)] == ["((d0 * 100) + d1)", "d2"]


def _module(text):
    module = parse_module(make_context(), text, "t.mlir")
    verify_located(module)
    return module


def test_matmul_k_padding_and_result_record():
    module = _module("""
    func.func @f(%a: tensor<32x100xf16>, %b: tensor<100x150xf16>) -> tensor<32x150xf16> {
      %c = spyre.matmul (%a, %b) : (tensor<32x100xf16>, tensor<100x150xf16>) -> tensor<32x150xf16>
      func.return %c : tensor<32x150xf16>
    }""")
    result = stickify(module)  # the copy of %b is spyre-stage-layouts's to stage or warn about
    verify_located(module)
    [copy] = result.restickifies
    padded = tensor_layout(copy.result.type)
    assert padded.device_size == [3, 128, 64] and padded.padded_shape == (128, 150)
    assert padded.dim_order == (0, 1)
    [mm] = [op for op in module.walk() if isinstance(op, ComputeOp) and not isinstance(op, RestickifyOp)]
    assert tensor_layout(mm.inputs[0].type).stick_dim == 1  # A on K
    assert tensor_layout(mm.result.type).stick_dim == 1  # C on N


def test_stick_reduction_is_sparse():
    module = _module("""
    func.func @f(%x: tensor<8x150xf16>) -> tensor<8x1xf16> {
      %s = spyre.reduce "sum" (%x) dims [1] : (tensor<8x150xf16>) -> tensor<8x1xf16>
      func.return %s : tensor<8x1xf16>
    }""")
    stickify(module)
    [op] = [op for op in module.walk() if isinstance(op, ComputeOp)]
    layout = tensor_layout(op.result.type)
    assert layout.stick_dim == 1 and layout.device_size == [1, 8, 64]  # one element per stick


@pytest.mark.parametrize("spec, restickifies", [
    ("examples/rope.py:build", 0),
    ("examples/softmax.py:build", 0),
    ("examples/wsr_matmul.py:build_view", 0),
    ("examples/add_mul_nested.py:build", 0),
])
def test_examples_idempotent_and_round_trip(spec, restickifies):
    module = import_program(load_program(spec))
    ctx = make_context()
    result = stickify(module)
    verify_located(module)
    assert len(result.restickifies) == restickifies
    once = str(module)
    assert str(parse_module(ctx, once, "once.mlir")) == once
    stickify(module)
    assert str(module) == once
    fold_views(module)
    verify_located(module)
    folded = str(module)
    assert str(parse_module(ctx, folded, "folded.mlir")) == folded
    stickify(module)
    fold_views(module)
    assert str(module) == folded


def test_transformer_block_stages_the_transposed_weights_sticked_on_n():
    """Each Linear weight ``[out, in]`` is read transposed (``W^T``, its ``out`` the matmul's N): as a
    parameter the runtime stages, it is sticked on ``out`` before any op is visited (step 1), so no
    op copies it and spyre-stage-layouts has nothing left to stage."""
    module = import_program(load_program("examples/transformer_block.py:build"))
    body = next(op for op in module.ops if isinstance(op, func.FuncOp))
    result = stickify(module)
    verify_located(module)
    weights = [a for a in body.args if a.name_hint and a.name_hint.endswith("_weight")
               and len(a.type.get_shape()) == 2]
    assert len(weights) == 7  # q, k, v, o, gate, up, down
    assert all(tensor_layout(a.type).stick_dim == 0 for a in weights)
    assert not any(op.inputs[0] in weights for op in result.restickifies)
    assert stage_layouts(body) == []
    fold_views(module)
    verify_located(module)


class _ScaledByBuffer(torch.nn.Module):
    """Gemma's embedding scale: a 0-d buffer multiplied in."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("normalizer", torch.tensor(8.0, dtype=torch.float16), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.normalizer


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_regression_a_scalar_buffer_is_staged_in_the_default_layout(cores):
    """A 0-d buffer has no stick to choose; staging it failed with "min() arg is an empty sequence"
    (transformers' Gemma2 and Gemma3).  It matches eager."""
    module, x = _ScaledByBuffer().eval(), torch.randn(4, 64, dtype=torch.float16)
    with torch.no_grad():
        want = module(x)
        got = spyre_mlir.compile(module, (x,), cores=cores).run(x)
    compare("scaled", got.numpy(), want.numpy(), tolerance_for("float16"))


class _StridedColumns(torch.nn.Module):
    """Every second column of a computed tensor and every third from column 1 of an input,
    both returned as they are (no op reads them)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return (x * 3)[:, ::2], x[:, 1::3]


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_regression_a_returned_view_read_strided_along_its_stick_is_copied_untangled(cores):
    """A returned view reading every k-th element of its storage's stick dim was copied by a
    restickify reading the stick strided, which no layout label describes ("do not nest
    row-major (coefficient 2 of d1, expected 1)" in lowering); the copy now reads the storage
    restickified onto its rows, as a compute op's copy of such a view does.  It matches eager."""
    outputs_match_eager(_StridedColumns(), (torch.randn(64, 128, dtype=torch.float16),), cores,
                        ("every_second", "every_third"))


class _EveryThirdOfATranspose(torch.nn.Module):
    """Every third row from row 1 of a transpose: columns 1, 4, ..., 61 of 64, read across rows."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2)[:, 1::3, :] + 1


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_regression_a_dim_read_every_kth_element_is_padded_to_whole_steps(cores):
    """The add reads its operand restickified onto its 8 rows, along its 64 columns every third
    from column 1; the lowering labels such a dim in steps of 3, so its extent must be a whole
    number of them ("64 elements, not a multiple of the stride 3").  The copy's columns are padded
    to 66, and the result matches eager."""
    outputs_match_eager(_EveryThirdOfATranspose(), (torch.randn(4, 8, 64),), cores, ("every_third",))
