# Named dims (DESIGN §5, seed 002): how a compute op's iteration-dim names
# become its result's dim names, and the `dims` property that carries them.
# Read by spyre-propagate-named-dims (which decides the names) and
# spyre-stickify (which names the copies it inserts).  Reads ops' indexing
# maps; writes nothing.
"""Dim names as values and as the ``dims`` property."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir.affine import AffineDimExpr

from spyre_mlir.dialects.spyre import ComputeOp

Names = tuple[str, ...]
"""The names one dim carries, outermost first (several for a flattened dim)."""

DimNames = tuple[Names, ...]
"""Names per dim of a value, or per iteration dim of a compute op."""


def result_dim_names(op: ComputeOp, iteration_names: Sequence[Names]) -> DimNames:
    """The result's names: those of the iteration dim each result coordinate is (``()`` otherwise)."""
    return tuple(iteration_names[e.position] if isinstance(e, AffineDimExpr) else ()
                 for e in op.get_indexing_maps()[-1].results)


def dims_attr(names: DimNames) -> ArrayAttr[ArrayAttr[StringAttr]]:
    """The ``dims`` property of ``names``: ``[["M"], ["C", "D"]]``."""
    return ArrayAttr(ArrayAttr(StringAttr(n) for n in dim) for dim in names)
