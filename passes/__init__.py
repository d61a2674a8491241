# The pass registry: every spyre-mlir pass by its pipeline name.  Read by
# spyre-opt, the compile driver and the xDSL universe entry point.
"""spyre-mlir passes, one module per pass, registered here by pipeline name.

A pass ``spyre-foo-bar`` lives in ``passes/foo_bar.py`` as a frozen-dataclass
``ModulePass``; add ``("spyre-foo-bar", "spyre_mlir.passes.foo_bar",
"FooBarPass")`` to ``_SPYRE_PASSES``.  Modules are imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

_SPYRE_PASSES: tuple[tuple[str, str, str], ...] = (
    ("spyre-attach-target", "spyre_mlir.passes.attach_target", "AttachTargetPass"),
    ("spyre-mask-contractions", "spyre_mlir.passes.mask_contractions", "MaskContractionsPass"),
    ("spyre-propagate-named-dims", "spyre_mlir.passes.propagate_named_dims", "PropagateNamedDimsPass"),
    ("spyre-stickify", "spyre_mlir.passes.stickify", "StickifyPass"),
    ("spyre-stage-layouts", "spyre_mlir.passes.stage_layouts", "StageLayoutsPass"),
    ("spyre-fold-views", "spyre_mlir.passes.fold_views", "FoldViewsPass"),
    ("spyre-auto-tile", "spyre_mlir.passes.auto_tile", "AutoTilePass"),
    ("spyre-coarse-tile", "spyre_mlir.passes.coarse_tile", "CoarseTilePass"),
    ("spyre-pad-dims", "spyre_mlir.passes.pad_dims", "PadDimsPass"),
    ("spyre-work-division", "spyre_mlir.passes.work_division", "WorkDivisionPass"),
    ("spyre-plan-memory", "spyre_mlir.passes.plan_memory", "PlanMemoryPass"),
    ("spyre-lower-to-bundle", "spyre_mlir.passes.lower_to_bundle", "LowerToBundlePass"),
    ("spyre-compile", "spyre_mlir.pipeline", "SpyreCompilePass"),
)


def _lazy(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(importlib.import_module(module), cls)


SPYRE_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _lazy(module, cls) for name, module, cls in _SPYRE_PASSES
}

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
