# Flattened dims of spyre-stickify: a storage dim read at a row-major nest of
# iteration dims (the rows b * L + l of a [B * L, H * D] projection read as
# [B, H, L, D]), and the coordinates of the same read once the dim is
# unflattened into one dim per term.  Reads coordinates in the normal form of
# spyre_mlir.analysis.views; writes no IR.
"""Row-major nests: a storage dim read as the digits of a mixed radix.

A storage dim of ``n`` elements read at ``c_0 * x_0 + c_1 * x_1 + ... + const``
(``c_0 = 1``, each ``c_t`` dividing ``c_t+1``, ``c_last`` dividing ``n``) holds
one value of the digits ``(x_last, ..., x_0)`` per element: unflattened into
dims of ``c_t+1 / c_t`` elements (``n / c_last`` for the outermost), it is read
at ``x_t + digit_t`` along each, where the digits of ``const`` carry nothing.
No stick may be driven by ``x_0`` along the flat dim when ``x_0`` is padded to
whole sticks (the padding would reach the next ``x_1``) or splits a stick, but
it may along the unflattened dim: :class:`Nest` says how to unflatten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.views import Dim, dim


@dataclass(frozen=True)
class Nest:
    """Storage dim ``dim`` read at a row-major nest of iteration dims."""

    dim: int
    factors: tuple[int, ...]
    """Extents of the unflattened dims, outermost first; their product is the dim's extent."""
    coefficients: tuple[int, ...]
    """The element stride of each unflattened dim in the flat one, outermost first."""
    digits: tuple[Linear, ...]
    """The read's coordinate along each unflattened dim, outermost first."""

    @property
    def inner(self) -> int:
        """The position of the innermost unflattened dim among the unflattened tensor's dims."""
        return self.dim + len(self.factors) - 1

    def shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """``shape`` with the nest's dim unflattened."""
        return (*shape[:self.dim], *self.factors, *shape[self.dim + 1:])

    def unflatten(self, coords: Sequence[Linear]) -> tuple[Linear, ...]:
        """The coordinates ``coords`` of the flat storage, read in the unflattened one."""
        return (*coords[:self.dim], *self.digits, *coords[self.dim + 1:])

    def flat(self, rank: int) -> tuple[Linear, ...]:
        """The flat storage's coordinates of the unflattened one's dims (``rank`` of the flat)."""
        n = len(self.factors)
        inside = Linear.constant(0)
        for t, c in enumerate(self.coefficients):
            inside = inside + dim(self.dim + t).scaled(c)
        return (*(dim(i) for i in range(self.dim)), inside, *(dim(i + n - 1) for i in range(self.dim + 1, rank)))


def row_major_nest(coords: Sequence[Linear], j: int, extent: int, space: Sequence[int]) -> Nest | None:
    """The nest that storage dim ``j`` (``extent`` elements) is read at by ``coords`` over the
    iteration space ``space``, or None: fewer than two terms, a term that is no iteration dim,
    coefficients that do not nest (each dividing the next and the extent, the innermost 1), or a
    digit of the constant offset that its term's range would carry over."""
    coord = coords[j]
    terms = sorted(coord.terms, key=lambda t: t[1])
    if len(terms) < 2 or terms[0][1] != 1 or any(not isinstance(a, Dim) for a, _ in terms):
        return None
    coefficients = [k for _, k in terms]
    bounds = [*coefficients[1:], extent]
    if any(b <= k or b % k for k, b in zip(coefficients, bounds)):
        return None
    factors = [b // k for k, b in zip(coefficients, bounds)]
    consts = [coord.const // k % f for k, f in zip(coefficients, factors)]
    if sum(d * k for d, k in zip(consts, coefficients)) != coord.const:
        return None
    if any(d + space[a.pos] > f for (a, _), d, f in zip(terms, consts, factors)):
        return None
    digits = [dim(a.pos) + Linear.constant(d) for (a, _), d in zip(terms, consts)]
    return Nest(j, tuple(reversed(factors)), tuple(reversed(coefficients)), tuple(reversed(digits)))
