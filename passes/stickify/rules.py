# The stick rules of spyre-stickify, one per op-func kind (DESIGN §6): which
# result dims may carry an op's stick and which driver each operand needs.
# Reads each compute op through the ComputeOp interface (iteration space,
# reduction dims, op-func kind, indirect access) and the plan of its operands;
# writes no IR.
"""Op stick rules (the module docstring of :mod:`spyre_mlir.passes.stickify`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.views import Read
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, IndirectAccess
from spyre_mlir.opfuncs import OpKind
from spyre_mlir.passes.stickify.drivers import BROADCAST, dims_driven_by, splits_stick, stick_driver
from spyre_mlir.passes.stickify.plan import Plan


@dataclass(frozen=True)
class OpRule:
    """An op's stick rule over its iteration dims (module docstring)."""

    result_dims: tuple[int, ...]
    """Result dims the result may be sticked on."""
    fixed: dict[int, int] = field(default_factory=dict)
    """Required driver per operand index."""
    shared: bool = False
    """Non-broadcast operands must share the result's driver (pointwise)."""

    def required(self, index: int, result_driver: int | None) -> int | None:
        """The driver operand ``index`` needs when the result's is ``result_driver``."""
        if index in self.fixed:
            return self.fixed[index]
        if self.shared and result_driver not in (None, BROADCAST):
            return result_driver
        return None


def matmul_dims(op: ComputeOp, result: Sequence[Linear]) -> tuple[int, int]:
    """``(K, N)`` of a matmul: its reduction dim and the driver of its innermost result coord."""
    reduced = op.reduction_dims()
    n = stick_driver(result[-1])
    if len(reduced) != 1 or n in (None, BROADCAST):
        raise SpyreError(f"matmul needs one reduction dim (K) and an innermost result dim (N), "
                         f"got reduction dims {list(reduced)}", op=op)
    return reduced[0], n


def _dense_driver(op: ComputeOp, read: Read, elems_per_stick: int) -> int | None:
    """The iteration dim a reduction's operand must be restickified onto when it is sparse (one
    element per stick: another stick reduction's result, its stick coordinate a constant or a dim
    of extent 1) or its stick is split along a kept dim (:func:`splits_stick`: a layer norm over
    the channels of merged patches, rows ``4 * h + w`` read from a storage sticked on its 4
    columns; the result would share the split stick with its rows): the one
    driving its innermost kept coordinate, else its innermost reduced one, of more than one
    element and splitting no stick (None: there is none)."""
    space = op.get_iteration_space()
    drivers = [d for c in reversed(read.coords)
               if (d := stick_driver(c)) not in (None, BROADCAST) and space[d] > 1
               and not splits_stick(c, elems_per_stick)]
    kept = [d for d in drivers if d not in op.reduction_dims()]
    return (kept or drivers or [None])[0]


def _reduced_stick(result: Sequence[Linear]) -> tuple[int, ...]:
    """The result dims a reduction over its operand's stick may be sticked on: its kept dims of
    one element (a sparse result), else its innermost."""
    kept = tuple(j for j, c in enumerate(result) if not c.terms)
    return (kept or (len(result) - 1,)) if result else ()


def op_rule(op: ComputeOp, reads: Sequence[Read], result: Sequence[Linear], plan: Plan) -> OpRule:
    """The stick rule of ``op`` given how it reads its (decided) storage."""
    kind = op.op_func().kind
    every = tuple(range(len(result)))
    if kind is OpKind.MATMUL:
        k, n = matmul_dims(op, result)
        return OpRule(tuple(dims_driven_by(result, n)), {0: k, 1: n})
    if kind is OpKind.POINTWISE and (indirect := op.indirect_access()) is not None:
        return _indirect_rule(op, indirect, reads, result, plan)
    if kind is OpKind.POINTWISE:
        return OpRule(every, shared=True)
    if kind is OpKind.REDUCTION:
        driver, layout = plan.driver(reads[0]), plan.layouts[reads[0].storage]
        sparse = driver == BROADCAST or (driver is not None and op.get_iteration_space()[driver] == 1)
        split = driver not in (None, BROADCAST, *op.reduction_dims()) and splits_stick(
            reads[0].coords[layout.stick_dim], layout.elems_per_stick)
        if (sparse or split) and (dense := _dense_driver(op, reads[0], layout.elems_per_stick)) is not None:
            if dense in op.reduction_dims():
                return OpRule(_reduced_stick(result), {0: dense})
            return OpRule(tuple(dims_driven_by(result, dense)) or every, {0: dense})
        if driver in op.reduction_dims():
            return OpRule(_reduced_stick(result))
        if driver not in (None, BROADCAST):
            return OpRule(tuple(dims_driven_by(result, driver)) or every)
    return OpRule(every)


def _indirect_rule(op: ComputeOp, indirect: IndirectAccess, reads: Sequence[Read], result: Sequence[Linear],
                   plan: Plan) -> OpRule:
    """An indirect access: the result is sticked on a data dim of the table, which the table
    shares (never its gathered dim: a row is read as whole sticks); the index is sticked on an
    entry dim that is no data dim (its own, if it is one; else its innermost such)."""
    dims = tuple(j for j, c in enumerate(result) if stick_driver(c) in indirect.data_dims)
    if not dims:
        raise SpyreError("reading a table through an index needs a table dim besides the gathered one "
                         "to carry the stick (a 1-d table has none)", op=op)
    index = reads[indirect.index]
    entries = [d for c in reversed(index.coords)
               if (d := stick_driver(c)) not in (None, BROADCAST) and d not in indirect.data_dims]
    if not entries:
        raise SpyreError("the index of a table read needs a dim of its own (one the table's data does "
                         "not share) to carry the stick", op=op)
    own = plan.driver(index)
    return OpRule(dims, {indirect.index: own if own in entries else entries[0]}, shared=True)
