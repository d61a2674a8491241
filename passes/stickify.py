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
  number of sticks, B's K dim is padded to whole sticks (``padded_shape``; the
  padding must be zero, see spyre-plan-memory's ``zeroed`` placement), which is
  the padding rule of step 3 applied to K;
* reduction: no constraint on a dense operand (a sparse one, a stick
  reduction's result, is restickified onto a dim it iterates, a kept one if it
  has one); the result keeps the operand's stick driver (non-stick reduction),
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
   When no storage dim has that driver (a view that mixes dims across the
   stick), or spyre-fold-views would copy the view of the restickified storage
   anyway (a dim read through a division), the view itself is copied once
   (``spyre.restickify`` with explicit maps) into a tensor of the view's shape
   sticked as the op needs.  A copy whose
   stick would be driven by a dim it pads to whole sticks and that shares a
   coordinate with another (``h * 32 + d``: the padding would reach the next
   head) reads instead a restickify of its storage sticked on another dim (the
   sequence dim), and writes a tensor sticked on another dim that a second
   restickify sticks as the op needs.  A restickify
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
4. Every tensor type gets its ``#spyre.layout``: the stick dim last in
   ``dim_order``, the other dims in order; a view result is sticked on the view
   dim that drives its source's stick coordinate (innermost dim otherwise).
   The func signature follows its arguments and returned values.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, tensor
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.analysis.assembly import Assembly, assembled_by, assemblies, assembly_filled_by, assembly_of
from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.names import dims_attr, result_dim_names
from spyre_mlir.analysis.views import (
    Dim,
    Mod,
    Read,
    atoms,
    copy_reason,
    dim,
    map_coords,
    materialise_view,
    op_reads,
    read_through_views,
    shared_hints,
)
from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.dialects.spyre import (
    ComputeOp,
    FillOp,
    IndirectAccess,
    LayoutAttr,
    ReduceOp,
    RestickifyOp,
    ViewOp,
    element_dtype,
    layout_attr,
    tensor_layout,
)
from spyre_mlir.hardware import element_bytes, round_up
from spyre_mlir.layout import StickLayout, stick_layout
from spyre_mlir.opfuncs import OpKind

BROADCAST = -1
"""The driver of a constant stick coordinate: any stick fits."""

# --------------------------------------------------------------------------
# Stick drivers
# --------------------------------------------------------------------------


def stick_driver(coord: Linear) -> int | None:
    """The iteration dim that drives ``coord`` (:data:`BROADCAST` for a constant, None if none).

    The driver is the one term with coefficient 1 that is a dim or ``dim mod c``
    (co-simplification turns the latter into a dim of its own).
    """
    if not coord.terms:
        return BROADCAST
    units = []
    for atom, k in coord.terms:
        if k != 1:
            continue
        if isinstance(atom, Dim):
            units.append(atom.pos)
        elif isinstance(atom, Mod) and len(atom.arg.terms) == 1 and atom.arg.terms[0][1] == 1 \
                and isinstance(atom.arg.terms[0][0], Dim) and not atom.arg.const:
            units.append(atom.arg.terms[0][0].pos)
    return units[0] if len(units) == 1 else None


def dims_driven_by(coords: Sequence[Linear], driver: int) -> list[int]:
    """The tensor dims whose coordinate ``driver`` drives."""
    return [j for j, c in enumerate(coords) if stick_driver(c) == driver]


def splits_stick(coord: Linear, elems_per_stick: int) -> bool:
    """True when ``coord``'s driver steps inside sticks it shares with another dim: a term whose
    coefficient is not a whole number of sticks (``h * 32 + d`` over sticks of 64, a head of 32
    elements in half a stick), or a driver ``k mod c`` that a reader splits into ``k = c * h + d``
    with ``c`` not a whole number of sticks (heads merged back into one dim).  No layout label
    describes such a stick coordinate."""
    return stick_driver(coord) not in (None, BROADCAST) and any(
        k % elems_per_stick if k != 1 else isinstance(atom, Mod) and atom.divisor % elems_per_stick
        for atom, k in coord.terms)


def nested_dims(coords: Sequence[Linear]) -> set[int]:
    """The iteration dims that share a coordinate of ``coords`` with another term (``h`` and ``d``
    of ``h * 32 + d``)."""
    return {atom.pos for coord in coords if len(coord.terms) > 1
            for atom in atoms(coord) if isinstance(atom, Dim)}


def fits(coords: Sequence[Linear], stick: int | None, required: int, elems_per_stick: int) -> bool:
    """True when a read of a storage sticked on ``stick`` (``elems_per_stick`` to a stick) at
    ``coords`` serves an op that needs its stick driven by ``required``.

    A stick coordinate that :func:`splits_stick` fits no op.  A constant one is a broadcast,
    which fits, unless ``required`` drives another coordinate of the read: then the read walks
    ``required`` over sticks that hold one element each (a stick reduction's sparse result read
    densely), which no layout label describes.
    """
    driver = BROADCAST if stick is None else stick_driver(coords[stick])
    if driver == required:
        return not splits_stick(coords[stick], elems_per_stick)
    return driver == BROADCAST and not any(
        isinstance(atom, Dim) and atom.pos == required
        for j, coord in enumerate(coords) if j != stick for atom in atoms(coord))


def dim_order(rank: int, stick: int | None) -> tuple[int, ...]:
    """The dim order that sticks ``stick``: the other dims in order, then ``stick``."""
    if stick is None:
        return ()
    return (*(d for d in range(rank) if d != stick), stick)


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _layout(value: SSAValue, stick: int | None, padded: Sequence[int] | None = None) -> StickLayout:
    assert isinstance(value.type, TensorType)
    dtype = element_dtype(value.type.get_element_type())
    shape = _shape(value)
    return stick_layout(shape, dtype, dim_order(len(shape), stick), padded_shape=padded)


def _host_bytes(value: SSAValue) -> int:
    """Bytes of ``value``'s elements: what a restickify of it copies, padding aside."""
    assert isinstance(value.type, TensorType)
    return math.prod(_shape(value)) * element_bytes(element_dtype(value.type.get_element_type()))


def _with_layout(value: SSAValue, layout: StickLayout) -> TensorType:
    assert isinstance(value.type, TensorType)
    return TensorType(value.type.get_element_type(), value.type.get_shape(), layout_attr(layout))


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


# --------------------------------------------------------------------------
# Op rules
# --------------------------------------------------------------------------


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


def _matmul_dims(op: ComputeOp, result: Sequence[Linear]) -> tuple[int, int]:
    """``(K, N)`` of a matmul: its reduction dim and the driver of its innermost result coord."""
    reduced = op.reduction_dims()
    n = stick_driver(result[-1])
    if len(reduced) != 1 or n in (None, BROADCAST):
        raise SpyreError(f"matmul needs one reduction dim (K) and an innermost result dim (N), "
                         f"got reduction dims {list(reduced)}", op=op)
    return reduced[0], n


def _dense_driver(op: ComputeOp, read: Read) -> int | None:
    """The iteration dim a reduction's sparse operand (one element per stick: another stick
    reduction's result, its stick coordinate a constant or a dim of extent 1) must be
    restickified onto: the one driving its innermost kept coordinate, else its innermost
    reduced one, of more than one element (None: there is none)."""
    space = op.get_iteration_space()
    drivers = [d for c in reversed(read.coords)
               if (d := stick_driver(c)) not in (None, BROADCAST) and space[d] > 1]
    kept = [d for d in drivers if d not in op.reduction_dims()]
    return (kept or drivers or [None])[0]


def op_rule(op: ComputeOp, reads: Sequence[Read], result: Sequence[Linear], plan: Plan) -> OpRule:
    """The stick rule of ``op`` given how it reads its (decided) storage."""
    kind = op.op_func().kind
    every = tuple(range(len(result)))
    if kind is OpKind.MATMUL:
        k, n = _matmul_dims(op, result)
        return OpRule(tuple(dims_driven_by(result, n)), {0: k, 1: n})
    if kind is OpKind.POINTWISE and (indirect := op.indirect_access()) is not None:
        return _indirect_rule(op, indirect, reads, result, plan)
    if kind is OpKind.POINTWISE:
        return OpRule(every, shared=True)
    if kind is OpKind.REDUCTION:
        driver = plan.driver(reads[0])
        sparse = driver == BROADCAST or (driver is not None and op.get_iteration_space()[driver] == 1)
        if sparse and (dense := _dense_driver(op, reads[0])) is not None:
            return OpRule(tuple(dims_driven_by(result, dense)) or every, {0: dense})
        if driver in op.reduction_dims():
            kept = tuple(j for j, c in enumerate(result) if not c.terms)
            return OpRule((kept or (len(result) - 1,)) if result else ())
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


# --------------------------------------------------------------------------
# The plan: one stick dim (and padding) per materialised value
# --------------------------------------------------------------------------


@dataclass
class Plan:
    """Stick decisions: the layout of every decided materialised value."""

    layouts: dict[SSAValue, StickLayout] = field(default_factory=dict)
    fixed: set[SSAValue] = field(default_factory=set)
    """Values whose layout comes from their type (arguments, restickify results, earlier runs)."""

    def stick(self, value: SSAValue) -> int | None:
        return self.layouts[value].stick_dim

    def driver(self, read: Read) -> int | None:
        """The iteration dim driving ``read``'s storage stick coordinate."""
        stick = self.stick(read.storage)
        return BROADCAST if stick is None else stick_driver(read.coords[stick])

    def fix(self, value: SSAValue, layout: StickLayout) -> None:
        self.layouts[value] = layout
        self.fixed.add(value)


@dataclass
class StickifyResult:
    """What :func:`stickify` did."""

    layouts: dict[SSAValue, StickLayout]
    """The layout chosen for each materialised value (before types were rewritten)."""
    restickifies: list[RestickifyOp]
    """Restickifies and view copies inserted."""


def _check_storage(op: ComputeOp, index: int, storage: SSAValue) -> None:
    """One located error unless operand ``index`` of ``op`` reads storage this pass lays out or
    finds laid out: a block argument, a compute or fill result, a concatenation buffer, or a
    value whose type has a layout already.  (A tile of spyre-coarse-tile, a slice with no
    layout, reaches this pass only when a tiled program is fed to the pipeline again.)"""
    owner = storage.owner
    if isinstance(storage, BlockArgument) or isinstance(owner, ComputeOp | FillOp):
        return
    if isinstance(owner, tensor.InsertSliceOp) and assembly_filled_by(owner) is not None:
        return
    if isinstance(owner, tensor.EmptyOp) and assembly_of(owner) is not None:
        return
    if isinstance(storage.type, TensorType) and isinstance(storage.type.encoding, LayoutAttr):
        return
    raise SpyreError(f"operand #{index} of '{op.name}' is a '{owner.name}' result without a layout: "
                     "spyre-stickify lays out programs before spyre-coarse-tile tiles them", op=op)


@dataclass
class _Stickifier:
    """The greedy pass over one module (module docstring, steps 1-4)."""

    rewriter: Rewriter = field(default_factory=Rewriter)
    plan: Plan = field(default_factory=Plan)
    restickifies: list[RestickifyOp] = field(default_factory=list)
    shared: dict[tuple[SSAValue, StickLayout], SSAValue] = field(default_factory=dict)
    readers: dict[SSAValue, list[tuple[ComputeOp, int]]] = field(default_factory=dict)

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
                    _check_storage(op, i, read.storage)
                    self.readers.setdefault(read.storage, []).append((op, i))

    # 2. Choosing a result's stick dim.
    def reader_demands(self, value: SSAValue) -> list[tuple[tuple[Linear, ...], int]]:
        """How each known reader of ``value`` that needs a driver reads it, and that driver
        (:meth:`reader_requirement`)."""
        demands = []
        for reader, index in self.readers.get(value, []):
            _, reads, result = op_reads(reader)
            if index >= len(reads) or reads[index].storage is not value:
                continue
            required = self.reader_requirement(reader, index, reads, result)
            if required is not None:
                demands.append((reads[index].coords, required))
        return demands

    def demand_bytes(self, value: SSAValue, stick: int, demands: list[tuple[tuple[Linear, ...], int]]) -> int:
        """Bytes of ``value`` that restickifies for its readers' ``demands`` (:meth:`reader_demands`)
        would copy if it were sticked on ``stick``."""
        eps = _layout(value, stick).elems_per_stick
        return sum(not fits(coords, stick, required, eps) for coords, required in demands) * _host_bytes(value)

    def reader_requirement(self, op: ComputeOp, index: int, reads: Sequence[Read],
                           result: Sequence[Linear], depth: int = 2) -> int | None:
        """The driver a reader needs for operand ``index``, as far as it is known yet: a pointwise
        reader whose result and other operands are undecided follows what its own readers need
        of its result (:meth:`result_demand`, ``depth`` readers on)."""
        kind = op.op_func().kind
        if kind is OpKind.MATMUL:
            k, n = _matmul_dims(op, result)
            return {0: k, 1: n}.get(index)
        if kind is not OpKind.POINTWISE:
            return None
        indirect = op.indirect_access()
        if indirect is not None and index == indirect.index:
            return None  # the index keeps a stick driver of its own (_indirect_rule)
        if op.result in self.plan.layouts:
            return self.plan.driver(Read(op.result, tuple(result), ()))
        insert = assembled_by(op)
        assembly = None if insert is None else assembly_filled_by(insert)
        if assembly is not None and (dims := whole_stick_dims(assembly)):
            return stick_driver(result[dims[-1]])  # the buffer's likely stick: ties go to the innermost
        for j, read in enumerate(reads):
            if j != index and read.storage in self.plan.layouts:
                driver = self.plan.driver(read)
                if driver not in (None, BROADCAST):
                    return driver
        return self.result_demand(op, result, depth) if depth else None

    def result_demand(self, op: ComputeOp, result: Sequence[Linear], depth: int) -> int | None:
        """The iteration dim of ``op`` that drives the result dim its first reader with a known need
        (:meth:`reader_requirement`, ``depth`` - 1 readers on) wants the stick on: a scaling whose
        result is a matmul's B makes its operand follow B's N (a key transposed, then scaled)."""
        for reader, index in self.readers.get(op.result, []):
            _, reads, reader_result = op_reads(reader)
            if index >= len(reads) or reads[index].storage is not op.result:
                continue
            required = self.reader_requirement(reader, index, reads, reader_result, depth - 1)
            dims = [] if required is None else dims_driven_by(reads[index].coords, required)
            if dims and (driver := stick_driver(result[dims[0]])) not in (None, BROADCAST):
                return driver
        return None

    def operand_misses(self, rule: OpRule, reads: Sequence[Read], result_driver: int | None) -> list[tuple[int, int]]:
        """``(operand, required driver)`` for each operand that does not fit."""
        misses = []
        for i, read in enumerate(reads):
            required = rule.required(i, result_driver)
            layout = self.plan.layouts[read.storage]
            if required is not None and not fits(read.coords, layout.stick_dim, required, layout.elems_per_stick):
                misses.append((i, required))
        return misses

    def operand_bytes(self, op: ComputeOp, rule: OpRule, reads: Sequence[Read], result_driver: int | None) -> float:
        """Bytes the restickifies of :meth:`operand_misses` would copy (each its storage); infinite
        when an operand cannot follow its required driver at all (:meth:`followers`)."""
        total = 0.0
        for index, required in self.operand_misses(rule, reads, result_driver):
            storage_dims, view_dims = self.followers(op, index, reads[index], required)
            if not storage_dims and not (reads[index].views and view_dims):
                return math.inf
            total += _host_bytes(reads[index].storage)
        return total

    def followers(self, op: ComputeOp, index: int, read: Read, required: int) -> tuple[list[int], list[int]]:
        """The dims of operand ``index``'s storage, and of the view ``op`` reads, that ``required``
        drives: where a restickify of the storage, or a copy of the view, could put the stick."""
        eps = self.plan.layouts[read.storage].elems_per_stick
        storage_dims = [j for j in dims_driven_by(read.coords, required) if not splits_stick(read.coords[j], eps)]
        space = list(op.get_iteration_space())
        return storage_dims, dims_driven_by(map_coords(op.get_indexing_maps()[index], space), required)

    def choose(self, op: Operation, value: SSAValue, candidates: Sequence[int],
               cost: Callable[[int], float]) -> int | None:
        """The best stick dim of ``value`` among ``candidates`` (fixed values keep theirs)."""
        rank = len(_shape(value))
        if not rank:
            return None
        if value in self.plan.fixed:
            stick = self.plan.stick(value)
            if stick not in candidates:
                raise SpyreError(f"result layout {list(self.plan.layouts[value].dim_order)} sticks dim {stick}, "
                                 f"but '{op.name}' needs its result sticked on one of {list(candidates)}", op=op)
            return stick
        if not candidates:
            raise SpyreError(f"no result dim of '{op.name}' can carry the stick", op=op)
        demands = self.reader_demands(value)
        return min(candidates, key=lambda s: (cost(s) + self.demand_bytes(value, s, demands), s != rank - 1, s))

    # 3. Fixing operands.
    def restickified(self, storage: SSAValue, layout: StickLayout, reader: ComputeOp) -> SSAValue:
        """``storage`` in ``layout``: one restickify right after its definition, shared by all readers.

        It carries the location of the first ``reader`` that needs it.  Settled before it is
        inserted, it reads a padded copy of ``storage`` if it needs one (and then follows it).
        """
        key = (storage, layout)
        if key not in self.shared:
            op = RestickifyOp(storage, _with_layout(storage, layout))
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
            self.rewriter.replace_value_with_new_type(copy.result, _with_layout(copy.result, settled))
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
        coordinate with another dim (:meth:`untangled`: a head of 32 in sticks of 64, read from or
        merged back into the hidden dim): it then reads a restickify of its storage sticked on
        another dim, or writes a tensor sticked on another dim that a second restickify sticks as
        the op needs (:meth:`untangled_stick`).
        """
        padded = self.plan.layouts[read.storage].padded_shape
        eps = self.plan.layouts[read.storage].elems_per_stick
        storage_dims, view_dims = self.followers(op, index, read, required)
        operand = op.operands[index]
        why = f"that no stick dim of its storage {list(_shape(read.storage))} can serve"
        if storage_dims:
            layout = _layout(read.storage, storage_dims[0], padded)
            refolded = copy_reason(op, index, lambda v: layout if v is read.storage else self.plan.layouts[v]) \
                if view_dims else None
            if refolded is None:
                self.reread(op, index, read, self.restickified(read.storage, layout, op))
                return
            why = refolded  # spyre-fold-views would copy the view of the restickified storage too
        if not read.views or not view_dims:
            raise SpyreError(f"operand #{index} cannot be sticked on iteration dim {required}: no dim of "
                             f"its storage {list(_shape(read.storage))} follows it", op=op)
        layout = _layout(operand, view_dims[0])
        emit_warning(f"operand #{index} is a view {why}; it is copied by spyre.restickify", op=op)
        copy = materialise_view(self.rewriter, operand, op)
        _, (source,), written = op_reads(copy)
        tangled = nested_dims([*source.coords, *written])
        stick = self.plan.stick(source.storage)
        if stick is not None and not self.untangled(copy, source.coords[stick], tangled, eps) \
                and (other := self.untangled_stick(copy, source.coords, tangled, eps)) is not None:
            self.reread(copy, 0, source, self.restickified(source.storage, _layout(source.storage, other, padded), op))
        self.restickifies.append(copy)
        if not self.untangled(copy, written[view_dims[0]], tangled, layout.elems_per_stick) \
                and (other := self.untangled_stick(copy, written, tangled, layout.elems_per_stick)) is not None:
            self.plan.layouts[copy.result] = _layout(operand, other)
            op.operands[index] = self.restickified(copy.result, layout, op)  # pads the copy as it reads it
            staged = self.plan.layouts.pop(copy.result)
            self.rewriter.replace_value_with_new_type(copy.result, _with_layout(operand, staged))
            self.settle_copy(copy, staged)
            return
        self.rewriter.replace_value_with_new_type(copy.result, _with_layout(operand, layout))
        self.settle_copy(copy, layout)
        op.operands[index] = copy.result

    @staticmethod
    def untangled(copy: ComputeOp, coord: Linear, tangled: set[int], elems_per_stick: int) -> bool:
        """True when a tensor of ``copy`` can be sticked on coordinate ``coord``: its driver is no
        dim of ``tangled`` that the copy pads to whole sticks (the padding would step into the
        next term of the coordinate it shares), and it splits no stick."""
        driver = stick_driver(coord)
        if driver in (None, BROADCAST):
            return True
        padded = copy.get_iteration_space()[driver] % elems_per_stick != 0
        return not (driver in tangled and padded) and not splits_stick(coord, elems_per_stick)

    def untangled_stick(self, copy: ComputeOp, coords: Sequence[Linear], tangled: set[int],
                        elems_per_stick: int) -> int | None:
        """The dim to stick a tensor of ``copy`` on, read or written at ``coords``, when the one
        its reader needs is tangled (:meth:`untangled`, a head of 32 in sticks of 64): the
        innermost one that the copy steps along and that is not (a head's sequence dim).  None
        when there is none (a flattened tensor of less than a stick): the copy keeps its stick
        and the lowering reports the read it cannot describe."""
        space = copy.get_iteration_space()
        others = [j for j, c in enumerate(coords) if (d := stick_driver(c)) not in (None, BROADCAST)
                  and space[d] > 1 and self.untangled(copy, c, tangled, elems_per_stick)]
        return others[-1] if others else None

    def missing_padding(self, op: ComputeOp) -> list[tuple[int, Read, StickLayout]]:
        """``(tensor index, read, padded layout)`` for each tensor of ``op`` (operands, then the
        result) whose layout does not reach as far as the op steps along a padded iteration dim.

        An iteration dim that drives a tensor's stick (and spans more than one element) is
        padded to whole sticks of the widest such tensor (SDSC ``N_``), so every tensor that
        steps along it is read (or written) that far too: off its stick (a [2, 192] sum over
        its stick into a [2] result iterates 64 rows of its input; a matmul B operand's K
        rows), and on its stick when its sticks hold fewer elements (an fp16 -> fp32 cast of
        96 columns iterates 128: four fp32 sticks, not three).
        """
        _, reads, result = op_reads(op)
        tensors = [*reads, Read(op.result, tuple(result), ())]
        padded = self.padded_dims(op)
        needs = []
        for index, read in enumerate(tensors):
            layout = self.plan.layouts[read.storage]
            extents = list(layout.padded_host_shape)
            for j, coord in enumerate(read.coords):
                driver = stick_driver(coord)
                reach = extents[j] if j != layout.stick_dim else round_up(extents[j], layout.elems_per_stick)
                if driver in padded and padded[driver] + coord.const > reach:
                    extents[j] = padded[driver] + coord.const
            if extents != list(layout.padded_host_shape):
                needs.append((index, read, stick_layout(layout.host_shape, layout.dtype, layout.dim_order,
                                                        padded_shape=extents)))
        return needs

    def padded_dims(self, op: ComputeOp) -> dict[int, int]:
        """The iteration dims of ``op`` padded to whole sticks (:meth:`missing_padding`), with
        their padded extents."""
        space, reads, result = op_reads(op)
        padded: dict[int, int] = {}
        for read in [*reads, Read(op.result, tuple(result), ())]:
            driver = self.plan.driver(read)
            eps = self.plan.layouts[read.storage].elems_per_stick
            if driver not in (None, BROADCAST) and space[driver] > 1 and space[driver] % eps:
                padded[driver] = max(padded.get(driver, 0), round_up(space[driver], eps))
        return padded

    def pad(self, op: ComputeOp) -> None:
        """Give each tensor of :meth:`missing_padding` its padded extent.

        A value of the function gets ``padded_shape`` (a returned one too: the kernel
        output is staged with its padding); a fixed one (an argument) is read through a
        padded ``spyre.restickify`` copy.
        """
        for index, read, new in self.missing_padding(op):
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
        rank = len(_shape(value))
        read = read_through_views(value, [dim(i) for i in range(rank)], list(_shape(value)))
        storage_stick = self.plan.stick(read.storage)
        copy = materialise_view(self.rewriter, value, before, storage_stick)
        self.plan.layouts[copy.result] = _layout(value, driven_stick(read.coords, storage_stick, rank))
        return copy

    def copy_padded_views(self, op: ComputeOp) -> list[RestickifyOp]:
        """Copy here each view operand that spyre-fold-views would copy (:func:`copy_reason`) and
        that the op pads, and each one that shares a coordinate between a dim the op pads and
        another (``h * 32 + d`` with ``d`` padded to a stick of 64: the padding would read the
        next head): the copy is the tensor the op reads, so it is the one :meth:`pad` pads
        (the view's storage needs nothing).  Returns the copies."""
        _, reads, _ = op_reads(op)
        padded = set(self.padded_dims(op))
        copied = {i for i, read in enumerate(reads) if read.views and nested_dims(read.coords) & padded}
        copied |= {i for i, read, _ in self.missing_padding(op) if i < len(op.inputs) and read.views
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
            if not isinstance(value.owner, ViewOp) or not _shape(value):
                continue
            copy = self.copy_view(value, ret)
            if not self.missing_padding(copy):
                del self.plan.layouts[copy.result]
                self.rewriter.erase_op(copy)
                continue
            ret.operands[index] = copy.result
            self.settle_copy(copy, self.plan.layouts[copy.result])
            self.restickifies.append(copy)

    def drops_reduced_stick(self, op: ReduceOp, reads: Sequence[Read]) -> bool:
        """True when ``op`` reduces its operand's stick and its result, still to be decided,
        drops the reduced dims but not all: no dim is left to be sparse on (a rank-0 result is
        one stick, sparse already)."""
        return bool(_shape(op.result)) and not op.keeps_dims() and not op.has_explicit_maps() \
            and op.result not in self.plan.fixed and self.plan.driver(reads[0]) in op.reduction_dims()

    def keep_reduced_dims(self, op: ReduceOp) -> ReduceOp:
        """Replace ``op`` by the same reduction keeping its reduced dims (size 1), read through a
        ``spyre.view`` that drops them; the new reduction inherits the dim names and hints."""
        assert isinstance(op.result.type, TensorType)
        source, reduced = _shape(op.inputs[0]), op.get_reduce_dims()
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

    def misaligned(self, reads: Sequence[Read], driver: int | None) -> bool:
        """True when ``driver`` drives some read's storage stick coordinate at an offset that is not
        a whole number of sticks (``x[..., 32:]`` of 64 fp16 columns) or inside sticks it shares with
        another dim (:func:`splits_stick`, a head of 32): no op reads that in place and a copy of it
        would start mid-stick, so the op must be driven otherwise (its operand restickified)."""
        for read in reads:
            stick = self.plan.stick(read.storage)
            if stick is None or driver in (None, BROADCAST):
                continue
            coord, eps = read.coords[stick], self.plan.layouts[read.storage].elems_per_stick
            if stick_driver(coord) == driver and (coord.const % eps or splits_stick(coord, eps)):
                return True
        return False

    def aligned(self, dims: Sequence[int], reads: Sequence[Read], result: Sequence[Linear],
                space: Sequence[int]) -> tuple[int, ...]:
        """The result dims among ``dims`` whose driver reads no operand mid-stick (:meth:`misaligned`),
        preferring, when some were left out, those whose driver spans more than one element and
        drives a coordinate of every operand that is no broadcast (a restickify of the storage
        serves it, not a copy of the view); all of ``dims`` when every one reads mid-stick (the
        lowering then reports the misaligned read)."""
        kept = tuple(d for d in dims if not self.misaligned(reads, stick_driver(result[d])))
        if len(kept) == len(dims):
            return kept
        dense = [read for read in reads if self.plan.driver(read) != BROADCAST]
        served = tuple(d for d in kept if (driver := stick_driver(result[d])) not in (None, BROADCAST)
                       and space[driver] > 1 and all(dims_driven_by(read.coords, driver) for read in dense))
        return served or kept or tuple(dims)

    def copy_bytes(self, copy: ComputeOp, stick: int) -> float:
        """Bytes the restickifies of the operands of ``copy`` would copy if its result were sticked
        on ``stick``."""
        _, reads, result = op_reads(copy)
        rule = op_rule(copy, reads, result, self.plan)
        return self.operand_bytes(copy, rule, reads, stick_driver(result[stick]))

    def assemble(self, assembly: Assembly) -> None:
        """Step 2 for an assembly: one stick dim for its buffer, its values and its pieces' copies.

        A piece's offset along the stick dim must be a whole number of sticks (its copy writes
        whole sticks); among the dims where all are, the one with the fewest bytes restickified for
        the copies' operands and the readers wins."""
        full = assembly.empty.tensor
        shape = _shape(full)
        candidates = whole_stick_dims(assembly)
        for copy in assembly.copies:
            space, reads, result = op_reads(copy)
            candidates = list(self.aligned(candidates, reads, result, space))
        if not candidates:
            eps = _layout(full, len(shape) - 1).elems_per_stick
            raise SpyreError(f"the pieces of a tensor of shape {list(shape)} start at offsets "
                             f"{[list(o) for o in assembly.offsets()]}: no dim has them all at whole sticks of "
                             f"{eps} elements, so no stick dim can hold them", op=assembly.inserts[0])

        demands = self.reader_demands(assembly.value)

        def cost(stick: int) -> float:
            return sum(self.copy_bytes(copy, stick) for copy in assembly.copies) + \
                self.demand_bytes(assembly.value, stick, demands)

        if full in self.plan.fixed:
            stick = self.choose(assembly.empty, full, candidates, cost)
        else:
            stick = min(reversed(candidates), key=cost)  # ties go to the innermost dim
        for value in assembly.values:
            if value not in self.plan.fixed:
                self.plan.layouts[value] = _layout(value, stick)
        for copy in assembly.copies:
            if copy.result not in self.plan.fixed:
                self.plan.fix(copy.result, _layout(copy.result, stick))

    def settle_assemblies(self, module: ModuleOp) -> None:
        """Give every value of an assembly's buffer the layout its readers settled on its last value
        (padded by :meth:`pad` where a reader iterates past its extent)."""
        for body in module.walk():
            if isinstance(body, func.FuncOp) and body.body.blocks:
                for assembly in assemblies(body):
                    for value in assembly.values:
                        if value not in self.plan.fixed:
                            self.plan.layouts[value] = self.plan.layouts[assembly.value]

    def visit(self, op: Operation) -> None:
        """Step 2 and 3 for one op."""
        if isinstance(op, func.ReturnOp):
            self.materialise_returned(op)
            return
        if isinstance(op, tensor.EmptyOp):
            assembly = assembly_of(op)
            if assembly is not None:
                self.assemble(assembly)
            return
        if isinstance(op, FillOp):
            rank = len(_shape(op.result))
            stick = self.choose(op, op.result, range(rank), lambda s: 0)
            if op.result not in self.plan.fixed:
                self.plan.layouts[op.result] = _layout(op.result, stick)
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
            rule = dataclasses.replace(rule, result_dims=self.aligned(rule.result_dims, reads, result, space))

        def cost(stick: int) -> float:
            return self.operand_bytes(op, rule, reads, stick_driver(result[stick]))

        stick = self.choose(op, op.result, rule.result_dims, cost)
        if op.result not in self.plan.fixed:
            self.plan.layouts[op.result] = _layout(op.result, stick)
        result_driver = None if stick is None else stick_driver(result[stick])
        for index, required in self.operand_misses(rule, reads, result_driver):
            self.fix_operand(op, index, reads[index], required)
        copies = self.copy_padded_views(op)
        self.pad(op)
        for copy in copies:
            self.pad(copy)

    # 4. Writing the types.
    def write_types(self, module: ModuleOp) -> None:
        for value, layout in list(self.plan.layouts.items()):
            if value not in self.plan.fixed or not isinstance(value.type.encoding, LayoutAttr):
                self.rewriter.replace_value_with_new_type(value, _with_layout(value, layout))
        for view in [op for op in module.walk() if isinstance(op, ViewOp)]:
            self.rewriter.replace_value_with_new_type(view.result, _with_layout(view.result, view_layout(view)))
        for f in module.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                ret = f.body.blocks[-1].last_op
                outputs = ret.operand_types if isinstance(ret, func.ReturnOp) else f.function_type.outputs.data
                f.function_type = FunctionType.from_lists(f.body.blocks[0].arg_types, outputs)


def whole_stick_dims(assembly: Assembly) -> list[int]:
    """The dims of an assembly's buffer along which every piece starts at a whole number of sticks."""
    full = assembly.empty.tensor
    rank = len(_shape(full))
    eps = _layout(full, rank - 1).elems_per_stick
    return [d for d in range(rank) if all(o[d] % eps == 0 for o in assembly.offsets())]


def driven_stick(coords: Sequence[Linear], source_stick: int | None, rank: int) -> int:
    """The dim of a view of ``rank`` dims that drives its source's stick coordinate
    ``coords[source_stick]``; the innermost dim when none does."""
    driver = BROADCAST if source_stick is None else stick_driver(coords[source_stick])
    return rank - 1 if driver in (None, BROADCAST) else driver


def view_layout(view: ViewOp) -> StickLayout:
    """A view's layout: sticked on the view dim that drives its source's stick coordinate."""
    space = _shape(view.result)
    if not space:
        return _layout(view.result, None)
    coords = map_coords(view.map.data, space)
    return _layout(view.result, driven_stick(coords, tensor_layout(view.source.type).stick_dim, len(space)))


def _erase_dead_views(module: ModuleOp, rewriter: Rewriter) -> None:
    for view in reversed([op for op in module.walk() if isinstance(op, ViewOp)]):
        if not view.result.uses:
            rewriter.erase_op(view)


def stickify(module: ModuleOp) -> StickifyResult:
    """Choose and write the layout of every tensor in ``module`` (module docstring, steps 1-4)."""
    s = _Stickifier()
    s.seed(module)
    for op in list(module.walk()):
        s.visit(op)
    _erase_dead_views(module, s.rewriter)
    s.settle_assemblies(module)
    layouts = dict(s.plan.layouts)
    s.write_types(module)
    return StickifyResult(layouts, s.restickifies)


@dataclass(frozen=True)
class StickifyPass(ModulePass):
    """Attach #spyre.layout to every tensor and insert spyre.restickify where an op needs another stick dim."""

    name = "spyre-stickify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stickify(op)
