# spyre-plan-memory (DESIGN §4 stage 6, §9): LX allocation, the HBM pool and every
# other buffer.  Reads every compute op's result: its users (liveness in program
# order), its type's layout (device bytes), `core_splits` and `core_replicas` of its writer and
# readers (per-core slices), the function's returned values (kernel arguments)
# and the module's `#spyre.target` (LX fraction: the usable LX per core).
# Writes `placement` on every compute op and `spyre.fill`: `#spyre.placement<lx,
# off>`, `<hbm, arg N>` (an output, or a constant the runtime fills) or `<hbm,
# pool off>`; `spyre.buffers` on an scf.for whose result ends in a buffer of its
# own; the function attribute `spyre.constants` (the constant
# kernel arguments: fills, zeroed values, such buffers); and inserts a
# `spyre.pointwise "identity"` copy-out after a loop-body value kept in LX that
# also leaves its loop; removes `core_replicas` from a writer whose result gets no
# LX.  The copies of an assembly's pieces
# (spyre_mlir.analysis.assembly, torch.cat) all get their buffer's one HBM
# placement, and a restickify that copies nothing (spyre_mlir.analysis.reinterpret)
# its operand's.  The solvers (`solve`) need no IR.
"""Memory planning: which values live in each core's LX scratchpad, and where.

Before (after work division, [1024, 4096] fp16 on 32 cores)::

    %y = spyre.pointwise "add" (%a, %b) {core_splits = array<i64: 32, 1>} : ...
    %z = spyre.pointwise "mul" (%y, %c) {core_splits = array<i64: 32, 1>} : ...
    func.return %z : ...

After ``spyre-plan-memory``::

    %y = spyre.pointwise "add" (%a, %b) {core_splits = ..., placement = #spyre.placement<lx, 0>} : ...
    %z = spyre.pointwise "mul" (%y, %c) {core_splits = ..., placement = #spyre.placement<hbm, arg 3>} : ...

The solver API (unit-tested without IR) is :class:`Buffer` and :func:`solve`;
the pass is :func:`plan_memory` plus :class:`PlanMemoryPass`.

Lifetimes are given in program positions: a buffer lives over the half-open
``[start, end)`` with ``start`` its first use (for a computed value, the op that
writes it) and ``end`` its last use + 1.  A buffer ``c`` may name *in-place
parents*: buffers whose last use is the op that writes ``c`` (so
``parent.end - 1 == c.start``, after the parent starts), at least as large as
``c``; a solver may then give ``c`` its parent's block.

Graph inputs (function arguments) are kernel arguments and never get a
placement: nothing here moves one into LX (that would need an explicit copy-in
op, which no pass emits).  Loops: positions number ops in pre-order over nested
regions, and a read inside a loop counts at the loop's end, so per-tile values
of a loop body live within one iteration and values around the loop live
across it; LX candidates must be read only by compute ops of their own block
or of loop bodies there (which read all of one in every iteration: the keys of
attention tiled by query rows), and such a read counts once per iteration.

Copy-out (DESIGN §4).  A loop-body value that leaves the loop (the source of a
``tensor.insert_slice``, or yielded) is written by spyre-lower-to-bundle
straight into its destination, the accumulator's HBM window at the tile
offset; its pool placement here goes unused.  When such a value is also read
by other ops of the body, keeping it in LX saves one HBM read of the tile per
reader, at the price of one LX-to-HBM copy: the pass inserts a
``spyre.pointwise "identity"`` (``%copy_out``) after the writer, with the
writer's ``core_splits`` per result dim, and moves the leaving uses to it::

    %y = spyre.pointwise "add" (%at, %bt) {placement = #spyre.placement<lx, 0>} : ...
    %copy_out = spyre.pointwise "identity" (%y) {placement = #spyre.placement<hbm, pool 0>} : ...
    %z = spyre.pointwise "mul" (%y, %ct) {...} : ...
    %acc_next = tensor.insert_slice %copy_out into %acc[%r, 0] [...] [1, 1] : ...

The copy is kept only if ``%y`` is then an LX candidate and the solver places
it; otherwise it is removed and ``%y`` goes to HBM as before (a copy into HBM
of a value already in HBM would only add traffic).  A value whose only uses
leave the loop gets no copy-out: it is written straight to HBM, once.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, scf, tensor
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, ModuleOp, TensorType, i64
from xdsl.ir import Operation, OpResult, SSAValue, Use
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass

from spyre_mlir.analysis.assembly import assemblies
from spyre_mlir.analysis.kernel_args import fixed_argument_count, output_arguments
from spyre_mlir.analysis.loops import iterations
from spyre_mlir.analysis.reinterpret import copies_nothing
from spyre_mlir.analysis.storage import BUFFERS_ATTR, CONSTANTS_ATTR, Constant, StorageTrace, record_placement
from spyre_mlir.analysis.residency import LxShares, lx_share
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import (
    ComputeOp,
    FillOp,
    PlacementAttr,
    PlacementKind,
    PointwiseOp,
    RestickifyOp,
    ViewOp,
    expr_range,
    target_config,
    tensor_layout,
)
from spyre_mlir.hardware import round_up
from spyre_mlir.limits import ALIGNMENT
from spyre_mlir.opfuncs import COPY, OpKind

SOLVERS = ("greedy", "firstfit", "bestfit", "valuefit")
"""The LX solvers of DESIGN §9, by ``lx-solver`` name."""

AUTO = "auto"
"""The ``lx-solver`` that runs every one of :data:`SOLVERS` and keeps the placement that moves the
fewest bytes through HBM: the most bytes times uses (the write and each read) in LX; ties go to
the first."""

LX_SOLVERS = (AUTO, *SOLVERS)
"""What ``lx-solver`` accepts."""

_IN_PLACE_DISCOUNT = 0.25
_WRITE_FIRST_BONUS = 0.5

# --------------------------------------------------------------------------
# The solver API (no IR)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Buffer:
    """One value to place: ``Buffer("y", 262144, 2, start=0, end=2)``.

    ``start`` and ``end`` are keyword-only and required: the lifetime
    ``[start, end)`` in program positions (first use, last use + 1).
    """

    name: str
    """Unique name; the key of :func:`solve`'s result."""
    size: int
    """Bytes (per core, for LX)."""
    uses: int
    """Number of uses, the write included."""
    first_use_is_read: bool = False
    """True when the first use reads the buffer (e.g. a value staged before the region); usually the write."""
    in_place_parents: tuple[str, ...] = ()
    """Names of buffers whose block this one may take (their last use writes this one)."""
    start: int = field(kw_only=True)
    """First use (program position)."""
    end: int = field(kw_only=True)
    """Last use + 1 (program position); greater than ``start``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "in_place_parents", tuple(self.in_place_parents))
        if self.size <= 0 or self.uses <= 0:
            raise SpyreError(f"buffer '{self.name}': size and uses must be positive, "
                             f"got size {self.size} and {self.uses} uses")
        if self.end <= self.start:
            raise SpyreError(f"buffer '{self.name}': lifetime [{self.start}, {self.end}) is empty; "
                             "end is the last use + 1")

    def overlaps(self, other: Buffer) -> bool:
        """True when the two lifetimes share a position."""
        return self.start < other.end and other.start < self.end


def solve(buffers: Sequence[Buffer], limit: int, alignment: int = ALIGNMENT,
          solver: str = "greedy") -> dict[str, int | None]:
    """Offsets of ``buffers`` in a memory of ``limit`` bytes, None for those evicted (to HBM).

    Offsets are multiples of ``alignment``; a placed buffer lies within
    ``[0, limit)``; two placed buffers live at the same position never overlap,
    except a buffer and the in-place parent whose block it took.  ``solver`` is
    one of :data:`SOLVERS` (DESIGN §9).  Raises :class:`SpyreError` for an
    unknown solver, duplicate or unknown names, or a broken in-place invariant.
    The result lists the buffers in input order.
    """
    if solver not in SOLVERS:
        raise SpyreError(f"unknown LX solver '{solver}'; expected one of {', '.join(SOLVERS)}")
    if alignment <= 0 or limit < 0:
        raise SpyreError(f"alignment must be positive and limit non-negative, got {alignment} and {limit}")
    by_name = _check_buffers(buffers)
    if solver == "greedy":
        placed = _greedy(buffers, by_name, limit, alignment)
    else:
        order = placement_order(buffers, value_score if solver == "valuefit" else placement_score)
        placed = _fit(order, by_name, limit, alignment, best=solver == "bestfit")
    return {b.name: placed[b.name] for b in buffers}


def _check_buffers(buffers: Sequence[Buffer]) -> dict[str, Buffer]:
    """Buffers by name, after checking names and the in-place invariants."""
    by_name: dict[str, Buffer] = {}
    for b in buffers:
        if b.name in by_name:
            raise SpyreError(f"duplicate buffer name '{b.name}'")
        by_name[b.name] = b
    for child in buffers:
        for name in child.in_place_parents:
            parent = by_name.get(name)
            if parent is None:
                raise SpyreError(f"buffer '{child.name}': unknown in-place parent '{name}'")
            _check_in_place(parent, child)
    return by_name


def _check_in_place(parent: Buffer, child: Buffer) -> None:
    """A child is written by its parent's last use (after the parent starts) and is no larger."""
    if not parent.start < child.start == parent.end - 1:
        raise SpyreError(
            f"in-place child '{child.name}' [{child.start}, {child.end}) must start at the last use of its "
            f"parent '{parent.name}' [{parent.start}, {parent.end}), i.e. at {parent.end - 1}, after the "
            "parent starts")
    if child.size > parent.size:
        raise SpyreError(f"in-place child '{child.name}' ({child.size} bytes) is larger than its parent "
                         f"'{parent.name}' ({parent.size} bytes)")


@dataclass(frozen=True)
class _Block:
    """A placed buffer's bytes ``[offset, offset + size)`` (size aligned), live until ``end``."""

    name: str
    offset: int
    size: int
    end: int

    @property
    def top(self) -> int:
        return self.offset + self.size


def _merged(blocks: Iterable[_Block]) -> list[tuple[int, int]]:
    """The occupied byte ranges ``(lo, hi)`` of ``blocks``, sorted and merged."""
    ranges: list[tuple[int, int]] = []
    for lo, hi in sorted((b.offset, b.top) for b in blocks):
        if ranges and lo <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], hi))
        else:
            ranges.append((lo, hi))
    return ranges


def _gaps(blocks: Iterable[_Block], limit: int) -> list[tuple[int, int]]:
    """Free byte ranges ``(lo, hi)`` of ``[0, limit)`` around ``blocks``, lowest first."""
    gaps, cursor = [], 0
    for lo, hi in _merged(blocks):
        gaps.append((cursor, lo))
        cursor = hi
    gaps.append((cursor, limit))
    return [(lo, hi) for lo, hi in gaps if lo < hi]


def _fits_in(lo: int, hi: int, size: int, alignment: int) -> int | None:
    """The aligned offset at the bottom of gap ``[lo, hi)`` if ``size`` bytes fit there."""
    offset = round_up(lo, alignment)
    return offset if offset + size <= hi else None


def _collides(offset: int, size: int, blocks: Iterable[_Block]) -> bool:
    return any(offset < b.top and b.offset < offset + size for b in blocks)


# -- greedy ----------------------------------------------------------------


def _greedy(buffers: Sequence[Buffer], by_name: dict[str, Buffer], limit: int,
            alignment: int) -> dict[str, int | None]:
    """Time-stepped over all starts and ends: free what ends, then place what starts (input order)."""
    starting: dict[int, list[Buffer]] = {}
    for b in buffers:
        starting.setdefault(b.start, []).append(b)
    times = sorted({b.start for b in buffers} | {b.end for b in buffers})
    live: list[_Block] = []
    inherited: set[str] = set()
    placed: dict[str, int | None] = {}
    for t in times:
        live = [blk for blk in live if blk.end > t]
        for b in starting.get(t, ()):
            offset = _inherit(b, by_name, live, inherited)
            if offset is None:
                offset = _greedy_offset(b.size, live, limit, alignment)
            placed[b.name] = offset
            if offset is not None:
                live.append(_Block(b.name, offset, round_up(b.size, alignment), b.end))
    return placed


def _inherit(b: Buffer, by_name: dict[str, Buffer], live: list[_Block], inherited: set[str]) -> int | None:
    """The block of ``b``'s first live in-place parent at least as large that no other child took."""
    blocks = {blk.name: blk for blk in live}
    for name in b.in_place_parents:
        if name in blocks and name not in inherited and by_name[name].size >= b.size:
            inherited.add(name)
            return blocks[name].offset
    return None


def _greedy_offset(size: int, live: list[_Block], limit: int, alignment: int) -> int | None:
    """At 0 if the bottom is free, else just above the top live block, else the first gap; None: evict."""
    if size > limit:
        return None
    if not live or min(blk.offset for blk in live) >= size:
        return 0
    above = round_up(max(blk.top for blk in live), alignment)
    if above + size <= limit:
        return above
    ranges = _merged(live)
    for (_, lo), (hi, _) in zip(ranges, ranges[1:]):
        offset = _fits_in(lo, hi, size, alignment)
        if offset is not None:
            return offset
    return None


# -- first fit / best fit / value fit ----------------------------------------


def placement_score(b: Buffer, parents: set[str]) -> float:
    """DESIGN §9 ordering score (smaller is placed first).

    ``((end - start) - discount) / (uses + 0.5 if the first use is a write)``;
    ``discount`` is 0.25 for having an in-place parent and 0.25 for being one
    (``parents``: names some buffer lists as its in-place parent).
    """
    discount = _IN_PLACE_DISCOUNT * (bool(b.in_place_parents) + (b.name in parents))
    weight = b.uses + (0.0 if b.first_use_is_read else _WRITE_FIRST_BONUS)
    return ((b.end - b.start) - discount) / weight


def value_score(b: Buffer, parents: set[str]) -> float:
    """``valuefit`` ordering score (smaller is placed first): minus the bytes per core the buffer
    keeps off HBM in LX, ``size * uses`` (its write and each read)."""
    return -b.size * b.uses


def placement_order(buffers: Sequence[Buffer],
                    score: Callable[[Buffer, set[str]], float] = placement_score) -> list[Buffer]:
    """Buffers by ``score`` (:func:`placement_score` or :func:`value_score`; ties: input order),
    each in-place parent before its children."""
    by_name = {b.name: b for b in buffers}
    parents = {p for b in buffers for p in b.in_place_parents}
    ranked = sorted(enumerate(buffers), key=lambda ib: (score(ib[1], parents), ib[0]))
    order: list[Buffer] = []
    emitted: set[str] = set()

    def emit(b: Buffer) -> None:
        if b.name in emitted:
            return
        for name in b.in_place_parents:  # parents start strictly earlier: no cycles
            emit(by_name[name])
        emitted.add(b.name)
        order.append(b)

    for _, b in ranked:
        emit(b)
    return order


def _fit(order: Sequence[Buffer], by_name: dict[str, Buffer], limit: int, alignment: int,
         best: bool) -> dict[str, int | None]:
    """Each buffer of ``order`` in turn at the lowest gap (or, ``best``, the one of least waste)
    among the overlapping buffers placed before it."""
    placed: dict[str, int | None] = {}
    blocks: dict[str, _Block] = {}
    interfering = interference(order)
    for b in order:
        size = round_up(b.size, alignment)
        conflicts = [blocks[n] for n in interfering[b.name] if n in blocks]
        offset = _parent_offset(b, size, blocks, conflicts, limit)
        if offset is None and b.size <= limit:
            offset = _gap_offset(b.size, conflicts, limit, alignment, best)
        placed[b.name] = offset
        if offset is not None:
            blocks[b.name] = _Block(b.name, offset, size, b.end)
    return placed


def interference(buffers: Sequence[Buffer]) -> dict[str, list[str]]:
    """Per buffer, the names of the others whose lifetimes share a position with it, in the order
    of ``buffers``: one sweep over the buffers sorted by start, each meeting only those still live
    at its start, so the work is the number of overlapping pairs, not of all pairs."""
    rank = {b.name: i for i, b in enumerate(buffers)}
    found: dict[str, list[str]] = {b.name: [] for b in buffers}
    live: list[tuple[int, str]] = []  # (end, name), a heap
    for b in sorted(buffers, key=lambda b: b.start):
        while live and live[0][0] <= b.start:
            heapq.heappop(live)
        for _, name in live:
            found[name].append(b.name)
            found[b.name].append(name)
        heapq.heappush(live, (b.end, b.name))
    for names in found.values():
        names.sort(key=rank.__getitem__)
    return found


def _parent_offset(b: Buffer, size: int, blocks: dict[str, _Block], conflicts: list[_Block],
                   limit: int) -> int | None:
    """The address of the first placed in-place parent whose block holds ``b`` (no other live buffer there)."""
    for name in b.in_place_parents:
        parent = blocks.get(name)
        if parent is None or parent.offset + b.size > limit:
            continue
        others = [blk for blk in conflicts if blk.name != name]
        if size <= parent.size and not _collides(parent.offset, size, others):
            return parent.offset
    return None


def _gap_offset(size: int, conflicts: list[_Block], limit: int, alignment: int, best: bool) -> int | None:
    """The lowest fitting gap, or (``best``) the fitting gap with the least waste (ties: lowest)."""
    candidates = []
    for lo, hi in _gaps(conflicts, limit):
        offset = _fits_in(lo, hi, size, alignment)
        if offset is not None:
            candidates.append((hi - offset - size if best else 0, offset))
    return min(candidates)[1] if candidates else None


# --------------------------------------------------------------------------
# Values: lifetimes, LX eligibility, in-place parents
# --------------------------------------------------------------------------


_ALIASES = (ViewOp, tensor.ExtractSliceOp)
"""Ops whose result reads their source's storage: their readers extend the source's lifetime."""


@dataclass(frozen=True)
class PlannedValue:
    """One value memory planning placed (the result record of :func:`plan_memory`)."""

    value: SSAValue
    buffer: Buffer
    """Its HBM lifetime and full device bytes (the pool's view)."""
    lx_size: int | None
    """Per-core bytes when the value may live in LX, else None."""
    placement: PlacementAttr


def _positions(body: Operation) -> tuple[dict[Operation, int], dict[Operation, int]]:
    """Program position of every op under ``body`` (pre-order), and one past its last nested op."""
    ops = [op for op in body.walk() if op is not body]
    pos = {op: i for i, op in enumerate(ops)}
    after = {op: max(pos[inner] for inner in op.walk()) + 1 for op in ops}
    return pos, after


def _readers(value: SSAValue) -> list[Operation]:
    """Ops that read ``value``'s storage: its users, and through views and slices theirs."""
    found = []
    for use in value.uses:
        found.append(use.operation)
        if isinstance(use.operation, _ALIASES) and use.index == 0:
            found.extend(_readers(use.operation.results[0]))
    return found


def _lifetime(value: OpResult, pos: dict[Operation, int], after: dict[Operation, int]) -> tuple[int, int, int]:
    """``(start, end, uses)``: the write, one past the last read, and the write and reads counted.

    A read inside a nested region counts at the end of the op of ``value``'s
    block that holds it (a loop reads its operands in every iteration); a compute
    op in a loop there reading ``value`` itself reads all of it in every
    iteration, and counts once per iteration.
    """
    block, readers = value.op.parent_block(), _readers(value)
    assert block is not None
    start, end, uses = pos[value.op], pos[value.op] + 1, 1
    direct = {use.operation for use in value.uses if isinstance(use.operation, ComputeOp)}
    for reader in readers:
        holder = block.find_ancestor_op_in_block(reader)
        assert holder is not None, "a reader of a value is nested in the value's block"
        end = max(end, pos[reader] + 1 if holder is reader else after[holder])
        uses += iterations(reader) // iterations(value.op) if reader in direct else 1
    return start, end, uses


def _in_place_parents(value: OpResult, names: dict[SSAValue, str], lx_sizes: dict[SSAValue, int | None],
                      lifetimes: dict[SSAValue, tuple[int, int, int]]) -> tuple[str, ...]:
    """LX candidates a pointwise ``value`` may overwrite: same type and map, dying at its writer."""
    op = value.op
    if not isinstance(op, ComputeOp) or op.op_func().kind is not OpKind.POINTWISE:
        return ()
    maps = op.get_indexing_maps()
    parents = []
    for i, x in enumerate(op.inputs):
        if (x in names and lx_sizes.get(x) is not None and x.type == value.type and maps[i] == maps[-1]
                and lifetimes[x][1] - 1 == lifetimes[value][0] and names[x] not in parents):
            parents.append(names[x])
    return tuple(parents)

# --------------------------------------------------------------------------
# Copy-out: a loop-body value kept in LX that also leaves its loop
# --------------------------------------------------------------------------


def _is_leaving(use: Use) -> bool:
    """True for a use that carries a value out of its loop body: ``tensor.insert_slice``'s source, ``scf.yield``."""
    return isinstance(use.operation, scf.YieldOp) or (isinstance(use.operation, tensor.InsertSliceOp)
                                                       and use.index == 0)


def _copy_out_splits(writer: ComputeOp) -> DenseArrayBase | None:
    """The writer's ``core_splits`` per dim of its result (1 for a constant coordinate), or None if unsplit."""
    splits = writer.get_core_splits()
    if splits is None:
        return None
    result_map = writer.get_indexing_maps()[-1]
    return DenseArrayBase.from_list(i64, [splits[e.position] if isinstance(e, AffineDimExpr) else 1
                                          for e in result_map.results])


def _insert_copy_out(value: OpResult) -> PointwiseOp | None:
    """A tentative copy-out of ``value``: a ``spyre.pointwise "identity"`` after its writer, taking its leaving uses.

    Only for a compute result in a loop body that leaves the loop and is also
    read by other ops of the body, and only if ``value`` is then an LX
    candidate (the copy reads the same per-core slices the writer wrote);
    otherwise nothing changes and the result is None.
    """
    writer, uses = value.op, list(value.uses)
    if not isinstance(writer, ComputeOp) or not isinstance(writer.parent_op(), scf.ForOp):
        return None
    if not 0 < sum(_is_leaving(use) for use in uses) < len(uses):  # leaves, and is read in the body
        return None
    copy = PointwiseOp(COPY, [value], value.type)
    copy.location = writer.location
    copy.result.name_hint = "copy_out"
    splits = _copy_out_splits(writer)
    if splits is not None:
        copy.core_splits = splits
    block = writer.parent_block()
    assert block is not None
    block.insert_op_after(copy, writer)
    value.replace_uses_with_if(copy.result, _is_leaving)
    if lx_share(value) is None:
        _remove_copy_out(value, copy)
        return None
    return copy


def _remove_copy_out(value: OpResult, copy: PointwiseOp) -> None:
    """Undo :func:`_insert_copy_out`: ``value`` leaves its loop itself again."""
    copy.result.replace_all_uses_with(value)
    copy.detach()
    copy.erase()


# --------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------


def _values(body: func.FuncOp) -> list[OpResult]:
    """The compute and fill results of ``body``, in program order (pre-order over nested regions)."""
    return [r for op in body.walk() if isinstance(op, ComputeOp | FillOp) for r in op.results]


def _lifetimes(body: func.FuncOp, values: Sequence[OpResult]) -> dict[SSAValue, tuple[int, int, int]]:
    """``(start, end, uses)`` of every value (:func:`_lifetime`) in ``body`` as it is now."""
    pos, after = _positions(body)
    return {v: _lifetime(v, pos, after) for v in values}


def _place_in_lx(body: func.FuncOp, outputs: dict[SSAValue, int], lx_limit: int, solver: str,
                 alignment: int) -> tuple[dict[SSAValue, int], dict[SSAValue, int | None]]:
    """LX offsets of the values ``solver`` placed, and the per-core LX size of every value (None: not eligible).

    A replicated writer (``core_replicas``) whose result gets no LX loses its replicas, and the
    values are placed again: its cores would otherwise write one slice of an HBM tensor several
    times, and read its operands where the replicas' boxes put them."""
    values = _values(body)
    lifetimes = _lifetimes(body, values)
    names = {v: f"v{i}" for i, v in enumerate(values)}
    while True:
        shares = LxShares()
        lx_sizes = {v: None if v in outputs or _zeroed(v) else shares.share(v) for v in values}
        candidates = [Buffer(names[v], size, lifetimes[v][2], start=lifetimes[v][0], end=lifetimes[v][1],
                             in_place_parents=_in_place_parents(v, names, lx_sizes, lifetimes))
                      for v in values if (size := lx_sizes[v]) is not None]
        saved = {names[v]: tensor_layout(v.type).nbytes * lifetimes[v][2] for v in values if lx_sizes[v] is not None}
        placements = [solve(candidates, lx_limit, alignment, name)
                      for name in (SOLVERS if solver == AUTO else (solver,))]
        placed = max(placements, key=lambda p: sum(saved[name] for name, offset in p.items() if offset is not None))
        offsets = {v: offset for v in values if (offset := placed.get(names[v])) is not None}
        unplaced = [v for v in values if isinstance(v.op, ComputeOp) and v.op.get_core_replicas() > 1
                    and v not in offsets]
        if not unplaced:
            return offsets, lx_sizes
        for v in unplaced:
            del v.op.properties["core_replicas"]


def _zeroed(value: OpResult) -> bool:
    """True for a compute result (or an assembly's value) whose layout is padded
    (:attr:`StickLayout.is_padded`) beyond its writers' reach: its padding must read as zeros, so
    it gets a zeroed buffer of its own (a fill initialises all of its own bytes).  A compute op
    that iterates its result's padding (spyre-pad-dims) writes it."""
    if not isinstance(value.op, ComputeOp | tensor.InsertSliceOp) or not tensor_layout(value.type).is_padded:
        return False
    return not isinstance(value.op, ComputeOp) or not _writes_padding(value.op)


def _writes_padding(op: ComputeOp) -> bool:
    """True when ``op`` iterates its result's padding in every host dim."""
    bounds = [(0, n - 1) for n in op.get_iteration_space()]
    padded = tensor_layout(op.result.type).padded_host_shape
    return all(expr_range(e, bounds)[1] >= n - 1 for e, n in zip(op.get_indexing_maps()[-1].results, padded))


def plan_memory(body: func.FuncOp, lx_limit: int, solver: str = AUTO,
                alignment: int = ALIGNMENT) -> list[PlannedValue]:
    """Place every compute and fill result of ``body``; write and return the placements.

    1. Graph outputs are kernel arguments ``<hbm, arg N>``.
    2. Loop-body values that also leave their loop and have other readers
       in the body get a tentative copy-out (:func:`_insert_copy_out`).
    3. Every other value gets its lifetime (program order, pre-order over
       nested regions) and, if eligible, its per-core LX size; pointwise
       results get in-place parents.
    4. ``solver`` places the LX candidates in ``lx_limit`` bytes per core
       (:data:`AUTO`: every solver, keeping the placement that moves the
       fewest bytes through HBM).
    5. The copy-out of a value that did not get LX is removed again: that
       value is written straight into its destination.
    6. The rest but fills go to the HBM pool with their lifetimes in the final
       program, placed by best fit without a limit, so pool offsets are
       reused by lifetime; except a value with explicit padding
       (:func:`_zeroed`), which gets ``<hbm, zeroed>``: a buffer of its own
       that the runtime zero-fills, never shared (its padding stays zero).
       An assembly is one value (:func:`_assembly_buffers`): its pieces'
       copies write windows of its buffer and all take its placement.  A
       restickify that copies nothing (:func:`_reinterpreted`) takes its
       operand's buffer, which lives until the copy's result's last read: the
       storage trace then runs nothing for it.
    7. Every other buffer (:func:`_place_buffers`): a zeroed value's and a
       fill's become ``constant`` kernel arguments the runtime fills, a fill
       accumulator that ends in an output takes the output, and the buffer a
       loop accumulator ends in when that is no output or window of another
       is a constant (when a fill or padding needs initialising) or a fresh
       pool block above the others.  A restickify that copies nothing of a
       loop's result (:func:`_sharing_loop_buffers`) takes that loop's buffer.
    """
    outputs = output_arguments(body)
    copies = [(v, copy) for v in _values(body) if (copy := _insert_copy_out(v)) is not None]
    in_lx, lx_sizes = _place_in_lx(body, outputs, lx_limit, solver, alignment)
    for value, copy in copies:
        if value not in in_lx:
            _remove_copy_out(value, copy)
    shared = _sharing_loop_buffers(body, outputs)
    for copy in shared:
        copy.properties.pop("placement", None)
    # A fill's buffer is a constant, a shared copy's its loop's (7.).
    values = [v for v in _values(body) if not isinstance(v.op, FillOp) and v.op not in shared]
    lifetimes = _lifetimes(body, values)
    buffers = {v: Buffer(f"v{i}", tensor_layout(v.type).nbytes, lifetimes[v][2], start=lifetimes[v][0],
                         end=lifetimes[v][1]) for i, v in enumerate(values)}
    held = _assembly_buffers(body, buffers) | _reinterpreted(body, buffers, outputs)
    stored = list(dict.fromkeys(held.get(v, v) for v in values))
    pooled = [buffers[v] for v in stored if v not in outputs and v not in in_lx and not _zeroed(v)]
    pool = solve(pooled, sum(round_up(b.size, alignment) for b in pooled), alignment, "bestfit")
    planned = []
    for v in values:
        storage = held.get(v, v)
        if storage in outputs:
            placement = PlacementAttr(PlacementKind.ARG, outputs[storage])
        elif _zeroed(storage):
            placement = PlacementAttr(PlacementKind.ZEROED, 0)
        elif storage in in_lx:
            placement = PlacementAttr(PlacementKind.LX, in_lx[storage])
        else:
            placement = PlacementAttr(PlacementKind.POOL, pool[buffers[storage].name])
        v.op.placement = placement
        planned.append(PlannedValue(v, buffers[storage], lx_sizes.get(v), placement))
    _place_buffers(body, alignment, shared)
    return planned


@dataclass
class _BufferPlanner:
    """The buffers of values that are no placed compute result (a :class:`StoragePlanner`): a fill,
    a zeroed value, and the buffer a loop accumulator ends in when that is no output or window.

    A buffer the runtime must initialise (a fill's value; zeros for a zeroed value or a padded
    layout) is a ``constant`` kernel argument, one buffer per iteration of the loops around the
    value; any other is a fresh pool block above every block in use.  Each placement is recorded
    for the ops that hold the value (:func:`record_placement`).
    """

    first_constant: int
    shared: set[Operation]
    """Restickifies that move no byte of a loop's result and take that result's buffer."""
    constants: list[Constant] = field(default_factory=list)

    def shares_operand_buffer(self, copy: Operation) -> bool:
        return copy in self.shared

    def buffer(self, holders: Sequence[Operation], tensor_type: TensorType, fill: float | None,
               counts: tuple[int, ...], pool_end: int) -> PlacementAttr:
        if fill is not None or tensor_layout(tensor_type).is_padded:
            placement = PlacementAttr(PlacementKind.ARG, self.first_constant + len(self.constants))
            self.constants.append(Constant(tensor_type, 0.0 if fill is None else fill, counts))
        else:
            placement = PlacementAttr(PlacementKind.POOL, pool_end)
        for op in holders:
            record_placement(op, placement)
        return placement


def _place_buffers(body: func.FuncOp, alignment: int, shared: set[Operation]) -> None:
    """Trace where every value lives (:class:`StorageTrace`) and give the values no placement
    covers their buffers (:class:`_BufferPlanner`), and the copies of ``shared`` their loop's;
    the constants go to ``spyre.constants``."""
    for op in body.walk():
        if isinstance(op, scf.ForOp):
            op.attributes.pop(BUFFERS_ATTR, None)
    body.attributes.pop(CONSTANTS_ATTR, None)
    planner = _BufferPlanner(fixed_argument_count(body), shared)
    StorageTrace(body, alignment, planner).run()
    if planner.constants:
        body.attributes[CONSTANTS_ATTR] = ArrayAttr(c.to_attr() for c in planner.constants)


def _assembly_buffers(body: func.FuncOp, buffers: dict[SSAValue, Buffer]) -> dict[SSAValue, SSAValue]:
    """One HBM buffer per assembly (:mod:`spyre_mlir.analysis.assembly`, a ``torch.cat``), added to ``buffers``
    under the assembly's value: its full device bytes, live from its first piece's write to its
    value's last read.  Returns each piece's copy -> that value: the copies write windows of the
    buffer in place and take its placement, so no piece has storage of its own."""
    pos, after = _positions(body)
    held: dict[SSAValue, SSAValue] = {}
    for i, assembly in enumerate(assemblies(body)):
        value = assembly.value
        _, end, uses = _lifetime(value, pos, after)
        buffers[value] = Buffer(f"a{i}", tensor_layout(value.type).nbytes, uses + len(assembly.copies) - 1,
                                start=pos[assembly.copies[0]], end=end)
        held.update((copy.result, value) for copy in assembly.copies)
    return held


def _reinterpreted(body: func.FuncOp, buffers: dict[SSAValue, Buffer],
                   outputs: dict[SSAValue, int]) -> dict[SSAValue, SSAValue]:
    """The result of each restickify that copies nothing (:func:`copies_nothing`) -> the value whose
    buffer holds its operand: the result takes that buffer (and the copy its placement, so that the
    storage trace runs nothing for it), which lives until the result's last read."""
    held: dict[SSAValue, SSAValue] = {}
    for op in body.walk():
        if copies_nothing(op, tuple(outputs)) and isinstance(op.inputs[0].owner, ComputeOp):
            storage = held.get(op.inputs[0], op.inputs[0])
            kept, result = buffers[storage], buffers[op.result]
            buffers[storage] = dataclasses.replace(kept, uses=kept.uses + result.uses - 1,
                                                   end=max(kept.end, result.end))
            held[op.result] = storage
    return held


def _sharing_loop_buffers(body: func.FuncOp, outputs: dict[SSAValue, int]) -> set[Operation]:
    """The restickifies that copy nothing (:func:`copies_nothing`) of a loop's result: each takes the
    buffer of that result, a fresh pool block above every other (or a constant), which no value
    shares; the storage trace places it there (:meth:`_BufferPlanner.shares_operand_buffer`)."""
    return {op for op in body.walk() if isinstance(op, RestickifyOp) and isinstance(op.inputs[0].owner, scf.ForOp)
            and copies_nothing(op, tuple(outputs))}


def check_lx_solver(lx_solver: str, who: str) -> None:
    """One :class:`SpyreError` naming ``who`` (the pass or tool) unless ``lx_solver`` is one of :data:`LX_SOLVERS`."""
    if lx_solver not in LX_SOLVERS:
        raise SpyreError(f"{who}: unknown lx-solver '{lx_solver}'; expected one of {', '.join(LX_SOLVERS)}")


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Place every value in LX or HBM by the ``lx-solver`` (auto, greedy, firstfit, bestfit, valuefit).

    The usable LX per core comes from the module's ``#spyre.target`` (its LX fraction).
    """

    name = "spyre-plan-memory"

    lx_solver: str = AUTO
    """LX solver: auto (the best of the others for HBM traffic), greedy, firstfit, bestfit or valuefit
    (DESIGN §9)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_lx_solver(self.lx_solver, self.name)
        config = target_config(op)
        for body in op.ops:
            if isinstance(body, func.FuncOp) and not body.is_declaration:
                plan_memory(body, config.usable_lx_bytes, self.lx_solver, config.alignment)
