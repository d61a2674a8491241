# Garbage-collector tuning for the compile driver: importing, the pipeline
# stages and the writer allocate hundreds of thousands of long-lived IR
# objects, and CPython's default collector rescans them, and every object the
# process held before (torch, the exported program), over and over.  Reads and
# writes the process's gc thresholds and its frozen generation only.
"""Collecting cyclic garbage less often, and over fewer objects, while compiling.

With the default thresholds ``(700, 10, 10)`` the collector runs after every 700
net allocations and walks the whole heap each time it grew by a quarter, a share
of the time that grows with the program: on 24 stacked transformer blocks
(``bench/compile_time.py``) the thresholds below cut the time of the pipeline
and the writer by a fifth or more.  The objects that exist when a compile phase
starts (torch's modules and the exported program when the compile follows
``torch.export`` in one process, the module the earlier phases built) are
frozen out of the collector's scans (:func:`gc.freeze`) for the phase: a full
collection then walks only what the phase allocated.  On a 40-layer
Granite-3B-shaped model that is about a second of eleven.  Cyclic garbage is
still collected, only less often (a cycle through a frozen object once the
phase ends); peak memory grew by 2-3%.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

COMPILE_THRESHOLDS = (50_000, 20, 20)
"""``gc.set_threshold`` arguments while compiling."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """For the block (or, as ``@fewer_collections()``, the decorated function): raise the
    collector's thresholds to :data:`COMPILE_THRESHOLDS` and freeze the objects that exist, then
    restore both.  Inside another such block, or when the process froze objects itself (a server
    that forks workers), nothing is frozen or unfrozen."""
    previous = gc.get_threshold()
    freezes = gc.get_freeze_count() == 0
    if freezes:
        gc.freeze()
    gc.set_threshold(*COMPILE_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        if freezes:
            gc.unfreeze()
