# Control flow of bundle.mlir: a small executor for the ops a bundle uses
# (func.return, scf.for/yield, arith integer ops, affine.apply with symbols,
# sdscbundle.input_arg_extract) that runs @sdsc_bundle on the argument base
# addresses and records every sdsc_execute with its operand values, in
# execution order.  Reads the parsed bundle function; writes nothing.
"""The execution trace of a bundle function.

xDSL's interpreter would do (with the ``affine.apply`` symbol fix of
XDSL_NOTES §6), but costs ~8 µs per op and wraps every failure with the whole
module; this executor compiles affine maps to closures once and runs index
arithmetic on Python integers (no overflow).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import affine, arith, func, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr, \
    AffineMap, AffineSymExpr

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.sdscbundle import InputArgExtractOp, SdscExecuteOp


@dataclass(frozen=True)
class Execution:
    """One run of an ``sdsc_execute``: the op and its operand values."""

    op: SdscExecuteOp
    values: tuple[int, ...]

    @property
    def bindings(self) -> dict[int, int]:
        """Symbol id -> value."""
        return dict(zip(self.op.get_symbol_ids(), self.values))


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_BINARY: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivSIOp: _trunc_div,
    arith.DivUIOp: lambda a, b: a // b,
    arith.FloorDivSIOp: lambda a, b: a // b,
    arith.CeilDivSIOp: lambda a, b: -(-a // b),
    arith.CeilDivUIOp: lambda a, b: -(-a // b),
    arith.RemSIOp: lambda a, b: a - b * _trunc_div(a, b),
    arith.RemUIOp: lambda a, b: a % b,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
    arith.MinUIOp: min,
    arith.MaxUIOp: max,
}
_DIVISIONS = (arith.DivSIOp, arith.DivUIOp, arith.FloorDivSIOp, arith.CeilDivSIOp, arith.CeilDivUIOp,
              arith.RemSIOp, arith.RemUIOp)


def _compile_expr(expr: AffineExpr) -> Callable[[Sequence[int], Sequence[int]], int]:
    if isinstance(expr, AffineConstantExpr):
        value = expr.value
        return lambda d, s: value
    if isinstance(expr, AffineDimExpr):
        pos = expr.position
        return lambda d, s: d[pos]
    if isinstance(expr, AffineSymExpr):
        pos = expr.position
        return lambda d, s: s[pos]
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs, rhs = _compile_expr(expr.lhs), _compile_expr(expr.rhs)
    match expr.kind:
        case AffineBinaryOpKind.Add:
            return lambda d, s: lhs(d, s) + rhs(d, s)
        case AffineBinaryOpKind.Mul:
            return lambda d, s: lhs(d, s) * rhs(d, s)
        case AffineBinaryOpKind.Mod:
            return lambda d, s: lhs(d, s) % rhs(d, s)
        case AffineBinaryOpKind.FloorDiv:
            return lambda d, s: lhs(d, s) // rhs(d, s)
        case AffineBinaryOpKind.CeilDiv:
            return lambda d, s: -(-lhs(d, s) // rhs(d, s))


def _compile_map(amap: AffineMap) -> Callable[[Sequence[int]], int]:
    if len(amap.results) != 1:
        raise SpyreError(f"affine.apply needs a single-result map, got {amap}")
    expr, dims = _compile_expr(amap.results[0]), amap.num_dims
    return lambda args: expr(args[:dims], args[dims:])


class _Tracer:
    """Runs a bundle function's body on integers, recording ``sdsc_execute`` runs."""

    def __init__(self) -> None:
        self.trace: list[Execution] = []
        self.maps: dict[affine.ApplyOp, Callable[[Sequence[int]], int]] = {}

    def block(self, block: Block, env: dict[SSAValue, int]) -> tuple[int, ...]:
        """Run ``block``; the values its terminator yields or returns."""
        for op in block.ops:
            if isinstance(op, (scf.YieldOp, func.ReturnOp)):
                return tuple(env[v] for v in op.operands)
            self.op(op, env)
        return ()

    def op(self, op: Operation, env: dict[SSAValue, int]) -> None:
        args = [env[v] for v in op.operands]
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            env[op.result] = op.value.value.data
        elif type(op) in _BINARY:
            if isinstance(op, _DIVISIONS) and args[1] == 0:
                raise SpyreError(f"'{op.name}' divides by zero", op=op)
            env[op.results[0]] = _BINARY[type(op)](*args)
        elif isinstance(op, arith.IndexCastOp):
            env[op.result] = args[0]
        elif isinstance(op, affine.ApplyOp):
            if op not in self.maps:  # ops hash by identity; maps would hash their whole expression
                self.maps[op] = _compile_map(op.map.data)
            env[op.result] = self.maps[op](args)
        elif isinstance(op, InputArgExtractOp):
            env[op.result] = args[0]
        elif isinstance(op, SdscExecuteOp):
            self.trace.append(Execution(op, tuple(args)))
        elif isinstance(op, scf.ForOp):
            self.loop(op, args, env)
        else:
            raise SpyreError(f"the interpreter does not execute '{op.name}' in a bundle", op=op)

    def loop(self, op: scf.ForOp, args: list[int], env: dict[SSAValue, int]) -> None:
        lb, ub, step, *carried = args
        if step <= 0:
            raise SpyreError(f"scf.for step must be positive, got {step}", op=op)
        body = op.body.block
        for iv in range(lb, ub, step):
            env[body.args[0]] = iv
            for arg, value in zip(body.args[1:], carried):
                env[arg] = value
            carried = list(self.block(body, env))
        for result, value in zip(op.results, carried):
            env[result] = value


def trace_bundle(function: func.FuncOp, arguments: Sequence[int]) -> list[Execution]:
    """Run ``function`` on ``arguments`` and return its ``sdsc_execute`` runs in order."""
    tracer = _Tracer()
    body = function.body.block
    tracer.block(body, dict(zip(body.args, arguments)))
    return tracer.trace
