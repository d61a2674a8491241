# What torch prints by itself while a program is exported, loaded or
# decomposed: the FutureWarning its pytree internals raise about LeafSpec, and
# the log records (a traceback) its fake-tensor dispatcher writes before an
# exception propagates.  Reads and restores the warning filters and the
# handlers of torch's loggers; writes the held log records back to those
# handlers on success, or onto the exception on failure.
"""Keeping torch's own output out of our one-line diagnostics."""

from __future__ import annotations

import logging
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
    """Run the block without torch's LeafSpec FutureWarning and with torch's log records held back.

    When the block succeeds the held records go to torch's handlers as usual; when it
    raises, they go onto the exception as a note instead, which its traceback shows
    (``--debug``) and the one-line diagnostic does not.  Other warnings, the user's
    included, are untouched.
    """
    hold = _Hold()
    loggers = [logger for name, logger in logging.root.manager.loggerDict.items()
               if (name == "torch" or name.startswith("torch.")) and isinstance(logger, logging.Logger)
               and logger.handlers]
    saved = {logger: logger.handlers for logger in loggers}
    for logger in loggers:
        logger.handlers = [hold]
    failed = False
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=LEAFSPEC_WARNING, category=FutureWarning)
            yield
    except BaseException as e:
        failed = True
        if hold.records:
            formatter = logging.Formatter("%(levelname)s %(name)s: %(message)s")
            e.add_note("torch logged:\n" + "\n".join(formatter.format(r) for r in hold.records))
        raise
    finally:
        for logger, handlers in saved.items():
            logger.handlers = handlers
        if not failed:
            for record in hold.records:
                logging.getLogger(record.name).handle(record)
