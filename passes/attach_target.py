# spyre-attach-target (DESIGN §14): the target description of a compile.
# Reads the module's `spyre.target` attribute (if any) and the pass options;
# writes the module attribute `spyre.target = #spyre.target<cores = N,
# lx_fraction = F>`, which every later pass reads through target_config.
"""Attaching the target: the machine facts every pass plans against.

The counterpart of upstream MLIR's ``nvvm-attach-target``.  Before::

    module {
      func.func @f(...) { ... }
    }

After ``spyre-attach-target{cores=4}``::

    module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = 0.2>} {
      func.func @f(...) { ... }
    }

An option that is not given keeps the module's value, or the default of a
module without a target (32 cores, LX fraction 0.2).  The options are checked
once, when the pass is built: a bad value is one error naming the option.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from spyre_mlir.dialects.spyre import attach_target, target_config
from spyre_mlir.hardware import target_overrides


@dataclass(frozen=True)
class AttachTargetPass(ModulePass):
    """Attach the compile's target (#spyre.target: cores, LX fraction) to the module."""

    name = "spyre-attach-target"

    cores: int | None = None
    """Cores of the target, 1..32; None keeps the module's (else 32)."""

    lx_fraction: float | None = None
    """Share of LX kept by the back end, 0 <= f < 1; None keeps the module's (else 0.2)."""

    def __post_init__(self) -> None:
        target_overrides(self.cores, self.lx_fraction, self.name)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        overrides = target_overrides(self.cores, self.lx_fraction, self.name)
        attach_target(op, dataclasses.replace(target_config(op), **overrides))
