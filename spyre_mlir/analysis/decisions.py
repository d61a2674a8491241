# Work division's decisions shared by every work division of one compile: the clones of the
# module that spyre-auto-tile and spyre-pad-dims price, and the module spyre-work-division then
# divides.  The decisions by their inputs and the numbers of the op kinds those inputs name, per
# target.  Written and read by spyre-work-division's DivisionPlan; entered by the pipeline (and by
# a pass that prices clones when run on its own).  No IR.
"""Decisions of work division shared within one compile."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from spyre_mlir.hardware import SpyreConfig


class TakenDecisions:
    """Work division's decisions by their inputs (``DivisionPlan.alike``), the numbers of the op
    kinds those inputs name (``DivisionPlan.kind``), and the prices and LX shares those decisions
    read, by the kinds of the ops they are of, on one target."""

    def __init__(self, config: SpyreConfig):
        self.config = config
        self.kinds: dict[tuple[object, ...], int] = {}
        self.decisions: dict[tuple[object, ...], object] = {}
        self.prices: dict[tuple[object, ...], float] = {}
        """An op's predicted ns by its kind, split and the memories of its tensors."""
        self.shares: dict[tuple[object, ...], int | None] = {}
        """A value's LX share by the kinds of its writer and readers and their splits."""


_SHARED: contextvars.ContextVar[dict[SpyreConfig, TakenDecisions] | None] = contextvars.ContextVar(
    "spyre_taken_decisions", default=None)


@contextmanager
def shared_decisions() -> Iterator[None]:
    """While the context lasts, every work division takes the decisions the others on its target
    made from equal inputs: the clones a pass prices (spyre-auto-tile, spyre-pad-dims) are divided
    again only around what a clone changed, and the module itself, divided after them, as the
    clone that won.  Within an open context, a new one shares the open one's decisions."""
    if _SHARED.get() is not None:
        yield
        return
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def taken_decisions(config: SpyreConfig) -> TakenDecisions:
    """The decisions on ``config``'s target shared by the open :func:`shared_decisions`, or new
    ones of a division's own when none is open."""
    shared = _SHARED.get()
    if shared is None:
        return TakenDecisions(config)
    if config not in shared:
        shared[config] = TakenDecisions(config)
    return shared[config]
