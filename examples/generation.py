# Causal language models to generate text with, as users build them: transformers'
# *ForCausalLM families from small configs with random weights and a fixed seed
# (nothing is downloaded), each with a prompt.  Read by the generation tests and
# bench/generate.py; each zero-argument factory also runs from the command line:
#
#   spyre-generate examples/generation.py:llama --max-new-tokens 8 --check
"""Factories returning ``(model, (input_ids,))``: a causal LM and a prompt of token ids."""

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
