"""Data ops models compute on their activations, compiled and compared with eager: ``isinf`` and
``isnan`` (``|x| == inf`` in float32, ``x != x``), on tensors holding infinities and nans, and
T5's encoder in float16, which clamps its activations by whether any is infinite."""

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
