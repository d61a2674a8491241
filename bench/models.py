# Benchmark: real attention models (examples/models.py) at a realistic size,
# compiled for several core counts, run on the reference interpreter and compared
# with eager.  Reads examples/models.py; compiles into a temporary directory;
# prints a table and, with --json, writes the figures.
"""Real models, compiled and checked: compile time, executions, error, HBM traffic, LX.

    python bench/models.py [--layers 4] [--hidden 1024] [--length 256] [--cores 1 4 32]
                           [--families llama granite gpt2 bert encoder mha phi neox gptj roberta t5 clip
                                       granitemoe mixtral qwen2moe vit whisper convnext resnet wav2vec2
                                       convbert]
                           [--dtypes fp16 bf16 fp32]
                           [--first-only] [--json FILE]

Per model (family, how it is called, dtype) and core count: the compile time
(import, compile-time evaluation included, and every pass), the number of ops
compile-time evaluation folded, SDSC executions, whether the outputs match eager
within the dtype's tolerance and the largest absolute error, HBM bytes read and
written (the interpreter's counters), the highest LX high-water mark of any
core, and the cost model's predicted device time with its ratio to the roofline
lower bound.  Two matmul floors, also over the bound, say how much of the
distance to it the division rules leave: the least time the program's matmuls
alone could take under the cost model
(``spyre_mlir.passes.work_division.matmul_floor_ns``), under today's rules and
with an operand several cores read allowed in each core's LX.  Beside the error
against eager, each row gives the largest error of the
compiled program and of eager against the same model run in float32: in a deep
float16 model both drift from float32 by about as much, while a mismatch with
eager alone is the dtype's rounding noise amplified (Granite's unscaled
attention scores do that).  A model that fails to compile or to match is a row
saying so; the benchmark goes on.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from xdsl.dialects.builtin import ModuleOp

from spyre_mlir.analysis.cost import CostReport, cost_report
from spyre_mlir.dialects.spyre import target_config
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.importer.loader import manifest_inputs
from spyre_mlir.interpreter import compare, run, tolerance_for
from spyre_mlir.interpreter.runner import as_numpy
from spyre_mlir.manifest import read_manifest
from spyre_mlir.passes.work_division import matmul_floor_ns
from spyre_mlir.pipeline import CompileOptions, compile_module

_spec = importlib.util.spec_from_file_location("example_models", Path(__file__).resolve().parents[1]
                                               / "examples" / "models.py")
models = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # dataclasses need it
_spec.loader.exec_module(models)


@dataclass
class Row:
    """The figures of one model on one core count."""

    model: str
    cores: int
    status: str
    """``match``, ``MISMATCH`` or ``error: ...``."""
    compile_s: float = 0.0
    folded_ops: int = 0
    executions: int = 0
    max_abs_err: float = 0.0
    fp32_err: float = 0.0
    """Largest absolute difference from the same model run in float32 eager."""
    eager_fp32_err: float = 0.0
    """The same for eager in the model's dtype: the rounding error of the dtype itself."""
    hbm_read: int = 0
    hbm_written: int = 0
    lx_peak: int = 0
    predicted_us: float = 0.0
    """The cost model's predicted device time of the plan (spyre_mlir.analysis.cost)."""
    lower_bound_us: float = 0.0
    """Its roofline lower bound."""
    matmul_floor_us: float = 0.0
    """The least time its matmuls could take under the division rules (``matmul_floor_ns``)."""
    replicated_floor_us: float = 0.0
    """The same with an operand several cores read allowed in each core's LX."""


def variants(families: list[str], dtypes: list[str], every: bool = True) -> list[Any]:
    """Every way of calling each family (transformers with ids and embeds, sdpa and eager; the
    encoder pre- and post-norm, relu and gelu), or with ``every=False`` the first of them."""
    out = []
    for family in families:
        for dtype in dtypes:
            dt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
            if family in models.TRANSFORMERS:
                ways = [models.Model(family, attention=a, ids=i, dtype=dt) for a in ("sdpa", "eager")
                        for i in (True, False)]
            elif family == "encoder":
                ways = [models.Model(family, norm_first=n, activation=a, dtype=dt) for n in (False, True)
                        for a in ("relu", "gelu")]
            else:
                ways = [models.Model(family, dtype=dt)]
            out += ways if every else ways[:1]
    return out


def measure(model: Any, cores_list: list[int], tmp: Path) -> list[Row]:
    """Export and import ``model`` once; compile, run and check it on each core count."""
    fn, inputs = models.build(model)
    start = time.perf_counter()
    try:
        program = export_model(fn, inputs)
        imported = import_program(program)
    except SpyreError as e:
        return [Row(model.name, cores, f"error: {e.format('import')}") for cores in cores_list]
    import_s = time.perf_counter() - start
    folded = imported.ops.first.attributes.get("spyre.folded_ops")
    with torch.no_grad():
        expected = as_numpy(fn(*inputs))
        reference_fn, reference_inputs = models.build(models.with_size(model, dtype=torch.float32))
        reference = as_numpy(reference_fn(*reference_inputs)).astype(np.float64)
    rows = []
    for cores in cores_list:
        out = tmp / f"{model.name}-{cores}"
        row = Row(model.name, cores, "match", folded_ops=folded.value.data if folded is not None else 0)
        try:
            start = time.perf_counter()
            floors: list[tuple[float, float]] = []
            reports: list[CostReport] = []

            def planned(module: ModuleOp) -> None:
                report, config = cost_report(module), target_config(module)
                reports.append(report)
                floors.append((matmul_floor_ns(report, config), matmul_floor_ns(report, config, replicated_in_lx=True)))

            compile_module(imported.clone(), out, CompileOptions(cores=cores), log=io.StringIO(), planned=planned)
            row.compile_s = import_s + time.perf_counter() - start
            manifest = read_manifest(out)
            outputs, stats = run(out, manifest_inputs(program, inputs, manifest, model.name))
        except SpyreError as e:
            row.status = f"error: {e.format(model.name)}"
            rows.append(row)
            continue
        arg = manifest.outputs[0]
        got = outputs[arg.name]
        row.max_abs_err = float(np.max(np.abs(got.astype(np.float64) - expected.astype(np.float64))))
        row.fp32_err = float(np.max(np.abs(got.astype(np.float64) - reference)))
        row.eager_fp32_err = float(np.max(np.abs(expected.astype(np.float64) - reference)))
        try:
            compare(arg.name, got, expected, tolerance_for(arg.dtype))
        except SpyreError:
            row.status = "MISMATCH"
        row.executions = stats.total("executions")
        row.hbm_read, row.hbm_written = stats.total("hbm_bytes_read"), stats.total("hbm_bytes_written")
        row.lx_peak = max(stats.lx_peak_per_core(), default=0)
        row.predicted_us, row.lower_bound_us = reports[0].total_ns / 1000, reports[0].lower_bound_ns / 1000
        row.matmul_floor_us, row.replicated_floor_us = (ns / 1000 for ns in floors[0])
        rows.append(row)
    return rows


def table(rows: list[Row]) -> str:
    """A Markdown table, one line per row."""
    head = ("model", "cores", "compile s", "folded", "executions", "match", "max abs err", "vs fp32",
            "eager vs fp32", "HBM read", "HBM written", "LX peak", "predicted us", "pred / bound",
            "matmul floor / bound", "replicated floor / bound")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = (r.model, str(r.cores), f"{r.compile_s:.2f}", str(r.folded_ops), str(r.executions), r.status,
                 f"{r.max_abs_err:.3g}", f"{r.fp32_err:.3g}", f"{r.eager_fp32_err:.3g}", f"{r.hbm_read:,}",
                 f"{r.hbm_written:,}", f"{r.lx_peak:,}", f"{r.predicted_us:.1f}",
                 *(f"{us / r.lower_bound_us:.2f}" if r.lower_bound_us else "-"
                   for us in (r.predicted_us, r.matmul_floor_us, r.replicated_floor_us)))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=list(models.FAMILIES), choices=models.FAMILIES)
    parser.add_argument("--dtypes", nargs="+", default=["fp16"], choices=["fp16", "bf16", "fp32"])
    parser.add_argument("--cores", nargs="+", type=int, default=[1, 4, 32])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--length", type=int, default=256)
    parser.add_argument("--first-only", action="store_true",
                        help="one way of calling each family (transformers: sdpa with input_ids)")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # compile warnings and torch's deprecations are not figures
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in variants(args.families, args.dtypes, not args.first_only):
            sized = models.with_size(model, layers=args.layers, hidden=args.hidden, heads=args.heads,
                                     length=args.length)
            for row in measure(sized, args.cores, Path(tmp)):
                rows.append(row)
                print(table([row]).splitlines()[-1], flush=True)
    print()
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0 if all(r.status == "match" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
