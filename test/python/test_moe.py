"""Mixture-of-experts families (transformers' GraniteMoe, Mixtral, Qwen2Moe) compiled and
compared with eager, which computes with transformers' own ``grouped_mm`` experts: a prompt
of 16 tokens takes the dense form (every expert on every token, weighted by the routing
matrix), one token the gathered form (each token through the experts it selected, their weights
read through the router's indices); ``--report`` names the form of each layer."""

from __future__ import annotations

from typing import Any

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")

import spyre_mlir  # noqa: E402
from spyre_mlir.dialects.spyre import ReduceOp, tensor_layout  # noqa: E402
from spyre_mlir.importer.experts import DENSE, GATHERED, choose_form  # noqa: E402
from spyre_mlir.interpreter import compare, tolerance_for  # noqa: E402

_SIZES = dict(vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=1, num_attention_heads=2,
              num_key_value_heads=2, use_cache=False)


def _granitemoe() -> Any:
    return transformers.GraniteMoeModel(transformers.GraniteMoeConfig(
        **_SIZES, num_local_experts=4, num_experts_per_tok=2))


def _mixtral() -> Any:
    return transformers.MixtralModel(transformers.MixtralConfig(**_SIZES, num_local_experts=4, num_experts_per_tok=2))


def _qwen2moe() -> Any:
    return transformers.Qwen2MoeModel(transformers.Qwen2MoeConfig(
        **_SIZES, moe_intermediate_size=64, shared_expert_intermediate_size=128, num_experts=4,
        num_experts_per_tok=2))


def _phimoe() -> Any:
    return transformers.PhimoeModel(transformers.PhimoeConfig(**_SIZES, num_local_experts=4, num_experts_per_tok=2))


FAMILIES = {"granitemoe": _granitemoe, "mixtral": _mixtral, "qwen2moe": _qwen2moe, "phimoe": _phimoe}
CASES = [(name, torch.float16, cores) for name in ("granitemoe", "mixtral") for cores in (1, 4, 32)] + [
    ("granitemoe", torch.float32, 4), ("mixtral", torch.float32, 4), ("qwen2moe", torch.float16, 4),
    ("qwen2moe", torch.float32, 4), ("phimoe", torch.float32, 4)]


def _run(name: str, dtype: torch.dtype, cores: int, tokens: int) -> Any:
    torch.manual_seed(0)
    model = FAMILIES[name]().to(dtype).eval()
    ids = torch.randint(0, 256, (1, tokens))
    with torch.no_grad():
        want = model(ids).last_hidden_state
        compiled = spyre_mlir.compile(model, (ids,), cores=cores)
        got = compiled.run(ids).last_hidden_state
    compare(name, got.numpy(), want.numpy(), tolerance_for(str(dtype).removeprefix("torch.")))
    return compiled


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("name,dtype,cores", CASES)
def test_a_prompt_runs_every_expert_densely_and_matches_eager(name, dtype, cores):
    compiled = _run(name, dtype, cores, tokens=16)
    assert f"experts: {DENSE} (16 tokens x 2 of 4 experts" in compiled.report.table()


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("name,dtype,cores", [("granitemoe", torch.float16, 1), ("mixtral", torch.float16, 4),
                                              ("qwen2moe", torch.float16, 32), ("mixtral", torch.float32, 4)])
def test_one_token_gathers_the_experts_it_selected_and_matches_eager(name, dtype, cores):
    compiled = _run(name, dtype, cores, tokens=1)
    assert f"experts: {GATHERED} (1 tokens x 2 of 4 experts" in compiled.report.table()


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("name,cores", [("mixtral", 1), ("granitemoe", 4)])
def test_a_prompt_longer_than_a_stick_of_routes_matches_eager(name, cores):
    """Regression: 64 tokens' top-2 experts, ``[64, 2]`` float32 sticked on the tokens (two sticks),
    read a slot at a time: every token past the 32nd was routed through a wrong expert."""
    _run(name, torch.float32, cores, tokens=64)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
def test_the_gathered_form_reads_each_experts_weights_as_they_are_stored():
    """Each token's selected weights (gathered ``[1, 512, 128]`` gate-up, ``[1, 128, 256]`` down)
    are the left operand of their matmul, read sticked on their input dim as stored: no copy
    restickifies an expert's weights (one is 128 KB), only the token's row is."""
    compiled = _run("granitemoe", torch.float16, 4, tokens=1)
    expert = 512 * 128 * 2
    copies = [c for c in compiled.report.ops if c.op.op_func().name == "ReStickifyOpHBM"]
    assert copies and all(c.traffic.hbm_read < expert for c in copies)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
def test_regression_the_dense_form_sums_the_experts_off_the_stick():
    """The routing matrix is built ``[experts, tokens]``, the tokens innermost: built ``[tokens,
    experts]`` and transposed, it was sticked on its 4 experts, and so were the products it
    scales and their sum over the experts, padded 8-fold in float32 (Mixtral's router weights)."""
    compiled = _run("mixtral", torch.float16, 4, tokens=16)
    combines = [tensor_layout(c.op.inputs[0].type) for c in compiled.report.ops
                if isinstance(c.op, ReduceOp) and tensor_layout(c.op.inputs[0].type).host_shape[:2] == (4, 16)]
    assert combines and all(layout.stick_dim != 0 for layout in combines)


def test_the_models_own_experts_implementation_is_left_as_it_was():
    """The static form is used while exporting only: afterwards the model computes with the
    implementation its config names, and the interface holds what it held."""
    from transformers.integrations.moe import ALL_EXPERTS_FUNCTIONS

    before = {name: ALL_EXPERTS_FUNCTIONS.get(name) for name in ALL_EXPERTS_FUNCTIONS}
    model = _mixtral().eval()
    ids = torch.randint(0, 256, (1, 4))
    spyre_mlir.compile(model, (ids,), cores=1)
    assert {name: ALL_EXPERTS_FUNCTIONS.get(name) for name in ALL_EXPERTS_FUNCTIONS} == before
    assert "eager" not in ALL_EXPERTS_FUNCTIONS
    assert model.config._experts_implementation == "grouped_mm"


def test_the_form_follows_the_tokens_routed():
    """A decode step (one token, 2 of 8 experts of Granite-MoE size) reads 2 experts' weights
    gathered rather than all 8; a prompt of 2048 tokens reads each expert once, densely."""
    per_expert = 3 * 1024 * 512
    form, gathered, dense = choose_form(1, 2, 8, per_expert, 2)
    assert form == GATHERED and gathered * 4 == pytest.approx(dense)
    assert choose_form(2048, 2, 8, per_expert, 2)[0] == DENSE
    assert choose_form(4, 2, 8, per_expert, 2)[0] == GATHERED  # 8 sets read either way: gathered computes less


def test_an_expert_parallel_layer_is_one_clear_error():
    """A layer sharded for expert parallelism may route to experts of other devices: refused."""
    from spyre_mlir.diagnostics import SpyreError

    model = _mixtral().eval()
    model.layers[0].mlp.experts._is_expert_parallel = True
    with pytest.raises(SpyreError, match="expert parallelism"):
        spyre_mlir.compile(model, (torch.randint(0, 256, (1, 4)),), cores=1)
