"""The compile driver's collector tuning (spyre_mlir.gc_tuning): thresholds and the frozen
generation while compiling, restored after, and cyclic garbage still collected."""

from __future__ import annotations

import gc
import weakref

import pytest

from spyre_mlir.gc_tuning import COMPILE_THRESHOLDS, fewer_collections


class Node:
    """An object that can sit in a reference cycle and be watched through a weak reference."""

    def __init__(self) -> None:
        self.other: Node | None = None


def test_a_compile_phase_freezes_what_exists_and_restores_the_collector():
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with fewer_collections():
        assert gc.get_threshold() == COMPILE_THRESHOLDS
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_collector_is_restored_when_the_phase_fails():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("a failing stage")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_nested_phase_leaves_the_outer_freeze_in_place():
    with fewer_collections():
        frozen = gc.get_freeze_count()
        with fewer_collections():
            pass
        assert gc.get_freeze_count() == frozen
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_keeps_them_frozen():
    # An object the process froze stays out of the collector's generations.  (The freeze count is
    # no witness: a frozen object that loses its last reference leaves it, which once made this
    # test fail in CI.)
    sentinel: list[object] = []
    gc.freeze()
    try:
        with fewer_collections():
            pass
        assert not any(o is sentinel for o in gc.get_objects())
    finally:
        gc.unfreeze()
    assert any(o is sentinel for o in gc.get_objects())


def test_a_cycle_made_while_compiling_is_still_collected():
    with fewer_collections():
        a, b = Node(), Node()
        a.other, b.other = b, a
        watched = weakref.ref(a)
        del a, b
        gc.collect()
        assert watched() is None
