# spyre-work-division: core work division (DESIGN §8, seed 003).
# Reads every compute op's (per-tile) iteration space, indexing maps, operand
# layouts (#spyre.layout or the shape's default), `dims` names and `work_div`
# hints, the splits already decided for its producers, and the module's
# `#spyre.target` (cores, LX); prices candidate splits with the cost model
# (analysis.cost), each tensor where LX residency (analysis.residency) may put
# it; writes `core_splits` (cores per iteration dim) on every compute op, and
# `core_replicas` on an op replicated to feed a matmul from each core's LX.
"""Core work division: split each compute op's iteration space across cores.

Before::

    %y = spyre.pointwise "add" (%a, %b) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>

After ``spyre-work-division`` (on a module whose ``#spyre.target`` has 32 cores)::

    %y = spyre.pointwise "add" (%a, %b) {core_splits = array<i64: 32, 1>} : ...

``core_splits`` has one positive entry per iteration dim in iteration-space
order (1 = not split), each dividing the dim's *piece count*, and their product
is at most the core count.  The recipe, per op (:func:`divide_work`):

1. Stick adjustment.  An iteration dim that runs along the stick dim of some
   tensor is counted in pieces of whole sticks, so that no core gets part of
   a stick.  With coordinate ``c * d + ...`` along a stick of ``e`` elements,
   a piece is ``e / gcd(e, c)`` steps of ``d`` (``e`` for the usual ``c = 1``);
   the largest piece over the tensors wins.  A split counts pieces: 1024 fp16
   elements are 16 sticks, and ``core_splits`` 4 gives each core 4 sticks.
2. Span reduction.  A core may address at most ``span_limit_bytes`` of each
   tensor, from its first byte to one past its last over the device strides of
   the tensor's storage (a tile written into, or read from, a window of a
   bigger tensor steps by that tensor's strides), as the interpreter measures
   it.  While a tensor's per-core span (:func:`per_core_span`) exceeds it,
   the iteration dims driving its outermost spanning device dim get splits
   from a Cartesian search over their divisors, total cores within the budget:
   the fit using the fewest cores, else the smallest span.  The result is a
   set of minimum splits; at most one reduction dim may be among them.
3. ``work_div`` hints (DESIGN step 4, applied here so that distribution fills
   the cores they leave).  In hint-id order, each ``name = split`` sets the
   split of the iteration dims named ``name`` exactly: distribution does not
   change it.  A split that is not a positive integer or does not divide the
   dim's piece count is an error; one that would need more cores than
   available, go below a span minimum, or split a second reduction dim is
   skipped with a warning.  Names the op does not iterate are ignored.
4. Distribution by cost (:func:`cheapest`).  Among the legal splits
   (:func:`legal_splits`: each split divides its dim's piece count, their
   product is at most the core count, at most one reduction dim is split,
   hinted dims keep their split, a table's data dims stay unsplit, every
   tensor's span is within the limit), the one the cost model
   (:mod:`spyre_mlir.analysis.cost`) predicts fastest: all dims of a matmul
   together, so that M, N and K trade replicated reads against partial sums,
   and fewer cores where they are as fast.  At one token (a decode step, up
   to 8 rows) a weight streams: each core reads it at its share of the HBM
   bandwidth, so a projection takes every core it can, each its own K or N
   slice of the weight, never an M split that would have cores re-read one.  An operand counts as read from LX
   when its producer leaves it there and the split reads it the same box per
   core, the result as written to LX when its readers may read it there
   (:class:`DivisionPlan`); otherwise every tensor is in HBM.  Ties go to
   the old rule (:func:`split_iteration_space`: output dims by decreasing
   piece count, then at most one reduction dim, each multiplying its split by
   the largest divisor of its remaining pieces that fits the core budget),
   then to more cores.  A split for fewer cores is a legal split for more, so
   more cores are never predicted slower for one op.
5. Refinement (:func:`refine`).  Step 4 divides ops in program order, so an op
   cannot know how its readers will read its result.  Once every op is
   divided, each is revisited in reverse program order and takes, among the
   same legal splits, the one that makes it and its neighbours (the writers
   and readers of its tensors that may live in LX) cheapest, every
   tensor where memory planning may put it (:class:`DivisionPlan`); a tie keeps
   its split.  A producer thus takes the split its matmul reader reads by, so
   that the value stays in each core's LX.  A value step 4 left in HBM moves to
   LX only where the values already there leave room for it at every op of its
   lifetime (their shares added up within :data:`PACKED_LX` of the usable LX):
   more would crowd out values memory planning places there.  Ops none of whose
   tensors may live in LX keep their split (their neighbours do not depend on it).
   An op may also move together with its producers that only it (or another of
   them) reads, over the same iteration space (:func:`_producers`), to any split
   all may take: moved one at a time, the first to move would send a value
   through HBM and never pay (SwiGLU's silu and mul following the down
   projection's K split; a rotary embedding's chain following the scores').
   A matmul may move with the writer of its left-hand operand (when only
   matmuls read that, each as its left-hand operand) and the writer's
   producers, which then compute on each core the box the matmul's core reads
   (:func:`_aligned_division`): under an N split that box is the same on
   several cores, so the writer is *replicated* (``core_replicas``: consecutive
   cores compute one slice, each into its own LX) and the matmul reads its rows
   from LX instead of every core re-reading them from HBM.  The other matmuls
   reading the operand (a layer's gate and up projections) move too, each to its
   cheapest split that reads what the replicas leave on its cores (on as many
   cores or fewer, when every core holds the whole operand).  A replicated
   division is taken only where no division without replicas is as fast, and
   spyre-plan-memory removes the replicas of a result that gets no LX.

Steps 4 and 5 price each op's legal splits, over its neighbours, with every tensor where memory
planning may put it.  The inputs of one such decision are few and explicit
(:meth:`DivisionPlan.pricing_inputs`, :meth:`DivisionPlan.trial_inputs`: the op's structure, its
neighbours' structures and splits, where their tensors live or what decides it), so a decision
whose inputs equal an earlier one's is taken from it (:meth:`DivisionPlan.alike`): the second
layer of a model onwards is decided as the first was without being priced again, and within one
compile the clones spyre-auto-tile and spyre-pad-dims price and the module divided after them
share their decisions (:func:`~spyre_mlir.analysis.decisions.shared_decisions`).

An op that reads a table through an index (``embedding``, ``index_select``;
DESIGN §15) divides its work by the index entries only: the table's data dims
stay unsplit in every step (a table is shared by all cores at one base), the
table is left out of span reduction (its rows are addressed through the index),
and an entry dim that runs along the index's stick is counted in whole sticks
of 32 int32 indices by step 1 (spyre-stickify pads the result's entry dim to
whole sticks, so the last core's padded entries stay inside it).  Few entries
leave cores idle: correct-but-serial beats wrong.

The model these steps price (pieces, spans, the core -> slice mapping) is
:mod:`spyre_mlir.analysis.work`.  :func:`matmul_floor_ns` says how fast these
rules could make a planned program's matmuls at best (``bench/``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass

from spyre_mlir.analysis.decisions import taken_decisions
from spyre_mlir.analysis.cost import CostReport, division_ns, division_traffic
from spyre_mlir.analysis.loops import iterations
from spyre_mlir.analysis.residency import LxShares
from spyre_mlir.analysis.work import (PieceSpace, WorkProblem, divisors, op_structure, reduce_spans, reductions_split,
                                      work_problem)
from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.dialects.spyre import ComputeOp, Memory, target_config, tensor_layout
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.opfuncs import OpKind
from spyre_mlir.timing import tally

Dim = TypeVar("Dim")
Decision = TypeVar("Decision")

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


def _hint_requests(op: ComputeOp) -> list[tuple[str, object]]:
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


_TIE = 1e-9
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
    tied = [c for ns, c in priced if ns <= best * (1 + _TIE)]
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
        self._read_counts: dict[SSAValue, int] = {}
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
        room = PACKED_LX * self.config.usable_lx_bytes
        return Memory.LX if others + share <= room or self._outweighed(value) + share <= room else Memory.HBM

    def _reads(self, value: SSAValue) -> int:
        """Reads of ``value``, one per iteration of a reader in a loop that its writer is outside."""
        if value not in self._read_counts:
            runs = iterations(value.owner) if isinstance(value, OpResult) else 1
            self._read_counts[value] = sum(iterations(use.operation) // runs for use in value.uses)
        return self._read_counts[value]

    def _outweighed(self, value: SSAValue) -> int:
        """The bytes per core that the values held in LX and read at least as often as ``value`` take
        at the fullest op of its lifetime: memory planning gives LX to the values saving the most
        HBM bytes, so ``value`` would take the room of those read less often (the residual stream
        a layer holds across its attention, beside keys read once per tile of query rows)."""
        reads = self._reads(value)
        lifetime = self._lifetime(value)
        fullest = 0
        for i in lifetime:
            fullest = max(fullest, sum(share for other, share in self._held.items()
                                       if other is not value and i in self._lifetime(other)
                                       and self._reads(other) >= reads))
        return fullest

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
                                                                iterations(op) > 1)
        return self._prices[key]

    def time(self, op: ComputeOp, trial: Mapping[ComputeOp, tuple[int, ...]]) -> float:
        """Predicted ns of every execution of ``op`` (:meth:`price` times the trip counts of the loops
        around it) when the ops of ``trial`` take its splits: a split outside a loop that keeps a
        value in LX for a reader inside it saves that reader's HBM reads in every iteration."""
        if op not in self._runs:
            self._runs[op] = iterations(op)
        return self.price(op, trial) * self._runs[op]

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
            self._kinds[op] = kinds.setdefault((op_structure(op), iterations(op) > 1), len(kinds))
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


def divide_work(op: ComputeOp, config: SpyreConfig, plan: DivisionPlan | None = None) -> WorkDivision:
    """Decide ``op``'s core splits, priced by ``plan`` (default: one holding the ``core_splits`` of
    ``op``'s producers), record them in ``plan`` and write them as its ``core_splits``."""
    if plan is None:
        plan = DivisionPlan(config, {v.op: tuple(v.op.get_core_splits()) for v in op.inputs
                                     if isinstance(v, OpResult) and isinstance(v.op, ComputeOp)
                                     and v.op.get_core_splits() is not None})
    requests = _hint_requests(op)

    def divide() -> WorkDivision:
        return plan_work(plan.problem(op), config, requests, anchor=op, price=lambda splits: plan.price(op, {op: splits}))

    division = divide() if requests else plan.alike(("divide", plan.pricing_inputs(op)), divide)
    plan.decide(op, division.splits)
    return division


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
        if (ns := price(together)) < best * (1 - _TIE):
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
        if (ns := price(trial)) < best * (1 - _TIE):
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


def matmul_floor_ns(report: CostReport, config: SpyreConfig, replicated_in_lx: bool = False) -> float:
    """The least predicted time of the matmuls of a planned program (``report``, on ``config``'s
    cores): each as often as it runs, at its cheapest legal split (hints aside), every tensor in
    LX but those that cannot be there under that split: a value no compute op writes (a graph
    input), a result something other than a compute op reads (a graph output), the result of a
    split reduction (partial sums combine in HBM) and, unless ``replicated_in_lx``, an operand
    several cores read the same slice of (a core's LX holds only what that core wrote).  It says
    how far from its roofline bound the division rules alone keep a plan (``bench/``)."""
    total = 0.0
    for cost in report.ops:
        if cost.op.op_func().kind is not OpKind.MATMUL:
            continue
        problem = work_problem(cost.op)
        output = any(not isinstance(use.operation, ComputeOp) for use in cost.op.result.uses)
        best = math.inf
        for splits in legal_splits(problem, problem.space, config, {}):
            cores = math.prod(splits)
            memories = [Memory.LX if isinstance(v, OpResult) and isinstance(v.op, ComputeOp) and (
                replicated_in_lx or math.prod(s for d, s in enumerate(splits) if d in t.used_dims) == cores)
                else Memory.HBM for v, t in zip(cost.op.inputs, problem.tensors)]
            split_reduction = any(splits[d] > 1 for d in problem.reduction_dims)
            memories.append(Memory.HBM if output or split_reduction else Memory.LX)
            best = min(best, division_ns(problem, splits, memories))
        total += cost.runs * best
    return total


@dataclass(frozen=True)
class WorkDivisionPass(ModulePass):
    """Split every compute op's iteration space across cores (writes ``core_splits``).

    The cores divided over are the module's ``#spyre.target`` (``spyre-attach-target``).
    """

    name = "spyre-work-division"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = target_config(op)
        plan = DivisionPlan(config)
        divisions = {compute: divide_work(compute, config, plan) for compute in op.walk()
                     if isinstance(compute, ComputeOp)}
        refine(plan, divisions)
        tally("decisions", plan.decisions)
        tally("taken from an op priced alike", plan.reused)
