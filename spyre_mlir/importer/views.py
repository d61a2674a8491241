# Affine maps of ATen view ops: result coordinates -> source coordinates.
# Pure functions of shapes and view arguments; read by the importer's view
# emitters and by the view-map tests.  No torch, no IR.
"""View maps for ``spyre.view`` (result coordinates -> source coordinates).

``reshape_map([4, 6], [24])`` is ``(d0) -> (d0 floordiv 6, d0 mod 6)``;
``permute_map([2, 3], [1, 0])`` is ``(d0, d1) -> (d1, d0)``; and so on.  Maps are
built group by group (the dims whose extents multiply to the same product), so
a reshape that only splits or merges dims keeps its terms small, and bounded
``floordiv``/``mod`` terms are dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from xdsl.ir.affine import AffineExpr, AffineMap


def _dim(i: int) -> AffineExpr:
    return AffineExpr.dimension(i)


def _const(v: int) -> AffineExpr:
    return AffineExpr.constant(v)


def _finish(num_dims: int, exprs: Sequence[AffineExpr]) -> AffineMap:
    # Not AffineExpr.simplify: it rewrites `x mod c` as `x - (x floordiv c) * c`,
    # which interval-based bound checks cannot see is within [0, c).
    return AffineMap(num_dims, 0, tuple(exprs))


def _scaled(d: int, stride: int) -> AffineExpr:
    return _dim(d) if stride == 1 else _dim(d) * stride


def identity_map(rank: int) -> AffineMap:
    """``(d0, ..., dn) -> (d0, ..., dn)``."""
    return AffineMap.identity(rank)


def reshape_groups(src: Sequence[int], out: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Pair runs of source and result dims (size-1 dims excluded) with equal products."""
    s = [i for i, n in enumerate(src) if n != 1]
    o = [i for i, n in enumerate(out) if n != 1]
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(s) or j < len(o):
        gs, go = [s[i]], [o[j]]
        ps, po = src[s[i]], out[o[j]]
        i, j = i + 1, j + 1
        while ps != po:
            if ps < po:
                gs.append(s[i]); ps *= src[s[i]]; i += 1
            else:
                go.append(o[j]); po *= out[o[j]]; j += 1
        groups.append((gs, go))
    return groups


def reshape_map(src: Sequence[int], out: Sequence[int]) -> AffineMap:
    """Row-major reinterpretation of ``src`` as ``out`` (same element count)."""
    assert math.prod(src) == math.prod(out), (src, out)
    exprs: list[AffineExpr] = [_const(0)] * len(src)
    for gs, go in reshape_groups(src, out):
        # 1. Linear index of the group from the result coordinates.
        linear: AffineExpr | None = None
        stride = 1
        for d in reversed(go):
            linear = _scaled(d, stride) if linear is None else _scaled(d, stride) + linear
            stride *= out[d]
        assert linear is not None
        total = stride
        # 2. Split it over the source dims of the group.
        stride = total
        for k, d in enumerate(gs):
            stride //= src[d]
            e = linear if stride == 1 else linear // stride
            if k:  # the outermost source dim of a group needs no mod: it is bounded
                e = e % src[d]
            exprs[d] = e
        if len(gs) == 1 and len(go) == 1:
            exprs[gs[0]] = _dim(go[0])
    # 3. A size-1 source dim reads the size-1 result dim in the same place between groups, if
    #    any (both are 0): the op that reads the view then iterates it as that tensor's dim.
    for s1, o1 in _unit_dims_by_gap(src, out, reshape_groups(src, out)):
        exprs[s1] = _dim(o1)
    return _finish(len(out), exprs)


def _unit_dims_by_gap(src: Sequence[int], out: Sequence[int],
                      groups: Sequence[tuple[list[int], list[int]]]) -> list[tuple[int, int]]:
    """Pairs (source dim, result dim) of size-1 dims that sit after the same number of groups."""
    def by_gap(shape: Sequence[int], side: int) -> dict[int, list[int]]:
        gaps: dict[int, list[int]] = {}
        for d, n in enumerate(shape):
            if n == 1:
                gaps.setdefault(sum(1 for g in groups if g[side][-1] < d), []).append(d)
        return gaps

    source, result = by_gap(src, 0), by_gap(out, 1)
    return [pair for gap, dims in source.items() for pair in zip(dims, result.get(gap, []))]


def permute_map(src: Sequence[int], perm: Sequence[int]) -> AffineMap:
    """``out[i] = src[perm[i]]``."""
    exprs: list[AffineExpr] = [_const(0)] * len(src)
    for i, p in enumerate(perm):
        exprs[p] = _dim(i)
    return _finish(len(perm), exprs)


def expand_map(src: Sequence[int], out: Sequence[int]) -> AffineMap:
    """Broadcast of ``src`` (right-aligned) to ``out``; expanded size-1 dims read 0."""
    offset = len(out) - len(src)
    exprs = [_const(0) if n == 1 and out[offset + i] != 1 else _dim(offset + i)
             for i, n in enumerate(src)]
    return _finish(len(out), exprs)


def slice_map(src: Sequence[int], dim: int, start: int, step: int) -> AffineMap:
    """``out[.., i, ..] = src[.., start + step * i, ..]`` along ``dim``."""
    exprs = [_dim(d) for d in range(len(src))]
    exprs[dim] = _scaled(dim, step) + start if start else _scaled(dim, step)
    return _finish(len(src), exprs)


def select_map(src: Sequence[int], dim: int, index: int) -> AffineMap:
    """``out = src[.., index, ..]``: ``dim`` is dropped from the result."""
    exprs: list[AffineExpr] = []
    for d in range(len(src)):
        if d < dim:
            exprs.append(_dim(d))
        elif d == dim:
            exprs.append(_const(index))
        else:
            exprs.append(_dim(d - 1))
    return _finish(len(src) - 1, exprs)


def affine_map(num_dims: int, terms: Sequence[tuple[int, Mapping[int, int]]]) -> AffineMap:
    """Per source dim ``(c, {result dim: coefficient})``: ``src[.., c + sum(a * d), ..]``
    (``aten.index`` with compile-time index tensors that are affine in the result's coordinates)."""
    exprs: list[AffineExpr] = []
    for const, coefficients in terms:
        expr: AffineExpr | None = None
        for d, a in sorted(coefficients.items()):
            term = _scaled(d, a)
            expr = term if expr is None else expr + term
        exprs.append(_const(const) if expr is None else expr + const if const else expr)
    return _finish(num_dims, exprs)


def eval_map(view_map: AffineMap, coords: Sequence[int]) -> tuple[int, ...]:
    """Source coordinates of the result element at ``coords``."""
    return tuple(view_map.eval(list(coords), []))
