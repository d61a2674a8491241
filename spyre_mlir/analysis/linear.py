# Affine-linear algebra (DESIGN §14): the one expression type every pass and
# the lowering use for "a constant plus constant multiples of some keys"
# (iteration dims, loop induction variables, floordiv/mod atoms).  Reads
# xDSL affine expressions; writes nothing.
"""Affine-linear expressions: ``const + sum(coef * key)``.

:class:`Linear` is generic in its keys, which must be hashable and totally
ordered (an ``int`` iteration dim, a loop of a tile schedule, an atom of the
view model); its terms are kept in key order without zero coefficients, so two
equal expressions are equal objects.  :func:`affine_linear` reads an xDSL
affine expression that is a sum of constant multiples of dims, and
:func:`affine_sum` writes one back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr

K = TypeVar("K")


@dataclass(frozen=True)
class Linear(Generic[K]):
    """``const + sum(coef * key)``, terms in key order, no zero coefficient."""

    terms: tuple[tuple[K, int], ...] = ()
    const: int = 0

    @staticmethod
    def of(coefs: Mapping[K, int], const: int = 0) -> Linear[K]:
        """The normal form of ``sum(coefs[k] * k) + const``."""
        return Linear(tuple(sorted(((k, c) for k, c in coefs.items() if c), key=lambda t: t[0])), const)

    @staticmethod
    def term(key: K, coef: int = 1) -> Linear[K]:
        """``coef * key``."""
        return Linear.of({key: coef})

    @staticmethod
    def constant(value: int) -> Linear[K]:
        """The constant ``value``."""
        return Linear((), value)

    def __add__(self, other: Linear[K]) -> Linear[K]:
        coefs = dict(self.terms)
        for key, c in other.terms:
            coefs[key] = coefs.get(key, 0) + c
        return Linear.of(coefs, self.const + other.const)

    def scaled(self, factor: int) -> Linear[K]:
        """``factor * self``."""
        return Linear.of({k: c * factor for k, c in self.terms}, self.const * factor)

    def is_const(self) -> bool:
        """True when no key occurs."""
        return not self.terms

    def keys(self) -> Iterator[K]:
        """The keys with a non-zero coefficient, in order."""
        return (k for k, _ in self.terms)

    def fastest_keys(self) -> set[K]:
        """The keys whose coefficient is smallest in magnitude: those that step ``self`` by its
        smallest stride (none for a constant)."""
        step = min((abs(c) for _, c in self.terms), default=0)
        return {k for k, c in self.terms if abs(c) == step}

    def coefficient(self, key: K) -> int:
        """The coefficient of ``key`` (0 when it does not occur)."""
        return dict(self.terms).get(key, 0)

    def bounds(self, key_range: Callable[[K], tuple[int, int]]) -> tuple[int, int]:
        """Inclusive bounds of ``self`` when each key ranges over ``key_range(key)``."""
        lo = hi = self.const
        for key, c in self.terms:
            k_lo, k_hi = key_range(key)
            lo, hi = lo + min(c * k_lo, c * k_hi), hi + max(c * k_lo, c * k_hi)
        return lo, hi


def affine_linear(expr: AffineExpr) -> Linear[int] | None:
    """``expr`` as a :class:`Linear` over dim positions, None unless it is a sum of constant
    multiples of dims and constants (no floordiv, ceildiv, mod or symbol)."""
    if isinstance(expr, AffineConstantExpr):
        return Linear.constant(expr.value)
    if isinstance(expr, AffineDimExpr):
        return Linear.term(expr.position)
    if not isinstance(expr, AffineBinaryOpExpr) or expr.kind not in (AffineBinaryOpKind.Add, AffineBinaryOpKind.Mul):
        return None
    lhs, rhs = affine_linear(expr.lhs), affine_linear(expr.rhs)
    if lhs is None or rhs is None:
        return None
    if expr.kind is AffineBinaryOpKind.Add:
        return lhs + rhs
    if not lhs.is_const() and not rhs.is_const():
        return None
    return rhs.scaled(lhs.const) if lhs.is_const() else lhs.scaled(rhs.const)


def affine_sum(coefs: Sequence[int], const: int = 0) -> AffineExpr:
    """``sum(coefs[d] * d_d) + const`` without zero terms (``const`` alone when all are zero)."""
    expr: AffineExpr | None = None
    for d, c in enumerate(coefs):
        if c:
            term = AffineExpr.dimension(d) if c == 1 else AffineExpr.dimension(d) * c
            expr = term if expr is None else expr + term
    if expr is None:
        return AffineExpr.constant(const)
    return expr + const if const else expr
