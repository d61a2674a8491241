"""Attention heads narrower than a stick, compiled and compared with eager.

A head of 32 fp16 elements (or 16, or 16 fp32) fills part of a stick of the projection's hidden
dim, which it shares with the next head: spyre-stickify reads such heads through a restickify of
the projection sticked on its sequence dim, and merges them back the same way
(``test/Transforms/stickify/narrow-heads.mlir``).  torch.nn's TransformerEncoderLayer and
transformers' LlamaModel (``examples/models.py``) at ``hidden=128``, on 1, 4 and 32 cores.
"""

from __future__ import annotations


import pytest
import torch

from e2e_support import ImportedPrograms, compile_and_check, example_models

models = example_models()
Model = models.Model

CORES = (1, 4, 32)
MODELS = [Model("encoder", heads=4), Model("encoder", heads=8), Model("encoder", heads=8, dtype=torch.float32),
          Model("llama", attention="eager", heads=4), Model("llama", attention="sdpa", heads=4)]
CASES = [(model, cores) for model in MODELS for cores in CORES] + [
    (Model("encoder", heads=8, dtype=torch.float32, length=100), 4),
    (Model("llama", attention="sdpa", heads=4, length=100), 32),
]
"""(model, cores): heads of 32 and 16 fp16 elements and of 16 fp32 on every core count, and two
at a length of partial sticks."""

imported = ImportedPrograms({f"{m.name}-{m.heads}heads": (lambda m=m: models.build(m)) for m, _ in CASES})


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("model,cores", CASES, ids=[f"{m.name}-{m.heads}heads-{c}cores" for m, c in CASES])
def test_heads_narrower_than_a_stick_match_eager(model, cores, tmp_path):
    if model.family in models.TRANSFORMERS:
        pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    compile_and_check(f"{model.name}-{model.heads}heads", cores, tmp_path / "out", imported)
