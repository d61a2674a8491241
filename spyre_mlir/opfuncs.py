# The op-func table: the single source of truth for every SDSC op func the
# toolchain knows.  Read by the dialect verifiers, the importer, the passes, the
# code generator and the reference interpreter; writes nothing.
"""SDSC op funcs.

Each :class:`OpFunc` names an SDSC op func (``opFuncName`` in the JSON) and says
what kind of computation it is, which tensor inputs and scalar parameters it
takes, how partial results of a reduction combine, and what it computes, as a
numpy function the interpreter runs.

Inputs of a pointwise op func are named (``x``, ``y``, ...).  A ``spyre.pointwise``
op supplies each input either as a tensor operand or as a scalar constant under
the input's name (``x + 2`` is ``add`` with operand ``x`` and constant ``y = 2``);
``params`` are scalar-only settings (``clip``'s ``min``/``max``).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np


class OpKind(enum.Enum):
    """What kind of computation an op func performs."""

    POINTWISE = "pointwise"
    REDUCTION = "reduction"
    MATMUL = "matmul"
    DATA_MOVEMENT = "data_movement"


@dataclass(frozen=True)
class OpFunc:
    """One SDSC op func.

    ``compute`` is the numpy reference: for pointwise op funcs
    ``compute(*inputs, **params)`` elementwise with broadcasting; for reductions
    ``compute(x, axis=tuple)`` keeping dims; for matmul ``compute(a, b)``; for data
    movement ``compute(x)``.  Inputs arrive in the computation dtype chosen by
    the caller (the interpreter uses float32 for fp16 data).
    """

    name: str
    kind: OpKind
    compute: Callable[..., np.ndarray]
    inputs: tuple[str, ...] = ("x",)
    params: Mapping[str, float] = field(default_factory=dict)
    identity: float | None = None
    combine: str | None = None
    casts: bool = False
    averages: bool = False
    """A reduction whose result is a mean: tiling combines per-tile results with
    ``combine`` and scales once by ``1 / tile count``."""

    @property
    def arity(self) -> int:
        """Number of tensor-or-scalar inputs."""
        return len(self.inputs)

    @property
    def ex_unit(self) -> str:
        """The SDSC execution unit: ``pt`` for matmul, ``sfp`` for everything else."""
        return "pt" if self.kind is OpKind.MATMUL else "sfp"

    def bound_params(self, consts: Mapping[str, float]) -> dict[str, float]:
        """The op func's parameters, each the value ``consts`` gives it, else its default."""
        return {**self.params, **{k: v for k, v in consts.items() if k in self.params}}

    def keeps_zeros(self, consts: Mapping[str, float]) -> bool:
        """True when the op func, given ``consts`` (scalar inputs and parameters by name) and
        zeros for every tensor input, computes zeros (``silu(0)``, ``0 * 0``, a sum of zeros):
        it keeps a zero padding zero.  A matmul does (``0 @ 0``); data movement copies."""
        zeros = np.zeros((1, 1), np.float32)
        if self.kind is OpKind.REDUCTION:
            return not np.any(self.compute(zeros, axis=(1,)))
        if self.kind is not OpKind.POINTWISE:
            return True
        args = [np.float32(consts[name]) if name in consts else zeros for name in self.inputs]
        with np.errstate(all="ignore"):
            return not np.any(np.asarray(self.compute(*args, **self.bound_params(consts))))


def _erf(x: np.ndarray) -> np.ndarray:
    """erf for float arrays (Abramowitz & Stegun 7.1.26 refined; |error| < 1.2e-7)."""
    t = 1.0 / (1.0 + 0.5 * np.abs(x))
    poly = -x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (
        0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (
            1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    y = 1.0 - t * np.exp(poly)
    return np.where(x >= 0, y, -y).astype(x.dtype)


def _softplus(x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    bx = beta * x
    safe = np.minimum(bx, threshold)
    return np.where(bx > threshold, x, np.log1p(np.exp(safe)) / beta)


def _as_flag(condition: np.ndarray, like: np.ndarray) -> np.ndarray:
    """A boolean result as 1/0 in the data type of the inputs (Spyre has no bool)."""
    return condition.astype(np.result_type(like))


def _mean(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    return np.mean(x, axis=axis, keepdims=True)


def _pointwise(name: str, fn: Callable[..., np.ndarray], inputs: tuple[str, ...] = ("x",),
               params: Mapping[str, float] | None = None, casts: bool = False) -> OpFunc:
    return OpFunc(name, OpKind.POINTWISE, fn, inputs, dict(params or {}), casts=casts)


def _reduction(name: str, fn: Callable[..., np.ndarray], identity: float, combine: str,
               averages: bool = False) -> OpFunc:
    return OpFunc(name, OpKind.REDUCTION, fn, ("x",), {}, identity, combine, averages=averages)


_XY = ("x", "y")

COPY = "identity"
"""The op func of a copy: the pieces of a concatenation, plan-memory's copy-outs."""

SCALE = "mul"
"""The op func that scales by a constant ``y``: a tiled mean's division by the tile count."""

_TABLE: tuple[OpFunc, ...] = (
    # Binary arithmetic.
    _pointwise("add", np.add, _XY),
    _pointwise("sub", np.subtract, _XY),
    _pointwise(SCALE, np.multiply, _XY),
    _pointwise("realdiv", np.divide, _XY),
    _pointwise("maximum", np.maximum, _XY),
    _pointwise("minimum", np.minimum, _XY),
    # Unary arithmetic and activations.
    _pointwise("neg", np.negative),
    _pointwise("exp", np.exp),
    _pointwise("log", np.log),
    _pointwise("sqrt", np.sqrt),
    _pointwise("rsqrt", lambda x: 1.0 / np.sqrt(x)),
    _pointwise("reciprocal", lambda x: 1.0 / x),
    _pointwise("abs", np.abs),
    _pointwise("tanh", np.tanh),
    _pointwise("sigmoid", lambda x: 1.0 / (1.0 + np.exp(-x))),
    _pointwise("relufwd", lambda x: np.maximum(x, 0).astype(x.dtype)),
    _pointwise("gelufwd", lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))),
    _pointwise("silu", lambda x: x / (1.0 + np.exp(-x))),
    _pointwise("softplus", _softplus, params={"beta": 1.0, "threshold": 20.0}),
    _pointwise("clip", lambda x, min, max: np.clip(x, min, max),
               params={"min": -math.inf, "max": math.inf}),
    # Comparisons (1 where true, 0 where false) and selection.
    _pointwise("equal", lambda x, y: _as_flag(x == y, x), _XY),
    _pointwise("notequal", lambda x, y: _as_flag(x != y, x), _XY),
    _pointwise("greaterequal", lambda x, y: _as_flag(x >= y, x), _XY),
    _pointwise("lesserequal", lambda x, y: _as_flag(x <= y, x), _XY),
    _pointwise("where3", lambda cond, x, y: np.where(cond != 0, x, y), ("cond", "x", "y")),
    # Copy, and dtype conversion when the result type differs.
    _pointwise(COPY, lambda x: x, casts=True),
    # Reductions: identity initialises an accumulator, combine merges partials.
    _reduction("sum", lambda x, axis: np.sum(x, axis=axis, keepdims=True), 0.0, "add"),
    _reduction("max", lambda x, axis: np.max(x, axis=axis, keepdims=True), -math.inf, "maximum"),
    _reduction("min", lambda x, axis: np.min(x, axis=axis, keepdims=True), math.inf, "minimum"),
    _reduction("mean", _mean, 0.0, "add", averages=True),
    # (Batched) matrix multiplication on the PT array.
    OpFunc("batchmatmul", OpKind.MATMUL, np.matmul, _XY, {}, 0.0, "add"),
    # Change of stick dimension in HBM.
    OpFunc("ReStickifyOpHBM", OpKind.DATA_MOVEMENT, lambda x: x),
)

OP_FUNCS: Mapping[str, OpFunc] = {f.name: f for f in _TABLE}


def lookup(name: str) -> OpFunc | None:
    """The op func called ``name``, or None when there is no such op func."""
    return OP_FUNCS.get(name)


def names_of_kind(kind: OpKind) -> tuple[str, ...]:
    """Names of all op funcs of ``kind``, in table order."""
    return tuple(f.name for f in _TABLE if f.kind is kind)
