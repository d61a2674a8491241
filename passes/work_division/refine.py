# Step 5 of spyre-work-division: every op revisited, in reverse program order,
# alone, with its producers or replicating the writer of its left-hand operand.
# Reads the divisions of step 4 and a DivisionPlan; writes `core_splits` (and
# `core_replicas`) through it.
"""Refinement (step 5 of :mod:`spyre_mlir.passes.work_division`)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from xdsl.ir import OpResult
from xdsl.ir.affine import AffineDimExpr

from spyre_mlir.dialects.spyre import ComputeOp, tensor_layout
from spyre_mlir.passes.work_division.pricing import DivisionPlan
from spyre_mlir.passes.work_division.splits import TIE, WorkDivision, cheapest


def refine(plan: DivisionPlan, divisions: Mapping[ComputeOp, WorkDivision]) -> None:
    """Step 5: revisit each op of ``divisions`` (in program order) in reverse order and take the
    legal split (one of its :attr:`WorkDivision.candidates`) that makes it and its neighbours
    cheapest, now that its readers are divided, and a value in LX only where the values already
    there leave room for it (:meth:`DivisionPlan.track_pressure`); a tie keeps the split it has.
    Writes ``core_splits``."""
    revisited = [op for op, division in divisions.items() if len(division.candidates) > 1 and plan.may_move(op)]
    if not revisited:
        return  # one core, or no choice that moves a tensor in or out of LX
    plan.track_pressure(list(divisions))
    tried: set[ComputeOp] = set()  # writers whose replication a reader has tried
    for op in reversed(revisited):
        candidates = divisions[op].candidates
        if plan.splits[op] not in candidates:  # replicated by a reader revisited before it
            candidates = (*candidates, plan.splits[op])
        producers = _producers(op, divisions)
        shared = tuple(s for s in candidates if all(s in divisions[p].candidates for p in producers))
        replicable, co_readers = _replicable(plan, op, divisions)
        if replicable and replicable[0] in tried:
            replicable, co_readers = [], []  # tried with its last reader, the first revisited
        tried.update(replicable[:1])
        movers = (op, *producers, *replicable, *co_readers)

        def choose() -> tuple[tuple[int, ...] | None, ...]:
            chosen = {op: cheapest(candidates, plan.local_price(op), plan.splits[op])}
            if producers:
                chosen = _with_producers(plan, chosen, producers, shared)
            if replicable:
                chosen = _with_replicas(plan, chosen, producers, shared, replicable, co_readers, divisions)
            return tuple(chosen.get(mover) for mover in movers)

        decided = plan.alike(("refine", candidates, shared, plan.trial_inputs(movers)), choose)
        for moved, splits in zip(movers, decided):
            if splits is None:
                continue
            plan.decide(moved, splits)
            for value in plan.tensors(moved):
                plan.hold(value)


def _with_producers(plan: DivisionPlan, chosen: dict[ComputeOp, tuple[int, ...]], producers: Sequence[ComputeOp],
                    shared: Sequence[tuple[int, ...]]) -> dict[ComputeOp, tuple[int, ...]]:
    """``chosen`` (one op's split), or the split of ``shared`` that the op and its ``producers``
    together make cheapest if that beats it beyond a tie, priced over all their neighbours."""
    (op,) = chosen
    around = list(dict.fromkeys(other for member in (op, *producers) for other in plan.neighbours(member)))

    def price(trial: Mapping[ComputeOp, tuple[int, ...]]) -> float:
        return sum(plan.time(other, trial) for other in around)

    best = price(chosen)
    for splits in shared:
        together = dict.fromkeys((op, *producers), splits)
        if (ns := price(together)) < best * (1 - TIE):
            chosen, best = together, ns
    return chosen


def _replicable(plan: DivisionPlan, op: ComputeOp,
                divisions: Mapping[ComputeOp, WorkDivision]) -> tuple[list[ComputeOp], list[ComputeOp]]:
    """The ops step 5 may move with the matmul ``op`` (none for another op): the writer of its
    left-hand operand (when that may live in LX and only matmuls read it, each as its left-hand
    operand) and the producers that move with that writer (:func:`_producers`), which follow the
    matmul's split (:func:`_aligned_division`); and the other matmuls reading it, which take a
    split that reads what the writer then leaves on each core.  Replicated, the writer computes on
    every core the rows that core's slice of ``op`` reads, so that ``op`` (and the other readers:
    a layer's q, k and v projections read one normalised input) may split N and read them from
    their own LX."""
    lhs = op.inputs[0]
    writer = lhs.op if isinstance(lhs, OpResult) else None
    readers = [use.operation for use in lhs.uses]
    if (not plan.problem(op).matmul or writer not in divisions or writer.indirect_access() is not None
            or not plan.holders(lhs) or any(use.index != 0 or use.operation not in divisions
                                            or not plan.problem(use.operation).matmul for use in lhs.uses)):
        return [], []
    return [writer, *_producers(writer, divisions)], [r for r in dict.fromkeys(readers) if r is not op]


def _aligned_division(plan: DivisionPlan, op: ComputeOp, splits: tuple[int, ...], writer: ComputeOp,
                      legal: Collection[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The division of ``writer`` that computes on each core the box of its result that ``op`` reads
    there under ``splits``: each result dim of ``writer`` split as the dim of ``op`` that reads it,
    a legal split of ``writer``, then the replicas (if any) that make up ``op``'s cores, which
    need ``op``'s reduction dims unsplit; None when there is none."""
    own = [1] * len(plan.problem(writer).sizes)
    for written, read in zip(writer.get_indexing_maps()[-1].results, op.get_indexing_maps()[0].results, strict=True):
        if isinstance(written, AffineDimExpr) and isinstance(read, AffineDimExpr):
            own[written.position] = splits[read.position]
        elif isinstance(read, AffineDimExpr) and splits[read.position] > 1:
            return None
    replicas, rest = divmod(math.prod(splits), math.prod(own))
    if rest or tuple(own) not in legal:
        return None
    if replicas == 1:
        return tuple(own)
    return None if any(splits[d] > 1 for d in plan.problem(op).reduction_dims) else (*own, replicas)


def _served(needed: tuple[int, ...] | None, division: tuple[int, ...], rank: int) -> bool:
    """Whether a writer divided by ``division`` leaves on each core what a reader needs that would
    have the writer divided by ``needed`` (:func:`_aligned_division`): the same division, or, when
    every core holds the whole value, one on no more cores."""
    if needed is None:
        return False
    whole = not any(s > 1 for s in (*needed[:rank], *division[:rank]))
    return needed == division or (whole and math.prod(needed) <= math.prod(division))


def _with_replicas(plan: DivisionPlan, chosen: dict[ComputeOp, tuple[int, ...]], producers: Sequence[ComputeOp],
                   shared: Sequence[tuple[int, ...]], replicable: Sequence[ComputeOp],
                   co_readers: Sequence[ComputeOp],
                   divisions: Mapping[ComputeOp, WorkDivision]) -> dict[ComputeOp, tuple[int, ...]]:
    """``chosen`` (the matmul's split and its producers'), or a split of the matmul with the ops of
    ``replicable`` replicated to follow it (:func:`_aligned_division`) and each of ``co_readers`` at
    its cheapest split that reads what they leave on its cores (:func:`_served`), if that is
    cheaper beyond a tie than ``chosen`` and than every division in which they follow it without
    replicas, priced over all their neighbours: a replicated plan is taken only where no plain one
    is as fast.  A replicated division whose slice does not fit a core's LX is not tried."""
    op = next(iter(chosen))
    writer = replicable[0]
    rank = len(plan.problem(writer).sizes)
    legal = divisions[writer].candidates
    nbytes = tensor_layout(writer.result.type).nbytes
    members = (op, *producers, *replicable, *co_readers)
    around = list(dict.fromkeys(other for member in members for other in plan.neighbours(member)))

    def price(trial: Mapping[ComputeOp, tuple[int, ...]]) -> float:
        return sum(plan.time(other, trial) for other in around)

    aligned = {splits: division for splits in divisions[op].candidates
               if (not producers or splits in shared)
               and (division := _aligned_division(plan, op, splits, writer, legal)) is not None
               and nbytes / math.prod(division[:rank]) <= plan.config.usable_lx_bytes}
    if all(len(division) == rank for division in aligned.values()):
        return chosen  # no replicated division to try
    followers: dict[tuple[int, ...], dict[ComputeOp, tuple[int, ...]] | None] = {}

    def follow(splits: tuple[int, ...], division: tuple[int, ...]) -> dict[ComputeOp, tuple[int, ...]]:
        """``op`` and its producers under ``splits``, the writer and its producers under ``division``."""
        return {op: splits, **dict.fromkeys(producers, splits), **dict.fromkeys(replicable, division)}

    def co_splits(splits: tuple[int, ...], division: tuple[int, ...]) -> dict[ComputeOp, tuple[int, ...]] | None:
        """Each co-reader's cheapest split reading what ``division`` leaves on its cores beside ``op``
        under ``splits`` (priced with the readers of its result: every such split reads the operand
        alike), None when one has none; taken for every split of ``op`` giving the writer
        ``division``."""
        if division not in followers:
            base = follow(splits, division)
            followers[division] = {}
            for reader in co_readers:
                served = [s for s in divisions[reader].candidates
                          if _served(_aligned_division(plan, reader, s, writer, legal), division, rank)]
                if not served:
                    followers[division] = None
                    break
                affected = list(dict.fromkeys((reader, *plan.holders(reader.result))))
                followers[division][reader] = cheapest(
                    served, lambda s, r=reader, ops=affected: sum(plan.time(other, {**base, r: s}) for other in ops),
                    plan.splits[reader])
        return followers[division]

    trials = [{**follow(splits, division), **readers} for splits, division in aligned.items()
              if (readers := co_splits(splits, division)) is not None]
    best = min([price(chosen), *(price(trial) for trial in trials if len(trial[writer]) == rank)])
    for trial in (trial for trial in trials if len(trial[writer]) > rank):
        if (ns := price(trial)) < best * (1 - TIE):
            chosen, best = trial, ns
    return chosen


def _producers(op: ComputeOp, divisions: Mapping[ComputeOp, WorkDivision]) -> list[ComputeOp]:
    """The producers that step 5 may move together with ``op``: each writer whose result only
    ``op`` (or another of them) reads, over ``op``'s iteration space, read through the map it is
    written by, with a choice of splits, and recursively theirs (SwiGLU's silu, read by the mul of
    its gate with the up projection; a rotary embedding's chain of pointwise ops feeding the
    scores).  Moved one at a time, each would leave a value in HBM for as long as its neighbour
    has not followed."""
    found: list[ComputeOp] = []
    pending = [op]
    while pending:
        reader = pending.pop()
        for index, value in enumerate(reader.inputs):
            writer = value.op if isinstance(value, OpResult) else None
            if (writer in divisions and writer not in found and len(divisions[writer].candidates) > 1
                    and all(use.operation is reader for use in value.uses)
                    and writer.get_iteration_space() == op.get_iteration_space()
                    and writer.get_indexing_maps()[-1] == reader.get_indexing_maps()[index]):
                found.append(writer)
                pending.append(writer)
    return found
