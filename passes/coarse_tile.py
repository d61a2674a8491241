# spyre-coarse-tile (DESIGN §4 stage 4, §7; seeds 000 and 002): coarse tiling
# for working-set reduction.
# Reads: the `tiles` of every compute op's `hints`, the `dims` names per
#   iteration dim (spyre-propagate-named-dims), iteration spaces and indexing
#   maps (explicit after spyre-fold-views), `#spyre.layout` encodings
#   (spyre-stickify), the op-func table (`identity`, `combine`, `averages`),
#   the module's `#spyre.target` (cores, for span overflows).
# Writes: `scf.for` nests with `affine.apply` tile offsets,
#   `tensor.extract_slice` / `tensor.insert_slice`, `tensor.empty` and
#   `spyre.fill` accumulators and combine ops; per-tile compute ops whose
#   `tiles` hints are consumed (removed; `work_div` hints stay); loops for
#   tensors that overflow the per-core span limit.
"""Coarse tiling: run groups of hinted compute ops inside counted loops.

The counterpart of upstream MLIR's ``scf::tileUsingSCF`` (TileUsingInterface):
:func:`tile_group` is the library function, :class:`CoarseTilePass` the thin
pass.  Before (``spyre_hint(tiles={"A": 2})`` around ``spyre_hint(tiles={"B": 4})``)::

    %y = spyre.pointwise "add" (%a, %b) {hints = [#spyre.hint<1, tiles = {A = 2}>,
           #spyre.hint<2, tiles = {B = 4}>], dims = [["A"], ["B"]]} : ... -> tensor<1024x4096xf16, #L>
    %z = spyre.pointwise "mul" (%y, %c) {hints = [...same...], dims = [["A"], ["B"]]} : ...

After::

    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %loop_bound = arith.constant 2 : index
    %loop_bound_1 = arith.constant 4 : index
    %e = tensor.empty() : tensor<1024x4096xf16, #L>
    %z = scf.for %i = %c0 to %loop_bound step %c1 iter_args(%acc = %e) -> (tensor<1024x4096xf16, #L>) {
      %e1 = tensor.empty() : tensor<512x4096xf16, #T0>
      %zi = scf.for %i_1 = %c0 to %loop_bound_1 step %c1 iter_args(%acc1 = %e1) -> (...) {
        %r = affine.apply affine_map<(d0) -> ((d0 * 512))>(%i)
        %k = affine.apply affine_map<(d0) -> ((d0 * 1024))>(%i_1)
        %at = tensor.extract_slice %a[%r, %k] [512, 1024] [1, 1] : ... to tensor<512x1024xf16, #T>
        %bt = tensor.extract_slice %b[%r, %k] [512, 1024] [1, 1] : ...
        %yt = spyre.pointwise "add" (%at, %bt) {dims = [["A"], ["B"]]} : ... -> tensor<512x1024xf16, #T>
        %ct = tensor.extract_slice %c[%r, %k] [512, 1024] [1, 1] : ...
        %zt = spyre.pointwise "mul" (%yt, %ct) {dims = [["A"], ["B"]]} : ...
        %o = affine.apply affine_map<(d0) -> ((d0 * 1024))>(%i_1)
        %n = tensor.insert_slice %zt into %acc1[0, %o] [512, 1024] [1, 1] : ...
        scf.yield %n
      }
      %o0 = affine.apply affine_map<(d0) -> ((d0 * 512))>(%i)
      %n0 = tensor.insert_slice %zi into %acc[%o0, 0] [512, 4096] [1, 1] : ...
      scf.yield %n0
    }

(xDSL drops a trailing ``_<digits>`` of a name hint: level ``k`` prints as
``%loop_bound`` / ``%i`` for k = 0 and ``%loop_bound_<k>`` / ``%i_<k>`` after.)

Rules (DESIGN §7):

* **Groups.**  Contiguous compute ops of one block whose tiling hints
  (``tiles`` non-empty) overlap form a group; an op without tiling hints
  between members (an interloper) that does not depend on an earlier member
  moves before the group, else, if no later member depends on it, after it;
  otherwise it is an error.  A hint id in two groups is an error.  The
  copies of an assembly's pieces (``torch.cat``, :mod:`spyre_mlir.analysis.assembly`)
  are never members: a concatenation is not tiled (its ops are interlopers).
* **Levels.**  One loop level per (hint, name) in hint-id order (outer scope =
  outer loop), then the hint's own order; a level divides, in every op of the
  group that carries its hint, the iteration dims whose names start with its
  name.  An op that does not iterate the name stays outside that level's loop
  (loop-invariant).  Ops in a loop must be contiguous among their siblings.
* **Loop boundary.**  Operands defined outside the group are sliced from the
  full value through the op's indexing maps; values of the group used later
  leave each loop by ``tensor.insert_slice`` into an ``iter_args`` accumulator
  (init ``tensor.empty``), or, when the loop divides one of the op's reduction
  dims, by the op func's ``combine`` op into an accumulator initialised with
  ``spyre.fill`` of its ``identity`` (an averaging op func, ``mean``, is then
  scaled by ``1/count`` once after the loop).  A value used only inside stays
  a per-tile value; a value used inside and outside does both.
* **Hint consumption.**  Tiled ops (and every op of a group) lose the
  ``tiles`` of their hints (a hint with ``work_div`` keeps it), so re-running
  the pass changes nothing.
* **Span overflow.**  With ``span-tiling`` (default), a compute op that work
  division could not keep within the per-core span limit on the cores of the
  module's ``#spyre.target`` gets loops (:func:`span_levels`): the driver of
  the outermost spanning device dim of a tensor over the limit is tiled by the
  smallest count that keeps whole sticks and makes the op fit (else that
  tensor, else as far as it goes), and so on until the op fits.  Spans are
  those of the tensors' storage (:mod:`spyre_mlir.analysis.work`): a tile in a
  loop, hinted or not, is a window of the whole tensor and steps by its
  strides, so tiling shrinks a span only along the dims it divides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import affine, arith, scf, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from spyre_mlir.analysis.assembly import assembled_by
from spyre_mlir.analysis.linear import Linear, affine_linear, affine_sum
from spyre_mlir.analysis.work import PieceSpace, WorkProblem, reduce_spans, stick_pieces, work_problem
from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.dialects.spyre import (
    ComputeOp,
    FillOp,
    HintAttr,
    LayoutAttr,
    PointwiseOp,
    layout_attr,
    target_config,
    tensor_layout,
)
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.layout import stick_layout
from spyre_mlir.opfuncs import SCALE

# --------------------------------------------------------------------------
# Options and result records
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    """One loop level: ``count`` tiles of the iteration dims a name (or an explicit dim) selects."""

    count: int
    """Trip count of the loop."""

    name: str
    """The dimension name tiled (for diagnostics when ``dims`` is given)."""

    hint_id: int | None = None
    """The ``spyre_hint`` this level comes from; None for an automatic (span) level."""

    dims: tuple[int, ...] | None = None
    """Explicit iteration dims to divide (automatic levels of a single op); None: by ``name``."""

    def divided_dims(self, op: ComputeOp) -> tuple[int, ...]:
        """The iteration dims of ``op`` this level divides (empty: ``op`` is invariant at this level)."""
        if self.dims is not None:
            return self.dims
        if self.hint_id is not None and self.hint_id not in _tiling_hint_ids(op):
            return ()
        return tuple(d for d, names in enumerate(op.get_dim_names() or ()) if self.name in names)


@dataclass
class TilingResult:
    """What :func:`tile_group` created."""

    loops: list[scf.ForOp] = field(default_factory=list)
    """Every loop, in creation order (an outer loop after its inner loops)."""

    tiled_ops: dict[Operation, ComputeOp] = field(default_factory=dict)
    """Original compute op -> its per-tile op."""

    replacements: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """Original result used after the group -> the full value that replaces it."""


# --------------------------------------------------------------------------
# Linear tile offsets over the loop induction variables
# --------------------------------------------------------------------------


@dataclass(eq=False)
class LoopNode:
    """A loop of the schedule tree of a group: its level and what its body runs, in order."""

    level: Level
    index: int
    """The level's position in the group (outermost 0): names ``%loop_bound_<index>``, ``%i_<index>``."""

    body: list[LoopNode | ComputeOp] = field(default_factory=list)

    def __lt__(self, other: LoopNode) -> bool:
        """Outer loops first: the order of a tile offset's terms."""
        return self.index < other.index


def _iv(node: LoopNode, scale: int) -> Linear[LoopNode]:
    return Linear.term(node, scale)


def _iv_range(node: LoopNode) -> tuple[int, int]:
    """The values of ``node``'s induction variable."""
    return 0, node.level.count - 1


# --------------------------------------------------------------------------
# Tiles of an op: its iteration box and the windows of its tensors
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """A value that holds the elements ``[origin, origin + size)`` per dim of a full tensor."""

    value: SSAValue
    origins: tuple[Linear, ...]
    sizes: tuple[int, ...]
    partial_over: tuple[LoopNode, ...] = ()
    """Enclosing loops that divide a reduction dim of its producer: it is a partial result there."""

    @staticmethod
    def full(value: SSAValue) -> Window:
        """A whole value."""
        shape = _shape(value)
        return Window(value, tuple(Linear() for _ in shape), shape)


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _box(op: ComputeOp, path: Sequence[LoopNode]) -> tuple[list[Linear], list[int]]:
    """Origin and size of each iteration dim of the tile of ``op`` inside the loops ``path``.

    Errors: a name that selects two iteration dims (one loop index for both would
    visit only their diagonal), an extent not divisible by a level's count, a name
    that is an inner part of a flattened dim, a tile of a stick coordinate that is
    not whole sticks.
    """
    sizes = list(op.get_iteration_space())
    origins = [Linear() for _ in sizes]
    names = op.get_dim_names() or ()
    for node in path:
        level = node.level
        divided = level.divided_dims(op)
        if len(divided) > 1:
            raise SpyreError(f"'{op.name}' op: cannot tile dim '{level.name}': it names iteration dims "
                             f"{list(divided)}, and one loop would only visit the tiles where they are equal",
                             op=op)
        for d in divided:
            if d < len(names) and names[d][0] != level.name:
                raise SpyreError(f"'{op.name}' op: cannot tile dim '{level.name}': it is an inner part of "
                                 f"the flattened iteration dim {d} {list(names[d])}", op=op)
            if sizes[d] % level.count:
                raise SpyreError(f"'{op.name}' op: dim '{level.name}' of extent {sizes[d]} is not divisible "
                                 f"by the tile count {level.count}", op=op)
            extent = sizes[d]
            sizes[d] //= level.count
            origins[d] = origins[d] + _iv(node, sizes[d])
            _check_stick_tile(op, d, sizes[d], level, extent)
    return origins, sizes


def _check_stick_tile(op: ComputeOp, d: int, tile: int, level: Level, extent: int) -> None:
    """A tile of ``tile`` steps of iteration dim ``d`` must move and cover whole sticks of every tensor."""
    maps = op.get_indexing_maps()
    for value, m in zip((*op.inputs, op.result), maps, strict=True):
        layout = tensor_layout(value.type)
        if layout.stick_dim is None:
            continue
        linear = affine_linear(m.results[layout.stick_dim])
        coef = 1 if linear is None else linear.coefficient(d)
        if coef and (coef * tile) % layout.elems_per_stick:
            raise SpyreError(f"'{op.name}' op: tiling dim '{level.name}' of extent {extent} by {level.count} "
                             f"gives tiles of {tile} elements along the stick dim of a "
                             f"{list(_shape(value))} tensor, not a whole number of "
                             f"{layout.elems_per_stick}-element sticks", op=op)


@dataclass(frozen=True)
class TileRegion:
    """The region of one tensor a tile of an op touches, per storage dim, and the tile-relative map."""

    origins: tuple[Linear, ...]
    sizes: tuple[int, ...]
    exprs: tuple[AffineExpr, ...]
    """Coordinates relative to ``origins`` (linear dims) or absolute (other dims, never tiled)."""


def _access(op: ComputeOp, m: AffineMap, box: tuple[list[Linear], list[int]]) -> TileRegion:
    """The region map ``m`` reads or writes when the iteration dims range over ``box``."""
    b_origins, b_sizes = box
    rank = len(b_sizes)
    origins, sizes, exprs = [], [], []
    for expr in m.results:
        linear = affine_linear(expr)
        if linear is None:
            if any(not b_origins[d].is_const() for d in expr.used_dims()):
                raise SpyreError(f"'{op.name}' op: cannot tile the coordinate {expr}: it is not a linear "
                                 "combination of iteration dims", op=op)
            origins.append(Linear())
            sizes.append(-1)
            exprs.append(expr)
            continue
        coefs = [linear.coefficient(d) for d in range(rank)]
        origin = Linear.constant(linear.const)
        for d, c in enumerate(coefs):
            origin = origin + b_origins[d].scaled(c)
        origins.append(origin)
        sizes.append(sum(c * (s - 1) for c, s in zip(coefs, b_sizes)) + 1)
        exprs.append(affine_sum(coefs, 0))
    return TileRegion(tuple(origins), tuple(sizes), tuple(exprs))


def tile_type(full: TensorType, sizes: Sequence[int]) -> TensorType:
    """``full`` with shape ``sizes`` and a ``#spyre.layout`` computed for that shape (when it had one).

    A dim the tile covers whole keeps the full tensor's padding (``padded_shape``).
    """
    encoding = full.encoding
    if isinstance(encoding, LayoutAttr):
        layout = tensor_layout(full)
        padded = [p if s == f else s for s, f, p in zip(sizes, layout.host_shape, layout.padded_host_shape)]
        encoding = layout_attr(stick_layout(list(sizes), layout.dtype, list(layout.dim_order) or None,
                                            padded_shape=padded))
    return TensorType(full.get_element_type(), list(sizes), encoding)


# --------------------------------------------------------------------------
# IR building helpers
# --------------------------------------------------------------------------


@dataclass
class _Emitter:
    """Builds a group's IR: loop constants, offsets (one ``affine.apply`` per body and offset), slices."""

    builder: Builder
    result: TilingResult
    ivs: dict[LoopNode, SSAValue] = field(default_factory=dict)
    offsets: dict[tuple[Block | None, Linear], SSAValue] = field(default_factory=dict)
    constants: dict[str, SSAValue] = field(default_factory=dict)
    slices: dict[tuple[Block | None, SSAValue, tuple[Linear, ...], tuple[int, ...]], SSAValue] = field(
        default_factory=dict)
    """One ``tensor.extract_slice`` per body, source and region."""
    paths: dict[ComputeOp, tuple[LoopNode, ...]] = field(default_factory=dict)
    """Each op's enclosing loops (outermost first)."""

    def index(self, value: int, hint: str) -> SSAValue:
        """An ``arith.constant`` index named ``hint``, built once per group."""
        if hint not in self.constants:
            op = self.builder.insert(arith.ConstantOp(IntegerAttr(value, IndexType())))
            op.result.name_hint = hint
            self.constants[hint] = op.result
        return self.constants[hint]

    def offset(self, linear: Linear) -> SSAValue | int:
        """``linear`` as a static int, or an ``affine.apply`` of the induction variables."""
        if linear.is_const():
            return linear.const
        key = (self.builder.insertion_point.block, linear)
        if key not in self.offsets:
            nodes = [n for n, _ in linear.terms]
            expr = affine_sum([c for _, c in linear.terms], linear.const)
            apply = self.builder.insert(affine.ApplyOp(
                [self.ivs[n] for n in nodes], AffineMapAttr(AffineMap(len(nodes), 0, (expr,)))))
            self.offsets[key] = apply.result
        return self.offsets[key]


def build_loop_nest(emitter: _Emitter, node: LoopNode, inits: Sequence[SSAValue],
                    body: Callable[[Builder, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]]) -> scf.ForOp:
    """One ``scf.for`` of ``node``'s level: ``0 .. count`` step 1 carrying ``inits``.

    ``body(builder, iv, accumulators)`` fills the body and returns the values to yield.
    """
    c0 = emitter.index(0, "c0")
    c1 = emitter.index(1, "c1")
    bound = emitter.constants.get(f"loop_bound_{node.index}")
    assert bound is not None, "loop bounds are built before the nest"
    block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
    block.args[0].name_hint = "i" if node.index == 0 else f"i_{node.index}"
    outer = emitter.builder
    emitter.builder = Builder(InsertPoint.at_end(block))
    emitter.ivs[node] = block.args[0]
    yielded = body(emitter.builder, block.args[0], block.args[1:])
    emitter.builder.insert(scf.YieldOp(*yielded))
    emitter.builder = outer
    loop = outer.insert(scf.ForOp(c0, bound, c1, list(inits), Region(block)))
    emitter.result.loops.append(loop)
    return loop


def _strip_tiles(op: ComputeOp) -> None:
    """Consume ``op``'s tiling hints: drop their ``tiles`` (a hint with ``work_div`` stays)."""
    if op.hints is None:
        return
    kept = [HintAttr(h.hint_id.data, None, h.work_div_counts()) for h in op.get_hints() if h.work_div.data]
    if kept:
        op.hints = ArrayAttr(kept)
    else:
        del op.properties["hints"]


def _tiling_hint_ids(op: Operation) -> tuple[int, ...]:
    """The ids of ``op``'s hints with ``tiles``; none for a piece of an assembly (its copy writes a
    window of the assembled buffer, which stays whole: concatenations are not tiled)."""
    if not isinstance(op, ComputeOp) or assembled_by(op) is not None:
        return ()
    return tuple(h.hint_id.data for h in op.get_hints() if h.tiles.data)


# --------------------------------------------------------------------------
# tile_group
# --------------------------------------------------------------------------


def schedule(ops: Sequence[ComputeOp], levels: Sequence[Level]) -> tuple[list[LoopNode | ComputeOp],
                                                                          dict[ComputeOp, tuple[LoopNode, ...]]]:
    """The loop tree of a group: each level's loop holds the contiguous ops it divides.

    Returns the root body and each op's enclosing loops (outermost first).
    """
    paths: dict[ComputeOp, tuple[LoopNode, ...]] = {}

    def build(run: Sequence[ComputeOp], index: int, path: tuple[LoopNode, ...]) -> list[LoopNode | ComputeOp]:
        if index == len(levels):
            paths.update((op, path) for op in run)
            return list(run)
        level, nodes, loops = levels[index], [], 0
        for inside, part in _runs(run, lambda op: bool(level.divided_dims(op))):
            if not inside:
                nodes.extend(build(part, index + 1, path))
                continue
            loops += 1
            if loops > 1:
                raise SpyreError(f"'{part[0].name}' op: the ops tiled by dim '{level.name}' are not contiguous "
                                 "inside their enclosing loop: they would need two loops", op=part[0])
            node = LoopNode(level, index)
            node.body = build(part, index + 1, (*path, node))
            nodes.append(node)
        return nodes

    return build(ops, 0, ()), paths


def _runs(ops: Sequence[ComputeOp], key: Callable[[ComputeOp], bool]) -> list[tuple[bool, list[ComputeOp]]]:
    runs: list[tuple[bool, list[ComputeOp]]] = []
    for op in ops:
        if runs and runs[-1][0] == key(op):
            runs[-1][1].append(op)
        else:
            runs.append((key(op), [op]))
    return runs


def tile_group(builder: Builder, ops: Sequence[ComputeOp], levels: Sequence[Level]) -> TilingResult:
    """Run the contiguous compute ops ``ops`` inside loops of ``levels`` (outermost first).

    ``builder`` inserts before the first op; ``ops`` are replaced (and erased).
    Returns the loops, the per-tile ops and the replacement of every result
    used after the group.
    """
    result = TilingResult()
    emitter = _Emitter(builder, result)
    # 1. The schedule tree and each op's enclosing loops.
    root, paths = schedule(ops, levels)
    # 2. Constants shared by the nest.
    emitter.index(0, "c0")
    emitter.index(1, "c1")
    for k, level in enumerate(levels):
        emitter.index(level.count, f"loop_bound_{k}")
    # 3. The nest, body by body, from the full values of the operands.
    scope: dict[SSAValue, Window] = {}
    emitter.paths = paths
    _emit_nodes(emitter, root, (), scope, {})
    # 4. Replace the group's results used after it by the full values, erase the originals.
    members = set(ops)
    for op in ops:
        if any(use.operation not in members for use in op.result.uses):
            window = scope[op.result]
            assert all(o.is_const() and o.const == 0 for o in window.origins)
            result.replacements[op.result] = window.value
            op.result.replace_uses_with_if(window.value, lambda use: use.operation not in members)
    for op in reversed(ops):
        op.detach()
        op.erase()
    return result


def _subtree_ops(nodes: Iterable[LoopNode | ComputeOp]) -> list[ComputeOp]:
    ops: list[ComputeOp] = []
    for n in nodes:
        ops.extend(_subtree_ops(n.body) if isinstance(n, LoopNode) else [n])
    return ops


def _emit_nodes(emitter: _Emitter, nodes: Sequence[LoopNode | ComputeOp], path: tuple[LoopNode, ...],
                scope: dict[SSAValue, Window], threaded: dict[SSAValue, tuple[SSAValue, TileRegion]]) -> None:
    """Emit ``nodes`` (one body of the tree) at the emitter's insertion point."""
    for node in nodes:
        if isinstance(node, LoopNode):
            _emit_loop(emitter, node, path, scope, threaded)
        else:
            _emit_tile_op(emitter, node, path, scope)


def _emit_tile_op(emitter: _Emitter, op: ComputeOp, path: tuple[LoopNode, ...],
                  scope: dict[SSAValue, Window]) -> None:
    """The per-tile op of ``op`` inside ``path``: sliced operands, tile result type, tile maps."""
    # 1. The tile of the iteration space.
    box = _box(op, path)
    maps = op.get_indexing_maps()
    # 2. Each operand: the region its map touches, from the window that holds it.
    operands, tile_maps = [], []
    for value, m in zip(op.inputs, maps[:-1]):
        window = scope.get(value, Window.full(value))
        if window.partial_over:
            raise SpyreError(f"'{op.name}' op reads a partial reduction inside the loop over dim "
                             f"'{window.partial_over[0].level.name}' that produces it; the complete value "
                             "exists only after that loop", op=op)
        tile, exprs = _read(emitter, op, window, _access(op, m, box))
        operands.append(tile)
        tile_maps.append(AffineMap(len(box[1]), 0, exprs))
    # 3. The result: a tile of its region.
    out = _access(op, maps[-1], box)
    assert all(s > 0 for s in out.sizes), "result coordinates are linear"
    out_type = tile_type(op.result.type, out.sizes)
    tile_maps.append(AffineMap(len(box[1]), 0, out.exprs))
    new = _rebuild(op, operands, out_type, box[1], tile_maps)
    emitter.builder.insert(new)
    emitter.result.tiled_ops[op] = new
    scope[op.result] = Window(new.result, out.origins, out.sizes,
                              tuple(n for n in path if set(n.level.divided_dims(op)) & set(op.reduction_dims())))


def _read(emitter: _Emitter, op: ComputeOp, window: Window, access: TileRegion) -> tuple[SSAValue, tuple[AffineExpr, ...]]:
    """The value ``op``'s tile reads (``window``'s value or a slice of it) and its tile-relative coordinates."""
    offsets: list[Linear] = []
    sizes: list[int] = []
    exprs: list[AffineExpr] = []
    for j, (origin, size, expr) in enumerate(zip(access.origins, access.sizes, access.exprs)):
        relative = origin + window.origins[j].scaled(-1)
        if size < 0 and relative != Linear():
            raise SpyreError(f"'{op.name}' op reads dim {j} of a tile through the non-linear coordinate "
                             f"{expr}; it needs the whole value", op=op)
        lo, hi = relative.bounds(_iv_range)
        if size > 0 and (lo < 0 or hi + size > window.sizes[j]):
            raise SpyreError(f"'{op.name}' op reads elements [{lo}, {hi + size}) of dim {j} of a tile of "
                             f"{window.sizes[j]} elements: it needs more of a value than its loop produces", op=op)
        if relative.is_const():
            offsets.append(Linear())
            sizes.append(window.sizes[j])
            exprs.append(expr + relative.const if size > 0 else expr)
        else:
            offsets.append(relative)
            sizes.append(size)
            exprs.append(expr)
    if all(o.is_const() for o in offsets):
        return window.value, tuple(exprs)
    assert isinstance(window.value.type, TensorType)
    slice_type = tile_type(window.value.type, sizes)
    key = (emitter.builder.insertion_point.block, window.value, tuple(offsets), tuple(sizes))
    if key not in emitter.slices:
        values = [emitter.offset(o) for o in offsets]
        emitter.slices[key] = emitter.builder.insert(
            tensor.ExtractSliceOp(window.value, values, sizes, [1] * len(sizes), slice_type)).result
    return emitter.slices[key], tuple(exprs)


def _rebuild(op: ComputeOp, operands: Sequence[SSAValue], out_type: TensorType, space: Sequence[int],
             maps: Sequence[AffineMap]) -> ComputeOp:
    """A copy of ``op`` on the tile, at its location: implicit maps when the tile types imply them,
    else explicit ones."""
    properties = {k: v for k, v in op.properties.items()
                  if k not in ("indexing_maps", "iteration_space", "core_splits", "placement")}
    new = type(op).create(operands=list(operands), result_types=[out_type], properties=properties,
                          attributes=dict(op.attributes), location=op.location)
    _strip_tiles(new)
    implicit = (not op.has_explicit_maps() and tuple(new.default_iteration_space()) == tuple(space)
                and tuple(new.default_indexing_maps()) == tuple(maps))
    if not implicit:
        new.set_indexing(space, maps)
    return new


def _emit_loop(emitter: _Emitter, node: LoopNode, path: tuple[LoopNode, ...], scope: dict[SSAValue, Window],
               threaded: dict[SSAValue, tuple[SSAValue, TileRegion]]) -> None:
    """``node``'s loop: its body, and an accumulator for each value used after it.

    ``threaded`` maps a value to the accumulator of an enclosing loop (and the
    region it holds) that this loop may update in place: its tiles are then
    inserted straight into the outer buffer (DESIGN §4 write-through).
    """
    # 1. Values that leave the loop, and how: insert a tile or combine a partial result.
    inside = set(_subtree_ops(node.body))
    leaving = [op for op in _subtree_ops(node.body) if any(u.operation not in inside for u in op.result.uses)]
    exits = [_exit(op, node, path, emitter.paths[op]) for op in leaving]
    targets = [threaded[op.result][1] if op.result in threaded and not combine else parent
               for op, (parent, combine) in zip(leaving, exits)]
    # 2. Accumulators, built before the loop: the enclosing loop's, a spyre.fill or a tensor.empty.
    inits = []
    for op, (parent, combine) in zip(leaving, exits):
        acc_type = tile_type(op.result.type, parent.sizes)
        if op.result in threaded and not combine:
            inits.append(threaded[op.result][0])
        elif combine:
            identity = op.op_func().identity
            if identity is None:
                raise SpyreError(f"'{op.name}' op: op func '{op.op_func().name}' has no identity to "
                                 f"initialise the accumulator of its reduction dim '{node.level.name}'", op=op)
            inits.append(emitter.builder.insert(FillOp(identity, acc_type)).result)
        else:
            inits.append(emitter.builder.insert(tensor.EmptyOp([], acc_type)).tensor)
    body_scope = dict(scope)

    # 3. The body: the tiles, then each accumulator's update.
    def body(b: Builder, iv: SSAValue, accs: Sequence[SSAValue]) -> list[SSAValue]:
        inner = {op.result: (acc, target) for op, (_, combine), acc, target in zip(leaving, exits, accs, targets)
                 if not combine and _threadable(op, node, inside)}
        _emit_nodes(emitter, node.body, (*path, node), body_scope, inner)
        updated = []
        for op, (parent, combine), acc, target in zip(leaving, exits, accs, targets):
            tile = body_scope[op.result]
            if combine:
                func = op.op_func()
                assert func.combine is not None and tile.sizes == parent.sizes
                updated.append(b.insert(PointwiseOp(func.combine, [acc, tile.value], acc.type)).result)
            elif tile.value.type == acc.type and tile.origins == target.origins:
                updated.append(tile.value)  # an inner loop already wrote the tile into this accumulator
            else:
                offsets = [emitter.offset(o + t.scaled(-1)) for o, t in zip(tile.origins, target.origins)]
                static = [o if isinstance(o, int) else tensor.DYNAMIC_INDEX for o in offsets]
                updated.append(b.insert(tensor.InsertSliceOp.get(
                    tile.value, acc, list(tile.sizes), static,
                    offsets=[o for o in offsets if not isinstance(o, int)])).result)
        return updated

    loop = build_loop_nest(emitter, node, inits, body)
    # 4. The loop results are the leaving values' regions around the loop.
    for op, (_, combine), target, value in zip(leaving, exits, targets, loop.results):
        if combine and op.op_func().averages:
            value = emitter.builder.insert(PointwiseOp(SCALE, [value], value.type,
                                                       {"y": 1.0 / node.level.count})).result
        scope[op.result] = Window(value, target.origins, target.sizes,
                                  tuple(n for n in body_scope[op.result].partial_over if n is not node))


def _threadable(op: ComputeOp, node: LoopNode, inside: set[ComputeOp]) -> bool:
    """True when ``op``'s result is used only in the child loop that produces it or after ``node``.

    Then that child loop can insert its tiles into ``node``'s accumulator directly.
    """
    child = next((n for n in node.body if isinstance(n, LoopNode) and op in _subtree_ops(n.body)), None)
    if child is None:
        return False
    in_child = set(_subtree_ops(child.body))
    return all(u.operation in in_child or u.operation not in inside for u in op.result.uses)


def _exit(op: ComputeOp, node: LoopNode, path: tuple[LoopNode, ...],
          op_path: tuple[LoopNode, ...]) -> tuple[TileRegion, bool]:
    """The region of ``op``'s result around ``node`` and whether ``node`` combines partial results."""
    divided = set(node.level.divided_dims(op))
    reduced = divided & set(op.reduction_dims())
    if reduced and divided - reduced:
        raise SpyreError(f"'{op.name}' op: dim '{node.level.name}' names both a reduction dim and an output "
                         "dim of the op; tile one of them", op=op)
    assert op_path[:len(path)] == path
    return _access(op, op.get_indexing_maps()[-1], _box(op, path)), bool(reduced)


# --------------------------------------------------------------------------
# Groups of a block
# --------------------------------------------------------------------------


@dataclass
class Group:
    """Contiguous compute ops with overlapping tiling hints, and the ops between them."""

    members: list[ComputeOp]
    hint_ids: set[int]
    interlopers: list[Operation] = field(default_factory=list)

    def describe(self) -> str:
        """How diagnostics name the group."""
        ops = ", ".join(f"'{op.name}'" for op in self.members)
        return f"the group of hints {sorted(self.hint_ids)} ({ops})"


def find_groups(block: Block) -> list[Group]:
    """The groups of ``block`` in order; a hint id in two groups is an error."""
    groups: list[Group] = []
    pending: list[Operation] = []
    for op in block.ops:
        ids = set(_tiling_hint_ids(op))
        if not ids:
            if groups:
                pending.append(op)
            continue
        assert isinstance(op, ComputeOp)
        if groups and ids & groups[-1].hint_ids:
            groups[-1].members.append(op)
            groups[-1].interlopers.extend(pending)
            groups[-1].hint_ids |= ids
        else:
            for g in groups:
                if ids & g.hint_ids:
                    raise SpyreError(f"'{op.name}' op: tiling hint {sorted(ids & g.hint_ids)[0]} would form two "
                                     f"groups: {g.describe()} is separated from this op by other tiling hints",
                                     op=op)
            groups.append(Group([op], ids))
        pending = []
    return groups


def clear_interlopers(group: Group) -> None:
    """Move each op between the members out of the group: before it if possible, else after it."""
    block = group.members[0].parent_block()
    assert block is not None
    staying: set[Operation] = set(group.members)
    after: list[Operation] = []
    for op in group.interlopers:
        if any(_owner_in(block, v) in staying for nested in op.walk() for v in nested.operands):
            staying.add(op)
            after.append(op)
            continue
        op.detach()
        block.insert_op_before(op, group.members[0])
    for i, op in enumerate(after):
        users = {block.find_ancestor_op_in_block(u.operation) for r in op.results for u in r.uses}
        if users & set(group.members):
            pieces = [o for o in after[:i + 1] if assembled_by(o) is not None]
            if pieces:
                raise SpyreError(f"'{pieces[0].name}' op: a concatenation (torch.cat, torch.stack) inside "
                                 f"{group.describe()} reads an op of it and an op of it reads it; concatenations "
                                 "are not tiled: compute it outside the spyre_hint(tiles=...) scope", op=pieces[0])
            raise SpyreError(f"'{op.name}' op sits inside {group.describe()}, depends on an op of it, and an "
                             "op of it depends on it: it can move neither before nor after the group", op=op)
    anchor: Operation = group.members[-1]
    for op in after:
        op.detach()
        block.insert_op_after(op, anchor)
        anchor = op


def _owner_in(block: Block, value: SSAValue) -> Operation | None:
    owner = value.owner
    return block.find_ancestor_op_in_block(owner) if isinstance(owner, Operation) else None


def group_levels(group: Group, known_names: set[str]) -> list[Level]:
    """One level per (hint, name) of the group in hint-id order.

    A name no op of the function knows is an error; a name no op carrying the
    hint iterates is a warning, and the level is dropped.
    """
    hints: dict[int, HintAttr] = {}
    for op in group.members:
        for h in op.get_hints():
            if h.tiles.data:
                hints.setdefault(h.hint_id.data, h)
    levels = []
    for hint_id in sorted(hints):
        for name, count in hints[hint_id].tile_counts().items():
            level = Level(count, name, hint_id)
            scope = [op for op in group.members if hint_id in _tiling_hint_ids(op)]
            if name not in known_names:
                raise SpyreError(f"tiling hint {hint_id} names dim '{name}' (count {count}), which no op of the "
                                 "function knows: declare it and name the input dims", op=scope[0])
            if not any(level.divided_dims(op) for op in scope):
                emit_warning(f"tiling hint {hint_id}: no op in its scope iterates dim '{name}'; "
                             f"the tile count {count} is ignored", op=scope[0])
                continue
            levels.append(level)
    return levels


def _known_names(func: FuncOp) -> set[str]:
    names: set[str] = set()
    for op in func.walk():
        if isinstance(op, ComputeOp):
            names.update(n for dim in (op.get_dim_names() or ()) for n in dim)
    return names


def tile_hinted_groups(func: FuncOp) -> list[TilingResult]:
    """Tile every group of ``func``'s body by its hints; consume the hints."""
    results = []
    known = _known_names(func)
    for group in find_groups(func.body.block):
        clear_interlopers(group)
        levels = group_levels(group, known)
        if levels:
            results.append(tile_group(Builder(InsertPoint.before(group.members[0])), group.members, levels))
        else:
            for op in group.members:
                _strip_tiles(op)
    return results


# --------------------------------------------------------------------------
# Span-overflow tiling
# --------------------------------------------------------------------------


def _fits(problem: WorkProblem, config: SpyreConfig, sizes: Sequence[int]) -> bool:
    """True when work division can keep every tensor of ``problem`` within the span limit on a
    tile of ``sizes`` (each tensor's strides those of its storage, which tiling does not change)."""
    space = PieceSpace(tuple(sizes), stick_pieces(sizes, problem.tensors))
    try:
        reduce_spans(problem, space, config)
    except SpyreError:
        return False
    return True


def span_levels(op: ComputeOp, config: SpyreConfig) -> list[Level]:
    """The loop levels that bring ``op`` within the span limit, none when it fits already.

    While work division could not keep the tile within the limit, the first tensor over it
    whole has its outermost spanning device dim's first divisible driver tiled: by the smallest
    stick-aligned count that makes the op fit, else the smallest that makes that tensor fit, else
    the largest (the dim then spans a position at a time and the next dim in decides).  One level
    per tiled dim, in iteration order; no count left is an error naming the op.
    """
    problem = work_problem(op)
    sizes = list(op.get_iteration_space())
    counts: dict[int, int] = {}
    while not _fits(problem, config, sizes):
        space = PieceSpace(tuple(sizes), stick_pieces(sizes, problem.tensors))
        over = next(t for i, t in enumerate(problem.tensors)
                    if i not in problem.shared and space.span(t, {}) > config.span_limit_bytes)
        spanning = next(dim for dim in over.dims if dim.positions(space.padded_per_core({})) > 1)
        choices = [(d, _tile_counts(sizes[d], space.piece_elems[d])) for d in sorted(spanning.coord.used_dims())]
        d, options = next(((d, c) for d, c in choices if c), (None, []))
        if d is None:
            raise SpyreError(f"'{op.name}' op: no tile count that keeps whole sticks brings {over.name} within the "
                             f"per-core span limit of {config.span_limit_bytes} bytes on {config.cores} cores",
                             op=op)
        alone = replace(problem, tensors=(over,), shared=())

        def tiled(count: int) -> list[int]:
            return [s // count if i == d else s for i, s in enumerate(sizes)]

        count = next((c for c in options if _fits(problem, config, tiled(c))),
                     next((c for c in options if _fits(alone, config, tiled(c))), options[-1]))
        counts[d] = counts.get(d, 1) * count
        sizes = tiled(count)
    names = op.get_dim_names()
    return [Level(count, names[d][0] if names else f"d{d}", None, (d,)) for d, count in sorted(counts.items())]


def _tile_counts(size: int, piece: int) -> list[int]:
    """The counts above 1 that divide ``size`` into tiles of whole pieces, increasing."""
    return [c for c in range(2, size + 1) if size % c == 0 and (size // c) % piece == 0]


def tile_span_overflows(func: FuncOp, config: SpyreConfig) -> list[TilingResult]:
    """Give every compute op of ``func`` that overflows the span limit its own loop."""
    results = []
    for op in [op for op in func.walk() if isinstance(op, ComputeOp) and assembled_by(op) is None]:
        levels = span_levels(op, config)
        if levels:
            results.append(tile_group(Builder(InsertPoint.before(op)), [op], levels))
    return results


# --------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CoarseTilePass(ModulePass):
    """Tile hinted groups of compute ops into ``scf.for`` nests (and span overflows)."""

    name = "spyre-coarse-tile"

    span_tiling: bool = True
    """Also tile ops whose tensors cannot be divided across the cores of the module's
    ``#spyre.target`` within the per-core span limit."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = target_config(op)
        for func in [f for f in op.walk() if isinstance(f, FuncOp)]:
            if not func.body.blocks:
                continue
            tile_hinted_groups(func)
            if self.span_tiling:
                tile_span_overflows(func, config)
