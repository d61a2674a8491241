"""spyre-run: npz round trip, stats, --check against eager, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from spyre_mlir.interpreter import run
from spyre_mlir.tools.spyre_run import main
from test_interpreter_support import SEED_SHAPE, needs_reference, reference_bundle_dir

pytestmark = needs_reference

MODEL = """
import torch

def build():
    torch.manual_seed(3)
    inputs = tuple(torch.randn(1024, 4096, dtype=torch.float16) for _ in range(3))
    return (lambda a, b, c: (a + b) * c{extra}), inputs
"""


@pytest.fixture
def out(tmp_path):
    return reference_bundle_dir(tmp_path)


def _cli(*args):
    """Run spyre-run in a subprocess (exit code, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "spyre_mlir.tools.spyre_run", *map(str, args)],
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_npz_round_trip(out, tmp_path):
    rng = np.random.default_rng(0)
    inputs = {n: rng.standard_normal(SEED_SHAPE).astype(np.float16) for n in "abc"}
    np.savez(tmp_path / "in.npz", **inputs)
    assert main([str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz")]) == 0
    with np.load(tmp_path / "o.npz") as saved:
        assert saved.files == ["z"]
        np.testing.assert_array_equal(saved["z"], run(out, inputs)[0]["z"])


def test_stats_table_and_json(out, tmp_path, capsys):
    assert main([str(out), "--seed", "4", "--stats", "--stats-json", str(tmp_path / "s.json")]) == 0
    table = capsys.readouterr().out
    assert "HBM read" in table and "sdsc_1.json" in table and "total" in table
    stats = json.loads((tmp_path / "s.json").read_text())
    assert {"hbm_bytes_read", "hbm_bytes_written", "lx_peak_bytes", "sdsc_executions"} <= stats.keys()
    assert "max_abs_err" not in stats
    assert stats["sdsc_executions"] == 16 and stats["hbm_bytes_written"] == 8 << 20


def test_check_against_eager_passes_and_reports_errors(out, tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text(MODEL.format(extra=""))
    assert main([str(out), "--check", f"{model}:build", "--stats-json", str(tmp_path / "s.json")]) == 0
    assert "1 output(s) match PyTorch eager" in capsys.readouterr().out
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["max_abs_err"] == 0.0 and stats["max_rel_err"] == 0.0  # bit-exact with eager fp16


def test_check_mismatch_names_output_index_and_values(out, tmp_path):
    model = tmp_path / "model.py"
    model.write_text(MODEL.format(extra=" + 0.5 * (a > 3)"))
    code, _, err = _cli(out, "--check", f"{model}:build")
    assert code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "error: output 'z' differs from PyTorch eager at index (" in err
    assert "interpreter" in err and "eager" in err


@pytest.mark.parametrize("corrupt, message", [
    (lambda d: d.rename(d.parent / "gone"), "error: no such output directory"),
    (lambda d: (d / "manifest.json").write_text('{"format": "spyre-mlir-manifest", "vers'),
     "manifest.json: error: malformed JSON"),
    (lambda d: (d / "sdsc_0.json").write_text((d / "sdsc_0.json").read_text()[:500]),
     "sdsc_0.json: error: malformed JSON"),
    (lambda d: (d / "bundle.mlir").write_text("module {\n  func.func @sdsc_bundle( {\n"),
     "bundle.mlir:2:"),
])
def test_errors_are_one_line_with_exit_1(out, corrupt, message):
    corrupt(out)
    code, stdout, err = _cli(out, "--seed", "1")
    assert code == 1, stdout
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert message in err


def test_help_states_the_tolerance():
    code, stdout, _ = _cli("--help")
    assert code == 0 and "atol + rtol * |eager|" in stdout and "1e-2" in stdout
