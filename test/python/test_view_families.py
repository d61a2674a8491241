"""Families whose attention reads views no single copy could lower, compiled and compared with
eager on 1, 4 and 32 cores (fp16; fp32 on 4):

- GPT-NeoX: rotary on 16 of each 64-element head of a fused QKV projection (``rotary_pct``
  0.25): the copy of the rotary part read the projection at ``h * 192 + d`` with ``d`` filling a
  quarter of a stick, and now reads it restickified onto its rows (``copy_padded_views``);
- Phi: rotary on half of each head (``partial_rotary_factor`` 0.5);
- GPT-J: interleaved rotary pairs (``x[..., ::2]``, ``x[..., 1::2]``): every second element of
  a head, read from the projection restickified onto its rows (``strided``) through an
  iteration dim of one element that steps over each pair (``add_gap_dims``);
- Llama with heads of 80 (not a multiple of a stick): 2 KV heads are 160 outputs, which their
  projection writes as 192 (3 sticks); restickified onto its rows for the heads' reads, that dim
  is padded to 240, whole heads (``nest_padding``);
- LlamaModel at batch 2 and sequence 100 (``rotate_half`` on ``b * 100 + l`` rows).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from xdsl.dialects import tensor
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir.affine import AffineDimExpr

transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")

import spyre_mlir  # noqa: E402
from e2e_support import outputs_match_eager, vision_model_matches_eager  # noqa: E402
from spyre_mlir.dialects.spyre import LayoutAttr, RestickifyOp, tensor_layout  # noqa: E402
from spyre_mlir.importer import export_model, import_program  # noqa: E402
from spyre_mlir.interpreter import compare, tolerance_for  # noqa: E402
from spyre_mlir.pipeline import compile_stages  # noqa: E402
from spyre_mlir.mlir_text import make_context  # noqa: E402


def _neox() -> Any:
    return transformers.GPTNeoXModel(transformers.GPTNeoXConfig(
        vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=1, num_attention_heads=2,
        rotary_pct=0.25, use_cache=False))


def _phi() -> Any:
    return transformers.PhiModel(transformers.PhiConfig(
        vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=1, num_attention_heads=2,
        partial_rotary_factor=0.5, use_cache=False))


def _gptj() -> Any:
    return transformers.GPTJModel(transformers.GPTJConfig(
        vocab_size=256, n_embd=128, n_layer=1, n_head=2, rotary_dim=32, n_positions=64, use_cache=False))


def _llama_heads_of_80() -> Any:
    return transformers.LlamaModel(transformers.LlamaConfig(
        vocab_size=256, hidden_size=320, intermediate_size=256, num_hidden_layers=1, num_attention_heads=4,
        num_key_value_heads=2, head_dim=80, use_cache=False))


def _llama() -> Any:
    return transformers.LlamaModel(transformers.LlamaConfig(
        vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=2, use_cache=False))


FAMILIES: dict[str, tuple[Callable[[], Any], tuple[int, int]]] = {
    "gpt-neox-rotary-quarter": (_neox, (1, 16)),
    "phi-rotary-half": (_phi, (1, 16)),
    "gpt-j-interleaved-rotary": (_gptj, (1, 16)),
    "llama-heads-of-80": (_llama_heads_of_80, (1, 16)),
    "llama-batch-2-length-100": (_llama, (2, 100)),
}
CASES = [(name, torch.float16, cores) for name in FAMILIES for cores in (1, 4, 32)] + [
    (name, torch.float32, 4) for name in FAMILIES]


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("name,dtype,cores", CASES, ids=[f"{n}-{str(d)[6:]}-{c}cores" for n, d, c in CASES])
def test_a_family_reading_views_at_any_offset_matches_eager(name, dtype, cores):
    factory, shape = FAMILIES[name]
    torch.manual_seed(0)
    model = factory().to(dtype).eval()
    ids = torch.randint(0, 256, shape)
    with torch.no_grad():
        want = model(ids).last_hidden_state
        got = spyre_mlir.compile(model, (ids,), cores=cores).run(ids).last_hidden_state
    assert got.dtype == want.dtype and got.shape == want.shape
    compare(name, got.numpy(), want.numpy(), tolerance_for(str(dtype).removeprefix("torch.")))


def _stickified_gptj() -> ModuleOp:
    """GPT-J's module over 64 tokens on 4 cores, through spyre-stickify."""
    torch.manual_seed(0)
    module = import_program(export_model(_gptj().half().eval(), (torch.randint(0, 256, (1, 64)),)))
    for stage in compile_stages(4):
        stage.apply(make_context(), module)
        if stage.name == "spyre-stickify":
            return module
    raise AssertionError("the pipeline has no spyre-stickify")


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
def test_regression_interleaved_rotary_pairs_are_copied_onto_their_tokens_not_their_two_heads():
    """GPT-J's rotary pairs, stacked and flattened back into each head, are copied sticked on a
    dim the copy steps along untangled: of the 64 tokens (one whole stick) and the 2 heads, the
    tokens.  Sticked on the heads, the copy was padded 32-fold and restickified back."""
    module = _stickified_gptj()
    interleaving = [op for op in module.walk() if isinstance(op, RestickifyOp)
                    and not all(isinstance(e, AffineDimExpr) for e in op.get_indexing_maps()[1].results)]
    assert len(interleaving) == 2  # the query's pairs and the key's
    for op in interleaving:
        layout = tensor_layout(op.result.type)
        assert layout.host_shape == (1, 64, 2, 32) and layout.stick_dim == 1


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
def test_regression_the_rotary_and_pass_through_parts_of_a_head_are_joined_on_their_tokens():
    """GPT-J joins each head's rotary part (32 of 64) and the rest (``torch.cat``): no stick dim
    holds both pieces whole but the batch, the 64 tokens and the 2 heads, which cost the copies
    alike; the joined buffer is sticked on the tokens.  Sticked on the heads (ties went to the
    innermost dim), it and the copies of the pieces into it were padded 32-fold."""
    module = _stickified_gptj()
    joined = [op.tensor for op in module.walk() if isinstance(op, tensor.EmptyOp)
              and tensor_layout(op.tensor.type).host_shape == (1, 64, 2, 64)]
    assert len(joined) == 2  # the query's and the key's
    layouts = [tensor_layout(r.type) for op in module.walk() for r in op.results
               if isinstance(r.type, TensorType) and isinstance(r.type.encoding, LayoutAttr)]
    sticked_on_heads = [lay for lay in layouts if lay.stick_dim is not None and lay.host_shape[lay.stick_dim] == 2]
    assert all(tensor_layout(v.type).stick_dim == 1 for v in joined) and not sticked_on_heads


class _CroppedWindowReverse(torch.nn.Module):
    """Swin's window reverse where the feature map was padded to whole windows: 3 x 3 windows of
    4 x 4 tokens back to a 12 x 12 map, cropped to 10 x 10 and flattened to 100 tokens, added to
    the residual and also returned as it is."""

    def forward(self, windows: torch.Tensor, shortcut: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        channels = windows.shape[-1]
        x = (windows * 2).view(1, 3, 3, 4, 4, channels).permute(0, 1, 3, 2, 4, 5).reshape(1, 12, 12, channels)
        x = x[:, :10, :10, :].reshape(1, 100, channels)
        return shortcut + x, x


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_regression_a_cropped_window_reverse_is_copied_in_whole_windows(cores):
    """The copy of a cropped window reverse read its rows at ``h floordiv 4`` and ``w floordiv 4``
    with ``h, w < 10``, writing them flattened (``10 * h + w``): it could not be widened to whole
    windows and failed in lowering ("not a sum of scaled dims"; transformers' Swin at image size
    40).  It is widened as the copy of one dim per token coordinate, 12 x 12, and matches eager."""
    windows = torch.randn(9, 16, 64, dtype=torch.float16)
    shortcut = torch.randn(1, 100, 64, dtype=torch.float16)
    outputs_match_eager(_CroppedWindowReverse(), (windows, shortcut), cores, ("sum", "cropped"))


class _PatchMerging(torch.nn.Module):
    """Swin's patch merging of an 8 x 8 map of 16 channels (fp32, 32 to a stick): each 2 x 2
    patch's four tokens concatenated along the channels (4 x 4 tokens of 64), flattened and
    layer-normed."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = (x * 2).view(1, 8, 8, 16)
        x = torch.cat([x[:, row::2, col::2, :] for col in range(2) for row in range(2)], dim=-1)
        return self.norm(x.view(1, 16, 64))


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_regression_a_norm_over_merged_patches_reads_them_sticked_on_their_channels(cores):
    """The concatenation along the channels puts pieces of 16 mid-stick, so it is sticked on its 4
    columns; the norm's mean read it through the flattening view ``4 * h + w`` and kept that stick,
    which its result then shared with the rows (``iteration dim d1 of 4 elements shares a stick
    with another dim`` in lowering; transformers' Swin whenever half its map's width is no whole
    number of sticks).  The mean now reads the merged patches restickified onto their channels, as
    the norm's pointwise ops do, and matches eager."""
    torch.manual_seed(0)
    outputs_match_eager(_PatchMerging().eval(), (torch.randn(1, 64, 16),), cores, ("merged",))


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("dtype,cores", [(torch.float32, 1), (torch.float32, 4), (torch.float32, 32),
                                         (torch.float16, 4)])
def test_swin_with_a_map_padded_to_whole_windows_matches_eager(dtype, cores):
    """transformers' Swin at image size 40: 10 x 10 patches, padded to 3 x 3 windows of 4 and
    cropped back (:func:`test_regression_a_cropped_window_reverse_is_copied_in_whole_windows`),
    then merged into 5 x 5 tokens of 64 channels, half a stick of columns
    (:func:`test_regression_a_norm_over_merged_patches_reads_them_sticked_on_their_channels`).
    Its hidden states and pooled output match eager."""
    torch.manual_seed(0)
    model = transformers.SwinModel(transformers.SwinConfig(
        image_size=40, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4)).to(dtype).eval()
    vision_model_matches_eager(model, dtype, cores, size=40)
