"""Indirect access end to end: ``embedding``, ``index_select`` and ``gather`` read rows of a table
through an int32 index (int64 token ids are staged as int32), divide their work by the index
entries only, and match eager on 1, 4 and 32 cores; an id that does not fit int32, or that lies
outside the table, is an error naming it, never a wrong number.  Every SDSC file is validated
against the sdscbundle schema.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

import spyre_mlir
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import PointwiseOp
from spyre_mlir.interpreter import run
from spyre_mlir.interpreter.schema import SCHEMA_ENV_VAR
from spyre_mlir.manifest import read_manifest
from spyre_mlir.mlir_text import make_context
from spyre_mlir.pipeline import CompileOptions, compile_module, compile_stages

from e2e_support import ImportedPrograms, compile_and_check
from reference_files import SCHEMA


class TokenEmbedding(torch.nn.Module):
    def __init__(self, vocab: int, hidden: int, dtype: torch.dtype):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, hidden, dtype=dtype)

    def forward(self, input_ids):
        return self.wte(input_ids)


class EmbeddingProjection(torch.nn.Module):
    """Token embeddings fed to a linear layer, as a language model's first layer reads them."""

    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Embedding(500, 128, dtype=torch.float16)
        self.proj = torch.nn.Linear(128, 64, bias=False, dtype=torch.float16)

    def forward(self, input_ids):
        return self.proj(self.wte(input_ids))


class BertEmbeddings(torch.nn.Module):
    """transformers' BERT embeddings as written: word, position (a compile-time index) and token
    type embeddings summed, then a layer norm."""

    def __init__(self):
        super().__init__()
        transformers = pytest.importorskip("transformers")
        config = transformers.BertConfig(hidden_size=128, num_attention_heads=2, intermediate_size=256,
                                         vocab_size=500, num_hidden_layers=1)
        self.embeddings = transformers.BertModel(config).embeddings.eval()

    def forward(self, input_ids):
        return self.embeddings(input_ids=input_ids)


def _embedding(vocab: int, hidden: int, dtype: torch.dtype, ids: tuple[int, ...]):
    return lambda: (TokenEmbedding(vocab, hidden, dtype), (torch.randint(0, vocab, ids),))


PROGRAMS = {
    "embedding_1x64_fp16_128": _embedding(1000, 128, torch.float16, (1, 64)),
    "embedding_2x100_fp32_96": _embedding(1000, 96, torch.float32, (2, 100)),
    "embedding_2x100_fp16_96": _embedding(1000, 96, torch.float16, (2, 100)),
    "embedding_1x1_fp32_64": _embedding(100, 64, torch.float32, (1, 1)),
    "embedding_projection": lambda: (EmbeddingProjection(), (torch.randint(0, 500, (1, 64)),)),
    "bert_embeddings": lambda: (BertEmbeddings(), (torch.randint(0, 500, (1, 100)),)),
    "index_select_rows": lambda: (lambda t, i: torch.index_select(t, 0, i),
                                  (torch.randn(50, 96, dtype=torch.float16), torch.randint(0, 50, (40,)))),
    "index_select_columns": lambda: (lambda t, i: torch.index_select(t, 1, i),
                                     (torch.randn(64, 50, dtype=torch.float16), torch.randint(0, 50, (40,)))),
    "gather_last_dim": lambda: (lambda t, i: torch.gather(t, 1, i),
                                (torch.randn(4, 50, dtype=torch.float16), torch.randint(0, 50, (4, 40)))),
    "index_select_one_row": lambda: (lambda t, i: torch.index_select(t, 0, i),
                                     (torch.randn(50, 96, dtype=torch.float16), torch.tensor([7]))),
    "index_select_rows_of_one": lambda: (lambda t, i: torch.index_select(t, 0, i),
                                         (torch.randn(16, 1), torch.randint(0, 16, (40,)))),
}

imported = ImportedPrograms(PROGRAMS)


@pytest.fixture(autouse=True)
def _schema(monkeypatch):
    monkeypatch.setenv(SCHEMA_ENV_VAR, str(SCHEMA))


@pytest.mark.parametrize("name", ["embedding_1x64_fp16_128", "embedding_2x100_fp32_96"])
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_token_embedding_of_int64_ids_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("cores", [1, 4])
def test_the_embedding_of_one_token_matches_eager(cores, tmp_path):
    """One id sticked on a sequence of one: its stick holds one entry, which the gather reads
    once, not a stick's worth of entries."""
    compile_and_check("embedding_1x1_fp32_64", cores, tmp_path / "out", imported)


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_embedding_followed_by_a_matmul_matches_eager(cores, tmp_path):
    compile_and_check("embedding_projection", cores, tmp_path / "out", imported)


@pytest.mark.parametrize("name, cores", [("index_select_rows", 4), ("index_select_columns", 32),
                                         ("gather_last_dim", 4)])
def test_index_select_and_gather_match_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("cores", [1, 4])
def test_an_index_of_one_entry_reads_one_row(cores, tmp_path):
    """One index entry is a sparse stick (``scale_`` -2): the gather reads its element 0, not the
    whole stick of 32 entries (which made 32 rows where the output holds one)."""
    compile_and_check("index_select_one_row", cores, tmp_path / "out", imported)


@pytest.mark.parametrize("cores", [1, 4])
def test_a_table_of_one_element_rows_reads_element_0_of_each(cores, tmp_path):
    """A row of one element is a sparse stick (``scale_`` -2): the gather reads its element 0, not
    the whole stick (which made 32 columns where the output holds one)."""
    compile_and_check("index_select_rows_of_one", cores, tmp_path / "out", imported)


def test_bert_embeddings_of_word_position_and_token_type_match_eager(tmp_path):
    compile_and_check("bert_embeddings", 4, tmp_path / "out", imported)


def _planned_gather(name: str, cores: int) -> PointwiseOp:
    _, module = imported(name)
    module = module.clone()
    for stage in compile_stages(cores)[:-1]:  # up to spyre-lower-to-bundle
        stage.apply(make_context(), module)
    return next(op for op in module.walk() if isinstance(op, PointwiseOp) and op.indirect_access() is not None)


def test_work_is_divided_by_the_index_entries_never_by_the_table_data():
    op = _planned_gather("embedding_1x64_fp16_128", 32)
    indirect = op.indirect_access()
    splits = op.get_core_splits()
    assert indirect is not None and splits is not None
    assert [splits[d] for d in indirect.data_dims] == [1]
    assert splits == (1, 2, 1)  # 1 row x 2 sticks of 32 ids


def test_padded_index_sticks_stay_on_one_core_per_row():
    """Split, the cores would also gather (and write) the 28 padding entries of each row's
    last stick of ids: the cost model keeps the 100 ids of a row on one core."""
    assert _planned_gather("embedding_2x100_fp16_96", 32).get_core_splits() == (2, 1, 1)


def test_an_entry_count_of_partial_index_sticks_pads_the_result_entry_dim():
    op = _planned_gather("embedding_2x100_fp16_96", 32)
    layout = op.result.type.encoding
    assert list(layout.sizes)[0] == 128  # 100 ids: 4 sticks of indices, each core's rows inside the result


def test_int64_ids_are_staged_as_int32(tmp_path):
    out = tmp_path / "out"
    compile_and_check("embedding_1x64_fp16_128", 4, out, imported)
    ids = next(a for a in read_manifest(out).inputs if a.name == "input_ids")
    assert (ids.dtype, ids.layout.data_format, tuple(ids.layout.device_size)) == ("int32", "IEEE_INT32", (2, 1, 32))


def _compiled_embedding(tmp_path):
    out = tmp_path / "out"
    _, module = imported("embedding_1x64_fp16_128")
    compile_module(module.clone(), out, CompileOptions(cores=4), log=io.StringIO())
    weight = np.random.default_rng(0).standard_normal((1000, 128)).astype(np.float16)
    return out, weight


def test_an_id_that_does_not_fit_int32_is_an_error_naming_the_input(tmp_path):
    out, weight = _compiled_embedding(tmp_path)
    ids = torch.zeros((1, 64), dtype=torch.int64)
    ids[0, 7] = 2 ** 40
    with pytest.raises(SpyreError, match=r"input 'input_ids' expects int32 \[1, 64\], given int64 \[1, 64\]: "
                                         "value 1099511627776 does not fit in int32"):
        run(out, {"p_wte_weight": weight, "input_ids": ids})


def test_an_id_outside_the_table_is_an_error_of_the_file_that_reads_it(tmp_path):
    out, weight = _compiled_embedding(tmp_path)
    ids = torch.zeros((1, 64), dtype=torch.int64)
    ids[0, 40] = 1000
    with pytest.raises(SpyreError, match=r"Tensor0: index 1000 on core 1 is outside the 1000 rows of Tensor1") as e:
        run(out, {"p_wte_weight": weight, "input_ids": ids})
    assert e.value.loc == "sdsc_0.json"


def test_an_integer_input_read_as_data_is_held_as_flags(tmp_path):
    """An int64 input read as data, not as an index, is held as 0/1 flags in float16: it computes
    for 0 and 1, and the runtime refuses any other value (Spyre has no integer arithmetic)."""
    def double(ids):
        return ids.to(torch.float16) * 2

    flags = torch.randint(0, 2, (4, 64))
    program = spyre_mlir.compile(double, (flags,), cores=4, out_dir=tmp_path / "out")
    torch.testing.assert_close(program.run(flags), double(flags))
    with pytest.raises(SpyreError, match=r"input 'ids' holds 3 at \[0, 0\].*must be in \[0, 2\)"):
        program.run(torch.full((4, 64), 3))
