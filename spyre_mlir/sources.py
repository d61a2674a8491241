# The source argument of the tools: `model.py:factory`, `program.pt2` or (for
# spyre-compile) `in.mlir`, split and checked before any work.  Reads the file
# system and a model file's syntax tree (to name the factories it defines); never
# runs the file and never imports torch; writes nothing.
"""Model sources named on the command line.

:func:`parse_source` checks what can be checked before torch is imported or the
model is run: that the file exists, and that a model file names its factory
(when it does not, the error lists the file's :func:`factories`).  The
importer's loader parses specs with it too, so the tools and the loader agree.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from spyre_mlir.diagnostics import SpyreError


@dataclass(frozen=True)
class Source:
    """One source argument, split."""

    path: str
    """The file, as the user gave it."""
    factory: str | None
    """The function to call in a model file; None for a ``.pt2`` archive or a ``.mlir`` module."""


def parse_source(spec: str, *, mlir: bool = False) -> Source:
    """``spec`` (``model.py:factory``, ``program.pt2``, or with ``mlir`` also ``in.mlir``) split
    into its file and factory, the file checked to exist.

    Each problem is one :class:`SpyreError` located at the file as given: it does not
    exist, or a ``.py`` file names no factory (the message lists the functions it
    could call).  A ``.mlir`` module is read later, by its parser.
    """
    if mlir and spec.endswith(".mlir"):
        return Source(spec, None)
    if spec.endswith(".pt2") and ":" not in os.path.basename(spec):
        _check_file(spec)
        return Source(spec, None)
    path, colon, name = spec.rpartition(":")
    if not colon:
        path, name = spec, ""
    if not path.endswith(".py"):
        kinds = "'model.py:factory', 'program.pt2' or 'in.mlir'" if mlir else "'model.py:factory' or 'program.pt2'"
        raise SpyreError(f"expected {kinds}, got '{spec}'", loc=spec)
    _check_file(path)
    if not name:
        raise SpyreError(f"name the factory to call: '{path}:FACTORY' ({factory_choices(path)})", loc=path)
    return Source(path, name)


def factories(path: str) -> list[str]:
    """The names of the functions the model file ``path`` defines at module level that take
    no arguments (what a factory is), in file order; [] for a file Python cannot parse."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return []
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            name, args = node.name, node.args
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name)):
            name, args = node.targets[0].id, node.value.args
        else:
            continue
        required = len(args.posonlyargs) + len(args.args) - len(args.defaults)
        if not name.startswith("_") and required == 0 and None not in args.kw_defaults:
            names.append(name)
    return names


def factory_choices(path: str) -> str:
    """The factories the model file ``path`` offers, for an error that asks for one:
    ``functions of model.py without parameters: build, build_view``."""
    found = factories(path)
    if not found:
        return f"{path} defines no function without parameters"
    return f"functions of {path} without parameters: {', '.join(found)}"


def _check_file(path: str) -> None:
    if os.path.isdir(path):
        raise SpyreError("cannot read the file: it is a directory", loc=path)
    if not os.path.isfile(path):
        raise SpyreError("cannot read the file: no such file or directory", loc=path)
