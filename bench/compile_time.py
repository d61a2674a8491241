# Benchmark: compile time of a Granite-3B- or Granite-8B-shaped transformers GraniteModel (or
# the example's stacked decoder blocks) at several layer counts against torch.export, in one
# process.
# Reads the model (transformers, random weights) or examples/transformer_block.py; writes output
# directories in a temporary directory, a table on stdout and, with --json, the figures as JSON.
"""Compile time of ``spyre-compile`` against ``torch.export``, and its scaling with depth.

    python bench/compile_time.py [--model granite3b|granite8b|block] [--layers 1,4,16,40]
                                 [--tokens N] [--cores 32] [--repeat 3] [--json FILE]

``granite3b`` (the default) is a transformers ``GraniteModel`` shaped like Granite-3B (hidden
2048, 32 heads, 8 key/value heads, intermediate 8192, vocabulary 256), float16, over 256
tokens; ``granite8b`` one shaped like Granite-8B (hidden 4096, 32 heads, 8 key/value heads,
intermediate 12800), over 2048 tokens (``--model granite8b --layers 1``: issue 30's one-layer
target); ``block`` is ``examples/transformer_block.py``'s decoder block stacked.  Per layer count,
in one process: the best of ``--repeat`` runs of ``torch.export``; "compile" = decomposition
(torch's ``run_decompositions``) + import + every pipeline stage + the final verification + writing
the output directory, as ``spyre-compile --time-passes`` times them; their ratio; the marginal
seconds per layer from the previous layer count; ops (the ``spyre`` ops of the imported
module) per second; the time of every stage; the process's peak RSS so far.

One model is measured twice: first "cold", as ``spyre-compile`` runs it in a fresh process
(torch.export then pays for its lazy imports and tracing set-up, the compile for the
decomposition tables and dialect set-up), then "warm" with the other layer counts.

Targets (issue 30): compile / export <= 2 at the largest layer count (<= 3 for ``granite8b``);
the marginal seconds per layer from the middle to the largest count no more than from the
smallest to the middle.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from spyre_mlir.codegen.writer import write_output
from spyre_mlir.importer import export_model, import_program, load_factory
from spyre_mlir.pipeline import COMPILE_STAGES, CompileOptions, run_stages
from spyre_mlir.timing import phase, timed

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "transformer_block.py"
RATIO_TARGETS = {"granite3b": 2.0, "granite8b": 3.0, "block": 2.0}
"""Issue 30's compile / export target at the largest layer count, per model."""
SHAPES = {
    "granite3b": dict(hidden_size=2048, intermediate_size=8192, num_attention_heads=32, num_key_value_heads=8,
                      vocab_size=256, max_position_embeddings=4096),
    "granite8b": dict(hidden_size=4096, intermediate_size=12800, num_attention_heads=32, num_key_value_heads=8,
                      vocab_size=256, max_position_embeddings=4096),
}
"""The transformers shapes of ``--model`` (their layer count is the benchmark's)."""
TOKENS = {"granite3b": 256, "granite8b": 2048, "block": None}
"""The default ``--tokens`` per model (the block's are its example's)."""


@dataclass
class Row:
    """The figures of one layer count (times in seconds)."""

    label: str
    layers: int
    ops: int
    export: float
    """The best of ``--repeat`` exports."""
    phases: dict[str, float]
    """The compile's phases as ``spyre-compile --time-passes`` times them (``decompose``,
    ``import``, every stage, ``verify``, ``write``)."""
    compile: float
    """The compile's wall time: the phases and what no phase took."""
    peak_rss_mib: float

    def as_json(self) -> dict[str, Any]:
        """The row with its derived figures, for ``--json``."""
        return {**asdict(self), "ratio": self.compile / self.export, "ops_per_second": self.ops / self.compile}


def build(model: str, layers: int, tokens: int | None = None) -> tuple[Any, tuple[Any, ...]]:
    """``layers`` layers of ``model`` (``granite3b``, ``granite8b`` or ``block``) and their example
    inputs, ``tokens`` of them (default :data:`TOKENS`; the block's are its example's)."""
    if model == "block":
        return load_factory(f"{EXAMPLE}:build_layers")(layers)
    import torch
    import transformers

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module):
            super().__init__()
            self.inner = inner

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.inner(ids).last_hidden_state

    torch.manual_seed(0)
    shape, tokens = SHAPES[model], tokens or TOKENS[model]
    config = transformers.GraniteConfig(num_hidden_layers=layers, **{**shape, "max_position_embeddings":
                                                                      max(shape["max_position_embeddings"], tokens)})
    model_ = LastHiddenState(transformers.GraniteModel(config).eval()).half()
    return model_, (torch.randint(0, shape["vocab_size"], (1, tokens), generator=torch.Generator().manual_seed(0)),)


def spyre_op_count(module: ModuleOp) -> int:
    """Number of ``spyre`` dialect ops in ``module``."""
    return sum(1 for op in module.walk() if op.name.startswith("spyre."))


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(model: str, layers: int, cores: int, repeat: int, out_dir: Path, label: str | None = None,
            tokens: int | None = None) -> Row:
    """Export ``layers`` layers of ``model`` (best of ``repeat``), then import, compile and write them."""
    fn, inputs = build(model, layers, tokens)
    exports = []
    for _ in range(repeat):
        start = time.perf_counter()
        program = export_model(fn, inputs)
        exports.append(time.perf_counter() - start)
    with timed() as timings:
        module = import_program(program)
        ops = spyre_op_count(module)
        run_stages(module, CompileOptions(cores=cores), log=sys.stderr)
        with phase("write"):
            write_output(module, out_dir / f"layers_{layers}")
    rows = timings.rows()
    phases = {name: p.seconds for name, p in timings.phases.items()}
    return Row(label or str(layers), layers, ops, min(exports), phases, rows[-1][1], peak_rss_mib())


def marginal(rows: list[Row]) -> list[float | None]:
    """Per row, the compile seconds per layer added since the previous row (None for the first)."""
    return [None, *((b.compile - a.compile) / (b.layers - a.layers) for a, b in zip(rows, rows[1:]))]


def print_table(cold: Row, rows: list[Row]) -> None:
    """The figures as two small tables: totals, then per-phase times."""
    print(f"{'layers':>9} {'ops':>6} {'export s':>9} {'decomp s':>9} {'import s':>9} {'stages s':>9} "
          f"{'write s':>8} {'compile s':>10} {'ratio':>6} {'s/layer':>8} {'ops/s':>7} {'peak MiB':>9}")
    for r, per_layer in zip([cold, *rows], [None, *marginal(rows)]):
        stages = sum(r.phases[name] for name in COMPILE_STAGES)
        print(f"{r.label:>9} {r.ops:>6} {r.export:>9.2f} {r.phases['decompose']:>9.2f} {r.phases['import']:>9.2f} "
              f"{stages:>9.2f} {r.phases['write']:>8.2f} {r.compile:>10.2f} {r.compile / r.export:>6.2f} "
              f"{'' if per_layer is None else f'{per_layer:.3f}':>8} {r.ops / r.compile:>7.0f} "
              f"{r.peak_rss_mib:>9.0f}")
    print()
    print(f"{'phase (s)':<28}" + "".join(f"{r.label:>10}" for r in (cold, *rows)))
    for name in cold.phases:
        print(f"{name:<28}" + "".join(f"{r.phases.get(name, 0.0):>10.3f}" for r in (cold, *rows)))


def targets(rows: list[Row], ratio_target: float) -> dict[str, Any]:
    """The targets (compile / export at most ``ratio_target`` at the largest layer count, and the
    marginal seconds per layer not growing), each with its measured value and whether it is met."""
    last = rows[-1]
    found: dict[str, Any] = {"ratio": {"layers": last.layers, "value": last.compile / last.export,
                                       "target": ratio_target, "met": last.compile / last.export <= ratio_target}}
    steps = marginal(rows)
    if len(rows) >= 3:
        before, after = steps[-2], steps[-1]
        assert before is not None and after is not None
        found["linear"] = {"layers": [r.layers for r in rows[-3:]], "value": [before, after], "met": after <= before}
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=tuple(RATIO_TARGETS), default="granite3b",
                        help="what to stack (default granite3b)")
    parser.add_argument("--tokens", type=int, help="tokens of a transformers model (default 256 for granite3b, "
                        "2048 for granite8b)")
    parser.add_argument("--layers", default="1,4,16,40",
                        help="comma-separated layer counts (default 1,4,16,40; 1 is always measured)")
    parser.add_argument("--cores", type=int, default=32, help="cores of the target (default 32)")
    parser.add_argument("--repeat", type=int, default=3, help="exports per layer count, the best kept (default 3)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    layers = sorted({1, *(int(n) for n in args.layers.split(","))})
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        cold = measure(args.model, 1, args.cores, 1, Path(tmp) / "cold", "1 (cold)", args.tokens)
        rows = [measure(args.model, n, args.cores, args.repeat, Path(tmp), tokens=args.tokens) for n in layers]
    print_table(cold, rows)
    met = targets(rows, RATIO_TARGETS[args.model])
    print()
    ratio = met["ratio"]
    print(f"compile / export at {ratio['layers']} layers: {ratio['value']:.2f} "
          f"(target <= {ratio['target']}: {'met' if ratio['met'] else 'missed'})")
    if "linear" in met:
        (a, b, c), (before, after) = met["linear"]["layers"], met["linear"]["value"]
        print(f"seconds per layer, {a} to {b} layers: {before:.3f}; {b} to {c}: {after:.3f} "
              f"(target: no more: {'met' if met['linear']['met'] else 'missed'})")
    if args.json:
        Path(args.json).write_text(json.dumps({"model": args.model, "tokens": args.tokens, "cores": args.cores,
                                               "cold": cold.as_json(),
                                               "rows": [r.as_json() for r in rows], "targets": met},
                                              indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
