# Where the nodes of a torch.export graph come from: the user's model line in a
# node's stack trace, as an MLIR location and as the location of a SpyreError.
# Reads node meta (stack_trace, nn_module_stack); writes nothing.
"""Locations of graph nodes: :func:`user_frame`, :func:`node_loc`, :func:`node_error`."""

from __future__ import annotations

import linecache
import os
import re
import sysconfig
from dataclasses import dataclass

import torch
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, NameLoc, StringAttr, UnknownLoc
from xdsl.ir import Attribute

from spyre_mlir.diagnostics import SpyreError

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>[^\n]*)\n'
                    r'(?P<code>[^\n]*)(?:\n(?P<marks>\s*[~^]+)\s*(?=\n|$))?')


def _dir(path: str) -> str:
    return os.path.abspath(path) + os.sep


_TOOL_DIRS = (_dir(os.path.dirname(torch.__file__)), _dir(os.path.dirname(os.path.dirname(__file__))))
"""torch's and spyre_mlir's own code."""
_STDLIB_DIR = _dir(sysconfig.get_paths()["stdlib"])
_PACKAGE_DIRS = tuple(_dir(sysconfig.get_paths()[key]) for key in ("purelib", "platlib"))
"""Installed packages (a model library such as transformers): model code, though the stdlib's
directory may hold them (``lib/python3.11/site-packages``)."""


def _skipped(path: str) -> bool:
    """Whether a frame in ``path`` is torch's, spyre_mlir's or the stdlib's, not the model's."""
    path = os.path.abspath(path)
    return path.startswith(_TOOL_DIRS) or (path.startswith(_STDLIB_DIR) and not path.startswith(_PACKAGE_DIRS))


@dataclass(frozen=True)
class SourceLoc:
    """A line of the user's model."""

    file: str
    """The file as Python knows it: a model file as the user named it to the tools."""
    line: int
    col: int

    def short(self) -> str:
        return f"{self.file}:{self.line}"


def user_frame(stack_trace: str | None) -> SourceLoc | None:
    """The last frame of ``stack_trace`` outside torch, spyre_mlir and the stdlib."""
    if not stack_trace:
        return None
    found: SourceLoc | None = None
    for m in _FRAME.finditer(stack_trace):
        path = m["file"]
        if path.startswith("<") or _skipped(path):
            continue
        line = int(m["line"])
        col = 1
        source = linecache.getline(path, line)
        indent = len(source) - len(source.lstrip()) if source else 0
        marks = m["marks"]
        if marks:
            shown_indent = len(m["code"]) - len(m["code"].lstrip())
            first = min(i for i in (marks.find("^"), marks.find("~")) if i >= 0)
            col = indent + first - shown_indent + 1
        else:
            col = indent + 1
        found = SourceLoc(path, line, max(col, 1))
    return found


def op_name(node: torch.fx.Node) -> str:
    """The ATen name of a node's target (``aten.add.Tensor``), else the target's own name."""
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return f"aten.{target._opname}.{target._overloadname}" if target.namespace == "aten" else str(target)
    return getattr(target, "__name__", str(target))


def node_loc(node: torch.fx.Node) -> tuple[Attribute, SourceLoc | None]:
    """The MLIR location of ``node`` (its model line, else its name) and the model line itself."""
    src = user_frame(node.meta.get("stack_trace"))
    if src is None:
        return NameLoc(StringAttr(node.name), UnknownLoc()), None
    return FileLineColLoc(StringAttr(src.file), IntAttr(src.line), IntAttr(src.col)), src


def node_error(node: torch.fx.Node, msg: str) -> SpyreError:
    """A :class:`SpyreError` located at ``node``'s model line (else at the node)."""
    _, src = node_loc(node)
    return SpyreError(msg, loc=src.short() if src else f"<node {node.name}>")


def node_origin(node: torch.fx.Node) -> str:
    """Where a node comes from: its model line, else the module that traced it (a node of a
    no-grad region has no line of its own), else its name."""
    _, src = node_loc(node)
    if src is not None:
        return src.short()
    stack = node.meta.get("nn_module_stack") or {}
    if stack:
        path, cls = list(stack.values())[-1]
        return f"module '{path}' ({str(getattr(cls, '__name__', cls)).rsplit('.', 1)[-1]})"
    return f"node '{node.name}'"


__all__ = ["SourceLoc", "user_frame", "op_name", "node_loc", "node_error", "node_origin"]
