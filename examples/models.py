# Real attention models as their authors wrote them, built from small configs
# with random weights and a fixed seed (nothing is downloaded): transformers'
# Llama, Granite, GPT-2 and BERT, torch.nn's TransformerEncoderLayer and
# MultiheadAttention, more transformers families (MORE_FAMILIES); and a decode
# step of Llama or Granite, whose past keys and values are inputs.  Read by the model tests and bench/models.py; each
# zero-argument factory below also compiles from the command line:
#
#   spyre-compile examples/models.py:llama -o out/llama
#   spyre-run out/llama --check examples/models.py:llama --stats
"""Model factories: ``build(Model(...))`` returns ``(callable, example_inputs)``.

A transformers model is called as a user calls it, ``model(input_ids=ids)`` or
``model(inputs_embeds=x)``, and returns ``last_hidden_state``; its config sets
the attention implementation (``"sdpa"`` or ``"eager"``) and ``use_cache=False``
(a compiled program returns no cache).  A decode step (``past`` > 0,
:class:`DecodeStep`) takes the keys and values of the past positions as inputs,
puts them in a ``DynamicCache`` and returns the hidden state and the keys and
values the cache holds after the step.  The models are not edited; each is a
submodule of the module that calls it (:class:`FromIds`, :class:`FromEmbeds`,
:class:`SelfAttention`), so that its weights export as parameters (a closure
over the model would make them lifted constants, which compile-time evaluation
may fold).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

TRANSFORMERS = ("llama", "granite", "gpt2", "bert")

MORE_FAMILIES = ("phi", "neox", "gptj", "roberta", "t5", "clip", "granitemoe", "mixtral", "qwen2moe", "vit",
                 "whisper", "convnext", "resnet", "wav2vec2", "convbert")
"""transformers' families called one way each (ids; ViT, ConvNeXt and ResNet with pixels, Whisper's
encoder with features, wav2vec2 with audio): partial and interleaved rotary, encoders, mixture
of experts, convolutional front ends and convolutional networks (ConvBERT's convolutions beside
attention)."""

FAMILIES = (*TRANSFORMERS, "encoder", "mha", *MORE_FAMILIES)
"""transformers' LlamaModel, GraniteModel, GPT2Model, BertModel; torch.nn's
TransformerEncoderLayer and MultiheadAttention; then :data:`MORE_FAMILIES`."""


@dataclass(frozen=True)
class Model:
    """One model to build: its family, how it is called, its size."""

    family: str
    attention: str = "sdpa"
    """transformers: ``"sdpa"`` or ``"eager"``."""
    ids: bool = False
    """transformers: called with ``input_ids`` (else ``inputs_embeds``)."""
    norm_first: bool = False
    """TransformerEncoderLayer: pre-norm."""
    activation: str = "relu"
    """TransformerEncoderLayer: ``"relu"`` or ``"gelu"``."""
    dtype: torch.dtype = torch.float16
    length: int = 64
    hidden: int = 128
    heads: int = 2
    layers: int = 1
    batch: int = 1
    vocab: int = 100
    past: int = 0
    """Llama, Granite: a decode step of ``length`` new tokens after ``past`` positions whose keys
    and values are inputs (0: no cache)."""
    padding: str = ""
    """transformers called with ids: ``"left"`` or ``"right"`` pads every row but the first with an
    ``attention_mask`` input (row ``b`` has ``b * length // (2 * batch)`` padded positions);
    ``""``: no mask."""
    mask_dtype: torch.dtype = torch.int64
    """The ``attention_mask``'s dtype (``torch.int64``, as tokenizers return it, or ``torch.bool``)."""

    @property
    def name(self) -> str:
        """A short unique name (``llama-sdpa-ids-fp16-64``, ``llama-sdpa-ids-fp32-1-b2-past63``)."""
        dtype = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}[self.dtype]
        if self.family in TRANSFORMERS:
            how = f"{self.attention}-{'ids' if self.ids else 'embeds'}"
        elif self.family == "encoder":
            how = f"{'prenorm' if self.norm_first else 'postnorm'}-{self.activation}"
        else:
            how = "self"
        size = "" if self.hidden == 128 and self.layers == 1 else f"-h{self.hidden}x{self.layers}"
        batch = "" if self.batch == 1 else f"-b{self.batch}"
        past = f"-past{self.past}" if self.past else ""
        mask = f"-{self.padding}-{str(self.mask_dtype).removeprefix('torch.')}" if self.padding else ""
        return f"{self.family}-{how}-{dtype}-{self.length}{size}{batch}{past}{mask}"


def _config(model: Model) -> Any:
    import transformers

    common = dict(vocab_size=model.vocab, use_cache=False, attn_implementation=model.attention)
    if model.family == "gpt2":
        return transformers.GPT2Config(n_embd=model.hidden, n_layer=model.layers, n_head=model.heads,
                                       n_positions=max(256, model.length), bos_token_id=0, eos_token_id=0,
                                       **common)
    sizes = dict(hidden_size=model.hidden, intermediate_size=2 * model.hidden, num_hidden_layers=model.layers,
                 num_attention_heads=model.heads, max_position_embeddings=max(256, model.length), **common)
    if model.family == "bert":
        return transformers.BertConfig(**sizes)
    cls = transformers.LlamaConfig if model.family == "llama" else transformers.GraniteConfig
    return cls(num_key_value_heads=_kv_heads(model), **sizes)


def _more_family(model: Model) -> tuple[Any, torch.Tensor]:
    """A model of :data:`MORE_FAMILIES` at ``model``'s size, and its example input (seed 1)."""
    import transformers

    t = transformers
    sizes = dict(hidden_size=model.hidden, intermediate_size=2 * model.hidden, num_hidden_layers=model.layers,
                 num_attention_heads=model.heads)
    decoder = dict(vocab_size=model.vocab, use_cache=False, **sizes)
    moe = dict(decoder, num_key_value_heads=_kv_heads(model), num_experts_per_tok=2)
    built = {
        "phi": lambda: t.PhiModel(t.PhiConfig(partial_rotary_factor=0.5, **decoder)),
        "neox": lambda: t.GPTNeoXModel(t.GPTNeoXConfig(rotary_pct=0.25, **decoder)),
        "gptj": lambda: t.GPTJModel(t.GPTJConfig(vocab_size=model.vocab, n_embd=model.hidden, n_layer=model.layers,
                                                 n_head=model.heads, rotary_dim=model.hidden // model.heads // 2,
                                                 n_positions=max(256, model.length), bos_token_id=0, eos_token_id=0,
                                                 use_cache=False)),
        "roberta": lambda: t.RobertaModel(t.RobertaConfig(vocab_size=model.vocab, pad_token_id=1,
                                                          max_position_embeddings=max(256, model.length) + 2,
                                                          **sizes), add_pooling_layer=False),
        "t5": lambda: t.T5EncoderModel(t.T5Config(vocab_size=model.vocab, d_model=model.hidden,
                                                  d_kv=model.hidden // model.heads, d_ff=2 * model.hidden,
                                                  num_layers=model.layers, num_heads=model.heads)),
        "clip": lambda: t.CLIPTextModel(t.CLIPTextConfig(vocab_size=model.vocab, bos_token_id=0, eos_token_id=2,
                                                         pad_token_id=1, max_position_embeddings=max(256, model.length),
                                                         **sizes)),
        "granitemoe": lambda: t.GraniteMoeModel(t.GraniteMoeConfig(num_local_experts=4, **moe)),
        "mixtral": lambda: t.MixtralModel(t.MixtralConfig(num_local_experts=4, **moe)),
        "qwen2moe": lambda: t.Qwen2MoeModel(t.Qwen2MoeConfig(
            num_experts=4, moe_intermediate_size=model.hidden // 2, shared_expert_intermediate_size=model.hidden,
            **moe)),
        "vit": lambda: t.ViTModel(t.ViTConfig(image_size=32, patch_size=8, num_channels=3, **sizes),
                                  add_pooling_layer=False),
        "whisper": lambda: t.WhisperModel(t.WhisperConfig(
            vocab_size=model.vocab, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
            d_model=model.hidden, encoder_layers=model.layers, decoder_layers=1, encoder_attention_heads=model.heads,
            decoder_attention_heads=model.heads, num_mel_bins=16, max_source_positions=model.length // 2,
            encoder_ffn_dim=2 * model.hidden, decoder_ffn_dim=2 * model.hidden)).get_encoder(),
        "convnext": lambda: t.ConvNextModel(t.ConvNextConfig(
            num_channels=3, num_stages=2, hidden_sizes=[model.hidden // 2, model.hidden],
            depths=[model.layers, model.layers], image_size=32, patch_size=4)),
        "resnet": lambda: t.ResNetModel(t.ResNetConfig(
            num_channels=3, embedding_size=model.hidden // 4, hidden_sizes=[model.hidden // 2, model.hidden],
            depths=[model.layers, model.layers], layer_type="basic")),
        "convbert": lambda: t.ConvBertModel(t.ConvBertConfig(vocab_size=model.vocab, embedding_size=model.hidden,
                                                          conv_kernel_size=9, head_ratio=2, **sizes)),
        "wav2vec2": lambda: t.Wav2Vec2Model(t.Wav2Vec2Config(
            conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
            num_conv_pos_embedding_groups=4, feat_extract_norm="group", **sizes)),
    }
    net = built[model.family]().to(model.dtype).eval()
    inputs = torch.Generator().manual_seed(1)
    if model.family in ("vit", "convnext", "resnet"):
        example = torch.randn(model.batch, 3, 32, 32, generator=inputs).to(model.dtype)
    elif model.family == "wav2vec2":  # ten samples per frame of the feature encoder's strides
        example = torch.randn(model.batch, 10 * model.length, generator=inputs).to(model.dtype)
    elif model.family == "whisper":
        example = torch.randn(model.batch, 16, model.length, generator=inputs).to(model.dtype)
    else:
        example = torch.randint(3, model.vocab, (model.batch, model.length), generator=inputs)
    return net, example


def _kv_heads(model: Model) -> int:
    """Llama and Granite's key and value heads: half the query heads (grouped-query attention)."""
    return max(1, model.heads // 2)


def _transformers_model(model: Model) -> Any:
    import transformers

    classes = {"llama": transformers.LlamaModel, "granite": transformers.GraniteModel,
               "gpt2": transformers.GPT2Model, "bert": transformers.BertModel}
    kwargs = {"add_pooling_layer": False} if model.family == "bert" else {}
    return classes[model.family](_config(model), **kwargs)


class _Caller(torch.nn.Module):
    """Holds ``net`` as a submodule; subclasses say how they call it."""

    def __init__(self, net: torch.nn.Module):
        super().__init__()
        self.net = net


class FromIds(_Caller):
    """``net(input_ids=...).last_hidden_state``."""

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.net(input_ids=input_ids).last_hidden_state


class FromEmbeds(_Caller):
    """``net(inputs_embeds=...).last_hidden_state``."""

    def forward(self, inputs_embeds: torch.Tensor) -> torch.Tensor:
        return self.net(inputs_embeds=inputs_embeds).last_hidden_state


class FromInput(_Caller):
    """``net(x).last_hidden_state`` for a model's one positional input (ids, pixels, features)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).last_hidden_state


class FromIdsAndMask(_Caller):
    """``net(input_ids=..., attention_mask=...).last_hidden_state``."""

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.net(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def attention_mask(model: Model) -> torch.Tensor:
    """The ``attention_mask`` of a padded batch: ones, but row ``b`` has ``b * length // (2 * batch)``
    zeros at its start (``padding="left"``) or end (``"right"``)."""
    mask = torch.ones(model.batch, model.length, dtype=torch.int64)
    for b in range(model.batch):
        pad = b * model.length // (2 * model.batch)
        if pad:
            if model.padding == "left":
                mask[b, :pad] = 0
            else:
                mask[b, model.length - pad:] = 0
    return mask.to(model.mask_dtype)


class DecodeStep(_Caller):
    """``net(input_ids=..., past_key_values=cache)`` with ``cache`` a ``DynamicCache`` of the past
    keys and values (``past`` holds each layer's keys, then its values); returns the hidden state
    and each layer's keys and values after the step, the new positions concatenated."""

    def forward(self, input_ids: torch.Tensor, *past: torch.Tensor) -> tuple[torch.Tensor, ...]:
        import transformers

        cache = transformers.DynamicCache(config=self.net.config)
        for layer in range(len(past) // 2):
            cache.update(past[2 * layer], past[2 * layer + 1], layer)
        out = self.net(input_ids=input_ids, past_key_values=cache, use_cache=True)
        present = [t for layer in out.past_key_values.layers for t in (layer.keys, layer.values)]
        return (out.last_hidden_state, *present)


class SelfAttention(_Caller):
    """``MultiheadAttention`` of ``x`` with itself, without the weights."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x, x, x, need_weights=False)[0]


def build(model: Model) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    """The model (random weights, seed 0) and example inputs (seed 1)."""
    torch.manual_seed(0)
    if model.family in MORE_FAMILIES:
        net, example = _more_family(model)
        return FromInput(net), (example,)
    if model.past and (model.family not in ("llama", "granite") or not model.ids):
        raise ValueError(f"a decode step is built for llama and granite called with ids, not {model.name}")
    if model.padding and (model.family not in TRANSFORMERS or not model.ids or model.past):
        raise ValueError(f"a padded batch is built for transformers' models called with ids, not {model.name}")
    if model.family in TRANSFORMERS:
        net = _transformers_model(model).to(model.dtype).eval()
        inputs = torch.Generator().manual_seed(1)
        if model.ids:
            ids = torch.randint(0, model.vocab, (model.batch, model.length), generator=inputs)
            if model.past:
                shape = (model.batch, _kv_heads(model), model.past, model.hidden // model.heads)
                past = [torch.randn(*shape, generator=inputs).to(model.dtype) for _ in range(2 * model.layers)]
                return DecodeStep(net), (ids, *past)
            if model.padding:
                return FromIdsAndMask(net), (ids, attention_mask(model))
            return FromIds(net), (ids,)
        embeds = torch.randn(model.batch, model.length, model.hidden, generator=inputs).to(model.dtype)
        return FromEmbeds(net), (embeds,)
    x = torch.randn(model.batch, model.length, model.hidden, generator=torch.Generator().manual_seed(1))
    x = x.to(model.dtype)
    if model.family == "encoder":
        net = torch.nn.TransformerEncoderLayer(model.hidden, model.heads, 2 * model.hidden, dropout=0.0,
                                               activation=model.activation, norm_first=model.norm_first,
                                               batch_first=True)
        return net.to(model.dtype).eval(), (x,)
    net = torch.nn.MultiheadAttention(model.hidden, model.heads, batch_first=True).to(model.dtype).eval()
    return SelfAttention(net), (x,)


def with_size(model: Model, **size: Any) -> Model:
    """``model`` at another size (``hidden``, ``heads``, ``layers``, ``length``, ``dtype``)."""
    return replace(model, **size)


def llama():
    return build(Model("llama", ids=True))


def granite():
    return build(Model("granite", ids=True))


def gpt2():
    return build(Model("gpt2", ids=True))


def bert():
    return build(Model("bert", ids=True))


def encoder():
    return build(Model("encoder", norm_first=True, activation="gelu"))


def mha():
    return build(Model("mha"))


def mixtral():
    """Mixtral: 4 experts, 2 per token (the dense form at 64 tokens)."""
    return build(Model("mixtral"))


def vit():
    """ViT: 16 patches of 8x8 of a 32x32 image, and the class token."""
    return build(Model("vit"))


def convnext():
    """ConvNeXt: a 4x4 patchifying convolution, depthwise 7x7 ones, layer norms over channels."""
    return build(Model("convnext"))


def resnet():
    """ResNet: a 7x7 stem, batch norms at inference, a max pool, basic blocks, an average pool."""
    return build(Model("resnet"))


def wav2vec2():
    """wav2vec2: strided 1-d convolutions, a group norm, a grouped positional convolution."""
    return build(Model("wav2vec2"))


def llama_padded():
    """Two prompts, the second padded on the left (as for generation), with an int64 attention mask."""
    return build(Model("llama", ids=True, dtype=torch.float32, heads=4, batch=2, padding="left"))


def bert_padded():
    """Two sentences, the second padded on the right, with an int64 attention mask."""
    return build(Model("bert", ids=True, dtype=torch.float32, heads=4, batch=2, padding="right"))


def llama_decode():
    """One token after 63 past positions, 4 heads of 32 and 2 of keys and values, 2 layers."""
    return build(Model("llama", ids=True, dtype=torch.float32, length=1, heads=4, layers=2, past=63))


def granite_decode():
    """As :func:`llama_decode`, of Granite at hidden 64 (heads of 16)."""
    return build(Model("granite", ids=True, dtype=torch.float32, length=1, hidden=64, heads=4, layers=2,
                       past=63))
