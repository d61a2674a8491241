"""Padded batches: transformers' decoder (Llama) and encoder (BERT) called with an ``attention_mask``
input, compiled and compared with eager.

The mask is data: an int64 (as tokenizers return it) or bool input, held on the device as 0/1 flags
in float16 (the manifest's ``host_dtype``; the runtime converts it when staging and refuses any other
value).  transformers builds the 4-D mask from it with ``padding_mask[batch_idx, kv_idx]``
(``aten.index.Tensor`` with compile-time ``arange`` grids: a view of the mask), ``bitwise_and`` with
the causal mask (a product of flags) and ``where`` (``where3``).  Every position eager defines
matches, padded query rows included (a left-padded row that sees no key is 0 in eager's ``sdpa``
and on the device), so the whole output is compared, in float32 and in float16 (at its tolerance).
"""

from __future__ import annotations


import pytest
import torch

import spyre_mlir
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.interpreter import run
from spyre_mlir.manifest import read_manifest

from e2e_support import ImportedPrograms, compile_and_check, example_models

pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")

models = example_models()
Model = models.Model

f32, i64 = torch.float32, torch.int64


def _padded(family: str, padding: str, mask_dtype: torch.dtype, batch: int, dtype: torch.dtype = f32) -> Model:
    return Model(family, ids=True, dtype=dtype, heads=4, batch=batch, padding=padding, mask_dtype=mask_dtype)


CASES = [  # (model, cores): every family, side, mask dtype, batch and core count at least once
    (_padded("llama", "left", i64, 2), 4),
    (_padded("llama", "right", i64, 2), 1),
    (_padded("llama", "right", torch.bool, 3), 32),
    (_padded("llama", "left", torch.bool, 3), 1),
    (_padded("bert", "right", i64, 2), 32),
    (_padded("bert", "left", i64, 3), 4),
    (_padded("bert", "right", torch.bool, 2), 1),
    (_padded("bert", "left", torch.bool, 3), 32),
    (_padded("llama", "left", i64, 2, torch.float16), 32),
    (_padded("bert", "right", torch.bool, 3, torch.float16), 4),
]

ONES = [_padded("llama", "right", i64, 2), _padded("bert", "right", i64, 2)]


def _with_ones(model: Model):
    fn, (ids, mask) = models.build(model)
    return fn, (ids, torch.ones_like(mask))


imported = ImportedPrograms({
    **{m.name: (lambda m=m: models.build(m)) for m, _ in CASES},
    **{f"{m.name}-ones": (lambda m=m: _with_ones(m)) for m in ONES},
})


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("model, cores", CASES, ids=lambda c: getattr(c, "name", c))
def test_a_padded_batch_matches_eager(model, cores, tmp_path):
    compile_and_check(model.name, cores, tmp_path / "out", imported)
    mask = next(a for a in read_manifest(tmp_path / "out").inputs if a.name == "attention_mask")
    assert (mask.dtype, mask.host_dtype, mask.range) == ("float16", str(model.mask_dtype)[6:], (0, 2))


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("model", ONES, ids=lambda m: m.family)
def test_an_all_ones_mask_matches_eager(model, tmp_path):
    compile_and_check(f"{model.name}-ones", 4, tmp_path / "out", imported)


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
def test_a_mask_value_other_than_0_or_1_is_refused_at_staging(tmp_path):
    model, _ = CASES[1]
    compile_and_check(model.name, 1, tmp_path / "out", imported)
    inputs = imported.inputs(model.name, read_manifest(tmp_path / "out"))
    bad = inputs["attention_mask"].clone()
    bad[1, 3] = 2
    with pytest.raises(SpyreError, match=r"input 'attention_mask' holds 2 at \[1, 3\].*must be in \[0, 2\)"):
        run(tmp_path / "out", {**inputs, "attention_mask": bad})
    with pytest.raises(SpyreError, match="attention_mask.*give a bool or integer tensor"):
        run(tmp_path / "out", {**inputs, "attention_mask": bad.float()})


class _IndexAndData(torch.nn.Module):
    """Reads ``ids`` both as the index of an embedding and as data."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(8, 64))

    def forward(self, ids):
        return self.table[ids] * ids.unsqueeze(-1)


class _OneViewTwoWays(_IndexAndData):
    """Reads one view of ``ids`` both as an index and as data."""

    def forward(self, ids):
        rows = ids.view(-1, ids.shape[-1])
        return self.table[rows] * rows.unsqueeze(-1)


def test_an_input_read_as_index_and_as_data_reads_a_table_of_its_values():
    """The input stays an int32 index; its data is the table of the values below the indexed
    table's 8 rows, read through it."""
    ids = torch.randint(0, 8, (2, 4))
    model = _IndexAndData()
    with torch.no_grad():
        torch.testing.assert_close(spyre_mlir.compile(model, (ids,), cores=4).run(ids), model(ids))


@pytest.mark.parametrize("cores", [1, 4])
def test_one_view_read_as_index_and_as_data_reads_a_table_of_its_values(cores):
    """A view of the input read both ways (CLIP's ``input_ids.view(-1, n)``) is split like the
    input itself: its data readers read the table of its values through it."""
    ids = torch.randint(0, 8, (2, 4))
    model = _OneViewTwoWays()
    with torch.no_grad():
        torch.testing.assert_close(spyre_mlir.compile(model, (ids,), cores=cores).run(ids), model(ids))


class _PositionRows(torch.nn.Module):
    """Position ids of left-padded rows from the mask's running sum (as OPT and generation derive
    them), read as the index of an embedding."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(16, 64)

    def forward(self, mask):
        positions = (mask.cumsum(-1) - 1).clamp(min=0) * mask
        return positions, self.table(positions)


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_position_ids_from_a_running_sum_of_the_mask_match_eager(cores, tmp_path):
    """``cumsum`` is a matmul with a triangle of ones; its integers (held as floats) are converted
    to an int32 index for the embedding."""
    torch.manual_seed(0)
    model = _PositionRows()
    mask = torch.tensor([[0, 0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 1, 1, 1]])
    module = import_program(export_model(model, (mask,)))
    assert "spyre.matmul" in [op.name for op in module.walk()]
    program = spyre_mlir.compile(model, (mask,), cores=cores, out_dir=tmp_path / "out")
    positions, rows = program.run(mask)
    with torch.no_grad():
        expected_positions, expected_rows = model(mask)
    torch.testing.assert_close(positions, expected_positions, check_dtype=False, rtol=0, atol=0)
    torch.testing.assert_close(rows, expected_rows, rtol=0, atol=0)
