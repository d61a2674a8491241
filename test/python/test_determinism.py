"""Determinism: every example compiles to byte-identical output directories in fresh processes.

Each source is compiled by two ``spyre-compile`` processes, run side by side
with different ``PYTHONHASHSEED`` values into differently named directories;
the two directories must hold the same files with the same bytes.  To keep the
cost down, the examples are imported once here (in this process) and compiled
from their ``.mlir`` text; the transformer block, the example with the most ops
and parameters, goes from its model file end to end (export and import
included), and ``examples/add_mul_nested.mlir`` from the file in the repository.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.printer import Printer

from e2e_support import EXAMPLES, ROOT, ImportedPrograms
from test_error_sweep import snapshot

SPYRE_COMPILE = str(Path(sys.executable).parent / "spyre-compile")
HASH_SEEDS = ("1", "2")
END_TO_END = "transformer_block"

imported = ImportedPrograms(EXAMPLES)


def compile_in_fresh_processes(source: str, out: Path) -> list[dict[str, bytes | None]]:
    """Compile ``source`` once per hash seed, concurrently; the output directories' contents."""
    runs = []
    for seed in HASH_SEEDS:
        env = {k: v for k, v in os.environ.items() if k not in ("SENCORES", "SPYRE_TRACEBACK")}
        runs.append(subprocess.Popen([SPYRE_COMPILE, source, "-o", str(out / f"seed_{seed}")],
                                     env={**env, "PYTHONHASHSEED": seed},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    return [snapshot(out / f"seed_{seed}") for seed in HASH_SEEDS]


def source_of(name: str, tmp_path: Path) -> str:
    """What to compile for ``name``: the model file, the repository's .mlir, or the imported module's text."""
    if name == END_TO_END:
        return f"{ROOT / 'examples' / name}.py:build"
    if name.endswith(".mlir"):
        return str(ROOT / "examples" / name)
    text = io.StringIO()
    Printer(stream=text).print_op(imported(name)[1])
    path = tmp_path / f"{name}.mlir"
    path.write_text(text.getvalue() + "\n")
    return str(path)


@pytest.mark.parametrize("name", [*EXAMPLES, "add_mul_nested.mlir"])
def test_compiles_byte_identically_across_processes(name, tmp_path):
    first, second = compile_in_fresh_processes(source_of(name, tmp_path), tmp_path)
    assert "bundle.mlir" in first and "manifest.json" in first and "sdsc_0.json" in first
    assert list(first) == list(second)
    for file in first:
        assert first[file] == second[file], f"{name}: {file} differs between hash seeds"
