# What spyre-work-division prices a split of an op with: the splits decided so far,
# where each tensor then lives (LX residency, the LX pressure of the values held
# there) and the cost model's time of the op and its neighbours.  Reads compute
# ops through the ComputeOp interface; writes `core_splits` and `core_replicas`
# of the ops it decides.
"""Pricing splits against each other (:class:`DivisionPlan`, steps 4 and 5 of
:mod:`spyre_mlir.passes.work_division`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64
from xdsl.ir import OpResult, SSAValue

from spyre_mlir.analysis.decisions import taken_decisions
from spyre_mlir.analysis.cost import division_ns
from spyre_mlir.analysis.loops import iterations
from spyre_mlir.analysis.residency import LxShares
from spyre_mlir.analysis.work import WorkProblem, op_structure
from spyre_mlir.dialects.spyre import ComputeOp, Memory
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.passes.work_division.splits import Price

Decision = TypeVar("Decision")


PACKED_LX = 0.85
"""The part of a core's usable LX that the shares of the values living there at once may add up to
when work division tracks them (:meth:`DivisionPlan.track_pressure`): memory planning places them as
aligned blocks, greedily, in an order of its own, so it fits less than their sum.  Measured on
``bench/plans.py``'s models on 4 and 32 cores: at 0.85 memory planning sends no more of the values
counted in LX to HBM than at 0.75, and attention's scaled queries fit beside their scores (1.25 MiB
of 1.55 per core on 32 cores at 512 tokens), which 0.75 sent through HBM."""


_FEW_MOVERS = 4
"""A trial of at most this many ops finds the values it moves among their tensors."""


class DivisionPlan:
    """The splits work division has decided in one function, and what the cost model predicts of
    them with every tensor where memory planning may put it.

    A compute result is in LX when :func:`spyre_mlir.analysis.residency.lx_share`
    allows it under the splits decided so far (a reader not divided yet follows
    its writer) and its share fits the usable LX of a core (after
    :meth:`track_pressure`, beside the values in LX then); every other tensor
    is in HBM.  :meth:`price` is one op's predicted time; a split changes the time of
    the op and of its neighbours (:meth:`neighbours`), whose tensors it may move
    in or out of LX.
    """

    def __init__(self, config: SpyreConfig, splits: Mapping[ComputeOp, tuple[int, ...]] | None = None):
        self.config = config
        self.splits: dict[ComputeOp, tuple[int, ...]] = dict(splits or {})
        self._tensors: dict[ComputeOp, tuple[SSAValue, ...]] = {}
        self._prices: dict[tuple[ComputeOp, tuple[int, ...], tuple[Memory, ...]], float] = {}
        self._shares = LxShares()
        self._share_of: dict[tuple[SSAValue | tuple[int, ...] | None, ...], int | None] = {}
        self._position: dict[ComputeOp, int] = {}
        self._pressure: list[int] = []
        self._held: dict[SSAValue, int] = {}
        self._resident: set[SSAValue] = set()
        self._lifetimes: dict[SSAValue, range] = {}
        self._settled: dict[SSAValue, Memory] = {}
        self._kinds: dict[ComputeOp, int] = {}
        self._runs: dict[ComputeOp, int] = {}
        self._value_kinds: dict[OpResult, tuple[object, ...]] = {}
        self._taken = taken_decisions(config)
        self.decisions = 0
        """Decisions made through :meth:`alike`."""
        self.reused = 0
        """Of those, the ones taken from an op priced alike."""

    def decide(self, op: ComputeOp, splits: tuple[int, ...]) -> None:
        """Give ``op`` ``splits`` (a division: one more entry than ``op`` has iteration dims is a
        replica count): record them and write them as its ``core_splits`` and ``core_replicas``."""
        self.splits[op] = splits
        rank = len(self.problem(op).sizes)
        op.core_splits = DenseArrayBase.from_list(i64, list(splits[:rank]))
        if len(splits) > rank:
            op.core_replicas = IntegerAttr(splits[rank], i64)
        else:
            op.properties.pop("core_replicas", None)
        for value in self.tensors(op):
            self._settled.pop(value, None)

    def track_pressure(self, ops: Sequence[ComputeOp]) -> None:
        """From now on, count a value not in LX under the splits decided so far as living in LX only
        while the values in LX leave room for its share at every op of its lifetime (``ops``, in
        program order): their shares added up within :data:`PACKED_LX` of the usable LX."""
        self._resident = {op.result for op in ops if self.memory(op.result, {}) is Memory.LX}
        self._position = {op: i for i, op in enumerate(ops)}
        self._lifetimes = {}
        self._pressure = [0] * len(ops)
        self._held = {}
        self._settled = {}
        for op in ops:
            self.hold(op.result)

    def hold(self, value: SSAValue) -> None:
        """Count ``value``'s share in LX at every op of its lifetime if it lives there under the
        splits decided so far, and nothing otherwise (after :meth:`track_pressure`)."""
        old = self._held.pop(value, 0)
        new = self.share(value, {}) if self.memory(value, {}) is Memory.LX else 0
        if new:
            self._held[value] = new
        if new != old:
            self._settled = {}
        for i in self._lifetime(value):
            self._pressure[i] += new - old

    def _lifetime(self, value: SSAValue) -> range:
        """The positions of the ops from ``value``'s writer to its last reader (none if it never
        lives in LX)."""
        if value not in self._lifetimes:
            holders = self.holders(value)
            positions = [self._position[op] for op in holders if op in self._position]
            self._lifetimes[value] = range(min(positions), max(positions) + 1) if positions else range(0)
        return self._lifetimes[value]

    def problem(self, op: ComputeOp) -> WorkProblem:
        """``op``'s :func:`~spyre_mlir.analysis.work.work_problem` (built once, by the residency facts)."""
        return self._shares.problem(op)

    def tensors(self, op: ComputeOp) -> tuple[SSAValue, ...]:
        """``op``'s operands, then its result."""
        if op not in self._tensors:
            self._tensors[op] = (*op.inputs, op.result)
        return self._tensors[op]

    def share(self, value: SSAValue, trial: Mapping[ComputeOp, tuple[int, ...]]) -> int | None:
        """:func:`~spyre_mlir.analysis.residency.lx_share` of ``value`` when the ops of ``trial`` take
        its splits (a reader not divided yet follows its writer)."""
        holders = self.holders(value)
        if not holders:
            return None
        key = (value, *(trial.get(op) or self.splits.get(op) for op in holders))
        if key not in self._share_of:
            alike = (self._value_kind(value), *key[1:])
            shares = self._taken.shares
            if alike in shares:
                self._share_of[key] = shares[alike]
            else:
                self._share_of[key] = shares[alike] = self._shares.share(value, dict(zip(holders, key[1:])).get)
        return self._share_of[key]

    def _value_kind(self, value: OpResult) -> tuple[object, ...]:
        """Everything :func:`~spyre_mlir.analysis.residency.lx_share` of ``value`` reads but the
        splits: the :meth:`kind` of its writer and readers, and which reader reads it as which
        operand.  Values of one kind have one share, split for split (the same value in two layers,
        or in two clones)."""
        if value not in self._value_kinds:
            holders = self._shares.holders(value)
            position = {holder: i for i, holder in enumerate(holders)}
            self._value_kinds[value] = (tuple(self.kind(h) for h in holders),
                                        tuple((position[reader], index) for reader, index in self._shares.reads(value)))
        return self._value_kinds[value]

    def memory(self, value: SSAValue, trial: Mapping[ComputeOp, tuple[int, ...]]) -> Memory:
        """Where ``value`` lives when the ops of ``trial`` take its splits."""
        share = self.share(value, trial)
        if share is None:
            return Memory.HBM
        others = self._others(value)
        if others is None:
            return Memory.LX if share <= self.config.usable_lx_bytes else Memory.HBM
        return Memory.LX if others + share <= PACKED_LX * self.config.usable_lx_bytes else Memory.HBM

    def _others(self, value: SSAValue) -> int | None:
        """The bytes per core the other values held in LX take at the fullest op of ``value``'s
        lifetime, None when no pressure is tracked or ``value`` was in LX when tracking began (it
        then needs only to fit the usable LX)."""
        if not self._pressure or value in self._resident:
            return None
        return max((self._pressure[i] for i in self._lifetime(value)), default=0) - self._held.get(value, 0)

    def _settled_memory(self, value: SSAValue) -> Memory:
        """Where ``value`` lives under the splits decided so far: no trial moves it unless its op is
        in the trial (kept until a decision or the pressure changes it)."""
        if value not in self._settled:
            self._settled[value] = self.memory(value, {})
        return self._settled[value]

    def price(self, op: ComputeOp, trial: Mapping[ComputeOp, tuple[int, ...]]) -> float:
        """Predicted ns of one execution of ``op`` when the ops of ``trial`` take its splits (``op``
        among them or decided).  In a coarse-tiling loop of more than one iteration, a working set
        beyond the practical LX spills (:func:`~spyre_mlir.analysis.cost.spill_factor`)."""
        splits = trial.get(op) or self.splits[op]
        memories = tuple(self.memory(v, trial) if self._touched(v, trial) else self._settled_memory(v)
                         for v in self.tensors(op))
        key = (op, splits, memories)
        if key not in self._prices:
            alike = (self.kind(op), splits, memories)
            prices = self._taken.prices
            if alike in prices:
                self._prices[key] = prices[alike]
            else:
                self._prices[key] = prices[alike] = division_ns(self.problem(op), splits, memories,
                                                                self.runs(op) > 1)
        return self._prices[key]

    def time(self, op: ComputeOp, trial: Mapping[ComputeOp, tuple[int, ...]]) -> float:
        """Predicted ns of every execution of ``op`` (:meth:`price` times the trip counts of the loops
        around it) when the ops of ``trial`` take its splits: a split outside a loop that keeps a
        value in LX for a reader inside it saves that reader's HBM reads in every iteration."""
        return self.price(op, trial) * self.runs(op)

    def runs(self, op: ComputeOp) -> int:
        """How often ``op`` runs: the trip counts of the loops around it (found once per op)."""
        if op not in self._runs:
            self._runs[op] = iterations(op)
        return self._runs[op]

    def _touched(self, value: SSAValue, trial: Mapping[ComputeOp, tuple[int, ...]]) -> bool:
        """Whether an op of ``trial`` writes or reads ``value`` (its split may move the value): by
        the trial's ops' tensors, or for a trial of many ops (a replication's), by the value's uses."""
        if len(trial) <= _FEW_MOVERS:
            return any(value in self.tensors(other) for other in trial)
        return (isinstance(value, OpResult) and value.op in trial) or any(use.operation in trial for use in value.uses)

    def kind(self, op: ComputeOp) -> int:
        """A number for ``op``'s :func:`~spyre_mlir.analysis.work.op_structure` and whether it runs in
        a loop of more than one iteration: ops of one kind are priced alike, split for split, beside
        neighbours of one kind divided alike (the structure is hashed once per op, the number in
        every key)."""
        if op not in self._kinds:
            kinds = self._taken.kinds
            self._kinds[op] = kinds.setdefault((op_structure(op), self.runs(op) > 1), len(kinds))
        return self._kinds[op]

    def pricing_inputs(self, op: ComputeOp) -> tuple[object, ...]:
        """Everything :meth:`price` reads to price a split of ``op`` alone (no pressure tracked): its
        :meth:`kind`, and for each of its tensors that may live in LX the kind and splits of its
        writer and readers (``op`` marked) and which of them reads it as which operand.  Two ops with
        equal inputs are priced alike, split for split: the same op in two layers of a model whose
        neighbours are divided alike."""
        return (self.kind(op), tuple(self._value_inputs(v, op) for v in self.tensors(op)))

    def _value_inputs(self, value: SSAValue, op: ComputeOp) -> tuple[object, ...] | None:
        holders = self.holders(value)
        if not holders:
            return None
        position = {holder: i for i, holder in enumerate(holders)}
        return (tuple((h is op, self.kind(h), self.splits.get(h)) for h in holders),
                tuple((position[reader], index) for reader, index in self._shares.reads(value)))

    def trial_inputs(self, movers: Sequence[ComputeOp]) -> tuple[object, ...]:
        """Everything :meth:`price` reads to price a trial of splits of ``movers`` over all their
        neighbours (no other op's price depends on them): per neighbour its :meth:`kind` and splits,
        and per tensor of it where it lives, or, for a tensor of a mover, what decides where it
        lives (its holders and their reads by position among the neighbours, and the room the
        values held in LX leave it).  Two trials with equal inputs are priced alike, split for
        split: the same op in two layers of a model whose neighbourhoods are divided alike, beside
        values held alike."""
        around = list(dict.fromkeys(other for mover in movers for other in self.neighbours(mover)))
        position = {other: i for i, other in enumerate(around)}
        moved = {value for mover in movers for value in self.tensors(mover)}

        def where(value: SSAValue) -> object:
            if value not in moved:
                return self._settled_memory(value)
            holders = self.holders(value)
            if not holders:
                return None
            return (tuple(position[h] for h in holders),
                    tuple((position[reader], index) for reader, index in self._shares.reads(value)), self._others(value))

        return (tuple(position[mover] for mover in movers),
                tuple((self.kind(other), self.splits.get(other), tuple(where(v) for v in self.tensors(other)))
                      for other in around))

    def alike(self, key: tuple[object, ...], decide: Callable[[], Decision]) -> Decision:
        """``decide()``, or what it gave for an equal ``key`` before (counted in :attr:`reused`).
        ``key`` holds every input of the decision (:meth:`pricing_inputs`, :meth:`trial_inputs`),
        so a repeated layer is priced once and decided as if priced again."""
        self.decisions += 1
        taken = self._taken.decisions
        if key in taken:
            self.reused += 1
        else:
            taken[key] = decide()
        return taken[key]  # type: ignore[return-value]

    def holders(self, value: SSAValue) -> tuple[ComputeOp, ...]:
        """The writer and readers of ``value`` whose splits decide whether it may live in LX; none
        when it may not whatever the splits."""
        return self._shares.holders(value) if isinstance(value, OpResult) else ()

    def may_move(self, op: ComputeOp) -> bool:
        """Whether a split of ``op`` may move one of its tensors in or out of LX (else its neighbours'
        prices do not depend on it)."""
        return any(isinstance(v, OpResult) and self._shares.holders(v) for v in self.tensors(op))

    def neighbours(self, op: ComputeOp) -> list[ComputeOp]:
        """``op`` and the compute ops whose tensors its split may move in or out of LX: the writers
        and readers of those of its tensors that may live in LX.  No other op's price depends on
        ``op``'s split."""
        found = {op: None}
        for value in self.tensors(op):
            if isinstance(value, OpResult):
                found.update(dict.fromkeys(self._shares.holders(value)))
        return list(found)

    def local_price(self, op: ComputeOp) -> Price:
        """The price of a split of ``op``: its own predicted time and that of the neighbours whose
        time it may change (all divided)."""
        around = self.neighbours(op)
        return lambda splits: sum(self.time(other, {op: splits}) for other in around)
