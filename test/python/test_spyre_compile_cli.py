"""spyre-compile as a command: what it checks before any work, and what it says."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from test_compile import ADD

BIN = Path(sys.executable).parent

# A model file that leaves a mark when it runs: a check made "before any work" must not see it.
MARKING_MODEL = """\
import pathlib
pathlib.Path("model-ran").touch()


def build():
    import torch
    return (lambda x: x + x), (torch.ones(64, 128, dtype=torch.float16),)


def build_other():
    return build()


def layer(x):
    return x
"""

# Runs spyre-compile's main in a process of its own, then says whether torch was imported.
IN_PROCESS = textwrap.dedent("""\
    import sys
    from spyre_mlir.tools.spyre_compile import main
    code = main(sys.argv[1:])
    print(code, "torch" in sys.modules)
""")


def compile_in_process(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, bool, list[str]]:
    """Exit code of ``spyre-compile args`` run in ``cwd``, whether it imported torch, its stderr lines."""
    environment = {k: v for k, v in os.environ.items() if k not in ("SPYRE_TRACEBACK", "SENCORES")} | (env or {})
    done = subprocess.run([sys.executable, "-c", IN_PROCESS, *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=120)
    code, imported_torch = done.stdout.splitlines()[-1].split()
    return int(code), imported_torch == "True", done.stderr.splitlines()


CHECKED_FIRST = {
    "output-not-empty": ((("model.py:build", "-o", "keep"), {}),
                         "keep: error: output directory is not empty (use --force to replace it)"),
    "output-is-a-file": ((("model.py:build", "-o", "notes.txt"), {}),
                         "notes.txt: error: cannot write the output directory: a file of that name exists"),
    "output-below-a-file": ((("model.py:build", "-o", "notes.txt/out"), {}),
                            "notes.txt/out: error: cannot write the output directory: 'notes.txt' is not a "
                            "directory"),
    "output-is-stdout": ((("model.py:build", "-o", "-"), {}),
                         "spyre-compile: error: argument -o/--output: spyre-compile writes a directory, not "
                         "standard output"),
    "cores-0": ((("model.py:build", "-o", "out", "--cores", "0"), {}),
                "spyre-compile: error: argument --cores: cores must be an integer between 1 and 32, got 0"),
    "lx-fraction": ((("model.py:build", "-o", "out", "--lx-fraction", "-0.5"), {}),
                    "spyre-compile: error: argument --lx-fraction: backend_lx_fraction must satisfy "
                    "0 <= fraction < 1, got -0.5"),
    "lx-solver": ((("model.py:build", "-o", "out", "--lx-solver", "optimal"), {}),
                  "spyre-compile: error: argument --lx-solver: invalid choice: 'optimal' (choose from auto, "
                  "greedy, firstfit, bestfit, valuefit)"),
    "sencores": ((("model.py:build", "-o", "out"), {"SENCORES": "0"}),
                 "spyre-compile: error: SENCORES=0: cores must be an integer between 1 and 32, got 0"),
    "no-factory": ((("model.py", "-o", "out"), {}),
                   "model.py: error: name the factory to call: 'model.py:FACTORY' (functions of model.py without "
                   "parameters: build, build_other)"),
    "missing-model": ((("sub/nosuch.py:build", "-o", "out"), {}),
                      "sub/nosuch.py: error: cannot read the file: no such file or directory"),
}


@pytest.mark.parametrize("name", list(CHECKED_FIRST))
def test_checked_before_torch_is_imported_or_the_model_runs(tmp_path, name):
    """Options, the source and the output location are checked first: the one error names
    the option (or is located at the path as given), torch is never imported, the model never runs."""
    (args, env), line = CHECKED_FIRST[name]
    (tmp_path / "model.py").write_text(MARKING_MODEL)
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "results.txt").write_text("mine")
    code, imported_torch, err = compile_in_process(tmp_path, *args, env=env)
    assert (code, err) == (1, [line])
    assert not imported_torch
    assert not (tmp_path / "model-ran").exists()
    assert (tmp_path / "keep" / "results.txt").read_text() == "mine" and not (tmp_path / "out").exists()


def test_a_good_command_line_gets_to_the_model(tmp_path):
    """The counterpart: with nothing wrong, the model runs and the directory is written."""
    pytest.importorskip("torch")
    (tmp_path / "model.py").write_text(MARKING_MODEL)
    code, imported_torch, err = compile_in_process(tmp_path, "model.py:build", "-o", "out", "--cores", "2")
    assert code == 0, err
    assert imported_torch and (tmp_path / "model-ran").exists()
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["cores"] == 2


def test_the_python_api_checks_out_dir_before_the_export(tmp_path):
    """spyre_mlir.compile refuses a non-empty out_dir before it exports the model."""
    torch = pytest.importorskip("torch")
    import spyre_mlir
    from spyre_mlir.diagnostics import SpyreError

    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "results.txt").write_text("mine")
    called = []

    def model(x):
        called.append(x)
        return x + x

    with pytest.raises(SpyreError) as info:
        spyre_mlir.compile(model, (torch.ones(64, 128, dtype=torch.float16),), out_dir=tmp_path / "keep")
    assert info.value.format("api") == f"{tmp_path / 'keep'}: error: output directory is not empty (use --force " \
                                       "to replace it)"
    assert not called


FAILING_IN_A_TORCH_OP = """\
import torch


def build():
    x = torch.ones(4, 64, dtype=torch.float16)
    return (lambda x: x @ x), (x,)
"""


def _compile_failing_model(tmp_path, source: str) -> tuple[str, str]:
    """The stderr of ``spyre-compile model.py:build`` on ``source``, without and with --debug; both
    runs must fail with exit status 1 and write no output directory."""
    (tmp_path / "model.py").write_text(source)
    command = [str(BIN / "spyre-compile"), "model.py:build", "-o", "out"]
    errors = []
    for extra in ([], ["--debug"]):
        run = subprocess.run([*command, *extra], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert run.returncode == 1
        assert not (tmp_path / "out").exists()
        errors.append(run.stderr)
    return errors[0], errors[1]


def test_torch_logs_stay_behind_debug(tmp_path):
    """torch logs a traceback when an op fails under torch.export: the error is our one line, and
    --debug shows the traceback with what torch logged."""
    pytest.importorskip("torch")
    quiet, debug = _compile_failing_model(tmp_path, FAILING_IN_A_TORCH_OP)
    assert quiet.splitlines() == [
        "model.py:6: error: torch.export raised RuntimeError: a and b must have same reduction dim, but got "
        "[4, 64] X [4, 64]."]
    assert debug.startswith("Traceback") and "torch logged:" in debug
    assert "failed while attempting to run meta for aten.mm.default" in debug
    assert 'File "model.py", line 6' in debug


BRANCHING_ON_VALUES = """\
import torch


class Branchy(torch.nn.Module):
    def forward(self, x):
        if (x > 0).all():
            return x * 2
        return x


def build():
    return Branchy(), (torch.ones(4, 64, dtype=torch.float16),)
"""


def test_the_partial_graph_torch_export_prints_stays_behind_debug(tmp_path):
    """Regression: a model that branches on tensor values (BART's float16 overflow check) fails
    in torch.export, which prints the partial graph on stderr, about 20 lines here and 270 for
    BART, before our error.  The error is our one line; --debug shows what torch printed."""
    pytest.importorskip("torch")
    quiet, debug = _compile_failing_model(tmp_path, BRANCHING_ON_VALUES)
    assert quiet.splitlines() == [
        "model.py:6: error: torch.export raised GuardOnDataDependentSymNode: Could not guard on data-dependent "
        "expression Eq(u0, 1) (unhinted: Eq(u0, 1)).  (Size-like symbols: none)"]
    assert "printed on stderr:" in debug and "torch.ops.aten.gt.Scalar" in debug


# --------------------------------------------------------------------------
# What it says: one line when done, progress on a terminal only
# --------------------------------------------------------------------------


def test_one_line_on_success_says_where_how_many_and_how_fast(tmp_path, capsys):
    from spyre_mlir.tools.spyre_compile import main

    (tmp_path / "add.mlir").write_text(ADD)
    out = tmp_path / "out"
    assert main([str(tmp_path / "add.mlir"), "-o", str(out), "--cores", "4"]) == 0
    captured = capsys.readouterr()
    cost = json.loads((out / "cost.json").read_text())
    predicted = sum(figures["predicted_us"] for figures in cost["sdsc_files"].values())
    assert captured.out.splitlines() == [f"spyre-compile: wrote {out}: 2 SDSC files, predicted {predicted:.1f} us "
                                         "on 4 cores"]
    assert captured.err == ""  # not a terminal: no progress


def _timing_rows(stderr: str) -> list[tuple[str, float]]:
    report = stderr[stderr.index("===-- spyre-compile timing --==="):]
    return [(label, float(seconds)) for seconds, label in re.findall(r"^\s+(\d+\.\d+) s  (.+)$", report, re.M)]


def _write_model(tmp_path):
    model = tmp_path / "model.py"
    model.write_text("import torch\n\n\ndef build():\n    return (lambda x: x * 2 + x), (torch.ones(64, 128, dtype=torch.float16),)\n")
    return model


def test_time_passes_covers_every_phase_of_a_model_compile_and_adds_up_to_the_wall_time(tmp_path, capsys):
    from spyre_mlir.pipeline import COMPILE_STAGES
    from spyre_mlir.tools.spyre_compile import main

    model = _write_model(tmp_path)
    start = time.perf_counter()
    assert main([f"{model}:build", "-o", str(tmp_path / "out"), "--cores", "4", "--time-passes"]) == 0
    wall = time.perf_counter() - start
    rows = _timing_rows(capsys.readouterr().err)
    labels = [label.split(" (")[0] for label, _ in rows]
    assert labels == ["import torch", "build model", "export", "decompose", "import", *COMPILE_STAGES, "verify",
                      "write", "other", "total"]
    assert "spyre-work-division (decisions 4, taken from an op priced alike 0)" in [label for label, _ in rows]
    *phases, (_, total) = rows
    assert sum(seconds for _, seconds in phases) == pytest.approx(total, abs=5e-3)
    assert total == pytest.approx(wall, rel=0.05)


def test_time_passes_of_an_mlir_compile(tmp_path, capsys):
    from spyre_mlir.pipeline import COMPILE_STAGES
    from spyre_mlir.tools.spyre_compile import main

    (tmp_path / "add.mlir").write_text(ADD)
    assert main([str(tmp_path / "add.mlir"), "-o", str(tmp_path / "out"), "--time-passes"]) == 0
    labels = [label.split(" (")[0] for label, _ in _timing_rows(capsys.readouterr().err)]
    assert labels == ["parse", *COMPILE_STAGES, "verify", "write", "other", "total"]


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_shows_one_line_per_stage_on_a_terminal(tmp_path, monkeypatch):
    """On a terminal, once a compile has run for PROGRESS_AFTER seconds, each stage is one line."""
    import spyre_mlir.tools.cli as cli
    from spyre_mlir.pipeline import COMPILE_STAGES
    from spyre_mlir.tools.spyre_compile import main

    (tmp_path / "add.mlir").write_text(ADD)
    terminal = Terminal()
    monkeypatch.setattr(cli, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([str(tmp_path / "add.mlir"), "-o", str(tmp_path / "out")]) == 0
    assert terminal.getvalue().splitlines() == [
        f"spyre-compile: parsing {tmp_path / 'add.mlir'}",
        *(f"spyre-compile: {name} ({i}/{len(COMPILE_STAGES)})" for i, name in enumerate(COMPILE_STAGES, 1)),
        f"spyre-compile: writing {tmp_path / 'out'}"]


def test_progress_names_every_phase_of_a_model_compile(tmp_path, monkeypatch):
    """Loading a model is several lines on a terminal: torch, the model, export, decomposition, import."""
    import spyre_mlir.tools.cli as cli
    from spyre_mlir.pipeline import COMPILE_STAGES
    from spyre_mlir.tools.spyre_compile import main

    spec = f"{_write_model(tmp_path)}:build"
    terminal = Terminal()
    monkeypatch.setattr(cli, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([spec, "-o", str(tmp_path / "out")]) == 0
    assert terminal.getvalue().splitlines() == [
        "spyre-compile: importing torch",
        f"spyre-compile: building the model of {spec}",
        "spyre-compile: exporting it with torch.export",
        "spyre-compile: decomposing it into core ATen ops",
        "spyre-compile: importing it into the spyre dialect",
        *(f"spyre-compile: {name} ({i}/{len(COMPILE_STAGES)})" for i, name in enumerate(COMPILE_STAGES, 1)),
        f"spyre-compile: writing {tmp_path / 'out'}"]


def test_progress_waits_and_stays_off_a_pipe():
    from spyre_mlir.tools.cli import Progress

    for stream, after in ((io.StringIO(), 0.0), (Terminal(), 60.0)):
        with Progress("tool", stream, after) as progress:
            progress.stage("first")
            progress.stage("second")
        assert stream.getvalue() == ""
    terminal = Terminal()
    with Progress("tool", terminal, 0.0) as progress:
        progress.stage("first")
        progress.stage("second")
    assert terminal.getvalue() == "tool: first\ntool: second\n"


# --------------------------------------------------------------------------
# Interrupted writes
# --------------------------------------------------------------------------

# spyre-compile, sent SIGINT by itself mid-write: right after the writer puts its first file in its
# staging directory (argv[1] "write"), or right after it moves the directory it replaces aside ("rename").
INTERRUPTED_WHILE_WRITING = textwrap.dedent("""\
    import os, signal, sys
    from pathlib import Path
    from spyre_mlir.tools.spyre_compile import main

    # As from a terminal: a suite started in the background (`cmd &`) passes SIGINT on ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    write_text, rename = Path.write_text, os.rename

    def interrupt(what):
        print("interrupting after", what, flush=True)
        os.kill(os.getpid(), signal.SIGINT)

    def write_then_interrupt(self, *args, **kwargs):
        written = write_text(self, *args, **kwargs)
        if ".spyre-staging-" in self.parent.name:
            interrupt(self.name)
        return written

    def rename_then_interrupt(source, destination):
        rename(source, destination)
        if os.path.basename(destination) == "d":
            interrupt(f"moving {source} aside")

    if sys.argv[1] == "write":
        Path.write_text = write_then_interrupt
    else:
        os.rename = rename_then_interrupt
    sys.exit(main(sys.argv[2:]))
""")


def test_ctrl_c_while_writing_is_one_line_exit_130_and_no_staging_left(tmp_path):
    (tmp_path / "add.mlir").write_text(ADD)
    done = subprocess.run([sys.executable, "-c", INTERRUPTED_WHILE_WRITING, "write", "add.mlir", "-o", "out"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("interrupting after ")  # the signal came mid-write
    assert (done.returncode, done.stderr) == (130, "spyre-compile: interrupted\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.mlir"]


def test_ctrl_c_while_replacing_puts_the_old_directory_back(tmp_path):
    (tmp_path / "add.mlir").write_text(ADD)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.txt").write_text("mine")
    done = subprocess.run([sys.executable, "-c", INTERRUPTED_WHILE_WRITING, "rename", "add.mlir", "-o", "out",
                           "--force"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("interrupting after moving ")
    assert (done.returncode, done.stderr) == (130, "spyre-compile: interrupted\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.mlir", "out"]
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["results.txt"]


def dead_pid() -> int:
    """The id of a process that has exited."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_the_next_compile_sweeps_staging_left_by_a_killed_one_and_nothing_else(tmp_path, capsys):
    from spyre_mlir.tools.spyre_compile import main

    (tmp_path / "add.mlir").write_text(ADD)
    stale = tmp_path / f".out.spyre-staging-{dead_pid()}-a1b2c3d4"
    running = tmp_path / f".other.spyre-staging-{os.getpid()}-zz99yy88"  # a compile still writing
    mine = [tmp_path / ".out.notes", tmp_path / ".out.spyre-staging-mine", tmp_path / ".cache"]
    for directory in (stale, running, *mine):
        directory.mkdir()
        (directory / "sdsc_0.json").write_text("{")
    assert main([str(tmp_path / "add.mlir"), "-o", str(tmp_path / "new")]) == 0
    assert not stale.exists()
    assert running.is_dir() and all(d.is_dir() and (d / "sdsc_0.json").read_text() == "{" for d in mine)
    assert (tmp_path / "new" / "manifest.json").is_file()


@pytest.mark.parametrize("tool, module, patched", [
    ("spyre-opt", "spyre_mlir.tools.spyre_opt", "parse_module"),
    ("spyre-import", "spyre_mlir.tools.spyre_import", "parse_source"),
    ("spyre-run", "spyre_mlir.tools.spyre_run", "load_output_dir"),
    ("spyre-compile", "spyre_mlir.tools.spyre_compile", "check_arguments"),
])
def test_ctrl_c_is_one_line_and_130_in_every_tool(tmp_path, monkeypatch, capsys, tool, module, patched):
    import importlib

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    tool_module = importlib.import_module(module)
    monkeypatch.setattr(tool_module, patched, interrupted)
    (tmp_path / "add.mlir").write_text(ADD)
    argv = {"spyre-opt": [str(tmp_path / "add.mlir")], "spyre-import": ["model.py:build"],
            "spyre-run": [str(tmp_path)], "spyre-compile": [str(tmp_path / "add.mlir"), "-o", str(tmp_path / "o")]}
    assert tool_module.main(argv[tool]) == 130
    assert capsys.readouterr().err == f"{tool}: interrupted\n"
