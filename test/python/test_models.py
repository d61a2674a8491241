"""Real attention models as their authors wrote them, compiled and compared with eager.

transformers' LlamaModel, GraniteModel, GPT2Model and BertModel (called with ``input_ids`` and
with ``inputs_embeds``, ``sdpa`` and ``eager`` attention) and torch.nn's TransformerEncoderLayer
(pre- and post-norm, relu and gelu) and MultiheadAttention, from small configs with random
weights (``examples/models.py``; nothing is downloaded, no model is edited).  Every family runs
on 1, 4 and 32 cores at sequence lengths 64 and 100 (not a whole stick) in float16; float32 and
bfloat16 run for one model each.  ``bench/models.py`` runs the same families at a larger size.
"""

from __future__ import annotations

import itertools
import warnings

import pytest
import torch

from spyre_mlir.manifest import read_manifest

from e2e_support import ImportedPrograms, compile_and_check, example_models

pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")

models = example_models()
Model = models.Model

CORES = (1, 4, 32)


def _grid() -> list[tuple[object, int]]:
    """(model, cores): every way of calling every family, at both lengths, on every core count."""
    ways = [Model(f, attention=a, ids=i) for f in models.TRANSFORMERS for a in ("sdpa", "eager")
            for i in (False, True)]
    ways += [Model("encoder", norm_first=n, activation=a) for n in (False, True) for a in ("relu", "gelu")]
    ways += [Model("mha")]
    cases = []
    for k, (model, cores) in enumerate(itertools.product(ways, CORES)):
        cases.append((models.with_size(model, length=(64, 100)[k % 2]), cores))
    cases += [(Model("llama", attention="sdpa", dtype=torch.float32, length=100), 4),
              (Model("gpt2", attention="eager", ids=True, dtype=torch.float32), 32),
              (Model("bert", attention="sdpa", dtype=torch.bfloat16, length=100), 1),
              (Model("encoder", norm_first=True, activation="gelu", dtype=torch.bfloat16), 4)]
    return cases


CASES = _grid()
imported = ImportedPrograms({model.name: (lambda model=model: models.build(model)) for model, _ in CASES})


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("model,cores", CASES, ids=[f"{m.name}-{c}cores" for m, c in CASES])
def test_model_matches_eager(model, cores, tmp_path):
    compile_and_check(model.name, cores, tmp_path / "out", imported)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("family", models.TRANSFORMERS)
def test_masks_positions_and_rotary_tables_are_folded(family):
    """What a transformers model computes from shapes and buffers alone is evaluated by the
    import: no op of it reaches the device, and the count is recorded."""
    model = Model(family, attention="eager", ids=True)
    _, module = imported(model.name)
    func = module.ops.first
    assert func.attributes["spyre.folded_ops"].value.data > 0
    roles = [a.data["spyre.role"].data for a in func.arg_attrs.data]
    assert roles.count("input") == 1  # the ids; position and token-type buffers are folded


NARROW_HEADS = models.with_size(Model("llama", attention="sdpa"), heads=4)
narrow_heads = ImportedPrograms({NARROW_HEADS.name: lambda: models.build(NARROW_HEADS)})


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("cores", CORES)
def test_rotary_tables_read_in_another_layout_are_staged_in_it(cores, tmp_path):
    """Heads of 32 (half a float16 stick): the rotary tables compile-time evaluation made are read
    sticked on another dim.  The runtime stages them that way (the manifest says so) instead of a
    copy on every run, and no warning asks the user to stage what only the compiler makes."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile_and_check(NARROW_HEADS.name, cores, tmp_path / "out", narrow_heads)
    assert not [w for w in caught if "stage it that way" in str(w.message)]
    constants = [a for a in read_manifest(tmp_path / "out").args if a.role == "constant" and a.data is not None]
    assert any(a.layout.dim_order != tuple(sorted(a.layout.dim_order)) for a in constants)
