# LX residency (DESIGN §9): which compute results may live in a core's LX
# scratchpad, by how their writer and readers touch them.  Read by
# spyre-plan-memory (which places them) and spyre-work-division (which prices a
# split by the tensors it would find or leave in LX).  Reads compute ops through
# the ComputeOp interface, their splits and their per-core boxes
# (analysis.work); writes nothing.
"""When a value may live in LX.

A value lives in one core's LX only if every core touches its own part of it
and nothing else (a reader on fewer cores than its writer, on the first of
them): its writer computes it whole on each core (no partial sums of
a split reduction), is no data movement (HBM to HBM), and every reader (no
indirect access, no data movement) reads on each core the sticks the writer
wrote there (:func:`spyre_mlir.analysis.work.core_regions`, compared in whole
sticks along the stick dim).  A broadcast read qualifies when the reader
broadcasts along a dim its cores do not divide (RMS norm's row statistics,
split by rows like the rows they scale); a reduction over the stick writes
one element per stick and its readers read the whole stick, which is still
that core's stick.  A replicated writer (``core_replicas``) computes each slice on
a group of cores, each into its own LX: a reader's core reads what the writer
wrote on that core, the same rule.  A reader in the body of a loop of the
writer's block reads all of the value in every iteration (a tile's window of it
is a ``tensor.extract_slice``, no compute op), so the value stays in LX across
the loop under the same rule (the keys of attention tiled by query rows).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

from xdsl.dialects import scf
from xdsl.ir import Block, OpResult, Operation

from spyre_mlir.analysis.work import (Regions, WorkProblem, core_division, problem_regions, replica_count,
                                      work_problem)
from spyre_mlir.dialects.spyre import ComputeOp, tensor_layout
from spyre_mlir.layout import ABSENT, StickLayout
from spyre_mlir.opfuncs import OpKind

SplitsOf = Callable[[ComputeOp], "tuple[int, ...] | None"]
"""An op's division (:func:`~spyre_mlir.analysis.work.core_division`: its ``core_splits``, then any
replica count), or None for an op not divided yet."""


def may_write_lx(writer: ComputeOp) -> bool:
    """True when ``writer`` may leave its result in LX under some split: it moves no data HBM to
    HBM.  Under a split, it must also split no reduction dim (:meth:`LxShares.share`)."""
    return writer.op_func().kind is not OpKind.DATA_MOVEMENT


def may_read_lx(reader: ComputeOp, index: int) -> bool:
    """True when ``reader`` may read its operand ``index`` from LX: it moves no data and reads it as
    neither the index nor the table of an indirect access."""
    if reader.op_func().kind is OpKind.DATA_MOVEMENT:
        return False
    indirect = reader.indirect_access()
    return indirect is None or index not in (indirect.index, indirect.table)


def lx_readers(value: OpResult) -> bool:
    """True when ``value`` is read, and only by compute ops that may read it from LX
    (:func:`may_read_lx`) in its writer's block or in the body of a loop there: no reader needs it
    in HBM, and one in a loop reads all of it in every iteration (a tile's window of it is a
    ``tensor.extract_slice``, no compute op), where it stays (the keys of attention tiled by query
    rows)."""
    block = value.op.parent_block()
    uses = list(value.uses)
    return bool(uses) and all(isinstance(u.operation, ComputeOp) and _in_loops_of(u.operation, block)
                              and may_read_lx(u.operation, u.index) for u in uses)


def _in_loops_of(op: Operation, block: Block | None) -> bool:
    """True when ``op`` is in ``block`` or in the body of loops nested there."""
    while op.parent_block() is not block:
        loop = op.parent_op()
        if not isinstance(loop, scf.ForOp):
            return False
        op = loop
    return True


def _own_splits(op: ComputeOp) -> tuple[int, ...]:
    return core_division(op)


def _covers_device_size(layout: StickLayout, regions: Regions) -> bool:
    """True when the union of the per-core boxes is the whole device tensor of ``layout`` (no back
    gap, no padding)."""
    device_size = layout.device_size
    for j, h in enumerate(layout.device_dims[:-1]):
        if h == ABSENT:
            continue
        lo, hi = min(r[h][0] for r in regions), max(r[h][1] for r in regions)
        eps = layout.elems_per_stick if h == layout.stick_dim else 1
        if lo != 0 or -(-(hi + 1) // eps) != device_size[j]:
            return False
    return True


def _in_sticks(regions: Regions, layout: StickLayout) -> Regions:
    """``regions`` with the stick dim's coordinates in whole sticks: the unit a core moves, so a
    reader of a sparse stick (one element written, the stick read) touches what its writer wrote."""
    return _boxes_in_sticks(regions, layout.stick_dim, layout.elems_per_stick)


@functools.lru_cache(maxsize=1 << 14)
def _boxes_in_sticks(regions: Regions, stick_dim: int, elems_per_stick: int) -> Regions:
    return tuple(tuple((lo // elems_per_stick, hi // elems_per_stick) if d == stick_dim else (lo, hi)
                       for d, (lo, hi) in enumerate(box)) for box in regions)


def lx_share(value: OpResult, splits_of: SplitsOf = _own_splits) -> int | None:
    """The bytes of ``value`` one core holds if it may live in LX, else None.

    Conditions: its writer and every reader pass the residency rule
    (:func:`may_write_lx`, :func:`lx_readers`); the writer splits no reduction
    dim; every reader touches the same sticks of it on every core as the writer
    (:func:`~spyre_mlir.analysis.work.core_regions` under ``splits_of``; by
    default the ops' :func:`~spyre_mlir.analysis.work.core_division`); the boxes cover
    the whole device tensor (no back gap).  A reader whose split is None (not divided
    yet) is taken to follow the writer.  The share is the device bytes over the distinct
    slices the writer computes (a replicated writer holds one on each of its replicas).
    """
    return LxShares().share(value, splits_of)


class _Facts(NamedTuple):
    """What :func:`lx_share` of a value needs that no split changes."""

    holders: tuple[ComputeOp, ...]
    """The writer, then each reader once."""
    reads: tuple[tuple[ComputeOp, int], ...]
    """Each use: the reader and the operand index it reads the value as, in program order (not in
    the order of the value's uses, which is its history's: a clone lists them otherwise)."""
    reduction_dims: tuple[int, ...]
    """The writer's."""
    layout: StickLayout
    nbytes: int


class LxShares:
    """:func:`lx_share` over the values of a function whose ops and types stay as they are (only
    splits change): what needs no split is found once per value, each op's :func:`work_problem`
    once, each op's boxes once per split, and each writer's and reader's verdict once per split
    (theirs and the writer's), for a pass that prices many."""

    def __init__(self) -> None:
        self._facts: dict[OpResult, _Facts | None] = {}
        self._problems: dict[ComputeOp, WorkProblem] = {}
        self._regions: dict[tuple[ComputeOp, int, tuple[int, ...]], Regions] = {}
        self._written: dict[tuple[OpResult, tuple[int, ...]], int | None] = {}
        self._read_own: dict[tuple[ComputeOp, int, tuple[int, ...], tuple[int, ...]], bool] = {}
        self._block_positions: dict[Block | None, dict[Operation, int]] = {}

    def _positions(self, block: Block | None) -> dict[Operation, int]:
        """The position of each op of ``block`` in it, and of the ops nested in them (pre-order)."""
        if block not in self._block_positions:
            self._block_positions[block] = {op: i for i, op in enumerate(
                nested for top in block.ops for nested in top.walk())} if block else {}
        return self._block_positions[block]

    def problem(self, op: ComputeOp) -> WorkProblem:
        """``op``'s :func:`work_problem`, kept per op: the ops stay as they are, so a pricing loop
        need not look the problem up by signature again."""
        if op not in self._problems:
            self._problems[op] = work_problem(op)
        return self._problems[op]

    def regions(self, op: ComputeOp, index: int, splits: tuple[int, ...]) -> Regions:
        """:func:`~spyre_mlir.analysis.work.problem_regions` of ``op``'s tensor ``index`` under ``splits``."""
        key = (op, index, tuple(splits))
        if key not in self._regions:
            self._regions[key] = problem_regions(self.problem(op), index, key[2])
        return self._regions[key]

    def _value_facts(self, value: OpResult) -> _Facts | None:
        if value not in self._facts:
            writer = value.op
            self._facts[value] = None
            if isinstance(writer, ComputeOp) and may_write_lx(writer) and lx_readers(value):
                layout = tensor_layout(value.type)
                position = self._positions(writer.parent_block())
                reads = tuple(sorted(((u.operation, u.index) for u in value.uses),
                                     key=lambda read: (position[read[0]], read[1])))
                self._facts[value] = _Facts((writer, *dict.fromkeys(r for r, _ in reads)), reads,
                                            writer.reduction_dims(), layout, layout.nbytes)
        return self._facts[value]

    def holders(self, value: OpResult) -> tuple[ComputeOp, ...]:
        """The writer and readers of ``value`` whose splits decide whether it may live in LX; none
        when it may not whatever the splits."""
        facts = self._value_facts(value)
        return facts.holders if facts else ()

    def reads(self, value: OpResult) -> tuple[tuple[ComputeOp, int], ...]:
        """Each use of ``value`` by a holder: the reader and the operand index it reads it as."""
        facts = self._value_facts(value)
        return facts.reads if facts else ()

    def share(self, value: OpResult, splits_of: SplitsOf = _own_splits) -> int | None:
        """:func:`lx_share` of ``value``."""
        facts = self._value_facts(value)
        if facts is None:
            return None
        writer = facts.holders[0]
        splits = splits_of(writer)
        if splits is None or any(splits[d] != 1 for d in facts.reduction_dims):
            return None  # not divided yet, or partial sums of a split reduction
        share = self._share_written(value, facts, tuple(splits))
        if share is None:
            return None
        for reader, index in facts.reads:
            reader_splits = splits_of(reader)
            if reader_splits is not None and not self._reads_own(facts, reader, index, tuple(reader_splits),
                                                                 tuple(splits)):
                return None
        return share

    def _share_written(self, value: OpResult, facts: _Facts, splits: tuple[int, ...]) -> int | None:
        """The bytes per core of ``value`` written under ``splits``, None when the boxes leave a gap
        or do not divide it evenly."""
        key = (value, splits)
        if key not in self._written:
            writer = facts.holders[0]
            regions = self.regions(writer, len(writer.inputs), splits)
            slices = math.prod(splits[:len(self.problem(writer).sizes)])  # replicas hold one slice each
            even = not facts.nbytes % slices and _covers_device_size(facts.layout, regions)
            self._written[key] = facts.nbytes // slices if even else None
        return self._written[key]

    def _reads_own(self, facts: _Facts, reader: ComputeOp, index: int, reader_splits: tuple[int, ...],
                   writer_splits: tuple[int, ...]) -> bool:
        """Whether ``reader`` under its splits reads operand ``index`` on each of its cores in the
        sticks the writer under its splits wrote there (a reader on fewer cores than the writer reads
        the first cores': replicas of a writer hold what such a reader needs)."""
        reader_cores, writer_cores = math.prod(reader_splits), math.prod(writer_splits)
        replicated = replica_count(writer_splits, len(self.problem(facts.holders[0]).sizes)) > 1
        if reader_cores > writer_cores or (reader_cores < writer_cores and not replicated):
            return False  # a core of the reader's holds nothing, or only a writer's replica holds the box it reads
        key = (reader, index, reader_splits, writer_splits)
        if key not in self._read_own:
            read = self.regions(reader, index, reader_splits)
            written = self.regions(facts.holders[0], len(facts.holders[0].inputs), writer_splits)[:len(read)]
            self._read_own[key] = read == written or _in_sticks(read, facts.layout) == _in_sticks(written,
                                                                                                 facts.layout)
        return self._read_own[key]
