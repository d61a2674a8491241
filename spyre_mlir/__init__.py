# spyre-mlir: the public Python API.  Names that need torch are loaded on first
# use, so that importing spyre_mlir (as spyre-opt does) never imports torch.
# Reads the installed package's metadata (its version); writes nothing.
"""spyre-mlir: an MLIR compiler toolchain for the IBM Spyre accelerator's front end.

Public API (loaded lazily)::

    from spyre_mlir import spyre_hint, declare_tensor_dim, name_tensor_dims, compile, generate

``spyre_mlir.__version__`` is the installed package's version (``pyproject.toml``'s).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "spyre_hint": "spyre_mlir.hints",
    "declare_tensor_dim": "spyre_mlir.hints",
    "name_tensor_dims": "spyre_mlir.hints",
    "compile": "spyre_mlir.pipeline",
    "generate": "spyre_mlir.generation",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("spyre-mlir")
        except PackageNotFoundError:  # imported from a source tree that was never installed
            return "0+unknown"
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'spyre_mlir' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)
