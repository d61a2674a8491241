"""1-d convolutions (Whisper's encoder front end: kernel 3, stride 1 then 2, padding 1) compiled
as shifted matmuls (``spyre_mlir.importer.convolution``) and compared with eager: one tap's
matmul per kernel position over the zero-padded input read every ``stride``-th position, summed.
Other convolutions are one located error naming the op."""

from __future__ import annotations

import pytest
import torch

import spyre_mlir
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.interpreter import compare, tolerance_for


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("stride,padding", [(1, 1), (2, 1), (1, 0), (3, 2)])
def test_a_1d_convolution_matches_eager(stride, padding, dtype):
    torch.manual_seed(0)
    conv = torch.nn.Conv1d(16, 32, kernel_size=3, stride=stride, padding=padding).to(dtype).eval()
    x = torch.randn(2, 16, 66, dtype=dtype)
    with torch.no_grad():
        want = conv(x)
        got = spyre_mlir.compile(conv, (x,), cores=4).run(x)
    assert got.shape == want.shape
    compare("conv1d", got.numpy(), want.numpy(), tolerance_for(str(dtype).removeprefix("torch.")))


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_the_whisper_encoder_matches_eager(cores):
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    config = transformers.WhisperConfig(
        vocab_size=256, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, d_model=128,
        encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2, num_mel_bins=16,
        max_source_positions=32, encoder_ffn_dim=256, decoder_ffn_dim=256)
    encoder = transformers.WhisperModel(config).get_encoder().half().eval()
    features = torch.randn(1, 16, 64, dtype=torch.float16)
    with torch.no_grad():
        want = encoder(features).last_hidden_state
        got = spyre_mlir.compile(encoder, (features,), cores=cores).run(features).last_hidden_state
    compare("whisper", got.numpy(), want.numpy(), tolerance_for("float16"))


def test_a_2d_convolution_is_one_located_error():
    conv = torch.nn.Conv2d(3, 8, kernel_size=4, stride=4).eval()
    with pytest.raises(SpyreError, match=r"unsupported ATen op 'aten\.convolution\.default'") as info:
        spyre_mlir.compile(conv, (torch.randn(1, 3, 16, 16),), cores=4)
    assert "conv.py" in str(info.value.loc) or info.value.loc is not None
