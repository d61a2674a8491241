# Work division's decisions shared among the clones of one module that a pass prices
# (spyre-auto-tile, spyre-pad-dims): the decisions by their inputs and the numbers of the op
# kinds those inputs name.  Written and read by spyre-work-division's DivisionPlan; entered by
# the passes that price clones.  No IR.
"""Decisions of work division shared while a pass prices clones of one module."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from spyre_mlir.hardware import SpyreConfig


class TakenDecisions:
    """Work division's decisions by their inputs (``DivisionPlan.alike``), and the numbers of the
    op kinds those inputs name (``DivisionPlan.kind``), on one target."""

    def __init__(self, config: SpyreConfig):
        self.config = config
        self.kinds: dict[tuple[object, ...], int] = {}
        self.decisions: dict[tuple[object, ...], object] = {}


_SHARED: contextvars.ContextVar[TakenDecisions | None] = contextvars.ContextVar("spyre_taken_decisions",
                                                                               default=None)


@contextmanager
def shared_decisions(config: SpyreConfig) -> Iterator[None]:
    """While the context lasts, every work division on ``config``'s target takes the decisions the
    others made from equal inputs: a pass that prices clones of one module (spyre-auto-tile,
    spyre-pad-dims) prices again only the ops whose neighbourhood a clone changed."""
    token = _SHARED.set(TakenDecisions(config))
    try:
        yield
    finally:
        _SHARED.reset(token)


def active_decisions() -> TakenDecisions | None:
    """The decisions shared by the innermost :func:`shared_decisions`, if any."""
    return _SHARED.get()
