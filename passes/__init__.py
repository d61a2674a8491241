# The pass registry: every spyre-mlir pass by its pipeline name.  Read by
# spyre-opt, the compile driver and the xDSL universe entry point.
"""spyre-mlir passes, one module per pass, registered here by pipeline name.

A pass ``spyre-foo-bar`` lives in ``passes/foo_bar.py`` as a frozen-dataclass
``ModulePass``; add ``"spyre-foo-bar": lambda: FooBarPass`` (imported lazily
inside the lambda) to :data:`SPYRE_PASSES`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass

SPYRE_PASSES: dict[str, Callable[[], type[ModulePass]]] = {}

UPSTREAM_PASSES = (
    "canonicalize",
    "cse",
    "dce",
    "licm",
    "lower-affine",
    "convert-scf-to-cf",
    "scf-for-loop-unroll",
    "scf-for-loop-range-folding",
    "mlir-opt",
)


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Our passes plus the standard xDSL passes we support, by name."""
    from xdsl.transforms import get_all_passes

    upstream = get_all_passes()
    return {**{name: upstream[name] for name in UPSTREAM_PASSES}, **SPYRE_PASSES}
