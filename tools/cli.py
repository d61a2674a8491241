# The shared behaviour of the command-line tools: every failure becomes one
# line on stderr and exit code 1 (Ctrl-C: one line and 130), output files are
# checked before any work, a long run shows its stages on a terminal, and
# `--version` and plain-text `--help`.  Reads the exception, the file system
# and the installed package metadata; writes stdout (versions) and stderr.
"""Common ``main`` wrapper and arguments of ``spyre-opt``, ``spyre-import``, ``spyre-compile`` and ``spyre-run``."""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from xdsl.utils.exceptions import DiagnosticException

from spyre_mlir.diagnostics import SpyreError, first_line, print_spyre_warnings
from spyre_mlir.optional import MissingDependency


INTERRUPTED = 130
"""The exit code of a tool stopped by Ctrl-C (SIGINT), as shells report one (128 + 2)."""


def run_tool(tool: str, body: Callable[[], int], default_loc: str, *, debug: bool = False,
             user_errors: tuple[type[BaseException], ...] = (DiagnosticException, OSError)) -> int:
    """Run ``body`` and turn any failure into one diagnostic line and exit code 1.

    A :class:`SpyreError` prints as ``<loc>: error: <msg>`` (``default_loc`` when
    it carries no location); ``user_errors`` and a :class:`MissingDependency`
    print as ``<tool>: error: <msg>`` (an ``OSError`` about a file as
    ``<file>: error: <reason>``); anything else is an internal error.  Ctrl-C
    prints ``<tool>: interrupted`` and returns :data:`INTERRUPTED`.  ``debug``
    or ``SPYRE_TRACEBACK=1`` re-raises instead, to show the traceback.
    """
    print_spyre_warnings()
    debug = debug or bool(os.environ.get("SPYRE_TRACEBACK"))
    try:
        return body()
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"{tool}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except SpyreError as e:
        if debug:
            raise
        print(e.format(default_loc), file=sys.stderr)
    except (MissingDependency, *user_errors) as e:
        if debug:
            raise
        print(_user_error_line(tool, e), file=sys.stderr)
    except Exception as e:
        if debug:
            raise
        print(f"{tool}: internal error: {type(e).__name__}: {first_line(str(e))} "
              "(set SPYRE_TRACEBACK=1 or pass --debug for the traceback)", file=sys.stderr)
    return 1


def _user_error_line(tool: str, e: BaseException) -> str:
    """The diagnostic line of a user error that is not a :class:`SpyreError`."""
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: error: {e.strerror}"
    return f"{tool}: error: {e}"


@contextmanager
def argument_errors(tool: str, option: str) -> Iterator[None]:
    """A :class:`SpyreError` raised in the block, a library's check of an option's value, as the
    error of ``option`` in argparse's words: ``<tool>: error: argument <option>: <reason>``."""
    try:
        yield
    except SpyreError as e:
        raise SpyreError(f"argument {option}: {e.msg}", loc=tool) from None


PROGRESS_AFTER = 3.0
"""Seconds a run goes on before :class:`Progress` shows its stages."""


class Progress:
    """One line per stage of a long run on ``stream`` (stderr), ``<tool>: <stage>``.

    Only when ``stream`` is a terminal, and only once the run has gone on for
    ``after`` seconds (:data:`PROGRESS_AFTER`): from then on the stage running
    and every later one.  A short run, a pipe or a log file sees nothing.  Use
    it as a context manager; :meth:`stage` names each stage as it starts.
    """

    def __init__(self, tool: str, stream: TextIO, after: float | None = None):
        self.tool = tool
        self.stream = stream
        self.enabled = stream.isatty()
        self._lock = threading.Lock()
        self._current: str | None = None
        self._showing = False
        after = PROGRESS_AFTER if after is None else after
        self._timer = threading.Timer(after, self._show)
        self._timer.daemon = True
        if self.enabled and after <= 0:
            self._showing = True
        elif self.enabled:
            self._timer.start()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def stage(self, what: str) -> None:
        """``what`` starts now."""
        with self._lock:
            self._current = what
            if self._showing:
                self._write(what)

    def _show(self) -> None:
        with self._lock:
            self._showing = True
            if self._current is not None:
                self._write(self._current)

    def _write(self, what: str) -> None:
        print(f"{self.tool}: {what}", file=self.stream, flush=True)


STDIO = "-"
"""The file name that stands for standard input or output, as for mlir-opt."""


def output_file(path: str | None) -> str | None:
    """The file ``-o path`` names, None for standard output (no ``-o``, or ``-o -``)."""
    return None if path == STDIO else path


def check_output_files(*paths: str | None) -> None:
    """Fail before any work when an output file cannot be created (``None`` entries are skipped).

    The file's directory must exist and be writable, and the path must not be a
    directory; a tool then writes each output once, at the end.
    """
    for path in paths:
        if path is None:
            continue
        parent = os.path.dirname(path) or "."
        if os.path.isdir(path):
            raise SpyreError("cannot write the file: it is a directory", loc=path)
        if not os.path.isdir(parent):
            raise SpyreError(f"cannot write the file: directory '{parent}' does not exist", loc=path)
        if not os.access(parent, os.W_OK):
            raise SpyreError(f"cannot write the file: directory '{parent}' is not writable", loc=path)


def version_text() -> str:
    """What ``--version`` prints: spyre-mlir's version, xDSL's, and torch's when it is loaded.

    Never imports torch (``spyre-opt`` must not): a tool that has not loaded it
    does not report it.
    """
    from importlib.metadata import version

    import spyre_mlir

    lines = [f"spyre-mlir {spyre_mlir.__version__}", f"  xDSL {version('xdsl')}"]
    torch = sys.modules.get("torch")
    if torch is not None:
        lines.append(f"  torch {torch.__version__}")
    return "\n".join(lines)


class _VersionAction(argparse.Action):
    """``--version``: print :func:`version_text` and exit (the versions are looked up only then)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


def add_version_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--version`` (:func:`version_text`) to ``parser``."""
    parser.add_argument("--version", action=_VersionAction,
                        help="print the version of spyre-mlir and xDSL (and torch, when loaded) and exit")


_ROLE = re.compile(r":[a-z]+:`~?([^`<]+?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
_LITERAL_BLOCK = re.compile(r"(?:^[ \t]*::[ \t]*\n|(?<=:):(?=[ \t]*$))", re.MULTILINE)


def plain_text(doc: str) -> str:
    """A module docstring as ``--help`` shows it: reStructuredText roles (``:func:`f```),
    double backquotes and ``::`` literal-block markers removed, the layout kept."""
    text = _LITERAL.sub(r"\1", _ROLE.sub(r"\1", doc.strip("\n")))
    return re.sub(r"\n{3,}", "\n\n", _LITERAL_BLOCK.sub("", text))
