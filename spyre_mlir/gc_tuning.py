# Garbage-collector tuning for the compile driver: importing, the pipeline
# stages and the writer allocate hundreds of thousands of long-lived IR
# objects, and CPython's default thresholds rescan them over and over.  Reads
# and writes the process's gc thresholds only.
"""Collecting cyclic garbage less often while compiling.

With the default thresholds ``(700, 10, 10)`` the collector runs after every 700
net allocations and walks the whole heap each time it grew by a quarter, a share
of the time that grows with the program: on 24 stacked transformer blocks
(``bench/compile_time.py``) the thresholds below cut the time of the pipeline
and the writer by a fifth or more.  Cyclic garbage is still collected, only
less often; peak memory grew by 2-3%.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

COMPILE_THRESHOLDS = (50_000, 20, 20)
"""``gc.set_threshold`` arguments while compiling."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the collector's thresholds to :data:`COMPILE_THRESHOLDS` for the block (or, as
    ``@fewer_collections()``, the decorated function), then restore them."""
    previous = gc.get_threshold()
    gc.set_threshold(*COMPILE_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*previous)
