"""The README matches the tools: the pass list, the command-line reference, and commands it shows."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BIN = Path(sys.executable).parent
PASS_LIST_MARKER = "<!-- spyre-opt --list-passes -->"
UPSTREAM_MLIR_OPT = Path("/usr/lib/llvm-22/bin/mlir-opt")


def tool_output(*argv: str) -> str:
    """Stdout of an installed console script."""
    done = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def readme_section(heading: str) -> str:
    """The README text from ``heading`` to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = README.index(f"\n{heading}\n")
    ends = [m.start() for m in re.finditer(r"\n#{1,%d} " % len(level), README) if m.start() > start]
    return README[start:ends[0] if ends else len(README)]


def long_options(help_text: str) -> set[str]:
    """The ``--long`` options a ``--help`` text lists, ``--help`` itself excluded."""
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_text)) - {"--help"}


def table_flags(section: str) -> set[str]:
    """The ``--long`` options named in the first column of a section's tables."""
    flags = set()
    for row in re.findall(r"^\| (.+?) \|", section, flags=re.MULTILINE):
        flags |= set(re.findall(r"`(--[a-z][a-z-]*)`", row))
    return flags


def test_pass_list_is_the_list_passes_output():
    after = README.split(PASS_LIST_MARKER, 1)[1]
    block = re.match(r"\s*```text\n(.*?)```", after, flags=re.DOTALL)
    assert block is not None, "no ```text block after the pass-list marker"
    assert block.group(1) == tool_output("spyre-opt", "--list-passes")


TABLE_MARKER = re.compile(r"<!-- ((?:spyre-compile|spyre-run) [^>]*?) -->\n```text\n(.*?)```", re.DOTALL)
"""A table the README shows under the command that prints it (``/tmp/x`` is the tour's directory)."""


def test_tables_are_what_the_tools_print(tmp_path):
    """Each table under a ``<!-- command -->`` marker is exactly that command's output (run in
    README order from the repository root, on 32 cores, with ``/tmp/x`` in a temporary directory)."""
    tables = TABLE_MARKER.findall(README)
    assert [command.split()[0] for command, _ in tables] == ["spyre-compile", "spyre-run"]
    env = {k: v for k, v in os.environ.items() if k != "SENCORES"}
    for command, table in tables:
        argv = shlex.split(command.replace("/tmp/x", str(tmp_path / "x")))
        done = subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.replace(str(tmp_path / "x"), "/tmp/x") == table, command


def test_pass_list_has_every_pipeline_stage():
    from spyre_mlir.pipeline import COMPILE_STAGES

    listed = {line.split("{")[0].split()[0] for line in tool_output("spyre-opt", "--list-passes").splitlines()}
    assert set(COMPILE_STAGES) | {"spyre-compile"} <= listed


@pytest.mark.parametrize("tool", ["spyre-import", "spyre-compile", "spyre-run"])
def test_cli_reference_lists_exactly_the_help_flags(tool):
    assert table_flags(readme_section(f"### `{tool}`")) == long_options(tool_output(tool, "--help"))


def test_cli_reference_of_spyre_opt_names_real_flags():
    documented = table_flags(readme_section("### `spyre-opt`"))
    assert "--list-passes" in documented
    assert documented <= long_options(tool_output("spyre-opt", "--help"))


def test_first_command_installs_torch_for_what_it_runs():
    after = README.split("\n## Two commands\n", 1)[1]
    command = next(line for line in after.splitlines() if line.startswith("pip install"))
    extras = re.match(r"pip install -e '\.\[([a-z,]+)\]' && ", command)
    assert extras is not None, f"the first command must install the package with its extras: {command}"
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    installed = [req for extra in extras.group(1).split(",") for req in declared[extra]]
    assert "torch==2.13.0" in installed  # spyre-compile model.py:factory and spyre-run --check import torch


@pytest.mark.skipif(not UPSTREAM_MLIR_OPT.is_file(), reason=f"upstream MLIR is not installed ({UPSTREAM_MLIR_OPT})")
def test_upstream_mlir_example_runs_as_written(tmp_path):
    command = next(line for line in readme_section("### `spyre-opt`").splitlines()
                   if line.startswith("spyre-opt x.mlir --print-op-generic | "))
    (tmp_path / "x.mlir").write_text('func.func @f(%a: tensor<4x64xf16>) -> tensor<4x64xf16> {\n'
                                     '  %y = spyre.pointwise "exp" (%a) : (tensor<4x64xf16>) -> tensor<4x64xf16>\n'
                                     '  func.return %y : tensor<4x64xf16>\n}\n')
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"spyre.pointwise"' in done.stdout
