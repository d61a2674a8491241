# scf.for loops (DESIGN §7): which init, body argument and loop result carry one
# value through a loop, and how often the loops around an op run.  Read by
# spyre-lower-to-bundle, the storage trace and spyre-work-division; reads the
# IR, writes nothing.
"""The init -> body argument -> result chain of an ``scf.for``'s ``iter_args``, and trip counts."""

from __future__ import annotations

import math

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue, Use

_CONTROL_OPERANDS = 3
"""``lb``, ``ub`` and ``step``: the operands of an ``scf.for`` before its inits."""


def carried_result(use: Use) -> OpResult | None:
    """The loop result that the init ``use`` ends in, None when ``use`` is not an ``scf.for`` init."""
    loop = use.operation
    if not isinstance(loop, scf.ForOp) or use.index < _CONTROL_OPERANDS:
        return None
    return loop.results[use.index - _CONTROL_OPERANDS]


def carried_argument(use: Use) -> BlockArgument | None:
    """The body argument of the ``scf.for`` that the yielded ``use`` carries into the next
    iteration, None when ``use`` is not an operand of an ``scf.for``'s ``scf.yield``."""
    loop = use.operation.parent_op()
    if not isinstance(use.operation, scf.YieldOp) or not isinstance(loop, scf.ForOp):
        return None
    return loop.body.block.args[use.index + 1]


def carried_init(value: SSAValue) -> SSAValue | None:
    """The init of ``value`` when it is a loop-carried body argument or a result of an ``scf.for``
    (None otherwise, the induction variable included)."""
    if isinstance(value, BlockArgument) and isinstance(value.owner, Block):
        loop = value.owner.parent_op()
        if isinstance(loop, scf.ForOp) and value.index > 0:
            return loop.iter_args[value.index - 1]
        return None
    if isinstance(value, OpResult) and isinstance(value.op, scf.ForOp):
        return value.op.iter_args[value.index]
    return None


def constant_index(v: SSAValue) -> int | None:
    """The value of an ``arith.constant`` index, None for any other value."""
    owner = v.owner
    return owner.value.value.data if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr) \
        else None


def iterations(op: Operation) -> int:
    """How often ``op`` runs: the trip counts of the ``scf.for`` loops around it multiplied (a
    loop whose bounds are not constants counts once)."""
    counts = []
    loop = op.parent_op()
    while loop is not None:
        if isinstance(loop, scf.ForOp):
            lb, ub, step = (constant_index(v) for v in (loop.lb, loop.ub, loop.step))
            if None not in (lb, ub, step) and step > 0:
                counts.append(max(0, -(-(ub - lb) // step)))
        loop = loop.parent_op()
    return math.prod(counts)
