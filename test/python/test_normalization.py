"""Normalisations torch.export keeps whole (``spyre_mlir.importer.normalization``), compiled and
compared with eager: batch norm at inference after a convolution, group norm, and wav2vec2's
feature encoder (group norm, strided and grouped convolutions, weight normalisation); layer
norm of 16-bit floats, computed in float32 as eager computes it."""

from __future__ import annotations

import pytest
import torch

import spyre_mlir
from spyre_mlir.interpreter import compare, tolerance_for


def _matches_eager(module: torch.nn.Module, x: torch.Tensor, cores: int = 4) -> None:
    module = module.to(x.dtype).eval()
    with torch.no_grad():
        want = module(x)
        got = spyre_mlir.compile(module, (x,), cores=cores).run(x)
    compare("normalised", got.float().numpy(), want.float().numpy(), tolerance_for(str(x.dtype).removeprefix("torch.")))


def _with_statistics(module: torch.nn.Module) -> torch.nn.Module:
    """``module`` with random running statistics in its batch norms (not the identity's)."""
    for norm in module.modules():
        if isinstance(norm, torch.nn.modules.batchnorm._BatchNorm):
            norm.running_mean.uniform_(-1, 1)
            norm.running_var.uniform_(0.5, 2)
            torch.nn.init.uniform_(norm.weight, 0.5, 1.5)
            torch.nn.init.uniform_(norm.bias, -0.5, 0.5)
    return module


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("cores", [1, 4])
def test_a_convolution_then_batch_norm_matches_eager(dtype, cores):
    torch.manual_seed(0)
    block = _with_statistics(torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.BatchNorm2d(64),
                                                 torch.nn.ReLU()))
    _matches_eager(block, torch.randn(1, 3, 8, 8, dtype=dtype), cores)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_a_1d_batch_norm_matches_eager(dtype):
    torch.manual_seed(0)
    _matches_eager(_with_statistics(torch.nn.BatchNorm1d(64)), torch.randn(4, 64, 30, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("cores", [1, 4])
def test_a_group_norm_matches_eager(dtype, cores):
    """Four groups of 16 channels, each normalised over its channels and positions."""
    torch.manual_seed(0)
    norm = torch.nn.GroupNorm(4, 64)
    torch.nn.init.uniform_(norm.weight, 0.5, 1.5)
    torch.nn.init.uniform_(norm.bias, -0.5, 0.5)
    _matches_eager(norm, torch.randn(2, 64, 20, dtype=dtype) * 3 + 1, cores)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("dtype,cores", [(torch.float16, 1), (torch.float16, 4), (torch.float16, 32),
                                         (torch.float32, 4)])
def test_the_wav2vec2_model_matches_eager(dtype, cores):
    """wav2vec2: a feature encoder of strided 1-d convolutions, the first group-normalised, and a
    positional convolution in 4 groups under weight normalisation."""
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    model = transformers.Wav2Vec2Model(transformers.Wav2Vec2Config(
        hidden_size=64, num_hidden_layers=1, num_attention_heads=2, intermediate_size=128, conv_dim=(32, 32),
        conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
        feat_extract_norm="group")).to(dtype).eval()
    audio = torch.randn(1, 800, dtype=dtype)
    with torch.no_grad():
        want = model(audio).last_hidden_state
        got = spyre_mlir.compile(model, (audio,), cores=cores).run(audio).last_hidden_state
    compare("wav2vec2", got.numpy(), want.numpy(), tolerance_for(str(dtype).removeprefix("torch.")))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_layer_norm_of_a_constant_row_with_a_tiny_eps_is_finite_in_16_bit_floats(dtype, cores):
    """A row of zeros (DeiT's and BEiT's [CLS] token, initialised to zeros) has variance 0; ``eps``
    1e-12 is below float16's range.  Eager computes in float32: ``0 * rsqrt(0 + 1e-12) = 0``.  Before,
    the import computed in the input's type, ``var + eps`` rounded to 0, and the row was NaN."""
    torch.manual_seed(0)
    x = torch.randn(1, 17, 64, dtype=dtype)
    x[:, 0] = 0
    x[:, 5] = 3.0
    norm = torch.nn.LayerNorm(64, eps=1e-12)
    torch.nn.init.uniform_(norm.weight, 0.5, 1.5)
    torch.nn.init.uniform_(norm.bias, -0.5, 0.5)
    _matches_eager(norm, x, cores)
