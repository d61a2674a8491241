# The tiles of one compute op inside a loop nest of spyre-coarse-tile: its
# iteration box, the region of each tensor it touches, tile tensor types.
# Reads iteration spaces, indexing maps, `dims` names and `#spyre.layout`
# encodings; writes no IR (tile_type builds the `#spyre.layout` of a tile).
"""Tiles of an op: its iteration box and the windows of its tensors.

Tile origins are :class:`~spyre_mlir.analysis.linear.Linear` combinations of the
enclosing loops' induction variables (a :class:`LoopNode` stands for its loop's);
sizes are static.  A :class:`Window` is a value that holds a box of a full
tensor; a :class:`TileRegion` is the box one tensor's indexing map reaches from
an op's tile, with the map relative to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from spyre_mlir.analysis.linear import Linear, affine_linear, affine_sum
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, LayoutAttr, layout_attr, tensor_layout
from spyre_mlir.layout import stick_layout
from spyre_mlir.passes.coarse_tile.schedule import Level, LoopNode


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


def _iv(node: LoopNode, scale: int) -> Linear[LoopNode]:
    return Linear.term(node, scale)


def tile_box(op: ComputeOp, path: Sequence[LoopNode]) -> tuple[list[Linear], list[int]]:
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


def tile_region(op: ComputeOp, m: AffineMap, box: tuple[list[Linear], list[int]]) -> TileRegion:
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
        exprs.append(affine_sum(_stepping(coefs, b_sizes), 0))
    return TileRegion(tuple(origins), tuple(sizes), tuple(exprs))


def _stepping(coefs: Sequence[int], sizes: Sequence[int]) -> list[int]:
    """``coefs`` with each dim the tile takes one step of (it adds 0) placed just outside the dims
    it steps: ``d1 * 2 + d0`` of a tile whose ``d0`` and ``d1`` are one step each reads ``d0 + d1``,
    one element, where a coefficient of 2 over one element would step past it.  Every dim stays
    in the coordinate, so the tile's maps keep which dims are outputs."""
    place = max((c * s for c, s in zip(coefs, sizes) if c and s > 1), default=1)
    return [c if not c or s > 1 else place for c, s in zip(coefs, sizes)]


def tile_type(full: TensorType, sizes: Sequence[int]) -> TensorType:
    """``full`` with the shape of a tile of ``sizes`` and a ``#spyre.layout`` computed for that
    shape (when it had one).

    A dim the tile covers whole keeps the full tensor's padding (``padded_shape``), and so does one
    it covers past the full tensor's extent: an op that writes its result's padding (a matmul
    computing all the columns of a result narrowed to a slice of them) writes a region wider than
    the result, inside the padding that follows it; the tile's shape there is the result's extent
    (its readers read that many: a matmul reading it contracts over the slice, not the region).
    """
    full_shape = full.get_shape()
    shape = [min(s, f) for s, f in zip(sizes, full_shape)]
    encoding = full.encoding
    if isinstance(encoding, LayoutAttr):
        layout = tensor_layout(full)
        padded = [p if s == f else max(s, p) if s > f else s
                  for s, f, p in zip(sizes, layout.host_shape, layout.padded_host_shape)]
        encoding = layout_attr(stick_layout(shape, layout.dtype, list(layout.dim_order) or None,
                                            padded_shape=padded))
    return TensorType(full.get_element_type(), shape, encoding)
