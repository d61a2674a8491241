# Step 3 of spyre-stickify: the copies an op's operands need.  Reads the plan
# and each compute op's reads of storage through views; writes `spyre.restickify`
# ops (of a storage to another stick dim or padding, or unflattened along a
# nested dim, shared by the readers that need the same layout; copies of views,
# with explicit maps) and re-creates the view chains readers read them through.
"""Restickifies and view copies (step 3 of :mod:`spyre_mlir.passes.stickify`).

A :class:`Copier` gives an operand that does not fit its op's rule a
``spyre.restickify`` of its storage (unflattened first where the view reads a
dim at a row-major nest), or a copy of its view, pads what an op steps along
past a layout's reach, and copies returned views that need padding; the
copies themselves, each made once and shared, are its base's
(:class:`CopyMaker`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.names import dims_attr, result_dim_names
from spyre_mlir.analysis.views import (
    Dim,
    Read,
    atoms,
    copy_reason,
    dim,
    materialise_view,
    nest_row,
    op_reads,
    read_through_views,
    shared_hints,
    to_map,
)
from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.dialects.spyre import ComputeOp, RestickifyOp, ViewOp, layout_attr
from spyre_mlir.hardware import round_up
from spyre_mlir.layout import StickLayout, stick_layout
from spyre_mlir.opfuncs import OpKind
from spyre_mlir.passes.stickify.drivers import (
    BROADCAST,
    dim_order,
    dims_driven_by,
    nested_dims,
    splits_stick,
    stick_driver,
)
from spyre_mlir.passes.stickify.nests import Nest, row_major_nest
from spyre_mlir.passes.stickify.plan import (
    Plan,
    followers,
    missing_padding,
    padded_dims,
    value_layout,
    value_shape,
    view_stick,
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


def _definition_end(value: SSAValue) -> InsertPoint:
    """Where a copy of ``value`` goes: right after its definition (after the copies of an
    argument at the start of its block)."""
    if isinstance(value, BlockArgument):
        return _after_argument_copies(value.block)
    assert isinstance(value.owner, Operation)
    return InsertPoint.after(value.owner)


def untangled(copy: ComputeOp, coord: Linear, tangled: set[int], elems_per_stick: int) -> bool:
    """True when a tensor of ``copy`` can be sticked on coordinate ``coord``: its driver is no
    dim of ``tangled`` that the copy pads to whole sticks (the padding would step into the
    next term of the coordinate it shares), and it splits no stick."""
    driver = stick_driver(coord)
    if driver in (None, BROADCAST):
        return True
    padded = copy.get_iteration_space()[driver] % elems_per_stick != 0
    return not (driver in tangled and padded) and not splits_stick(coord, elems_per_stick)


def strided(coord: Linear) -> bool:
    """True when no dim drives ``coord`` one element at a time (``d * 2 + 1``: every second
    element, GPT-J's interleaved rotary pairs): sticked on it, no layout label describes it."""
    return stick_driver(coord) is None


def untangled_stick(copy: ComputeOp, coords: Sequence[Linear], tangled: set[int],
                    elems_per_stick: int, narrow: bool = False, avoid: int | None = None) -> int | None:
    """The dim to stick a tensor of ``copy`` on, read or written at ``coords``, when the one
    its reader needs is tangled (:func:`untangled`, a head of 32 in sticks of 64): among those
    that the copy steps along and that are not (a head's sequence dim), the one padded least to
    whole sticks, ties to the innermost (GPT-J's rotary pairs interleaved back into a head: its
    256 tokens, not its 2 heads, which would be padded 32-fold); with ``narrow``, one the copy
    does not step along (a sequence of one token: one element per stick) when there is no
    other; never ``avoid`` (the dim the tensor is sticked on now).  None when there is none."""
    space = copy.get_iteration_space()
    others = [j for j, c in enumerate(coords) if j != avoid and (d := stick_driver(c)) not in (None, BROADCAST)
              and (narrow or space[d] > 1) and untangled(copy, c, tangled, elems_per_stick)]
    wide = [j for j in others if space[stick_driver(coords[j])] > 1]

    def padding(j: int) -> float:
        extent = space[stick_driver(coords[j])]
        return round_up(extent, elems_per_stick) / extent

    return min(reversed(wide or others), key=padding, default=None)


def one_element_dim(source: Read, layout: StickLayout) -> int | None:
    """The innermost dim of one element (a sequence of one token) of the storage a copy reads
    (sticked per ``layout``, on another dim) at a constant or along one iteration dim.  Sticked
    on it, the storage holds one element per stick, and the dims the copy reads tangled are no
    stick's."""
    dims = [j for j, c in enumerate(source.coords) if j != layout.stick_dim and layout.host_shape[j] == 1
            and all(isinstance(a, Dim) for a in atoms(c)) and len(c.terms) <= 1]
    return dims[-1] if dims else None


def untangling_nest(copy: ComputeOp, source: Read, written: Sequence[Linear], layout: StickLayout,
                    on_stick: bool = False) -> Nest | None:
    """A nest (:func:`row_major_nest`) of a dim of the storage ``copy`` reads (sticked per
    ``layout``, on another dim; with ``on_stick``, on its stick dim) whose innermost term, once
    the dim is unflattened, is untangled (:func:`untangled`) and steps along more than one
    element: the innermost such."""
    space = copy.get_iteration_space()
    for j in reversed(range(len(source.coords))):
        if (j == layout.stick_dim) != on_stick:
            continue
        nest = row_major_nest(source.coords, j, layout.host_shape[j], space)
        if nest is None:
            continue
        coords = nest.unflatten(source.coords)
        inner = coords[nest.inner]
        tangled = nested_dims([*coords, *written])
        if space[stick_driver(inner)] > 1 and untangled(copy, inner, tangled, layout.elems_per_stick):
            return nest
    return None


def pads_inner_term(copy: ComputeOp, source: Read, stick: int, written: Sequence[Linear],
                    written_stick: int | None, elems_per_stick: int) -> bool:
    """Whether ``copy``, reading ``source`` sticked on ``stick`` and writing its result sticked on
    ``written_stick``, pads that stick's driver to whole sticks past the next term of another
    storage coordinate it is a term of (``9 * h + t`` with the taps ``t`` padded to 64): its
    padding would step into the next term, which no label describes."""
    driver = None if written_stick is None else stick_driver(written[written_stick])
    if driver in (None, BROADCAST):
        return False
    padded = round_up(copy.get_iteration_space()[driver], elems_per_stick)
    for coord in (c for j, c in enumerate(source.coords) if j != stick):
        k = coord.coefficient(Dim(driver))
        outer = [c for _, c in coord.terms if c > k]
        if k and outer and k * padded > min(outer):
            return True
    return False


def wide_dim(layout: StickLayout) -> int | None:
    """The innermost dim of more than one element other than the stick dim of a storage laid out
    per ``layout``: sticked on it, the storage may be unflattened along its stick dim."""
    others = [j for j, n in enumerate(layout.host_shape) if j != layout.stick_dim and n > 1]
    return others[-1] if others else None


def nest_padding(layout: StickLayout, coords: Sequence[Linear], stick: int) -> tuple[int, ...]:
    """The padding of a storage laid out per ``layout`` once restickified onto ``stick`` for a
    reader at ``coords``: its own, with each dim the reader steps through at a nest of terms
    (heads ``h * 80 + d``) rounded up to the nest's outermost coefficient, from what the copy
    writes of it (its old stick dim in whole sticks): 2 heads of 80 in a dim of 160 that the
    copy writes 192 of take 240, whole heads, which a layout label describes (192 is not); a dim
    it reads every k-th element, to whole steps of k (the lowering labels it in steps)."""
    extents = list(layout.padded_host_shape)
    for j, coord in enumerate(coords):
        if j == stick:
            continue
        outer = nest_row(coord) if len(coord.terms) != 1 else abs(coord.terms[0][1])
        written = round_up(extents[j], layout.elems_per_stick) if j == layout.stick_dim else extents[j]
        if written % outer:
            extents[j] = round_up(written, outer)
    return tuple(extents)


@dataclass
class CopyMaker:
    """Makes the copies of storage that step 3 inserts, each once, and records them in
    ``restickifies``: a storage restickified to a layout, unflattened along a nest, given one
    more dim of one element sticked on it, and copies of views; and re-reads an operand's view
    chain from a copy of its storage."""

    plan: Plan
    rewriter: Rewriter
    restickifies: list[RestickifyOp] = field(default_factory=list)
    """Restickifies and view copies inserted, in order."""
    shared: dict[tuple[SSAValue, StickLayout | str], SSAValue] = field(default_factory=dict)
    """The restickify of each storage to each layout (or to one more dim of one element, sticked on
    it: ``"unit stick"``, :meth:`with_unit_stick`), shared by its readers."""
    unflats: dict[tuple[SSAValue, int, tuple[int, ...]], SSAValue] = field(default_factory=dict)
    """Each storage unflattened along a dim into factors (:meth:`unflattened`), shared by its readers."""

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
            self.rewriter.insert_op(op, _definition_end(op.inputs[0]))
            self.restickifies.append(op)
            self.shared[key] = op.result
        return self.shared[key]

    def unflattened(self, storage: SSAValue, nest: Nest, reader: ComputeOp) -> SSAValue:
        """``storage`` with its dim ``nest.dim`` unflattened into ``nest.factors``, sticked on the
        innermost of them, which is padded to whole sticks; shared by all readers.

        A copy keeps the storage's stick (``nest.dim`` is not it) and drives no stick with a
        term of the nest, so it pads none and writes each row where the nest reads it; a
        restickify of the copy onto the innermost factor then pads that factor per value of the
        outer ones (rows ``b * 100 + l`` become 2 x 128 rows sticked on ``l``).
        """
        key = (storage, nest.dim, nest.factors)
        if key not in self.unflats:
            layout = self.plan.layouts[storage]
            assert layout.stick_dim is not None and layout.stick_dim != nest.dim
            shape = nest.shape(value_shape(storage))
            stick = layout.stick_dim + (len(nest.factors) - 1 if layout.stick_dim > nest.dim else 0)
            padded = [*shape]
            padded[nest.inner] = round_up(shape[nest.inner], layout.elems_per_stick)

            def sticked(s: int) -> StickLayout:
                return stick_layout(shape, layout.dtype, dim_order(len(shape), s), padded_shape=padded)

            assert isinstance(storage.type, TensorType)
            copy = RestickifyOp(storage, TensorType(storage.type.get_element_type(), shape, layout_attr(sticked(stick))))
            copy.set_indexing(shape, [to_map(nest.flat(len(layout.host_shape)), len(shape)),
                                      to_map([dim(i) for i in range(len(shape))], len(shape))])
            copy.location = reader.location
            self.rewriter.insert_op(copy, _definition_end(storage))
            self.settle_copy(copy, sticked(stick))
            self.restickifies.append(copy)
            self.unflats[key] = self.restickified(copy.result, sticked(nest.inner), reader)
        return self.unflats[key]

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

    def with_unit_stick(self, storage: SSAValue, reader: ComputeOp) -> SSAValue:
        """``storage`` with one more dim of one element, sticked on it: a copy that reads it pads
        none of its dims to whole sticks, so it may merge any of them."""
        assert isinstance(storage.type, TensorType)
        shape = value_shape(storage)
        rank = len(shape)
        key = (storage, "unit stick")
        if key not in self.shared:
            copy = RestickifyOp(storage, TensorType(storage.type.get_element_type(), [*shape, 1]))
            identity = tuple(AffineExpr.dimension(d) for d in range(rank + 1))
            copy.set_indexing([*shape, 1], [AffineMap(rank + 1, 0, identity[:rank]), AffineMap(rank + 1, 0, identity)])
            copy.location = reader.location
            _inherit_scope(copy, storage, reader)
            if copy.dims is not None:
                copy.dims = ArrayAttr([*copy.dims.data, ArrayAttr([])])
            self.settle_copy(copy, value_layout(copy.result, rank))
            self.rewriter.insert_op(copy, _definition_end(storage))
            self.restickifies.append(copy)
            self.shared[key] = copy.result
        return self.shared[key]

    def copy_view(self, value: SSAValue, before: Operation) -> RestickifyOp:
        """A ``spyre.restickify`` copy of the view ``value``, inserted before ``before``, its layout
        in the plan (not fixed): sticked like the view (:func:`view_stick`), as spyre-fold-views
        would stick it."""
        rank = len(value_shape(value))
        read = read_through_views(value, [dim(i) for i in range(rank)], list(value_shape(value)))
        storage_stick = self.plan.stick(read.storage)
        copy = materialise_view(self.rewriter, value, before, storage_stick)
        assert isinstance(value.owner, ViewOp)
        self.plan.layouts[copy.result] = value_layout(value, view_stick(value.owner, storage_stick))
        return copy


@dataclass
class Copier(CopyMaker):
    """Inserts the restickifies and view copies of step 3 (made by :class:`CopyMaker`): an
    operand's that does not fit its op's rule, the padding an op steps along, and the copies of
    returned views."""

    def fix_operand(self, op: ComputeOp, index: int, read: Read, required: int) -> None:
        """Step 3: restickify operand ``index``'s storage, or copy its view, to be driven by ``required``.

        A view that reads one element of the storage dim that would follow ``required`` (a channel
        of a ``[1, 2, 33]`` tensor, for a result sticked on a dim of one element) is copied: read
        from a stick of that dim, the op would iterate all of it.
        When no storage dim follows ``required`` but the view reads one at a row-major nest whose
        innermost term it is (rows ``b * 100 + l``), the op reads the storage unflattened there
        (:meth:`unflatten_operand`).  The view is copied when no storage dim follows ``required``
        otherwise, or when spyre-fold-views would copy the view of the restickified storage too
        (:func:`copy_reason`): one copy, not two.
        A copy never reads or writes a stick that one of its dims fills in part while sharing a
        coordinate with another dim (:func:`untangled`: a head of 32 in sticks of 64, read from or
        merged back into the hidden dim): it then reads its storage sticked otherwise
        (:meth:`untangle_source`), or writes a tensor sticked on another dim (one of one element
        if need be: a single token) that a second restickify sticks as the op needs
        (:func:`untangled_stick`).
        """
        storage_dims, view_dims = followers(self.plan, op, index, read, required)
        operand = op.operands[index]
        why = f"that no stick dim of its storage {list(value_shape(read.storage))} can serve"
        if storage_dims and view_dims and op.get_iteration_space()[required] == 1 < \
                value_shape(read.storage)[storage_dims[0]]:
            storage_dims = []  # one element of a wider stick: the op would iterate the whole stick
            why = "that reads one element of a stick dim of its storage"
        if storage_dims:
            storage = self.plan.layouts[read.storage]
            layout = value_layout(read.storage, storage_dims[0], nest_padding(storage, read.coords, storage_dims[0]))
            refolded = copy_reason(op, index, lambda v: layout if v is read.storage else self.plan.layouts[v]) \
                if view_dims else None
            if refolded is None:
                self.reread(op, index, read, self.restickified(read.storage, layout, op))
                return
            why = refolded  # spyre-fold-views would copy the view of the restickified storage too
        elif self.unflatten_operand(op, index, read, required):
            return
        if not view_dims and self.broadcast_through_unit_stick(op, index, read, required):
            return
        if not read.views or not view_dims:
            raise SpyreError(f"operand #{index} cannot be sticked on iteration dim {required}: no dim of "
                             f"its storage {list(value_shape(read.storage))} follows it", op=op)
        layout = value_layout(operand, view_dims[0])
        emit_warning(f"operand #{index} is a view {why}; it is copied by spyre.restickify", op=op)
        copy = self.untangle_source(op, index, read, materialise_view(self.rewriter, operand, op))
        _, (source,), written = op_reads(copy)
        tangled = nested_dims([*source.coords, *written])
        self.restickifies.append(copy)
        if not untangled(copy, written[view_dims[0]], tangled, layout.elems_per_stick):
            other = untangled_stick(copy, written, tangled, layout.elems_per_stick, narrow=True)
            if other is None:  # every dim it writes is tangled
                self.write_through_unit_dim(op, index, copy, view_dims[0])
                return
            self.plan.layouts[copy.result] = value_layout(operand, other)
            op.operands[index] = self.restickified(copy.result, layout, op)  # pads the copy as it reads it
            staged = self.plan.layouts.pop(copy.result)
            self.rewriter.replace_value_with_new_type(copy.result, with_layout(operand, staged))
            self.settle_copy(copy, staged)
            return
        self.rewriter.replace_value_with_new_type(copy.result, with_layout(operand, layout))
        self.settle_copy(copy, layout)
        op.operands[index] = copy.result

    def broadcast_through_unit_stick(self, op: ComputeOp, index: int, read: Read, required: int) -> bool:
        """Let pointwise ``op`` read operand ``index``, broadcast along ``required`` (a bias row
        ``b[10:74]`` added to rows sticked on their row dim), from its storage with one more dim
        of one element, sticked on it (:meth:`with_unit_stick`): its stick coordinate is then the
        constant 0, which a pointwise op broadcasts; a copy of a returned view that broadcasts one
        element (``x[0:1][None].expand(3, 1)``) reads it so too.  False when the op is neither or
        reads the operand along ``required``."""
        if (op.op_func().kind is not OpKind.POINTWISE and not isinstance(op, RestickifyOp)) or any(
                isinstance(a, Dim) and a.pos == required for coord in read.coords for a in atoms(coord)):
            return False
        operand = op.operands[index]
        shape = value_shape(operand)
        coords = read_through_views(operand, [dim(d) for d in range(len(shape))], shape).coords
        unit = ViewOp(self.with_unit_stick(read.storage, op), to_map([*coords, Linear.constant(0)], len(shape)),
                      operand.type)
        unit.location = op.location
        self.rewriter.insert_op(unit, InsertPoint.before(op))
        op.operands[index] = unit.result
        return True

    def writes_tangled(self, copy: RestickifyOp, stick: int) -> bool:
        """Whether ``copy`` would write its result sticked on ``stick`` tangled (:func:`untangled`)."""
        _, (source,), written = op_reads(copy)
        tangled = nested_dims([*source.coords, *written])
        return not untangled(copy, written[stick], tangled, self.plan.layouts[copy.result].elems_per_stick)

    def write_through_unit_dim(self, op: Operation, index: int, copy: RestickifyOp, stick: int) -> None:
        """Make ``copy``, of operand ``index``'s view, which writes every dim of it tangled (a
        flatten of [8, 96] sticked on its 96 columns into 768: each stick of the result holds parts
        of two rows), write the view's shape and one more dim of one element, sticked on that dim
        (one element per stick: no stick holds two of the copy's dims), which an iteration dim of
        one element labels; a second restickify sticks it on ``stick`` and the op reads that
        through a view dropping the dim."""
        operand = op.operands[index]
        assert isinstance(operand.type, TensorType)
        shape = value_shape(operand)
        rank = len(shape)
        source_map, written_map = copy.get_indexing_maps()
        space = list(copy.get_iteration_space())
        unit = AffineExpr.dimension(len(space))
        wide = RestickifyOp(self.with_unit_stick(copy.inputs[0], op),
                            TensorType(operand.type.get_element_type(), [*shape, 1]))
        wide.set_indexing([*space, 1], [AffineMap(len(space) + 1, 0, (*source_map.results, unit)),
                                        AffineMap(len(space) + 1, 0, (*written_map.results, unit))])
        wide.location = copy.location
        if copy.dims is not None:
            wide.dims = ArrayAttr([*copy.dims.data, ArrayAttr([])])
        if copy.hints is not None:
            wide.hints = copy.hints
        self.rewriter.insert_op(wide, InsertPoint.before(copy))
        self.restickifies.remove(copy)
        self.rewriter.erase_op(copy)
        self.restickifies.append(wide)
        self.settle_copy(wide, value_layout(wide.result, rank))
        sticked = self.restickified(wide.result, value_layout(wide.result, stick), op)
        narrow = ViewOp(sticked, AffineMap(rank, 0, (*(AffineExpr.dimension(d) for d in range(rank)),
                                                     AffineExpr.constant(0))), operand.type)
        narrow.location = copy.location
        self.rewriter.insert_op(narrow, InsertPoint.before(op))
        op.operands[index] = narrow.result

    def untangle_source(self, op: ComputeOp, index: int, read: Read, copy: RestickifyOp,
                        written_stick: int | None = None) -> RestickifyOp:
        """Make ``copy``, of operand ``index``'s view, read its storage at an untangled stick
        (:func:`untangled`), one element at a time (not :func:`strided`) from a stick's first
        element (a slice at offset 1 of a sequence sticked on it starts no stick): a restickify of the storage onto another dim the copy steps along
        untangled (:func:`untangled_stick`); else the storage unflattened along a nest whose
        innermost term is untangled then (:func:`untangling_nest`, rows ``b * 100 + l``); else a
        restickify onto a dim of one element (:func:`one_element_dim`, one token), of which the
        view is copied again (a storage stick it reads at a constant gets a label).  When the
        copy's result must be sticked on ``written_stick`` (None: the caller may stick it
        otherwise), a restickify is not chosen if the copy would pad that stick's driver while it
        still shares a storage coordinate with another dim (:func:`pads_inner_term`).  Else, when the
        nest is on the stick dim itself (ConvBERT's kernels, 6 heads of 9 taps in a stick of 54
        read as rows of 9), the storage restickified onto another dim (:func:`wide_dim`) and
        unflattened there.  Returns the copy, which keeps its tangled read when none of these
        exists."""
        _, (source,), written = op_reads(copy)
        layout = self.plan.layouts[source.storage]
        tangled = nested_dims([*source.coords, *written])
        stick = None if layout.stick_dim is None else source.coords[layout.stick_dim]
        if stick is None or (not strided(stick) and stick.const % layout.elems_per_stick == 0
                             and untangled(copy, stick, tangled, layout.elems_per_stick)):
            return copy
        if (other := untangled_stick(copy, source.coords, tangled, layout.elems_per_stick,
                                     avoid=layout.stick_dim)) is not None and not pads_inner_term(
                copy, source, other, written, written_stick, layout.elems_per_stick):
            restuck = value_layout(source.storage, other, nest_padding(layout, source.coords, other))
            self.reread(copy, 0, source, self.restickified(source.storage, restuck, op))
        elif (nest := untangling_nest(copy, source, written, layout)) is not None:
            self.read_unflattened(copy, source, self.unflattened(source.storage, nest, op), nest)
        elif (narrow := one_element_dim(source, layout)) is not None and not pads_inner_term(
                copy, source, narrow, written, written_stick, layout.elems_per_stick):
            self.rewriter.erase_op(copy)
            restuck = value_layout(read.storage, narrow, nest_padding(layout, read.coords, narrow))
            self.reread(op, index, read, self.restickified(read.storage, restuck, op))
            return materialise_view(self.rewriter, op.operands[index], op)
        elif (nest := untangling_nest(copy, source, written, layout, on_stick=True)) is not None \
                and (other := wide_dim(layout)) is not None:
            restuck = self.restickified(
                source.storage, value_layout(source.storage, other, nest_padding(layout, source.coords, other)), op)
            self.read_unflattened(copy, source, self.unflattened(restuck, nest, op), nest)
        return copy

    @staticmethod
    def read_unflattened(copy: RestickifyOp, source: Read, unflattened: SSAValue, nest: Nest) -> None:
        """Make ``copy``, which reads ``source``, read ``unflattened`` instead: its storage with the
        dim of ``nest`` unflattened into the nest's factors."""
        space = list(copy.get_iteration_space())
        copy.operands[0] = unflattened
        copy.set_indexing(space, [to_map(nest.unflatten(source.coords), len(space)), copy.get_indexing_maps()[1]])

    def unflatten_operand(self, op: ComputeOp, index: int, read: Read, required: int) -> bool:
        """Make operand ``index``, a view, read its storage unflattened (:meth:`unflattened`) along a
        dim its view reads at a row-major nest (:func:`row_major_nest`) whose innermost term
        ``required`` drives: the rows ``b * 100 + l`` of a projection read as [B, H, L, D] by an op
        driven by ``l``.  False when its view reads no such dim."""
        if not read.views:
            return False
        operand = op.operands[index]
        shape = value_shape(operand)
        own = read_through_views(operand, [dim(i) for i in range(len(shape))], shape).coords
        storage = self.plan.layouts[read.storage]
        space = op.get_iteration_space()
        for j in reversed(dims_driven_by(read.coords, required)):
            if j == storage.stick_dim:
                continue
            nest = row_major_nest(own, j, storage.host_shape[j], shape)
            reader = row_major_nest(read.coords, j, storage.host_shape[j], space)
            if nest is None or reader is None or reader.factors != nest.factors:
                continue
            view = ViewOp(self.unflattened(read.storage, nest, op), to_map(nest.unflatten(own), len(shape)),
                          operand.type)
            view.location = read.views[0].location
            self.rewriter.insert_op(view, InsertPoint.before(op))
            op.operands[index] = view.result
            return True
        return False

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

    def misread(self, read: Read) -> bool:
        """Whether ``read``'s stick coordinate is one that neither the op nor a copy reading the same
        coordinate reads as is: every k-th element (:func:`strided`), or from an element past a
        stick's first (a slice at offset 1 of a sequence sticked on it, or one column of a
        narrow tensor broadcast: a top-k slot's expert index)."""
        layout = self.plan.layouts[read.storage]
        if layout.stick_dim is None:
            return False
        coord = read.coords[layout.stick_dim]
        return coord.const % layout.elems_per_stick != 0 or bool(coord.terms) and strided(coord)

    def copy_padded_views(self, op: ComputeOp) -> list[RestickifyOp]:
        """Copy here each view operand that spyre-fold-views would copy (:func:`copy_reason`) and
        that the op steps along a dim it pads (its storage may reach that far where the view's own
        layout, which the copy would take, does not: row 3 of an fp32 tensor cast to fp16), each
        one that shares a coordinate between a dim the op pads and another (``h * 32 + d`` with
        ``d`` padded to a stick of 64: the padding would read the next head), and each one
        :meth:`misread`: the copy is the tensor the op reads, so it is the one :meth:`pad` pads
        (the view's storage needs nothing; a matmul's right-hand side whose storage holds data
        past K is read in place, spyre-mask-contractions having zeroed the left-hand side's
        padding there).  A copy reading its storage tangled reads it sticked
        otherwise (:meth:`untangle_source`: GPT-NeoX's rotary part, 16 of each 64-element head of
        a fused QKV projection).  Returns the copies."""
        _, reads, _ = op_reads(op)
        padded = set(padded_dims(self.plan, op))
        copied = {i for i, read in enumerate(reads) if read.views and nested_dims(read.coords) & padded}
        copied |= {i for i, read in enumerate(reads) if read.views and {stick_driver(c) for c in read.coords} & padded
                   and copy_reason(op, i, self.plan.layouts.__getitem__) is not None}
        copied |= {i for i, read in enumerate(reads) if read.views and self.misread(read)}
        copies = []
        for index in sorted(copied):
            copy = self.copy_view(op.operands[index], op)
            layout = self.plan.layouts.pop(copy.result)
            copy = self.untangle_source(op, index, reads[index], copy, layout.stick_dim)
            self.plan.layouts[copy.result] = layout
            op.operands[index] = copy.result
            self.restickifies.append(copy)
            copies.append(copy)
        return copies

    def reads_inside_a_stick(self, copy: RestickifyOp) -> Read | None:
        """The read of ``copy``'s storage when it is at one fixed position of a stick dim of more
        than one element (a column ``x[:, 121]`` of a tensor sticked on its columns), which no
        iteration dim of the copy labels; None otherwise."""
        _, (read,), _ = op_reads(copy)
        stick = self.plan.stick(read.storage)
        if stick is None or value_shape(read.storage)[stick] == 1 or read.coords[stick].terms:
            return None
        return read

    def materialise_returned(self, ret: func.ReturnOp) -> None:
        """Copy here each returned view whose copy iterates padding its storage lacks, so that the
        storage gets it; each one whose copy would write the stick it drives tangled, through a
        dim of one element (:meth:`write_through_unit_dim`); each one that reads its storage's
        stick every k-th element or from past a stick's first (:meth:`misread`), from its storage
        sticked otherwise (:meth:`untangle_source`, as a compute op's copy of that view); and each
        one that reads one position of its storage's stick (:meth:`reads_inside_a_stick`), from its storage restickified
        onto a dim the copy iterates (:meth:`fix_operand`, as a compute op reading that view
        would).  spyre-fold-views copies the others.  The copy is the kernel output."""
        for index, value in enumerate(ret.operands):
            if not isinstance(value.owner, ViewOp) or not value_shape(value):
                continue
            copy = self.copy_view(value, ret)
            stick = self.plan.layouts[copy.result].stick_dim
            if stick is not None and self.writes_tangled(copy, stick):
                del self.plan.layouts[copy.result]
                self.restickifies.append(copy)
                self.write_through_unit_dim(ret, index, copy, stick)
                continue
            _, (source,), _ = op_reads(copy)
            misread = self.misread(source)
            if misread:
                layout = self.plan.layouts.pop(copy.result)
                copy = self.untangle_source(ret, index, source, copy, stick)
                self.plan.layouts[copy.result] = layout
            inside = self.reads_inside_a_stick(copy)
            if inside is None and not misread and not missing_padding(self.plan, copy):
                del self.plan.layouts[copy.result]
                self.rewriter.erase_op(copy)
                continue
            if inside is not None and stick is not None:
                self.fix_operand(copy, 0, inside, stick_driver(op_reads(copy)[2][stick]))
            ret.operands[index] = copy.result
            self.settle_copy(copy, self.plan.layouts[copy.result])
            self.restickifies.append(copy)
