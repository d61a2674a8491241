# Indirect access in the importer's ATen table: reads through an index
# (embedding, index_select, gather, index) and row stores through one
# (index_copy, index_put), as spyre.pointwise "identity" ops with an index
# operand; an index whose compile-time index tensors are affine is a view, and one
# data index beside compile-time counts (x[arange(B), idx]) a row read.  Read by
# table.py, which merges ROWS into the one ATen table; writes IR through
# NodeEmitter.
"""ATen ops that read or write a tensor through an index tensor (DESIGN §15, §17).

:data:`ROWS` maps each overload to its emitter (``fn(cx, *args, **kwargs)``, as
in :mod:`spyre_mlir.importer.table`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import Float32Type, i32
from xdsl.ir import SSAValue

from spyre_mlir.dialects.spyre import element_dtype
from spyre_mlir.hardware import element_bytes
from spyre_mlir.importer import views
from spyre_mlir.importer.elements import dtype_of, is_float, is_integral
from spyre_mlir.importer.folding import index_arguments
from spyre_mlir.importer.emitter import NodeEmitter, Unsupported, elem_of, shape_of
from spyre_mlir.limits import STICK_BYTES

aten = torch.ops.aten


def _take(cx: NodeEmitter, table: Any, dim: int, index: Any, along: bool = False) -> SSAValue:
    """``table`` read along ``dim`` at the values of ``index``, any i32 tensor (an int64 input or a
    compile-time constant, staged as int32): a pointwise ``identity`` with an index (DESIGN §15);
    ``along`` reads one element per index entry (``torch.gather``)."""
    if not isinstance(table, SSAValue) or not isinstance(index, SSAValue):
        raise Unsupported("the table and the index must be tensors")
    if is_float(elem_of(index)) and _integral_index(cx):
        index = cx.cast(index, i32)
    if elem_of(index) != i32:
        raise Unsupported(f"the index must be an integer tensor, got element type {elem_of(index)}")
    if elem_of(table) == i32:
        table = _known_integer_table(cx)
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


def _known_integer_table(cx: NodeEmitter) -> SSAValue:
    """The integer table of the node being emitted (its first argument), known at compile time, as
    float32 data (exact below 2**24): RoBERTa's ``token_type_ids`` buffer gathered at its position
    ids.  An integer table only known on the device is not supported (the device reads no integer
    data)."""
    values = cx.known(cx.node.args[0])
    if not isinstance(values, torch.Tensor) or values.numel() and values.abs().max() >= 2 ** 24:
        raise Unsupported("reading an integer table through an index is supported for a table known at "
                          "compile time, of values below 2**24")
    return cx.tensor(values.to(torch.float32), Float32Type())


def _integral_index(cx: NodeEmitter) -> bool:
    """Whether every index tensor ``cx.node`` reads is of an integer dtype (held as floats where it
    is computed from data: position ids from an attention mask's running sum)."""
    return all(is_integral(dtype_of(index)) for index, _, _ in index_arguments(cx.node)
               if dtype_of(index) is not None)


def _store(cx: NodeEmitter, dest: Any, dim: int, index: Any, rows: Any, known: Any = None) -> SSAValue:
    """``dest`` with its rows along ``dim`` at the values of the 1-D ``index`` replaced by
    ``rows`` (broadcast to their shape): a row store into ``dest``, written in place (DESIGN §17).
    Stores of one position of an input of known range, and of a run of positions known at compile
    time (``known``, a prefill's ``arange``), into a dim of whole sticks write whole blocks of a
    stick's rows instead (:func:`_store_block`, :func:`_store_run`)."""
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
    rows = cx.cast(rows, elem_of(dest))
    step = STICK_BYTES // element_bytes(element_dtype(elem_of(dest)))
    if shape_of(dest)[dim] % step:
        return cx.scatter(dest, dim, index, rows)
    run = _run_start(known)
    if run is not None:
        return _store_run(cx, dest, dim, run, rows, step)
    values = cx.input_range(index)
    if shape_of(index) == (1,) and values is not None:
        return _store_block(cx, dest, dim, index, values, rows, step)
    return cx.scatter(dest, dim, index, rows)


def _run_start(known: Any) -> int | None:
    """``start`` when ``known`` is the positions ``start, start + 1, ...`` (a 1-D tensor known at
    compile time), else None."""
    if not isinstance(known, torch.Tensor) or known.dim() != 1 or not known.numel():
        return None
    start = int(known[0])
    return start if torch.equal(known.to(torch.int64), torch.arange(start, start + known.numel())) else None


def _store_run(cx: NodeEmitter, dest: SSAValue, dim: int, start: int, rows: SSAValue, step: int) -> SSAValue:
    """The rows of the known positions ``start, start + 1, ...`` (a prefill's) stored as the blocks
    of ``step`` rows they cover: whole blocks are the rows themselves; where the run starts or ends
    inside a block, the block is read, its rows in the run replaced (a ``where`` on a mask known at
    compile time; the run's rows read at each position of the blocks, clamped to the run), and it
    is written back."""
    shape, rank, count = shape_of(dest), len(shape_of(dest)), shape_of(rows)[dim]
    if start < 0 or start + count > shape[dim]:
        raise Unsupported(f"the positions {start} to {start + count - 1} are outside the {shape[dim]} rows of "
                          f"dim {dim} of the destination")
    first, last = start // step, (start + count - 1) // step
    blocks = last - first + 1
    block_index = cx.tensor(torch.arange(first, last + 1, dtype=torch.int32), i32)
    lifted = (*shape[:dim], blocks, step, *shape[dim + 1:])
    if start % step == 0 and count % step == 0:
        return cx.scatter(dest, dim, block_index, cx.view(rows, views.reshape_map(shape_of(rows), lifted), lifted),
                          step=step)
    positions = torch.arange(first * step, (last + 1) * step)
    spread = cx.gather(rows, dim, cx.tensor((positions - start).clamp(0, count - 1).to(torch.int32), i32))
    spread = cx.view(spread, views.reshape_map(shape_of(spread), lifted), lifted)
    inside = ((positions >= start) & (positions < start + count)).to(torch.float32).reshape(blocks, step)
    mask_shape = (*[1] * dim, blocks, step, *[1] * (rank - dim - 1))
    mask = cx.view(cx.tensor(inside, elem_of(dest)), views.reshape_map((blocks, step), mask_shape), mask_shape)
    new = cx.pointwise("where3", [mask, spread, cx.gather(dest, dim, block_index, step=step)], elem=elem_of(dest))
    return cx.scatter(dest, dim, block_index, new, step=step)


def _store_block(cx: NodeEmitter, dest: SSAValue, dim: int, index: SSAValue, count: int, rows: SSAValue,
                 step: int) -> SSAValue:
    """The row store of one position ``p`` (an input taking the values ``[0, count)``) as a store of
    the block of ``step`` rows holding it: the block ``p // step`` is read (``index_step``), the row ``p mod
    step`` of it replaced by ``rows`` (a ``where`` on the one-hot row of a table over ``p``'s
    values), and the block written back.  Both the block number and the one-hot row are tables
    of ``p``'s values read at ``p`` (Spyre has no integer arithmetic).  Whole sticks move either
    way, so ``dest`` may be sticked on ``dim`` (a key cache that attention reads transposed):
    spyre-stickify chooses."""
    shape, rank = shape_of(dest), len(shape_of(dest))
    values = torch.arange(count)
    blocks = cx.tensor((values // step).to(torch.float32)[:, None], Float32Type())
    block_index = cx.cast(cx.view(cx.gather(blocks, 0, index), views.reshape_map((1, 1), (1,)), (1,)), i32)
    onehot = (values[:, None] % step == torch.arange(step)).to(torch.float32)
    picked = cx.gather(cx.tensor(onehot, elem_of(dest)), 0, index)
    mask_shape = (*[1] * dim, 1, step, *[1] * (rank - dim - 1))
    mask = cx.view(picked, views.reshape_map((1, step), mask_shape), mask_shape)
    block = cx.gather(dest, dim, block_index, step=step)
    lifted = (*shape[:dim], 1, 1, *shape[dim + 1:])
    rows = cx.view(rows, views.reshape_map(shape_of(rows), lifted), lifted)
    new = cx.pointwise("where3", [mask, rows, block], elem=elem_of(dest))
    return cx.scatter(dest, dim, block_index, new, step=step)


def _index_copy(cx: NodeEmitter, dest: Any, dim: int, index: Any, rows: Any) -> SSAValue:
    return _store(cx, dest, dim, index, rows, cx.known(cx.node.args[2]))


def _index_put(cx: NodeEmitter, dest: Any, indices: Sequence[Any], rows: Any, accumulate: bool = False) -> SSAValue:
    """``dest[..., index, ...] = rows`` with one index tensor (the others ``None``: whole dims)."""
    given = [d for d, index in enumerate(indices) if index is not None]
    if accumulate:
        raise Unsupported("accumulating into indexed rows (accumulate=True) is not supported")
    if len(given) != 1:
        raise Unsupported(f"a store through {len(given)} index tensors is not supported; index one dim")
    return _store(cx, dest, given[0], indices[given[0]], rows, cx.known(cx.node.args[1][given[0]]))


def _index(cx: NodeEmitter, x: Any, indices: Sequence[Any]) -> SSAValue:
    """``x[indices]`` (advanced indexing; ``None`` entries are whole dims): with compile-time index
    tensors that are affine in the result's coordinates (the ``arange`` grids of transformers'
    ``padding_mask[batch_idx, kv_idx]``), a view of ``x``; with one index tensor (computed from data,
    or any compile-time one), an indirect read (:func:`_take`)."""
    if not isinstance(x, SSAValue):
        raise Unsupported("the indexed value must be a tensor")
    nodes = list(cx.node.args[1])
    if any(dtype_of(n) in (torch.bool, torch.uint8) for n in nodes):
        raise Unsupported("indexing with a mask (its result's size depends on the mask's values); keep the shape "
                          "static with torch.where(mask, x, 0)")
    known = [None if n is None else cx.known(n) for n in nodes]
    view = _index_view(cx, x, known) if all(n is None or k is not None for n, k in zip(nodes, known)) else None
    if view is not None:
        return view
    given = [d for d, index in enumerate(indices) if index is not None]
    if len(given) == 1:
        return _take(cx, x, given[0], indices[given[0]])
    along = _index_along(cx, x, indices, known)
    if along is None:
        raise Unsupported(f"{len(given)} index tensors that are not a view of the indexed value (their values "
                          "are data, or not affine in the result's coordinates): Spyre reads through one index "
                          "tensor, beside index tensors that each count one dim of the result")
    return along


def _index_along(cx: NodeEmitter, x: SSAValue, indices: Sequence[Any],
                 known: Sequence[torch.Tensor | None]) -> SSAValue | None:
    """``x[indices]`` with adjacent index tensors, one of them data and each other a compile-time
    count along its own dim of the indices' grid, in order (CLIP's pooled token:
    ``hidden[arange(B), ids.argmax(-1)]``); else None.  With whole dims after the indexed ones,
    the indexed dims are one dim of rows, read at each grid point's row (its counts' offset plus
    the data index, an index of its own); else one element per grid point along the data's dim
    (``torch.gather``, through the data index spread over the table's other dims)."""
    src = shape_of(x)
    given = [d for d, index in enumerate(indices) if index is not None]
    data = [d for d in given if known[d] is None]
    counted = [d for d in given if known[d] is not None]
    if len(data) != 1 or given != list(range(given[0], given[-1] + 1)):
        return None
    grid = tuple(torch.broadcast_shapes(*(tuple(shape_of(indices[d])) for d in given)))
    if len(grid) != len(counted):
        return None
    for g, d in enumerate(counted):
        if grid[g] > src[d] or _affine_form(known[d].expand(grid).to(torch.int64)) != (0, {g: 1} if grid[g] > 1 else {}):
            return None
    (dim,) = data
    first, last = given[0], given[-1]
    index = indices[dim]
    index = cx.view(index, views.expand_map(shape_of(index), grid), grid) if shape_of(index) != grid else index
    out = tuple(int(s) for s in cx.val.shape)
    if last + 1 < len(src):
        return _read_rows(cx, x, first, last, dim, counted, grid, index)
    spread = [grid[counted.index(d)] if d in counted else 1 for d in range(first, last + 1)]
    lifted = [1] * first + spread + [1] * (len(src) - last - 1)
    lifted[dim] = 1
    index = cx.view(index, views.reshape_map(grid, lifted), lifted)
    table_shape = [*src[:first], *spread, *src[last + 1:]]
    table_shape[dim] = 1
    index = cx.view(index, views.expand_map(lifted, table_shape), table_shape)
    picked = _take(cx, x, dim, index, along=True)
    return cx.view(picked, views.reshape_map(table_shape, out), out)


def _read_rows(cx: NodeEmitter, x: SSAValue, first: int, last: int, dim: int, counted: Sequence[int],
               grid: Sequence[int], index: SSAValue) -> SSAValue:
    """``x`` with dims ``first..last`` merged into one of rows, read at the row of each grid point:
    ``index * stride(dim) + sum(count_g * stride(counted_g))`` (in float32, exact below 2**24)."""
    src = shape_of(x)
    group = src[first:last + 1]
    strides = [math.prod(group[k + 1:]) for k in range(len(group))]
    rows = math.prod(group)
    if rows >= 2 ** 24:
        raise Unsupported(f"{rows} rows indexed at once: a row index is exact in float32 below 2**24")
    table_shape = (*src[:first], rows, *src[last + 1:])
    table = cx.view(x, views.reshape_map(src, table_shape), table_shape)
    offsets = torch.zeros(grid, dtype=torch.float32)
    for g, d in enumerate(counted):
        offsets += strides[d - first] * torch.arange(grid[g], dtype=torch.float32).reshape(
            [grid[g] if k == g else 1 for k in range(len(grid))])
    row = cx.cast(index, Float32Type())
    if strides[dim - first] != 1:
        row = cx.binary("mul", row, float(strides[dim - first]))
    row = cx.binary("add", row, cx.tensor(offsets, Float32Type()))
    return _take(cx, table, first, row)


def _index_view(cx: NodeEmitter, x: SSAValue, known: Sequence[torch.Tensor | None]) -> SSAValue | None:
    """``x[known]`` as a view when each index tensor, broadcast to the indices' shape, is
    ``c + sum(a_k * k)`` over its coordinates ``k`` (torch's layout of the result: the broadcast
    dims in place of adjacent indexed dims, else first, then the whole dims); else None."""
    src = shape_of(x)
    entries = [*known, *[None] * (len(src) - len(known))]
    indexed = [d for d, t in enumerate(entries) if t is not None]
    grid = tuple(torch.broadcast_shapes(*(t.shape for t in entries if t is not None)))
    adjacent = indexed == list(range(indexed[0], indexed[-1] + 1))
    first = indexed[0] if adjacent else 0
    whole = [d for d, t in enumerate(entries) if t is None]
    result_dim = {d: (d if d < first else d - len(indexed) + len(grid)) if adjacent else len(grid) + k
                  for k, d in enumerate(whole)}
    terms: list[tuple[int, dict[int, int]]] = []
    for d, t in enumerate(entries):
        if t is None:
            terms.append((0, {result_dim[d]: 1}))
            continue
        values = torch.where(t < 0, t + src[d], t).expand(grid).to(torch.int64)
        if values.numel() and (int(values.min()) < 0 or int(values.max()) >= src[d]):
            raise Unsupported(f"an index outside dim {d} of size {src[d]}")
        form = _affine_form(values)
        if form is None:
            return None
        const, coefficients = form
        terms.append((const, {first + k: a for k, a in coefficients.items()}))
    out = tuple(int(s) for s in cx.val.shape)
    return cx.view(x, views.affine_map(len(out), terms), out)


def _affine_form(values: torch.Tensor) -> tuple[int, dict[int, int]] | None:
    """``(c, {k: a_k})`` with ``values[i] == c + sum(a_k * i_k)`` for every coordinate ``i``, else None."""
    if not values.numel():
        return 0, {}
    origin = (0,) * values.dim()
    const = int(values[origin]) if values.dim() else int(values)
    coefficients: dict[int, int] = {}
    fitted = torch.full(values.shape, const, dtype=torch.int64)
    for k, size in enumerate(values.shape):
        if size == 1:
            continue
        step = tuple(1 if j == k else 0 for j in range(values.dim()))
        a = int(values[step]) - const
        if a:
            coefficients[k] = a
            fitted = fitted + a * torch.arange(size).reshape([size if j == k else 1 for j in range(values.dim())])
    return (const, coefficients) if torch.equal(fitted, values) else None


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
    aten.index.Tensor: _index,
    aten.gather.default: _gather,
    aten.index_copy.default: _index_copy,
    aten.index_put.default: _index_put,
}
"""The indirect accesses of the ATen table."""
