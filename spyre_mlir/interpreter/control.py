# Control flow of bundle.mlir: compiles the ops a bundle uses (func.return,
# scf.for/yield, arith integer ops, affine.apply with symbols,
# sdscbundle.input_arg_extract) into Python closures once, then runs
# @sdsc_bundle on the argument base addresses and records every sdsc_execute
# with its operand values, in execution order.  Reads the parsed bundle
# function; writes nothing.
"""The execution trace of a bundle function.

xDSL's interpreter would do (with the ``affine.apply`` symbol fix of
XDSL_NOTES §6), but costs ~8 µs per op and wraps every failure with the whole
module.  Here every op becomes one closure over integer slots (one slot per SSA
value, assigned at compile time), affine maps become closures once, and index
arithmetic runs on Python integers (no overflow)::

    program = compile_bundle(function)      # once per loaded directory
    trace = program.trace([base_0, base_1])  # once per run
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
    """One per operand, in the order of the op's ``symbol_ids``."""


Env = list[int]
"""The value of every SSA value of the function, by slot."""
Step = Callable[[Env, list[Execution]], None]
"""One compiled op: reads and writes slots, appends ``sdsc_execute`` runs to the trace."""


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


def _compile_expr(expr: AffineExpr, dims: Sequence[int], syms: Sequence[int]) -> Callable[[Env], int]:
    """``expr`` as a closure over the slots of its dims and symbols."""
    if isinstance(expr, AffineConstantExpr):
        value = expr.value
        return lambda env: value
    if isinstance(expr, AffineDimExpr):
        slot = dims[expr.position]
        return lambda env: env[slot]
    if isinstance(expr, AffineSymExpr):
        slot = syms[expr.position]
        return lambda env: env[slot]
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs, rhs = _compile_expr(expr.lhs, dims, syms), _compile_expr(expr.rhs, dims, syms)
    match expr.kind:
        case AffineBinaryOpKind.Add:
            return lambda env: lhs(env) + rhs(env)
        case AffineBinaryOpKind.Mul:
            return lambda env: lhs(env) * rhs(env)
        case AffineBinaryOpKind.Mod:
            return lambda env: lhs(env) % rhs(env)
        case AffineBinaryOpKind.FloorDiv:
            return lambda env: lhs(env) // rhs(env)
        case AffineBinaryOpKind.CeilDiv:
            return lambda env: -(-lhs(env) // rhs(env))


def _compile_map(op: affine.ApplyOp, operands: Sequence[int]) -> Callable[[Env], int]:
    amap: AffineMap = op.map.data
    if len(amap.results) != 1:
        raise SpyreError(f"affine.apply needs a single-result map, got {amap}", op=op)
    return _compile_expr(amap.results[0], operands[:amap.num_dims], operands[amap.num_dims:])


class _Compiler:
    """Turns blocks into lists of :data:`Step` closures over integer slots."""

    def __init__(self) -> None:
        self.slots: dict[SSAValue, int] = {}

    def slot(self, value: SSAValue) -> int:
        return self.slots.setdefault(value, len(self.slots))

    def block(self, block: Block) -> tuple[list[Step], tuple[int, ...]]:
        """The steps of ``block`` and the slots its terminator yields or returns."""
        steps = []
        for op in block.ops:
            if isinstance(op, (scf.YieldOp, func.ReturnOp)):
                return steps, tuple(self.slot(v) for v in op.operands)
            steps.append(self.op(op))
        return steps, ()

    def op(self, op: Operation) -> Step:
        args = [self.slot(v) for v in op.operands]
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return _constant(self.slot(op.result), op.value.value.data)
        if type(op) in _BINARY:
            return _binary(op, self.slot(op.results[0]), *args)
        if isinstance(op, (arith.IndexCastOp, InputArgExtractOp)):
            return _copy(self.slot(op.results[0]), args[0])
        if isinstance(op, affine.ApplyOp):
            return _apply(self.slot(op.result), _compile_map(op, args))
        if isinstance(op, SdscExecuteOp):
            return _execute(op, args)
        if isinstance(op, scf.ForOp):
            return self.loop(op, args)
        raise SpyreError(f"the interpreter does not execute '{op.name}' in a bundle", op=op)

    def loop(self, op: scf.ForOp, args: list[int]) -> Step:
        lb, ub, step, *inits = args
        body = op.body.block
        iv, *carried = (self.slot(a) for a in body.args)
        results = [self.slot(r) for r in op.results]
        steps, yielded = self.block(body)

        def run(env: Env, trace: list[Execution]) -> None:
            if env[step] <= 0:
                raise SpyreError(f"scf.for step must be positive, got {env[step]}", op=op)
            values = [env[s] for s in inits]
            for i in range(env[lb], env[ub], env[step]):
                env[iv] = i
                for s, v in zip(carried, values):
                    env[s] = v
                for body_step in steps:
                    body_step(env, trace)
                values = [env[s] for s in yielded]
            for s, v in zip(results, values):
                env[s] = v

        return run


def _constant(result: int, value: int) -> Step:
    def run(env: Env, trace: list[Execution]) -> None:
        env[result] = value
    return run


def _copy(result: int, source: int) -> Step:
    def run(env: Env, trace: list[Execution]) -> None:
        env[result] = env[source]
    return run


def _binary(op: Operation, result: int, lhs: int, rhs: int) -> Step:
    fn, divides = _BINARY[type(op)], isinstance(op, _DIVISIONS)

    def run(env: Env, trace: list[Execution]) -> None:
        if divides and env[rhs] == 0:
            raise SpyreError(f"'{op.name}' divides by zero", op=op)
        env[result] = fn(env[lhs], env[rhs])
    return run


def _apply(result: int, expr: Callable[[Env], int]) -> Step:
    def run(env: Env, trace: list[Execution]) -> None:
        env[result] = expr(env)
    return run


def _execute(op: SdscExecuteOp, operands: list[int]) -> Step:
    def run(env: Env, trace: list[Execution]) -> None:
        trace.append(Execution(op, tuple(env[s] for s in operands)))
    return run


@dataclass(frozen=True)
class BundleProgram:
    """A bundle function compiled to closures; :meth:`trace` runs it."""

    arguments: tuple[int, ...]
    """The slots of the function's arguments."""
    steps: tuple[Step, ...]
    slots: int
    """Number of SSA values."""

    def trace(self, arguments: Sequence[int]) -> list[Execution]:
        """Run the function on ``arguments``; its ``sdsc_execute`` runs in order."""
        env: Env = [0] * self.slots
        for slot, value in zip(self.arguments, arguments):
            env[slot] = value
        trace: list[Execution] = []
        for step in self.steps:
            step(env, trace)
        return trace


def compile_bundle(function: func.FuncOp) -> BundleProgram:
    """Compile ``function``'s body; an op the interpreter does not execute is a :class:`SpyreError`."""
    compiler = _Compiler()
    body = function.body.block
    arguments = tuple(compiler.slot(a) for a in body.args)
    steps, _ = compiler.block(body)
    return BundleProgram(arguments, tuple(steps), len(compiler.slots))
