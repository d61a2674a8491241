"""Every example with LX planning by each solver (DESIGN §9) on 32 cores matches eager on the interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest

from spyre_mlir.passes.plan_memory import AUTO, SOLVERS

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


def test_auto_keeps_the_plan_that_moves_least_through_hbm(tmp_path, imported):
    """``auto`` (the default) runs every solver and keeps the placement that leaves the fewest
    bytes to HBM: where LX is scarce it runs one of the solvers' plans, and no solver's plan moves
    fewer HBM bytes (the interpreter's counters)."""
    moved, outputs = {}, {}
    for solver in (*SOLVERS, AUTO):
        stats = compile_and_check("transformer_block", 1, tmp_path / solver, imported, lx_solver=solver,
                                  lx_fraction=0.9).as_dict()
        moved[solver] = stats["hbm_bytes_read"] + stats["hbm_bytes_written"]
        outputs[solver] = _sdsc_files(tmp_path / solver)
    assert moved[AUTO] == min(moved.values()), moved
    assert any(outputs[AUTO] == outputs[s] for s in SOLVERS)
