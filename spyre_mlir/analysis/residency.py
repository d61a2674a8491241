# LX residency (DESIGN §9): which compute results may live in a core's LX
# scratchpad, by how their writer and readers touch them.  Read by
# spyre-plan-memory (which places them) and spyre-work-division (which prices a
# split by the operands it would find in LX).  Reads compute ops through the
# ComputeOp interface; writes nothing.
"""When a value may live in LX.

A value lives in one core's LX only if every core touches its own part of it
and nothing else: its writer computes it whole on each core (no partial sums of
a split reduction), is no data movement (HBM to HBM), and every reader reads it
element-wise or as a matmul operand (no broadcast, no indirect access, no data
movement) the same box per core as the writer writes it (:func:`spyre_mlir.analysis.work.core_regions`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import OpResult
from xdsl.ir.affine import AffineConstantExpr

from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.opfuncs import OpKind


def may_write_lx(writer: ComputeOp, splits: Sequence[int] | None = None) -> bool:
    """True when ``writer`` under ``splits`` (default: its ``core_splits``) may leave its result in
    LX: it moves no data HBM to HBM and splits no reduction dim."""
    if writer.op_func().kind is OpKind.DATA_MOVEMENT:
        return False
    splits = splits if splits is not None else (writer.get_core_splits() or ())
    return all(splits[d] == 1 for d in writer.reduction_dims() if d < len(splits))


def may_read_lx(reader: ComputeOp, index: int) -> bool:
    """True when ``reader`` may read its operand ``index`` from LX: it moves no data, broadcasts no
    coordinate of it (a matmul's constant coordinate is a batch dim of size 1, which it reads whole
    on each core) and reads it as neither the index nor the table of an indirect access."""
    kind = reader.op_func().kind
    if kind is OpKind.DATA_MOVEMENT:
        return False
    if kind is not OpKind.MATMUL and any(isinstance(e, AffineConstantExpr)
                                         for e in reader.get_indexing_maps()[index].results):
        return False
    indirect = reader.indirect_access()
    return indirect is None or index not in (indirect.index, indirect.table)


def lx_readers(value: OpResult) -> bool:
    """True when ``value`` is read, and only by compute ops of its writer's block that may read it
    from LX (:func:`may_read_lx`): its lifetime lies in one region and no reader needs it in HBM."""
    block = value.op.parent_block()
    uses = list(value.uses)
    return bool(uses) and all(isinstance(u.operation, ComputeOp) and u.operation.parent_block() is block
                              and may_read_lx(u.operation, u.index) for u in uses)
