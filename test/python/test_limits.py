"""The device limits (spyre_mlir.limits): the measures and messages compiler and interpreter share."""

from __future__ import annotations

import io
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
from spyre_mlir.interpreter.addressing import geometry
from spyre_mlir.interpreter.device import hbm_bases
from spyre_mlir.interpreter.loading import load_output_dir
from spyre_mlir.manifest import KernelArg
from spyre_mlir.pipeline import CompileOptions, compile_module

from e2e_support import EXAMPLES, ROOT, ImportedPrograms, Program

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


def assert_measured_as_predicted(predicted, measured) -> None:
    """Every HBM tensor's per-core span is the one work division planned with, within the limit."""
    assert len(predicted) == len(measured)
    for n, spans in enumerate(predicted):
        for i, span in enumerate(spans):
            memory, found = measured[f"sdsc_{n}.json"][f"Tensor{i}"]
            assert found <= limits.SPAN_LIMIT_BYTES, (n, i)
            if memory == "hbm" and span is not None:
                assert found == span, (n, i)


@pytest.mark.parametrize("name, cores", [("32x2048", 4), ("8x4096", 4), ("32x4096", 32)])
def test_attention_scores_stay_within_the_span_limit(name, cores, tmp_path):
    _, module = ATTENTION(name)
    predicted, measured = compile_measured(module.clone(), cores, tmp_path / "out")
    assert_measured_as_predicted(predicted, measured)
    assert max(span for tensors in measured.values() for _, span in tensors.values()) > limits.SPAN_LIMIT_BYTES // 2


PROGRAMS = ImportedPrograms({"transformer_block": EXAMPLES["transformer_block"], "wsr_matmul_view": EXAMPLES[
    "wsr_matmul_view"], "llama": models.llama, "gpt2": models.gpt2})


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("name", sorted(PROGRAMS.programs))
def test_work_division_measures_spans_as_the_interpreter(name, cores, tmp_path):
    """Work division's per-core span of every HBM tensor is the interpreter's, byte for byte: tiles in
    loops, folded views, concatenations, tables read through an index, K splits."""
    _, module = PROGRAMS(name)
    assert_measured_as_predicted(*compile_measured(module.clone(), cores, tmp_path / "out"))
