"""Tests of the ComputeOp interface (iteration space, indexing maps, reduction dims, op func), checked numerically with numpy."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, DenseArrayBase, TensorType, f16, i64
from xdsl.ir import Block
from xdsl.ir.affine import AffineMap
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from spyre_mlir.dialects.spyre import (
    ComputeOp,
    LayoutAttr,
    MatmulOp,
    PointwiseOp,
    ReduceOp,
    RestickifyOp,
)
from spyre_mlir.layout import stick_layout


def tensor(*shape: int) -> TensorType:
    return TensorType(f16, list(shape))


def value(*shape: int):
    return create_ssa_value(tensor(*shape))


def maps_str(op: ComputeOp) -> list[str]:
    return [str(m) for m in op.get_indexing_maps()]


def set_explicit(op: ComputeOp, space: Sequence[int], maps: Sequence[AffineMap]) -> None:
    """Write explicit ``iteration_space`` / ``indexing_maps`` as view folding does."""
    op.properties["iteration_space"] = DenseArrayBase.from_list(i64, list(space))
    op.properties["indexing_maps"] = ArrayAttr([AffineMapAttr(m) for m in maps])


# --------------------------------------------------------------------------
# Executing an op through its interface
# --------------------------------------------------------------------------


def gather_index(m: AffineMap, point: tuple[int, ...], shape: Sequence[int]) -> tuple[int, ...]:
    """``m(point)``, asserted to lie inside ``shape`` (numpy would silently wrap negatives)."""
    index = tuple(m.eval(list(point), []))
    assert len(index) == len(shape), f"{m} gives {len(index)} coordinates for rank {len(shape)}"
    assert all(0 <= i < s for i, s in zip(index, shape)), f"{m}{point} = {index} outside {list(shape)}"
    return index


def execute(op: ComputeOp, inputs: Sequence[np.ndarray],
            body: Callable[..., float], combine: Callable[[float, float], float] | None,
            init: float) -> np.ndarray:
    """Run ``op`` as a loop nest over its iteration space, reading and writing through its maps.

    Without ``combine`` every result element must be written exactly once; with it
    the body's value is accumulated onto ``init``.
    """
    *in_maps, out_map = op.get_indexing_maps()
    out_shape = tuple(op.result.type.get_shape())
    out = np.full(out_shape, init, dtype=np.float64)
    writes = np.zeros(out_shape, dtype=np.int64)
    for point in itertools.product(*(range(s) for s in op.get_iteration_space())):
        args = [x[gather_index(m, point, x.shape)] for m, x in zip(in_maps, inputs)]
        where = gather_index(out_map, point, out_shape)
        out[where] = body(*args) if combine is None else combine(out[where], body(*args))
        writes[where] += 1
    if combine is None:
        assert (writes == 1).all(), "a pointwise result element is not written exactly once"
    else:
        assert (writes == writes.flat[0]).all() and writes.flat[0] >= 1, "uneven reduction"
    return out


def rand(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    return rng.standard_normal(tuple(shape))


# --------------------------------------------------------------------------
# Pointwise
# --------------------------------------------------------------------------


def test_pointwise_broadcast_maps():
    a, b = value(4, 1, 64), value(64)
    op = PointwiseOp("add", [a, b], tensor(4, 8, 64))
    op.verify()
    assert op.get_iteration_space() == (4, 8, 64)
    assert maps_str(op) == ["(d0, d1, d2) -> (d0, 0, d2)", "(d0, d1, d2) -> (d2)",
                            "(d0, d1, d2) -> (d0, d1, d2)"]
    assert op.reduction_dims() == ()
    assert op.op_func().name == "add"


def test_pointwise_size_one_result_dim_is_not_broadcast():
    op = PointwiseOp("mul", [value(1, 8), value(1, 8)], tensor(1, 8))
    op.verify()
    assert maps_str(op)[:2] == ["(d0, d1) -> (d0, d1)"] * 2


def test_pointwise_const_input_has_no_map():
    op = PointwiseOp("add", [value(4, 8)], tensor(4, 8), consts={"y": 2.0})
    op.verify()
    assert len(op.get_indexing_maps()) == 2
    assert op.tensor_input_names() == ("x",)


def random_broadcast_case(rng: random.Random) -> tuple[list[int], list[list[int]]]:
    rank = rng.randint(1, 3)
    out = [rng.randint(1, 4) for _ in range(rank)]
    operands = []
    for _ in range(2):
        drop = rng.randint(0, rank - 1)
        operands.append([1 if rng.random() < 0.4 else s for s in out[drop:]])
    return out, operands


@pytest.mark.parametrize("seed", range(6))
def test_pointwise_maps_are_numerically_broadcasting(seed):
    rng, np_rng = random.Random(seed), np.random.default_rng(seed)
    out_shape, shapes = random_broadcast_case(rng)
    for func, np_func in (("sub", np.subtract), ("maximum", np.maximum)):
        op = PointwiseOp(func, [value(*s) for s in shapes], tensor(*out_shape))
        op.verify()
        xs = [rand(np_rng, s) for s in shapes]
        got = execute(op, xs, lambda x, y, f=op.op_func(): f.compute(x, y), None, np.nan)
        # The result may have more (or larger) dims than every operand: broadcast to it.
        np.testing.assert_array_equal(got, np.broadcast_to(np_func(*xs), out_shape))


def test_pointwise_where3_three_broadcast_operands():
    np_rng = np.random.default_rng(7)
    shapes, out_shape = [[3, 1], [1, 4], [4]], [3, 4]
    op = PointwiseOp("where3", [value(*s) for s in shapes], tensor(*out_shape))
    op.verify()
    cond = (np_rng.random((3, 1)) < 0.5).astype(np.float64)
    x, y = rand(np_rng, [1, 4]), rand(np_rng, [4])
    got = execute(op, [cond, x, y], lambda c, a, b: op.op_func().compute(c, a, b), None, np.nan)
    np.testing.assert_array_equal(got, np.where(cond != 0, x, y))


# --------------------------------------------------------------------------
# Reduce
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dims, result, space, maps, reduction", [
    ([0], [8, 64], (8, 64, 4),
     ["(d0, d1, d2) -> (d2, d0, d1)", "(d0, d1, d2) -> (d0, d1)"], (2,)),
    ([0], [1, 8, 64], (8, 64, 4),
     ["(d0, d1, d2) -> (d2, d0, d1)", "(d0, d1, d2) -> (0, d0, d1)"], (2,)),
    ([2], [4, 8], (4, 8, 64),
     ["(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d0, d1)"], (2,)),
    ([2], [4, 8, 1], (4, 8, 64),
     ["(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d0, d1, 0)"], (2,)),
    ([0, 2], [8], (8, 4, 64),
     ["(d0, d1, d2) -> (d1, d0, d2)", "(d0, d1, d2) -> (d0)"], (1, 2)),
])
def test_reduce_maps(dims, result, space, maps, reduction):
    op = ReduceOp("sum", value(4, 8, 64), dims, tensor(*result))
    op.verify()
    assert op.get_iteration_space() == space
    assert maps_str(op) == maps
    assert op.reduction_dims() == reduction
    assert op.op_func().name == "sum"
    assert op.keeps_dims() == (len(result) == 3)


@pytest.mark.parametrize("seed", range(6))
def test_reduce_maps_are_numerically_sums(seed):
    rng, np_rng = random.Random(seed), np.random.default_rng(seed)
    shape = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
    dims = sorted(rng.sample(range(len(shape)), rng.randint(1, len(shape))))
    x = rand(np_rng, shape)
    for keep in (False, True):
        expected = np.sum(x, axis=tuple(dims), keepdims=keep)
        op = ReduceOp("sum", value(*shape), dims, tensor(*expected.shape))
        op.verify()
        kept = [d for d in range(len(shape)) if d not in dims]
        assert op.get_iteration_space() == tuple(shape[d] for d in (*kept, *dims))
        assert op.reduction_dims() == tuple(range(len(kept), len(shape)))
        got = execute(op, [x], lambda v: v, lambda acc, v: acc + v, 0.0)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_reduce_max_through_maps():
    np_rng = np.random.default_rng(3)
    x = rand(np_rng, [3, 5, 2])
    op = ReduceOp("max", value(3, 5, 2), [1], tensor(3, 1, 2))
    op.verify()
    func = op.op_func()
    combine = lambda acc, v: float(np.maximum(acc, v))  # noqa: E731
    got = execute(op, [x], lambda v: v, combine, func.identity)
    np.testing.assert_array_equal(got, np.max(x, axis=1, keepdims=True))


# --------------------------------------------------------------------------
# Matmul
# --------------------------------------------------------------------------


def test_batched_matmul_broadcast_batch_maps():
    op = MatmulOp(value(2, 1, 4, 8), value(3, 8, 16), tensor(2, 3, 4, 16))
    op.verify()
    assert op.get_iteration_space() == (2, 3, 4, 16, 8)  # (B0, B1, M, N, K)
    assert maps_str(op) == ["(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)",
                            "(d0, d1, d2, d3, d4) -> (d1, d4, d3)",
                            "(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)"]
    assert op.reduction_dims() == (4,)
    assert op.op_func().name == "batchmatmul"


def test_plain_matmul_maps():
    op = MatmulOp(value(4, 8), value(8, 16), tensor(4, 16))
    op.verify()
    assert op.get_iteration_space() == (4, 16, 8)
    assert maps_str(op) == ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)",
                            "(d0, d1, d2) -> (d0, d1)"]


@pytest.mark.parametrize("seed", range(6))
def test_matmul_maps_are_numerically_matmul(seed):
    rng, np_rng = random.Random(seed), np.random.default_rng(seed)
    batch = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    m, n, k = (rng.randint(1, 4) for _ in range(3))

    def batch_of_operand() -> list[int]:
        lead = batch[rng.randint(0, len(batch)):]
        return [1 if rng.random() < 0.4 else s for s in lead]

    a_shape, b_shape = [*batch_of_operand(), m, k], [*batch_of_operand(), k, n]
    a, b = rand(np_rng, a_shape), rand(np_rng, b_shape)
    expected = np.matmul(a, b)
    op = MatmulOp(value(*a_shape), value(*b_shape), tensor(*expected.shape))
    op.verify()
    assert op.get_iteration_space() == (*expected.shape, k)
    assert op.reduction_dims() == (len(expected.shape),)
    got = execute(op, [a, b], lambda x, y: x * y, lambda acc, v: acc + v, 0.0)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------
# Restickify, explicit maps, block arguments
# --------------------------------------------------------------------------


def laid_out(shape: list[int], order: list[int]) -> TensorType:
    layout = stick_layout(shape, "float16", order)
    return TensorType(f16, shape, LayoutAttr(layout.device_size, order, "SEN169_FP16"))


def test_restickify_is_identity():
    block = Block(arg_types=[laid_out([64, 128], [0, 1])])
    op = RestickifyOp(block.args[0], laid_out([64, 128], [1, 0]))
    op.verify()
    assert op.get_iteration_space() == (64, 128)
    assert maps_str(op) == ["(d0, d1) -> (d0, d1)"] * 2
    assert op.reduction_dims() == ()
    assert op.op_func().name == "ReStickifyOpHBM"
    x = rand(np.random.default_rng(0), [64, 128])
    np.testing.assert_array_equal(execute(op, [x], op.op_func().compute, None, np.nan), x)


def test_explicit_maps_override_the_defaults():
    # A sum over dim 1 of a [4, 6] operand, iterated transposed: (d0, d1) = (col, row).
    op = ReduceOp("sum", value(4, 6), [1], tensor(4))
    transposed = AffineMap.from_callable(lambda d0, d1: (d1, d0))
    rows = AffineMap.from_callable(lambda d0, d1: (d1,))
    set_explicit(op, (6, 4), [transposed, rows])
    op.verify()
    assert op.get_iteration_space() == (6, 4)
    assert op.get_indexing_maps() == (transposed, rows)
    assert op.reduction_dims() == (0,)  # from the explicit result map, not the default (1,)
    x = rand(np.random.default_rng(1), [4, 6])
    got = execute(op, [x], lambda v: v, lambda acc, v: acc + v, 0.0)
    np.testing.assert_allclose(got, x.sum(axis=1), rtol=1e-12)


def test_explicit_maps_on_pointwise_with_block_args():
    block = Block(arg_types=[tensor(4, 6), tensor(6)])
    op = PointwiseOp("mul", list(block.args), tensor(4, 6))
    m_a = AffineMap.from_callable(lambda d0, d1: (d1, d0))
    m_b = AffineMap.from_callable(lambda d0, d1: (d0,))
    set_explicit(op, (6, 4), [m_a, m_b, m_a])
    op.verify()
    assert op.get_indexing_maps() == (m_a, m_b, m_a)
    assert op.reduction_dims() == ()
    np_rng = np.random.default_rng(2)
    a, b = rand(np_rng, [4, 6]), rand(np_rng, [6])
    got = execute(op, [a, b], lambda x, y: x * y, None, np.nan)
    np.testing.assert_array_equal(got, a * b)


def test_explicit_maps_out_of_bounds_are_rejected():
    op = PointwiseOp("neg", [value(4, 6)], tensor(4, 6))
    wrong = AffineMap.from_callable(lambda d0, d1: (d0, d1))
    set_explicit(op, (6, 4), [wrong, wrong])  # d0 reaches 5 in a dim of size 4
    with pytest.raises(VerifyException, match="reaches"):
        op.verify()


def test_iteration_space_needs_indexing_maps():
    op = PointwiseOp("neg", [value(4, 6)], tensor(4, 6))
    op.properties["iteration_space"] = DenseArrayBase.from_list(i64, [4, 6])
    with pytest.raises(VerifyException, match="explicit indexing_maps"):
        op.verify()
