"""Tests of spyre-fold-views: the affine normal form, co-simplification, and a
differential test: random pointwise + view programs built with torch are
imported, stickified and folded, and executed through their folded indexing
maps on the storage arrays (numpy gathers over the iteration space); the
results must equal eager PyTorch element for element."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineMap

from spyre_mlir.dialects.spyre import ComputeOp, FillOp, PointwiseOp, ViewOp
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.mlir_text import make_context, parse_module, verify_located
from spyre_mlir.opfuncs import OpKind
from spyre_mlir.analysis.views import Indexing, co_simplify, dim, map_coords, stick_coord_readable, to_expr
from spyre_mlir.passes.fold_views import fold_views
from spyre_mlir.passes.stickify import stickify

# --------------------------------------------------------------------------
# Normal form and co-simplification
# --------------------------------------------------------------------------


def _norm(text_fn, space):
    m = AffineMap.from_callable(text_fn)
    return [str(to_expr(c)) for c in map_coords(m, space)]


def test_divisions_fold_when_bounded():
    # (d0 * 64 + d1) floordiv 64 = d0 and mod 64 = d1 when d1 < 64.
    assert _norm(lambda d0, d1: ((d0 * 64 + d1) // 64, (d0 * 64 + d1) % 64), [4, 64]) == ["d0", "d1"]
    # d1 < 128 straddles two sticks: only the multiple of 64 moves out.
    assert _norm(lambda d0, d1: ((d0 * 128 + d1) // 64,), [4, 128]) == ["((d0 * 2) + (d1 floordiv 64))"]
    assert _norm(lambda d0, d1: ((d0 * 128 + d1) % 64,), [4, 128]) == ["(d1 mod 64)"]
    assert _norm(lambda d0: (d0 // 8, d0 % 8), [8]) == ["0", "d0"]


def test_a_dim_split_and_merged_back_is_the_dim():
    """Regression: ViT's patch grid, its rows ``p`` split into ``(p floordiv 4, p mod 4)`` and
    flattened back as ``(p floordiv 4) * 4 + p mod 4``, is read at row ``p``, not through an
    iteration split in two (which a copy into the 17 rows after the class token cannot write)."""
    assert _norm(lambda p: ((p // 4) * 4 + p % 4,), [16]) == ["d0"]
    assert _norm(lambda p, c: ((p // 4) * 8 + (p % 4) * 2 + c,), [16, 2]) == ["((d0 * 2) + d1)"]
    assert _norm(lambda p: ((p // 4) * 3 + p % 4,), [16]) == ["(((d0 floordiv 4) * 3) + (d0 mod 4))"]


def test_rows_of_a_nest_read_in_blocks_of_whole_rows_divide_the_outer_dim():
    """Regression: ConvBERT's dynamic-convolution kernels, rows of 9 (``9 * d0 + d1``) read in
    blocks of 36, are ``d0 floordiv 4`` and ``9 * (d0 mod 4) + d1``: the outer dim splits, where the
    division of the whole row kept the copy from lowering.  The rest must stay inside one row."""
    assert _norm(lambda d0, d1: ((d0 * 9 + d1) // 36, (d0 * 9 + d1) % 36), [512, 9]) == \
        ["(d0 floordiv 4)", "(((d0 mod 4) * 9) + d1)"]
    assert _norm(lambda d0, d1: ((d0 * 9 + d1) // 36,), [512, 10]) == ["(((d0 * 9) + d1) floordiv 36)"]
    for k, c, rows, rest in ((3, 12, 7, 3), (4, 8, 5, 4), (6, 18, 4, 6)):
        m = AffineMap.from_callable(lambda d0, d1: ((d0 * k + d1) // c, (d0 * k + d1) % c))
        folded = AffineMap(2, 0, tuple(to_expr(x) for x in map_coords(m, [rows, rest])))
        for a in range(rows):
            for b in range(rest):
                assert folded.eval([a, b], []) == m.eval([a, b], [])


def test_co_simplify_splits_remainder_first():
    space = [500, 200]
    x = map_coords(AffineMap.from_callable(lambda p, s: (p // 10, p % 10, s)), space)
    y = (dim(0), dim(1))
    ix = co_simplify(Indexing(space, [x, y, y]))
    assert ix.space == [10, 50, 200]
    assert [str(m) for m in ix.maps()] == [
        "(d0, d1, d2) -> (d1, d0, d2)",
        "(d0, d1, d2) -> (((d1 * 10) + d0), d2)",
        "(d0, d1, d2) -> (((d1 * 10) + d0), d2)",
    ]
    assert ix.splits == [(0, 10)]


def test_co_simplify_leaves_non_divisor_divisions():
    space = [20, 30]
    coords = map_coords(AffineMap.from_callable(lambda a, b: ((a * 30 + b) // 100, (a * 30 + b) % 100)), space)
    ix = co_simplify(Indexing(space, [coords]))
    assert ix.space == [20, 30] and not ix.splits


def test_co_simplify_splits_only_splittable_dims():
    # A matmul over (h, M, N, K) reading K/V head h floordiv 4: only the batch dim h splits, and
    # a division of K stays (a copy).
    space = [32, 1, 64, 128]
    kv = map_coords(AffineMap.from_callable(lambda h, m, n, k: (h // 4, k, n)), space)
    rows = map_coords(AffineMap.from_callable(lambda h, m, n, k: (h, m, k // 64, k % 64)), space)
    out = map_coords(AffineMap.from_callable(lambda h, m, n, k: (h, m, n)), space)
    ix = co_simplify(Indexing(space, [rows, kv, out], splittable=(0,)))
    assert ix.space == [4, 8, 1, 64, 128] and ix.splits == [(0, 4)] and ix.splittable == (0, 1)
    assert [str(m) for m in ix.maps()] == [
        "(d0, d1, d2, d3, d4) -> (((d1 * 4) + d0), d2, (d4 floordiv 64), (d4 mod 64))",
        "(d0, d1, d2, d3, d4) -> (d1, d4, d3)",
        "(d0, d1, d2, d3, d4) -> (((d1 * 4) + d0), d2, d3)",
    ]


@pytest.mark.parametrize("coord, readable", [
    (lambda d0, d1: d1, True),
    (lambda d0, d1: d0 * 128 + d1, True),
    (lambda d0, d1: d1 + 64, True),
    (lambda d0, d1: d1 + 3, False),
    (lambda d0, d1: d0 * 32 + d1, False),
    (lambda d0, d1: d1 % 16, False),
    (lambda d0, d1: 5, True),
])
def test_stick_readability(coord, readable):
    c = map_coords(AffineMap.from_callable(lambda d0, d1: (coord(d0, d1),)), [4, 64])[0]
    assert stick_coord_readable(c, 64) is readable


def test_linear_matches_evaluation():
    rng = np.random.default_rng(0)
    m = AffineMap.from_callable(lambda a, b, c: (((a * 12 + b * 4 + c) // 6) % 5, (a * 12 + b * 4 + c) % 6))
    space = [3, 3, 4]
    coords = map_coords(m, space)
    norm = AffineMap(3, 0, tuple(to_expr(c) for c in coords))
    for _ in range(50):
        point = [int(rng.integers(0, s)) for s in space]
        assert norm.eval(point, []) == m.eval(point, [])


# --------------------------------------------------------------------------
# Executing folded IR through its maps
# --------------------------------------------------------------------------


def eval_expr(expr, index):
    """An affine expression over numpy index arrays (one per iteration dim)."""
    if isinstance(expr, AffineConstantExpr):
        return np.full(index[0].shape if index else (), expr.value, dtype=np.int64)
    if isinstance(expr, AffineDimExpr):
        return index[expr.position]
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs, rhs = eval_expr(expr.lhs, index), eval_expr(expr.rhs, index)
    return {
        AffineBinaryOpKind.Add: lambda: lhs + rhs,
        AffineBinaryOpKind.Mul: lambda: lhs * rhs,
        AffineBinaryOpKind.FloorDiv: lambda: lhs // rhs,
        AffineBinaryOpKind.CeilDiv: lambda: -(-lhs // rhs),
        AffineBinaryOpKind.Mod: lambda: lhs % rhs,
    }[expr.kind]()


def gather(array, m, index):
    """``array`` at ``m(index)``, checked to stay in bounds."""
    coords = tuple(eval_expr(e, index) for e in m.results)
    for c, size in zip(coords, array.shape):
        assert c.min() >= 0 and c.max() < size, f"{m} leaves a dim of size {size}"
    return array[coords] if coords else np.broadcast_to(array, index[0].shape if index else ())


def execute(module: ModuleOp, inputs):
    """Run the single function of ``module``: compute ops through their indexing maps."""
    f = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    env = {arg: np.asarray(x, dtype=np.float32) for arg, x in zip(f.body.blocks[0].args, inputs)}
    for op in f.body.blocks[0].ops:
        assert not isinstance(op, ViewOp), "a view survived spyre-fold-views"
        if isinstance(op, func.ReturnOp):
            return [env[v] for v in op.operands]
        if isinstance(op, FillOp):
            env[op.result] = np.full(op.result.type.get_shape(), op.fill_value())
            continue
        assert isinstance(op, ComputeOp)
        space = op.get_iteration_space()
        index = list(np.indices(space).reshape(len(space), -1)) if space else []
        *in_maps, out_map = op.get_indexing_maps()
        args = [gather(env[v], m, index) for v, m in zip(op.inputs, in_maps)]
        kind = op.op_func().kind
        if kind is OpKind.POINTWISE:
            assert isinstance(op, PointwiseOp) and not op.const_values()
            with np.errstate(over="ignore"):  # float32, as eager: exp(exp(8)) is inf in both
                values = op.op_func().compute(*args)
        else:
            assert kind is OpKind.DATA_MOVEMENT
            values = args[0]
        out = np.zeros(op.result.type.get_shape(), dtype=np.float32)
        writes = np.zeros(out.shape, dtype=np.int64)
        where = tuple(eval_expr(e, index) for e in out_map.results)
        out[where] = values
        np.add.at(writes, where, 1)
        assert (writes == 1).all(), f"{op.name}: a result element is not written exactly once"
        env[op.result] = out
    raise AssertionError("no func.return")


# --------------------------------------------------------------------------
# Random programs of pointwise ops and views
# --------------------------------------------------------------------------

UNARY = {"exp": torch.exp, "neg": torch.neg, "abs": torch.abs}
BINARY = {"add": torch.add, "mul": torch.mul, "sub": torch.sub}


def _factorisations(n):
    """Ways to write ``n`` as a product of two factors > 1."""
    return [(a, n // a) for a in range(2, n) if n % a == 0]


@st.composite
def steps(draw, shape):
    """A list of (kind, args) steps over a growing list of tensors; tensor 0 has ``shape``."""
    shapes = [tuple(shape)]
    out = []
    for _ in range(draw(st.integers(1, 5))):
        i = draw(st.integers(0, len(shapes) - 1))
        s = shapes[i]
        options = ["unary", "binary", "permute", "unsqueeze"]
        if any(_factorisations(n) for n in s):
            options.append("split")
        if len(s) >= 2:
            options.append("merge")
        if any(n >= 3 for n in s):
            options.append("slice")
        kind = draw(st.sampled_from(options))
        if kind == "unary":
            out.append(("unary", i, draw(st.sampled_from(sorted(UNARY)))))
            new = s
        elif kind == "binary":
            same = [j for j, t in enumerate(shapes) if t == s]
            out.append(("binary", i, draw(st.sampled_from(same)), draw(st.sampled_from(sorted(BINARY)))))
            new = s
        elif kind == "permute":
            perm = draw(st.permutations(range(len(s))))
            out.append(("permute", i, tuple(perm)))
            new = tuple(s[p] for p in perm)
        elif kind == "unsqueeze":
            d = draw(st.integers(0, len(s)))
            size = draw(st.sampled_from([1, 3]))
            out.append(("expand", i, d, size))
            new = s[:d] + (size,) + s[d:]
        elif kind == "split":
            d = draw(st.sampled_from([d for d, n in enumerate(s) if _factorisations(n)]))
            a, b = draw(st.sampled_from(_factorisations(s[d])))
            new = s[:d] + (a, b) + s[d + 1:]
            out.append(("reshape", i, new))
        elif kind == "merge":
            d = draw(st.integers(0, len(s) - 2))
            new = s[:d] + (s[d] * s[d + 1],) + s[d + 2:]
            out.append(("reshape", i, new))
        else:
            d = draw(st.sampled_from([d for d, n in enumerate(s) if n >= 3]))
            start = draw(st.integers(0, s[d] - 2))
            stop = draw(st.integers(start + 1, s[d]))
            out.append(("slice", i, d, start, stop))
            new = s[:d] + (stop - start,) + s[d + 1:]
        shapes.append(new)
    # The program ends with a pointwise op on the last tensor, and returns both.
    out.append(("unary", len(shapes) - 1, "neg"))
    return out


def replay(program, x):
    """Run ``program`` on ``x`` eagerly; returns the last view-or-op and the final op."""
    values = [x]
    for step in program:
        kind, i = step[0], step[1]
        t = values[i]
        if kind == "unary":
            values.append(UNARY[step[2]](t))
        elif kind == "binary":
            values.append(BINARY[step[3]](t, values[step[2]]))
        elif kind == "permute":
            values.append(t.permute(*step[2]))
        elif kind == "expand":
            d, size = step[2], step[3]
            u = t.unsqueeze(d)
            values.append(u.expand(*u.shape[:d], size, *u.shape[d + 1:]))
        elif kind == "reshape":
            values.append(t.reshape(*step[2]))
        else:
            d, start, stop = step[2], step[3], step[4]
            values.append(t.narrow(d, start, stop - start))
    return values[-2], values[-1]


def compile_folded(program, x):
    """Import ``program``, run spyre-stickify and spyre-fold-views; checks each output round-trips."""
    module = import_program(export_model(lambda t: replay(program, t), (x,)))
    ctx = make_context()
    for transform in (stickify, fold_views):
        transform(module)
        verify_located(module)
        text = str(module)
        assert str(parse_module(ctx, text, "roundtrip.mlir")) == text
    return module


shapes = st.lists(st.integers(1, 12), min_size=1, max_size=3).filter(lambda s: math.prod(s) <= 600)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), shape=shapes)
def test_folded_maps_read_what_eager_reads(data, shape):
    program = data.draw(steps(shape))
    generator = torch.Generator().manual_seed(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = torch.randint(-8, 8, shape, dtype=torch.float32, generator=generator)
    expected = [t.contiguous().numpy() for t in replay(program, x)]
    module = compile_folded(program, x)
    got = execute(module, [x.numpy()])
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        # Inputs are small integers, so a misread element is far off; both sides compute in
        # float32 (an overflow is inf in both), and chained exps amplify float32 rounding
        # (exp(exp(4)) differs by ~2e-6 between libms).
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=0)


def test_flatten_seed_example_matches_eager():
    program = [("reshape", 0, (500, 200)), ("binary", 1, 1, "add"), ("unary", 2, "neg")]
    x = torch.randint(-8, 8, (50, 10, 200), dtype=torch.float32)
    module = compile_folded(program, x)
    ops = [op for op in module.walk() if isinstance(op, ComputeOp)]
    assert ops[0].get_iteration_space() == (10, 50, 200)
    got = execute(module, [x.numpy()])
    for g, e in zip(got, replay(program, x)):
        np.testing.assert_array_equal(g, e.numpy())


def test_regression_a_returned_broadcast_of_one_element_reads_a_unit_stick():
    """``x[0:1][None].expand(3, 1)`` of a [3] ``x``, returned (the property test above, shape [3]):
    its copy reads one position of ``x``'s stick of 3 and broadcasts it along both its dims, so no
    dim of ``x`` follows the dim its result is sticked on.  spyre-stickify raised "no dim of its
    storage [3] follows it"; the copy now reads ``x`` with one more dim of one element, sticked on
    that dim, as a pointwise op reading a broadcast operand does, and reads what eager reads."""
    program = [("unary", 0, "abs"), ("unary", 0, "abs"), ("slice", 0, 0, 0, 1), ("expand", 3, 0, 3),
               ("unary", 4, "neg")]
    x = torch.tensor([1.0, -2.0, 3.0])
    got = execute(compile_folded(program, x), [x.numpy()])
    for g, e in zip(got, replay(program, x)):
        np.testing.assert_array_equal(g, e.contiguous().numpy())


def test_the_check_catches_a_wrong_map():
    """The differential check fails when a folded map reads the wrong elements."""
    program = [("permute", 0, (1, 0)), ("unary", 1, "neg")]
    x = torch.randint(-8, 8, (5, 5), dtype=torch.float32)
    module = compile_folded(program, x)
    op = next(op for op in module.walk() if isinstance(op, ComputeOp) and op.has_explicit_maps())
    assert str(op.get_indexing_maps()[0]) == "(d0, d1) -> (d1, d0)"
    np.testing.assert_array_equal(execute(module, [x.numpy()])[1], replay(program, x)[1].numpy())
    op.set_indexing(op.get_iteration_space(), [AffineMap.identity(2)] * 2)  # forget the transpose
    assert not np.array_equal(execute(module, [x.numpy()])[1], replay(program, x)[1].numpy())


def test_folding_is_idempotent():
    program = [("reshape", 0, (6, 10)), ("permute", 1, (1, 0)), ("unary", 2, "exp"), ("unary", 3, "neg")]
    x = torch.randint(-8, 8, (60,), dtype=torch.float32)
    module = compile_folded(program, x)
    once = str(module)
    stickify(module)
    fold_views(module)
    assert str(module) == once


def test_result_record():
    # fp32 sticks hold 32 elements: [128] read as [4, 32] is read in place.
    module = import_program(export_model(lambda t: (t.reshape(4, 32) + 1).reshape(128), (torch.zeros(128),)))
    stickify(module)
    result = fold_views(module)
    assert result.erased_views == 2
    assert [op.name for op in result.copies] == ["spyre.restickify"]  # the returned reshape
    assert [op.name for op in result.folded] == ["spyre.pointwise"]
