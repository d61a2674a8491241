"""Tiled programs end to end: spyre-coarse-tile loop nests -> bundle -> interpreter -> eager.

The seed example (``examples/add_mul_nested.py``: A in 2 tiles around B in 4, 32
cores) must lower to the reference bundle (``test/data/reference/bundle_add_mul_nested``):
the loops, the affine map, the SDSC JSON of both ops, y in LX; every example with
its hints and a few tiled reductions must match eager on 1, 4 and 32 cores.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint
from spyre_mlir.codegen.bundle_text import print_mixed
from spyre_mlir.mlir_text import make_context
from spyre_mlir.pipeline import SpyreCompilePass

from e2e_support import EXAMPLES, ImportedPrograms, Program, compile_and_check
from reference_files import BUNDLE_REF

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20
MAP = "affine_map<(d0, d1)[s0] -> (s0 + 65536*d0 + 2097152*d1)>"



def _named(shape: tuple[int, int]) -> torch.Tensor:
    declare_tensor_dim("R", shape[0])
    declare_tensor_dim("C", shape[1])
    x = (torch.randn(*shape) * 0.1).to(torch.float16)  # fp16 partial sums stay well inside tolerance
    name_tensor_dims(x, ["R", "C"])
    return x


def _reduction(shape: tuple[int, int], tiles: dict[str, int], fn: Callable[[Any], Any]) -> Callable[[], Program]:
    def build() -> Program:
        def kernel(x):
            with spyre_hint(tiles=tiles):
                return fn(x)
        return kernel, (_named(shape),)
    return build


REDUCTIONS: dict[str, Callable[[], Program]] = {
    "sum_lastdim_tiled": _reduction((256, 512), {"C": 4}, lambda x: x.sum(-1, keepdim=True)),
    "sum_dim0_tiled": _reduction((512, 256), {"R": 4}, lambda x: x.sum(0)),
    "mean_lastdim_tiled": _reduction((256, 1024), {"C": 2}, lambda x: x.mean(-1, keepdim=True)),
    "amax_rows_and_cols_tiled": _reduction((128, 512), {"R": 2, "C": 2}, lambda x: x.amax(-1, keepdim=True)),
}
"""Tiled reductions: a ``spyre.fill`` accumulator, partial op + combine in the loop."""



def _grouped_attention(tiles: dict[str, int]) -> Callable[[], Program]:
    """Causal attention of 4 query heads over 2 key/value heads (grouped-query attention as
    transformers writes it: keys and values expanded and reshaped to the query heads), the scores,
    softmax and matmul by the values tiled over the heads ``H``."""
    heads, kv_heads, length, head_dim = 4, 2, 128, 64

    def build() -> Program:
        for name, size in (("B", 1), ("H", heads), ("KV", kv_heads), ("S", length), ("T", length),
                           ("D", head_dim)):
            declare_tensor_dim(name, size)
        q, k, v = (torch.randn(1, h, length, head_dim).to(torch.float16) for h in (heads, kv_heads, kv_heads))
        name_tensor_dims(q, ["B", "H", "S", "D"])
        name_tensor_dims(k, ["B", "KV", "T", "D"])
        name_tensor_dims(v, ["B", "KV", "T", "D"])
        mask = torch.full((length, length), float("-inf"), dtype=torch.float16).triu(1)

        def attention(q, k, v):
            group = heads // kv_heads
            k = k[:, :, None].expand(1, kv_heads, group, length, head_dim).reshape(1, heads, length, head_dim)
            v = v[:, :, None].expand(1, kv_heads, group, length, head_dim).reshape(1, heads, length, head_dim)
            with spyre_hint(tiles=tiles):
                scores = q @ k.transpose(-1, -2) * head_dim ** -0.5 + mask
                return torch.softmax(scores, dim=-1) @ v
        return attention, (q, k, v)
    return build


GROUPED_ATTENTION: dict[str, Callable[[], Program]] = {
    "grouped_attention_by_kv_heads": _grouped_attention({"H": 2}),
    "grouped_attention_by_query_heads": _grouped_attention({"H": 4}),
}
"""Tiles of grouped-query heads: the matmuls iterate H as (key/value head, head in its group); 2
tiles are one loop over the key/value heads, 4 a loop within each group inside it."""


def _loop_invariant() -> Program:
    """``exp(c)`` computed before a loop over ``B`` and read whole by each tile's ``a * exp(c)``, as
    tiled attention reads its keys in every tile of query rows."""
    for name, size in (("B", 2), ("R", 128), ("C", 512)):
        declare_tensor_dim(name, size)
    a = (torch.randn(2, 128, 512) * 0.5).to(torch.float16)
    c = (torch.randn(128, 512) * 0.5).to(torch.float16)
    name_tensor_dims(a, ["B", "R", "C"])
    name_tensor_dims(c, ["R", "C"])

    def kernel(a, c):
        k = torch.exp(c)
        with spyre_hint(tiles={"B": 2}):
            return torch.exp(a * k)
    return kernel, (a, c)


TILED = {"add_mul_nested", "wsr_matmul", "wsr_matmul_view", "softmax", "transformer_block", *REDUCTIONS,
         *GROUPED_ATTENTION, "loop_invariant"}
PROGRAMS = {**EXAMPLES, **REDUCTIONS, **GROUPED_ATTENTION, "loop_invariant": _loop_invariant}
BIG = {"transformer_block"}


@pytest.fixture(scope="module")
def imported() -> ImportedPrograms:
    """Per program: its (fn, inputs) and its imported module, exported once."""
    return ImportedPrograms(PROGRAMS)


@pytest.fixture(scope="module")
def seed(tmp_path_factory, imported) -> tuple[Path, Any]:
    """The seed example compiled on 32 cores, and its interpreter run's statistics."""
    out = tmp_path_factory.mktemp("seed") / "out"
    return out, compile_and_check("add_mul_nested", 32, out, imported)


def test_seed_bundle_loops_and_affine_map(seed):
    text = (seed[0] / "bundle.mlir").read_text()
    assert text.startswith(f"#map_0 = {MAP}\nmodule {{\n")
    assert "%loop_bound_0 = arith.constant 2 : index" in text
    assert "%loop_bound_1 = arith.constant 4 : index" in text
    outer = text.index("scf.for %i_0 = %c0 to %loop_bound_0 step %c1 {")
    inner = text.index("scf.for %i_1 = %c0 to %loop_bound_1 step %c1 {", outer)
    executes = [m.start() for m in re.finditer("sdscbundle.sdsc_execute", text)]
    assert len(executes) == 2 and all(e > inner for e in executes)  # both ops in the inner body
    # one affine.apply per (HBM tensor, core): a, b for the add; c, z for the mul; y is in LX
    assert len(re.findall(r"affine\.apply #map_0\(%i_0, %i_1\)\[%arg_\d+(_core_\d+)?\]", text)) == 4 * 32
    assert "%addr_0 = affine.apply #map_0(%i_0, %i_1)[%arg_0]" in text
    assert "%addr_1 = affine.apply #map_0(%i_0, %i_1)[%arg_0_core_2048]" in text


def test_seed_bundle_is_the_reference(seed):
    assert (seed[0] / "bundle.mlir").read_text() == (BUNDLE_REF / "bundle.mlir").read_text()


def _without(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return {k: _without(v, key) for k, v in obj.items() if k != key}
    if isinstance(obj, list):
        return [_without(v, key) for v in obj]
    return obj


def _find(obj: Any, key: str) -> list[Any]:
    if isinstance(obj, dict):
        return [v for k, v in obj.items() if k == key] + [x for v in obj.values() for x in _find(v, key)]
    if isinstance(obj, list):
        return [x for v in obj for x in _find(v, key)]
    return []


@pytest.mark.parametrize("n", [0, 1])
def test_seed_sdsc_json_matches_the_reference(seed, n):
    got = json.loads((seed[0] / f"sdsc_{n}.json").read_text())
    want = json.loads((BUNDLE_REF / f"sdsc_{n}.json").read_text())
    for key in ("N_", "ss_", "numWkSlicesPerDim_", "coreIdToWkSlice_", "backGapCore_", "layoutDimOrder_",
                "component_", "startAddressCoreCorelet_", "dataStageParam_", "labeledDs_"):
        assert _find(got, key) == _find(want, key), key
    assert _find(got, "N_")[0] == {"name_": "n", "mb_": 512, "out_": 1024}
    assert _find(got, "numWkSlicesPerDim_") == [{"mb": 32, "out": 1}]
    assert {"mb": {"-1": "512"}, "out": {"-1": "3072"}} in _find(got, "backGapCore_")
    assert ("lx" in _find(got, "component_")) and _find(got, "component_").count("hbm") == 2
    # Everything else too, except the reference's null debug handle.
    assert got == _without(want, "debug_handle_")


def test_seed_runs_like_eager_reading_and_writing_hbm_once(seed):
    stats = seed[1]
    assert sum(op.hbm_bytes_read for op in stats.ops) == 3 * 8 * MIB  # a, b, c
    assert sum(op.hbm_bytes_written for op in stats.ops) == 8 * MIB  # z
    assert [op.executions for op in stats.ops] == [8, 8]


def _cases() -> list[Any]:
    return [pytest.param(name, cores, id=f"{name}-{cores}")
            for name in PROGRAMS for cores in (1, 4, 32) if cores == 32 or name not in BIG]


@pytest.mark.parametrize("name, cores", _cases())
def test_tiled_program_matches_eager(name, cores, tmp_path, imported):
    compile_and_check(name, cores, tmp_path / "out", imported)
    # rope has no hints: on 1 and 4 cores its intermediate overflows LX and spyre-auto-tile tiles it.
    tiled = name in TILED or (name == "rope" and cores < 32)
    assert ("scf.for" in (tmp_path / "out" / "bundle.mlir").read_text()) == tiled


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_value_read_whole_in_every_tile_stays_in_lx_across_the_loop(cores, tmp_path, imported):
    """``exp(c)`` lives in each core's LX from its writer to the loop's end: HBM holds only the
    inputs, read once, and the output (before, ``exp(c)`` went through HBM, read in each tile)."""
    stats = compile_and_check("loop_invariant", cores, tmp_path / "out", imported)
    a, c = 2 * 128 * 512 * 2, 128 * 512 * 2
    assert sum(op.hbm_bytes_read for op in stats.ops) == a + c
    assert sum(op.hbm_bytes_written for op in stats.ops) == a


MLIR_OPT = shutil.which("mlir-opt") or next(
    (str(p) for p in sorted(Path("/usr/lib").glob("llvm-*/bin/mlir-opt")) if p.is_file()), None)


@pytest.mark.skipif(MLIR_OPT is None, reason="upstream mlir-opt not found")
def test_tiled_bundle_verifies_and_lowers_upstream(imported):
    _, module = imported("add_mul_nested")
    lowered = module.clone()
    SpyreCompilePass(cores=32).apply(make_context(), lowered)
    text = print_mixed(lowered)
    assert "scf.for" in text and "affine.apply" in text
    for args in (["--verify-each"], ["--verify-each", "-lower-affine", "-convert-scf-to-cf"]):
        proc = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", *args], input=text,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr[:2000]
    assert "cf.cond_br" in proc.stdout and "scf.for" not in proc.stdout


def test_no_span_tiling_flag_reaches_coarse_tile(tmp_path, monkeypatch):
    from spyre_mlir.pipeline import compile_stages
    from spyre_mlir.tools.spyre_compile import main

    (coarse,) = [s for s in compile_stages(32, span_tiling=False) if s.name == "spyre-coarse-tile"]
    assert coarse.span_tiling is False
    seen = []
    import spyre_mlir.pipeline as pipeline

    real = pipeline.compile_stages
    monkeypatch.setattr(pipeline, "compile_stages", lambda cores, span_tiling=True, *lx: seen.append(span_tiling)
                        or real(cores, span_tiling, *lx))
    source = str(ROOT / "examples" / "add_mul_nested.py") + ":build"
    assert main([source, "-o", str(tmp_path / "out"), "--no-span-tiling"]) == 0
    assert seen == [False]
    assert "scf.for" in (tmp_path / "out" / "bundle.mlir").read_text()  # hinted tiling still applies
