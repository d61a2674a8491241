# Kernel-argument numbering (DESIGN §10, §14): the order of @sdsc_bundle's
# arguments as the manifest lists them.  Read by spyre-plan-memory (which places
# outputs in their argument) and spyre-lower-to-bundle (which lists them).
# Reads a func.func's arguments and returned values; writes nothing.
"""Kernel arguments: the function's arguments, then its results, then constants and the pool.

The first two groups are fixed by the function's signature; :func:`output_arguments`
numbers the results.  ``constant`` arguments (fills) and the HBM pool follow, in
the order spyre-lower-to-bundle lists them.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import SSAValue


def output_arguments(body: func.FuncOp) -> dict[SSAValue, int]:
    """Each value ``body`` returns -> its kernel argument: the function's arguments come first,
    then one per returned value in order (a value returned twice keeps its first)."""
    ret = body.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    outputs: dict[SSAValue, int] = {}
    for j, value in enumerate(ret.arguments):
        outputs.setdefault(value, len(body.body.block.args) + j)
    return outputs
