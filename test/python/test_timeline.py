"""spyre-run --timeline: per-execution records of the interpreter and the picture drawn from them.

The seed example (``y = a + b; z = y * c`` on [1024, 4096] fp16) is compiled on
32 cores with its hints (2 x 4 tiles, 16 executions) and without them (2
executions); the SVG is parsed and checked against the run's statistics.
"""

from __future__ import annotations

import importlib.util
import io
import json
from xml.etree import ElementTree

import pytest

from e2e_support import EXAMPLES, ImportedPrograms, Program
from spyre_mlir.interpreter import run
from spyre_mlir.interpreter.timeline import core_label
from spyre_mlir.pipeline import CompileOptions, compile_module
from spyre_mlir.tools.spyre_run import main

SVG = "{http://www.w3.org/2000/svg}"
Y = "Tensor2 of add (sdsc_0.json)"
"""The LX value ``y = a + b``: the output of the first SDSC file."""
MINIMUM_HBM = (3 * (8 << 20), 8 << 20)
"""HBM bytes read and written when a, b and c are read once and z written once (y stays in LX)."""
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def _untiled_seed() -> Program:
    """The seed example's computation and inputs without its tiling hints."""
    _, inputs = EXAMPLES["add_mul_nested"]()
    return (lambda a, b, c: (a + b) * c), inputs


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The output directories of the tiled and the untiled seed example on 32 cores."""
    imported = ImportedPrograms({"tiled": EXAMPLES["add_mul_nested"], "untiled": _untiled_seed})
    dirs = {}
    for name in ("tiled", "untiled"):
        dirs[name] = tmp_path_factory.mktemp(name) / "out"
        compile_module(imported(name)[1].clone(), dirs[name], CompileOptions(cores=32), log=io.StringIO())
    return dirs


def _timeline(directory, tmp_path):
    """Run spyre-run with --timeline; the parsed SVG root and the stats JSON."""
    svg, stats = tmp_path / "timeline.svg", tmp_path / "stats.json"
    assert main([str(directory), "--timeline", str(svg), "--stats-json", str(stats)]) == 0
    return ElementTree.parse(svg).getroot(), json.loads(stats.read_text())


def _rects(root, cls):
    return [r for r in root.iter(f"{SVG}rect") if r.get("class") == cls]


def _y_ranges(root):
    """(first, last, offset, size) of every live range of ``y`` drawn in the picture."""
    return sorted((int(r.get("data-first")), int(r.get("data-last")), int(r.get("data-offset")),
                   int(r.get("data-size"))) for r in _rects(root, "lx") if r.get("data-value") == Y)


def _check_hbm_bars(root, stats):
    """The bars add up to the run's HBM totals and their heights are proportional to their bytes."""
    for cls, total in (("hbm-read", "hbm_bytes_read"), ("hbm-written", "hbm_bytes_written")):
        bars = _rects(root, cls)
        assert sum(int(b.get("data-bytes")) for b in bars) == stats[total] > 0
    bars = _rects(root, "hbm-read") + _rects(root, "hbm-written")
    per_pixel = {round(int(b.get("data-bytes")) / float(b.get("height")), -3) for b in bars}
    assert len(per_pixel) == 1


def test_tiled_timeline_keeps_y_at_lx_offset_0_in_every_execution(compiled, tmp_path):
    root, stats = _timeline(compiled["tiled"], tmp_path)
    columns = _rects(root, "column")
    assert [int(c.get("data-index")) for c in columns] == list(range(stats["sdsc_executions"]))
    assert len(columns) == len(stats["executions"]) == 16
    assert [c.get("data-op") for c in columns] == ["add", "mul"] * 8
    assert [c.get("data-iteration") for c in columns[:3]] == ["(0, 0)", "(0, 0)", "(0, 1)"]
    assert columns[-1].get("data-iteration") == "(1, 3)"

    (lane,) = _rects(root, "lane")  # all 32 cores hold the same bytes: one folded lane
    assert lane.get("data-cores") == ",".join(map(str, range(32)))
    assert any(t.text == "cores 0-31" for t in root.iter(f"{SVG}text"))

    ranges = _y_ranges(root)  # written by each add, last read by the mul after it: one 32 KiB tile per core
    assert ranges == [(i, i + 1, 0, 512 * 1024 * 2 // 32) for i in range(0, 16, 2)]
    lane_bottom = float(lane.get("y")) + float(lane.get("height"))
    for r in (r for r in _rects(root, "lx") if r.get("data-value") == Y):
        assert float(r.get("y")) + float(r.get("height")) == pytest.approx(lane_bottom)
    assert len([line for line in root.iter(f"{SVG}line") if line.get("class") == "usable-lx"]) == 1
    assert (stats["hbm_bytes_read"], stats["hbm_bytes_written"]) == MINIMUM_HBM
    _check_hbm_bars(root, stats)

    mul = stats["executions"][3]  # the mul of iteration (0, 1) reads the y the add before it wrote
    assert mul["op"] == "mul" and mul["iteration"] == [0, 1]
    assert {tuple(block[1:]) for block in mul["lx"]} == {(0, 32768, Y, 2)} and len(mul["lx"]) == 32


def test_untiled_timeline_shows_what_tiling_saves(compiled, tmp_path):
    root, stats = _timeline(compiled["untiled"], tmp_path)
    columns = _rects(root, "column")
    assert [(c.get("data-op"), c.get("data-iteration")) for c in columns] == [("add", ""), ("mul", "")]
    assert _y_ranges(root) == [(0, 1, 0, 8 * 32768)]  # 8x the LX of one tile, for the same HBM traffic
    assert (stats["hbm_bytes_read"], stats["hbm_bytes_written"]) == MINIMUM_HBM
    _check_hbm_bars(root, stats)


def _seed_inputs():
    _, inputs = EXAMPLES["add_mul_nested"]()
    return {name: t.numpy() for name, t in zip("abc", inputs)}


def test_events_are_recorded_only_when_asked(compiled):
    _, stats = run(compiled["untiled"], _seed_inputs())
    assert stats.events == [] and "executions" not in stats.as_dict()


@pytest.mark.parametrize("name, message", [
    ("timeline.pdf", "timeline.pdf: error: the timeline is written as .svg or .png, not 'timeline.pdf'"),
    ("timeline", "error: the timeline is written as .svg or .png"),
    *([] if HAS_MATPLOTLIB else [("timeline.png", "spyre-run: error: a .png timeline needs matplotlib: "
                                                  "pip install 'spyre-mlir[timeline]'")]),
])
def test_bad_timeline_file_is_one_error_before_running(compiled, tmp_path, capsys, name, message):
    stats = tmp_path / "stats.json"
    assert main([str(compiled["untiled"]), "--timeline", str(tmp_path / name), "--stats-json", str(stats)]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / name).exists() and not stats.exists()


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="matplotlib is not installed")
def test_png_timeline_with_matplotlib(compiled, tmp_path):
    assert main([str(compiled["untiled"]), "--timeline", str(tmp_path / "t.png")]) == 0
    assert (tmp_path / "t.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize("cores, label", [([3], "core 3"), (list(range(32)), "cores 0-31"),
                                          ([0, 1, 2, 3, 8, 10, 11], "cores 0-3, 8, 10-11")])
def test_core_label_folds_runs(cores, label):
    assert core_label(cores) == label
