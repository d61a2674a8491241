"""Decode steps and prefills of two batches of real models, compiled and compared with eager.

A decode step of transformers' Llama and Granite (``examples/models.py``: grouped-query attention
with 4 heads and 2 of keys and values, 2 layers) takes one token and the keys and values of 63 past
positions as inputs, puts them in a ``DynamicCache``, and returns the hidden state and each layer's
keys and values with the new position concatenated.  At one token no sequence dim has more than one
element: heads narrower than a stick, and ``rotate_half``'s halves of them, are read from the
projection sticked on its single row (one element per stick).  A prefill of two batches at a length
that is not a whole number of sticks (96 in float16, 100) reads the rows ``b * L + l`` of each
projection unflattened into ``[B, L]``, sticked on ``l`` padded per batch
(``test/Transforms/stickify/one-token.mlir``, ``flattened-rows.mlir``).  Each failed in the lowering
("shares a stick with another dim") before.
"""

from __future__ import annotations


import pytest
import torch

from spyre_mlir.manifest import read_manifest

from e2e_support import ImportedPrograms, compile_and_check, example_models

pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")

models = example_models()
Model = models.Model

f16, f32 = torch.float16, torch.float32
LLAMA_DECODE = Model("llama", ids=True, dtype=f32, length=1, heads=4, layers=2, past=63)
GRANITE_DECODE = Model("granite", ids=True, dtype=f32, length=1, hidden=64, heads=4, layers=2, past=63)
"""Heads of 32 and of 16 float32 elements: rotate_half's halves are half a stick."""
ONE_TOKEN = [Model("llama", ids=True, dtype=f32, length=1, heads=4, layers=2),
             Model("granite", ids=True, dtype=f16, length=1, heads=4, layers=2)]
TWO_BATCHES = [Model("llama", ids=True, dtype=f16, length=96, heads=4, layers=2, batch=2),
               Model("llama", ids=True, dtype=f32, length=100, heads=4, layers=2, batch=2),
               Model("granite", ids=True, dtype=f16, length=100, hidden=64, heads=4, layers=2, batch=2)]

imported = ImportedPrograms({m.name: (lambda m=m: models.build(m))
                             for m in [LLAMA_DECODE, GRANITE_DECODE, *ONE_TOKEN, *TWO_BATCHES]})


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("model", [LLAMA_DECODE, GRANITE_DECODE], ids=lambda m: m.family)
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_decode_step_with_the_past_as_inputs_matches_eager(model, cores, tmp_path):
    compile_and_check(model.name, cores, tmp_path / "out", imported)
    manifest = read_manifest(tmp_path / "out")
    keys = [a for a in manifest.args if a.role == "input" and a.shape[-2:] == (63, model.hidden // model.heads)]
    assert len(keys) == 2 * model.layers  # the past keys and values are plain inputs
    assert [a.shape[-2] for a in manifest.outputs[1:]] == [64] * 2 * model.layers  # 63 + 1 positions


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("model, cores", list(zip(ONE_TOKEN, [4, 32])), ids=lambda m: getattr(m, "name", m))
def test_a_prefill_of_one_token_matches_eager(model, cores, tmp_path):
    compile_and_check(model.name, cores, tmp_path / "out", imported)


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("model, cores", list(zip(TWO_BATCHES, [4, 32, 1])), ids=lambda m: getattr(m, "name", m))
def test_a_prefill_of_two_batches_at_partial_sticks_matches_eager(model, cores, tmp_path):
    compile_and_check(model.name, cores, tmp_path / "out", imported)
