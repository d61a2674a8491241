"""1-d convolutions (Whisper's encoder front end: kernel 3, stride 1 then 2, padding 1) and 2-d
ones (ViT's patch embedding) compiled as shifted matmuls (``spyre_mlir.importer.convolution``)
and compared with eager: one tap's matmul per kernel position over the zero-padded input read
every ``stride``-th position, summed; grouped ones per group, depthwise ones as per-tap products,
transposed ones as products placed every stride-th position; pooling, nearest upsampling and
unfolding.  A grouped transposed convolution is one located error naming the op."""

from __future__ import annotations

import pytest
import torch

import spyre_mlir
from e2e_support import vision_model_matches_eager
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.interpreter import compare, tolerance_for


def _matches_eager(conv: torch.nn.Module, x: torch.Tensor) -> None:
    conv = conv.to(x.dtype).eval()
    with torch.no_grad():
        want = conv(x)
        got = spyre_mlir.compile(conv, (x,), cores=4).run(x)
    assert got.shape == want.shape
    compare("convolution", got.numpy(), want.numpy(), tolerance_for(str(x.dtype).removeprefix("torch.")))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("stride,padding", [(1, 1), (2, 1), (1, 0), (3, 2)])
def test_a_1d_convolution_matches_eager(stride, padding, dtype):
    torch.manual_seed(0)
    _matches_eager(torch.nn.Conv1d(16, 32, kernel_size=3, stride=stride, padding=padding),
                   torch.randn(2, 16, 66, dtype=dtype))


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


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("kernel,stride,padding,size", [(4, 4, 0, 16), (3, 1, 1, 12), (3, 2, 1, 11), (2, 3, 0, 10)])
def test_a_2d_convolution_matches_eager(kernel, stride, padding, size, dtype):
    """Channels last, one matmul per tap: a patch embedding (stride = kernel), a same-size 3x3,
    and strided ones whose padded input is not a whole number of strides (11 + 2 rows read every
    second, 10 every third)."""
    torch.manual_seed(0)
    _matches_eager(torch.nn.Conv2d(3, 64, kernel_size=kernel, stride=stride, padding=padding),
                   torch.randn(2, 3, size, size, dtype=dtype))


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("dtype,cores", [(torch.float16, 1), (torch.float16, 4), (torch.float16, 32),
                                         (torch.float32, 4)])
def test_the_vit_model_matches_eager(dtype, cores):
    """ViT's patch embedding (``conv2d`` with stride = kernel, then ``flatten(2).transpose(1, 2)``)
    and the class token put before the patches: the flattened grid is read as the matmul wrote
    it, rows ``(p floordiv 4) * 4 + p mod 4`` being rows ``p``."""
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    model = transformers.ViTModel(transformers.ViTConfig(
        hidden_size=128, num_hidden_layers=1, num_attention_heads=2, intermediate_size=256, image_size=32,
        patch_size=8, num_channels=3)).to(dtype).eval()
    vision_model_matches_eager(model, dtype, cores)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("dtype,cores", [(torch.float16, 1), (torch.float16, 4), (torch.float16, 32),
                                         (torch.float32, 4)])
@pytest.mark.parametrize("family", ["DeiT", "Beit"])
def test_deit_and_beit_match_eager(family, dtype, cores):
    """DeiT and BEiT start their sequence with a [CLS] token of zeros, layer-normalised with ``eps``
    1e-12 (NaN in float16 before layer norm computed in float32).  BEiT adds a relative position
    bias: a table of 17 x 17 rows, read as a nest of rows of 17 and padded to whole rows of the
    nest (a located error before: 320 elements, not a multiple of the stride 17)."""
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    options = {"use_relative_position_bias": True} if family == "Beit" else {}
    config = getattr(transformers, f"{family}Config")(
        hidden_size=64, num_hidden_layers=1, num_attention_heads=2, intermediate_size=128, image_size=32,
        patch_size=8, num_channels=3, **options)
    model = getattr(transformers, f"{family}Model")(config).to(dtype).eval()
    vision_model_matches_eager(model, dtype, cores)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("dtype,cores", [(torch.float32, 1), (torch.float32, 32), (torch.float16, 4)],
                         ids=["fp32-1", "fp32-32", "fp16-4"])
def test_mobilevit_matches_eager(dtype, cores):
    """MobileViT unfolds its feature map into patches, attends across them and folds them back: a
    chain of views that divides the positions and merges them again, copied by spyre-fold-views
    into the tensor its 1x1 convolution reads.  The copy is sticked as the chain reads its storage
    (on the channels), not as the chain's last link reads its source (on the positions, a dim of 2
    inside each stick: a located error before).  In float16 the channels of 32 and 48 share
    sticks of 64 with the patch positions: their copies unflatten them off the stick first."""
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    model = transformers.MobileViTModel(transformers.MobileViTConfig(
        image_size=64, patch_size=2, hidden_sizes=[32, 48, 64], neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
        num_attention_heads=2))
    for norm in model.modules():  # batch norms with statistics of their own, so the output is not all zeros
        if isinstance(norm, torch.nn.modules.batchnorm._BatchNorm):
            norm.running_mean.uniform_(-1, 1)
            norm.running_var.uniform_(0.5, 2)
            torch.nn.init.uniform_(norm.weight, 0.5, 1.5)
            torch.nn.init.uniform_(norm.bias, -0.5, 0.5)
    model = model.to(dtype).eval()
    pixels = torch.randn(1, 3, 64, 64, dtype=dtype)
    with torch.no_grad():
        want = model(pixels)
        got = spyre_mlir.compile(model, (pixels,), cores=cores).run(pixels)
    assert want.last_hidden_state.abs().max() > 0.5
    tolerance = tolerance_for(str(dtype).removeprefix("torch."))
    compare("hidden", got.last_hidden_state.numpy(), want.last_hidden_state.numpy(), tolerance)
    compare("pooled", got.pooler_output.numpy(), want.pooler_output.numpy(), tolerance)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("conv,shape", [
    (lambda: torch.nn.Conv1d(64, 64, 8, padding=4, groups=4), (1, 64, 50)),
    (lambda: torch.nn.Conv1d(32, 64, 3, stride=2, padding=1, groups=32), (1, 32, 33)),
    (lambda: torch.nn.Conv2d(64, 128, 3, padding=1, groups=2), (1, 64, 8, 8)),
], ids=["1d-groups-4", "1d-one-channel-per-group", "2d-groups-2"])
def test_a_grouped_convolution_matches_eager(conv, shape, dtype):
    """A convolution per group of channels (wav2vec2's positional convolution has 16), concatenated
    along the channels; one input channel per group reads its channel's slice as a copy of one
    element per stick where the padded input is sticked on a dim of one element."""
    torch.manual_seed(0)
    _matches_eager(conv(), torch.randn(*shape, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("conv,shape", [
    (lambda: torch.nn.Conv1d(64, 64, 9, padding=4, groups=64), (2, 64, 40)),
    (lambda: torch.nn.Conv2d(64, 64, 7, padding=3, groups=64), (1, 64, 14, 14)),
    (lambda: torch.nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=32), (1, 32, 15, 15)),
], ids=["1d-kernel-9", "2d-7x7", "2d-3x3-stride-2"])
def test_a_depthwise_convolution_matches_eager(conv, shape, dtype):
    """One channel per group (ConvBERT's separable 1-d, ConvNeXt's 7x7): channels last, per tap
    the shifted window times the tap's per-channel weights, summed; no matmul of one channel."""
    torch.manual_seed(0)
    _matches_eager(conv(), torch.randn(*shape, dtype=dtype))


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("dtype,cores", [(torch.float16, 1), (torch.float16, 4), (torch.float16, 32),
                                         (torch.float32, 4)])
def test_the_convnext_model_matches_eager(dtype, cores):
    """ConvNeXt: a patchifying 4x4 convolution, depthwise 7x7 ones, a 2x2 downsampling one and
    layer norms over the channels of a channels-first image."""
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    model = transformers.ConvNextModel(transformers.ConvNextConfig(
        num_channels=3, num_stages=2, hidden_sizes=[32, 64], depths=[1, 1], image_size=32,
        patch_size=4)).to(dtype).eval()
    vision_model_matches_eager(model, dtype, cores)


@pytest.mark.parametrize("pad,value", [((3, 5), 0.0), ((0, 0, 2, 1), 1.5), ((-2, 3, 1, -1), 0.0)],
                         ids=["last-dim", "rows-with-a-value", "cropped"])
def test_constant_padding_matches_eager(pad, value):
    """``F.pad`` (``aten.constant_pad_nd``, ConvBERT's before its separable convolution): fills
    concatenated around the input, a negative count cropping it."""
    torch.manual_seed(0)
    x = torch.randn(8, 64, dtype=torch.float16)

    def padded(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pad(x, pad, value=value) * 2.0

    got = spyre_mlir.compile(padded, (x,), cores=4).run(x)
    compare("pad", got.numpy(), padded(x).numpy(), tolerance_for("float16"))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("kernel,stride,padding,size", [(3, 2, 1, 16), (2, 2, 0, 10), (3, 2, 1, 9)])
def test_a_max_pool_and_its_indices_match_eager(kernel, stride, padding, size, dtype):
    """The maximum of each window of the input padded with -inf, and its index into the channel's
    plane: the first window position holding it, as eager's."""
    torch.manual_seed(0)
    x = torch.randn(2, 8, size, size, dtype=dtype)

    def pooled(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.nn.functional.max_pool2d(x, kernel, stride, padding, return_indices=True)

    values, indices = spyre_mlir.compile(pooled, (x,), cores=4).run(x)
    want_values, want_indices = pooled(x)
    compare("max", values.numpy(), want_values.numpy(), tolerance_for(str(dtype).removeprefix("torch.")))
    assert torch.equal(indices.long(), want_indices)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("pool", [lambda: torch.nn.AvgPool2d(2), lambda: torch.nn.AvgPool2d(3, 2, 1),
                                  lambda: torch.nn.AvgPool2d(3, 2, 1, count_include_pad=False),
                                  lambda: torch.nn.AvgPool2d(3, 1, 1, divisor_override=4)],
                         ids=["2x2", "3x3-padded", "3x3-padding-not-counted", "divisor-override"])
def test_an_average_pool_matches_eager(pool, dtype):
    """The sum of the windows of the zero-padded input over the window's size, the count of its
    positions inside the input, or the divisor given."""
    torch.manual_seed(0)
    _matches_eager(pool(), torch.randn(1, 8, 9, 9, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("pool,shape", [
    (lambda: torch.nn.AvgPool2d(2, ceil_mode=True), (1, 8, 9, 10)),
    (lambda: torch.nn.AvgPool2d(3, 2, 1, ceil_mode=True), (1, 8, 8, 9)),
    (lambda: torch.nn.AvgPool2d(4, 3, 1, ceil_mode=True, count_include_pad=False), (1, 8, 9, 9)),
    (lambda: torch.nn.AvgPool2d(320, ceil_mode=True), (1, 16, 1, 1)),
], ids=["2x2", "3x3-padded", "4x4-padding-not-counted", "efficientnet-pooler"])
def test_an_average_pool_in_ceil_mode_matches_eager(pool, shape, dtype):
    """With ``ceil_mode`` a last window reaches past the input and its padding; its divisor counts
    only its positions inside them.  EfficientNet's pooler (a kernel of 320 over a 1 x 1 map)
    reads one position of one window.  They were rejected (``aten.avg_pool2d.default``)."""
    torch.manual_seed(0)
    _matches_eager(pool(), torch.randn(*shape, dtype=dtype))


@pytest.mark.parametrize("size", [(1, 1), (2, 1)])
def test_an_adaptive_average_pool_into_a_dividing_size_matches_eager(size):
    torch.manual_seed(0)
    x = torch.randn(2, 16, 8, 8, dtype=torch.float16)
    pool = torch.nn.AdaptiveAvgPool2d(size)
    got = spyre_mlir.compile(pool, (x,), cores=4).run(x)
    compare("pool", got.numpy(), pool(x).numpy(), tolerance_for("float16"))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("upsample", [lambda x: torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest"),
                                      lambda x: torch.nn.functional.interpolate(x, size=(12, 18), mode="nearest")],
                         ids=["scale-2", "size-2x3"])
def test_a_nearest_upsampling_by_whole_factors_matches_eager(upsample, dtype):
    """Each element repeated along new dims merged into its own: a view, copied once."""
    torch.manual_seed(0)
    x = torch.randn(1, 8, 6, 6, dtype=dtype)
    got = spyre_mlir.compile(lambda x: upsample(x) + 1.0, (x,), cores=4).run(x)
    compare("upsampled", got.numpy(), (upsample(x) + 1.0).numpy(), tolerance_for(str(dtype).removeprefix("torch.")))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("size", [(6, 6), (12, 12), (18, 12)], ids=["same-size", "scale-2", "scale-3x2"])
def test_a_bilinear_upsampling_matches_eager(size, dtype):
    """Into the input's own size (BEiT resizes its relative position table so: a copy) or whole
    multiples of it: per phase of the factor two weighted neighbours, the edges repeated, the
    phases interleaved."""
    torch.manual_seed(0)
    x = torch.randn(1, 8, 6, 6, dtype=dtype)

    def upsampled(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.interpolate(x, size=size, mode="bilinear") + 1.0

    got = spyre_mlir.compile(upsampled, (x,), cores=4).run(x)
    compare("bilinear", got.numpy(), upsampled(x).numpy(), tolerance_for(str(dtype).removeprefix("torch.")))


def test_a_nearest_upsampling_by_another_factor_is_one_located_error():
    x = torch.randn(1, 8, 6, 6)
    with pytest.raises(SpyreError, match=r"unsupported ATen op 'aten\.upsample_nearest2d\.vec'") as info:
        spyre_mlir.compile(lambda x: torch.nn.functional.interpolate(x, size=(9, 9), mode="nearest"), (x,), cores=4)
    assert info.value.loc is not None


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("dtype,cores", [(torch.float16, 1), (torch.float16, 4), (torch.float16, 32),
                                         (torch.float32, 4)])
def test_the_resnet_model_matches_eager(dtype, cores):
    """ResNet: a 7x7 stride-2 stem, batch norms at inference, a 3x3 stride-2 max pool, basic
    blocks with strided shortcuts, and an adaptive average pool into 1 x 1."""
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    model = transformers.ResNetModel(transformers.ResNetConfig(
        num_channels=3, embedding_size=16, hidden_sizes=[32, 64], depths=[1, 1],
        layer_type="basic")).to(dtype).eval()
    vision_model_matches_eager(model, dtype, cores)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("conv,shape", [
    (lambda: torch.nn.ConvTranspose1d(16, 32, 4, stride=2, padding=1), (1, 16, 20)),
    (lambda: torch.nn.ConvTranspose1d(8, 16, 5, stride=3, padding=2, dilation=2), (1, 8, 7)),
    (lambda: torch.nn.ConvTranspose2d(16, 32, 2, stride=2), (1, 16, 6, 6)),
    (lambda: torch.nn.ConvTranspose2d(16, 32, 3, stride=2, padding=1, output_padding=1), (1, 16, 5, 5)),
], ids=["1d-stride-2", "1d-dilated-stride-3", "2d-upsample-2", "2d-output-padding"])
def test_a_transposed_convolution_matches_eager(conv, shape, dtype):
    """Per tap the input times the tap's kernel, placed every stride-th position: each phase of the
    stride sums its taps' shifted products, and the phases interleave along the positions."""
    torch.manual_seed(0)
    _matches_eager(conv(), torch.randn(*shape, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("unfold,shape", [
    (lambda: torch.nn.Unfold(kernel_size=[9, 1], padding=[4, 0]), (1, 64, 16, 1)),
    (lambda: torch.nn.Unfold(kernel_size=2, stride=2), (1, 4, 8, 8)),
], ids=["9x1-padded", "2x2-patches"])
def test_an_unfold_matches_eager(unfold, shape, dtype):
    """``nn.Unfold`` (``im2col``): per tap the window of the zero-padded input, its positions
    flattened, the taps concatenated inside each channel; overlapping windows are slices."""
    torch.manual_seed(0)
    layer = unfold()

    def unfolded(x: torch.Tensor) -> torch.Tensor:
        return layer(x) * 2.0

    x = torch.randn(*shape, dtype=dtype)
    got = spyre_mlir.compile(unfolded, (x,), cores=4).run(x)
    compare("unfold", got.numpy(), unfolded(x).numpy(), tolerance_for(str(dtype).removeprefix("torch.")))


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("heads,dtype,cores", [(2, torch.float16, 1), (2, torch.float16, 4), (2, torch.float16, 32),
                                               (2, torch.float32, 4), (4, torch.float16, 1), (4, torch.float16, 4),
                                               (4, torch.float16, 32)])
def test_the_convbert_model_matches_eager(heads, dtype, cores):
    """ConvBERT: a separable 1-d convolution (depthwise, then pointwise) and a span-based dynamic
    convolution over an ``nn.Unfold`` of 9 positions, beside attention.  With 4 attention heads
    (2 of them convolution heads), the dynamic kernels of both heads share each row's stick of
    18 and are read as rows of 9 taps (regression: a copy that read past each head)."""
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    hidden = 32 * heads
    model = transformers.ConvBertModel(transformers.ConvBertConfig(
        vocab_size=128, hidden_size=hidden, num_hidden_layers=1, num_attention_heads=heads,
        intermediate_size=2 * hidden, embedding_size=hidden, conv_kernel_size=9, head_ratio=2)).to(dtype).eval()
    ids = torch.randint(0, 128, (1, 16 * heads // 2))
    with torch.no_grad():
        want = model(ids).last_hidden_state
        got = spyre_mlir.compile(model, (ids,), cores=cores).run(ids).last_hidden_state
    compare("convbert", got.numpy(), want.numpy(), tolerance_for(str(dtype).removeprefix("torch.")))


def test_a_grouped_transposed_convolution_is_one_located_error():
    conv = torch.nn.ConvTranspose2d(4, 8, kernel_size=3, stride=2, groups=2).eval()
    with pytest.raises(SpyreError, match=r"unsupported ATen op 'aten\.convolution\.default'") as info:
        spyre_mlir.compile(conv, (torch.randn(1, 4, 8, 8),), cores=4)
    assert info.value.loc is not None


@pytest.mark.parametrize("conv,shape", [
    (torch.nn.Conv2d(8, 16, 3, padding="valid"), (1, 8, 10, 10)),
    (torch.nn.Conv2d(8, 8, 3, padding="valid", groups=8), (1, 8, 9, 9)),
    (torch.nn.Conv1d(8, 16, 3, padding="valid"), (2, 8, 12)),
], ids=["conv2d", "depthwise", "conv1d"])
def test_regression_padding_valid_is_no_padding_in_every_spatial_dim(conv, shape):
    """``padding="valid"`` (EfficientNet's convolutions) reaches ``aten.convolution`` as ``[0]``,
    one value for every spatial dim: the 2-d lowering unpacked two and failed with an internal
    error.  It matches eager."""
    torch.manual_seed(0)
    _matches_eager(conv, torch.randn(*shape))
