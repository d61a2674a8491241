# Steps 1-4 of spyre-work-division for one op: its pieces, span minimums, work_div
# hints, and the legal split the cost model prices cheapest.  Reads an op's work
# problem (analysis.work) and a price of a split; writes nothing.
"""The division of one op (steps 1-4 of :mod:`spyre_mlir.passes.work_division`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation

from spyre_mlir.analysis.cost import division_ns, division_traffic
from spyre_mlir.analysis.work import PieceSpace, WorkProblem, divisors, reduce_spans, reductions_split
from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.dialects.spyre import ComputeOp, Memory
from spyre_mlir.hardware import SpyreConfig

Dim = TypeVar("Dim")

# --------------------------------------------------------------------------
# Pure functions (no IR)
# --------------------------------------------------------------------------


def core_split(size: int, max_cores: int) -> int:
    """The largest divisor of ``size`` that is at most ``max_cores`` (1 if none larger)."""
    assert size >= 1 and max_cores >= 1, (size, max_cores)
    return max(d for d in range(1, min(size, max_cores) + 1) if size % d == 0)


def split_iteration_space(
    sizes: Mapping[Dim, int],
    max_cores: int,
    output_dims: Sequence[Dim],
    reduction_dims: Sequence[Dim],
    committed: Mapping[Dim, int] | None = None,
    fixed: Collection[Dim] = (),
) -> dict[Dim, int]:
    """Distribute ``max_cores`` over iteration dims of ``sizes`` pieces (DESIGN §8 step 3).

    Every dim starts at its ``committed`` split (default 1; each must divide its
    size, their product at most ``max_cores``).  Output dims, by decreasing size
    (ties in ``output_dims`` order), then multiply their split by
    ``core_split(size / split, budget)``, the budget being what the splits so
    far leave of ``max_cores``.  If no reduction dim is split yet, the one
    reduction dim with the largest ``core_split`` (ties: first) does the same.
    Dims in ``fixed`` keep their committed split exactly.

    ``{o0: 4, r0: 8}`` with outputs ``[o0]``, reductions ``[r0]`` on 32 cores
    gives ``{o0: 4, r0: 8}``; ``{rows: 6, sticks: 2}`` gives ``{rows: 6, sticks: 2}``.
    """
    splits = {d: (committed or {}).get(d, 1) for d in sizes}
    assert all(sizes[d] % s == 0 for d, s in splits.items()), (sizes, splits)
    budget = max_cores // math.prod(splits.values())
    assert budget >= 1, (splits, max_cores)

    def grow(d: Dim) -> None:
        nonlocal budget
        extra = core_split(sizes[d] // splits[d], budget)
        splits[d] *= extra
        budget //= extra

    for d in sorted((d for d in output_dims if d not in fixed), key=lambda d: -sizes[d]):
        grow(d)
    open_reductions = [d for d in reduction_dims if d not in fixed]
    if open_reductions and all(splits[d] == 1 for d in reduction_dims):
        grow(max(open_reductions, key=lambda d: core_split(sizes[d] // splits[d], budget)))
    return splits


@dataclass(frozen=True)
class WorkDivision:
    """What work division decided for one op."""

    splits: tuple[int, ...]
    """``core_splits``: pieces per iteration dim, in iteration-space order."""

    piece_elems: tuple[int, ...]
    """Elements per piece of each iteration dim (1, or a stick's worth after step 1)."""

    pieces: tuple[int, ...]
    """Piece count of each iteration dim; each split divides it."""

    span_minimums: dict[int, int]
    """Step 2: minimum splits the span limit needs, by iteration dim."""

    hinted: dict[int, int]
    """Step 3: exact splits from ``work_div`` hints that were applied, by iteration dim."""

    spans: tuple[int, ...]
    """Final per-core span in bytes of each operand, then the result."""

    candidates: tuple[tuple[int, ...], ...]
    """Step 4: the legal splits the cheapest was chosen among."""

    @property
    def cores_used(self) -> int:
        """Cores the op runs on."""
        return math.prod(self.splits)


# --------------------------------------------------------------------------
# The algorithm
# --------------------------------------------------------------------------


def hint_requests(op: ComputeOp) -> list[tuple[str, object]]:
    """The ``work_div`` entries of ``op``'s hints in hint-id order, values as written."""
    requests: list[tuple[str, object]] = []
    for hint in sorted(op.get_hints(), key=lambda h: h.hint_id.data):
        for name, attr in hint.work_div.data.items():
            value = attr.value.data if isinstance(attr, IntegerAttr | FloatAttr) else attr
            requests.append((name, value))
    return requests


def apply_work_div(problem: WorkProblem, space: PieceSpace, config: SpyreConfig,
                   minimums: Mapping[int, int], requests: Sequence[tuple[str, object]],
                   anchor: Operation | None = None) -> dict[int, int]:
    """Step 3: the exact splits ``work_div`` requests set, by iteration dim.

    ``requests`` are ``(dim name, split)`` in hint order; a later request for a
    dim replaces an earlier one.  Errors (:class:`SpyreError`): a split that is
    not a positive integer, or does not divide the dim's piece count.  Skipped
    with a warning: a split that would need more than ``config.cores`` cores
    together with the span minimums and earlier requests, one below the dim's
    span minimum, one that would split a second reduction dim.
    """
    hinted: dict[int, int] = {}
    for name, split in requests:
        if isinstance(split, bool) or not isinstance(split, int) or split <= 0:
            raise SpyreError(f"'{problem.op_name}' op: work_div split for dim '{name}' must be a "
                             f"positive integer, got {split}", op=anchor)
        for d in (d for d, names in enumerate(problem.dim_names or ()) if name in names):
            pieces = space.pieces[d]
            if pieces % split:
                per = space.piece_elems[d]
                unit = f", counted in whole sticks: {pieces} pieces of {per} elements" if per > 1 else ""
                raise SpyreError(f"'{problem.op_name}' op: work_div split {split} for dim '{name}' does "
                                 f"not divide its size {space.sizes[d]}{unit}", op=anchor)
            trial = {**minimums, **hinted, d: split}
            used = math.prod(trial.values())
            if split > 1 and d in problem.unsplit:
                reason = "it would split the data of a table read through an index"
            elif used > config.cores:
                reason = f"it would use {used} cores, more than the {config.cores} available"
            elif split < minimums.get(d, 1):
                reason = f"the per-core span limit needs '{name}' split at least {minimums[d]}"
            elif reductions_split(trial, problem.reduction_dims) > 1:
                reason = "it would split a second reduction dim"
            else:
                hinted[d] = split
                continue
            emit_warning(f"work_div split {split} for dim '{name}' skipped: {reason}", op=anchor)
    return hinted


Price = Callable[[tuple[int, ...]], float]
"""Predicted ns of one execution of an op under a split (``core_splits``)."""


def hbm_price(problem: WorkProblem) -> Price:
    """The cost model's price of ``problem`` under a split, every tensor in HBM."""
    memories = [Memory.HBM] * len(problem.tensors)
    return lambda splits: division_ns(problem, splits, memories)


def legal_splits(problem: WorkProblem, space: PieceSpace, config: SpyreConfig,
                 hinted: Mapping[int, int]) -> list[tuple[int, ...]]:
    """Every split of ``problem`` the rules allow (step 4): each split divides its dim's piece
    count; their product is at most ``config.cores``; at most one reduction dim is split; a
    ``hinted`` dim has its hinted split and a table's data dim 1; every tensor but a table read
    through an index has a per-core span within ``config.span_limit_bytes``."""
    options = [[hinted[d]] if d in hinted else [1] if d in problem.unsplit
               else [s for s in divisors(pieces) if s <= config.cores] for d, pieces in enumerate(space.pieces)]
    legal = []

    def extend(prefix: tuple[int, ...], used: int) -> None:
        if len(prefix) == len(options):
            by_dim = dict(enumerate(prefix))
            if all(space.span(t, by_dim) <= config.span_limit_bytes
                   for i, t in enumerate(problem.tensors) if i not in problem.shared):
                legal.append(prefix)
            return
        for s in options[len(prefix)]:
            trial = (*prefix, s)
            if used * s <= config.cores and reductions_split(dict(enumerate(trial)), problem.reduction_dims) <= 1:
                extend(trial, used * s)

    extend((), 1)
    return legal


TIE = 1e-9
"""Prices within this relative difference are equal (rounding of the model's sums)."""


def cheapest(candidates: Sequence[tuple[int, ...]], price: Price, preferred: tuple[int, ...],
             problem: WorkProblem | None = None) -> tuple[int, ...]:
    """The candidate split of least ``price``; among equal prices ``preferred`` if it is one,
    else the one using most cores, then (given the op's ``problem``) the one moving the fewest
    HBM bytes with every tensor in HBM (then the first): a compute-bound matmul hides its reads
    under its compute whatever the split, but not from the bus."""
    if len(candidates) == 1:
        return candidates[0]
    priced = [(price(c), c) for c in candidates]
    best = min(ns for ns, _ in priced)
    tied = [c for ns, c in priced if ns <= best * (1 + TIE)]
    if preferred in tied:
        return preferred
    if problem is None:
        return max(tied, key=math.prod)
    memories = [Memory.HBM] * len(problem.tensors)
    moved = {c: (t := division_traffic(problem, c, memories)).hbm_read + t.hbm_written for c in tied}
    return max(tied, key=lambda c: (math.prod(c), -moved[c]))


def plan_work(problem: WorkProblem, config: SpyreConfig, requests: Sequence[tuple[str, object]] = (),
              anchor: Operation | None = None, price: Price | None = None) -> WorkDivision:
    """Steps 1-4 of work division on ``problem``; ``anchor`` locates diagnostics; ``price``
    (default :func:`hbm_price`) is the cost of a split."""
    # 1. Stick adjustment: count stick dims in whole sticks.
    space = problem.space
    # 2. Span reduction: minimum splits for the per-core span limit.
    minimums = reduce_spans(problem, space, config, anchor)
    # 3. work_div hints: exact splits, within the core count.
    hinted = apply_work_div(problem, space, config, minimums, requests, anchor)
    # 4. Distribution by cost, the largest-dim-first distribution breaking ties.
    dims = range(len(problem.sizes))
    by_dim = split_iteration_space(dict(zip(dims, space.pieces)), config.cores, problem.output_dims,
                                   problem.reduction_dims, {**minimums, **hinted}, {*hinted, *problem.unsplit})
    candidates = tuple(legal_splits(problem, space, config, hinted))
    splits = cheapest(candidates, price or hbm_price(problem), tuple(by_dim[d] for d in dims), problem)
    spans = tuple(space.span(t, dict(enumerate(splits))) for t in problem.tensors)
    return WorkDivision(splits, space.piece_elems, space.pieces, minimums, hinted, spans, candidates)
