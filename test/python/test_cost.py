"""The cost model (spyre_mlir/analysis/cost.py): its pricing on hand-computed cases, its traffic
against what the interpreter counts, and the cross-check with torch-spyre's documented figures."""

from __future__ import annotations

import math
import re
import sys

import pytest
import torch
from xdsl.context import Context
from xdsl.dialects.builtin import TensorType, f16
from xdsl.dialects.func import FuncOp
from xdsl.utils.test_value import create_ssa_value

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint
from spyre_mlir.analysis.cost import (
    SPYRE_FACTS,
    CostReport,
    KernelRates,
    OpCost,
    Traffic,
    batch_inside,
    by_cores,
    cost_report,
    division_ns,
    division_traffic,
    kernel_ns,
    kernel_rates,
    memory_ns,
    predict,
    spill_factor,
)
from spyre_mlir.analysis.work import work_problem
from spyre_mlir.codegen.writer import write_output
from spyre_mlir.dialects.spyre import (ComputeOp, LayoutAttr, MatmulOp, Memory, PointwiseOp, ReduceOp, RestickifyOp,
                                      target_config, tensor_layout)
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.interpreter import run
from spyre_mlir.layout import stick_layout
from spyre_mlir.manifest import read_manifest
from spyre_mlir.mlir_text import make_context, parse_module
from spyre_mlir.passes.work_division import (DivisionPlan, divide_work, hbm_price, matmul_floor_ns, plan_work,
                                               refine)
from spyre_mlir.pipeline import compile_stages

from e2e_support import EXAMPLES, ROOT, ImportedPrograms

sys.path.insert(0, str(ROOT / "examples"))
import models  # noqa: E402

MB = 1 << 20


def planned(module, cores: int) -> tuple[object, list[OpCost]]:
    """``module`` after every stage but the lowering on ``cores`` cores, and its predicted costs."""
    stages = compile_stages(cores)
    for stage in stages[:-1]:
        stage.apply(make_context(), module)
    body = next(op for op in module.ops if isinstance(op, FuncOp))
    return module, predict(body, target_config(module).alignment)


# --------------------------------------------------------------------------
# Pricing
# --------------------------------------------------------------------------


def test_one_directional_traffic_runs_at_peak() -> None:
    read_only = Traffic(hbm_read=150_000)
    assert memory_ns(read_only, 32) == pytest.approx(1000.0)
    assert kernel_ns(Traffic(hbm_written=300_000), 4) == pytest.approx(2000.0)


def test_a_balanced_copy_runs_at_the_turnaround_rate() -> None:
    copy = Traffic(hbm_read=105_000, hbm_written=105_000)
    assert memory_ns(copy, 32) == pytest.approx(2000.0)          # 2 x 105 kB at 105 GB/s
    lopsided = Traffic(hbm_read=300_000, hbm_written=75_000)
    expected = 375_000 / 150 + (2 / 105 - 2 / 150) * 75_000      # the penalty is on the overlap only
    assert memory_ns(lopsided, 32) == pytest.approx(expected)


def test_a_matmul_takes_the_longer_of_compute_and_memory() -> None:
    macs = 32 * 1140 * 1000                                      # 1000 ns on 32 cores
    compute_bound = Traffic(hbm_read=15_000, macs=macs)
    assert kernel_ns(compute_bound, 32) == pytest.approx(1000.0)
    assert kernel_ns(compute_bound, 4) == pytest.approx(8000.0)
    memory_bound = Traffic(hbm_read=1_500_000, macs=macs)
    assert kernel_ns(memory_bound, 32) == pytest.approx(10_000.0)


def test_replicated_matmul_reads_run_at_the_per_core_rate() -> None:
    # 4 cores each read the same 2.3 MB right-hand slice: one read on the bus, three repeats.
    slice_bytes = 2_300_000
    traffic = Traffic(hbm_read=4 * slice_bytes, replicated_read=3 * slice_bytes)
    expected = slice_bytes / 150 + 3 * slice_bytes / (4 * 2.3)
    assert memory_ns(traffic, 4) == pytest.approx(expected)


def test_facts_carry_their_source() -> None:
    assert "torch-spyre" in type(SPYRE_FACTS).__doc__
    assert (SPYRE_FACTS.hbm_bytes_per_ns, SPYRE_FACTS.balanced_bytes_per_ns) == (150.0, 105.0)
    assert (SPYRE_FACTS.macs_per_ns_per_core, SPYRE_FACTS.replicated_read_bytes_per_ns_per_core) == (1140.0, 2.3)
    assert (SPYRE_FACTS.streamed_read_bytes_per_ns_per_core, SPYRE_FACTS.stream_pass_rows) == (150 / 32, 8)
    assert (SPYRE_FACTS.matmul_full_rows_per_core, SPYRE_FACTS.matmul_underfill_exponent) == (64, 0.35)
    assert (SPYRE_FACTS.reduce_outer_bytes_per_ns, SPYRE_FACTS.restickify_bytes_per_ns) == (113.0, 116.0)
    assert SPYRE_FACTS.spill_exponent == 0.06


# --------------------------------------------------------------------------
# Traffic: the model counts what the interpreter moves
# --------------------------------------------------------------------------

PROGRAMS = {**EXAMPLES, "llama": models.llama, "gpt2": models.gpt2}
imported = ImportedPrograms(PROGRAMS)
imported_examples = ImportedPrograms(EXAMPLES)
COUNTERS = ("hbm_bytes_read", "hbm_bytes_written", "lx_bytes_read", "lx_bytes_written")


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_predicted_traffic_is_the_counted_traffic(name: str, cores: int, tmp_path) -> None:
    """Per SDSC file, the predicted HBM and LX bytes equal the interpreter's counts: compound
    coordinates (heads, stick halves), tables read through an index, tiled loops, K splits."""
    _, module = imported(name)
    module, costs = planned(module.clone(), cores)
    compile_stages(cores)[-1].apply(make_context(), module)
    write_output(module, tmp_path / "out")
    _, stats = run(tmp_path / "out", imported.inputs(name, read_manifest(tmp_path / "out")))
    assert len(costs) == len(stats.ops)
    for cost, counted in zip(costs, stats.ops):
        predicted = (cost.traffic.hbm_read, cost.traffic.hbm_written, cost.traffic.lx_read, cost.traffic.lx_written)
        assert predicted == tuple(getattr(counted, c) for c in COUNTERS), counted.filename
        assert cost.runs == counted.executions and cost.cores == counted.cores_used, counted.filename
        assert cost.lx_peak == max(counted.lx_end.values(), default=0), counted.filename


# --------------------------------------------------------------------------
# Cross-check with torch-spyre's documented predictions (module docstring)
# --------------------------------------------------------------------------


class _Softmax(torch.nn.Module):
    def __init__(self, tiles: int):
        super().__init__()
        self.tiles = tiles

    def forward(self, x):
        with spyre_hint(tiles={"R": self.tiles}):
            return torch.softmax(x, dim=-1)


class _RowTiledMatmul(torch.nn.Module):
    def forward(self, a, b):
        with spyre_hint(tiles={"M": 8}, work_div={"K": 32}):
            return a @ b


def _totals(costs: list[OpCost]) -> tuple[float, int]:
    return sum(c.ns for c in costs) / 1000, sum(c.traffic.hbm_read + c.traffic.hbm_written for c in costs)


@pytest.mark.parametrize("tiles", [1, 8])
def test_softmax_4096x2048_on_32_cores_matches_torch_spyre(tiles: int) -> None:
    declare_tensor_dim("R", 4096)
    declare_tensor_dim("C", 2048)
    x = torch.randn(4096, 2048, dtype=torch.float16)
    name_tensor_dims(x, ["R", "C"])
    _, costs = planned(import_program(export_model(_Softmax(tiles), (x,))), 32)
    us, _ = _totals(costs)
    assert us == pytest.approx(320.0, rel=0.15)


def test_row_tiled_matmul_matches_torch_spyre() -> None:
    """8 row tiles of [4096, 2048] @ [2048, 1024]: the right-hand input is read once per tile
    (29.4 MB of re-fetch), 58.7 MB in all, 423 us in torch-spyre's model."""
    for name, size in (("M", 4096), ("K", 2048), ("N", 1024)):
        declare_tensor_dim(name, size)
    a, b = torch.randn(4096, 2048, dtype=torch.float16), torch.randn(2048, 1024, dtype=torch.float16)
    name_tensor_dims(a, ["M", "K"])
    name_tensor_dims(b, ["K", "N"])
    _, costs = planned(import_program(export_model(_RowTiledMatmul(), (a, b))), 32)
    us, hbm = _totals(costs)
    assert costs[0].runs == 8 and costs[0].op.get_core_splits() == (1, 1, 32)
    assert hbm == pytest.approx(58.7e6, rel=0.01)
    assert us == pytest.approx(423.1, rel=0.15)
    assert sum(c.traffic.replicated_read for c in costs) == 0


@pytest.mark.parametrize("rows, measured_us", [(1, 29.7), (2, 29.9), (4, 29.8), (8, 29.4), (16, 28.8)])
def test_replicated_reads_match_torch_spyres_measured_ladder(rows: int, measured_us: float) -> None:
    """torch-spyre's replicated-operand ladder: [8r, 256] @ [256, 512] fp16 split M 8 x N 4 on 32
    cores, each core re-reading a 64 KiB quarter of the right-hand input 8-fold, at 1..16 rows per
    core; measured flat near 29.5 us."""
    problem = _matmul_problem(8 * rows, 256, 512)
    assert division_ns(problem, (8, 4, 1), [Memory.HBM] * 3) / 1000 == pytest.approx(measured_us, rel=0.15)


def test_two_scalings_summed_against_torch_spyres_fused_measurement() -> None:
    """``x * 2 + x * 3`` over 8 MiB: torch-spyre measured 113 us for one fused kernel; this plan
    runs three kernels that each move 8 MiB one way (x read twice), 168 us (+48 %, the figure in
    the model's docstring)."""
    x = torch.randn(2048, 2048, dtype=torch.float16)
    _, costs = planned(import_program(export_model(lambda a: a * 2 + a * 3, (x,))), 32)
    us, hbm = _totals(costs)
    assert (len(costs), hbm) == (3, 3 * 8 * MB)
    assert us == pytest.approx(3 * 8 * MB / 150 / 1000)
    assert us / 113 == pytest.approx(1.48, abs=0.01)


def test_a_replicated_right_hand_input_is_priced_at_the_per_core_rate() -> None:
    """The same matmul split on M: every core reads all of B in every tile (31 repeats of 4 MiB
    per tile), which the model prices at 2.3 GB/s per core."""
    for name, size in (("M", 4096), ("K", 2048), ("N", 1024)):
        declare_tensor_dim(name, size)
    a, b = torch.randn(4096, 2048, dtype=torch.float16), torch.randn(2048, 1024, dtype=torch.float16)

    class MSplit(torch.nn.Module):
        def forward(self, a, b):
            with spyre_hint(tiles={"M": 8}, work_div={"M": 32}):
                return a @ b

    name_tensor_dims(a, ["M", "K"])
    name_tensor_dims(b, ["K", "N"])
    _, costs = planned(import_program(export_model(MSplit(), (a, b))), 32)
    (cost,) = costs
    assert cost.op.get_core_splits() == (32, 1, 1)
    assert cost.traffic.replicated_read == 8 * 31 * 4 * MB
    assert cost.ns / 1000 > 10 * 423.1


# --------------------------------------------------------------------------
# Reports: spyre-compile --report and spyre_mlir.compile(...).report
# --------------------------------------------------------------------------


def test_spyre_compile_report_is_the_counted_traffic(tmp_path, capsys) -> None:
    from spyre_mlir.tools.spyre_compile import main

    assert main([str(ROOT / "examples/softmax.py:build"), "-o", str(tmp_path / "out"), "--cores", "4",
                 "--report"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:6] == ["sdsc", "file", "op", "runs", "cores", "HBM"]
    total = next(line for line in lines if line.startswith("total")).split()
    assert lines[-2].startswith("lower bound ") and "predicted / lower bound = " in lines[-2]
    assert not any(line.startswith("weight-streaming bound") for line in lines)  # softmax reads no weights
    assert lines[-1].startswith(f"spyre-compile: wrote {tmp_path / 'out'}: ")  # after the report, when done
    _, stats = run(tmp_path / "out", imported.inputs("softmax", read_manifest(tmp_path / "out")))
    counted = [f"{stats.total(c):,}" for c in COUNTERS]
    assert total[3:7] == counted


MIXED = """\
func.func @main(%a: tensor<16x64xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<2x64xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<16x64xf16> {spyre.name = "e"}, tensor<2x64xf16> {spyre.name = "s"}) {
  %e = spyre.pointwise "exp" (%a) : (tensor<16x64xf16>) -> tensor<16x64xf16>
  %s = spyre.pointwise "add" (%b, %b) : (tensor<2x64xf16>, tensor<2x64xf16>) -> tensor<2x64xf16>
  func.return %e, %s : tensor<16x64xf16>, tensor<2x64xf16>
}
"""


@pytest.mark.parametrize("cores, used", [(4, (4, 2)), (32, (16, 2))])
def test_report_and_stats_tables_agree_on_cores_and_columns(cores: int, used: tuple[int, ...], tmp_path,
                                                           capsys) -> None:
    """``spyre-compile --report`` and ``spyre-run --stats`` print the same columns in the same order
    (the run adds its predicted HBM bytes after them) and the same cores: per SDSC file those one
    execution uses (the add's 2 rows use 2 cores, the exp's 16 rows at most 16), in total the
    most any file uses, not the target's count."""
    from spyre_mlir.tools.spyre_compile import main as compile_main
    from spyre_mlir.tools.spyre_run import main as run_main

    (tmp_path / "mixed.mlir").write_text(MIXED)
    assert compile_main([str(tmp_path / "mixed.mlir"), "-o", str(tmp_path / "out"), "--cores", str(cores),
                         "--report"]) == 0
    report = capsys.readouterr().out.splitlines()
    assert report.pop().startswith(f"spyre-compile: wrote {tmp_path / 'out'}: ")
    assert report.pop().startswith("lower bound ")
    assert run_main([str(tmp_path / "out"), "--stats"]) == 0
    stats = capsys.readouterr().out.splitlines()
    assert re.split(r" {2,}", report[0]) == [
        "sdsc file", "op", "runs", "cores", "HBM read", "HBM written", "LX read", "LX written", "LX peak",
        "predicted us"]
    assert len(report) == len(stats) == 4
    for printed, counted in zip(report, stats):
        assert counted.startswith(printed)
    assert [line.split()[3] for line in report[1:3]] == [str(n) for n in used]
    assert report[3].split()[:3] == ["total", "2", str(max(used))]


def test_the_python_api_returns_the_report() -> None:
    from spyre_mlir import compile as spyre_compile

    x = torch.randn(64, 128, dtype=torch.float16)
    program = spyre_compile(lambda a: (a + 1).exp(), (x,), cores=4)
    report = program.report
    assert [c.op.op_func().name for c in report.ops] == ["add", "exp"]
    # One input and one output of 64 x 128 fp16 at 150 bytes per ns: the lower bound.
    assert report.lower_bound_ns == pytest.approx(2 * 64 * 128 * 2 / 150)
    assert report.total_ns >= report.lower_bound_ns
    assert "lower bound" in report.table()


def test_the_weight_streaming_bound_reads_parameters_and_buffers_once() -> None:
    """A decode-like step: a [1, 64] activation through a [256, 64] fp16 linear layer whose result
    is written into one row of a [2, 16, 256] fp16 cache buffer.  The streaming bound is the
    weights and the cache read once at 150 bytes per ns; the updated cache counts once in the
    lower bound (as an input), not again as an output.  Tensors count their elements, not their
    layouts' padding."""
    from spyre_mlir import compile as spyre_compile

    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(64, 256, bias=False, dtype=torch.float16)
            self.register_buffer("cache", torch.zeros(2, 16, 256, dtype=torch.float16))

        def forward(self, x, position):
            self.cache.index_copy_(1, position, self.proj(x).expand(2, 1, 256))
            return self.cache.sum(1)

    report = spyre_compile(Step(), (torch.randn(1, 1, 64, dtype=torch.float16), torch.tensor([3])), cores=4).report
    weights, cache = 256 * 64 * 2, 2 * 16 * 256 * 2
    assert report.streaming_bound_ns == pytest.approx((weights + cache) / 150)
    inputs, outputs = weights + cache + 64 * 2 + 4, 2 * 256 * 2  # the position: one int32, not its stick
    assert report.lower_bound_ns == pytest.approx((inputs + outputs) / 150)
    assert "predicted / weight-streaming bound = " in report.table()


def test_the_lower_bound_counts_elements_not_the_padding_of_their_layout() -> None:
    """Regression: a patch embedding's [512, 3, 8, 8] kernel sticked on its 8 columns is eight
    times its bytes padded, which the plan never reads (it reads each tap's [512, 3] kernel): a
    bound counting the padding came out above the prediction (predicted / bound 0.27)."""
    from spyre_mlir import compile as spyre_compile

    conv = torch.nn.Conv2d(3, 512, kernel_size=8, stride=8, dtype=torch.float16).eval()
    report = spyre_compile(conv, (torch.randn(1, 3, 32, 32, dtype=torch.float16),), cores=4).report
    weights = 512 * 3 * 8 * 8 * 2 + 512 * 2
    assert report.lower_bound_ns == pytest.approx((weights + 3 * 32 * 32 * 2 + 512 * 16 * 2) / 150)
    assert report.total_ns >= report.lower_bound_ns


def test_the_lower_bound_counts_a_tiled_matmul_once_per_iteration() -> None:
    """Regression: the bound counted the MACs of a matmul in a loop's body once, not once per
    iteration, so tiling a compute-bound matmul lowered its bound (a Granite-8B-shaped layer at
    sequence 2048, its scores matmul tiled in 16: 11,685 us instead of 12,127)."""
    from spyre_mlir import compile as spyre_compile

    declare_tensor_dim("M", 1024)
    declare_tensor_dim("K", 4096)
    x, w = torch.randn(1024, 4096, dtype=torch.float16), torch.randn(4096, 4096, dtype=torch.float16)
    name_tensor_dims(x, ["M", "K"])

    def tiled(a, b):
        with spyre_hint(tiles={"M": 4}):
            return a @ b

    bounds = [spyre_compile(fn, (x, w), cores=4).report.lower_bound_ns for fn in (torch.matmul, tiled)]
    assert bounds[0] == bounds[1] == pytest.approx(1024 * 4096 * 4096 / (4 * 1140))


def test_a_table_read_through_an_index_bounds_only_the_rows_it_can_address() -> None:
    """An embedding of 4 token ids reads at most 4 of its 1000 rows: the bounds count those, as a
    mixture-of-experts decode step reads only the experts its router selects."""
    from spyre_mlir import compile as spyre_compile

    embed = torch.nn.Embedding(1000, 64, dtype=torch.float16)
    report = spyre_compile(embed, (torch.tensor([[1, 5, 7, 9]]),), cores=4).report
    assert report.streaming_bound_ns == pytest.approx(4 * 64 * 2 / 150)
    assert report.lower_bound_ns == pytest.approx((4 * 64 * 2 + 4 * 4 + 4 * 64 * 2) / 150)


def test_the_tiled_seed_example_by_hand() -> None:
    """add_mul_nested on 32 cores: 2 x 4 tiles of [512, 1024] fp16 (1 MiB each).  Per tile, the add
    reads a and b from HBM and writes y to LX; the mul reads y from LX and c from HBM and writes z
    to HBM.  Over the 8 tiles: the add moves 16 MiB one way (at peak), the mul 8 MiB each way (a
    balanced copy)."""
    _, module = imported("add_mul_nested")
    _, (add, mul) = planned(module.clone(), 32)
    tile = 512 * 1024 * 2
    assert (add.runs, mul.runs) == (8, 8)
    assert add.traffic == Traffic(hbm_read=16 * tile, lx_written=8 * tile)
    assert mul.traffic == Traffic(hbm_read=8 * tile, hbm_written=8 * tile, lx_read=8 * tile)
    assert add.ns == pytest.approx(16 * tile / 150)
    assert mul.ns == pytest.approx(16 * tile / 150 + (2 / 105 - 2 / 150) * 8 * tile)
    assert add.lx_peak == tile // 32 and mul.lx_peak == 0


def test_a_stick_reduction_by_hand() -> None:
    """A row sum of [256, 128] fp16 on 4 cores: every core reads its 64 rows of two sticks and
    writes one (sparse) stick per row, the result keeping the reduced dim on the stick.  Over 256
    rows a row reduction on 32 cores reads at peak; 4 cores drive 43 % of it; the write is at peak."""
    x = torch.randn(256, 128, dtype=torch.float16)
    _, (cost,) = planned(import_program(export_model(lambda a: a.sum(-1, keepdim=True), (x,))), 4)
    stick = 128
    assert cost.traffic == Traffic(hbm_read=256 * 2 * stick, hbm_written=256 * stick)
    read, written = 256 * 2 * stick, 256 * stick
    assert cost.ns == pytest.approx(read / (0.43 * 150) + written / 150)


def test_a_row_reduction_reads_slower_over_more_rows_and_fewer_cores() -> None:
    """torch-spyre's measured read rate of a row reduction: min(150, 114 + 61 exp(-rows / 3700))
    GB/s on 32 cores, times the share of the bus its cores drive; its write goes at peak."""
    def rates(rows: int, cores: int) -> KernelRates:
        x = create_ssa_value(TensorType(f16, [rows, 2048]))
        problem = work_problem(ReduceOp("sum", x, (1,), TensorType(f16, [rows, 1])))
        return kernel_rates(problem, (cores, 1))

    assert rates(2048, 32).read_bytes_per_ns == pytest.approx(114 + 61 * math.exp(-2048 / 3700))
    assert rates(16384, 32).read_bytes_per_ns == pytest.approx(114.7, abs=0.05)
    assert rates(256, 1).read_bytes_per_ns == pytest.approx(0.11 * 150)
    assert rates(256, 8).read_bytes_per_ns == pytest.approx(0.54 * 150)
    assert memory_ns(Traffic(hbm_read=16_500, hbm_written=1_500), 1, rates=rates(256, 1)) == pytest.approx(1010)


def test_by_cores_interpolates_in_log2_of_the_cores() -> None:
    table = SPYRE_FACTS.reduction_bus_share_by_cores
    assert [by_cores(table, c) for c in (1, 2, 4, 8, 16, 32)] == [0.11, 0.22, 0.43, 0.54, 0.54, 1.0]
    assert by_cores(table, 3) == pytest.approx(0.22 + 0.21 * math.log2(1.5))
    assert by_cores(table, 24) == pytest.approx(0.54 + 0.46 * math.log2(1.5))


def _layout(shape: list[int], order: tuple[int, ...]) -> LayoutAttr:
    return LayoutAttr(stick_layout(shape, "float16", order).device_size, order, "SEN169_FP16")


def test_a_column_reduction_and_a_transpose_move_at_their_measured_rates() -> None:
    """A sum across sticks (the reduced dim is not along the stick) moves at 113 GB/s, a restickify
    that swaps the stick dim at 116, on any cores; a restickify that keeps it is a plain copy."""
    x = create_ssa_value(TensorType(f16, [2048, 256]))
    column = work_problem(ReduceOp("sum", x, (0,), TensorType(f16, [1, 256])))
    assert kernel_rates(column, (1, 4)).bus_bytes_per_ns == 113.0
    transpose = work_problem(RestickifyOp(x, TensorType(f16, [2048, 256], _layout([2048, 256], (1, 0)))))
    assert kernel_rates(transpose, (4, 1)).bus_bytes_per_ns == 116.0
    copy = work_problem(RestickifyOp(x, TensorType(f16, [2048, 256], _layout([2048, 256], (0, 1)))))
    assert kernel_rates(copy, (4, 1)).bus_bytes_per_ns is None


def test_a_matmul_with_few_rows_per_core_underfills_the_array() -> None:
    """The array takes 8-row passes and fills at 64 rows per core: below that a matmul computes at
    (rows / 64) ** 0.35 of the rate: 16 rows per core at 62 %, one row (a decode step) at 23 %."""
    assert kernel_rates(_matmul_problem(512, 1024, 1024), (32, 1, 1)).macs_per_ns_per_core == \
        pytest.approx(1140 * (16 / 64) ** 0.35)
    assert kernel_rates(_matmul_problem(512, 1024, 1024), (1, 1, 32)).macs_per_ns_per_core == 1140
    assert kernel_rates(_matmul_problem(1, 1024, 1024), (1, 1, 32)).macs_per_ns_per_core == \
        pytest.approx(1140 * 64 ** -0.35)


@pytest.mark.parametrize("batch, cores, rate", [(8, 32, 160.0), (8, 8, 160.0), (8, 4, 168.0), (8, 1, 407.0),
                                                (2, 32, 290.0)])
def test_a_batched_matmul_in_the_default_layout_runs_at_the_measured_batched_rate(batch: int, cores: int,
                                                                                   rate: float) -> None:
    """[B, 64, 64] @ [B, 64, 64] in the default layout (dim order [0, 1, 2]: the batch just outside
    the stick) runs at torch-spyre's measured batched rate; split over the batch only, every core
    keeps its 64 rows."""
    a, b = (create_ssa_value(TensorType(f16, [batch, 64, 64])) for _ in range(2))
    problem = work_problem(MatmulOp(a, b, TensorType(f16, [batch, 64, 64])))
    splits = (min(batch, cores), 1, 1, cores // min(batch, cores))
    assert kernel_rates(problem, splits).macs_per_ns_per_core == pytest.approx(rate)


@pytest.mark.parametrize("outer, rate", [((), 160.0), (("rhs",), 236.0), (("lhs",), 287.0),
                                         (("lhs", "rhs"), 650.0), (("lhs", "rhs", "result"), 1140.0)])
def test_each_tensor_of_a_batched_matmul_with_its_batch_just_outside_the_stick_adds_its_share(outer, rate) -> None:
    """[8, 64, 64] @ [8, 64, 64] on 32 cores with some tensors' batch outermost (dim order [1, 0,
    2]) reproduces torch-spyre's measured rates within 2 %: the left-hand operand, the right-hand
    one and the result in the default layout each add their own time per MAC."""
    def value(name: str):
        order = (1, 0, 2) if name in outer else (0, 1, 2)
        return TensorType(f16, [8, 64, 64], _layout([8, 64, 64], order))
    a, b = create_ssa_value(value("lhs")), create_ssa_value(value("rhs"))
    problem = work_problem(MatmulOp(a, b, value("result")))
    assert kernel_rates(problem, (8, 1, 1, 4)).macs_per_ns_per_core == pytest.approx(rate, rel=0.02)


def test_a_batched_matmul_with_the_batch_outside_runs_at_the_matmul_rate() -> None:
    """The same matmul as [1, 8, 64, 64] (the unit dim just outside the stick, the batch outside
    the rows) is not the slow default layout."""
    a, b = (create_ssa_value(TensorType(f16, [1, 8, 64, 64])) for _ in range(2))
    problem = work_problem(MatmulOp(a, b, TensorType(f16, [1, 8, 64, 64])))
    assert kernel_rates(problem, (1, 8, 1, 1, 4)).macs_per_ns_per_core == 1140


def test_regression_heads_merged_with_their_rows_are_no_batch_just_outside_the_stick() -> None:
    """Keys ``[S, H * D]`` read as ``[H, D, S]`` in place (a matmul's B, staged sticked on S): the
    position just outside their stick steps through ``128 * h + d``, each head's rows first, as a
    2-D matrix does, so the right-hand operand holds no batch there (ConvBERT's attention scores
    were priced at the default-layout rate, 3 % of its predicted time)."""
    text = """
    func.func @f(%q: tensor<4x256x128xf16>, %k: tensor<256x512xf16> {spyre.role = "parameter"}) -> tensor<4x256x256xf16> {
      %kt = spyre.view %k affine_map<(d0, d1, d2) -> (d2, ((d0 * 128) + d1))> : tensor<256x512xf16> -> tensor<4x128x256xf16>
      %s = spyre.matmul (%q, %kt) : (tensor<4x256x128xf16>, tensor<4x128x256xf16>) -> tensor<4x256x256xf16>
      func.return %s : tensor<4x256x256xf16>
    }"""
    module = parse_module(make_context(), text, "f.mlir")
    stages = compile_stages(4)
    through_fold_views = next(i for i, stage in enumerate(stages) if stage.name == "spyre-fold-views") + 1
    for stage in stages[:through_fold_views]:  # the matmul then reads the keys as stored
        stage.apply(Context(), module)
    matmul = next(op for op in module.walk() if isinstance(op, MatmulOp))
    assert tensor_layout(matmul.inputs[1].type).dim_order == (1, 0)
    assert batch_inside(work_problem(matmul)) == (4, 1, 4)


def test_spyre_run_stats_shows_the_prediction_beside_the_counts(tmp_path, capsys) -> None:
    """cost.json carries the prediction into the output directory; spyre-run --stats prints it
    next to what the run counted, and the two agree."""
    from spyre_mlir.tools.spyre_compile import main as compile_main
    from spyre_mlir.tools.spyre_run import main as run_main

    source = str(ROOT / "examples/softmax.py:build")
    assert compile_main([source, "-o", str(tmp_path / "out"), "--cores", "4"]) == 0
    assert capsys.readouterr().out.startswith("spyre-compile: wrote ")
    assert run_main([str(tmp_path / "out"), "--check", source, "--stats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("predicted us  predicted HBM read  predicted HBM written")
    for line in lines[1:7]:
        cells = line.split()
        if cells[0] == "total":  # its op column is empty
            cells.insert(1, "")
        hbm_read, hbm_written, predicted_read, predicted_written = cells[4], cells[5], cells[-2], cells[-1]
        assert (hbm_read, hbm_written) == (predicted_read, predicted_written), line


def test_a_malformed_prediction_is_a_located_error(tmp_path) -> None:
    from spyre_mlir.diagnostics import SpyreError
    from spyre_mlir.tools.spyre_compile import main as compile_main

    assert compile_main([str(ROOT / "examples/softmax.py:build"), "-o", str(tmp_path / "out")]) == 0
    (tmp_path / "out" / "cost.json").write_text('{"sdsc_files": {"sdsc_0.json": {"predicted_us": "soon"}}}')
    with pytest.raises(SpyreError, match="'sdsc_files' must give numbers for every SDSC file") as raised:
        run(tmp_path / "out", imported.inputs("softmax", read_manifest(tmp_path / "out")))
    assert raised.value.loc == str(tmp_path / "out" / "cost.json")


# --------------------------------------------------------------------------
# Decisions made by the model
# --------------------------------------------------------------------------


def _matmul_problem(m: int, k: int, n: int):
    return work_problem(MatmulOp(create_ssa_value(TensorType(f16, [m, k])), create_ssa_value(TensorType(f16, [k, n])),
                                 TensorType(f16, [m, n])))


def test_a_split_matmul_with_replication_by_hand() -> None:
    """[256, 512] @ [512, 1024] fp16 split M 4 x K 8: each of the 32 cores reads a 64 x 64 block of
    A (8 KB, no core repeats one) and a 64 x 1024 block of B (128 KB, every M group repeats it: 24
    replicated), and each M group writes its 64 x 1024 rows (128 KB) once, the K partials combined."""
    problem = _matmul_problem(256, 512, 1024)
    traffic = division_traffic(problem, (4, 1, 8), [Memory.HBM] * 3)
    block_a, block_b, rows = 64 * 64 * 2, 64 * 1024 * 2, 64 * 1024 * 2
    assert traffic == Traffic(hbm_read=32 * (block_a + block_b), hbm_written=4 * rows, macs=256 * 512 * 1024,
                              replicated_read=24 * block_b)
    bus = (32 * block_a + 8 * block_b + 4 * rows) / 150 + (2 / 105 - 2 / 150) * 4 * rows
    assert kernel_ns(traffic, 32) == pytest.approx(bus + 24 * block_b / (32 * 2.3))


def test_work_division_splits_k_where_m_would_replicate_the_weight() -> None:
    """The same matmul on 32 cores: K 8 alone (15 us) beats M 4 x K 8 (58 us: B re-read by every M
    group) and the M 32 a largest-dim-first division chose (457 us), idling 24 cores."""
    problem = _matmul_problem(256, 512, 1024)
    price = hbm_price(problem)
    assert plan_work(problem, SpyreConfig(cores=32)).splits == (1, 1, 8)
    assert price((1, 1, 8)) == pytest.approx(15230, rel=1e-3)
    assert price((1, 1, 8)) < price((4, 1, 8)) < price((32, 1, 1))


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_streamed_weight_is_read_at_the_share_of_the_cores_reading_it(cores: int) -> None:
    """[1, 4096] @ [4096, 4096] fp16 split K ``cores`` ways: each core reads its own 32 MiB / cores
    of the weight, which feeds one MAC per element, at 150 / 32 bytes per ns; 32 cores reach the
    peak.  The activation (each core its K slice) and the combined result take the bus."""
    problem = _matmul_problem(1, 4096, 4096)
    traffic = division_traffic(problem, (1, 1, cores), [Memory.HBM] * 3)
    weight, activation, result = 4096 * 4096 * 2, 4096 * 2, 4096 * 2
    assert traffic.streamed_read == weight and traffic.replicated_read == 0
    bus = (weight + activation + result) / 150 + (2 / 105 - 2 / 150) * result
    assert kernel_ns(traffic, cores) == pytest.approx(bus + weight / (cores * 150 / 32) - weight / 150)


def test_rows_beyond_a_decode_batch_do_not_stream() -> None:
    """At 16 rows each weight element feeds 16 MACs: the weight is no streamed read."""
    assert division_traffic(_matmul_problem(16, 4096, 4096), (1, 1, 1), [Memory.HBM] * 3).streamed_read == 0
    assert division_traffic(_matmul_problem(8, 4096, 4096), (1, 1, 1), [Memory.HBM] * 3).streamed_read > 0


def test_a_broadcast_operand_takes_the_bus_once() -> None:
    """x [256, 1024] * w [1024] on 32 cores split by rows: every core reads all of w (counted 32
    times), but the device delivers it once: the time is that of one copy of w."""
    x, w = create_ssa_value(TensorType(f16, [256, 1024])), create_ssa_value(TensorType(f16, [1024]))
    op = PointwiseOp("mul", [x, w], TensorType(f16, [256, 1024]))
    traffic = division_traffic(work_problem(op), (32, 1), [Memory.HBM] * 3)
    assert traffic.hbm_read == 256 * 1024 * 2 + 32 * 1024 * 2 and traffic.shared_read == 31 * 1024 * 2
    read, written = 256 * 1024 * 2 + 1024 * 2, 256 * 1024 * 2
    assert memory_ns(traffic, 32) == pytest.approx((read + written) / 150 + (2 / 105 - 2 / 150) * written)


@pytest.mark.parametrize("name", EXAMPLES)
def test_more_cores_are_never_predicted_slower(name: str) -> None:
    (_, _), module = imported_examples(name)
    totals = [sum(c.ns for c in planned(module.clone(), cores)[1]) for cores in (1, 4, 32)]
    assert totals[0] >= totals[1] * (1 - 1e-9) and totals[1] >= totals[2] * (1 - 1e-9), totals


@pytest.mark.parametrize("name", EXAMPLES)
def test_refinement_never_raises_the_division_price(name: str) -> None:
    """Step 5 of work division takes, op by op, the split that makes the op and its neighbours
    cheapest: over the whole program the price work division minimizes never rises (a neighbour
    left out of an op's neighbourhood would let it rise)."""
    (_, _), module = imported_examples(name)
    stages = compile_stages(32)
    for stage in stages[:[s.name for s in stages].index("spyre-work-division")]:
        stage.apply(make_context(), module)
    config = target_config(module)
    plan = DivisionPlan(config)
    divisions = {op: divide_work(op, config, plan) for op in module.walk() if isinstance(op, ComputeOp)}
    before = sum(plan.price(op, {}) for op in divisions)
    refine(plan, divisions)
    after = sum(plan.price(op, {}) for op in divisions)
    assert after <= before * (1 + 1e-9), (before, after)


def _projection(cores: int) -> CostReport:
    """exp of an input, projected by a weight input, exp again: planned on ``cores`` cores."""
    text = """
    func.func @f(%x: tensor<256x1024xf16>, %w: tensor<1024x1024xf16>) -> tensor<256x1024xf16> {
      %a = spyre.pointwise "exp" (%x) : (tensor<256x1024xf16>) -> tensor<256x1024xf16>
      %y = spyre.matmul (%a, %w) : (tensor<256x1024xf16>, tensor<1024x1024xf16>) -> tensor<256x1024xf16>
      %z = spyre.pointwise "exp" (%y) : (tensor<256x1024xf16>) -> tensor<256x1024xf16>
      func.return %z : tensor<256x1024xf16>
    }
    """
    module, _ = planned(parse_module(make_context(), text, "f.mlir"), cores)
    return cost_report(module)


def test_the_matmul_floor_of_one_core_is_its_compute_by_hand() -> None:
    """On one core the only split is none: 256 * 1024 * 1024 MACs at 1,140 per ns, against 2.5 MiB
    of operands at 150 bytes per ns (the result stays in LX for its reader)."""
    report = _projection(1)
    expected = 256 * 1024 * 1024 / 1140
    assert matmul_floor_ns(report, SpyreConfig(cores=1)) == pytest.approx(expected)
    assert (1024 * 1024 + 256 * 1024) * 2 / 150 < expected


def test_the_matmul_floor_bounds_the_plan_and_replication_lowers_it() -> None:
    """On 32 cores the planned matmul costs at least its floor; letting every core hold the whole
    left-hand input in LX (it is computed, not a graph input) lowers the floor further."""
    report = _projection(32)
    (matmul,) = [c for c in report.ops if isinstance(c.op, MatmulOp)]
    floor = matmul_floor_ns(report, SpyreConfig(cores=32))
    replicated = matmul_floor_ns(report, SpyreConfig(cores=32), replicated_in_lx=True)
    assert replicated < floor <= matmul.ns * (1 + 1e-9)


@pytest.mark.parametrize("trips, spills", [(1, False), (2, True)])
def test_work_division_spills_only_in_a_loop_of_more_than_one_iteration(trips: int, spills: bool) -> None:
    """As the report (:func:`price`), work division applies the spill derate only to an op that runs
    more than once: exp over [1024, 1024] fp16 on one core moves 8 times the practical LX."""
    text = f"""
    func.func @f(%a: tensor<1024x1024xf16>) -> tensor<1024x1024xf16> {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %ub = arith.constant {trips} : index
      %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %a) -> (tensor<1024x1024xf16>) {{
        %y = spyre.pointwise "exp" (%acc) : (tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
        scf.yield %y : tensor<1024x1024xf16>
      }}
      func.return %r : tensor<1024x1024xf16>
    }}
    """
    module = parse_module(make_context(), text, "f.mlir")
    exp = next(op for op in module.walk() if isinstance(op, ComputeOp))
    unspilled = kernel_ns(division_traffic(work_problem(exp), (1, 1), [Memory.HBM] * 2), 1)
    predicted = DivisionPlan(SpyreConfig(cores=1)).price(exp, {exp: (1, 1)})
    assert predicted == pytest.approx(unspilled * (8 ** 0.06 if spills else 1.0))


def test_a_tiled_working_set_beyond_the_practical_lx_spills() -> None:
    """exp over a [1024, 1024] fp16 tile on one core moves 2 MiB in and 2 MiB out: 8 times the
    practical 512 KiB, so in a coarse-tiling loop its memory runs 8 ** 0.06 times slower (torch-spyre's
    refitted exponent); not in a
    loop, or split over 8 cores (512 KiB each), it does not spill."""
    x = create_ssa_value(TensorType(f16, [1024, 1024]))
    problem = work_problem(PointwiseOp("exp", [x], TensorType(f16, [1024, 1024])))
    assert spill_factor(problem, (1, 1), tiled=True) == pytest.approx(8 ** 0.06)
    assert spill_factor(problem, (1, 1), tiled=False) == 1.0
    assert spill_factor(problem, (8, 1), tiled=True) == 1.0
    traffic = division_traffic(problem, (1, 1), [Memory.HBM] * 2)
    assert kernel_ns(traffic, 1, spill=8 ** 0.06) == pytest.approx(8 ** 0.06 * memory_ns(traffic, 1))
