"""spyre_mlir.timing: phases in start order, a nested phase counted apart, counts on the
innermost phase, nothing recorded without an active Timings, and what phases say told to the
listener of `announced` only."""

from __future__ import annotations

import io
import time

import pytest

from spyre_mlir.timing import Timings, announced, phase, tally, timed


def _wait(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_nested_phase_is_counted_apart_and_the_rows_add_up_to_the_total():
    with timed() as timings:
        with phase("import"):
            _wait(0.02)
            with phase("decompose"):
                _wait(0.05)
                tally("calls", 2)
            tally("ops", 7)
        with phase("decompose"):
            _wait(0.01)
            tally("calls", 1)
        _wait(0.01)
    rows = timings.rows()
    labels = [label for label, _ in rows]
    assert labels == ["import (ops 7)", "decompose (calls 3)", "other", "total"]
    seconds = dict(rows)
    assert seconds["import (ops 7)"] == pytest.approx(0.02, abs=0.015)
    assert seconds["decompose (calls 3)"] == pytest.approx(0.06, abs=0.015)
    assert sum(s for label, s in rows if label != "total") == pytest.approx(seconds["total"], abs=1e-6)


def test_the_report_reads_like_mlir_opts():
    timings = Timings()
    timings.begin("export")
    timings.end()
    out = io.StringIO()
    timings.write(out, "spyre-compile")
    lines = out.getvalue().splitlines()
    assert lines[0] == "===-- spyre-compile timing --==="
    assert [line.split(" s  ")[1] for line in lines[1:]] == ["export", "other", "total"]


def test_nothing_is_recorded_without_an_active_timings():
    with phase("export"):
        tally("calls", 1)
    with timed() as timings:
        pass
    assert timings.phases == {}


def test_a_phase_that_says_what_it_does_tells_the_listener_as_it_starts():
    heard: list[str] = []
    with phase("export", says="exporting"):
        pass  # no listener: nothing to tell
    with announced(heard.append):
        with phase("import", says="importing"):
            assert heard == ["importing"]
            with phase("decompose"):  # says nothing
                pass
        with phase("write", says="writing out"):
            pass
    with phase("export", says="exporting"):
        pass
    assert heard == ["importing", "writing out"]
