# Phase timing (--time-passes): the wall time of every phase of a command (torch's import,
# the model's build, export, decomposition, import, each stage, writing), a nested phase's time
# counted apart from the phase around it, and counts a phase tallies (work division's
# decisions taken from an op priced alike).  Phases record themselves through `phase` and
# `tally` while a `Timings` is active (`timed`), and announce what they do to a progress
# listener while one is active (`announced`); with neither active both cost nothing.  Read by
# spyre-compile and spyre-opt, which print the report, and spyre-compile's progress lines, on
# stderr.  No IR.
"""Where the time of a command goes.

::

    with timed() as timings:
        with phase("export"):
            ...
        with phase("import"):
            with phase("decompose"):    # counted apart: "import" is what is left
                ...
    timings.write(sys.stderr, "spyre-compile")

The report has one line per phase in the order the phases started, ``other`` for the time
no phase took, and ``total``: the wall time since the :class:`Timings` was made, which the
lines add up to.

A phase that ``says`` what it does (``phase("export", says="exporting ...")``) tells the
listener of :func:`announced` as it starts: spyre-compile's progress lines.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TextIO


@dataclass
class _Phase:
    seconds: float = 0.0
    """Its own time: nested phases excluded."""
    counts: dict[str, int] = field(default_factory=dict)


class Timings:
    """The phases of one command in the order they first started, with their own seconds and
    counts; a phase entered twice adds up."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.phases: dict[str, _Phase] = {}
        self._open: list[tuple[str, float]] = []  # (name, start); nested time is taken off the parent

    def begin(self, name: str) -> None:
        """Phase ``name`` starts (inside the phase open now, if any)."""
        self.phases.setdefault(name, _Phase())
        self._open.append((name, time.perf_counter()))

    def end(self) -> None:
        """The innermost open phase ends; its time is taken off the phase around it."""
        name, start = self._open.pop()
        seconds = time.perf_counter() - start
        self.phases[name].seconds += seconds
        if self._open:
            self.phases[self._open[-1][0]].seconds -= seconds

    def tally(self, what: str, n: int) -> None:
        """Add ``n`` to the count ``what`` of the innermost open phase (none open: nothing)."""
        if self._open:
            counts = self.phases[self._open[-1][0]].counts
            counts[what] = counts.get(what, 0) + n

    def rows(self) -> list[tuple[str, float]]:
        """``(label, seconds)`` per phase (its counts in parentheses), then ``other`` and ``total``."""
        total = time.perf_counter() - self.started
        rows = [(name + (" (" + ", ".join(f"{what} {n}" for what, n in p.counts.items()) + ")" if p.counts else ""),
                 p.seconds) for name, p in self.phases.items()]
        return [*rows, ("other", total - sum(p.seconds for p in self.phases.values())), ("total", total)]

    def write(self, log: TextIO, title: str) -> None:
        """The report under a ``title`` banner (:func:`write_rows`)."""
        write_rows(log, f"{title} timing", self.rows())


def write_rows(log: TextIO, banner: str, rows: Sequence[tuple[str, float]]) -> None:
    """``rows`` of ``(label, seconds)``, one line each, under mlir-opt's ``===-- banner --===``."""
    log.write(f"===-- {banner} --===\n")
    for label, seconds in rows:
        log.write(f"  {seconds:9.4f} s  {label}\n")


_ACTIVE: contextvars.ContextVar[Timings | None] = contextvars.ContextVar("spyre_timings", default=None)
_LISTENER: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar("spyre_progress",
                                                                                         default=None)


@contextmanager
def timed() -> Iterator[Timings]:
    """A :class:`Timings` that :func:`phase` and :func:`tally` record into while the context lasts."""
    timings = Timings()
    token = _ACTIVE.set(timings)
    try:
        yield timings
    finally:
        _ACTIVE.reset(token)


@contextmanager
def announced(listener: Callable[[str], None]) -> Iterator[None]:
    """Call ``listener`` with what each phase that says it does (:func:`phase`) does, as it starts,
    while the context lasts."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


@contextmanager
def phase(name: str, says: str | None = None) -> Iterator[None]:
    """Time the body as phase ``name`` of the active :class:`Timings`, if any; first tell the
    listener of :func:`announced`, if any, what the phase ``says`` it does."""
    listener = _LISTENER.get()
    if listener is not None and says is not None:
        listener(says)
    timings = _ACTIVE.get()
    if timings is None:
        yield
        return
    timings.begin(name)
    try:
        yield
    finally:
        timings.end()


def tally(what: str, n: int) -> None:
    """:meth:`Timings.tally` on the active :class:`Timings`, if any."""
    timings = _ACTIVE.get()
    if timings is not None:
        timings.tally(what, n)
