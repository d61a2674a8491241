# Benchmark: compile time of stacked transformer blocks
# (examples/transformer_block.py:build_layers) against torch.export, in one
# process.  Reads the example; writes output directories in a temporary
# directory, a table on stdout and, with --json, the figures as JSON.
"""Compile time of ``spyre-compile`` against ``torch.export``, and its scaling.

    python bench/compile_time.py [--layers 1,4,16,40] [--cores 32] [--json FILE]

Per layer count, in one process: the wall time of ``torch.export``; of
"compile" = import (``run_decompositions`` included) + every pipeline stage +
the final verification + writing the output directory; their ratio; ops (the
``spyre`` ops of the imported module) per second of compile; the time of every
stage (as ``spyre-compile --time-passes`` reports it); the process's peak RSS
so far.  "decomp" is ``run_decompositions`` alone (the importer's first step),
timed again separately after the compile: it shows how much of "import" is
torch's.

One block is measured twice: first "cold", as ``spyre-compile
examples/transformer_block.py:build`` runs it in a fresh process (torch.export
then pays for its lazy imports and tracing set-up, the compile for the
decomposition tables and dialect set-up), then "warm" with the other layer
counts, after those one-off costs are paid.

Targets: compile / export <= 1.0 for one block; time per op at the largest
layer count <= 1.5x the time per op at one layer (warm).
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from spyre_mlir.codegen.writer import write_output
from spyre_mlir.gc_tuning import fewer_collections
from spyre_mlir.importer import export_model, import_program, load_factory
from spyre_mlir.importer.core import decomposition_table
from spyre_mlir.pipeline import CompileOptions, run_stages

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "transformer_block.py"
RATIO_TARGET = 1.0
SCALING_TARGET = 1.5


@dataclass
class Row:
    """The figures of one layer count (times in seconds)."""

    label: str
    layers: int
    ops: int
    export: float
    import_: float
    decompose: float
    """``run_decompositions`` alone (part of ``import_``, timed separately)."""
    pipeline: float
    write: float
    stages: dict[str, float]
    peak_rss_mib: float

    @property
    def compile(self) -> float:
        """Import + pipeline (with verification) + writing."""
        return self.import_ + self.pipeline + self.write

    def as_json(self) -> dict[str, Any]:
        """The row with its derived figures, for ``--json``."""
        d = asdict(self)
        d["import"] = d.pop("import_")
        d.update(compile=self.compile, ratio=self.compile / self.export, ops_per_second=self.ops / self.compile,
                 us_per_op=1e6 * self.compile / self.ops)
        return d


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn()`` and its wall time in seconds."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def spyre_op_count(module: ModuleOp) -> int:
    """Number of ``spyre`` dialect ops in ``module``."""
    return sum(1 for op in module.walk() if op.name.startswith("spyre."))


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(layers: int, cores: int, out_dir: Path, label: str | None = None) -> Row:
    """Export, import, compile and write ``layers`` stacked blocks."""
    model, inputs = load_factory(f"{EXAMPLE}:build_layers")(layers)
    program, t_export = timed(lambda: export_model(model, inputs))
    module, t_import = timed(lambda: import_program(program))
    ops = spyre_op_count(module)
    stages, t_pipeline = timed(lambda: run_stages(module, CompileOptions(cores=cores), log=io.StringIO()))
    _, t_write = timed(lambda: write_output(module, out_dir / f"layers_{layers}"))
    with fewer_collections():  # as inside import_program
        _, t_decompose = timed(lambda: program.run_decompositions(decomposition_table()))
    return Row(label or str(layers), layers, ops, t_export, t_import, t_decompose, t_pipeline, t_write,
               dict(stages), peak_rss_mib())


def print_table(rows: list[Row]) -> None:
    """The figures as two small tables: totals, then per-stage times."""
    print(f"{'layers':>9} {'ops':>6} {'export s':>9} {'import s':>9} {'(decomp)':>9} {'stages s':>9} "
          f"{'write s':>8} {'compile s':>10} {'ratio':>6} {'ops/s':>7} {'us/op':>7} {'peak MiB':>9}")
    for r in rows:
        print(f"{r.label:>9} {r.ops:>6} {r.export:>9.3f} {r.import_:>9.3f} {r.decompose:>9.3f} "
              f"{r.pipeline:>9.3f} {r.write:>8.3f} "
              f"{r.compile:>10.3f} {r.compile / r.export:>6.2f} {r.ops / r.compile:>7.0f} "
              f"{1e6 * r.compile / r.ops:>7.0f} {r.peak_rss_mib:>9.0f}")
    print()
    print(f"{'stage (s)':<28}" + "".join(f"{r.label:>10}" for r in rows))
    for name in rows[0].stages:
        print(f"{name:<28}" + "".join(f"{r.stages[name]:>10.3f}" for r in rows))
    print(f"{'verify':<28}" + "".join(f"{r.pipeline - sum(r.stages.values()):>10.3f}" for r in rows))


def targets(cold: Row, rows: list[Row]) -> dict[str, Any]:
    """The targets, each with its measured value and whether it is met."""
    one, last = rows[0], rows[-1]
    scaling = (last.compile / last.ops) / (one.compile / one.ops)
    found = {f"ratio_{when}": {"value": r.compile / r.export, "target": RATIO_TARGET,
                               "met": r.compile / r.export <= RATIO_TARGET}
             for when, r in (("cold", cold), ("warm", one))}
    found["scaling"] = {"layers": [one.layers, last.layers], "value": scaling, "target": SCALING_TARGET,
                        "met": scaling <= SCALING_TARGET}
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="1,4,16,40",
                        help="comma-separated layer counts (default 1,4,16,40; 1 is always measured)")
    parser.add_argument("--cores", type=int, default=32, help="cores of the target (default 32)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    layers = sorted({1, *(int(n) for n in args.layers.split(","))})
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        cold = measure(1, args.cores, Path(tmp) / "cold", "1 (cold)")
        rows = [measure(n, args.cores, Path(tmp)) for n in layers]
    print_table([cold, *rows])
    met = targets(cold, rows)
    print()
    for when in ("cold", "warm"):
        ratio = met[f"ratio_{when}"]
        print(f"compile / export, one block ({when}): {ratio['value']:.2f} "
              f"(target <= {RATIO_TARGET}: {'met' if ratio['met'] else 'missed'})")
    print(f"time per op, {layers[-1]} vs 1 layer: {met['scaling']['value']:.2f}x "
          f"(target <= {SCALING_TARGET}x: {'met' if met['scaling']['met'] else 'missed'})")
    if args.json:
        Path(args.json).write_text(json.dumps({"cores": args.cores, "cold": cold.as_json(),
                                               "rows": [r.as_json() for r in rows], "targets": met},
                                              indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
