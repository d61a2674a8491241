# Indirect access in the importer's ATen table: reads through an index
# (embedding, index_select, gather) and row stores through one (index_copy,
# index_put), as spyre.pointwise "identity" ops with an index operand.  Read by
# table.py, which merges ROWS into the one ATen table; writes IR through
# NodeEmitter.
"""ATen ops that read or write a tensor through an index tensor (DESIGN §15, §17).

:data:`ROWS` maps each overload to its emitter (``fn(cx, *args, **kwargs)``, as
in :mod:`spyre_mlir.importer.table`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from spyre_mlir.importer import views
from spyre_mlir.importer.emitter import NodeEmitter, Unsupported, elem_of, shape_of

aten = torch.ops.aten


def _take(cx: NodeEmitter, table: Any, dim: int, index: Any, along: bool = False) -> SSAValue:
    """``table`` read along ``dim`` at the values of ``index``, any i32 tensor (an int64 input or a
    compile-time constant, staged as int32): a pointwise ``identity`` with an index (DESIGN §15);
    ``along`` reads one element per index entry (``torch.gather``)."""
    if not isinstance(table, SSAValue) or not isinstance(index, SSAValue):
        raise Unsupported("the table and the index must be tensors")
    if elem_of(index) != i32:
        raise Unsupported(f"the index must be an integer tensor, got element type {elem_of(index)}")
    if elem_of(table) == i32:
        raise Unsupported("reading an integer table through an index is not supported")
    if not shape_of(index):
        raise Unsupported("a 0-d index is not supported")
    rank = len(shape_of(table))
    if not -rank <= dim < rank:
        raise Unsupported(f"dim {dim} is outside the table rank {rank}")
    if along and (len(shape_of(index)) != rank or any(
            i > t for d, (i, t) in enumerate(zip(shape_of(index), shape_of(table))) if d != dim % rank)):
        raise Unsupported(f"the index of shape {list(shape_of(index))} must have the rank of the table "
                          f"{list(shape_of(table))} and fit in it off dim {dim}")
    return cx.gather(table, dim % rank, index, along)


def _store(cx: NodeEmitter, dest: Any, dim: int, index: Any, rows: Any) -> SSAValue:
    """``dest`` with its rows along ``dim`` at the values of the 1-D ``index`` replaced by
    ``rows`` (broadcast to their shape): a row store into ``dest``, written in place (DESIGN §17)."""
    if not all(isinstance(v, SSAValue) for v in (dest, index, rows)):
        raise Unsupported("the destination, the index and the rows must be tensors")
    if elem_of(index) != i32:
        raise Unsupported(f"the index must be an integer tensor, got element type {elem_of(index)}")
    if len(shape_of(index)) != 1:
        raise Unsupported(f"the index must be 1-D, got shape {list(shape_of(index))}")
    rank = len(shape_of(dest))
    if not -rank <= dim < rank:
        raise Unsupported(f"dim {dim} is outside the destination rank {rank}")
    dim %= rank
    shape = (*shape_of(dest)[:dim], shape_of(index)[0], *shape_of(dest)[dim + 1:])
    if shape_of(rows) != shape:
        given = shape_of(rows)
        if len(given) > len(shape) or any(g not in (1, n) for g, n in zip(reversed(given), reversed(shape))):
            raise Unsupported(f"rows of shape {list(given)} do not broadcast to the stored shape {list(shape)}")
        rows = cx.view(rows, views.expand_map(given, shape), shape)
    return cx.scatter(dest, dim, index, cx.cast(rows, elem_of(dest)))


def _index_copy(cx: NodeEmitter, dest: Any, dim: int, index: Any, rows: Any) -> SSAValue:
    return _store(cx, dest, dim, index, rows)


def _index_put(cx: NodeEmitter, dest: Any, indices: Sequence[Any], rows: Any, accumulate: bool = False) -> SSAValue:
    """``dest[..., index, ...] = rows`` with one index tensor (the others ``None``: whole dims)."""
    given = [d for d, index in enumerate(indices) if index is not None]
    if accumulate:
        raise Unsupported("accumulating into indexed rows (accumulate=True) is not supported")
    if len(given) != 1:
        raise Unsupported(f"a store through {len(given)} index tensors is not supported; index one dim")
    return _store(cx, dest, given[0], indices[given[0]], rows)


def _embedding(cx: NodeEmitter, weight: Any, indices: Any, padding_idx: int = -1,
               scale_grad_by_freq: bool = False, sparse: bool = False) -> SSAValue:
    return _take(cx, weight, 0, indices)


def _index_select(cx: NodeEmitter, x: Any, dim: int, index: Any) -> SSAValue:
    return _take(cx, x, dim, index)


def _gather(cx: NodeEmitter, x: Any, dim: int, index: Any, *, sparse_grad: bool = False) -> SSAValue:
    return _take(cx, x, dim, index, along=True)


ROWS: dict[Any, Callable[..., Any]] = {
    aten.embedding.default: _embedding,
    aten.index_select.default: _index_select,
    aten.gather.default: _gather,
    aten.index_copy.default: _index_copy,
    aten.index_put.default: _index_put,
}
"""The indirect accesses of the ATen table."""
