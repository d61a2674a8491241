"""The device limits (spyre_mlir.limits): the measures and messages compiler and interpreter share;
work division's spans byte for byte the interpreter's; regressions of attention scores over the
span limit; programs at the edge of each limit on 1, 4 and 32 cores against eager."""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from xdsl.dialects.func import FuncOp

from spyre_mlir import limits
from spyre_mlir.analysis.storage import StorageTrace, TracedLoop
from spyre_mlir.analysis.work import work_problem
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.interpreter.addressing import geometry
from spyre_mlir.interpreter.device import hbm_bases
from spyre_mlir.interpreter.loading import load_output_dir
from spyre_mlir.manifest import KernelArg, read_manifest
from spyre_mlir.pipeline import CompileOptions, compile_module

from e2e_support import EXAMPLES, ROOT, ImportedPrograms, Program, compile_and_check

sys.path.insert(0, str(ROOT / "examples"))
import models  # noqa: E402


def test_the_config_plans_against_the_limits():
    config = SpyreConfig()
    assert (config.stick_bytes, config.lx_bytes, config.lx_reserved_bytes, config.span_limit_bytes,
            config.alignment) == (limits.STICK_BYTES, limits.LX_BYTES, limits.LX_RESERVED_BYTES,
                                  limits.SPAN_LIMIT_BYTES, limits.ALIGNMENT)
    assert limits.SPAN_LIMIT_BYTES == 268_431_360


def test_tensor_box_of_the_seed_tile():
    """The seed's 512 x 1024 tile of a [1024, 4096] fp16 tensor (labels mb, out; 'out' the stick), 16 rows
    per core: rows step one stick, a stick column all 1024 rows of the whole tensor."""
    shape, strides, stride = limits.tensor_box(("mb", "out"), "out", 64, 2, {"mb": 16, "out": 1024},
                                               {"mb": 1024, "out": 4096})
    assert shape == (16, 16, 64) and strides == (128 * 1024, 128, 2)
    assert stride == {"mb": 128, "out": 128 * 1024}
    assert limits.span_bytes(shape, strides, 2) == 15 * 131072 + 15 * 128 + 128


@pytest.mark.parametrize("span, over", [(limits.SPAN_LIMIT_BYTES, False), (limits.SPAN_LIMIT_BYTES + 1, True)])
def test_span_limit_edge(span, over):
    problem = limits.span_problem(span)
    assert (problem is not None) == over
    if over:
        assert problem == f"per-core span {span} bytes exceeds the limit of 268431360"


@pytest.mark.parametrize("problem, expected", [
    (limits.alignment_problem(256), None),
    (limits.alignment_problem(4098), "start address 4098 is not 128-byte aligned"),
    (limits.lx_problem(1_625_344 - 4096, 4096, 1_625_344), None),
    (limits.lx_problem(1_625_344 - 4096, 4224, 1_625_344),
     "LX offset 1621248 + 4224 bytes exceeds the usable LX of 1625344 bytes"),
    (limits.allocation_problem(4096, 4096, 8192), None),
    (limits.allocation_problem(4096, 4224, 8192), "bytes [4096, 8320) fall outside their allocation of 8192 bytes"),
    (limits.hbm_problem(128 << 30), None),
    (limits.hbm_problem((128 << 30) + 128),
     "the HBM allocations take 137438953600 bytes, more than the 137438953472 bytes of device memory"),
    (limits.core_problem(3, 4), None),
    (limits.core_problem(4, 4), "core 4 does not exist (4 cores)"),
    (limits.cores_problem(32), None),
    (limits.cores_problem(33), "cores must be an integer between 1 and 32, got 33"),
    (limits.stick_problem(32, 4), None),
    (limits.stick_problem(64, 4), "64 elements of 4 bytes is not a 128-byte stick"),
    (limits.whole_sticks_problem("out", 128, 192, 64), None),
    (limits.whole_sticks_problem("out", 96, 192, 64),
     "stick dim 'out' extent 96 per core / 192 in all is not a whole number of 64-element sticks"),
])
def test_each_limit_just_within_and_just_past(problem, expected):
    assert problem == expected


def test_an_allocation_past_16_gib_takes_the_segments_it_needs():
    """The interpreter lays allocations out 16 GiB-aligned: a 20 GiB pool takes two segments, and the
    bytes just past a 16 GiB argument belong to no allocation."""
    def arg(index: int, nbytes: int) -> KernelArg:
        return KernelArg(index, "pool", f"a{index}", nbytes)

    gib = 1 << 30
    assert hbm_bases([arg(0, 4096), arg(1, 4096), arg(2, 4096)]) == [16 * gib, 32 * gib, 48 * gib]
    assert hbm_bases([arg(0, 20 * gib), arg(1, 16 * gib), arg(2, 128)]) == [16 * gib, 48 * gib, 80 * gib]


# --------------------------------------------------------------------------
# Work division's per-core spans are the ones the interpreter measures in the
# SDSC files, byte for byte.
# --------------------------------------------------------------------------


def predicted_spans(module) -> list[tuple[int | None, ...]]:
    """Per compute op of a planned ``module``, in the order of the SDSC files, the per-core span work
    division gives each tensor under its ``core_splits`` (None for a table read through an index,
    which the span limit does not divide)."""
    body = next(op for op in module.ops if isinstance(op, FuncOp))

    def flat(items):
        for item in items:
            yield from flat(item.items) if isinstance(item, TracedLoop) else (item,)

    found = []
    for traced in flat(StorageTrace(body, limits.ALIGNMENT).run()):
        problem, splits = work_problem(traced.op), dict(enumerate(traced.op.get_core_splits()))
        found.append(tuple(None if i in problem.shared else problem.space.span(t, splits)
                           for i, t in enumerate(problem.tensors)))
    return found


def compile_measured(module, cores: int, out: Path) -> tuple[list[tuple[int | None, ...]], dict[str, dict[str, Any]]]:
    """Compile ``module`` on ``cores`` into ``out`` (not run): work division's spans per op, and per
    SDSC file and tensor its memory and per-core span as the interpreter measures them."""
    predicted = []
    compile_module(module, out, CompileOptions(cores=cores), log=io.StringIO(),
                   planned=lambda planned: predicted.extend(predicted_spans(planned)))
    loaded = load_output_dir(out)
    measured = {name: {t.name: (t.component, geometry(spec, t).span) for t in spec.tensors.values()}
                for name, spec in loaded.specs.items()}
    return predicted, measured


def _bundle(out: Path) -> str:
    return (out / "bundle.mlir").read_text()


def assert_measured_as_predicted(predicted, measured) -> None:
    """Every HBM tensor's per-core span is the one work division planned with, within the limit."""
    assert len(predicted) == len(measured)
    for n, spans in enumerate(predicted):
        for i, span in enumerate(spans):
            memory, found = measured[f"sdsc_{n}.json"][f"Tensor{i}"]
            assert found <= limits.SPAN_LIMIT_BYTES, (n, i)
            if memory == "hbm" and span is not None:
                assert found == span, (n, i)


PROGRAMS = ImportedPrograms({"transformer_block": EXAMPLES["transformer_block"], "wsr_matmul_view": EXAMPLES[
    "wsr_matmul_view"], "llama": models.llama, "gpt2": models.gpt2})


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("name", sorted(PROGRAMS.programs))
def test_work_division_measures_spans_as_the_interpreter(name, cores, tmp_path):
    """Work division's per-core span of every HBM tensor is the interpreter's, byte for byte: tiles in
    loops, folded views, concatenations, tables read through an index, K splits."""
    _, module = PROGRAMS(name)
    assert_measured_as_predicted(*compile_measured(module.clone(), cores, tmp_path / "out"))


# --------------------------------------------------------------------------
# Regressions: scaled_dot_product_attention's score-plus-mask add, tiled over
# query rows, writes a window of the [1, H, S, S] f32 scores, heads outermost:
# one core's slice spans the whole tensor's heads.  Compiled, not run (the
# scores are 512 MiB to 2 GiB); every tensor of every SDSC file is measured as
# the interpreter measures it.
# --------------------------------------------------------------------------


class _Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def _attention(heads: int, length: int) -> Callable[[], Program]:
    return lambda: (_Attention(), tuple(torch.randn(1, heads, length, 128, dtype=torch.float16) for _ in range(3)))


ATTENTION = ImportedPrograms({"32x2048": _attention(32, 2048), "8x4096": _attention(8, 4096),
                              "32x4096": _attention(32, 4096)})


@pytest.mark.parametrize("name, cores, near_limit", [("32x2048", 4, True), ("8x4096", 4, True), ("32x4096", 4, True),
                                                      ("32x4096", 32, False)])
def test_attention_scores_stay_within_the_span_limit(name, cores, near_limit, tmp_path):
    """spyre-auto-tile tiles the scores' ops over query rows; their slices stay within the limit
    (on 4 cores some span more than half of it; on 32 cores the tiles are finer)."""
    _, module = ATTENTION(name)
    predicted, measured = compile_measured(module.clone(), cores, tmp_path / "out")
    assert "scf.for" in _bundle(tmp_path / "out")
    assert_measured_as_predicted(predicted, measured)
    widest = max(span for tensors in measured.values() for _, span in tensors.values())
    assert (widest > limits.SPAN_LIMIT_BYTES // 2) == near_limit


# --------------------------------------------------------------------------
# Programs at the edge of each limit, compiled on 1, 4 and 32 cores and run on
# the interpreter against eager.  The span edge reads 256 MiB (its output is
# small, so comparing is cheap); the others are small.
# --------------------------------------------------------------------------

LIMIT_ROWS = limits.SPAN_LIMIT_BYTES // limits.STICK_BYTES
"""Rows of one fp16 stick column whose span is exactly the limit: 2,097,120."""

LX_STICKS = SpyreConfig().usable_lx_bytes // limits.STICK_BYTES
"""Sticks of one core's usable LX at the default LX fraction: 12,698."""


def _program(fn: Callable[..., Any], *shapes: tuple[int, ...], dtype=torch.float16) -> Callable[[], Program]:
    class Kernel(torch.nn.Module):
        def forward(self, *xs):
            return fn(*xs)

    return lambda: (Kernel(), tuple(torch.randn(*shape).to(dtype) for shape in shapes))


def _lx_pair(x):
    return torch.exp(x) * 0.5


EDGES = ImportedPrograms({
    # Per-core span: a column max over one stick column of 2,097,120 rows spans exactly the limit; 32 more
    # rows (4 KiB) are over it.
    "span-at-limit": _program(lambda x: x.amax(dim=0), (LIMIT_ROWS, 64)),
    "span-over-limit": _program(lambda x: x.amax(dim=0), (LIMIT_ROWS + 32, 64)),
    # LX capacity: exp(x) read by the mul has exactly a core's usable LX per core on 1, 4 and 32 cores ...
    **{f"lx-full-{cores}": _program(_lx_pair, (cores * LX_STICKS, 64)) for cores in (1, 4, 32)},
    # ... or one stick more.
    **{f"lx-over-{cores}": _program(_lx_pair, (cores * LX_STICKS + cores, 64)) for cores in (1, 4, 32)},
    # Sticks and alignment: a padded last stick in fp16 and fp32, fewer sticks than cores.
    "sticks-fp16": _program(lambda x: x * 2.0 + 1.0, (3, 64 * 65 + 1)),
    "sticks-fp32": _program(lambda x: x * 2.0 + 1.0, (5, 33), dtype=torch.float32),
    # A slice several cores read: one [128, 128] mask added to every head, the weight of a matmul.
    "replicated": _program(lambda s, m, w: (s + m) @ w, (1, 4, 128, 128), (128, 128), (128, 64),
                           dtype=torch.float32),
    # A padded dim: K = 100 iterates two whole sticks, 128 rows of the weight (its zeroed padding).
    "padded-k": _program(lambda x, w: x @ w, (256, 100), (100, 192)),
})


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_the_span_at_the_limit_needs_no_split(cores, tmp_path):
    """Exactly the limit: one core reads the whole column in one execution."""
    compile_and_check("span-at-limit", cores, tmp_path / "out", EDGES)
    assert "scf.for" not in _bundle(tmp_path / "out")
    if cores == 1:
        _, measured = compile_measured(EDGES("span-at-limit")[1].clone(), 1, tmp_path / "again")
        assert measured["sdsc_0.json"]["Tensor0"] == ("hbm", limits.SPAN_LIMIT_BYTES)


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_span_over_the_limit_is_split_or_tiled(cores, tmp_path):
    """4 KiB over: on one core a loop over the rows (a max of partial maxima), else a split of the rows."""
    compile_and_check("span-over-limit", cores, tmp_path / "out", EDGES)
    assert ("scf.for" in _bundle(tmp_path / "out")) == (cores == 1)


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_value_of_exactly_the_usable_lx_stays_in_lx(cores, tmp_path):
    stats = compile_and_check(f"lx-full-{cores}", cores, tmp_path / "out", EDGES)
    assert max(stats.lx_peak_per_core()) == SpyreConfig().usable_lx_bytes


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_value_one_stick_over_the_usable_lx_is_tiled(cores, tmp_path):
    """spyre-auto-tile tiles exp and mul so that a tile of the value fits LX."""
    stats = compile_and_check(f"lx-over-{cores}", cores, tmp_path / "out", EDGES)
    assert "scf.for" in _bundle(tmp_path / "out")
    assert 0 < max(stats.lx_peak_per_core()) < SpyreConfig().usable_lx_bytes


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("name", ["sticks-fp16", "sticks-fp32", "replicated", "padded-k"])
def test_sticks_alignment_padding_and_replicated_slices(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", EDGES)
    assert_measured_as_predicted(*compile_measured(EDGES(name)[1].clone(), cores, tmp_path / "again"))


class _Chain(torch.nn.Module):
    """Twenty 256 MiB values alive at once: a 5 GiB pool."""

    def forward(self, x):
        values = [x]
        for _ in range(20):
            values.append(torch.exp(values[-1]) * 0.5)
        total = values[1]
        for value in values[2:]:
            total = total + value
        return total


def test_a_pool_past_4_gib_takes_64_bit_offsets(tmp_path):
    """Compiled, not run (the interpreter takes minutes over 5 GiB): pool offsets past 2**32 reach the
    bundle, and the directory loads (its arguments within the device memory) with every span as
    work division planned it."""
    module = import_program(export_model(_Chain(), (torch.randn(8, 4096, 4096, dtype=torch.float16),)))
    predicted, measured = compile_measured(module, 4, tmp_path / "out")
    assert_measured_as_predicted(predicted, measured)
    manifest = read_manifest(tmp_path / "out")
    assert manifest.args[-1].role == "pool" and manifest.args[-1].nbytes > 5 << 30
    assert max(int(n) for n in re.findall(r"arith.constant (\d+)", _bundle(tmp_path / "out"))) > 1 << 32
