# Work pieces (DESIGN §8, §14): how a compute op's iteration space divides
# over cores.  The per-core extents of a split, the per-core span of each tensor
# over its storage's device strides (what the span limit bounds, measured as the
# interpreter measures it: spyre_mlir.limits), the minimum splits that limit
# needs, and the one core -> slice mapping.  Read by spyre-work-division (which
# decides the splits), spyre-coarse-tile (span tiling), spyre-plan-memory (which
# cores write what) and the lowering to SDSC.  Reads compute ops through the
# ComputeOp interface, where their tensors are stored (analysis.storage) and the
# target; writes nothing.
"""The work of a compute op as cores see it.

An iteration dim that runs along a tensor's stick is counted in *pieces* of
whole sticks (:func:`stick_pieces`), so that no core gets part of a stick;
:class:`PieceSpace` turns splits into per-core extents and spans (a tensor's
span is taken over the device strides of its storage: a tile that is a window
of a bigger tensor, read through ``tensor.extract_slice`` or written through
``tensor.insert_slice``, steps by that tensor's strides);
:func:`reduce_spans` finds the minimum splits the per-core span limit needs;
:func:`core_to_slice` in :func:`slice_order` says which slice each core works on.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from spyre_mlir.analysis.linear import Linear, affine_linear
from spyre_mlir.analysis.storage import storage_value
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, LayoutAttr, expr_range, tensor_layout
from spyre_mlir.hardware import SpyreConfig, element_bytes
from spyre_mlir.layout import ABSENT
from spyre_mlir.limits import span_bytes
from spyre_mlir.opfuncs import OpKind


def divisors(n: int) -> list[int]:
    """The divisors of ``n``, increasing."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


_ENUMERATED_VALUES = 1 << 16
"""Coordinates of at most this many values are enumerated to count the positions they touch."""


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

    @functools.cached_property
    def linear(self) -> Linear[int] | None:
        """``coord`` as a sum of multiples of iteration dims, None if it is not one."""
        return affine_linear(self.coord)

    def touched(self, per_core: Sequence[int]) -> int:
        """The distinct positions one core reads or writes along this dim; :meth:`positions` is
        their hull (``64 * d1 + d3`` with ``d3 < 32`` touches half of each 64 it spans)."""
        linear = self.linear
        if linear is not None and len(linear.terms) == 1:  # steps of c: no position skipped unless c > e
            (d, c), = linear.terms
            return per_core[d] if abs(c) >= self.elems_per_position else self.positions(per_core)
        if linear is None or math.prod(per_core[d] for d in linear.keys()) > _ENUMERATED_VALUES:
            return self.positions(per_core)
        values = {linear.const}
        for d, c in linear.terms:
            values = {v + c * i for v in values for i in range(per_core[d])}
        return len({v // self.elems_per_position for v in values})


def per_core_span(tensor: WorkTensor, per_core: Sequence[int]) -> int:
    """Bytes of device memory one core addresses in ``tensor`` when it iterates ``[0, per_core[d])``
    of each iteration dim ``d``: :func:`spyre_mlir.limits.span_bytes` of the positions it covers
    along each device dim of the tensor's storage (the within-stick position whole), which is how
    the interpreter measures the SDSC file (``per_core`` counting a padded last stick whole, as
    ``N_ / splits`` does)."""
    positions = [dim.positions(per_core) for dim in tensor.dims]
    strides = [dim.stride_bytes for dim in tensor.dims]
    return span_bytes((*positions, tensor.elems_per_stick), (*strides, tensor.word_bytes), tensor.word_bytes)


@dataclass(frozen=True)
class WorkTensor:
    """One operand or the result of a compute op, as work division sees it."""

    name: str
    """How diagnostics name it: ``operand #0 (%a: tensor<...>)``."""

    dims: tuple[DeviceDim, ...]
    """Its device dims outer -> inner, the within-stick dim excluded, with the strides of its storage
    (:func:`~spyre_mlir.analysis.storage.storage_value`: the whole tensor a window of it belongs to)."""

    stick_coord: AffineExpr | None
    """The host coordinate along its stick dim, None for a rank-0 tensor."""

    elems_per_stick: int
    """Elements of its dtype in one stick."""

    stick_bytes: int
    """Bytes of one stick: what a core moves per position it touches."""

    word_bytes: int
    """Bytes of one element."""

    index_map: AffineMap
    """Its host coordinates from the iteration coordinates."""

    @functools.cached_property
    def used_dims(self) -> frozenset[int]:
        """The iteration dims its coordinates use: cores differing only in another dim share a slice."""
        coords = [dim.coord for dim in self.dims] + ([self.stick_coord] if self.stick_coord is not None else [])
        return frozenset().union(*(c.used_dims() for c in coords))


@dataclass(frozen=True, eq=False)
class WorkProblem:
    """Everything work division needs from one compute op, without IR.  Compared by identity: the
    cost model memoizes per problem (:func:`spyre_mlir.analysis.cost.slice_bytes`)."""

    op_name: str
    sizes: tuple[int, ...]
    """Iteration-space sizes in elements."""

    reduction_dims: tuple[int, ...]
    tensors: tuple[WorkTensor, ...]
    """Operands, then the result."""

    dim_names: tuple[tuple[str, ...], ...] | None
    """Names per iteration dim (a dim may carry several), None if not propagated."""

    unsplit: tuple[int, ...] = ()
    """Iteration dims no core may split: the data dims of a table read through an index, which all
    cores address at one base (DESIGN §15)."""

    shared: tuple[int, ...] = ()
    """Positions in ``tensors`` of tables read through an index: whole on every core, their rows
    addressed through the index, so the span limit does not divide them."""

    entry_dims: tuple[int, ...] = ()
    """Iteration dims of the index entries, for a table read through an index: a core reads one
    table row per entry it iterates."""

    tied: tuple[int, ...] = ()
    """Positions in ``tensors`` of a row store's destination: the result's storage, which the op
    writes rows of (one per entry it iterates) and reads nothing of."""

    matmul: bool = False
    """A matmul: it computes ``prod(sizes)`` MACs, and a slice several cores read is replicated."""

    op_func: str = ""
    """The SDSC op func it executes (``ReStickifyOpHBM``): the cost model prices some by their kind."""

    @property
    def output_dims(self) -> tuple[int, ...]:
        """Iteration dims the result indexes."""
        return tuple(d for d in range(len(self.sizes)) if d not in self.reduction_dims)

    @functools.cached_property
    def slice_order(self) -> tuple[int, ...]:
        """The iteration dims in the order cores step through them, fastest first: a matmul's
        reduction dim (K) first, so that the cores sharing an output slice sit on adjacent cores,
        then the others innermost first.  Innermost first lines a producer's cores up with a
        matmul's that reads it along K: the K a matmul reads its left-hand operand along is that
        operand's innermost dim (the keys of attention's probabilities, split with the heads, are
        where the division writes them).  Work division, memory planning and code generation all
        map cores to slices through this order and :func:`core_to_slice`."""
        first = self.reduction_dims if self.matmul else ()
        return (*first, *(d for d in reversed(range(len(self.sizes))) if d not in first))

    @functools.cached_property
    def space(self) -> PieceSpace:
        """The iteration space counted in pieces (:func:`stick_pieces`)."""
        return PieceSpace(self.sizes, stick_pieces(self.sizes, self.tensors))



def _value_name(value: SSAValue, what: str, storage: Attribute) -> str:
    assert isinstance(value.type, TensorType)
    plain = _plain_type_text(value.type)
    if storage != value.type:
        assert isinstance(storage, TensorType)
        plain = f"{plain}, a window of {_plain_type_text(storage)}"
    return f"{what} (%{value.name_hint}: {plain})" if value.name_hint else f"{what} ({plain})"


@functools.lru_cache(maxsize=4096)
def _plain_type_text(tensor_type: TensorType) -> str:
    """``tensor_type`` printed without its encoding (built once per type: printing is slow)."""
    return str(TensorType(tensor_type.get_element_type(), tensor_type.get_shape()))


def work_tensor(name: str, tensor_type: Attribute, indexing_map: AffineMap) -> WorkTensor:
    """How iteration coordinates ``indexing_map`` reach the device dims of ``tensor_type`` (the
    storage of the tensor the map indexes: a window has its storage's layout but for its extents)."""
    return WorkTensor(name, *_device_reach(tensor_type, indexing_map), indexing_map)


@functools.lru_cache(maxsize=1 << 14)
def _device_reach(tensor_type: Attribute, indexing_map: AffineMap) -> tuple[tuple[DeviceDim, ...], AffineExpr | None,
                                                                            int, int, int]:
    """:func:`work_tensor`'s device dims, stick coordinate, elements per stick and bytes per stick and
    element: the same for every tensor of one type read through one map (the layers of a model
    share them)."""
    layout = tensor_layout(tensor_type)
    assert isinstance(tensor_type, TensorType)
    encoding = tensor_type.encoding
    device_size = list(encoding.sizes) if isinstance(encoding, LayoutAttr) else layout.device_size
    word_bytes = element_bytes(layout.dtype)
    stick_bytes = layout.elems_per_stick * word_bytes
    dims = []
    for j, host_dim in enumerate(layout.device_dims[:-1]):
        coord = AffineExpr.constant(0) if host_dim == ABSENT else indexing_map.results[host_dim]
        per_position = layout.elems_per_stick if host_dim == layout.stick_dim else 1
        dims.append(DeviceDim(coord, stick_bytes * math.prod(device_size[j + 1:-1]), per_position))
    stick = None if layout.stick_dim is None else indexing_map.results[layout.stick_dim]
    return tuple(dims), stick, layout.elems_per_stick, stick_bytes, word_bytes


_PLAN_PROPERTIES = ("core_splits", "placement", "hints")
"""Properties of a compute op that record plan decisions: its work problem does not depend on them."""

_NAMED_PROPERTIES = (*_PLAN_PROPERTIES, "dims")
"""Properties :func:`op_structure` leaves out: the plan decisions, and the names of the iteration dims."""

_PROBLEMS: dict[tuple[object, ...], WorkProblem] = {}
_MAX_PROBLEMS = 1 << 14


def op_structure(op: ComputeOp) -> tuple[object, ...]:
    """Everything ``op``'s work problem is built from but names (of its values, and its ``dims``,
    which only ``work_div`` hints read): its name, operand and result types, every other property
    but the plan decisions, its attributes and the types of its tensors' storage.  The same op in
    two layers of a model has the same structure, and a problem alike but for those names."""
    return (op.name, tuple(v.type for v in op.inputs), op.result.type,
            tuple((k, v) for k, v in op.properties.items() if k not in _NAMED_PROPERTIES), tuple(op.attributes.items()),
            tuple(_storage_type(v) for v in (*op.inputs, op.result)))


def work_problem(op: ComputeOp) -> WorkProblem:
    """The work-division view of ``op`` through the ComputeOp interface.

    Built once per op signature (its :func:`op_structure` and the names of its values, which
    diagnostics quote): a clone of a module (spyre-auto-tile prices clones) and every stage after
    the splits are decided find the problem already built, and memoize by its identity."""
    structure = op_structure(op)
    key = (structure, tuple(v.name_hint for v in op.inputs), op.result.name_hint, op.properties.get("dims"))
    problem = _PROBLEMS.get(key)
    if problem is None:
        if len(_PROBLEMS) >= _MAX_PROBLEMS:
            _PROBLEMS.clear()
        problem = _PROBLEMS[key] = _build_problem(op, structure[-1])
    return problem


def _storage_type(value: SSAValue) -> Attribute:
    """The type of ``value``'s storage (:func:`storage_value`), or its own when that one has
    another rank (a rank-changing slice, which the lowering refuses)."""
    storage = storage_value(value).type
    assert isinstance(storage, TensorType) and isinstance(value.type, TensorType)
    return storage if storage.get_num_dims() == value.type.get_num_dims() else value.type


def _build_problem(op: ComputeOp, storage: Sequence[Attribute]) -> WorkProblem:
    values = [*((v, f"operand #{i}") for i, v in enumerate(op.inputs)), (op.result, "result")]
    tensors = tuple(work_tensor(_value_name(v, what, t), t, m)
                    for (v, what), t, m in zip(values, storage, op.get_indexing_maps(), strict=True))
    indirect = op.indirect_access()
    unsplit, shared, entries, tied = ((), (), (), ()) if indirect is None else \
        (indirect.data_dims, (indirect.table,), indirect.entry_dims, ())
    if indirect is not None and indirect.stores:
        shared, tied = (indirect.table, len(tensors) - 1), (indirect.table,)
    return WorkProblem(op.name, op.get_iteration_space(), op.reduction_dims(), tensors, op.get_dim_names(),
                       unsplit, shared, entries, tied, op.op_func().kind is OpKind.MATMUL, op.op_func().name)



def stick_pieces(sizes: Sequence[int], tensors: Sequence[WorkTensor]) -> tuple[int, ...]:
    """Step 1: elements per piece of each iteration dim, so that cores get whole sticks.

    A dim with coefficient ``c`` in a tensor's stick coordinate takes pieces of
    ``elems_per_stick / gcd(elems_per_stick, c)`` (a dim used non-linearly counts as
    ``c = 1``); the largest over the tensors wins; other dims have pieces of 1.
    """
    per_piece = [1] * len(sizes)
    for tensor in tensors:
        if tensor.stick_coord is None:
            continue
        linear = affine_linear(tensor.stick_coord)
        for d in tensor.stick_coord.used_dims():
            c = 1 if linear is None else linear.coefficient(d)
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

    def padded_per_core(self, splits: Mapping[int, int]) -> list[int]:
        """Elements of each iteration dim that one core iterates, a padded last stick whole (the
        SDSC's ``N_ / splits``): what the device addresses."""
        return [pieces // splits.get(d, 1) * per for d, (pieces, per) in enumerate(zip(self.pieces, self.piece_elems))]

    def span(self, tensor: WorkTensor, splits: Mapping[int, int]) -> int:
        """Per-core span of ``tensor`` in bytes under ``splits`` (missing dims: 1)."""
        return per_core_span(tensor, self.padded_per_core(splits))


def reductions_split(splits: Mapping[int, int], reduction_dims: Collection[int]) -> int:
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


def _reduce_outermost_span(problem: WorkProblem, space: PieceSpace, config: SpyreConfig, tensor: WorkTensor,
                           minimums: Mapping[int, int], current: int, anchor: Operation | None) -> dict[int, int]:
    """One search of :func:`reduce_spans`: new minimums for the drivers of ``tensor``'s outermost spanning dim."""
    limit, cores = config.span_limit_bytes, config.cores
    per_core = space.padded_per_core(minimums)
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
        if reductions_split(trial, problem.reduction_dims) > 1:
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


def _span_failure(problem: WorkProblem, tensor: WorkTensor, span: int, config: SpyreConfig,
                  blocked: bool) -> str:
    head = (f"'{problem.op_name}' op: the per-core span of {tensor.name} is {span} bytes, "
            f"over the limit of {config.span_limit_bytes} bytes")
    if blocked:
        return f"{head}, and meeting it would split more than one reduction dim"
    return (f"{head}, and no split on {config.cores} cores meets it; "
            "tile the op with spyre_hint(tiles=...) or use more cores")



def slice_order(op: ComputeOp) -> tuple[int, ...]:
    """:attr:`WorkProblem.slice_order` of ``op``."""
    return work_problem(op).slice_order


Regions = tuple[tuple[tuple[int, int], ...], ...]
"""Per core (in core-id order), a box: ``(lo, hi)`` host coordinates per dim of a tensor."""


def core_division(op: ComputeOp) -> tuple[int, ...]:
    """``op``'s division as work division and the analyses count it: its ``core_splits`` (1 per
    dim when absent), then its ``core_replicas`` when it has them.  The product is the cores it
    runs on; a replicated op's result is one slice per group of replicas, in each core's LX."""
    splits = op.get_core_splits() or (1,) * len(op.get_iteration_space())
    replicas = op.get_core_replicas()
    return (*splits, replicas) if replicas > 1 else tuple(splits)


def replica_count(division: Sequence[int], rank: int) -> int:
    """The replica count a division of an op with ``rank`` iteration dims ends in (1 without one)."""
    return math.prod(division[rank:])


def core_regions(op: ComputeOp, tensor_index: int, division: Sequence[int] | None = None) -> Regions:
    """:func:`problem_regions` of ``op`` under ``division`` (default: its :func:`core_division`)."""
    return problem_regions(work_problem(op), tensor_index, tuple(division or core_division(op)))


def problem_regions(problem: WorkProblem, tensor_index: int, splits: tuple[int, ...]) -> Regions:
    """Per core (in core-id order), the host box ``(lo, hi)`` per dim that the op of ``problem``
    touches of one tensor (operands, then the result) under ``splits`` (a division: it may end in
    a replica count, :func:`core_to_slice`).

    Iteration dims are counted in padded pieces as work division counts them
    (:attr:`WorkProblem.space`), and cores map to slices through
    :func:`core_to_slice` in :attr:`WorkProblem.slice_order`.
    """
    space = problem.space
    per_core = tuple(pieces // n * p for pieces, p, n in zip(space.pieces, space.piece_elems, splits))
    return _boxes(problem.tensors[tensor_index].index_map, per_core, splits, problem.slice_order)


@functools.lru_cache(maxsize=1 << 16)
def _boxes(index_map: AffineMap, per_core: tuple[int, ...], splits: tuple[int, ...],
           order: tuple[int, ...]) -> Regions:
    regions = []
    for slices in core_to_slice(splits, order, math.prod(splits)):
        bounds = [(i * c, i * c + c - 1) for i, c in zip(slices, per_core)]
        regions.append(tuple(expr_range(e, bounds) for e in index_map.results))
    return tuple(regions)


def core_to_slice(division: Sequence[int], order: Sequence[int], num_cores: int) -> list[tuple[int, ...]]:
    """The work slice of each core 0..num_cores-1: one slice index per dim ``order`` names.

    ``division`` is a split per dim (:func:`core_division`), and may end in one
    more entry, a replica count: that many consecutive cores work on each slice.
    Dims are taken in ``order`` (:func:`slice_order`), the first varying fastest
    (after the replicas); an unsplit dim always has index 0.  Cores beyond the
    product of the division repeat the mapping from core 0.
    """
    rank = len(order)
    assert sorted(order) == list(range(rank)) and len(division) in (rank, rank + 1), (division, order)
    total, replicas = math.prod(division), replica_count(division, rank)
    slices = []
    for core in range(num_cores):
        rest, index = core % total // replicas, [0] * rank
        for d in order:
            rest, index[d] = divmod(rest, division[d])
        slices.append(tuple(index))
    return slices
