# Diagnostics: the one user-facing error type of spyre-mlir and the helpers that
# turn it into a single located line.  Reads op locations; writes nothing.
"""User-facing errors.

Every failure a user can cause (bad IR, bad hints, bad options, bad output
directories) is raised as :class:`SpyreError`.  The tools print it as one line,
``<location>: error: <message>``, and exit 1; anything else that escapes is an
internal bug and is reported as such.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from typing import Any

from xdsl.ir import BlockArgument, Operation
from xdsl.ir.core import Attribute
from xdsl.dialects.builtin import DictionaryAttr, FileLineColLoc, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import DiagnosticException


class SpyreError(DiagnosticException):
    """A user-facing error, optionally anchored at an op or an explicit location.

    ``op`` gives the location through the op's ``FileLineColLoc``; ``loc`` is an
    explicit location string (a model source line, a file name) for errors that
    have no op.
    """

    def __init__(self, msg: str, *, op: Operation | None = None, loc: str | None = None):
        super().__init__(msg)
        self.msg = msg
        self.op = op
        self.loc = loc

    def location(self) -> str | None:
        """The best location known for this error, or None."""
        if self.loc is not None:
            return self.loc
        if self.op is not None:
            return op_location(self.op)
        return None

    def format(self, default_loc: str) -> str:
        """The diagnostic line, ``<loc>: error: <msg>``."""
        return f"{self.location() or default_loc}: error: {self.msg}"


def loc_str(loc: Attribute) -> str | None:
    """``file:line:col`` for a ``FileLineColLoc``, None for any other location."""
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def op_location(op: Operation) -> str | None:
    """The location of ``op``, or of its closest located ancestor."""
    current: Operation | None = op
    while current is not None:
        found = loc_str(current.location)
        if found is not None:
            return found
        current = current.parent_op()
    return None


def describe_argument(arg: BlockArgument) -> str:
    """A function argument as diagnostics name it: ``function argument 'k' (#1)`` by its
    ``spyre.name`` (the model's input name), ``function argument #1`` without one."""
    func_op = arg.block.parent_op()
    attrs = func_op.arg_attrs.data if isinstance(func_op, FuncOp) and func_op.arg_attrs is not None else ()
    entry = attrs[arg.index] if arg.index < len(attrs) else None
    name = entry.data.get("spyre.name") if isinstance(entry, DictionaryAttr) else None
    return f"function argument '{name.data}' (#{arg.index})" if isinstance(name, StringAttr) \
        else f"function argument #{arg.index}"


def model_code_error(e: Exception, path: str, what: str = "the model") -> SpyreError:
    """``e``, raised by ``what`` while running the user's model file ``path``, as one located error.

    A :class:`SpyreError` is returned as it is; a ``SyntaxError`` in ``path`` is
    located at its line; anything else at the innermost traceback frame in
    ``path`` (``path`` itself when there is none), with the exception's type and
    the first line of its message.
    """
    if isinstance(e, SpyreError):
        return e
    if isinstance(e, SyntaxError) and e.filename and _same_file(e.filename, path):
        return SpyreError(f"invalid Python: {e.msg}", loc=f"{e.filename}:{e.lineno}")
    frames = [f for f in traceback.extract_tb(e.__traceback__) if _same_file(f.filename, path)]
    loc = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else path
    return SpyreError(f"{what} raised {type(e).__name__}: {first_line(str(e))}".rstrip(": "), loc=loc)


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped (a one-line diagnostic from a longer message)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _same_file(a: str, b: str) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


class SpyreWarning(UserWarning):
    """A located warning: the compile goes on.  Its text is ``<loc>: warning: <msg>``."""


def emit_warning(msg: str, *, op: Operation | None = None, loc: str | None = None) -> None:
    """Warn at ``op`` (or ``loc``); the tools print it as one line on stderr."""
    where = loc or (op_location(op) if op is not None else None) or "<unknown>"
    warnings.warn(SpyreWarning(f"{where}: warning: {msg}"), stacklevel=2)


def print_spyre_warnings() -> None:
    """Make :class:`SpyreWarning` print as its bare one-line text on stderr (for the tools)."""
    default = warnings.showwarning

    def show(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, SpyreWarning):
            print(str(message), file=sys.stderr)
        else:
            default(message, category, *args, **kwargs)

    warnings.showwarning = show
    warnings.simplefilter("always", SpyreWarning)
