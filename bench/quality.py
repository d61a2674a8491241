# Benchmark: the quality of the compiled code of every example, with and
# without its tiling hints.  Reads examples/*.py (every zero-argument `build*`
# factory); compiles in process into a temporary directory, runs the result on
# the reference interpreter; prints a table and, with --json, writes the figures.
"""Compiled-code quality of every example, with and without its hints.

    python bench/quality.py [--cores 32] [--json FILE]

Per example and variant ("hints": as written; "no hints": the ``hints``
attribute removed from every op of the imported module before compiling):

* HBM traffic: bytes read + written in HBM by every execution (the
  interpreter's counters) against the minimum, every graph input read once and
  every graph output written once (the manifest's ``nbytes``);
* LX peak: the highest LX high-water mark of any core against
  ``SpyreConfig().usable_lx_bytes``;
* cores used per op (SDSC file): mean and minimum;
* SDSC executions: ``sdsc_execute`` runs over the whole bundle;
* the cost model's predicted device time and its ratio to the roofline lower
  bound (``spyre_mlir.analysis.cost``);
* the matmul floor over that bound: the least time the program's matmuls alone
  could take under the division rules
  (``spyre_mlir.passes.work_division.matmul_floor_ns``).

Target: the seed example (``add_mul_nested``) with hints moves at most 1.05x
the minimum HBM traffic.
"""

from __future__ import annotations

import argparse
import inspect
import io
import json
import statistics
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp

from spyre_mlir.analysis.cost import CostReport, cost_report
from spyre_mlir.dialects.spyre import ComputeOp, target_config
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.importer import export_model, import_program, load_factory
from spyre_mlir.importer.loader import manifest_inputs
from spyre_mlir.interpreter import run
from spyre_mlir.interpreter.stats import RunStats
from spyre_mlir.manifest import Manifest, read_manifest
from spyre_mlir.passes.work_division import matmul_floor_ns
from spyre_mlir.pipeline import CompileOptions, compile_module

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SEED_EXAMPLE = "add_mul_nested:build"
HBM_TARGET = 1.05


@dataclass
class Row:
    """The figures of one (example, variant) compile and run."""

    example: str
    variant: str
    hbm_bytes: int
    hbm_min_bytes: int
    lx_peak_bytes: int
    lx_usable_bytes: int
    cores_mean: float
    cores_min: int
    sdsc_executions: int
    predicted_us: float
    """The cost model's predicted device time of the plan (spyre_mlir.analysis.cost)."""
    lower_bound_us: float
    """Its roofline lower bound."""
    matmul_floor_us: float
    """The least time its matmuls could take under the division rules."""

    @property
    def bound_ratio(self) -> float:
        """Predicted time over its lower bound."""
        return self.predicted_us / self.lower_bound_us

    @property
    def hbm_ratio(self) -> float:
        """HBM traffic over its minimum."""
        return self.hbm_bytes / self.hbm_min_bytes

    @property
    def lx_fraction(self) -> float:
        """LX peak over usable LX."""
        return self.lx_peak_bytes / self.lx_usable_bytes


def example_factories() -> dict[str, Callable[[], Any]]:
    """Every zero-argument ``build*`` function of ``examples/*.py``, as ``file:function``."""
    factories = {}
    for path in sorted(EXAMPLES.glob("*.py")):
        module_factory = load_factory(f"{path}:build")
        module = inspect.getmodule(module_factory)
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            takes_nothing = not any(p.default is p.empty for p in inspect.signature(fn).parameters.values())
            if (name == "build" or name.startswith("build_")) and takes_nothing:
                factories[f"{path.stem}:{name}"] = fn
    return factories


def strip_hints(module: ModuleOp) -> None:
    """Remove the ``hints`` attribute of every compute op (the "no hints" variant)."""
    for op in module.walk():
        if isinstance(op, ComputeOp):
            op.hints = None


def minimum_hbm_bytes(manifest: Manifest) -> int:
    """Every graph input read once and every graph output written once."""
    return sum(arg.nbytes for arg in (*manifest.inputs, *manifest.outputs))


def measure(example: str, variant: str, module: ModuleOp,
            program: tuple[torch.export.ExportedProgram, tuple[Any, ...]], cores: int, out: Path) -> Row:
    """Compile ``module`` (imported from the exported ``program`` with its inputs) on ``cores``
    into ``out``, run it, and collect the figures."""
    reports: list[tuple[CostReport, float]] = []

    def planned(planned_module: ModuleOp) -> None:
        report = cost_report(planned_module)
        reports.append((report, matmul_floor_ns(report, target_config(planned_module))))

    compile_module(module, out, CompileOptions(cores=cores), log=io.StringIO(), planned=planned)
    manifest = read_manifest(out)
    exported, inputs = program
    _, stats = run(out, manifest_inputs(exported, inputs, manifest, example))
    return row_of(example, variant, manifest, stats, *reports[0])


def row_of(example: str, variant: str, manifest: Manifest, stats: RunStats, report: CostReport,
           floor_ns: float) -> Row:
    """The figures of one run, the prediction for its plan and its matmul floor."""
    cores = [op.cores_used for op in stats.ops]
    return Row(example=example, variant=variant,
               hbm_bytes=stats.total("hbm_bytes_read") + stats.total("hbm_bytes_written"),
               hbm_min_bytes=minimum_hbm_bytes(manifest),
               lx_peak_bytes=max(stats.lx_peak_per_core(), default=0),
               lx_usable_bytes=SpyreConfig().usable_lx_bytes,
               cores_mean=statistics.fmean(cores), cores_min=min(cores),
               sdsc_executions=stats.total("executions"), predicted_us=report.total_ns / 1000,
               lower_bound_us=report.lower_bound_ns / 1000, matmul_floor_us=floor_ns / 1000)


def table(rows: list[Row]) -> str:
    """A fixed-width text table, one line per row."""
    head = ("example", "variant", "HBM bytes", "min bytes", "HBM/min", "LX peak", "LX/usable",
            "cores mean", "cores min", "SDSC runs", "predicted us", "pred / bound", "matmul floor / bound")
    cells = [head] + [(r.example, r.variant, f"{r.hbm_bytes:,}", f"{r.hbm_min_bytes:,}", f"{r.hbm_ratio:.3f}",
                       f"{r.lx_peak_bytes:,}", f"{r.lx_fraction:.3f}", f"{r.cores_mean:.1f}", str(r.cores_min),
                       str(r.sdsc_executions), f"{r.predicted_us:.1f}", f"{r.bound_ratio:.2f}",
                       f"{r.matmul_floor_us / r.lower_bound_us:.2f}") for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
                     for row in cells)


def seed_target(rows: list[Row]) -> dict[str, Any]:
    """The HBM target of the seed example with hints: its measured ratio and whether it is met."""
    seed = next(r for r in rows if r.example == SEED_EXAMPLE and r.variant == "hints")
    return {"example": SEED_EXAMPLE, "value": seed.hbm_ratio, "target": HBM_TARGET,
            "met": seed.hbm_ratio <= HBM_TARGET}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=32, help="cores of the target (default 32)")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # compile warnings (restickify copies, torch's deprecations) are not figures
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for example, factory in example_factories().items():
            torch.manual_seed(0)
            fn, inputs = factory()
            program = (export_model(fn, tuple(inputs)), tuple(inputs))
            imported = import_program(program[0])
            for variant in ("hints", "no hints"):
                module = imported.clone()
                if variant == "no hints":
                    strip_hints(module)
                out = Path(tmp) / f"{example.replace(':', '_')}_{variant.replace(' ', '_')}"
                rows.append(measure(example, variant, module, program, args.cores, out))
    print(table(rows))
    target = seed_target(rows)
    print(f"\n{SEED_EXAMPLE} with hints: HBM traffic {target['value']:.3f}x the minimum "
          f"(target <= {HBM_TARGET}x: {'met' if target['met'] else 'missed'})")
    if args.json:
        report = {"cores": args.cores, "targets": {"seed_hbm": target},
                  "rows": [{**asdict(r), "hbm_ratio": r.hbm_ratio, "lx_fraction": r.lx_fraction} for r in rows]}
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
