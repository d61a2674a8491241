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
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import OpResult
from xdsl.passes import ModulePass

from spyre_mlir.analysis.cost import CostReport, division_ns
from spyre_mlir.analysis.work import work_problem
from spyre_mlir.dialects.spyre import ComputeOp, Memory, target_config
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.opfuncs import OpKind
from spyre_mlir.passes.work_division.pricing import PACKED_LX, DivisionPlan
from spyre_mlir.passes.work_division.refine import refine
from spyre_mlir.passes.work_division.splits import (WorkDivision, core_split, hbm_price, hint_requests, legal_splits,
                                                    plan_work, split_iteration_space)
from spyre_mlir.timing import tally

__all__ = ["PACKED_LX", "DivisionPlan", "WorkDivision", "WorkDivisionPass", "core_split", "divide_work", "hbm_price",
           "legal_splits", "matmul_floor_ns", "plan_work", "refine", "split_iteration_space"]


def divide_work(op: ComputeOp, config: SpyreConfig, plan: DivisionPlan | None = None) -> WorkDivision:
    """Decide ``op``'s core splits, priced by ``plan`` (default: one holding the ``core_splits`` of
    ``op``'s producers), record them in ``plan`` and write them as its ``core_splits``."""
    if plan is None:
        plan = DivisionPlan(config, {v.op: tuple(v.op.get_core_splits()) for v in op.inputs
                                     if isinstance(v, OpResult) and isinstance(v.op, ComputeOp)
                                     and v.op.get_core_splits() is not None})
    requests = hint_requests(op)

    def divide() -> WorkDivision:
        return plan_work(plan.problem(op), config, requests, anchor=op, price=lambda splits: plan.price(op, {op: splits}))

    division = divide() if requests else plan.alike(("divide", plan.pricing_inputs(op)), divide)
    plan.decide(op, division.splits)
    return division



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
