# spyre-work-division: core work division (DESIGN §8, seed 003).
# Reads every compute op's (per-tile) iteration space, indexing maps, operand
# layouts (#spyre.layout or the shape's default), `dims` names and `work_div`
# hints, and the module's `#spyre.target` (cores); writes `core_splits` (cores
# per iteration dim) on every compute op.
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
   tensor.  While a tensor's per-core span (:func:`per_core_span`) exceeds it,
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
4. Distribution (:func:`split_iteration_space`): output dims by decreasing
   piece count, then at most one reduction dim, each multiplying its split by
   the largest divisor of its remaining pieces that fits the core budget.

An op that reads a table through an index (``embedding``, ``index_select``;
DESIGN §15) divides its work by the index entries only: the table's data dims
stay unsplit in every step (a table is shared by all cores at one base), the
table is left out of span reduction (its rows are addressed through the index),
and an entry dim that runs along the index's stick is counted in whole sticks
of 32 int32 indices by step 1 (spyre-stickify pads the result's entry dim to
whole sticks, so the last core's padded entries stay inside it).  Few entries
leave cores idle: correct-but-serial beats wrong.

The core -> slice mapping for code generation is :func:`core_to_slice`.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineExpr, AffineMap
from xdsl.passes import ModulePass

from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.dialects.spyre import ComputeOp, LayoutAttr, expr_range, target_config, tensor_layout
from spyre_mlir.hardware import SpyreConfig, element_bytes
from spyre_mlir.layout import ABSENT
from spyre_mlir.opfuncs import OpKind

Dim = TypeVar("Dim")

# --------------------------------------------------------------------------
# Pure functions (no IR)
# --------------------------------------------------------------------------


def core_split(size: int, max_cores: int) -> int:
    """The largest divisor of ``size`` that is at most ``max_cores`` (1 if none larger)."""
    assert size >= 1 and max_cores >= 1, (size, max_cores)
    return max(d for d in range(1, min(size, max_cores) + 1) if size % d == 0)


def divisors(n: int) -> list[int]:
    """The divisors of ``n``, increasing."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


@dataclass(frozen=True)
class DeviceDim:
    """One device dim of a tensor as work division sees it.

    A tensor's device dims are listed outer -> inner without the within-stick
    dim (which never decides a span).
    """

    coord: AffineExpr
    """The host coordinate running along this dim, from the iteration coordinates
    (a constant for a broadcast dim or a dim the host tensor lacks)."""

    stride_bytes: int
    """Device-memory bytes of one position: everything inside this dim."""

    elems_per_position: int = 1
    """Host elements per position: ``elems_per_stick`` for the stick-count dim, else 1."""

    def positions(self, per_core: Sequence[int]) -> int:
        """Positions one core covers along this dim when it iterates ``[0, per_core[d])`` of each dim d."""
        lo, hi = expr_range(self.coord, [(0, extent - 1) for extent in per_core])
        return hi // self.elems_per_position - lo // self.elems_per_position + 1


def per_core_span(dims: Sequence[DeviceDim], per_core: Sequence[int]) -> int:
    """Bytes of device memory one core addresses in a tensor.

    ``dims`` are the tensor's device dims outer -> inner (within-stick dim
    excluded); ``per_core[d]`` is how many elements of iteration dim ``d`` one
    core iterates.  The first dim along which a core covers more than one
    position decides: positions x ``stride_bytes``.  A core inside one
    position of every dim spans one position of the innermost dim (a stick).
    """
    for dim in dims:
        count = dim.positions(per_core)
        if count > 1:
            return count * dim.stride_bytes
    return dims[-1].stride_bytes


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


def core_to_slice(dims: Sequence[str], splits: Sequence[int], num_cores: int,
                  k_first: str | None = None) -> list[tuple[int, ...]]:
    """The work slice of each core 0..num_cores-1: one slice index per dim of ``dims``.

    Dims are in SDSC order and the first dim varies fastest (unsplit dims
    always have index 0); ``k_first`` names a dim (a matmul's K) that goes
    first when it is split, so that its cohorts sit on adjacent cores.  Cores
    beyond the product of the splits repeat the mapping from core 0.
    """
    assert len(dims) == len(splits), (dims, splits)
    order = list(range(len(dims)))
    if k_first is not None and splits[dims.index(k_first)] > 1:
        order.remove(dims.index(k_first))
        order.insert(0, dims.index(k_first))
    total = math.prod(splits)
    slices = []
    for core in range(num_cores):
        rest, index = core % total, [0] * len(dims)
        for d in order:
            rest, index[d] = divmod(rest, splits[d])
        slices.append(tuple(index))
    return slices


# --------------------------------------------------------------------------
# The op as work division sees it
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorAccess:
    """One operand or the result of a compute op, as work division sees it."""

    name: str
    """How diagnostics name it: ``operand #0 (%a: tensor<...>)``."""

    dims: tuple[DeviceDim, ...]
    """Its device dims outer -> inner, the within-stick dim excluded."""

    stick_coord: AffineExpr | None
    """The host coordinate along its stick dim, None for a rank-0 tensor."""

    elems_per_stick: int
    """Elements of its dtype in one stick."""


@dataclass(frozen=True)
class WorkProblem:
    """Everything work division needs from one compute op, without IR."""

    op_name: str
    sizes: tuple[int, ...]
    """Iteration-space sizes in elements."""

    reduction_dims: tuple[int, ...]
    tensors: tuple[TensorAccess, ...]
    """Operands, then the result."""

    dim_names: tuple[tuple[str, ...], ...] | None
    """Names per iteration dim (a dim may carry several), None if not propagated."""

    is_matmul: bool

    unsplit: tuple[int, ...] = ()
    """Iteration dims no core may split: the data dims of a table read through an index, which all
    cores address at one base (DESIGN §15)."""

    shared: tuple[int, ...] = ()
    """Positions in ``tensors`` of tables read through an index: whole on every core, their rows
    addressed through the index, so the span limit does not divide them."""

    @property
    def output_dims(self) -> tuple[int, ...]:
        """Iteration dims the result indexes."""
        return tuple(d for d in range(len(self.sizes)) if d not in self.reduction_dims)


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

    k_first: int | None
    """The iteration dim :func:`core_to_slice` places first: a matmul's K when split."""

    @property
    def cores_used(self) -> int:
        """Cores the op runs on."""
        return math.prod(self.splits)


def _value_name(value: SSAValue, what: str) -> str:
    assert isinstance(value.type, TensorType)
    plain = _plain_type_text(value.type)
    return f"{what} (%{value.name_hint}: {plain})" if value.name_hint else f"{what} ({plain})"


@functools.lru_cache(maxsize=4096)
def _plain_type_text(tensor_type: TensorType) -> str:
    """``tensor_type`` printed without its encoding (built once per type: printing is slow)."""
    return str(TensorType(tensor_type.get_element_type(), tensor_type.get_shape()))


def tensor_access(name: str, tensor_type: Attribute, indexing_map: AffineMap) -> TensorAccess:
    """How iteration coordinates ``indexing_map`` reach the device dims of ``tensor_type``."""
    layout = tensor_layout(tensor_type)
    assert isinstance(tensor_type, TensorType)
    encoding = tensor_type.encoding
    device_size = list(encoding.sizes) if isinstance(encoding, LayoutAttr) else layout.device_size
    stick_bytes = layout.elems_per_stick * element_bytes(layout.dtype)
    dims = []
    for j, host_dim in enumerate(layout.device_dims[:-1]):
        coord = AffineExpr.constant(0) if host_dim == ABSENT else indexing_map.results[host_dim]
        per_position = layout.elems_per_stick if host_dim == layout.stick_dim else 1
        dims.append(DeviceDim(coord, stick_bytes * math.prod(device_size[j + 1:-1]), per_position))
    stick = None if layout.stick_dim is None else indexing_map.results[layout.stick_dim]
    return TensorAccess(name, tuple(dims), stick, layout.elems_per_stick)


def work_problem(op: ComputeOp) -> WorkProblem:
    """The work-division view of ``op`` through the ComputeOp interface."""
    values = [*((v, f"operand #{i}") for i, v in enumerate(op.inputs)), (op.result, "result")]
    tensors = tuple(tensor_access(_value_name(v, what), v.type, m)
                    for (v, what), m in zip(values, op.get_indexing_maps(), strict=True))
    indirect = op.indirect_access()
    unsplit, shared = ((), ()) if indirect is None else (indirect.data_dims, (indirect.table,))
    return WorkProblem(op.name, op.get_iteration_space(), op.reduction_dims(), tensors,
                       op.get_dim_names(), op.op_func().kind is OpKind.MATMUL, unsplit, shared)


# --------------------------------------------------------------------------
# The algorithm
# --------------------------------------------------------------------------


def _linear_coefficients(expr: AffineExpr, rank: int) -> list[int] | None:
    """Coefficient of each iteration dim in ``expr``, None unless it is a sum of constant multiples."""
    for node in expr.post_order():
        if isinstance(node, AffineBinaryOpExpr) and node.kind not in (AffineBinaryOpKind.Add,
                                                                      AffineBinaryOpKind.Mul):
            return None
    base = expr.eval([0] * rank, [])
    return [expr.eval([int(i == d) for i in range(rank)], []) - base for d in range(rank)]


def stick_pieces(sizes: Sequence[int], tensors: Sequence[TensorAccess]) -> tuple[int, ...]:
    """Step 1: elements per piece of each iteration dim, so that cores get whole sticks.

    A dim with coefficient ``c`` in a tensor's stick coordinate takes pieces of
    ``elems_per_stick / gcd(elems_per_stick, c)`` (a dim used non-linearly counts as
    ``c = 1``); the largest over the tensors wins; other dims have pieces of 1.
    """
    rank = len(sizes)
    per_piece = [1] * rank
    for tensor in tensors:
        if tensor.stick_coord is None:
            continue
        coeffs = _linear_coefficients(tensor.stick_coord, rank)
        for d in tensor.stick_coord.used_dims():
            c = 1 if coeffs is None else coeffs[d]
            if c:
                per_piece[d] = max(per_piece[d], tensor.elems_per_stick // math.gcd(tensor.elems_per_stick, c))
    return tuple(per_piece)


@dataclass(frozen=True)
class PieceSpace:
    """An iteration space counted in pieces (step 1): turns splits into per-core extents and spans."""

    sizes: tuple[int, ...]
    """Elements of each iteration dim."""

    piece_elems: tuple[int, ...]
    """Elements per piece of each iteration dim."""

    @property
    def pieces(self) -> tuple[int, ...]:
        """Piece count of each iteration dim (a padded last stick counts)."""
        return tuple(-(-s // p) for s, p in zip(self.sizes, self.piece_elems))

    def per_core(self, splits: Mapping[int, int]) -> list[int]:
        """Elements of each iteration dim that core 0 iterates."""
        return [min(size, pieces // splits.get(d, 1) * per)
                for d, (size, pieces, per) in enumerate(zip(self.sizes, self.pieces, self.piece_elems))]

    def span(self, tensor: TensorAccess, splits: Mapping[int, int]) -> int:
        """Per-core span of ``tensor`` in bytes under ``splits`` (missing dims: 1)."""
        return per_core_span(tensor.dims, self.per_core(splits))


def _reductions_split(splits: Mapping[int, int], reduction_dims: Collection[int]) -> int:
    return sum(1 for d, s in splits.items() if s > 1 and d in reduction_dims)


def reduce_spans(problem: WorkProblem, space: PieceSpace, config: SpyreConfig,
                 anchor: Operation | None = None) -> dict[int, int]:
    """Step 2: the minimum splits that keep every tensor's per-core span within the limit.

    Tensors are taken in order, each starting from the minimums committed so
    far.  While a tensor's span exceeds the limit, its outermost device dim
    covering more than one position per core is reduced by a Cartesian search
    over the divisors of its driving dims' piece counts (at least their current
    minimum, all splits within the core count, at most one reduction dim
    split): the fitting choice with the fewest cores (then the largest span),
    else the one with the smallest span.  Raises :class:`SpyreError` naming the
    op and the tensor when no choice makes progress.
    """
    minimums: dict[int, int] = {}
    for tensor in (t for i, t in enumerate(problem.tensors) if i not in problem.shared):
        while (current := space.span(tensor, minimums)) > config.span_limit_bytes:
            minimums.update(_reduce_outermost_span(problem, space, config, tensor, minimums, current, anchor))
    return minimums


def _reduce_outermost_span(problem: WorkProblem, space: PieceSpace, config: SpyreConfig, tensor: TensorAccess,
                           minimums: Mapping[int, int], current: int, anchor: Operation | None) -> dict[int, int]:
    """One search of :func:`reduce_spans`: new minimums for the drivers of ``tensor``'s outermost spanning dim."""
    limit, cores = config.span_limit_bytes, config.cores
    per_core = space.per_core(minimums)
    spanning = next(dim for dim in tensor.dims if dim.positions(per_core) > 1)
    drivers = sorted(spanning.coord.used_dims())
    options = [[s for s in divisors(space.pieces[d]) if minimums.get(d, 1) <= s <= cores
                and (s == 1 or d not in problem.unsplit)] for d in drivers]
    fitting, progress, blocked = [], [], False
    for choice in itertools.product(*options):
        trial = {**minimums, **dict(zip(drivers, choice))}
        used = math.prod(trial.values())
        if used > cores:
            continue
        span = space.span(tensor, trial)
        if _reductions_split(trial, problem.reduction_dims) > 1:
            blocked |= span < current
            continue
        (fitting if span <= limit else progress).append((used, span, choice))
    if fitting:
        _, _, choice = min(fitting, key=lambda c: (c[0], -c[1], c[2]))
    elif progress and min(c[1] for c in progress) < current:
        _, _, choice = min(progress, key=lambda c: (c[1], c[0], c[2]))
    else:
        raise SpyreError(_span_failure(problem, tensor, current, config, blocked), op=anchor)
    return {d: s for d, s in zip(drivers, choice) if s > 1}


def _span_failure(problem: WorkProblem, tensor: TensorAccess, span: int, config: SpyreConfig,
                  blocked: bool) -> str:
    head = (f"'{problem.op_name}' op: the per-core span of {tensor.name} is {span} bytes, "
            f"over the limit of {config.span_limit_bytes} bytes")
    if blocked:
        return f"{head}, and meeting it would split more than one reduction dim"
    return (f"{head}, and no split on {config.cores} cores meets it; "
            "tile the op with spyre_hint(tiles=...) or use more cores")


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
            elif _reductions_split(trial, problem.reduction_dims) > 1:
                reason = "it would split a second reduction dim"
            else:
                hinted[d] = split
                continue
            emit_warning(f"work_div split {split} for dim '{name}' skipped: {reason}", op=anchor)
    return hinted


def plan_work(problem: WorkProblem, config: SpyreConfig, requests: Sequence[tuple[str, object]] = (),
              anchor: Operation | None = None) -> WorkDivision:
    """Steps 1-4 of work division on ``problem``; ``anchor`` locates diagnostics."""
    # 1. Stick adjustment: count stick dims in whole sticks.
    space = PieceSpace(problem.sizes, stick_pieces(problem.sizes, problem.tensors))
    # 2. Span reduction: minimum splits for the per-core span limit.
    minimums = reduce_spans(problem, space, config, anchor)
    # 3. work_div hints: exact splits, within the core count.
    hinted = apply_work_div(problem, space, config, minimums, requests, anchor)
    # 4. Distribution of the remaining cores.
    dims = range(len(problem.sizes))
    by_dim = split_iteration_space(dict(zip(dims, space.pieces)), config.cores, problem.output_dims,
                                   problem.reduction_dims, {**minimums, **hinted}, {*hinted, *problem.unsplit})
    splits = tuple(by_dim[d] for d in dims)
    spans = tuple(space.span(t, by_dim) for t in problem.tensors)
    assert all(s <= config.span_limit_bytes for i, s in enumerate(spans) if i not in problem.shared), \
        (problem, splits, spans)
    split_k = [d for d in problem.reduction_dims if by_dim[d] > 1]
    k_first = split_k[0] if problem.is_matmul and split_k else None
    return WorkDivision(splits, space.piece_elems, space.pieces, minimums, hinted, spans, k_first)


def divide_work(op: ComputeOp, config: SpyreConfig) -> WorkDivision:
    """Decide ``op``'s core splits and write them as its ``core_splits`` (recomputed from scratch)."""
    division = plan_work(work_problem(op), config, _hint_requests(op), anchor=op)
    op.core_splits = DenseArrayBase.from_list(i64, list(division.splits))
    return division


@dataclass(frozen=True)
class WorkDivisionPass(ModulePass):
    """Split every compute op's iteration space across cores (writes ``core_splits``).

    The cores divided over are the module's ``#spyre.target`` (``spyre-attach-target``).
    """

    name = "spyre-work-division"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = target_config(op)
        for compute in op.walk():
            if isinstance(compute, ComputeOp):
                divide_work(compute, config)
