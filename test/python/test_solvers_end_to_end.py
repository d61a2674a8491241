"""Every example with LX planning by each solver (DESIGN §9) on 32 cores matches eager on the interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest

from spyre_mlir.passes.plan_memory import SOLVERS

from e2e_support import EXAMPLES, ImportedPrograms, compile_and_check


@pytest.fixture(scope="module")
def imported() -> ImportedPrograms:
    """Per example: its (fn, inputs) and its imported module, exported once."""
    return ImportedPrograms(EXAMPLES)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_eager_with_solver(name, solver, tmp_path, imported):
    stats = compile_and_check(name, 32, tmp_path / "out", imported, lx_solver=solver)
    assert stats.as_dict()["lx_bytes_written"] > 0  # some value of every example lives in LX


def _sdsc_files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.glob("sdsc_*.json"))}


def test_solvers_place_the_transformer_block_differently(tmp_path, imported):
    """The solvers run distinct plans where LX is scarce (one core, a tenth of LX left to the
    planner): greedy, first fit and best fit place this block differently, and each plan
    matches eager."""
    outputs = {}
    for solver in SOLVERS:
        compile_and_check("transformer_block", 1, tmp_path / solver, imported, lx_solver=solver, lx_fraction=0.9)
        outputs[solver] = _sdsc_files(tmp_path / solver)
    greedy, firstfit, bestfit = (outputs[s] for s in ("greedy", "firstfit", "bestfit"))
    assert greedy.keys() == firstfit.keys() == bestfit.keys()
    assert greedy != firstfit and greedy != bestfit
