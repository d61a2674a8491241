# Step 4 of spyre-stickify: the dim just outside the stick of a matmul's operands and
# result.  Reads the plan (every value's stick dim, decided), each matmul's reads of
# storage and its result coordinates; writes the plan's dim orders (no IR).
"""The row dim of a batched matmul's tensors (step 4 of :mod:`spyre_mlir.passes.stickify`).

A layout's dim order puts its first dim at the device position just outside the stick
(:attr:`~spyre_mlir.layout.StickLayout.device_dims`).  By default that is dim 0, which for a
batch of matrices ``[B, M, K]`` is the batch: the array then runs a matmul several times slower
than with the batch outermost (:func:`spyre_mlir.analysis.cost.default_layout_shares`).  A 2-D
matmul has its rows there: ``M`` of its left-hand operand and its result, ``K`` of its
right-hand operand.  So, after every stick dim is chosen, each matmul whose operand holds a
batch of more than one matrix just outside its stick moves that operand's row dim there (dim
order ``[1, 0, 2]`` for ``[B, M, K]``), the other dims keeping their order, where the operand's
layout is this pass's to choose: a value it lays out, or a parameter, buffer or constant it
stages (step 1), and no piece of an assembly, whose pieces share the buffer's layout.  The
result follows once neither operand holds the batch there (its own layout pays off only then,
torch-spyre measured, and a pointwise reader in the default layout can no longer overwrite it
in LX).  A tensor moves with the values a pointwise op writes from it, or into it, element for
element (the softmax whose probabilities are the left-hand operand), so that each op of such a
chain may still overwrite its operand in LX.  The first matmul in program order to reach a
tensor decides it.  Which dim sits there changes no stick and no byte a reader moves: a
pointwise reader reads the tensor as it lies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence

from xdsl.dialects import tensor
from xdsl.ir import Operation, SSAValue

from spyre_mlir.analysis.assembly import assembled_by
from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.views import Dim, atoms, op_reads
from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.layout import StickLayout
from spyre_mlir.opfuncs import OpKind
from spyre_mlir.passes.stickify.drivers import dims_driven_by, stick_driver
from spyre_mlir.passes.stickify.plan import Plan
from spyre_mlir.passes.stickify.rules import matmul_dims


def place_rows(ops: Sequence[Operation], plan: Plan, staged: Collection[SSAValue]) -> None:
    """Move the row dim of every batched matmul's tensors just outside their stick (module
    docstring); ``staged`` are the arguments step 1 laid out, which the plan holds fixed."""
    kin = _elementwise_kin(ops)
    placed: set[SSAValue] = set()

    def place(value: SSAValue, coords: Sequence[Linear], row: int | None, batch: set[int]) -> None:
        if value in placed or not _chosen_here(value, plan, staged):
            return
        layout = plan.layouts[value]
        candidates = [] if row is None else [d for d in dims_driven_by(coords, row) if d != layout.stick_dim]
        for each in kin.get(value, [value]):
            placed.add(each)
            if candidates and _inside(layout, coords, batch) and _chosen_here(each, plan, staged) \
                    and plan.layouts[each].dim_order == layout.dim_order:
                order = (candidates[0], *(d for d in layout.dim_order if d != candidates[0]))
                plan.layouts[each] = dataclasses.replace(plan.layouts[each], dim_order=order)

    for op in ops:
        if not isinstance(op, ComputeOp) or op.op_func().kind is not OpKind.MATMUL:
            continue
        space, reads, result = op_reads(op)
        k, n = matmul_dims(op, result)
        lhs, rhs = (set().union(*map(_dims, read.coords)) for read in reads[:2])
        big = {d for d in range(len(space)) if d not in (k, n) and space[d] > 1}
        m = next((d for c in reversed(result) if (d := stick_driver(c)) in big & lhs - rhs), None)
        batch = big & lhs & rhs
        if not batch:
            continue
        place(reads[0].storage, reads[0].coords, m, batch)
        place(reads[1].storage, reads[1].coords, k, batch)
        if assembled_by(op) is None \
                and not any(_inside(plan.layouts[read.storage], read.coords, batch) for read in reads[:2]):
            place(op.result, result, m, batch)


def _elementwise_kin(ops: Sequence[Operation]) -> dict[SSAValue, list[SSAValue]]:
    """Each value a pointwise op writes or reads element for element (the operand's map its
    result's, no view between) -> every value linked to it so, in program order: a chain that
    takes one dim order, so that each op of it may overwrite its operand in LX."""
    parent: dict[SSAValue, SSAValue] = {}

    def find(value: SSAValue) -> SSAValue:
        while parent.setdefault(value, value) is not value:
            parent[value] = parent[parent[value]]
            value = parent[value]
        return value

    for op in ops:
        if isinstance(op, ComputeOp) and op.op_func().kind is OpKind.POINTWISE:
            maps = op.get_indexing_maps()
            for value, m in zip(op.inputs, maps):
                if m == maps[-1] and value.type.get_shape() == op.result.type.get_shape():
                    parent[find(value)] = find(op.result)
    kin: dict[SSAValue, list[SSAValue]] = {}
    for value in parent:
        kin.setdefault(find(value), []).append(value)
    return {value: kin[find(value)] for value in parent}


def _inside(layout: StickLayout, coords: Sequence[Linear], batch: set[int]) -> bool:
    """Whether a tensor laid out as ``layout`` and read at ``coords`` holds a dim of ``batch`` just
    outside its stick: one that steps that coordinate fastest, as the cost model counts it
    (:func:`spyre_mlir.analysis.cost.batch_inside`)."""
    if not layout.dim_order:
        return False
    coord = coords[layout.dim_order[0]]
    fastest = {atom.pos for atom in coord.fastest_keys() if isinstance(atom, Dim)} or _dims(coord)
    return bool(fastest & batch)


def _dims(coord: Linear) -> set[int]:
    """The iteration dims ``coord`` reads."""
    return {atom.pos for atom in atoms(coord) if isinstance(atom, Dim)}


def _chosen_here(value: SSAValue, plan: Plan, staged: Collection[SSAValue]) -> bool:
    """Whether this pass chooses ``value``'s layout and may still change its dim order."""
    if value not in plan.layouts or isinstance(value.owner, tensor.InsertSliceOp | tensor.EmptyOp):
        return False
    return value not in plan.fixed or value in staged
