"""Repeated layers are planned once: spyre-work-division takes a decision priced before for an op
whose pricing inputs are equal (``DivisionPlan.alike``), and the plan is the one pricing every op
again gives, on transformers models and the example decoder, on 1, 4 and 32 cores."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import torch
import transformers

from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.importer import load_factory
from spyre_mlir.mlir_text import make_context
from spyre_mlir.passes.work_division import DivisionPlan, WorkDivisionPass
from spyre_mlir.pipeline import CompileOptions, compile_stages, run_stages

from e2e_support import ImportedPrograms

DECODER = Path(__file__).resolve().parents[2] / "examples" / "transformer_block.py"


class _Hidden(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids).last_hidden_state


def _transformers(config_class, model_class, **sizes):
    def build():
        torch.manual_seed(0)
        config = config_class(hidden_size=128, intermediate_size=448, num_hidden_layers=3, num_attention_heads=2,
                              num_key_value_heads=1, vocab_size=100, use_cache=False, **sizes)
        return _Hidden(model_class(config).half().eval()), (torch.randint(0, 100, (1, 64)),)
    return build


PROGRAMS = {
    "granite": _transformers(transformers.GraniteConfig, transformers.GraniteModel),
    "llama": _transformers(transformers.LlamaConfig, transformers.LlamaModel),
    "decoder": lambda: load_factory(f"{DECODER}:build_layers")(3),
}

imported = ImportedPrograms(PROGRAMS)


def _plan(name: str, cores: int) -> tuple[str, list[tuple[int, ...] | None]]:
    """The planned module of ``name`` on ``cores`` as text, and every compute op's ``core_splits``."""
    _, module = imported(name)
    planned = module.clone()
    run_stages(planned, CompileOptions(cores=cores), log=io.StringIO())
    return str(planned), [op.get_core_splits() for op in planned.walk() if isinstance(op, ComputeOp)]


def _never_alike(self, key, decide):
    return decide()


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_decisions_taken_alike_are_the_decisions_priced_again(name, cores, monkeypatch):
    reused, splits = _plan(name, cores)
    monkeypatch.setattr(DivisionPlan, "alike", _never_alike)
    priced, priced_splits = _plan(name, cores)
    assert splits == priced_splits
    assert reused == priced


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


def _attached(module):
    """``module`` through the stages before work division, on 32 cores."""
    ctx = make_context()
    for stage in compile_stages(32):
        if stage.name == WorkDivisionPass.name:
            return module
        stage.apply(ctx, module)
    raise AssertionError("no spyre-work-division stage")
