# spyre-stickify (DESIGN §4 stage 2, §6): chooses the stick dim of every
# materialised tensor and writes it as a #spyre.layout type encoding.
# Reads: shapes and element types, each compute op's iteration space, indexing
#   maps and op-func kind (through the ComputeOp interface), spyre.view chains,
#   layouts already present (function arguments staged otherwise, a previous run),
#   assemblies (spyre_mlir.analysis.assembly: a tensor.empty filled by tensor.insert_slice
#   of compute results, the importer's torch.cat).
# Writes: `#spyre.layout` on every tensor type (block arguments, op results,
#   views, the func signature); `spyre.restickify` where a stored value must
#   change stick dim or be padded (a matmul B operand's K, rows read past their
#   extent by a padded iteration dim); `spyre.restickify` copies (explicit maps)
#   of views no stick choice can make readable (heads narrower than a stick
#   among them) and of views that need padding spyre-fold-views would copy
#   (spyre-stage-layouts then stages parameters in their restickify's layout).
# The pass and its driver are here; beside them: drivers.py (stick drivers of
#   coordinates, what fits), nests.py (dims read at a row-major nest of
#   iteration dims, unflattened), plan.py (the layout decided per value and
#   what follows from it: padding, followers), rules.py (op stick rules),
#   choice.py (step 2: choosing a value's stick dim), copies.py (step 3:
#   restickifies and view copies of operands, padding).
"""Stick-dim selection and restickify insertion.

Model.  Materialised values (function arguments, compute-op and fill results,
restickify results) have storage with a real layout; a view result is a read
pattern over its source's storage.  For every compute op the pass follows each
operand's view chain back to the storage (composing the maps, as
``spyre-fold-views`` will) and looks at the coordinate of the storage's stick
dim: the iteration dim that *drives* it (coefficient 1, possibly under
``mod c``) decides whether the read fits the op's rule, a constant coordinate
is a broadcast and fits, unless the required driver steps another coordinate
of the read (a stick reduction's sparse result read densely: ``fits``).  A
driver that steps inside sticks it shares with another dim fits nothing
(``splits_stick``): a head of 32 fp16 elements of a [L, 128] projection sticked
on its hidden dim, read at ``h * 32 + d``, or heads merged back into it (``k mod
32``); no layout label describes half a stick per head.

Op rules (by op-func kind, DESIGN §6):

* pointwise: every non-broadcast operand's stick coordinate is driven by the
  same iteration dim as the result's, and, where another result dim allows it,
  not at an offset inside a stick nor inside sticks shared with another dim
  (``x[..., 32:]`` of 64 fp16 columns, a head narrower than a stick: no op
  reads that in place and a copy of it would start mid-stick, so the op is
  driven by another dim and the operand's storage restickified onto it);
* matmul ``C[m, n] = A[m, k] @ B[k, n]``: A driven by K (the reduction dim), B
  and C by N (the dim of C's innermost coordinate); when K is not a whole
  number of sticks, B's K dim is padded to whole sticks (``padded_shape``; a
  padding nobody writes is zeroed, see spyre-plan-memory's ``zeroed``
  placement; where either operand's may hold data, spyre-mask-contractions has
  zeroed the other's), which is the padding rule of step 3 applied to K;
* reduction: no constraint on a dense operand (a sparse one, a stick
  reduction's result, is restickified onto a dim it iterates, a kept one if it
  has one; so is one whose stick its read splits, ``splits_stick``: the rows
  ``4 * h + w`` of merged patches sticked on their 4 columns); the result keeps the operand's stick driver (non-stick reduction),
  or, when the stick dim is reduced, is sticked on the kept size-1 dim (a
  sparse output: one element per stick, the back end's form of a reduction
  over the stick).  A reduction over the stick without keepdim is rewritten to
  keep its reduced dims (size 1), read through a ``spyre.view`` that drops
  them, so that its result is sparse too;
* data movement (restickify): none; its result layout is given;
* a table read through an index (DESIGN §15): the result is sticked on a data
  dim of the table, which the table shares (its gathered dim, addressed a row at
  a time, never carries the stick); the int32 index is sticked on an entry dim
  of its own (one the table's data does not share), 32 entries per stick, so
  step 3 pads the result's entry dim to whole sticks of indices.

Decisions, greedily in program order:

1. Function arguments keep the layout of their type: the default (identity
   dim order) unless a ``#spyre.layout`` is already there (staged otherwise).
   An argument the runtime stages without a layout (a parameter, buffer or
   constant, or a buffer a result updates in place) is sticked as the readers
   of its values want, among the dims its indirect accesses allow
   (``staged.py``: a key cache on its positions, read and written in blocks; a
   weight two readers want sticked off its innermost dim).
   A restickify this pass gives an argument is a copy on every run;
   ``spyre-stage-layouts`` then stages a parameter in its layout instead.
   Any value whose type already has a layout is fixed, which makes the pass
   idempotent.
2. For each other materialised value the pass picks, among the result dims the
   op rule allows, the stick dim whose restickifies copy the fewest bytes:
   those its own operands would need plus those its known readers would need
   (matmul operand rules; a pointwise reader whose other operands are already
   decided, or else what that reader's own readers need of its result, two
   readers deep; a piece's copy, the innermost dim its assembly's buffer may
   be sticked on).
   Ties go to the innermost dim, then to the lowest.  An assembly's buffer,
   its values and its pieces' copies get one stick dim (at the
   ``tensor.empty``), among the dims along which every piece starts at a whole
   number of sticks: the fewest bytes restickified for the copies' operands
   and the readers, ties to the innermost; readers' padding of the assembled value
   is the buffer's.
3. An operand that does not fit gets a ``spyre.restickify`` of its storage to a
   layout sticked on a storage dim with the required driver, placed right after
   the storage's definition and shared by every reader that needs the same
   layout; the operand's view chain is re-created on the restickified value.
   A storage dim the view reads at a row-major nest whose innermost term has
   the driver (the rows ``b * 100 + l`` of a [B * L, H * D] projection read
   as [B, H, L, D]: the padding of ``l`` to whole sticks would reach the next
   batch) is unflattened first: a copy of the storage that keeps its stick
   and has one dim per term, restickified onto the innermost one, which is
   padded per value of the outer ones (``nests.py``).
   When no storage dim has that driver (a view that mixes dims across the
   stick), or spyre-fold-views would copy the view of the restickified storage
   anyway (a dim read through a division), the view itself is copied once
   (``spyre.restickify`` with explicit maps) into a tensor of the view's shape
   sticked as the op needs.  A copy whose
   stick would be driven by a dim it pads to whole sticks and that shares a
   coordinate with another (``h * 32 + d``: the padding would reach the next
   head) reads instead a restickify of its storage sticked on another dim (the
   sequence dim), or of its storage unflattened along a nest (batched rows),
   or, for a sequence of one token, sticked on a dim of one element (one
   element per stick); and it writes a tensor sticked on another dim (one of
   one element if need be) that a second restickify sticks as the op needs.
   A restickify
   of a compute result takes its dim names and the hints its producer and
   reader share, so spyre-coarse-tile tiles it with their group.
   Then each tensor of the op that steps along an iteration dim the op pads
   to whole sticks (one that drives a tensor's stick; the widest stick wins)
   further than its layout reaches gets that padded extent (``pad``), off its
   stick or on it (an fp32 tensor beside fp16 ones): ``padded_shape`` on a
   value of the function (a returned one included: the kernel output carries
   the padding), a padded restickify copy of an argument.  A view operand
   that needs such padding and that spyre-fold-views would copy, or that
   shares a coordinate between a padded dim and another (the heads of
   ``h * 32 + d`` read off the stick), is copied here, so that the copy gets
   the padding (its storage needs none); returned
   views whose copy needs padding are copied here too.  Copies are sticked
   like the view.
4. The operands of a batched matmul that hold a batch of more than one matrix
   just outside their stick (the first dim of the dim order, dim 0 by default)
   put their row dim there instead: ``M`` of the left-hand
   operand and the result, ``K`` of the right-hand one (``rows.py``: the array
   runs a batch of matrices several times faster so), where this pass lays the
   tensor out or stages it, and it is no piece of an assembly; the result once
   neither operand holds the batch there; each with the pointwise chain that
   writes it element for element.
5. Every tensor type gets its ``#spyre.layout``: the stick dim last in
   ``dim_order``, the other dims in order but for step 4's row dim; a view
   result is sticked on the view dim that drives its source's stick coordinate
   (innermost dim otherwise), with the view dim that drives its storage's row
   dim first when step 4 moved it.
   The func signature follows its arguments and returned values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, tensor
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.analysis.assembly import Assembly, assemblies, assembly_of
from spyre_mlir.analysis.names import dims_attr, result_dim_names
from spyre_mlir.analysis.views import Read, op_reads
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import (
    ComputeOp,
    FillOp,
    LayoutAttr,
    ReduceOp,
    RestickifyOp,
    ViewOp,
    tensor_layout,
)
from spyre_mlir.layout import StickLayout
from spyre_mlir.passes.stickify.choice import Chooser
from spyre_mlir.passes.stickify.copies import Copier
from spyre_mlir.passes.stickify.drivers import BROADCAST, dim_order, stick_driver
from spyre_mlir.passes.stickify.plan import (
    Plan,
    check_storage,
    value_layout,
    value_shape,
    view_layout,
    whole_stick_dims,
    with_layout,
)
from spyre_mlir.passes.stickify.rows import place_rows
from spyre_mlir.passes.stickify.rules import op_rule
from spyre_mlir.passes.stickify.staged import staged_arguments, staged_stick

__all__ = ["BROADCAST", "StickifyPass", "StickifyResult", "dim_order", "stick_driver", "stickify"]


@dataclass
class StickifyResult:
    """What :func:`stickify` did."""

    layouts: dict[SSAValue, StickLayout]
    """The layout chosen for each materialised value (before types were rewritten)."""
    restickifies: list[RestickifyOp]
    """Restickifies and view copies inserted."""


@dataclass
class _Stickifier:
    """The greedy pass over one module (module docstring, steps 1-5)."""

    rewriter: Rewriter = field(default_factory=Rewriter)
    plan: Plan = field(default_factory=Plan)
    readers: dict[SSAValue, list[tuple[ComputeOp, int]]] = field(default_factory=dict)
    chooser: Chooser = field(init=False)
    staged: set[SSAValue] = field(default_factory=set)
    """The parameters, buffers and constants step 1 laid out (not updated in place)."""
    copier: Copier = field(init=False)

    def __post_init__(self) -> None:
        self.chooser = Chooser(self.plan, self.readers)
        self.copier = Copier(self.plan, self.rewriter)

    # 1. Fixed layouts and readers.
    def seed(self, module: ModuleOp) -> None:
        for op in module.walk():
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.args:
                        if isinstance(arg.type, TensorType):
                            self.plan.fix(arg, tensor_layout(arg.type))
            for res in op.results:
                if isinstance(res.type, TensorType) and isinstance(res.type.encoding, LayoutAttr) \
                        and not isinstance(op, ViewOp):
                    self.plan.fix(res, tensor_layout(res.type))
            if isinstance(op, ComputeOp):
                _, reads, _ = op_reads(op)
                for i, read in enumerate(reads):
                    check_storage(op, i, read.storage)
                    self.readers.setdefault(read.storage, []).append((op, i))
        for body in module.walk():
            if isinstance(body, func.FuncOp) and body.body.blocks:
                for arg, values in staged_arguments(body).items():
                    self.plan.fix(arg, value_layout(arg, staged_stick(values, self.chooser)))
                    if values == [arg]:
                        self.staged.add(arg)

    def drops_reduced_stick(self, op: ReduceOp, reads: Sequence[Read]) -> bool:
        """True when ``op`` reduces its operand's stick and its result, still to be decided,
        drops the reduced dims but not all: no dim is left to be sparse on (a rank-0 result is
        one stick, sparse already)."""
        return bool(value_shape(op.result)) and not op.keeps_dims() and not op.has_explicit_maps() \
            and op.result not in self.plan.fixed and self.plan.driver(reads[0]) in op.reduction_dims()

    def keep_reduced_dims(self, op: ReduceOp) -> ReduceOp:
        """Replace ``op`` by the same reduction keeping its reduced dims (size 1), read through a
        ``spyre.view`` that drops them; the new reduction inherits the dim names and hints."""
        assert isinstance(op.result.type, TensorType)
        source, reduced = value_shape(op.inputs[0]), op.get_reduce_dims()
        keep = [1 if d in reduced else n for d, n in enumerate(source)]
        kept = ReduceOp(op.op_func_name.data, op.inputs[0], reduced,
                        TensorType(op.result.type.get_element_type(), keep))
        kept.properties.update({k: v for k, v in op.properties.items() if k not in kept.properties})
        kept.location = op.location
        self.rewriter.insert_op(kept, InsertPoint.before(op))
        positions = [d for d in range(len(source)) if d not in reduced]
        squeeze = ViewOp(kept.result, AffineMap(len(positions), 0, tuple(
            AffineDimExpr(positions.index(d)) if d in positions else AffineConstantExpr(0)
            for d in range(len(source)))), op.result.type)
        if op.dims is not None:
            squeeze.properties["dims"] = dims_attr(result_dim_names(op, op.get_dim_names() or ()))
        squeeze.location = op.location
        self.rewriter.insert_op(squeeze, InsertPoint.before(op))
        op.result.replace_all_uses_with(squeeze.result)
        self.readers[kept.result] = self.readers.pop(op.result, [])
        for entries in self.readers.values():
            entries[:] = [(kept if reader is op else reader, index) for reader, index in entries]
        self.rewriter.erase_op(op)
        return kept

    def assemble(self, assembly: Assembly) -> None:
        """Step 2 for an assembly: one stick dim for its buffer, its values and its pieces' copies.

        A piece's offset along the stick dim must be a whole number of sticks (its copy writes
        whole sticks); among the dims where all are, the one with the fewest bytes restickified for
        the copies' operands and the readers wins."""
        full = assembly.empty.tensor
        shape = value_shape(full)
        candidates = whole_stick_dims(assembly)
        for copy in assembly.copies:
            space, reads, result = op_reads(copy)
            candidates = list(self.chooser.aligned(candidates, reads, result, space))
        if not candidates:
            eps = value_layout(full, len(shape) - 1).elems_per_stick
            raise SpyreError(f"the pieces of a tensor of shape {list(shape)} start at offsets "
                             f"{[list(o) for o in assembly.offsets()]}: no dim has them all at whole sticks of "
                             f"{eps} elements, so no stick dim can hold them", op=assembly.inserts[0])

        demands = self.chooser.reader_demands(assembly.value)

        def cost(stick: int) -> float:
            return sum(self.chooser.copy_bytes(copy, stick) for copy in assembly.copies) + \
                self.chooser.demand_bytes(assembly.value, stick, demands)

        if full in self.plan.fixed:
            stick = self.chooser.choose(assembly.empty, full, candidates, cost)
        else:  # ties go to the dim padded least, then to the innermost
            stick = min(reversed(candidates), key=lambda s: (cost(s), value_layout(full, s).nbytes))
        for value in assembly.values:
            if value not in self.plan.fixed:
                self.plan.layouts[value] = value_layout(value, stick)
        for copy in assembly.copies:
            if copy.result not in self.plan.fixed:
                self.plan.fix(copy.result, value_layout(copy.result, stick))

    def settle_assemblies(self, module: ModuleOp) -> None:
        """Give every value of an assembly's buffer the layout its readers settled on its last value
        (padded by :meth:`Copier.pad` where a reader iterates past its extent)."""
        for body in module.walk():
            if isinstance(body, func.FuncOp) and body.body.blocks:
                for assembly in assemblies(body):
                    for value in assembly.values:
                        if value not in self.plan.fixed:
                            self.plan.layouts[value] = self.plan.layouts[assembly.value]

    def visit(self, op: Operation) -> None:
        """Step 2 and 3 for one op."""
        if isinstance(op, func.ReturnOp):
            self.copier.materialise_returned(op)
            return
        if isinstance(op, tensor.EmptyOp):
            assembly = assembly_of(op)
            if assembly is not None:
                self.assemble(assembly)
            return
        if isinstance(op, FillOp):
            rank = len(value_shape(op.result))
            stick = self.chooser.choose(op, op.result, range(rank), lambda s: 0)
            if op.result not in self.plan.fixed:
                self.plan.layouts[op.result] = value_layout(op.result, stick)
            return
        if not isinstance(op, ComputeOp):
            return
        space, reads, result = op_reads(op)
        if isinstance(op, ReduceOp) and self.drops_reduced_stick(op, reads):
            op = self.keep_reduced_dims(op)
            space, reads, result = op_reads(op)
        rule = op_rule(op, reads, result, self.plan)
        if (indirect := op.indirect_access()) is not None and indirect.stores:
            # A row store's result is its destination, in the destination's storage and layout.
            self.plan.fix(op.result, self.plan.layouts[reads[indirect.table].storage])
        if rule.shared and op.result not in self.plan.fixed:
            rule = dataclasses.replace(rule, result_dims=self.chooser.aligned(rule.result_dims, reads, result, space))

        def cost(stick: int) -> float:
            return self.chooser.operand_bytes(op, rule, reads, stick_driver(result[stick]))

        stick = self.chooser.choose(op, op.result, rule.result_dims, cost)
        if op.result not in self.plan.fixed:
            self.plan.layouts[op.result] = value_layout(op.result, stick)
        result_driver = None if stick is None else stick_driver(result[stick])
        for index, required in self.chooser.operand_misses(rule, reads, result_driver):
            self.copier.fix_operand(op, index, reads[index], required)
        copies = self.copier.copy_padded_views(op)
        self.copier.pad(op)
        for copy in copies:
            self.copier.pad(copy)

    # 5. Writing the types.
    def write_types(self, module: ModuleOp) -> None:
        for value, layout in list(self.plan.layouts.items()):
            if value not in self.plan.fixed or not isinstance(value.type.encoding, LayoutAttr):
                self.rewriter.replace_value_with_new_type(value, with_layout(value, layout))
        for view in [op for op in module.walk() if isinstance(op, ViewOp)]:
            self.rewriter.replace_value_with_new_type(view.result, with_layout(view.result, view_layout(view)))
        for f in module.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                ret = f.body.blocks[-1].last_op
                outputs = ret.operand_types if isinstance(ret, func.ReturnOp) else f.function_type.outputs.data
                f.function_type = FunctionType.from_lists(f.body.blocks[0].arg_types, outputs)


def _erase_dead_views(module: ModuleOp, rewriter: Rewriter) -> None:
    for view in reversed([op for op in module.walk() if isinstance(op, ViewOp)]):
        if not view.result.uses:
            rewriter.erase_op(view)


def stickify(module: ModuleOp) -> StickifyResult:
    """Choose and write the layout of every tensor in ``module`` (module docstring, steps 1-5)."""
    s = _Stickifier()
    s.seed(module)
    for op in list(module.walk()):
        s.visit(op)
    _erase_dead_views(module, s.rewriter)
    s.settle_assemblies(module)
    place_rows(list(module.walk()), s.plan, s.staged)
    layouts = dict(s.plan.layouts)
    s.write_types(module)
    return StickifyResult(layouts, s.copier.restickifies)


@dataclass(frozen=True)
class StickifyPass(ModulePass):
    """Attach #spyre.layout to every tensor and insert spyre.restickify where an op needs another stick dim."""

    name = "spyre-stickify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stickify(op)
