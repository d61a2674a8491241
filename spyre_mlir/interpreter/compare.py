# Comparing interpreter outputs with PyTorch eager results under a tolerance
# suited to each dtype.  Reads numpy arrays; writes nothing.
"""Output comparison.

An element passes when ``|got - ref| <= atol + rtol * |ref|`` (NaN must match
NaN, infinities must match exactly):

=================== ======= =======
dtype               rtol    atol
=================== ======= =======
float16             1e-2    1e-2
bfloat16            2**-4   2**-4
float32             1e-4    1e-5
int8, int32         0       0
=================== ======= =======

bfloat16 keeps 8 significant bits to float16's 11, so eager's own rounding of a bfloat16
reduction (a sum of 256 rows, then a matmul) reaches a few hundredths; its tolerance is about as
many of its units in the last place at 1.0 as float16's (8 and 10).

``max_rel_err`` is ``max |got - ref| / max(|ref|, atol)`` (atol keeps
near-zero references from dominating; for the integers, 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import canonical_dtype


@dataclass(frozen=True)
class Tolerance:
    """``|got - ref| <= atol + rtol * |ref|``."""

    rtol: float
    atol: float


TOLERANCES = {"float16": Tolerance(1e-2, 1e-2), "bfloat16": Tolerance(2 ** -4, 2 ** -4),
              "float32": Tolerance(1e-4, 1e-5), "int8": Tolerance(0.0, 0.0), "int32": Tolerance(0.0, 0.0)}


def tolerance_for(dtype: str) -> Tolerance:
    """The tolerance for outputs of ``dtype``."""
    return TOLERANCES[canonical_dtype(dtype)]


class OutputMismatch(SpyreError):
    """An output differs from its reference beyond the tolerance: a wrong number, never a
    program the toolchain rejected."""


@dataclass(frozen=True)
class Comparison:
    """The errors of one output against its reference."""

    max_abs_err: float
    max_rel_err: float


def compare(name: str, got: np.ndarray, ref: np.ndarray, tol: Tolerance) -> Comparison:
    """Check ``got`` against ``ref``; a mismatch is an :class:`OutputMismatch` naming the worst element."""
    if got.shape != ref.shape:
        raise OutputMismatch(f"output '{name}' has shape {list(got.shape)}, eager gives {list(ref.shape)}")
    g, r = got.astype(np.float64), ref.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(r)
    same_inf = np.isinf(r) & (g == r)
    with np.errstate(invalid="ignore"):
        diff = np.where(both_nan | same_inf, 0.0, np.abs(g - r))
        diff = np.where(np.isnan(diff), np.inf, diff)
        excess = diff - (tol.atol + tol.rtol * np.where(np.isinf(r), 0.0, np.abs(r)))
    if g.size == 0:
        return Comparison(0.0, 0.0)
    worst = np.unravel_index(int(np.argmax(excess)), g.shape)
    if excess[worst] > 0:
        raise OutputMismatch(f"output '{name}' differs from PyTorch eager at index {tuple(int(i) for i in worst)}: "
                         f"interpreter {got[worst]!r}, eager {ref[worst]!r} "
                         f"(|d| = {diff[worst]:.6g} > {tol.atol:g} + {tol.rtol:g} * |ref|)")
    floor = tol.atol if tol.atol > 0 else 1.0
    rel = diff / np.maximum(np.where(np.isinf(r), 1.0, np.abs(r)), floor)
    return Comparison(float(diff.max()), float(rel.max()))
