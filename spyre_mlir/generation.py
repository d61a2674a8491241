# Greedy generation on the interpreter (DESIGN §17): a transformers causal LM compiled as
# two programs with static shapes through transformers' own static-cache export recipe
# (TorchExportableModuleWithStaticCache): a prefill over the prompt (its positions known
# at compile time) and a decode step of one token at a data position; both write the KV
# cache in place.  Reads a model and its prompt; writes two output directories (temporary
# unless given) and returns the generated tokens.
"""``generate(model, input_ids, max_new_tokens=...)``: what ``model.generate(input_ids,
do_sample=False, max_new_tokens=...)`` returns, computed on the simulated Spyre.

The prefill runs once, staging the weights; the decode program shares that device memory
(:meth:`CompiledProgram.share`): the weights staged once, and each decode step reads and
extends the cache the prefill wrote, on the device."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import NUMERICS_IEEE, check_numerics, round_up
from spyre_mlir.limits import STICK_BYTES


class _Prefill(torch.nn.Module):
    """The prompt through the static-cache recipe, at the positions ``0 .. prompt - 1``."""

    def __init__(self, recipe: torch.nn.Module, prompt: int):
        super().__init__()
        self.recipe = recipe
        self.register_buffer("positions", torch.arange(prompt), persistent=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.recipe(input_ids=input_ids, cache_position=self.positions)


class _Decode(torch.nn.Module):
    """One token per sequence through the static-cache recipe, at the position ``cache_position``."""

    def __init__(self, recipe: torch.nn.Module):
        super().__init__()
        self.recipe = recipe

    def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        return self.recipe(input_ids=input_ids, cache_position=cache_position)


def _padded_step(recipe: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                 position_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
    """The static-cache recipe's forward with a padding mask and position ids: the logits of
    ``input_ids`` written into the cache at ``cache_position``."""
    for layer in recipe.static_cache.layers:
        layer.cumulative_length.copy_(cache_position[0])
    return recipe.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                        past_key_values=recipe.static_cache, use_cache=True).logits


def _prompt_positions(prompt_mask: torch.Tensor) -> torch.Tensor:
    """The position ids transformers' ``generate`` gives a padded prompt: each token's count of
    tokens before it, 0 at a pad."""
    return (prompt_mask.cumsum(-1) - 1).masked_fill(prompt_mask == 0, 0)


class _PaddedPrefill(_Prefill):
    """The prompts of one padded batch.  Its padding is the program's: the mask over the cache (1 at
    each token, 0 at each pad, as transformers pads the mask it is given) and the position ids
    ``generate`` derives from it are buffers, known when compiling."""

    def __init__(self, recipe: torch.nn.Module, prompt_mask: torch.Tensor, cache: int):
        super().__init__(recipe, prompt_mask.shape[1])
        mask = torch.zeros(prompt_mask.shape[0], cache, dtype=torch.long)
        mask[:, :prompt_mask.shape[1]] = prompt_mask
        self.register_buffer("mask", mask, persistent=False)
        self.register_buffer("position_ids", _prompt_positions(prompt_mask), persistent=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return _padded_step(self.recipe, input_ids, self.mask, self.position_ids, self.positions)


class _PaddedDecode(_Decode):
    """One token per sequence of one padded batch at ``cache_position``: every position but the
    prompt's pads is attended (causality hides those not written yet), and a sequence's position id
    follows its prompt's last one, as ``generate`` counts it (after a right pad, 1)."""

    def __init__(self, recipe: torch.nn.Module, prompt_mask: torch.Tensor, cache: int):
        super().__init__(recipe)
        batch, prompt = prompt_mask.shape
        mask = torch.ones(batch, cache, dtype=torch.long)
        mask[:, :prompt] = prompt_mask
        self.register_buffer("mask", mask, persistent=False)
        self.register_buffer("offsets", _prompt_positions(prompt_mask)[:, -1:] + 1 - prompt, persistent=False)

    def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        return _padded_step(self.recipe, input_ids, self.mask, cache_position[None] + self.offsets, cache_position)


_UNSUPPORTED_PROCESSING = {"repetition_penalty": 1.0, "no_repeat_ngram_size": 0, "encoder_repetition_penalty": 1.0,
                           "bad_words_ids": None, "suppress_tokens": None, "begin_suppress_tokens": None,
                           "forced_bos_token_id": None, "forced_eos_token_id": None, "min_length": 0,
                           "min_new_tokens": None, "sequence_bias": None}
"""Generation-config fields that change the logits before the argmax, and their neutral values."""


@dataclass
class Generation:
    """What :func:`generate` computed: the tokens, and each step's logits (``[batch, vocab]``
    float32: the prefill's last position, then every decode step's)."""

    tokens: torch.Tensor
    logits: list[torch.Tensor] = field(default_factory=list)


def static_cache_recipe(model: Any, batch: int, length: int) -> torch.nn.Module:
    """transformers' ``TorchExportableModuleWithStaticCache`` around ``model``: a static KV cache
    of ``length`` positions for ``batch`` sequences, held as buffers the programs write in place."""
    from transformers import GenerationConfig
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    saved = model.generation_config
    model.generation_config = GenerationConfig(**{**saved.to_dict(), "use_cache": True,
                                                  "cache_implementation": "static"})
    try:
        return TorchExportableModuleWithStaticCache(model, batch_size=batch, max_cache_len=length)
    finally:
        model.generation_config = saved


def cache_length(prompt: int, max_new_tokens: int, model: Any) -> int:
    """The static cache's positions for ``prompt + max_new_tokens`` tokens: rounded up to whole
    sticks of the model's dtype (positions past the last token are never attended), so that the
    cache is laid out once, never padded by a copy on every step."""
    dtype = getattr(model, "dtype", torch.float32)
    per_stick = STICK_BYTES // torch.empty((), dtype=dtype).element_size()
    return round_up(prompt + max_new_tokens, per_stick)


def compile_generation(model: Any, batch: int, prompt: int, max_new_tokens: int, *, cores: int | None = None,
                       out_dir: str | os.PathLike[str] | None = None,
                       attention_mask: torch.Tensor | None = None) -> tuple[Any, Any]:
    """The prefill and decode programs (:class:`~spyre_mlir.pipeline.CompiledProgram`) of ``model``
    for ``batch`` prompts of ``prompt`` tokens and ``max_new_tokens`` more: one static cache of
    :func:`cache_length` positions, written in place by both.  A padding ``attention_mask``
    (``[batch, prompt]``, 0 at a pad: :func:`is_padded`) is compiled into both programs, which
    then serve that batch's padding only.  ``out_dir`` (if given) receives ``prefill/`` and
    ``decode/``."""
    from spyre_mlir.pipeline import compile

    cache = cache_length(prompt, max_new_tokens, model)
    recipe = static_cache_recipe(model, batch, cache)
    ids = torch.zeros(batch, prompt, dtype=torch.long)
    directories = (None, None) if out_dir is None else (Path(out_dir) / "prefill", Path(out_dir) / "decode")
    if is_padded(attention_mask):
        prompt_mask = (attention_mask != 0).long()
        modules = (_PaddedPrefill(recipe, prompt_mask, cache), _PaddedDecode(recipe, prompt_mask, cache))
    else:
        modules = (_Prefill(recipe, prompt), _Decode(recipe))
    inputs = ((ids,), (ids[:, :1], torch.tensor([prompt])))
    with torch.no_grad():
        prefill, decode = (compile(module, example, cores=cores, out_dir=directory)
                           for module, example, directory in zip(modules, inputs, directories))
    return prefill, decode


def generate(model: Any, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
             max_new_tokens: int, cores: int | None = None, numerics: str = NUMERICS_IEEE) -> torch.Tensor:
    """Greedy generation of ``max_new_tokens`` tokens on the interpreter: what
    ``model.generate(input_ids, attention_mask=attention_mask, do_sample=False,
    max_new_tokens=max_new_tokens)`` returns for a transformers ``*ForCausalLM`` (a
    ``torch.LongTensor`` ``[batch, prompt + new]``; a sequence that emits an end-of-sequence
    token continues with the pad token, and generation stops early once every sequence has).

    ``attention_mask`` (0 at a pad, left or right) makes a batch of prompts of different lengths,
    compiled into both programs (:func:`compile_generation`); ``numerics`` is the interpreter's (``'dlfloat16'``: float16 as the device stores it)."""
    return generate_steps(model, input_ids, attention_mask=attention_mask, max_new_tokens=max_new_tokens,
                          cores=cores, numerics=numerics).tokens


def generate_steps(model: Any, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                   max_new_tokens: int, cores: int | None = None, numerics: str = NUMERICS_IEEE,
                   programs: Sequence[Any] | None = None) -> Generation:
    """:func:`generate`, with each step's logits (:class:`Generation`); ``programs`` are the
    prefill and decode programs of :func:`compile_generation` when already compiled."""
    check_numerics(numerics)
    input_ids = _checked_prompt(input_ids, attention_mask, max_new_tokens)
    config = getattr(model, "generation_config", None)
    _check_processing(config)
    batch, prompt = input_ids.shape
    prefill, decode = programs or compile_generation(model, batch, prompt, max_new_tokens, cores=cores,
                                                     attention_mask=attention_mask)
    eos = _token_ids(getattr(config, "eos_token_id", None))
    pad = getattr(config, "pad_token_id", None)
    pad = eos[0] if pad is None and eos else pad
    unfinished = torch.ones(batch, dtype=torch.bool)
    tokens, steps = input_ids, []
    logits = prefill.run(input_ids, numerics=numerics)[:, -1].float()
    decode.reset()
    decode.share(prefill)
    for step in range(max_new_tokens):
        steps.append(logits)
        chosen = logits.argmax(-1)
        if eos:
            chosen = torch.where(unfinished, chosen, torch.full_like(chosen, pad))
            unfinished &= ~torch.isin(chosen, torch.tensor(eos))
        tokens = torch.cat([tokens, chosen[:, None]], dim=1)
        if (eos and not unfinished.any()) or step == max_new_tokens - 1:
            break
        logits = decode.run(chosen[:, None], torch.tensor([prompt + step]), numerics=numerics)[:, -1].float()
    return Generation(tokens, steps)


def is_padded(attention_mask: torch.Tensor | None) -> bool:
    """Whether ``attention_mask`` pads some prompt (a 0): the programs then carry the batch's padding
    (:func:`compile_generation`)."""
    return attention_mask is not None and not bool((attention_mask != 0).all())


def _checked_prompt(input_ids: Any, attention_mask: Any, max_new_tokens: int) -> torch.Tensor:
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.dtype.is_floating_point:
        raise SpyreError("input_ids must be an integer tensor [batch, prompt]")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise SpyreError(f"max_new_tokens must be a positive integer, got {max_new_tokens!r}")
    if attention_mask is not None:
        if not isinstance(attention_mask, torch.Tensor) or tuple(attention_mask.shape) != tuple(input_ids.shape):
            raise SpyreError(f"attention_mask must be a tensor of the shape of input_ids {list(input_ids.shape)}")
        if not bool(((attention_mask == 0) | (attention_mask == 1)).all()):
            raise SpyreError("attention_mask must hold 0 (a pad) and 1 (a token) only")
        if not bool(attention_mask.any(-1).all()):
            raise SpyreError("attention_mask leaves a prompt without a token")
    return input_ids.long()


def _check_processing(config: Any) -> None:
    """Refuse a generation config that changes the logits before the argmax (generate() takes none)."""
    for name, neutral in _UNSUPPORTED_PROCESSING.items():
        value = getattr(config, name, neutral)
        if value not in (neutral, None) and not (name == "min_length" and value == 0):
            raise SpyreError(f"the model's generation config sets {name}={value!r}, which generate() does not "
                             "apply; greedy generation here is the plain argmax")


def _token_ids(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


@dataclass(frozen=True)
class GenerationCheck:
    """:func:`generate_steps` against transformers' ``generate`` on the same prompt."""

    tokens: torch.Tensor
    """transformers' tokens ``[batch, prompt + new]``."""
    first_difference: int | None
    """The first generated step (0-based) whose token differs in some sequence; None when all match."""
    logit_errors: list[float]
    """The largest absolute logit difference of each step up to and including the first differing one
    (later steps see different tokens)."""

    @property
    def matches(self) -> bool:
        return self.first_difference is None

    def summary(self) -> str:
        """One line: the steps that match and the largest logit error."""
        worst = max(self.logit_errors, default=0.0)
        if self.matches:
            return (f"{len(self.logit_errors)} generated tokens equal transformers' generate "
                    f"(largest logit error {worst:.3g})")
        return (f"step {self.first_difference} is the first whose token differs from transformers' generate "
                f"(largest logit error up to it {worst:.3g})")


def check_generation(model: Any, input_ids: torch.Tensor, generation: Generation, *,
                     attention_mask: torch.Tensor | None = None) -> GenerationCheck:
    """Run ``model.generate`` greedily for as many new tokens as ``generation`` asked for and compare
    its tokens and per-step logits with ``generation``'s."""
    new = len(generation.logits)
    with torch.no_grad():
        eager = model.generate(input_ids, attention_mask=attention_mask, do_sample=False, max_new_tokens=new,
                               return_dict_in_generate=True, output_logits=True)
    prompt = input_ids.shape[1]
    ours, theirs = generation.tokens[:, prompt:], eager.sequences[:, prompt:]
    steps = max(ours.shape[1], theirs.shape[1])
    first = next((s for s in range(steps) if s >= ours.shape[1] or s >= theirs.shape[1]
                  or not torch.equal(ours[:, s], theirs[:, s])), None)
    compared = steps if first is None else first + 1
    errors = [float((generation.logits[s] - eager.logits[s].float()).abs().max())
              for s in range(min(compared, len(generation.logits), len(eager.logits)))]
    return GenerationCheck(eager.sequences, first, errors)
