# Storage of every value (DESIGN §9, §10, §14): where each tensor a compute op
# reads or writes lives once memory planning has placed it, traced through
# scf.for nests (iter_args, extract/insert_slice windows, loop results),
# concatenation buffers and restickifies placed in their operand's buffer (copies
# that move no byte, which run nothing).  Read by spyre-plan-memory, which answers the questions
# the trace asks (StoragePlanner: a fill's kernel argument, the fresh buffer a
# loop accumulator ends in, a zeroed value's buffer) and records the answers,
# and by spyre-lower-to-bundle, which reads them.  Reads the IR (placements,
# the function attribute `spyre.constants`, `spyre.buffers` on scf.for);
# writes nothing itself.
"""Where values live: the storage trace.

Kernel arguments, in manifest order (:mod:`~spyre_mlir.analysis.kernel_args`):
the function's arguments, its results, then one ``constant`` per entry of the
function attribute ``spyre.constants`` (a buffer the runtime fills, stacked
once per iteration of the loops around its value), then the HBM pool.

A compute result lives at its ``placement`` (``<lx, off>``, ``<hbm, arg N>``,
``<hbm, pool off>``), unless it leaves its region (a loop-body value inserted
into an accumulator or yielded, a piece of a concatenation): it is then written
straight into its destination.  A value read through ``tensor.extract_slice``
is a window of its source's storage: constant offsets move the window, offsets
affine in the loop induction variables add a byte stride per loop level.  A
loop accumulator starting from a ``tensor.empty`` lives where its loop result
ends: the output it is returned as, the window of an enclosing accumulator,
else the buffer memory planning gave that loop result (its loop's ``spyre.buffers``).
A restickify placed in its operand's buffer (memory planning's decision for a copy that moves no
byte, :mod:`~spyre_mlir.analysis.reinterpret`) is its operand's bytes in its own layout: no op runs
for it.  A ``spyre.fill`` lives in the kernel argument of its ``placement``: a constant,
or the output its accumulator ends in (the runtime initialises that output).

:class:`StorageTrace` walks a function in program order and asks a
:class:`StoragePlanner` for what memory planning must decide and has not yet
recorded; without one (in the lowering), an unrecorded decision is an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from xdsl.dialects import affine, arith, func, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
    UnitAttr,
    f64,
    i64,
)
from xdsl.ir import Block, Operation, OpResult, SSAValue

from spyre_mlir.analysis.assembly import Assembly, assembled_by, assemblies, assembly_of
from spyre_mlir.analysis.kernel_args import constant_name, fixed_argument_count, output_arguments, \
    output_results, result_name
from spyre_mlir.analysis.linear import Linear, affine_linear
from spyre_mlir.analysis.loops import carried_argument, carried_init, carried_result, constant_index
from spyre_mlir.analysis.reinterpret import copy_reinterprets
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import (
    ComputeOp,
    FillOp,
    Memory,
    PlacementAttr,
    PlacementKind,
    RestickifyOp,
    tensor_layout,
)
from spyre_mlir.hardware import round_up
from spyre_mlir.layout import StickLayout, device_offset

CONSTANTS_ATTR = "spyre.constants"
"""Function attribute: the ``constant`` kernel arguments memory planning created, in order."""

BUFFERS_ATTR = "spyre.buffers"
"""Attribute of an ``scf.for``, one entry per result: the ``#spyre.placement`` of the buffer of its
own that the result's accumulator (started from a ``tensor.empty``) ends in, ``unit`` for a result
that ends in an output or a window of an enclosing accumulator."""


@dataclass(frozen=True)
class TensorStorage:
    """Where one tensor of a compute op lives."""

    layout: StickLayout
    """Layout of the storage tensor (the whole tensor, of which the op may read a window)."""
    memory: Memory
    placement: PlacementAttr
    """``#spyre.placement`` of the storage."""
    window: tuple[int, ...]
    """Host coordinates, in the storage, of the window's first element."""


@dataclass(frozen=True)
class Loc:
    """Where a (tile) tensor value lives: its storage window and byte stride per loop level."""

    storage: TensorStorage
    strides: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Constant:
    """A ``constant`` kernel argument: one buffer of a ``tensor_type`` value per iteration of the
    loops of trip ``counts`` around the value (outermost first), one after another, each filled
    with ``fill`` by the runtime (every device element, padding included)."""

    tensor_type: TensorType
    fill: float
    counts: tuple[int, ...] = ()

    @property
    def layout(self) -> StickLayout:
        """The layout of one buffer."""
        return tensor_layout(self.tensor_type)

    @property
    def stack(self) -> int:
        """How many buffers."""
        return math.prod(self.counts)

    def strides(self) -> tuple[tuple[int, int], ...]:
        """The byte step of the window per loop level: one buffer per iteration, inner loops fastest."""
        if self.stack == 1:
            return ()
        strides, step = {}, self.layout.nbytes
        for level in reversed(range(len(self.counts))):
            strides[level] = step
            step *= self.counts[level]
        return tuple(sorted(strides.items()))

    def to_attr(self) -> DictionaryAttr:
        """The entry of ``spyre.constants``."""
        return DictionaryAttr({"type": self.tensor_type, "fill": FloatAttr(self.fill, f64),
                               "counts": ArrayAttr(IntegerAttr(c, i64) for c in self.counts)})

    @staticmethod
    def from_attr(attr: DictionaryAttr) -> Constant:
        """The constant an entry of ``spyre.constants`` records."""
        tensor_type, fill, counts = attr.data.get("type"), attr.data.get("fill"), attr.data.get("counts")
        if not (isinstance(tensor_type, TensorType) and isinstance(fill, FloatAttr) and isinstance(counts, ArrayAttr)
                and all(isinstance(c, IntegerAttr) for c in counts.data)):
            raise SpyreError(f"an entry of {CONSTANTS_ATTR} needs type = tensor<...>, fill = <float> and "
                             f"counts = [<int>, ...], got {attr}")
        return Constant(tensor_type, float(fill.value.data), tuple(c.value.data for c in counts.data))


def recorded_constants(body: func.FuncOp) -> list[Constant]:
    """The ``constant`` kernel arguments recorded on ``body`` (``spyre.constants``), in order."""
    attr = body.attributes.get(CONSTANTS_ATTR)
    if attr is None:
        return []
    if not isinstance(attr, ArrayAttr) or not all(isinstance(a, DictionaryAttr) for a in attr.data):
        raise SpyreError(f"{CONSTANTS_ATTR} must be an array of dictionaries", op=body)
    return [Constant.from_attr(a) for a in attr.data]


def _accumulated_result(empty: tensor.EmptyOp) -> OpResult:
    """The loop result an accumulator started from ``empty`` ends as (its one use is a loop init)."""
    (use,) = empty.tensor.uses
    result = carried_result(use)
    assert result is not None
    return result


def recorded_buffer(empty: tensor.EmptyOp) -> PlacementAttr | None:
    """The buffer recorded for the loop accumulator started from ``empty`` (None when there is none)."""
    result = _accumulated_result(empty)
    entries = result.op.attributes.get(BUFFERS_ATTR)
    if not isinstance(entries, ArrayAttr) or len(entries.data) != len(result.op.results):
        return None
    entry = entries.data[result.index]
    return entry if isinstance(entry, PlacementAttr) else None


def record_placement(op: Operation, placement: PlacementAttr) -> None:
    """Record ``placement`` for the value of ``op``: a compute op's or fill's ``placement``; for a
    ``tensor.empty``, the entry of its loop result in the loop's ``spyre.buffers``."""
    if not isinstance(op, tensor.EmptyOp):
        assert isinstance(op, ComputeOp | FillOp)
        op.placement = placement
        return
    result = _accumulated_result(op)
    loop = result.op
    entries = loop.attributes.get(BUFFERS_ATTR)
    old = entries.data if isinstance(entries, ArrayAttr) and len(entries.data) == len(loop.results) else ()
    loop.attributes[BUFFERS_ATTR] = ArrayAttr(
        placement if i == result.index else (old[i] if old else UnitAttr()) for i in range(len(loop.results)))


class StoragePlanner(Protocol):
    """Memory planning's answer to what the trace finds unplaced (spyre-plan-memory)."""

    constants: list[Constant]
    """The ``constant`` kernel arguments it created, in order (after the function's results)."""

    def buffer(self, holders: Sequence[Operation], tensor_type: TensorType, fill: float | None,
               counts: tuple[int, ...], pool_end: int) -> PlacementAttr:
        """The buffer of a ``tensor_type`` value that is no compute result memory planning placed:
        a fill (``fill`` its value), a zeroed value, or the ``tensor.empty`` a loop accumulator ends
        in (``fill``: the value of a fill accumulator ending there, else None).  One buffer per
        iteration of the loops of trip ``counts`` around it; a pool block goes above ``pool_end``.
        The placement is recorded on each of ``holders``."""
        ...

    def shares_operand_buffer(self, copy: Operation) -> bool:
        """True when ``copy``, a restickify that moves no byte of a loop's result, takes the buffer
        of that result (decided by memory planning, placed by the trace once the loop's buffer is)."""
        ...


@dataclass(frozen=True)
class Traced:
    """One compute op as the trace found it: where each tensor lives (operands, then result)."""

    op: ComputeOp
    locs: tuple[Loc, ...]
    depth: int
    """How many loops enclose it."""


@dataclass(frozen=True)
class TracedLoop:
    """One ``scf.for 0 .. count step 1`` and what its body runs, in order."""

    count: int
    items: list[Traced | TracedLoop]


def _whole_argument(layout: StickLayout, index: int) -> TensorStorage:
    """The storage of a value that is all of kernel argument ``index`` (in HBM)."""
    return TensorStorage(layout, Memory.HBM, PlacementAttr(PlacementKind.ARG, index), (0,) * len(layout.host_shape))


def _loop_depth(value: SSAValue) -> int:
    """How many ``scf.for`` loops enclose the definition of ``value``."""
    depth, parent = 0, value.owner.parent_op() if isinstance(value.owner, Operation) else None
    while isinstance(parent, scf.ForOp):
        depth, parent = depth + 1, parent.parent_op()
    return depth


def _leaves(value: SSAValue, outputs: dict[SSAValue, int]) -> bool:
    """True when ``value`` leaves its region (:meth:`StorageTrace.destination` finds where it goes):
    it is returned, inserted into a larger tensor or yielded by a loop."""
    return value in outputs or any((isinstance(u.operation, tensor.InsertSliceOp) and u.index == 0)
                                   or carried_argument(u) is not None for u in value.uses)


def storage_value(value: SSAValue) -> SSAValue:
    """The value whose buffer holds ``value``'s elements, by the rules :class:`StorageTrace` places
    values by, from the IR alone (before memory planning): a slice, a loop-carried value or a loop
    result lives in the buffer of the value it comes from; a compute result inside a loop (or a
    concatenation piece) that leaves its region, and a ``tensor.empty`` or ``spyre.fill`` whose
    loop result does, in the buffer it goes to; any other value in its own.  Its type is the
    storage layout, whose device strides every per-core span is measured in (work division)."""
    if (init := carried_init(value)) is not None:
        return storage_value(init)
    owner = value.owner
    if isinstance(owner, tensor.ExtractSliceOp):
        return storage_value(owner.source)
    if isinstance(owner, tensor.InsertSliceOp):
        return storage_value(owner.dest)
    if isinstance(owner, tensor.EmptyOp | FillOp):  # a loop accumulator's start lives where it ends
        results = [r for use in value.uses if (r := carried_result(use)) is not None]
        destination = _destination(results[0]) if len(results) == 1 else None
    elif isinstance(owner, ComputeOp) and (_loop_depth(value) or assembled_by(owner) is not None):
        destination = _destination(value)
    else:
        destination = None
    return value if destination is None else destination


def _destination(value: SSAValue) -> SSAValue | None:
    """:func:`storage_value` of where ``value`` goes when it leaves its region (inserted into a
    larger tensor or yielded by a loop), None when it does not."""
    for use in value.uses:
        if isinstance(use.operation, tensor.InsertSliceOp) and use.index == 0:
            return storage_value(use.operation.dest)
        if (carried := carried_argument(use)) is not None:
            return storage_value(carried)
    return None


def planned_pool_end(body: func.FuncOp, alignment: int) -> int:
    """The end of the HBM pool blocks memory planning placed values in, as the trace uses them:
    a compute result's own placement, unless it is a concatenation piece or a loop-body value that
    leaves its region (written straight into its destination), and each concatenation's buffer
    (its pieces' placement, at the full buffer's size)."""
    outputs = output_arguments(body)
    placed = [(copy.placement, assembly.empty.tensor) for assembly in assemblies(body)
              if assembly.value not in outputs and (copy := assembly.copies[0]).placement is not None]
    placed += [(op.placement, op.result) for op in body.walk()
               if isinstance(op, ComputeOp) and op.placement is not None and assembled_by(op) is None
               and not (_loop_depth(op.result) and _leaves(op.result, outputs))]
    return max((round_up(placement.value.data + tensor_layout(value.type).nbytes, alignment)
                for placement, value in placed if placement.placement_kind is PlacementKind.POOL), default=0)


def index_value(v: SSAValue, ivs: Mapping[SSAValue, int], anchor: Operation) -> Linear[int]:
    """An index value as ``constant + sum(coefficient x iv_level)``: ``ivs`` gives the loop level
    (depth, outermost 0) of each enclosing induction variable; ``anchor`` locates an error."""
    if v in ivs:
        return Linear.term(ivs[v])
    if (value := constant_index(v)) is not None:
        return Linear.constant(value)
    owner = v.owner
    if isinstance(owner, affine.ApplyOp):
        m = owner.map.data
        found = affine_linear(m.results[0]) if len(m.results) == 1 and not m.num_symbols else None
        if found is not None:
            total = Linear.constant(found.const)
            for d, c in found.terms:
                total = total + index_value(owner.mapOperands[d], ivs, anchor).scaled(c)
            return total
    raise SpyreError("a tile offset must be affine in the loop induction variables "
                     "(arith.constant, scf.for iv, affine.apply)", op=owner if isinstance(owner, Operation)
                     else anchor)


def slice_offsets(op: tensor.ExtractSliceOp | tensor.InsertSliceOp, ivs: Mapping[SSAValue, int],
                  anchor: Operation) -> list[Linear[int]]:
    """The offsets of a slice, per dim (:func:`index_value`)."""
    dynamic = iter(op.offsets)
    return [index_value(next(dynamic), ivs, anchor) if o == DYNAMIC_INDEX else Linear.constant(o)
            for o in op.static_offsets.get_values()]


def shifted(loc: Loc, offsets: Sequence[Linear[int]], op: Operation) -> Loc:
    """``loc``'s window moved by ``offsets``: their constants move the window, their loop terms
    add a byte stride per loop level (whole sticks along the stick dim)."""
    storage = loc.storage
    layout = storage.layout
    if len(offsets) != len(storage.window):
        raise SpyreError("rank-changing slices are not lowered", op=op)
    window = tuple(w + offset.const for w, offset in zip(storage.window, offsets))
    strides = dict(loc.strides)
    for level in sorted({level for offset in offsets for level in offset.keys()}):
        delta = [offset.coefficient(level) for offset in offsets]
        stick = layout.stick_dim
        if stick is not None and delta[stick] % layout.elems_per_stick:
            raise SpyreError(f"tile offsets along the stick dim step by {delta[stick]} elements per "
                             f"iteration, not whole sticks of {layout.elems_per_stick}", op=op)
        strides[level] = strides.get(level, 0) + device_offset(layout, delta)
    return Loc(TensorStorage(layout, storage.memory, storage.placement, window), tuple(sorted(strides.items())))


class StorageTrace:
    """Where every value of one function lives; :meth:`run` walks it in program order."""

    def __init__(self, body: func.FuncOp, alignment: int, planner: StoragePlanner | None = None):
        self.body, self.alignment, self.planner = body, alignment, planner
        self.outputs = output_arguments(body)
        self.fixed_args = fixed_argument_count(body)
        self.output_results = output_results(body)
        self.constants = planner.constants if planner is not None else recorded_constants(body)
        self.output_fills: dict[int, float] = {}
        """Outputs a fill accumulator ends in -> the value the runtime initialises them to."""
        self.pool_size = planned_pool_end(body, alignment)
        self.locs: dict[SSAValue, Loc] = {}
        for i, arg in enumerate(body.body.block.args):
            if isinstance(arg.type, TensorType):  # others are no kernel argument (the lowering refuses them)
                self.locs[arg] = Loc(_whole_argument(tensor_layout(arg.type), i))
        self.ivs: dict[SSAValue, int] = {}
        self.counts: list[int] = []

    def run(self) -> list[Traced | TracedLoop]:
        """Trace the function's body."""
        return self.block(self.body.body.block, 0)

    def missing(self, what: str, op: Operation) -> SpyreError:
        return SpyreError(f"{what} is not placed: run spyre-plan-memory before spyre-lower-to-bundle", op=op)

    # -- kernel arguments ---------------------------------------------------------------------

    def is_output(self, index: int) -> bool:
        """True when kernel argument ``index`` is one of the function's results."""
        return len(self.body.body.block.args) <= index < self.fixed_args

    def is_updated(self, index: int) -> bool:
        """True when kernel argument ``index`` is a buffer argument a result updates in place."""
        return index < len(self.body.body.block.args) and index in self.outputs.values()

    def is_constant(self, index: int) -> bool:
        """True when kernel argument ``index`` is a constant memory planning created."""
        return self.fixed_args <= index < self.fixed_args + len(self.constants)

    def constant(self, index: int) -> Constant:
        """The constant kernel argument ``index``."""
        return self.constants[index - self.fixed_args]

    def constant_loc(self, placement: PlacementAttr) -> Loc:
        """The storage of constant argument ``placement``: its first buffer, the window advancing
        by one buffer per iteration of the loops around the value."""
        constant = self.constant(placement.value.data)
        return Loc(_whole_argument(constant.layout, placement.value.data), constant.strides())

    def new_buffer(self, holders: Sequence[Operation], tensor_type: TensorType, fill: float | None,
                   counts: tuple[int, ...], what: str) -> PlacementAttr:
        """The planner's buffer for ``holders`` (:meth:`StoragePlanner.buffer`); an error without one."""
        if self.planner is None:
            raise self.missing(what, holders[0])
        return self.planner.buffer(holders, tensor_type, fill, counts, self.pool_size)

    # -- where values live ----------------------------------------------------------------------

    def placed(self, tensor_type: TensorType, placement: PlacementAttr, holders: Sequence[Operation]) -> Loc:
        """The storage of a ``tensor_type`` value at ``placement``, written on ``holders``."""
        layout = tensor_layout(tensor_type)
        origin = (0,) * len(layout.host_shape)
        kind, value = placement.placement_kind, placement.value.data
        if kind is PlacementKind.LX:
            return Loc(TensorStorage(layout, Memory.LX, placement, origin))
        if kind is PlacementKind.ZEROED:  # padding must read as zeros: a buffer the runtime zero-fills
            return self.constant_loc(self.new_buffer(holders, tensor_type, 0.0, (), "a zeroed value"))
        if kind is PlacementKind.POOL:
            self.pool_size = max(self.pool_size, round_up(value + layout.nbytes, self.alignment))
        elif self.is_constant(value):
            return self.constant_loc(placement)
        elif not self.is_output(value) and not self.is_updated(value):
            raise SpyreError(f"placement {placement} does not name an output kernel argument", op=holders[0])
        return Loc(TensorStorage(layout, Memory.HBM, placement, origin))

    def result_loc(self, op: ComputeOp) -> Loc:
        """Where a compute op's result lives when it stays in its region: its placement."""
        if op.placement is None:
            raise self.missing(f"the result of '{op.name}'", op)
        return self.placed(op.result.type, op.placement, [op])

    def assembled(self, assembly: Assembly) -> Loc:
        """Where a concatenation's buffer lives: the output its value is returned as, else the
        placement memory planning gave its pieces' copies (one buffer in HBM)."""
        copy = assembly.copies[0]
        if assembly.value in self.outputs or copy.placement is None:
            loc = self.destination(assembly.value, assembly.empty)
            assert loc is not None
            return loc
        if copy.placement.placement_kind is PlacementKind.LX:
            raise SpyreError("the buffer of a concatenation must live in HBM: its pieces write windows of it",
                             op=copy)
        return self.placed(assembly.empty.tensor.type, copy.placement, assembly.copies)

    def fill(self, op: FillOp) -> None:
        """A ``spyre.fill`` lives in a kernel argument the runtime initialises: the output its
        accumulator ends in, else a constant with one fresh buffer per iteration of the enclosing
        loops (the accumulator is re-initialised for free)."""
        dest = self.accumulator_destination(op)
        if dest is not None:  # accumulate in place in a buffer the runtime initialises to this value
            self.initialise(dest.storage.placement.value.data, op)
            if self.planner is not None:
                op.placement = dest.storage.placement
            elif op.placement != dest.storage.placement:
                raise self.missing(f"'{op.name}' accumulating into kernel argument "
                                   f"#{dest.storage.placement.value.data}", op)
            self.locs[op.result] = dest
            return
        placement = op.placement
        if self.planner is not None:
            placement = self.new_buffer([op], op.result.type, op.fill_value(), tuple(self.counts), f"'{op.name}'")
        elif placement is None or not self.is_constant(placement.value.data):
            raise self.missing(f"'{op.name}'", op)
        self.locs[op.result] = self.constant_loc(placement)

    def initialise(self, index: int, op: FillOp) -> None:
        """Kernel argument ``index`` starts as ``op``'s value: record it for an output (a padded one
        starts as zeros), check it for a constant."""
        if self.is_output(index):
            j = self.output_results[index - len(self.body.body.block.args)]
            padded = tensor_layout(self.body.function_type.outputs.data[j]).is_padded
            previous, name = self.output_fills.get(index, 0.0 if padded else None), result_name(self.body, j)
        else:
            previous, name = self.constant(index).fill, constant_name(index)
        if previous is not None and previous != op.fill_value():
            raise SpyreError(f"output '{name}' would need two initial values", op=op)
        if self.is_output(index):
            self.output_fills[index] = op.fill_value()

    def accumulator_destination(self, op: FillOp) -> Loc | None:
        """The output window a fill-initialised accumulator ends in, when its loop result is
        returned or inserted into an output (else None: a compute op reads the result)."""
        uses = list(op.result.uses)
        result = carried_result(uses[0]) if len(uses) == 1 else None
        if result is None:
            return None
        dest = self.destination(result, None, fill=op.fill_value())
        if dest is None:
            return None
        placement = dest.storage.placement
        if placement.placement_kind is not PlacementKind.ARG or not (
                self.is_output(placement.value.data) or self.is_constant(placement.value.data)):
            raise SpyreError("a reduction accumulator that leaves its loop into a buffer other than a "
                             "kernel output or a fresh buffer needs a copy; not lowered yet", op=op)
        return dest

    def loc_of(self, v: SSAValue, fill: float | None = None) -> Loc:
        """Where ``v`` lives; ``fill``: the value of the fill accumulator being traced to it (a fresh
        buffer it ends in is then filled with it)."""
        if v in self.locs:
            return self.locs[v]
        owner = v.owner
        if (init := carried_init(v)) is not None:
            loc = self.loc_of(init, fill)
        elif isinstance(owner, tensor.ExtractSliceOp):
            loc = shifted(self.loc_of(owner.source, fill), slice_offsets(owner, self.ivs, self.body), owner)
        elif isinstance(owner, tensor.InsertSliceOp):
            loc = self.loc_of(owner.dest, fill)
        elif isinstance(owner, tensor.EmptyOp) and (assembly := assembly_of(owner)) is not None:
            loc = self.assembled(assembly)
        elif isinstance(owner, tensor.EmptyOp):
            results = [r for u in v.uses if (r := carried_result(u)) is not None]
            if len(results) != 1 or len(list(v.uses)) != 1:
                raise SpyreError("a tensor.empty must initialise exactly one loop accumulator", op=owner)
            loc = self.destination(results[0], owner, fill)
        else:
            raise SpyreError(f"operand defined by '{getattr(owner, 'name', 'a block argument')}' is not a "
                             "kernel argument, a fill, a compute result or a slice of one "
                             "(spyre.view must be folded first)", op=owner if isinstance(owner, Operation)
                             else self.body)
        self.locs[v] = loc
        return loc

    def destination(self, value: SSAValue, empty: tensor.EmptyOp | None, fill: float | None = None) -> Loc | None:
        """Where a value that leaves its region goes: an output, an enclosing accumulator, else
        (when ``empty`` is the ``tensor.empty`` it started from) that one's own buffer, filled with
        ``fill`` when a fill accumulator ends there; None when it does not leave."""
        if value in self.outputs:
            return Loc(_whole_argument(tensor_layout(value.type), self.outputs[value]))
        for use in value.uses:
            user = use.operation
            if isinstance(user, tensor.InsertSliceOp) and use.index == 0:
                return shifted(self.loc_of(user.dest, fill), slice_offsets(user, self.ivs, self.body), user)
            if (carried := carried_argument(use)) is not None:
                return self.loc_of(carried, fill)
        if empty is None:
            return None
        return self.own_buffer(empty, fill)

    def own_buffer(self, empty: tensor.EmptyOp, fill: float | None) -> Loc:
        """The buffer of a ``tensor.empty`` whose loop accumulator ends nowhere else: memory
        planning's (``fill``: the value of a fill accumulator ending there)."""
        tensor_type = empty.tensor.type
        assert isinstance(tensor_type, TensorType)
        if self.planner is not None:
            counts = tuple(self.counts[:_loop_depth(empty.tensor)]) if fill is not None else ()
            placement = self.new_buffer([empty], tensor_type, fill, counts, "a tensor.empty")
        elif (placement := recorded_buffer(empty)) is None:
            raise self.missing("the buffer this loop accumulator ends in", empty)
        if not (placement.placement_kind is PlacementKind.POOL
                or (placement.placement_kind is PlacementKind.ARG and self.is_constant(placement.value.data))):
            raise SpyreError(f"{BUFFERS_ATTR} of a loop must place its results in HBM pool blocks or constant "
                             "kernel arguments", op=empty)
        return self.placed(tensor_type, placement, [empty])

    # -- the walk ---------------------------------------------------------------------------------

    def compute(self, op: ComputeOp, depth: int) -> Traced:
        locs = [self.loc_of(v) for v in op.inputs]
        dest = self.destination(op.result, None) if depth or assembled_by(op) is not None else None
        if dest is None:
            dest = self.result_loc(op)
        self.locs[op.result] = dest
        return Traced(op, (*locs, dest), depth)

    def reinterpreted(self, op: ComputeOp) -> bool:
        """True for a restickify memory planning placed in its operand's buffer (one that copies
        nothing, :mod:`spyre_mlir.analysis.reinterpret`): its result is its operand's bytes read in
        its own layout, and nothing runs for it."""
        if not isinstance(op, RestickifyOp):
            return False
        source = self.loc_of(op.inputs[0])
        if self.planner is not None and self.planner.shares_operand_buffer(op):
            op.placement = source.storage.placement
        if op.placement is None or op.placement != source.storage.placement:
            return False
        if source.strides or not copy_reinterprets(op):
            raise SpyreError("a restickify placed in its operand's buffer must copy nothing: its result's "
                             "device bytes must be its operand's", op=op)
        layout = tensor_layout(op.result.type)
        window = source.storage.window
        if len(window) != len(layout.host_shape):  # the same bytes in a tensor of another rank
            if any(window):
                raise SpyreError("a restickify to another rank placed in a window of its operand's buffer "
                                 "is not lowered", op=op)
            window = (0,) * len(layout.host_shape)
        self.locs[op.result] = Loc(replace(source.storage, layout=layout, window=window))
        return True

    def block(self, block: Block, depth: int) -> list[Traced | TracedLoop]:
        items: list[Traced | TracedLoop] = []
        for op in block.ops:
            if isinstance(op, func.ReturnOp | scf.YieldOp | arith.ConstantOp | affine.ApplyOp | tensor.EmptyOp
                          | tensor.ExtractSliceOp | tensor.InsertSliceOp):
                continue
            if isinstance(op, FillOp):
                self.fill(op)
            elif isinstance(op, scf.ForOp):
                lb, ub, step = (constant_index(v) for v in (op.lb, op.ub, op.step))
                if lb != 0 or ub is None or step != 1:
                    raise SpyreError("only scf.for 0 .. constant step 1 loops are lowered", op=op)
                self.ivs[op.body.block.args[0]] = depth
                self.counts.append(ub)
                items.append(TracedLoop(ub, self.block(op.body.block, depth + 1)))
                self.counts.pop()
            elif isinstance(op, ComputeOp):
                if not self.reinterpreted(op):
                    items.append(self.compute(op, depth))
            elif self.planner is None:  # memory planning leaves what it does not place to the lowering
                raise SpyreError(f"'{op.name}' cannot be lowered to the SDSC bundle: only compute ops "
                                 "(spyre.pointwise, reduce, matmul, restickify), spyre.fill and the scf.for "
                                 "nests of spyre-coarse-tile reach spyre-lower-to-bundle", op=op)
        return items
