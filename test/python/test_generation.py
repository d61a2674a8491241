"""Generation end to end (DESIGN §17): decode steps through transformers' static-cache export
recipe (``TorchExportableModuleWithStaticCache``), strict and non-strict, compile for 1, 4 and 32
cores and match eager step after step with the KV cache kept on the device; greedy generation
(``spyre_mlir.generate``, ``spyre-generate``) returns transformers' tokens; and what cannot run is
one clear error.
"""

from __future__ import annotations

import copy
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

import spyre_mlir  # noqa: E402
from spyre_mlir.diagnostics import SpyreError  # noqa: E402
from spyre_mlir.importer import import_program  # noqa: E402
from spyre_mlir.manifest import read_manifest  # noqa: E402
from spyre_mlir.pipeline import CompiledProgram, CompileOptions, compile_module  # noqa: E402
from spyre_mlir.generation import (  # noqa: E402
    _Decode,
    check_generation,
    compile_generation,
    generate_steps,
    static_cache_recipe,
)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import generation as examples  # noqa: E402

CACHE = 16


def _cache_names(recipe: torch.nn.Module) -> list[str]:
    return [name for name, _ in recipe.named_buffers() if "cache" in name and "cumulative" not in name]


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("family", ["llama", "granite"])
@pytest.mark.parametrize("strict", [False, True])
def test_static_cache_decode_steps_match_eager(family, cores, strict, tmp_path):
    """Three decode steps at positions 5, 6, 7 of a 16-position cache that eager prefilled: each
    step's logits and the cache after it equal eager's (grouped-query attention: 4 heads, 2 KV
    heads)."""
    model = examples.causal_lm(family)
    recipe = static_cache_recipe(model, 1, CACHE)
    with torch.no_grad():
        recipe(input_ids=examples.prompt(length=5), cache_position=torch.arange(5))
    eager = copy.deepcopy(recipe)
    inputs = (torch.tensor([[7]]), torch.tensor([5]))
    if strict:  # transformers' own convert_and_export_with_cache exports strictly
        with torch.no_grad():
            exported = torch.export.export(_Decode(recipe), inputs, strict=True)
        directory = compile_module(import_program(exported), tmp_path / "out", CompileOptions(cores=cores),
                                   log=io.StringIO())
        program = CompiledProgram(directory, exported)
    else:
        with torch.no_grad():
            program = spyre_mlir.compile(_Decode(recipe), inputs, cores=cores)
    # The cache buffers, as the export names them (strict export names them by the path it read them).
    written = [arg.name for arg in read_manifest(program.directory).args if arg.written]
    assert len(written) == len(_cache_names(recipe)) == 4
    program.set_state({arg: getattr(recipe, name).numpy() for arg, name in zip(written, _cache_names(recipe))})
    for position, token in [(5, 7), (6, 100), (7, 3)]:
        ids, where = torch.tensor([[token]]), torch.tensor([position])
        with torch.no_grad():
            want = eager(input_ids=ids, cache_position=where)
        got = program.run(ids, where)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        state = program.state()
        for arg, name in zip(written, _cache_names(eager)):
            np.testing.assert_allclose(state[arg], getattr(eager, name).numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("family", ["llama", "granite"])
def test_greedy_generation_equals_transformers(family):
    model, (ids,) = getattr(examples, family)()
    generation = generate_steps(model, ids, max_new_tokens=8, cores=4)
    check = check_generation(model, ids, generation)
    assert check.matches, check.summary()
    assert torch.equal(generation.tokens, check.tokens)
    assert generation.tokens.shape == (1, ids.shape[1] + 8) and generation.tokens.dtype == torch.long


def test_float16_generation_with_heads_of_80_over_a_prompt_of_100_equals_transformers():
    """Heads of 80 merged back into a hidden dim of 160, which the output projection reads padded to
    192: the merge writes the heads as a nest of rows of 80, so the padding is whole rows (240).
    Before, both programs stopped in the lowering ("192 elements, not a multiple of the stride 80")."""
    model = examples.causal_lm("llama", hidden=160, heads=2, kv_heads=1, dtype=torch.float16)
    ids = examples.prompt(length=100)
    generation = generate_steps(model, ids, max_new_tokens=4, cores=32)
    check = check_generation(model, ids, generation)
    assert check.matches, check.summary()


def test_generate_is_the_public_api_and_batches_prompts_of_one_length():
    # A head dim of 32: a whole float32 stick, so the batch's heads do not share one.
    model = examples.causal_lm("llama", hidden=128)
    ids = examples.prompt(batch=2, length=6)
    tokens = spyre_mlir.generate(model, ids, attention_mask=torch.ones_like(ids), max_new_tokens=4, cores=4)
    with torch.no_grad():
        want = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=4)
    assert torch.equal(tokens, want)


def test_dlfloat16_generation_reports_its_first_differing_step():
    model = examples.causal_lm("llama", dtype=torch.float16)
    ids = examples.prompt()
    generation = generate_steps(model, ids, max_new_tokens=4, cores=4, numerics="dlfloat16")
    check = check_generation(model, ids, generation)
    assert len(check.logit_errors) >= 1 and all(np.isfinite(check.logit_errors))
    assert ("equal transformers' generate" in check.summary()) == check.matches


def test_what_generation_cannot_run_is_one_clear_error():
    model = examples.causal_lm("llama")
    ids = examples.prompt(batch=2, length=6)
    for bad, why in ((torch.full_like(ids, 2), "attention_mask must hold 0 .a pad. and 1 .a token. only"),
                     (torch.zeros_like(ids), "attention_mask leaves a prompt without a token"),
                     (torch.ones(2, 5, dtype=torch.long), r"attention_mask must be a tensor of the shape of input_ids")):
        with pytest.raises(SpyreError, match=why):
            spyre_mlir.generate(model, ids, attention_mask=bad, max_new_tokens=2)
    with pytest.raises(SpyreError, match="max_new_tokens must be a positive integer"):
        spyre_mlir.generate(model, ids, max_new_tokens=0)
    prefill, decode = compile_generation(model, 1, 6, 2, cores=1)
    with pytest.raises(SpyreError, match=r"input 'input_ids' expects int32 \[1, 6\], given int64 \[1, 9\]"):
        prefill.run(examples.prompt(length=9))
    with pytest.raises(SpyreError, match=r"expects int32 \[1, 1\], given int64 \[2, 1\]"):
        decode.run(torch.tensor([[1], [2]]), torch.tensor([6]))
    with pytest.raises(SpyreError, match=r"input 'cache_position' is 32, outside \[0, 32\)"):
        decode.run(torch.tensor([[1]]), torch.tensor([32]))


def test_spyre_generate_prints_the_tokens_and_checks_them(tmp_path):
    done = subprocess.run([sys.executable, "-m", "spyre_mlir.tools.spyre_generate",
                           f"{ROOT / 'examples/generation.py'}:granite", "--max-new-tokens", "3", "--cores", "4",
                           "--check", "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    model, (ids,) = examples.granite()
    with torch.no_grad():
        want = model.generate(ids, do_sample=False, max_new_tokens=3)
    assert done.stdout.split() == [str(t) for t in want[0].tolist()]
    assert "3 generated tokens equal transformers' generate" in done.stderr
    assert (tmp_path / "out" / "prefill" / "manifest.json").is_file()
    assert (tmp_path / "out" / "decode" / "manifest.json").is_file()


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("family, cores", [("llama", 1), ("llama", 4), ("llama", 32), ("granite", 4)])
def test_a_decode_step_with_a_dynamic_cache_input_matches_eager(family, cores):
    """transformers' ``register_dynamic_cache_export_support`` recipe: the cache is an input whose
    layers start from empty tensors (lifted constants, concatenated with the past), which
    ``run_decompositions()`` itself refuses on re-tracing the cache; the import drops them and
    decomposes with the inputs flattened.  The compiled program takes the cache as the model does."""
    step, (ids, cache) = examples.dynamic_cache_step(family)
    with torch.no_grad():
        want = step(ids, copy.deepcopy(cache))
        program = spyre_mlir.compile(step, (ids, copy.deepcopy(cache)), cores=cores)
        got = program.run(ids, copy.deepcopy(cache))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert torch.equal(got.argmax(-1), want.argmax(-1))


def _padded(batch: int, length: int, pads: dict[int, slice]) -> tuple[torch.Tensor, torch.Tensor]:
    ids = examples.prompt(batch=batch, length=length)
    mask = torch.ones_like(ids)
    for row, where in pads.items():
        mask[row, where] = 0
    return ids, mask


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("family, cores, new, prompts", [
    ("llama", 4, 8, _padded(2, 6, {0: slice(0, 2)})),                       # left
    ("granite", 32, 4, _padded(2, 6, {1: slice(4, 6)})),                    # right
    ("qwen2", 1, 4, _padded(3, 5, {0: slice(0, 3), 2: slice(0, 1)})),       # three prompts, left
], ids=["left", "right", "three-left"])
def test_a_padded_batch_generates_transformers_tokens(family, cores, new, prompts):
    """Prompts of different lengths: the batch's padding is compiled into both programs (the mask
    over the cache, and the position ids transformers' generate derives from it: after a right pad
    the next position is 1), and every sequence's tokens and logits are transformers'."""
    ids, mask = prompts
    model = examples.causal_lm(family, hidden=128)
    generation = generate_steps(model, ids, attention_mask=mask, max_new_tokens=new, cores=cores)
    check = check_generation(model, ids, generation, attention_mask=mask)
    assert check.matches, check.summary()
    assert torch.equal(generation.tokens, check.tokens)
    assert max(check.logit_errors) < 1e-4


def test_prefill_and_decode_share_the_weights_and_the_cache_on_the_device():
    """The decode program holds the prefill's device memory for every parameter and buffer: the
    weights are staged once, and the cache the prefill wrote is the bytes the decode step reads and
    extends (no hand-over through the host).  Its run then stages only the token and the position."""
    model, (ids,) = examples.llama()
    prefill, decode = compile_generation(model, 1, ids.shape[1], 4, cores=4)
    with pytest.raises(SpyreError, match="has not run yet"):
        decode.share(prefill)
    prefill.run(ids)
    shared = decode.share(prefill)
    manifest = read_manifest(decode.directory)
    assert sorted(shared) == sorted(arg.name for arg in manifest.inputs if arg.role in ("parameter", "buffer"))
    theirs = {alloc.arg.name: alloc.data for alloc in prefill._loaded().devices[-1].allocations}
    for alloc in decode._loaded().devices[-1].allocations:
        assert (alloc.arg.name in shared) == np.shares_memory(alloc.data, theirs.get(alloc.arg.name, alloc.data[:0]))
    cache = {name: value.copy() for name, value in prefill.state().items()}
    outputs, _stats = decode.run_by_name(torch.tensor([[3]]), torch.tensor([ids.shape[1]]))
    after = prefill.state()  # the prefill's device sees the position the decode step wrote
    for name, before in cache.items():
        changed = np.nonzero((after[name] != before).any(axis=(0, 1, 3)))[0]
        assert changed.tolist() == [ids.shape[1]], name
    with pytest.raises(SpyreError, match="holds ieee values; stage it anew to run in dlfloat16"):
        decode.run(torch.tensor([[3]]), torch.tensor([ids.shape[1] + 1]), numerics="dlfloat16")


def test_programs_of_two_models_share_nothing():
    """Sharing is by tensor, not by name: the same architecture with other weights stages its own."""
    model, (ids,) = examples.llama()
    other = examples.causal_lm("llama", seed=1)
    prefill, _ = compile_generation(model, 1, ids.shape[1], 4, cores=4)
    _, decode = compile_generation(other, 1, ids.shape[1], 4, cores=4)
    prefill.run(ids)
    assert decode.share(prefill) == []
    want = compile_generation(other, 1, ids.shape[1], 4, cores=4)[1].run(torch.tensor([[3]]), torch.tensor([0]))
    torch.testing.assert_close(decode.run(torch.tensor([[3]]), torch.tensor([0])), want)


@pytest.mark.parametrize("cores", [1, 32])
def test_a_decoder_called_as_written_returns_its_dynamic_cache(cores):
    """``LlamaModel(input_ids)`` with its default ``use_cache``: the output holds a ``DynamicCache``
    of this pass's keys and values.  Export flattens it (transformers' registration, made by the
    compiler when transformers is loaded) and decomposition re-traces the program with its outputs
    flat (a re-built cache would lift new empty constants); ``run`` returns the cache rebuilt."""
    import transformers

    torch.manual_seed(0)
    model = transformers.LlamaModel(transformers.LlamaConfig(
        vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2)).eval()
    assert model.config.use_cache
    ids = torch.randint(0, 256, (1, 16))
    with torch.no_grad():
        want = model(ids)
        got = spyre_mlir.compile(model, (ids,), cores=cores).run(ids)
    assert type(got.past_key_values) is type(want.past_key_values)
    torch.testing.assert_close(got.last_hidden_state, want.last_hidden_state, rtol=1e-4, atol=1e-4)
    for mine, theirs in zip(got.past_key_values.layers, want.past_key_values.layers):
        torch.testing.assert_close(mine.keys, theirs.keys, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(mine.values, theirs.values, rtol=1e-4, atol=1e-4)
