"""Row stores end to end (DESIGN §17): a model that writes one position of a cache buffer
(``index_copy_``, an indexed assignment) compiles to a row store written in place in the
buffer's HBM, the manifest marks the buffer written, and the interpreter keeps it from one
execution to the next: step after step, the outputs and the cache equal eager's on 1, 4 and 32
cores, and no step copies the cache.  A position outside the cache, or two entries naming one
row, is an error, never a wrong number.
"""

from __future__ import annotations

import copy
import io
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import spyre_mlir
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.interpreter.loading import load_output_dir
from spyre_mlir.interpreter.runner import execute, host_inputs, state
from spyre_mlir.manifest import read_manifest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Import" / "Inputs"))
import row_stores  # noqa: E402  (the lit tests' models)

POSITIONS = (3, 4, 15, 0, 9)


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("factory", ["build_index_copy", "build_index_put", "build_aliased"])
def test_steps_match_eager_with_the_cache_kept_on_the_device(factory, cores):
    torch.manual_seed(0)
    model, example = getattr(row_stores, factory)()
    eager = copy.deepcopy(model)
    program = spyre_mlir.compile(model, example, cores=cores)
    cache = next(name for name, arg in ((a.name, a) for a in read_manifest(program.directory).args) if arg.written)
    target = "keys"
    for position in POSITIONS:
        rows = torch.randn_like(example[0])
        want = eager(rows, torch.tensor([position]))
        got = program.run(rows, torch.tensor([position]))
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(program.state()[cache], getattr(eager, target).numpy())


def test_the_manifest_marks_the_written_buffer_and_no_step_copies_it(tmp_path):
    model, example = row_stores.build_index_copy()
    program = spyre_mlir.compile(model, example, cores=4, out_dir=tmp_path / "out")
    manifest = read_manifest(program.directory)
    written = [arg for arg in manifest.args if arg.written]
    assert [(arg.name, arg.role) for arg in written] == [("b_keys", "buffer")]
    assert [arg.role for arg in manifest.args].count("output") == 1  # the sum; the cache is no output
    _, stats = program.run_by_name(*example)
    cache_bytes = written[0].nbytes
    store = next(op for op in stats.ops if op.op == "identity")
    assert store.hbm_bytes_written < cache_bytes // 8  # one position of 16, not the cache


def test_state_starts_from_the_program_and_reset_restages_it():
    model, example = row_stores.build_index_copy()
    program = spyre_mlir.compile(model, example, cores=1)
    assert program.state() == {}
    program.run(torch.ones(1, 2, 1, 32), torch.tensor([2]))
    program.run(torch.ones(1, 2, 1, 32), torch.tensor([5]))
    cache = program.state()["b_keys"]
    assert np.count_nonzero(cache.any(axis=-1)) == 4  # two positions x two heads
    program.reset()
    program.run(torch.ones(1, 2, 1, 32), torch.tensor([7]))
    cache = program.state()["b_keys"]
    assert cache[:, :, [2, 5]].sum() == 0 and (cache[:, :, 7] == 2).all()


def test_a_position_outside_the_cache_is_an_error_before_anything_is_written():
    """The position indexes the cache's 16 rows, so the program takes positions in [0, 16): 16
    is refused when it is staged, and the cache keeps what the last step left."""
    model, example = row_stores.build_index_copy()
    program = spyre_mlir.compile(model, example, cores=4)
    program.run(example[0], torch.tensor([5]))
    before = program.state()["b_keys"].copy()
    with pytest.raises(SpyreError, match=r"input 'position' is 16, outside \[0, 16\)"):
        program.run(example[0], torch.tensor([16]))
    program.run(torch.zeros_like(example[0]), torch.tensor([6]))
    after = program.state()["b_keys"]
    np.testing.assert_array_equal(np.delete(after, 6, axis=2), np.delete(before, 6, axis=2))


def test_the_first_execution_needs_the_buffer_and_later_ones_keep_it(tmp_path):
    model, example = row_stores.build_index_copy()
    program = spyre_mlir.compile(model, example, cores=1, out_dir=tmp_path / "out")
    loaded = load_output_dir(program.directory)
    inputs = {"rows": np.ones((1, 2, 1, 32), np.float32), "position": np.array([1])}
    with pytest.raises(SpyreError, match="buffer 'b_keys' has no value yet"):
        execute(loaded, host_inputs(loaded.manifest, inputs))
    execute(loaded, host_inputs(loaded.manifest, {**inputs, "b_keys": np.zeros((1, 2, 16, 32), np.float32)}))
    execute(loaded, host_inputs(loaded.manifest, {**inputs, "position": np.array([3])}))
    rows = state(loaded)["b_keys"][0, 0, :, 0]
    assert list(np.flatnonzero(rows)) == [1, 3]


class PromptCache(torch.nn.Module):
    """A prefill's store: 8 positions at once (fewer than the 32 indices of a stick)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("keys", torch.zeros(1, 2, 16, 32))

    def forward(self, rows, positions):
        self.keys.index_copy_(2, positions, rows)
        return self.keys * 1.5


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_entries_padded_to_a_whole_stick_of_indices_write_nothing(cores, tmp_path):
    """The 8 entries iterate as a stick of 32 indices; the 24 padding entries are masked
    (coordinateMasking_), so they write no row: the other rows keep their values."""
    torch.manual_seed(1)
    model = PromptCache()
    model.keys.normal_()
    eager = copy.deepcopy(model)
    rows, positions = torch.randn(1, 2, 8, 32), torch.tensor([9, 2, 14, 3, 0, 7, 11, 5])
    program = spyre_mlir.compile(model, (rows, positions), cores=cores, out_dir=tmp_path / "out")
    torch.testing.assert_close(program.run(rows, positions), eager(rows, positions))
    np.testing.assert_array_equal(program.state()["b_keys"], eager.keys.numpy())
    texts = [path.read_text() for path in sorted((tmp_path / "out").glob("sdsc_*.json"))]
    assert any('"coordinateMasking_": {\n' in text and '"indirectAccessIndexLabeledDs_"' in text for text in texts)


_BLOCKS = """
func.func @main(%cache: tensor<1x2x256x16xf16{layout}> {{spyre.role = "buffer", spyre.name = "keys"}},
                %blk: tensor<1xi32> {{spyre.role = "input", spyre.name = "blk"}},
                %rows: tensor<1x2x1x64x16xf16> {{spyre.role = "input", spyre.name = "rows"}})
    -> (tensor<1x2x1x64x16xf16>, tensor<1x2x256x16xf16{layout}> {{spyre.updates = "keys"}}) {{
  %block = spyre.pointwise "identity" (%blk, %cache) {{indirect_dim = 2 : i64, index_step = 64 : i64}} : (tensor<1xi32>, tensor<1x2x256x16xf16{layout}>) -> tensor<1x2x1x64x16xf16>
  %new = spyre.pointwise "identity" (%blk, %rows, %cache) {{scatter_dim = 2 : i64, index_step = 64 : i64}} : (tensor<1xi32>, tensor<1x2x1x64x16xf16>, tensor<1x2x256x16xf16{layout}>) -> tensor<1x2x256x16xf16{layout}>
  func.return %block, %new : tensor<1x2x1x64x16xf16>, tensor<1x2x256x16xf16{layout}>
}}
"""
_ON_POSITIONS = ', #spyre.layout<device_size = [2, 16, 4, 1, 64], dim_order = [0, 1, 3, 2], format = "SEN169_FP16">'


def _compiled_blocks(layout: str, cores: int, out: Path):
    from spyre_mlir.mlir_text import make_context, parse_module
    from spyre_mlir.pipeline import CompileOptions, compile_module

    module = parse_module(make_context(), _BLOCKS.format(layout=layout).encode(), "blocks.mlir")
    compile_module(module, out, CompileOptions(cores=cores), log=io.StringIO())
    return load_output_dir(out)


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("layout", ["", _ON_POSITIONS], ids=["sticked-on-heads", "sticked-on-positions"])
def test_blocks_of_rows_are_read_and_written_whole_at_the_block_the_index_holds(layout, cores, tmp_path):
    """``index_step`` 64: the index holds block numbers; each step reads the block it names and
    writes new rows there, the cache kept between steps, whether the cache is sticked on its
    head dim or on its positions (a block is then one stick per head element)."""
    loaded = _compiled_blocks(layout, cores, tmp_path / "out")
    rng = np.random.default_rng(cores)
    cache = rng.standard_normal((1, 2, 256, 16)).astype(np.float16)
    want = cache.copy()
    for step, blk in enumerate([2, 0, 3, 2]):
        rows = rng.standard_normal((1, 2, 1, 64, 16)).astype(np.float16)
        inputs = {"blk": np.array([blk]), "rows": rows, **({"keys": cache} if step == 0 else {})}
        block = execute(loaded, host_inputs(loaded.manifest, inputs))[0]["output0"]
        np.testing.assert_array_equal(block[0, :, 0], want[0, :, 64 * blk:64 * blk + 64])
        want[0, :, 64 * blk:64 * blk + 64] = rows[0, :, 0]
        np.testing.assert_array_equal(state(loaded)["keys"], want)


def test_a_block_outside_the_cache_is_an_error_and_the_cache_must_be_staged_anew(tmp_path):
    """The cache's 256 positions are 4 blocks of 64: block 4 is refused by the kernel that reads
    through it, and the failed execution leaves no cache behind that a later one could run on."""
    loaded = _compiled_blocks(_ON_POSITIONS, 4, tmp_path / "out")
    cache = np.arange(2 * 256 * 16, dtype=np.float16).reshape(1, 2, 256, 16)
    rows = np.ones((1, 2, 1, 64, 16), np.float16)
    execute(loaded, host_inputs(loaded.manifest, {"blk": np.array([1]), "rows": rows, "keys": cache}))
    assert (state(loaded)["keys"][:, :, 64:128] == 1).all()
    with pytest.raises(SpyreError, match=r"index 4 on core \d+ is outside the 4 rows of Tensor\d"):
        execute(loaded, host_inputs(loaded.manifest, {"blk": np.array([4]), "rows": 2 * rows}))
    with pytest.raises(SpyreError, match="buffer 'keys' has no value yet"):
        execute(loaded, host_inputs(loaded.manifest, {"blk": np.array([0]), "rows": rows}))


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_cache_read_transposed_is_sticked_on_its_positions_and_written_in_blocks(cores, tmp_path):
    """A decode step's scores against a key cache (``q @ K^T``: the cache is a matmul's B, ``N`` its
    positions): spyre-stickify sticks the cache on its positions, the one position each step writes
    is stored as the block of a stick's rows holding it, and no step restickifies the cache.  Step
    after step, across both blocks, the scores and the cache equal eager's."""
    torch.manual_seed(2)
    model, example = row_stores.build_attended()
    model.keys.normal_()
    eager = copy.deepcopy(model)
    program = spyre_mlir.compile(model, example, cores=cores, out_dir=tmp_path / "out")
    keys = next(arg for arg in read_manifest(program.directory).args if arg.written)
    assert keys.layout.dim_order[-1] == 2  # sticked on the 64 positions
    for position in (37, 0, 63, 31, 32):
        rows = torch.randn_like(example[0])
        want = eager(rows, torch.tensor([position]))
        got, stats = program.run_by_name(rows, torch.tensor([position]))
        torch.testing.assert_close(next(iter(got.values())), want.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(program.state()[keys.name], eager.keys.numpy())
        assert not any(op.op == "ReStickifyOpHBM" and op.hbm_bytes_read >= keys.nbytes for op in stats.ops)


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("factory", ["build_prompt_run", "build_prompt_blocks"])
def test_a_prefill_stores_the_blocks_its_positions_cover(factory, cores, tmp_path):
    """A prefill's positions (an ``arange`` known at compile time) are stored as the blocks they
    cover: whole blocks as they are, a block the run starts or ends inside read, mixed and written
    back, its other rows kept.  The cache is sticked on its positions, as the decode step's is."""
    torch.manual_seed(3)
    model, example = getattr(row_stores, factory)()
    model.keys.normal_()
    eager = copy.deepcopy(model)
    program = spyre_mlir.compile(model, example, cores=cores, out_dir=tmp_path / "out")
    keys = next(arg for arg in read_manifest(program.directory).args if arg.written)
    assert keys.layout.dim_order[-1] == 2
    torch.testing.assert_close(program.run(*example), eager(*example), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(program.state()[keys.name], eager.keys.numpy())
