# The shared error handling of the command-line tools: every failure becomes
# one line on stderr and exit code 1.  Reads the exception; writes stderr.
"""Common ``main`` wrapper for ``spyre-opt``, ``spyre-import``, ``spyre-compile`` and ``spyre-run``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from xdsl.utils.exceptions import DiagnosticException

from spyre_mlir.diagnostics import SpyreError, print_spyre_warnings


def run_tool(tool: str, body: Callable[[], int], default_loc: str, *, debug: bool = False,
             user_errors: tuple[type[BaseException], ...] = (DiagnosticException, OSError)) -> int:
    """Run ``body`` and turn any failure into one diagnostic line and exit code 1.

    A :class:`SpyreError` prints as ``<loc>: error: <msg>`` (``default_loc`` when
    it carries no location); ``user_errors`` print as ``<tool>: error: <msg>``;
    anything else is an internal error.  ``debug`` or ``SPYRE_TRACEBACK=1``
    re-raises instead, to show the traceback.
    """
    print_spyre_warnings()
    debug = debug or bool(os.environ.get("SPYRE_TRACEBACK"))
    try:
        return body()
    except SpyreError as e:
        if debug:
            raise
        print(e.format(default_loc), file=sys.stderr)
    except user_errors as e:
        if debug:
            raise
        print(f"{tool}: error: {e}", file=sys.stderr)
    except Exception as e:
        if debug:
            raise
        print(f"{tool}: internal error: {type(e).__name__}: {e} "
              "(set SPYRE_TRACEBACK=1 or pass --debug for the traceback)", file=sys.stderr)
    return 1
