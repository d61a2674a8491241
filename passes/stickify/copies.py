# Step 3 of spyre-stickify: the copies an op's operands need.  Reads the plan
# and each compute op's reads of storage through views; writes `spyre.restickify`
# ops (of a storage to another stick dim or padding, shared by the readers that
# need the same layout; copies of views, with explicit maps) and re-creates the
# view chains readers read them through.
"""Restickifies and view copies (step 3 of :mod:`spyre_mlir.passes.stickify`).

A :class:`Copier` gives an operand that does not fit its op's rule a
``spyre.restickify`` of its storage, or a copy of its view, pads what an op
steps along past a layout's reach, and copies returned views that need padding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.names import dims_attr, result_dim_names
from spyre_mlir.analysis.views import (
    Read,
    copy_reason,
    dim,
    materialise_view,
    op_reads,
    read_through_views,
    shared_hints,
)
from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.dialects.spyre import ComputeOp, RestickifyOp, ViewOp
from spyre_mlir.layout import StickLayout
from spyre_mlir.passes.stickify.drivers import BROADCAST, driven_stick, nested_dims, splits_stick, stick_driver
from spyre_mlir.passes.stickify.plan import (
    Plan,
    followers,
    missing_padding,
    padded_dims,
    value_layout,
    value_shape,
    with_layout,
)


def _inherit_scope(copy: RestickifyOp, storage: SSAValue, reader: ComputeOp) -> None:
    """Give a restickify of a compute result the result's dim names and the hints its producer
    and ``reader`` share (:func:`shared_hints`)."""
    producer = storage.owner
    if not isinstance(producer, ComputeOp) or producer.dims is None:
        return
    copy.dims = dims_attr(result_dim_names(producer, producer.get_dim_names() or ()))
    hints = shared_hints(storage, reader)
    if hints is not None:
        copy.hints = hints


def _after_argument_copies(block: Block) -> InsertPoint:
    """Where a restickify of an argument goes: after those at the start of ``block``, one of
    which it may read (a padded copy of the same argument)."""
    last = None
    op = block.first_op
    while isinstance(op, RestickifyOp):
        last, op = op, op.next_op
    return InsertPoint.at_start(block) if last is None else InsertPoint.after(last)


def untangled(copy: ComputeOp, coord: Linear, tangled: set[int], elems_per_stick: int) -> bool:
    """True when a tensor of ``copy`` can be sticked on coordinate ``coord``: its driver is no
    dim of ``tangled`` that the copy pads to whole sticks (the padding would step into the
    next term of the coordinate it shares), and it splits no stick."""
    driver = stick_driver(coord)
    if driver in (None, BROADCAST):
        return True
    padded = copy.get_iteration_space()[driver] % elems_per_stick != 0
    return not (driver in tangled and padded) and not splits_stick(coord, elems_per_stick)


def untangled_stick(copy: ComputeOp, coords: Sequence[Linear], tangled: set[int],
                    elems_per_stick: int) -> int | None:
    """The dim to stick a tensor of ``copy`` on, read or written at ``coords``, when the one
    its reader needs is tangled (:func:`untangled`, a head of 32 in sticks of 64): the
    innermost one that the copy steps along and that is not (a head's sequence dim).  None
    when there is none (a flattened tensor of less than a stick): the copy keeps its stick
    and the lowering reports the read it cannot describe."""
    space = copy.get_iteration_space()
    others = [j for j, c in enumerate(coords) if (d := stick_driver(c)) not in (None, BROADCAST)
              and space[d] > 1 and untangled(copy, c, tangled, elems_per_stick)]
    return others[-1] if others else None


@dataclass
class Copier:
    """Inserts the restickifies and view copies of step 3, recording them in ``restickifies``."""

    plan: Plan
    rewriter: Rewriter
    restickifies: list[RestickifyOp] = field(default_factory=list)
    """Restickifies and view copies inserted, in order."""
    shared: dict[tuple[SSAValue, StickLayout], SSAValue] = field(default_factory=dict)
    """The restickify of each storage to each layout, shared by its readers."""

    def restickified(self, storage: SSAValue, layout: StickLayout, reader: ComputeOp) -> SSAValue:
        """``storage`` in ``layout``: one restickify right after its definition, shared by all readers.

        It carries the location of the first ``reader`` that needs it.  Settled before it is
        inserted, it reads a padded copy of ``storage`` if it needs one (and then follows it).
        """
        key = (storage, layout)
        if key not in self.shared:
            op = RestickifyOp(storage, with_layout(storage, layout))
            op.location = reader.location
            _inherit_scope(op, storage, reader)
            layout = self.settle_copy(op, layout)
            source = op.inputs[0]
            where = _after_argument_copies(source.block) if isinstance(source, BlockArgument) \
                else InsertPoint.after(source.owner)
            self.rewriter.insert_op(op, where)
            self.restickifies.append(op)
            self.shared[key] = op.result
        return self.shared[key]

    def settle_copy(self, copy: RestickifyOp, layout: StickLayout) -> StickLayout:
        """Fix the layout of a restickify's result: ``layout``, padded where the copy iterates
        padded dims (:meth:`pad`, which also pads its source)."""
        self.plan.layouts[copy.result] = layout
        self.pad(copy)
        settled = self.plan.layouts.pop(copy.result)
        if settled != layout:
            self.rewriter.replace_value_with_new_type(copy.result, with_layout(copy.result, settled))
        self.plan.fix(copy.result, settled)
        return settled

    def reread(self, op: ComputeOp, index: int, read: Read, storage: SSAValue) -> None:
        """Make operand ``index`` read ``storage`` through a copy of its view chain."""
        value = storage
        for view in reversed(read.views):
            clone = ViewOp(value, view.map.data, view.result.type)
            clone.location = view.location
            self.rewriter.insert_op(clone, InsertPoint.before(op))
            value = clone.result
        op.operands[index] = value

    def fix_operand(self, op: ComputeOp, index: int, read: Read, required: int) -> None:
        """Step 3: restickify operand ``index``'s storage, or copy its view, to be driven by ``required``.

        The view is copied when no storage dim follows ``required``, or when spyre-fold-views would
        copy the view of the restickified storage too (:func:`copy_reason`): one copy, not two.
        A copy never reads or writes a stick that one of its dims fills in part while sharing a
        coordinate with another dim (:func:`untangled`: a head of 32 in sticks of 64, read from or
        merged back into the hidden dim): it then reads a restickify of its storage sticked on
        another dim, or writes a tensor sticked on another dim that a second restickify sticks as
        the op needs (:func:`untangled_stick`).
        """
        padded = self.plan.layouts[read.storage].padded_shape
        eps = self.plan.layouts[read.storage].elems_per_stick
        storage_dims, view_dims = followers(self.plan, op, index, read, required)
        operand = op.operands[index]
        why = f"that no stick dim of its storage {list(value_shape(read.storage))} can serve"
        if storage_dims:
            layout = value_layout(read.storage, storage_dims[0], padded)
            refolded = copy_reason(op, index, lambda v: layout if v is read.storage else self.plan.layouts[v]) \
                if view_dims else None
            if refolded is None:
                self.reread(op, index, read, self.restickified(read.storage, layout, op))
                return
            why = refolded  # spyre-fold-views would copy the view of the restickified storage too
        if not read.views or not view_dims:
            raise SpyreError(f"operand #{index} cannot be sticked on iteration dim {required}: no dim of "
                             f"its storage {list(value_shape(read.storage))} follows it", op=op)
        layout = value_layout(operand, view_dims[0])
        emit_warning(f"operand #{index} is a view {why}; it is copied by spyre.restickify", op=op)
        copy = materialise_view(self.rewriter, operand, op)
        _, (source,), written = op_reads(copy)
        tangled = nested_dims([*source.coords, *written])
        stick = self.plan.stick(source.storage)
        if stick is not None and not untangled(copy, source.coords[stick], tangled, eps) \
                and (other := untangled_stick(copy, source.coords, tangled, eps)) is not None:
            self.reread(copy, 0, source, self.restickified(source.storage, value_layout(source.storage, other, padded), op))
        self.restickifies.append(copy)
        if not untangled(copy, written[view_dims[0]], tangled, layout.elems_per_stick) \
                and (other := untangled_stick(copy, written, tangled, layout.elems_per_stick)) is not None:
            self.plan.layouts[copy.result] = value_layout(operand, other)
            op.operands[index] = self.restickified(copy.result, layout, op)  # pads the copy as it reads it
            staged = self.plan.layouts.pop(copy.result)
            self.rewriter.replace_value_with_new_type(copy.result, with_layout(operand, staged))
            self.settle_copy(copy, staged)
            return
        self.rewriter.replace_value_with_new_type(copy.result, with_layout(operand, layout))
        self.settle_copy(copy, layout)
        op.operands[index] = copy.result

    def pad(self, op: ComputeOp) -> None:
        """Give each tensor of :func:`missing_padding` its padded extent.

        A value of the function gets ``padded_shape`` (a returned one too: the kernel
        output is staged with its padding); a fixed one (an argument) is read through a
        padded ``spyre.restickify`` copy.
        """
        for index, read, new in missing_padding(self.plan, op):
            if read.storage not in self.plan.fixed:
                self.plan.layouts[read.storage] = new
            elif index < len(op.inputs):
                self.reread(op, index, read, self.restickified(read.storage, new, op))
            else:
                raise SpyreError(f"the result's layout {list(self.plan.layouts[read.storage].device_size)} "
                                 f"lacks the padding the op iterates (to {list(new.padded_host_shape)})", op=op)

    def copy_view(self, value: SSAValue, before: Operation) -> RestickifyOp:
        """A ``spyre.restickify`` copy of the view ``value``, inserted before ``before``, its layout
        in the plan (not fixed): sticked like the view, on the dim that drives its storage's stick."""
        rank = len(value_shape(value))
        read = read_through_views(value, [dim(i) for i in range(rank)], list(value_shape(value)))
        storage_stick = self.plan.stick(read.storage)
        copy = materialise_view(self.rewriter, value, before, storage_stick)
        self.plan.layouts[copy.result] = value_layout(value, driven_stick(read.coords, storage_stick, rank))
        return copy

    def copy_padded_views(self, op: ComputeOp) -> list[RestickifyOp]:
        """Copy here each view operand that spyre-fold-views would copy (:func:`copy_reason`) and
        that the op pads, and each one that shares a coordinate between a dim the op pads and
        another (``h * 32 + d`` with ``d`` padded to a stick of 64: the padding would read the
        next head): the copy is the tensor the op reads, so it is the one :meth:`pad` pads
        (the view's storage needs nothing).  Returns the copies."""
        _, reads, _ = op_reads(op)
        padded = set(padded_dims(self.plan, op))
        copied = {i for i, read in enumerate(reads) if read.views and nested_dims(read.coords) & padded}
        copied |= {i for i, read, _ in missing_padding(self.plan, op) if i < len(op.inputs) and read.views
                   and copy_reason(op, i, self.plan.layouts.__getitem__) is not None}
        copies = []
        for index in sorted(copied):
            copy = self.copy_view(op.operands[index], op)
            op.operands[index] = copy.result
            self.restickifies.append(copy)
            copies.append(copy)
        return copies

    def materialise_returned(self, ret: func.ReturnOp) -> None:
        """Copy here each returned view whose copy iterates padding its storage lacks, so that the
        storage gets it; spyre-fold-views copies the others.  The copy is the kernel output."""
        for index, value in enumerate(ret.operands):
            if not isinstance(value.owner, ViewOp) or not value_shape(value):
                continue
            copy = self.copy_view(value, ret)
            if not missing_padding(self.plan, copy):
                del self.plan.layouts[copy.result]
                self.rewriter.erase_op(copy)
                continue
            ret.operands[index] = copy.result
            self.settle_copy(copy, self.plan.layouts[copy.result])
            self.restickifies.append(copy)
