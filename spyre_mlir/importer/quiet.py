# What torch prints by itself while a program is exported, loaded or
# decomposed: the FutureWarning its pytree internals raise about LeafSpec, the
# log records (a traceback) its fake-tensor dispatcher writes before an
# exception propagates, and the partial graph torch.export prints on stderr
# when it fails.  Reads and restores the warning filters, the handlers of
# torch's loggers and sys.stderr; writes what it held back to them on success,
# or onto the exception on failure.
"""Keeping torch's own output out of our one-line diagnostics."""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

LEAFSPEC_WARNING = r"`isinstance\(treespec, LeafSpec\)` is deprecated"
"""The message of the FutureWarning torch's own pytree code raises on every export (not the user's)."""


class _Hold(logging.Handler):
    """Keeps every record it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def quiet_torch() -> Iterator[None]:
    """Run the block without torch's LeafSpec FutureWarning, with torch's log records and
    whatever is printed on stderr held back.

    When the block succeeds the held records go to torch's handlers and the held text to
    stderr, as usual; when it raises, they go onto the exception as notes instead, which
    its traceback shows (``--debug``) and the one-line diagnostic does not (torch.export
    prints the partial graph of a failed export on stderr).  Other warnings, the user's
    included, are untouched.
    """
    hold = _Hold()
    loggers = [logger for name, logger in logging.root.manager.loggerDict.items()
               if (name == "torch" or name.startswith("torch.")) and isinstance(logger, logging.Logger)
               and logger.handlers]
    saved = {logger: logger.handlers for logger in loggers}
    for logger in loggers:
        logger.handlers = [hold]
    printed = io.StringIO()
    failed = False
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(printed):
            warnings.filterwarnings("ignore", message=LEAFSPEC_WARNING, category=FutureWarning)
            yield
    except BaseException as e:
        failed = True
        if hold.records:
            formatter = logging.Formatter("%(levelname)s %(name)s: %(message)s")
            e.add_note("torch logged:\n" + "\n".join(formatter.format(r) for r in hold.records))
        if printed.getvalue().strip():
            e.add_note("printed on stderr:\n" + printed.getvalue().strip("\n"))
        raise
    finally:
        for logger, handlers in saved.items():
            logger.handlers = handlers
        if not failed:
            for record in hold.records:
                logging.getLogger(record.name).handle(record)
            sys.stderr.write(printed.getvalue())
