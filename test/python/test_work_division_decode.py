"""Work division at one token (a decode step: M = 1, batch up to 8) streams the weights.

Each projection of a decode step reads every weight element once and multiplies it with one row
(up to 8): reading the weight is the work.  The cost model prices such a streamed operand at each
reading core's share of the HBM bandwidth (``CostFacts.streamed_read_bytes_per_ns_per_core``,
torch-spyre's partitioned-read rate), so work division gives every core its own slice of each
weight (a K or N split, never an M split that has cores re-read one slice) on as many cores as the
weight divides over, and the predicted step approaches the weight-streaming bound (the weights
read once at peak).  The ratios below are the model's own predictions (deterministic), not times.
"""

from __future__ import annotations

import itertools
import re

import pytest
import torch
from xdsl.dialects.func import FuncOp

from spyre_mlir.analysis.cost import SPYRE_FACTS, CostReport, cost_report
from spyre_mlir.analysis.kernel_args import argument_role_and_name
from spyre_mlir.analysis.work import core_regions
from spyre_mlir.dialects.spyre import MatmulOp
from spyre_mlir.mlir_text import make_context, parse_module
from spyre_mlir.pipeline import compile_stages

from e2e_support import ImportedPrograms, compile_and_check, example_models


def swiglu_mlp(rows: int, hidden: int = 4096, intermediate: int = 12800) -> str:
    """A SwiGLU MLP at ``rows`` tokens in fp16 whose three weights are parameters, as spyre IR."""
    h, i = hidden, intermediate
    return f"""
    func.func @mlp(%x: tensor<{rows}x{h}xf16>,
                   %wg: tensor<{h}x{i}xf16> {{spyre.role = "parameter", spyre.name = "gate"}},
                   %wu: tensor<{h}x{i}xf16> {{spyre.role = "parameter", spyre.name = "up"}},
                   %wd: tensor<{i}x{h}xf16> {{spyre.role = "parameter", spyre.name = "down"}}) -> tensor<{rows}x{h}xf16> {{
      %g = spyre.matmul (%x, %wg) : (tensor<{rows}x{h}xf16>, tensor<{h}x{i}xf16>) -> tensor<{rows}x{i}xf16>
      %u = spyre.matmul (%x, %wu) : (tensor<{rows}x{h}xf16>, tensor<{h}x{i}xf16>) -> tensor<{rows}x{i}xf16>
      %s = spyre.pointwise "silu" (%g) : (tensor<{rows}x{i}xf16>) -> tensor<{rows}x{i}xf16>
      %m = spyre.pointwise "mul" (%s, %u) : (tensor<{rows}x{i}xf16>, tensor<{rows}x{i}xf16>) -> tensor<{rows}x{i}xf16>
      %y = spyre.matmul (%m, %wd) : (tensor<{rows}x{i}xf16>, tensor<{i}x{h}xf16>) -> tensor<{rows}x{h}xf16>
      func.return %y : tensor<{rows}x{h}xf16>
    }}
    """


def planned(text: str, cores: int) -> tuple[FuncOp, CostReport]:
    """``text`` after every compile stage but the lowering on ``cores`` cores, and its report."""
    module = parse_module(make_context(), text, "decode.mlir")
    for stage in compile_stages(cores)[:-1]:
        stage.apply(make_context(), module)
    body = next(op for op in module.ops if isinstance(op, FuncOp))
    return body, cost_report(module)


def _overlap(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    return all(lo_a <= hi_b and lo_b <= hi_a for (lo_a, hi_a), (lo_b, hi_b) in zip(a, b))


@pytest.mark.parametrize("rows", [1, 8])
@pytest.mark.parametrize("cores", [4, 32])
def test_each_core_reads_its_own_slice_of_each_weight(rows: int, cores: int) -> None:
    """Every projection runs on all the cores, and no two cores read an element of its weight in
    common: the slices are disjoint and together are the whole weight."""
    body, _ = planned(swiglu_mlp(rows), cores)
    weights = {arg for i, arg in enumerate(body.body.block.args) if argument_role_and_name(body, i)[0] == "parameter"}
    matmuls = [op for op in body.walk() if isinstance(op, MatmulOp)]
    assert {op.inputs[1] for op in matmuls} == weights
    for op in matmuls:
        regions = core_regions(op, 1)
        assert len(regions) == cores, op.get_core_splits()
        assert not any(_overlap(a, b) for a, b in itertools.combinations(regions, 2)), regions
        shape = op.inputs[1].type.get_shape()
        assert sum(_elements(box) for box in regions) == shape[0] * shape[1]


def _elements(box: tuple[tuple[int, int], ...]) -> int:
    count = 1
    for lo, hi in box:
        count *= hi - lo + 1
    return count


def test_a_granite_shaped_mlp_at_one_token_streams_at_the_bound_on_32_cores() -> None:
    """Hidden 4096, intermediate 12800, fp16, one token: the predicted time is within 1 % of the
    three weights read once at 150 bytes per ns (their 315 MB: about 2.1 ms)."""
    _, report = planned(swiglu_mlp(1), 32)
    assert report.streaming_bound_ns == pytest.approx(3 * 4096 * 12800 * 2 / SPYRE_FACTS.hbm_bytes_per_ns)
    assert report.streaming_bound_ns <= report.total_ns <= 1.01 * report.streaming_bound_ns
    assert "predicted / weight-streaming bound = 1.00" in report.table()


def test_spyre_compile_report_prints_the_streaming_bound_beside_the_prediction(tmp_path, capsys) -> None:
    """``--report`` ends with the predicted total, the lower bound and the weight-streaming bound,
    each with the prediction's ratio to it."""
    from spyre_mlir.tools.spyre_compile import main

    (tmp_path / "mlp.mlir").write_text(swiglu_mlp(1, hidden=512, intermediate=1280))
    assert main([str(tmp_path / "mlp.mlir"), "-o", str(tmp_path / "out"), "--cores", "32", "--report"]) == 0
    lines = capsys.readouterr().out.splitlines()
    total = float(next(line for line in lines if line.startswith("total")).split()[-1])
    bound, ratio = re.fullmatch(r"weight-streaming bound ([0-9.]+) us \(parameters, buffers and constants read "
                                r"once at peak bandwidth\); predicted / weight-streaming bound = ([0-9.]+)",
                                lines[-2]).groups()
    assert float(bound) == pytest.approx(3 * 512 * 1280 * 2 / 150 / 1000, abs=0.05)
    assert float(ratio) == pytest.approx(total / float(bound), abs=0.01)


@pytest.mark.parametrize("cores", [1, 4])
def test_fewer_cores_stream_at_their_share_of_the_bandwidth(cores: int) -> None:
    """One core streams a weight at 1/32 of the peak, four at 4/32: the prediction is the bound
    scaled by 32 / cores (within 1 %: the activations and results)."""
    _, report = planned(swiglu_mlp(1), cores)
    share = cores * SPYRE_FACTS.streamed_read_bytes_per_ns_per_core / SPYRE_FACTS.hbm_bytes_per_ns
    assert report.total_ns == pytest.approx(report.streaming_bound_ns / share, rel=0.01)


def test_prefill_rows_do_not_stream() -> None:
    """Beyond ``stream_pass_rows`` rows a weight element feeds that many MACs: the per-core
    streaming rate does not apply (a prefill keeps the bus price), so one core is not 32x slower."""
    rows = 2 * SPYRE_FACTS.stream_pass_rows
    _, report = planned(swiglu_mlp(rows, hidden=512, intermediate=1280), 1)
    assert report.total_ns < 2 * report.streaming_bound_ns


# --------------------------------------------------------------------------
# End to end: a decode step whose weights split across cores matches eager
# --------------------------------------------------------------------------

models = example_models()

WIDE_DECODE = models.Model("granite", ids=True, dtype=torch.float32, length=1, hidden=256, heads=4, layers=1,
                           past=15)
"""One token after 15 past positions, hidden 256 (8 sticks of fp32), heads of 64: wide enough that
each projection's weight splits over all of 4 and of 32 cores (K, or N and K: partial sums combine)."""

imported = ImportedPrograms({WIDE_DECODE.name: lambda: models.build(WIDE_DECODE)})


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_decode_step_streaming_its_weights_matches_eager(cores: int, tmp_path) -> None:
    pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    compile_and_check(WIDE_DECODE.name, cores, tmp_path / "out", imported)
