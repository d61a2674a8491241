# Selections by value, in the decomposition table the importer hands to
# run_decompositions(): argmax/argmin, the indices of max.dim/min.dim, and topk,
# as rounds of a max (or min) reduction and a comparison with it, on the data in
# float32 (positions are exact there up to 2**24); scatter of a value, the same
# comparison with each position it names.  Reads ATen calls of those ops; writes ATen
# casts, amax/amin, eq, where and cat.  repeat is an expand and a copy.
"""Value selections on data decomposed into reductions and comparisons (DESIGN §15).

Spyre has no sort and no arg-reduction.  The first position holding the maximum
of ``x`` along a dim of ``n`` elements is ``amin(where(x == amax(x), positions,
n))``; top-``k`` takes ``k`` such rounds, each masking the position it chose.
Ties go to the lowest position, as ``argmax`` defines; ``topk`` leaves their
order unspecified, so this is one of its valid answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

aten = torch.ops.aten


def _positions(x: torch.Tensor, dim: int) -> torch.Tensor:
    """``0 .. n-1`` along ``dim`` of ``x``, of size 1 in every other dim: int64, which the device
    holds in the float32 of the data it is selected with."""
    n = x.shape[dim]
    shape = [n if d == dim else 1 for d in range(x.dim())]
    return aten.view.default(aten.arange.default(n, dtype=torch.int64, device=x.device), shape)


def _rounds(x: torch.Tensor, dim: int, k: int, largest: bool) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The ``k`` extreme values of ``x`` along ``dim`` (float32, kept dims) and their positions
    (int64), best first: each round reduces, takes the lowest position holding the extreme among
    the positions not yet chosen, and masks that position out."""
    dim %= max(x.dim(), 1)
    n = x.shape[dim]
    data = aten._to_copy.default(x, dtype=torch.float32)
    positions = _positions(x, dim)
    key = positions
    beyond = -float("inf") if largest else float("inf")
    extreme = aten.amax.default if largest else aten.amin.default
    values, indices = [], []
    for _ in range(k):
        best = extreme(data, [dim], True)
        index = aten.amin.default(torch.where(aten.eq.Tensor(data, best), key, n), [dim], True)
        chosen = aten.eq.Tensor(positions, index)
        data = torch.where(chosen, beyond, data)
        key = torch.where(chosen, n, key)
        values.append(best)
        indices.append(index)
    return values, indices


def _as_index(position: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
    return position if keepdim else aten.squeeze.dim(position, dim)


def _arg(largest: bool) -> Any:
    def decompose(x: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
        if dim is None:
            flat = aten.view.default(x, [x.numel()])
            (_,), (index,) = _rounds(flat, 0, 1, largest)
            if keepdim:
                return aten.view.default(index, [1] * x.dim())
            return aten.amin.default(index, [0])  # the one position, computed 0-d (not a view of it)
        (_,), (index,) = _rounds(x, dim, 1, largest)
        return _as_index(index, dim % max(x.dim(), 1), keepdim)
    return decompose


def _with_indices(largest: bool) -> Any:
    def decompose(x: torch.Tensor, dim: int, keepdim: bool = False) -> Any:
        dim %= max(x.dim(), 1)
        (best,), (index,) = _rounds(x, dim, 1, largest)
        value = aten._to_copy.default(best, dtype=x.dtype)
        return (value if keepdim else aten.squeeze.dim(value, dim)), _as_index(index, dim, keepdim)
    return decompose


def topk(x: torch.Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """``aten.topk`` as ``k`` rounds of :func:`_rounds`, the values in ``x``'s dtype and the
    positions as int64, best first."""
    if x.dim() == 0:
        return NotImplemented
    dim %= x.dim()
    values, indices = _rounds(x, dim, k, largest)
    value = aten._to_copy.default(aten.cat.default(values, dim), dtype=x.dtype)
    return value, aten.cat.default(indices, dim)


def scattered_value(x: torch.Tensor, dim: int, index: torch.Tensor, value: float) -> Any:
    """``aten.scatter.value``: ``value`` at each position ``index`` names along ``dim``, ``x``
    elsewhere (PhiMoE's router masking the expert it chose with -inf): per column of ``index``,
    the positions equal to it take ``value``, as a round of :func:`_rounds` masks its choice.
    ``NotImplemented`` for an index narrower than ``x`` in another dim (it writes part of ``x``)."""
    if x.dim() == 0 or index.dim() != x.dim():
        return NotImplemented
    dim %= x.dim()
    if any(i != n for d, (i, n) in enumerate(zip(index.shape, x.shape)) if d != dim):
        return NotImplemented
    positions = _positions(x, dim)
    for j in range(index.shape[dim]):
        chosen = aten.eq.Tensor(positions, aten.slice.Tensor(index, dim, j, j + 1))
        x = torch.where(chosen, aten.scalar_tensor.default(value, dtype=x.dtype, device=x.device), x)
    return x


def repeat(x: torch.Tensor, repeats: Sequence[int]) -> torch.Tensor:
    """``x.repeat(repeats)``: each dim of ``x`` (after leading ones) broadcast along a new outer
    dim of its repeat count, copied, and merged with it."""
    shape = [1] * (len(repeats) - x.dim()) + list(x.shape)
    grid = [size for r, s in zip(repeats, shape) for size in (r, s)]
    spread = aten.expand.default(aten.view.default(x, [size for s in shape for size in (1, s)]), grid)
    return aten.view.default(aten.clone.default(spread, memory_format=torch.contiguous_format), [r * s for r, s in zip(repeats, shape)])


TABLE: dict[Any, Any] = {
    aten.argmax.default: _arg(True),
    aten.argmin.default: _arg(False),
    aten.max.dim: _with_indices(True),
    aten.min.dim: _with_indices(False),
    aten.topk.default: topk,
    aten.scatter.value: scattered_value,
    aten.repeat.default: repeat,
}
"""The decompositions of this module, by ATen overload."""
