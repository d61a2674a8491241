"""What every command-line tool shares: --version, plain-text --help, ``python -m spyre_mlir``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import spyre_mlir
from spyre_mlir.tools.cli import version_text

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TOOLS = ("spyre-opt", "spyre-import", "spyre-compile", "spyre-run", "spyre-generate")


def tool(*argv: str, **kwargs) -> subprocess.CompletedProcess[str]:
    """Run an installed console script."""
    return subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=120, **kwargs)


# --------------------------------------------------------------------------
# Versions
# --------------------------------------------------------------------------


def test_the_version_is_the_package_metadata():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert spyre_mlir.__version__ == version("spyre-mlir") == declared


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_prints_the_versions_of_spyre_mlir_and_xdsl(name):
    done = tool(name, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"spyre-mlir {spyre_mlir.__version__}", f"  xDSL {version('xdsl')}"]
    assert "xdsl-opt" not in done.stdout and done.stderr == ""


def test_spyre_opt_version_does_not_import_torch():
    code = textwrap.dedent("""\
        import sys
        from spyre_mlir.tools.spyre_opt import main
        try:
            main(["--version"])
        except SystemExit as e:
            assert e.code == 0, e.code
        assert "torch" not in sys.modules, "spyre-opt --version imported torch"
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("spyre-mlir ")


def test_the_version_names_torch_once_it_is_loaded():
    torch = pytest.importorskip("torch")
    assert version_text().splitlines()[-1] == f"  torch {torch.__version__}"


# --------------------------------------------------------------------------
# Help
# --------------------------------------------------------------------------

RST_MARKUP = re.compile(r"``|::|:[a-z]+:`")


@pytest.mark.parametrize("name", TOOLS)
def test_help_is_plain_text(name):
    done = tool(name, "--help")
    assert done.returncode == 0, done.stderr
    assert f"usage: {name} " in done.stdout and "--version" in done.stdout
    assert not RST_MARKUP.findall(done.stdout), [line for line in done.stdout.splitlines() if RST_MARKUP.search(line)]


def test_python_m_spyre_mlir_lists_the_commands():
    done = subprocess.run([sys.executable, "-m", "spyre_mlir"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = re.findall(r"^  (spyre-[a-z]+)  +\S", done.stdout, re.MULTILINE)
    assert listed == sorted(TOOLS)
    assert "compile a PyTorch program" in done.stdout and not RST_MARKUP.findall(done.stdout)


def test_python_m_spyre_mlir_rejects_an_unknown_argument():
    done = subprocess.run([sys.executable, "-m", "spyre_mlir", "compile"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == "python -m spyre_mlir: error: unrecognized arguments: compile"


def test_python_m_spyre_mlir_version():
    done = subprocess.run([sys.executable, "-m", "spyre_mlir", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.startswith(f"spyre-mlir {spyre_mlir.__version__}\n")


# --------------------------------------------------------------------------
# --debug
# --------------------------------------------------------------------------


@pytest.mark.parametrize("argv, line", [
    (("spyre-import", "nosuch.py:build"), "nosuch.py: error: cannot read the file: no such file or directory"),
    (("spyre-run", "nosuch"), "nosuch: error: no such output directory 'nosuch'"),
    (("spyre-compile", "nosuch.py:build", "-o", "out"),
     "nosuch.py: error: cannot read the file: no such file or directory"),
])
def test_debug_shows_the_traceback_of_an_error(tmp_path, argv, line):
    """Without --debug an error is one line; with it, the traceback (in every tool that takes a model)."""
    env = {k: v for k, v in os.environ.items() if k != "SPYRE_TRACEBACK"}
    plain = tool(*argv, cwd=tmp_path, env=env)
    assert (plain.returncode, plain.stderr) == (1, line + "\n")
    debug = tool(*argv, "--debug", cwd=tmp_path, env=env)
    assert debug.returncode == 1 and debug.stderr.startswith("Traceback (most recent call last):")
    assert debug.stderr.splitlines()[-1].startswith("spyre_mlir.diagnostics.SpyreError: ")
