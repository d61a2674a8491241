# Causal language models to generate text with, as users build them: transformers'
# *ForCausalLM families from small configs with random weights and a fixed seed
# (nothing is downloaded), each with a prompt.  Read by the generation tests and
# bench/generate.py; each zero-argument factory also runs from the command line:
#
#   spyre-generate examples/generation.py:llama --max-new-tokens 8 --check
"""Factories returning ``(model, (input_ids,))``: a causal LM and a prompt of token ids; and
``(step, (input_ids, cache))``: one decode step with its ``DynamicCache`` as an input."""

from __future__ import annotations

from typing import Any

import torch

FAMILIES = ("llama", "granite", "qwen2", "mistral")
"""transformers' LlamaForCausalLM, GraniteForCausalLM, Qwen2ForCausalLM, MistralForCausalLM."""


def causal_lm(family: str, *, hidden: int = 64, heads: int = 4, kv_heads: int = 2, layers: int = 2,
              intermediate: int = 128, vocab: int = 256, dtype: torch.dtype = torch.float32, seed: int = 0) -> Any:
    """A ``family`` causal LM with random weights (seeded), in ``dtype``, in eval mode."""
    import transformers

    names = {"llama": "Llama", "granite": "Granite", "qwen2": "Qwen2", "mistral": "Mistral"}
    if family not in names:
        raise ValueError(f"unknown family {family!r}; expected one of {', '.join(FAMILIES)}")
    config = getattr(transformers, f"{names[family]}Config")(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv_heads, max_position_embeddings=512)
    torch.manual_seed(seed)
    model = getattr(transformers, f"{names[family]}ForCausalLM")(config).to(dtype).eval()
    return model


def prompt(batch: int = 1, length: int = 8, vocab: int = 256, seed: int = 1) -> torch.Tensor:
    """Random token ids ``[batch, length]`` (seeded)."""
    return torch.randint(0, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def llama():
    return causal_lm("llama"), (prompt(),)


def granite():
    return causal_lm("granite"), (prompt(),)


def qwen2():
    return causal_lm("qwen2"), (prompt(),)


def mistral():
    return causal_lm("mistral"), (prompt(),)


class CacheStep(torch.nn.Module):
    """One decode step of a causal LM with the past in a ``DynamicCache`` input, exported as
    transformers' ``register_dynamic_cache_export_support`` lets torch.export take it: the new
    token's logits (the cache object is extended in place, as ``generate`` does)."""

    def __init__(self, model: Any):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, past_key_values: Any) -> torch.Tensor:
        return self.model(input_ids=input_ids, past_key_values=past_key_values, use_cache=True).logits


def dynamic_cache_step(family: str = "llama", *, past: int = 6, **config: Any) -> tuple[CacheStep, tuple[Any, ...]]:
    """A ``family`` causal LM's decode step after a prompt of ``past`` tokens, and its inputs:
    the next token and the ``DynamicCache`` the prompt's forward pass filled."""
    from transformers.integrations.executorch import register_dynamic_cache_export_support

    register_dynamic_cache_export_support()
    model = causal_lm(family, **config)
    ids = prompt(length=past + 1)
    with torch.no_grad():
        cache = model(ids[:, :past], use_cache=True).past_key_values
    return CacheStep(model), (ids[:, past:], cache)


def llama_dynamic_cache():
    return dynamic_cache_step("llama")
