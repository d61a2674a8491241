"""Repeated layers are planned once: spyre-work-division takes a decision priced before for an op
whose pricing inputs are equal (``DivisionPlan.alike``), within one plan and across every work
division of a compile (the clones spyre-auto-tile and spyre-pad-dims price, then the module:
``shared_decisions``), and the prices and LX shares of ops and values of one kind once; the plan
is the one pricing every op again gives, on transformers models and the example decoder, on 1, 4
and 32 cores."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import torch
import transformers

from spyre_mlir.analysis.decisions import TakenDecisions
from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.importer import load_factory
from spyre_mlir.mlir_text import make_context
from spyre_mlir.passes.work_division import DivisionPlan, WorkDivisionPass
from spyre_mlir.pipeline import CompileOptions, compile_stages, run_stages
from spyre_mlir.timing import timed

from e2e_support import ImportedPrograms

DECODER = Path(__file__).resolve().parents[2] / "examples" / "transformer_block.py"


class _Hidden(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids).last_hidden_state


def _transformers(config_class, model_class, layers=3, hidden=128, intermediate=448, heads=2, tokens=64):
    def build():
        torch.manual_seed(0)
        config = config_class(hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
                              num_attention_heads=heads, num_key_value_heads=1, vocab_size=100, use_cache=False)
        return _Hidden(model_class(config).half().eval()), (torch.randint(0, 100, (1, tokens)),)
    return build


PROGRAMS = {
    # An intermediate dim of 7 sticks: spyre-pad-dims prices a padded clone on 4 and 32 cores.
    "granite": _transformers(transformers.GraniteConfig, transformers.GraniteModel),
    "llama": _transformers(transformers.LlamaConfig, transformers.LlamaModel),
    "decoder": lambda: load_factory(f"{DECODER}:build_layers")(3),
    # Scores that overflow LX on 4 cores: spyre-auto-tile prices tiled clones.
    "long_llama": _transformers(transformers.LlamaConfig, transformers.LlamaModel, layers=2, hidden=256,
                                intermediate=512, heads=4, tokens=1024),
}
CORES = {"long_llama": [4]}

imported = ImportedPrograms(PROGRAMS)


def _plan(name: str, cores: int) -> tuple[str, list[tuple[int, ...] | None]]:
    """The planned module of ``name`` on ``cores`` as text, and every compute op's ``core_splits``."""
    _, module = imported(name)
    planned = module.clone()
    run_stages(planned, CompileOptions(cores=cores), log=io.StringIO())
    return str(planned), [op.get_core_splits() for op in planned.walk() if isinstance(op, ComputeOp)]


def _never_alike(self, key, decide):
    return decide()


class _Forgetful(dict):
    """A cache that never holds anything: every price and share is computed for its own op."""

    def __contains__(self, key):
        return False

    def __setitem__(self, key, value):
        pass


@pytest.mark.parametrize(("name", "cores"), [(name, cores) for name in sorted(PROGRAMS)
                                             for cores in CORES.get(name, [1, 4, 32])])
def test_decisions_taken_alike_are_the_decisions_priced_again(name, cores, monkeypatch):
    reused, splits = _plan(name, cores)
    monkeypatch.setattr(DivisionPlan, "alike", _never_alike)
    priced, priced_splits = _plan(name, cores)
    assert splits == priced_splits
    assert reused == priced


@pytest.mark.parametrize(("name", "cores"), [(name, cores) for name in sorted(PROGRAMS)
                                             for cores in CORES.get(name, [4, 32])])
def test_prices_and_shares_taken_by_kind_are_those_computed_again(name, cores, monkeypatch):
    shared, splits = _plan(name, cores)
    original = TakenDecisions.__init__

    def forgetful(self, config):
        original(self, config)
        self.prices, self.shares = _Forgetful(), _Forgetful()

    monkeypatch.setattr(TakenDecisions, "__init__", forgetful)
    computed, computed_splits = _plan(name, cores)
    assert splits == computed_splits
    assert shared == computed


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_layers_after_the_first_are_planned_from_it(name, monkeypatch):
    plans: list[DivisionPlan] = []
    original = DivisionPlan.__init__

    def keep(self, *args, **kwargs):
        original(self, *args, **kwargs)
        plans.append(self)

    monkeypatch.setattr(DivisionPlan, "__init__", keep)
    _, module = imported(name)
    planned = module.clone()
    WorkDivisionPass().apply(None, _attached(planned))
    ops = sum(1 for op in planned.walk() if isinstance(op, ComputeOp))
    (plan,) = plans
    # Three equal layers: the second and third take most of their step-4 decisions from the first.
    assert plan.reused >= ops // 3, (plan.reused, ops)


def test_the_clones_pad_dims_prices_share_their_decisions():
    _, module = imported("granite")
    with timed() as timings:
        run_stages(module.clone(), CompileOptions(cores=4), log=io.StringIO())
    counts = _counts(timings, "spyre-pad-dims")
    assert counts["taken from an op priced alike"] > 0, counts
    # The module is divided after the clones, as the one that won: every decision is taken from it.
    counts = _counts(timings, "spyre-work-division")
    assert counts["taken from an op priced alike"] == counts["decisions"] > 0, counts


def test_auto_tile_plans_regions_whose_repeated_layers_share_decisions():
    """spyre-auto-tile plans the region around each candidate, not the module (:class:`LocalPricer`):
    the regions of the long Llama's layers are divided alike, and take decisions from one another."""
    _, module = imported("long_llama")
    with timed() as timings:
        run_stages(module.clone(), CompileOptions(cores=4), log=io.StringIO())
    counts = _counts(timings, "spyre-auto-tile")
    assert counts["tilings priced"] >= counts["regions planned"] > 0, counts
    assert counts["taken from an op priced alike"] > 0, counts


def _counts(timings, stage: str) -> dict[str, int]:
    """The counts on ``stage``'s ``--time-passes`` line, by what they count."""
    label = next(label for label, _ in timings.rows() if label.startswith(stage + " ("))
    return {what: int(n) for what, n in re.findall(r"([a-z][a-z ]*?) (\d+)", label[len(stage) + 2:-1])}


def _attached(module):
    """``module`` through the stages before work division, on 32 cores."""
    ctx = make_context()
    for stage in compile_stages(32):
        if stage.name == WorkDivisionPass.name:
            return module
        stage.apply(ctx, module)
    raise AssertionError("no spyre-work-division stage")
