# A numpy evaluator of tensor-level spyre IR for tests: executes a func.func of
# spyre compute ops, spyre.fill, scf.for, affine.apply, arith.constant and the
# tensor slice ops, in float64.  Reads IR; writes nothing.  Compute ops run
# through the ComputeOp interface (iteration space, indexing maps, reduction
# dims) and the op-func table's numpy semantics, so a wrong tile offset, map or
# accumulator shows up as a numerical difference.
"""Evaluate tensor-level spyre IR (before or after spyre-coarse-tile) with numpy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import affine, arith, func, scf, tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr

from spyre_mlir.dialects.spyre import ComputeOp, FillOp, PointwiseOp
from spyre_mlir.opfuncs import OpKind


def _coords(expr: AffineExpr, grid: np.ndarray) -> np.ndarray | int:
    if isinstance(expr, AffineDimExpr):
        return grid[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return expr.value
    assert isinstance(expr, AffineBinaryOpExpr), expr
    a, b = _coords(expr.lhs, grid), _coords(expr.rhs, grid)
    kinds = {
        AffineBinaryOpKind.Add: lambda: a + b,
        AffineBinaryOpKind.Mul: lambda: a * b,
        AffineBinaryOpKind.FloorDiv: lambda: a // b,
        AffineBinaryOpKind.Mod: lambda: a % b,
        AffineBinaryOpKind.CeilDiv: lambda: -(-a // b),
    }
    return kinds[expr.kind]()


def _gather(x: np.ndarray, indexing_map, grid: np.ndarray) -> np.ndarray:
    shape = grid.shape[1:]
    index = tuple(np.broadcast_to(_coords(e, grid), shape) for e in indexing_map.results)
    return x[index] if index else np.broadcast_to(x, shape)


def compute(op: ComputeOp, operands: Sequence[np.ndarray]) -> np.ndarray:
    """One compute op over its whole iteration space; unwritten result elements are NaN."""
    space = op.get_iteration_space()
    maps = op.get_indexing_maps()
    grid = np.indices(space)
    inputs = [_gather(x, m, grid) for x, m in zip(operands, maps[:-1])]
    fn = op.op_func()
    reduced = op.reduction_dims()
    if fn.kind is OpKind.POINTWISE:
        assert isinstance(op, PointwiseOp)
        consts = op.const_values()
        tensors = iter(inputs)
        args = [consts[n] if n in consts else next(tensors) for n in fn.inputs]
        value = fn.compute(*args, **{p: consts.get(p, d) for p, d in fn.params.items()})
    elif fn.kind is OpKind.REDUCTION:
        value = fn.compute(inputs[0], axis=reduced)
    elif fn.kind is OpKind.MATMUL:
        value = np.sum(inputs[0] * inputs[1], axis=reduced, keepdims=True)
    else:
        value = inputs[0]
    kept = grid[(slice(None), *(slice(0, 1) if d in reduced else slice(None) for d in range(len(space))))]
    value = np.broadcast_to(value, kept.shape[1:])
    out = np.full(_shape(op.result), np.nan)
    out[tuple(np.broadcast_to(_coords(e, kept), value.shape) for e in maps[-1].results)] = value
    return out


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _slice(op: tensor.ExtractSliceOp | tensor.InsertSliceOp, env: dict) -> tuple[slice, ...]:
    dynamic = iter(env[v] for v in op.offsets)
    offsets = [next(dynamic) if o == tensor.DYNAMIC_INDEX else o for o in op.static_offsets.get_values()]
    return tuple(slice(o, o + s) for o, s in zip(offsets, op.static_sizes.get_values()))


def run_block(block: Block, env: dict) -> list:
    """Execute ``block``; the operands of its terminator (return or yield)."""
    for op in block.ops:
        if isinstance(op, func.ReturnOp | scf.YieldOp):
            return [env[v] for v in op.operands]
        if isinstance(op, ComputeOp):
            env[op.result] = compute(op, [env[v] for v in op.inputs])
        elif isinstance(op, FillOp):
            env[op.result] = np.full(_shape(op.result), op.fill_value())
        elif isinstance(op, arith.ConstantOp):
            env[op.result] = op.value.value.data
        elif isinstance(op, affine.ApplyOp):
            env[op.result] = op.map.data.eval([env[v] for v in op.mapOperands], [])[0]
        elif isinstance(op, tensor.EmptyOp):
            env[op.tensor] = np.full(_shape(op.tensor), np.nan)
        elif isinstance(op, tensor.ExtractSliceOp):
            env[op.result] = env[op.source][_slice(op, env)].copy()
        elif isinstance(op, tensor.InsertSliceOp):
            dest = env[op.dest].copy()
            region = _slice(op, env)
            assert dest[region].shape == env[op.source].shape
            dest[region] = env[op.source]
            env[op.result] = dest
        elif isinstance(op, scf.ForOp):
            carried = [env[v] for v in op.iter_args]
            body = op.body.block
            for i in range(env[op.lb], env[op.ub], env[op.step]):
                env.update(zip(body.args, [i, *carried]))
                carried = run_block(body, env)
            env.update(zip(op.results, carried))
        else:
            raise NotImplementedError(f"tiled_eval: no semantics for '{op.name}'")
    raise AssertionError("block without terminator")


def evaluate(function: func.FuncOp, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The results of ``function`` on ``args`` (float64)."""
    block = function.body.block
    env = {a: np.asarray(x, dtype=np.float64) for a, x in zip(block.args, args, strict=True)}
    return run_block(block, env)
