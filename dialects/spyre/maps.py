# Affine maps of the `spyre` compute ops: the indexing maps their types imply
# (pointwise broadcasting, indirect reads, reductions, matmuls) and the bounds
# of a map's coordinates.  Reads shapes and affine expressions; writes nothing.
"""Default indexing maps of the compute ops (built once per shape signature and shared), and
interval bounds of affine expressions."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.utils.exceptions import VerifyException


def _broadcast_map(operand_shape: Sequence[int], result_shape: Sequence[int]) -> AffineMap:
    """Map from the result's index space to a right-aligned broadcast operand."""
    offset = len(result_shape) - len(operand_shape)
    exprs = [
        AffineExpr.constant(0) if size == 1 and result_shape[offset + i] != 1
        else AffineExpr.dimension(offset + i)
        for i, size in enumerate(operand_shape)
    ]
    return AffineMap(len(result_shape), 0, tuple(exprs))


@functools.lru_cache(maxsize=4096)
def pointwise_maps(operand_shapes: tuple[tuple[int, ...], ...],
                   result_shape: tuple[int, ...]) -> tuple[AffineMap, ...]:
    """A pointwise op's maps: each operand's broadcast map, then the result's identity.

    Built once per shape signature (passes ask for the maps of every op many
    times); affine maps are immutable, so ops share them.
    """
    return (*(_broadcast_map(s, result_shape) for s in operand_shapes), AffineMap.identity(len(result_shape)))


@functools.lru_cache(maxsize=4096)
def gather_maps(index_rank: int, table_rank: int, dim: int, step: int = 1) -> tuple[AffineMap, ...]:
    """An indirect identity's maps: the index's (its dims in the result), the table's (0 in the
    gathered dim), then the result's identity (built once, shared).  With a ``step`` above 1 the
    index addresses blocks of ``step`` rows: the result has a dim of ``step`` after the index's,
    which the table's map holds in the gathered dim (the row inside the block)."""
    stepped = int(step > 1)
    rank = table_rank - 1 + index_rank + stepped
    index = tuple(AffineExpr.dimension(dim + i) for i in range(index_rank))
    inside = AffineExpr.dimension(dim + index_rank) if stepped else AffineExpr.constant(0)
    table = tuple(AffineExpr.dimension(j) if j < dim else inside if j == dim
                  else AffineExpr.dimension(j + index_rank - 1 + stepped) for j in range(table_rank))
    return AffineMap(rank, 0, index), AffineMap(rank, 0, table), AffineMap.identity(rank)


def scatter_maps(rank: int, dim: int, step: int = 1) -> tuple[AffineMap, ...]:
    """A row store's maps over the rows' dims: the index's (the stored dim), the rows' identity,
    then the destination's and the result's (0 in the stored dim: addressed through the index).
    With a ``step`` above 1 each entry stores a block of ``step`` rows: the rows have a dim of
    ``step`` after the entries', which the destination's map holds in the stored dim."""
    stepped = int(step > 1)
    inside = AffineExpr.dimension(dim + 1) if stepped else AffineExpr.constant(0)
    table = AffineMap(rank + stepped, 0, tuple(
        AffineExpr.dimension(j) if j < dim else inside if j == dim else AffineExpr.dimension(j + stepped)
        for j in range(rank)))
    return (AffineMap(rank + stepped, 0, (AffineExpr.dimension(dim),)), AffineMap.identity(rank + stepped),
            table, table)


@functools.lru_cache(maxsize=4096)
def reduce_maps(kept: tuple[int, ...], reduced: tuple[int, ...], keeps_dims: bool) -> tuple[AffineMap, ...]:
    """A reduction's maps over (kept dims, reduced dims): the operand's, then the result's (built once, shared)."""
    order = (*kept, *reduced)
    rank = len(order)
    position = {d: i for i, d in enumerate(order)}
    source = AffineMap(rank, 0, tuple(AffineExpr.dimension(position[d]) for d in range(rank)))
    if keeps_dims:
        out = tuple(AffineExpr.constant(0) if d in reduced else AffineExpr.dimension(position[d])
                    for d in range(rank))
    else:
        out = tuple(AffineExpr.dimension(i) for i in range(len(kept)))
    return source, AffineMap(rank, 0, out)


@functools.lru_cache(maxsize=4096)
def matmul_maps(a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...]) -> tuple[AffineMap, ...]:
    """A (batched) matmul's maps over (batch.., M, N, K): A's, B's, then the result's (built once, shared)."""
    rank = len(out) + 1
    batch, (m, n, k) = rank - 3, (rank - 3, rank - 2, rank - 1)

    def operand_map(shape: tuple[int, ...], rows: int, cols: int) -> AffineMap:
        lead = len(shape) - 2
        exprs = [AffineExpr.constant(0) if size == 1 and out[batch - lead + i] != 1
                 else AffineExpr.dimension(batch - lead + i) for i, size in enumerate(shape[:lead])]
        return AffineMap(rank, 0, (*exprs, AffineExpr.dimension(rows), AffineExpr.dimension(cols)))

    return (operand_map(a, m, k), operand_map(b, k, n),
            AffineMap(rank, 0, tuple(AffineExpr.dimension(i) for i in range(rank - 1))))


def expr_range(expr: AffineExpr, dims: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """Inclusive bounds of ``expr`` when dim ``i`` ranges over ``dims[i]`` (interval arithmetic)."""
    if isinstance(expr, AffineConstantExpr):
        return expr.value, expr.value
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if not isinstance(expr, AffineBinaryOpExpr):
        raise VerifyException(f"unexpected symbol in {expr}")
    lo_a, hi_a = expr_range(expr.lhs, dims)
    if expr.kind is AffineBinaryOpKind.Add:
        lo_b, hi_b = expr_range(expr.rhs, dims)
        return lo_a + lo_b, hi_a + hi_b
    if not isinstance(expr.rhs, AffineConstantExpr):
        raise VerifyException(f"non-affine term {expr}: the right operand must be a constant")
    c = expr.rhs.value
    if expr.kind is AffineBinaryOpKind.Mul:
        return min(lo_a * c, hi_a * c), max(lo_a * c, hi_a * c)
    if c <= 0:
        raise VerifyException(f"{expr}: the divisor must be positive")
    if expr.kind is AffineBinaryOpKind.FloorDiv:
        return lo_a // c, hi_a // c
    if expr.kind is AffineBinaryOpKind.CeilDiv:
        return -(-lo_a // c), -(-hi_a // c)
    if lo_a // c == hi_a // c:
        return lo_a % c, hi_a % c
    return 0, c - 1


def used_dims(expr: AffineExpr) -> set[int]:
    """Positions of the dims ``expr`` uses."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position}
    if isinstance(expr, AffineBinaryOpExpr):
        return used_dims(expr.lhs) | used_dims(expr.rhs)
    return set()
