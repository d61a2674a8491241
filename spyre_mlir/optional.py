# Optional dependencies: the third-party modules that only some features need,
# the extra of pyproject.toml that installs each, and the one error a tool
# prints when one is missing.  Reads nothing; imports the module when asked.
"""Imports of optional dependencies.

``require("torch", "importing a PyTorch model")`` returns the module, or raises
:class:`MissingDependency`, which the tools print as one line naming the extra
that installs it::

    spyre-compile: error: importing a PyTorch model needs torch: pip install 'spyre-mlir[torch]'
"""

from __future__ import annotations

import importlib
from types import ModuleType

EXTRAS = {"torch": "torch", "jsonschema": "schema", "matplotlib": "timeline"}
"""Each optional top-level module and the extra of ``pyproject.toml`` that installs it."""


class MissingDependency(ModuleNotFoundError):
    """An optional dependency is not installed; the message says what needs it and how to install it."""


def require(module: str, purpose: str) -> ModuleType:
    """``module`` (an entry of :data:`EXTRAS` or one of its submodules), imported.

    Raises :class:`MissingDependency` when the package is not installed: ``purpose``
    (what needs it, e.g. ``"a .png timeline"``) needs it, and its extra installs it.
    A package that is installed but fails to import raises its own error.
    """
    top = module.partition(".")[0]
    extra = EXTRAS[top]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != top:
            raise
        raise MissingDependency(f"{purpose} needs {top}: pip install 'spyre-mlir[{extra}]'", name=top) from None
