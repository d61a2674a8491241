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
# The pass and its entry points are here; beside them: groups.py (hinted groups
#   and their levels), span.py (span-overflow levels), schedule.py (levels, the
#   schedule tree, hint consumption), tiles.py (an op's tile and the regions of
#   its tensors), nest.py (constants, offsets, loops), emit.py (per-tile ops,
#   operand slices, loop accumulators).
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
  Where an op iterates the name over several dims that make one index
  (grouped-query heads: a matmul reads ``kv * g + q``, the key/value head and
  the query head within its group), the count is taken over them outermost
  first, one loop per dim it divides: 16 tiles of 32 heads iterated as 8 x 4
  are a loop of 8 around a loop of 2; the ops that iterate the name whole take
  both loops in turn.  A count that is no whole blocks of the dims is an error.
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

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from spyre_mlir.analysis.assembly import assembled_by
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, target_config
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.passes.coarse_tile.emit import emit_nodes
from spyre_mlir.passes.coarse_tile.groups import Group, clear_interlopers, find_groups, group_levels, known_dim_names
from spyre_mlir.passes.coarse_tile.nest import Emitter, TilingResult, build_loop_nest
from spyre_mlir.passes.coarse_tile.schedule import Level, LoopNode, schedule, strip_tiles
from spyre_mlir.passes.coarse_tile.span import span_levels
from spyre_mlir.passes.coarse_tile.tiles import TileRegion, Window, tile_box, tile_region, tile_type

__all__ = [
    "CoarseTilePass", "tile_group", "tile_hinted_groups", "tile_span_overflows",
    "Level", "TilingResult", "LoopNode", "Window", "TileRegion", "Group",
    "schedule", "build_loop_nest", "tile_type", "find_groups", "clear_interlopers", "group_levels", "span_levels",
]


def tile_group(builder: Builder, ops: Sequence[ComputeOp], levels: Sequence[Level]) -> TilingResult:
    """Run the contiguous compute ops ``ops`` inside loops of ``levels`` (outermost first).

    ``builder`` inserts before the first op; ``ops`` are replaced (and erased).
    Returns the loops, the per-tile ops and the replacement of every result
    used after the group.
    """
    members = set(ops)
    for op in ops:
        _check_whole_result(op, members)
    result = TilingResult()
    emitter = Emitter(builder, result)
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
    emit_nodes(emitter, root, (), scope, {})
    # 4. Replace the group's results used after it by the full values, erase the originals.
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


def _check_whole_result(op: ComputeOp, members: set[ComputeOp]) -> None:
    """Refuse to tile ``op`` when its result is a slice of the region it writes (a matmul computing
    every column of a result narrowed to some, the others written into the result's padding) and
    something other than a compute op reads it after the group (a function result): the loop
    gives the whole region, which compute ops read as the slice, but which would be returned
    whole."""
    users = [u.operation for u in op.result.uses
             if u.operation not in members and not isinstance(u.operation, ComputeOp)]
    if not users:
        return
    written = list(tile_region(op, op.get_indexing_maps()[-1], tile_box(op, ())).sizes)
    assert isinstance(op.result.type, TensorType)
    shape = list(op.result.type.get_shape())
    if written != shape:
        raise SpyreError(f"'{op.name}' op: cannot tile it: it computes {written} and its result is the slice "
                         f"{shape} of that (the rest written into the result's padding), which '{users[0].name}' "
                         f"reads; tiled, it would read all {written}: leave the op out of the tiles hint", op=op)


def tile_hinted_groups(func: FuncOp) -> list[TilingResult]:
    """Tile every group of ``func``'s body by its hints; consume the hints."""
    results = []
    known = known_dim_names(func)
    for group in find_groups(func.body.block):
        clear_interlopers(group)
        levels = group_levels(group, known)
        if levels:
            results.append(tile_group(Builder(InsertPoint.before(group.members[0])), group.members, levels))
        else:
            for op in group.members:
                strip_tiles(op)
    return results


def tile_span_overflows(func: FuncOp, config: SpyreConfig) -> list[TilingResult]:
    """Give every compute op of ``func`` that overflows the span limit its own loop."""
    results = []
    for op in [op for op in func.walk() if isinstance(op, ComputeOp) and assembled_by(op) is None]:
        levels = span_levels(op, config)
        if levels:
            results.append(tile_group(Builder(InsertPoint.before(op)), [op], levels))
    return results


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
