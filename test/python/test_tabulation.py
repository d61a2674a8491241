"""Tabulation over an input's values: what a program computes from one single-element integer input
alone (a decode step's position: the row it reads, its causal mask, its rotary angles) is evaluated
at compile time for every value the input takes, ``[0, N)`` where ``N`` is the size of a dim it
indexes, and the device reads each value's row of the table through the input.  Compiled programs
match eager on 1, 4 and 32 cores at the first, a middle and the last position; a position outside
the range is refused before anything runs.
"""

from __future__ import annotations

import pytest
import torch

import spyre_mlir
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import PointwiseOp
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.importer.core import decomposition_table, graph_inputs
from spyre_mlir.importer.folding import identity_offset, known_values, tabulate
from spyre_mlir.manifest import read_manifest

N = 64


class DecodePosition(torch.nn.Module):
    """A decode step at position ``pos``: the row of a buffer it indexes (which bounds it to
    ``[0, rows)``), the causal mask ``arange(N) <= pos`` and the rotary cosine of ``pos``."""

    def __init__(self, rows: int = N, shift: int = 0):
        super().__init__()
        self.shift = shift
        self.register_buffer("table", torch.randn(rows, N))
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(N, dtype=torch.float32) / N))

    def forward(self, x, pos):
        row = torch.index_select(self.table, 0, pos + self.shift)
        mask = torch.where(torch.arange(N) <= pos, 0.0, float("-inf"))
        return torch.softmax(x * torch.cos(pos.float() * self.inv_freq) + mask + row, dim=-1)


def _example(**kwargs):
    torch.manual_seed(0)
    return DecodePosition(**kwargs), torch.randn(4, N), torch.tensor([5])


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_decode_position_matches_eager_at_every_end_of_its_range(cores):
    model, x, pos = _example()
    program = spyre_mlir.compile(model, (x, pos), cores=cores)
    for p in (0, 5, N - 1):
        position = torch.tensor([p])
        torch.testing.assert_close(program.run(x, position), model(x, position), rtol=1e-5, atol=1e-6)


def test_a_position_outside_the_range_is_refused_before_the_run():
    model, x, pos = _example()
    program = spyre_mlir.compile(model, (x, pos), cores=4)
    for p in (N, -1):
        with pytest.raises(SpyreError, match=rf"input 'pos' is {p}, outside \[0, {N}\), the values the program was "
                                             r"compiled for \(it computed what it derives from 'pos' for each "
                                             r"of them\)"):
            program.run(x, torch.tensor([p]))


def test_the_range_is_the_input_argument_s_and_the_manifest_s(tmp_path):
    model, x, pos = _example()
    module = import_program(export_model(model, (x, pos)))
    main = module.ops.first
    attrs = {a.data["spyre.name"].data: a.data for a in main.arg_attrs.data}
    assert attrs["pos"]["spyre.range"].get_values() == (0, N) and "spyre.range" not in attrs["x"]
    roles = sorted(a["spyre.role"].data for a in attrs.values())
    assert roles == ["constant"] * 3 + ["input"] * 2  # the row, mask and cosine tables; no buffer is an argument
    gathers = [op for op in main.walk() if isinstance(op, PointwiseOp) and op.indirect_access() is not None]
    assert [op.operands[0] for op in gathers] == [main.args[1]] * 3  # every table read through pos
    spyre_mlir.compile(model, (x, pos), cores=4, out_dir=tmp_path / "out")
    manifest = read_manifest(tmp_path / "out")
    assert [(a.name, a.range) for a in manifest.inputs] == [("x", None), ("pos", (0, N))]


def test_the_range_is_the_smallest_dim_the_input_indexes():
    model, x, pos = _example(rows=50)
    assert _range(model, x, pos) == (0, 50)


def test_an_index_past_its_dim_for_the_last_values_ends_the_range_before_them():
    """``table[pos + 1]``: torch raises for ``pos = 63``, so the range is ``[0, 63)``."""
    model, x, pos = _example(shift=1)
    assert _range(model, x, pos) == (0, N - 1)
    program = spyre_mlir.compile(model, (x, pos), cores=4)
    torch.testing.assert_close(program.run(x, torch.tensor([N - 2])), model(x, torch.tensor([N - 2])),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(SpyreError, match=rf"input 'pos' is {N - 1}, outside \[0, {N - 1}\)"):
        program.run(x, torch.tensor([N - 1]))


class MaskedRow(torch.nn.Module):
    """A float16 row of a parameter at ``pos``, masked past ``pos``: the bool mask (a table of
    flags) is read by the device's ``where`` in float16, the type it computes in."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(N, N, dtype=torch.float16))

    def forward(self, pos):
        row = torch.index_select(self.weight, 0, pos)
        return torch.softmax(row.masked_fill(torch.arange(N) > pos, float("-inf")), dim=-1)


def test_a_bool_table_is_read_in_the_float_type_of_its_reader():
    torch.manual_seed(0)
    model = MaskedRow()
    program = spyre_mlir.compile(model, (torch.tensor([3]),), cores=4)
    module = import_program(export_model(model, (torch.tensor([3]),)))
    tables = [arg for arg in module.ops.first.args if arg.name_hint.startswith("table_")]
    assert [str(arg.type) for arg in tables] == [f"tensor<{N}x{N}xf16>"]
    for p in (0, 3, N - 1):
        position = torch.tensor([p])
        torch.testing.assert_close(program.run(position), model(position), rtol=1e-3, atol=1e-3)


class ScaledRow(torch.nn.Module):
    """``x * pos`` beside the row ``pos`` indexes: the input read as a number is read from the
    table of its own values, in the float type its reader computes in."""

    def __init__(self, shift: int = 0):
        super().__init__()
        self.shift = shift
        self.weight = torch.nn.Parameter(torch.randn(16, 32))
        self.register_buffer("rows", torch.randn(16, 32))

    def forward(self, x, pos):
        return x * pos + torch.index_select(self.weight, 0, pos) + torch.index_select(self.rows, 0, pos - self.shift)


def test_an_input_read_as_a_number_is_read_from_the_table_of_its_values():
    torch.manual_seed(0)
    model, x = ScaledRow(), torch.randn(4, 32)
    program = spyre_mlir.compile(model, (x, torch.tensor([3])), cores=4)
    for p in (0, 15):
        position = torch.tensor([p])
        torch.testing.assert_close(program.run(x, position), model(x, position))


def test_an_input_no_value_of_which_is_valid_is_an_error():
    """``rows[pos - 1]`` raises for ``pos = 0``: the range ``[0, N)`` would be empty."""
    program = export_model(ScaledRow(shift=1), (torch.randn(4, 32), torch.tensor([3])))
    with pytest.raises(SpyreError, match=r"input 'pos' indexes a tensor, but the program is not valid for the value 0 "
                                         r"\(IndexError: index out of range in self\)"):
        import_program(program)


def _range(model, x, pos) -> tuple[int, ...]:
    main = import_program(export_model(model, (x, pos))).ops.first
    return next(a.data["spyre.range"].get_values() for a in main.arg_attrs.data if "spyre.range" in a.data)


def test_a_static_cache_decode_step_tabulates_its_mask_rotary_tables_and_cache_row():
    """transformers' Llama decode step exported with a static cache, as ExecuTorch exports it: its
    ``cache_position`` indexes the 64 rows of the KV cache, the mask and the rotary cos/sin are
    tables of its 64 values, and the row the cache is written at is the input itself.  Each store
    writes the block of 32 rows (a float32 stick) holding that row: the block number, and the
    one-hot row that picks the new row in the block, are tables of the input read at it."""
    transformers = pytest.importorskip("transformers")
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    model = transformers.LlamaForCausalLM(config).eval()
    model.generation_config = transformers.GenerationConfig(
        use_cache=True, cache_implementation="static", max_length=64,
        cache_config={"batch_size": 1, "max_cache_len": 64})
    wrapped = TorchExportableModuleWithStaticCache(model, batch_size=1, max_cache_len=64)
    inputs = {"input_ids": torch.tensor([[3]]), "cache_position": torch.tensor([5])}
    program = torch.export.export(wrapped, (), kwargs=inputs, strict=True).run_decompositions(decomposition_table())
    tab = tabulate(program, known_values(program, graph_inputs(program, list(inputs.values()))))
    assert {p.name: n for p, n in tab.domains.items()} == {"input_ids": 256, "cache_position": 64}
    targets = {str(node.target) for node in tab.inputs}
    assert {"aten.cos.default", "aten.sin.default", "aten.le.Tensor", "aten.where.self", "aten.copy.default"} <= targets
    stores = [node for node in program.graph.nodes if node.target == torch.ops.aten.index_put.default]
    rows = [node.args[1][2] for node in stores]
    assert len(stores) == 4 and all(identity_offset(tab.tables[row]) == 0 for row in rows)
    module = import_program(program, decompose=False)
    stores = [op for op in module.walk() if isinstance(op, PointwiseOp) and op.scatter_dim is not None]
    assert len(stores) == 4 and all(op.get_index_step() == 32 for op in stores)
    for store in stores:
        cast = store.inputs[0].owner  # the block number, an index: a float table read at the input
        table_read = cast.inputs[0].owner.source.owner
        assert table_read.indirect_dim is not None and table_read.inputs[0].name_hint == "cache_position"
        block = store.inputs[1].owner.inputs[2].owner  # where(onehot, rows, block): the block read
        assert block.get_index_step() == 32 and block.inputs[0] is store.inputs[0]
