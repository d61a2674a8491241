# spyre-auto-tile (DESIGN §7): coarse tiling the user did not ask for.  Reads a
# module no op of which carries `tiles` hints: the compute ops of each
# function's body, their `dims` names, result sizes and readers, and the
# module's `#spyre.target` (cores, usable LX).  Prices candidate tilings with the
# cost model after the later planning stages (spyre-coarse-tile,
# spyre-work-division, spyre-plan-memory, run through the pipeline's stage list
# on a module of the ops around each candidate).  Writes `tiles` hints (fresh
# `#spyre.hint` ids) on the ops of the cheapest tiling, which spyre-coarse-tile
# then applies; nothing when no tiling is predicted faster.
"""Automatic coarse tiling: tile where an intermediate cannot stay in LX.

A value written by a compute op and read only by compute ops of the same
block stays in each core's LX when its per-core share fits there
(``spyre-plan-memory``); one that does not fit makes a round trip through HBM.
Tiling its writer and readers along a dim they all iterate as an output dim
shrinks the per-tile value until it fits, at the price of the loop and of any
operand the tiles re-read.  The pass weighs exactly that:

1. A module whose ops carry ``tiles`` hints is left alone: the user's tiling is
   binding.
2. Candidates (:func:`candidates`): for each value that does not fit LX per
   core on all cores, alone or beside the other values its writer or a reader
   holds at once (:func:`_working_set`: an RMSNorm's float32 rows, each of
   which fills most of a core's LX), for each dim name its writer and every
   reader iterate as an output dim, the group of contiguous compute ops from
   the writer to its last reader that iterate that name as an output dim (none
   tiled by an earlier round), and the group from the writer to the end of its chain
   (:func:`_chain_end`: on through each value in the group that overflows LX
   too, up to a matmul or through it: a softmax from the mask's add to its
   division, or on to the matmul by V), each
   with the smallest tile count that makes the value (or, for one that fits
   alone, its working set) fit and twice that,
   counts dividing the dim (through a matmul, the smallest only: the matmul
   re-reads its other operand once per tile).
3. Each candidate is priced by what it changes (:class:`LocalPricer`): the ops
   of its group, the writers of their operands, the readers of their results and
   every op between them become a module of their own (:func:`region_module`),
   which runs the later planning stages with the hints and without; the
   difference of the cost model's totals is the candidate's gain.  The ops
   outside the region are neither planned nor priced: a tiling changes where
   its group's values live and how its neighbours read them, not the plan of a
   layer away.  A region of more than half the module (a group spanning layers)
   is priced on the whole module.  The candidate that gains most wins if it
   gains; rounds repeat while one wins, each pricing at most ``max_candidates``
   and all of them at most :data:`ROUNDS` times that (the next round starts at
   the next overflow: the attention's variants do not leave the norms and the
   MLP of the layer unpriced).
   Candidates are priced largest overflowing value first (the round trips
   through HBM a tiling may save), then in program order: a long program's
   attention scores come before its first small overflow.  A winner's twins
   (:func:`_twins`: the same group in another copy of a repeated layer, tiled
   the same way) are priced beyond the round's budget, each on its region, and
   join it when they gain too: every layer's attention is tiled in the round
   that tiles the first.
   A candidate the tiling rules refuse is skipped and not counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass

from spyre_mlir.analysis.decisions import shared_decisions
from spyre_mlir.analysis.residency import lx_readers
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, HintAttr, target_config, tensor_layout
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.opfuncs import OpKind
from spyre_mlir.timing import tally


@dataclass(frozen=True)
class Candidate:
    """One tiling: the ops of a group (by position among the module's compute ops), the dim
    name the loop divides and its count."""

    members: tuple[int, ...]
    name: str
    count: int


def _compute_ops(module: ModuleOp) -> list[ComputeOp]:
    return [op for op in module.walk() if isinstance(op, ComputeOp)]


def _output_names(op: ComputeOp) -> dict[str, int]:
    """The first name of each output dim of ``op`` (iterated by its result), with its size."""
    names = op.get_dim_names() or ()
    space = op.get_iteration_space()
    return {n[0]: space[d] for d, n in enumerate(names) if n and d not in op.reduction_dims()}


def candidates(module: ModuleOp, config: SpyreConfig) -> list[Candidate]:
    """The tilings worth pricing (step 2), those of the largest value that overflows LX first
    (the most a tiling may keep out of HBM), then in program order."""
    ops = _compute_ops(module)
    index = {op: i for i, op in enumerate(ops)}
    found: list[Candidate] = []
    for writer in ops:
        if _tiled(writer) or not _overflows_lx(writer, config):
            continue  # tiled by an earlier round, fits, or not an LX candidate however small
        share = _share(writer, config)
        need = math.ceil((share if share > config.usable_lx_bytes else _working_set(writer, config))
                         / config.usable_lx_bytes)
        block = writer.parent_block()
        readers = [use.operation for use in writer.result.uses]
        last = max(index[r] for r in readers)
        for name, size in _output_names(writer).items():
            if not all(name in _output_names(r) for r in readers):
                continue
            counts = [c for c in range(need, size + 1) if size % c == 0][:1]
            counts += [2 * c for c in counts if size % (2 * c) == 0]
            # Through a matmul, the fewest tiles only: the matmul re-reads its other operand per tile.
            ends = {last: counts, _chain_end(ops, index, writer, name, config, False): counts}
            ends.setdefault(_chain_end(ops, index, writer, name, config, True), counts[:1])
            for end, end_counts in ends.items():
                members = tuple(i for i in range(index[writer], end + 1) if ops[i].parent_block() is block
                                and name in _output_names(ops[i]) and not _tiled(ops[i]))
                found += [Candidate(members, name, c) for c in end_counts if Candidate(members, name, c) not in found]
    return sorted(found, key=lambda c: -tensor_layout(ops[c.members[0]].result.type).nbytes)


def _share(op: ComputeOp, config: SpyreConfig) -> float:
    """The bytes of ``op``'s result each core holds when all cores share it."""
    return tensor_layout(op.result.type).nbytes / config.cores


def _working_set(op: ComputeOp, config: SpyreConfig) -> float:
    """The most LX a core needs to keep ``op``'s result there: at its writer and at each of its
    readers, the per-core shares of that op's tensors that compute ops write (those memory planning
    may place in LX), added up."""
    def held(user: Operation) -> float:
        values = {v for v in (*user.operands, *user.results) if isinstance(v, OpResult) and isinstance(v.op, ComputeOp)}
        return sum(tensor_layout(v.type).nbytes for v in values) / config.cores

    return max(held(user) for user in (op, *(use.operation for use in op.result.uses)))


def _overflows_lx(op: ComputeOp, config: SpyreConfig) -> bool:
    """True when ``op``'s result could stay in LX (read only from LX, :func:`lx_readers`) but its
    per-core share does not fit there, alone or beside the other tensors of its writer or of a
    reader (:func:`_working_set`: an element-wise op whose operand and result each fill most of a
    core's LX)."""
    return _working_set(op, config) > config.usable_lx_bytes and bool(lx_readers(op.result))


def _chain_end(ops: list[ComputeOp], index: dict[ComputeOp, int], writer: ComputeOp, name: str,
               config: SpyreConfig, matmuls: bool) -> int:
    """The position of the last op of ``writer``'s chain for ``name``: its last reader, and on
    through the last reader of each value written in between that does not fit LX either, is
    read only from LX and whose readers all iterate ``name`` as an output dim; with ``matmuls``
    through the matmuls that read such a value too, else up to them (a softmax's scores, shifted
    scores, exponentials and probabilities: from the mask's add to the division, and the matmul
    by V with ``matmuls``)."""
    last = max(index[use.operation] for use in writer.result.uses)
    i = index[writer] + 1
    while i <= last:
        op = ops[i]
        readers = [use.operation for use in op.result.uses]
        if op.parent_block() is writer.parent_block() and name in _output_names(op) and not _tiled(op) \
                and _overflows_lx(op, config) \
                and all(name in _output_names(r) and (matmuls or r.op_func().kind is not OpKind.MATMUL)
                        for r in readers):
            last = max(last, *(index[r] for r in readers))
        i += 1
    return last


def apply_candidate(module: ModuleOp, candidate: Candidate) -> None:
    """Give every member of ``candidate`` a fresh ``tiles`` hint for its name and count."""
    ops = _compute_ops(module)
    hint = HintAttr(1 + max((h.hint_id.data for op in ops for h in op.get_hints()), default=0),
                    tiles={candidate.name: candidate.count})
    for i in candidate.members:
        ops[i].hints = ArrayAttr([*ops[i].get_hints(), hint])


def _region(ops: list[ComputeOp], index: dict[ComputeOp, int], members: Sequence[int]) -> tuple[int, int]:
    """The positions of the first and last compute op of the region that prices a tiling of
    ``members``: the members, the writers of their operands and the readers of their results
    (in the members' block), and every op between them."""
    block = ops[members[0]].parent_block()
    around = set(members)
    for i in members:
        neighbours = [v.op for v in ops[i].inputs if isinstance(v, OpResult)]
        neighbours += [use.operation for use in ops[i].result.uses]
        around.update(index[n] for n in neighbours if isinstance(n, ComputeOp) and n.parent_block() is block)
    return min(around), max(around)


def region_module(module: ModuleOp, first: ComputeOp, last: ComputeOp) -> ModuleOp:
    """A module of the ops of ``first``'s block from ``first`` to ``last``, with the target of
    ``module``: one function whose arguments are the values they read and do not define (a
    function argument keeps its attributes) and whose results are the values they define and
    other ops read."""
    block = first.parent_block()
    assert block is not None and last.parent_block() is block
    region: list[Operation] = []
    op: Operation | None = first
    while op is not None:
        region.append(op)
        op = None if op is last else op.next_op
    inner = [o for op in region for o in op.walk()]
    defined = {v for o in inner for v in (*o.results, *(a for r in o.regions for b in r.blocks for a in b.args))}
    inputs = list(dict.fromkeys(v for o in inner for v in o.operands if v not in defined))
    tops = set(region)
    outputs = [r for op in region for r in op.results if any(not _inside(use.operation, tops) for use in r.uses)]
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
    for v, arg in mapping.items():
        arg.name_hint = v.name_hint
    for op in region:
        body.add_op(op.clone(mapping))
    body.add_op(func.ReturnOp(*(mapping[v] for v in outputs)))
    function = func.FuncOp("region", ([v.type for v in inputs], [v.type for v in outputs]), Region(body))
    function.arg_attrs = ArrayAttr([_arg_attrs(v) for v in inputs])
    return ModuleOp([function], attributes=dict(module.attributes))


def _inside(user: Operation | None, tops: set[Operation]) -> bool:
    """Whether ``user`` is one of the ops ``tops`` or nested in one."""
    while user is not None and user not in tops:
        user = user.parent_op()
    return user is not None


def _arg_attrs(value: SSAValue) -> DictionaryAttr:
    """The attributes of function argument ``value``; none for a value an op defines."""
    if isinstance(value, BlockArgument):
        function = value.block.parent_op()
        if isinstance(function, func.FuncOp) and function.arg_attrs is not None:
            return function.arg_attrs.data[value.index]
    return DictionaryAttr({})


def predicted_ns(module: ModuleOp, tilings: Sequence[Candidate] = (), span_tiling: bool = True,
                 lx_solver: str = "auto") -> float | None:
    """The cost model's total for a clone of ``module`` tiled by each of ``tilings`` (none: as it
    is) after the later planning stages (with ``span_tiling`` and ``lx_solver``); None when a stage
    refuses the tiling."""
    from spyre_mlir.analysis.cost import cost_report
    from spyre_mlir.pipeline import planning_stages

    clone = module.clone()
    for candidate in tilings:
        apply_candidate(clone, candidate)
    try:
        for stage in planning_stages(span_tiling, lx_solver):
            stage.apply(Context(), clone)
        return cost_report(clone).total_ns
    except SpyreError:
        return None


class LocalPricer:
    """Prices a tiling by what it changes (step 3): the planning stages and the cost model run on
    the region around its group (:func:`_region`, :func:`region_module`), tiled and as it is; the
    difference is what the tiling saves.  The region as it is is priced once per module state."""

    def __init__(self, module: ModuleOp, span_tiling: bool, lx_solver: str):
        self.module, self.span_tiling, self.lx_solver = module, span_tiling, lx_solver
        self.priced = 0
        """Tilings priced."""
        self.regions = 0
        """Regions planned as they are (each tiling plans its region once more)."""
        self._untiled: dict[tuple[int, int], float | None] = {}
        self._whole: float | None = None

    def _whole_gain(self, candidate: Candidate) -> float | None:
        """The gain of ``candidate`` priced on the whole module."""
        if self._whole is None:
            self._whole = predicted_ns(self.module, (), self.span_tiling, self.lx_solver)
        tiled = predicted_ns(self.module, (candidate,), self.span_tiling, self.lx_solver)
        return None if tiled is None or self._whole is None else tiled - self._whole

    def changed(self) -> None:
        """Forget the prices of the module as it was: a tiling was applied."""
        self._untiled.clear()
        self._whole = None

    def gain(self, candidate: Candidate) -> float | None:
        """The predicted ns ``candidate`` changes the module's total by (negative: it saves time);
        None when the tiling rules refuse it.  A region of more than half the module's compute ops
        (a group spanning layers: T5's position bias, computed once and added in every layer), or
        one the planning stages refuse as it is (its boundary cuts what they need), is priced on
        the whole module instead: work division's revisits may carry a tiling's effect past a
        boundary, and a region that large saves little."""
        self.priced += 1
        ops = _compute_ops(self.module)
        first, last = _region(ops, {op: i for i, op in enumerate(ops)}, candidate.members)
        if 2 * (last + 1 - first) > len(ops):
            return self._whole_gain(candidate)
        region = region_module(self.module, ops[first], ops[last])
        if (first, last) not in self._untiled:
            self.regions += 1
            self._untiled[first, last] = predicted_ns(region, (), self.span_tiling, self.lx_solver)
        untiled = self._untiled[first, last]
        if untiled is None:
            return self._whole_gain(candidate)
        local = Candidate(tuple(i - first for i in candidate.members), candidate.name, candidate.count)
        tiled = predicted_ns(region, (local,), self.span_tiling, self.lx_solver)
        return None if tiled is None else tiled - untiled


ROUNDS = 3
"""Rounds' worth of candidates a module prices in all (``max_candidates`` each): the first rounds
tile the largest overflows (a layer's attention, its MLP, its norms), where most of the gain is."""


def _tiled(op: ComputeOp) -> bool:
    """True when a hint of ``op`` asks for tiles."""
    return any(h.tiles.data for h in op.get_hints())


def auto_tile(module: ModuleOp, max_candidates: int = 10, span_tiling: bool = True,
              lx_solver: str = "auto") -> list[Candidate]:
    """Tile ``module`` where the cost model predicts it pays (steps 1-3), pricing with the later
    stages' ``span_tiling`` and ``lx_solver``; returns the tilings applied, in order."""
    if any(_tiled(op) for op in _compute_ops(module)):
        return []
    config = target_config(module)
    pricer = LocalPricer(module, span_tiling, lx_solver)
    applied: list[Candidate] = []
    budget = ROUNDS * max_candidates
    while budget > 0 and (found := candidates(module, config)):
        priced: list[tuple[float, Candidate]] = []
        for candidate in found:
            if len(priced) == min(max_candidates, budget):
                break
            gain = pricer.gain(candidate)
            if gain is not None:
                priced.append((gain, candidate))
        budget -= len(priced)
        if not priced:
            break
        gain, best = min(priced, key=lambda p: p[0])
        if gain >= 0:
            break
        chosen = [best, *(twin for twin in _twins(_compute_ops(module), best, found)
                          if (twin_gain := pricer.gain(twin)) is not None and twin_gain < 0)]
        for candidate in chosen:
            apply_candidate(module, candidate)
        pricer.changed()
        applied += chosen
    tally("tilings priced", pricer.priced)
    tally("regions planned", pricer.regions)
    return applied


def _signature(ops: list[ComputeOp], candidate: Candidate) -> tuple[object, ...]:
    """What a tiling does, up to which ops it does it to: per member its op, op func, result
    type and the iteration dims the tiled name names, then the count."""
    return (*((op.name, op.op_func().name, op.result.type,
               tuple(d for d, names in enumerate(op.get_dim_names() or ()) if candidate.name in names))
              for op in (ops[i] for i in candidate.members)), candidate.count)


def _twins(ops: list[ComputeOp], best: Candidate, found: list[Candidate]) -> list[Candidate]:
    """The candidates of ``found`` that tile another copy of ``best``'s group as ``best`` tiles it
    (the same layer repeated: :func:`_signature`), no two sharing an op."""
    signature, taken = _signature(ops, best), set(best.members)
    twins = []
    for candidate in found:
        if not taken & set(candidate.members) and _signature(ops, candidate) == signature:
            twins.append(candidate)
            taken |= set(candidate.members)
    return twins


@dataclass(frozen=True)
class AutoTilePass(ModulePass):
    """Tile groups of compute ops whose intermediates overflow LX, where the cost model predicts
    it pays (only in a module without ``tiles`` hints)."""

    name = "spyre-auto-tile"

    max_candidates: int = 10
    """Tilings priced per round at most, :data:`ROUNDS` times that per module (each runs the later
    planning stages on its region)."""

    span_tiling: bool = True
    """spyre-coarse-tile's option in the stages that price a candidate."""

    lx_solver: str = "auto"
    """spyre-plan-memory's LX solver in the stages that price a candidate."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with shared_decisions():  # the regions' work divisions differ only around a tiling
            auto_tile(op, self.max_candidates, self.span_tiling, self.lx_solver)
