"""Data ops models compute on their activations and inputs, compiled and compared with eager:
``isinf`` and ``isnan`` (``|x| == inf`` in float32, ``x != x``) on tensors holding infinities and
nans, and T5's encoder in float16, which clamps its activations by whether any is infinite; token
ids read both as an index and as data (the data a table of the values read through them), an
integer table known at compile time gathered at computed positions, and RoBERTa, which does both
to count its position ids past the padding."""

from __future__ import annotations

import math

import pytest
import torch

import spyre_mlir
from spyre_mlir.interpreter import compare, tolerance_for


class _Clean(torch.nn.Module):
    """Each non-finite element replaced by 0, the rest doubled, and how many were infinite."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        bad = torch.isinf(x) | torch.isnan(x)
        return torch.where(bad, torch.zeros_like(x), x * 2), torch.isinf(x).sum(dim=-1, dtype=x.dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_isinf_and_isnan_find_the_non_finite_elements(dtype):
    x = torch.randn(4, 64, dtype=dtype)
    x[0, 3], x[1, 10], x[2, 63], x[3, 0] = math.inf, -math.inf, math.nan, math.inf
    with torch.no_grad():
        want = _Clean()(x)
        got = spyre_mlir.compile(_Clean(), (x,), cores=4).run(x)
    for g, w in zip(got, want):
        compare("clean", g.numpy(), w.numpy(), tolerance_for(str(dtype).removeprefix("torch.")))
    assert got[1].tolist() == [1.0, 1.0, 0.0, 1.0]


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_t5_encoder_in_float16_matches_eager(cores):
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    model = transformers.T5EncoderModel(transformers.T5Config(
        vocab_size=256, d_model=128, d_kv=64, d_ff=256, num_layers=1, num_heads=2)).half().eval()
    ids = torch.randint(0, 256, (1, 16))
    with torch.no_grad():
        want = model(ids).last_hidden_state
        got = spyre_mlir.compile(model, (ids,), cores=cores).run(ids).last_hidden_state
    compare("t5", got.numpy(), want.numpy(), tolerance_for("float16"))


class _IdsTwoWays(torch.nn.Module):
    """Token ids read as the index of an embedding and as data (``ids != 0``, ``ids * 0.5``), and an
    integer buffer gathered at positions computed from them."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(300, 64)
        self.register_buffer("types", torch.arange(16).repeat(2, 1) % 3, persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        keep = (ids != 0).int()
        positions = ((torch.cumsum(keep, dim=1) - 1) * keep).long()
        types = torch.gather(self.types, 1, positions)
        return self.embed(ids) * keep[..., None] + (ids * 0.5)[..., None] + types[..., None]


@pytest.mark.parametrize("cores", [1, 4])
def test_ids_read_as_index_and_as_data_match_eager(cores):
    torch.manual_seed(0)
    model = _IdsTwoWays().eval()
    ids = torch.randint(1, 300, (2, 16))
    ids[0, 12:] = 0
    with torch.no_grad():
        want = model(ids)
        got = spyre_mlir.compile(model, (ids,), cores=cores).run(ids)
    compare("ids", got.numpy(), want.numpy(), tolerance_for("float32"))


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("dtype,cores", [(torch.float16, 1), (torch.float16, 4), (torch.float16, 32),
                                         (torch.float32, 4)])
def test_roberta_counts_its_positions_past_the_padding(dtype, cores):
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    model = transformers.RobertaModel(transformers.RobertaConfig(
        vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=1,
        num_attention_heads=2)).to(dtype).eval()
    ids = torch.randint(3, 256, (2, 16))
    ids[1, 10:] = model.config.pad_token_id  # positions stop counting at the padding
    with torch.no_grad():
        want = model(ids).last_hidden_state
        got = spyre_mlir.compile(model, (ids,), cores=cores).run(ids).last_hidden_state
    compare("roberta", got.numpy(), want.numpy(), tolerance_for(str(dtype).removeprefix("torch.")))
