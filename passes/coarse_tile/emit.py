# The body of a tiled group, as spyre-coarse-tile emits it.  Reads the group's
# compute ops through the ComputeOp interface (iteration space, indexing maps,
# reduction dims) and the op-func table (`identity`, `combine`, `averages`);
# writes per-tile compute ops on `tensor.extract_slice`s of their operands, and
# per loop an accumulator of each value that leaves it: `tensor.empty` filled
# by `tensor.insert_slice`, or `spyre.fill` of the identity updated by the
# combine op (and scaled once after the loop for an averaging op func).
"""Emission of a group's schedule tree: per-tile ops, operand slices and loop accumulators.

:func:`emit_nodes` walks the tree of :func:`~spyre_mlir.passes.coarse_tile.schedule.schedule`
body by body.  A compute op becomes its per-tile copy, reading the region its
maps reach from the window that holds each operand; a loop carries one
accumulator per value used after it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from spyre_mlir.analysis.linear import Linear
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, FillOp, PointwiseOp
from spyre_mlir.opfuncs import SCALE
from spyre_mlir.passes.coarse_tile.nest import Emitter, build_loop_nest
from spyre_mlir.passes.coarse_tile.schedule import LoopNode, strip_tiles, subtree_ops
from spyre_mlir.passes.coarse_tile.tiles import TileRegion, Window, tile_box, tile_region, tile_type


def emit_nodes(emitter: Emitter, nodes: Sequence[LoopNode | ComputeOp], path: tuple[LoopNode, ...],
               scope: dict[SSAValue, Window], threaded: dict[SSAValue, tuple[SSAValue, TileRegion]]) -> None:
    """Emit ``nodes`` (one body of the tree) at the emitter's insertion point."""
    for node in nodes:
        if isinstance(node, LoopNode):
            _emit_loop(emitter, node, path, scope, threaded)
        else:
            _emit_tile_op(emitter, node, path, scope)


def _emit_tile_op(emitter: Emitter, op: ComputeOp, path: tuple[LoopNode, ...],
                  scope: dict[SSAValue, Window]) -> None:
    """The per-tile op of ``op`` inside ``path``: sliced operands, tile result type, tile maps."""
    # 1. The tile of the iteration space.
    box = tile_box(op, path)
    maps = op.get_indexing_maps()
    # 2. Each operand: the region its map touches, from the window that holds it.
    operands, tile_maps = [], []
    for value, m in zip(op.inputs, maps[:-1]):
        window = scope.get(value, Window.full(value))
        if window.partial_over:
            raise SpyreError(f"'{op.name}' op reads a partial reduction inside the loop over dim "
                             f"'{window.partial_over[0].level.name}' that produces it; the complete value "
                             "exists only after that loop", op=op)
        tile, exprs = _read(emitter, op, window, tile_region(op, m, box))
        operands.append(tile)
        tile_maps.append(AffineMap(len(box[1]), 0, exprs))
    # 3. The result: a tile of its region.
    out = tile_region(op, maps[-1], box)
    assert all(s > 0 for s in out.sizes), "result coordinates are linear"
    out_type = tile_type(op.result.type, out.sizes)
    tile_maps.append(AffineMap(len(box[1]), 0, out.exprs))
    new = _rebuild(op, operands, out_type, box[1], tile_maps)
    emitter.builder.insert(new)
    emitter.result.tiled_ops[op] = new
    scope[op.result] = Window(new.result, out.origins, out.sizes,
                              tuple(n for n in path if set(n.level.divided_dims(op)) & set(op.reduction_dims())))


def _iv_range(node: LoopNode) -> tuple[int, int]:
    """The values of ``node``'s induction variable."""
    return 0, node.level.count - 1


def _read(emitter: Emitter, op: ComputeOp, window: Window, access: TileRegion) -> tuple[SSAValue, tuple[AffineExpr, ...]]:
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
            tensor.ExtractSliceOp(window.value, values, slice_type.get_shape(), [1] * len(sizes),
                                  slice_type)).result
    return emitter.slices[key], tuple(exprs)


def _rebuild(op: ComputeOp, operands: Sequence[SSAValue], out_type: TensorType, space: Sequence[int],
             maps: Sequence[AffineMap]) -> ComputeOp:
    """A copy of ``op`` on the tile, at its location: implicit maps when the tile types imply them,
    else explicit ones."""
    properties = {k: v for k, v in op.properties.items()
                  if k not in ("indexing_maps", "iteration_space", "core_splits", "placement")}
    new = type(op).create(operands=list(operands), result_types=[out_type], properties=properties,
                          attributes=dict(op.attributes), location=op.location)
    strip_tiles(new)
    implicit = (not op.has_explicit_maps() and tuple(new.default_iteration_space()) == tuple(space)
                and tuple(new.default_indexing_maps()) == tuple(maps))
    if not implicit:
        new.set_indexing(space, maps)
    return new


def _emit_loop(emitter: Emitter, node: LoopNode, path: tuple[LoopNode, ...], scope: dict[SSAValue, Window],
               threaded: dict[SSAValue, tuple[SSAValue, TileRegion]]) -> None:
    """``node``'s loop: its body, and an accumulator for each value used after it.

    ``threaded`` maps a value to the accumulator of an enclosing loop (and the
    region it holds) that this loop may update in place: its tiles are then
    inserted straight into the outer buffer (DESIGN §4 write-through).
    """
    # 1. Values that leave the loop, and how: insert a tile or combine a partial result.
    inside = set(subtree_ops(node.body))
    leaving = [op for op in subtree_ops(node.body) if any(u.operation not in inside for u in op.result.uses)]
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
        emit_nodes(emitter, node.body, (*path, node), body_scope, inner)
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
                assert isinstance(tile.value.type, TensorType)
                updated.append(b.insert(tensor.InsertSliceOp.get(
                    tile.value, acc, list(tile.value.type.get_shape()), static,
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
    child = next((n for n in node.body if isinstance(n, LoopNode) and op in subtree_ops(n.body)), None)
    if child is None:
        return False
    in_child = set(subtree_ops(child.body))
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
    return tile_region(op, op.get_indexing_maps()[-1], tile_box(op, path)), bool(reduced)
