# Benchmark: plan quality at the sizes Spyre users run.  Builds transformers'
# GraniteModel and LlamaModel from configs (random weights, float16, no hints),
# compiles them in process into a temporary directory (the interpreter does not
# run them), and prints the cost model's prediction against the roofline bound
# per model and core count; with --json, writes the figures.
"""Plans at real sizes: predicted time and HBM traffic against their bounds.

    python bench/plans.py [--models granite8b-512 granite8b-2048 llama1b-512 llama8b-512] [--cores 1 4 32]
                          [--json FILE]

Models (input ids, batch 1):

* ``granite8b-<S>``: one Granite-8B-shaped layer (hidden 4096, 32 heads, 8 key/value heads,
  intermediate 12800, vocabulary 256) over ``S`` tokens;
* ``llama1b-<S>``: two Llama-1B-shaped layers (hidden 2048, 32 heads, 8 key/value heads,
  intermediate 8192, vocabulary 256) over ``S`` tokens (heads of 64);
* ``llama8b-<S>``: one Llama-8B-shaped layer (hidden 4096, 32 heads, 8 key/value heads,
  intermediate 14336, vocabulary 256) over ``S`` tokens (heads of 128, as Granite's).

Per model and core count: compile seconds, the predicted device time, the roofline lower
bound (every argument read and output written once at peak bandwidth, or every MAC at the
peak of the cores) and their ratio, the HBM bytes the plan moves and their ratio to the
minimum (every argument and output once), and the highest LX use of any op.  Issue 29's
targets on 32 cores: Granite at 2048 tokens within 2.0x its bound and 3x the HBM minimum,
at 512 within 1.5x; Llama-1B within 1.6x.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from rows import rows_table

SHAPES = {
    "granite8b": dict(family="granite", hidden_size=4096, intermediate_size=12800, num_hidden_layers=1,
                      num_attention_heads=32, num_key_value_heads=8),
    "llama1b": dict(family="llama", hidden_size=2048, intermediate_size=8192, num_hidden_layers=2,
                    num_attention_heads=32, num_key_value_heads=8),
    "llama8b": dict(family="llama", hidden_size=4096, intermediate_size=14336, num_hidden_layers=1,
                    num_attention_heads=32, num_key_value_heads=8),
}
"""Model shapes by name; a model name is ``<shape>-<tokens>``."""


class LastHiddenState(torch.nn.Module):
    """A transformers base model called on input ids, returning its last hidden state."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(ids).last_hidden_state


def build(name: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """The model ``name`` (``granite8b-2048``) in float16 and its input ids."""
    import transformers

    shape, tokens = name.rsplit("-", 1)
    sizes = dict(SHAPES[shape])
    family = sizes.pop("family")
    config_class = {"granite": transformers.GraniteConfig, "llama": transformers.LlamaConfig}[family]
    model_class = {"granite": transformers.GraniteModel, "llama": transformers.LlamaModel}[family]
    torch.manual_seed(0)
    config = config_class(vocab_size=256, max_position_embeddings=max(4096, int(tokens)), **sizes)
    model = LastHiddenState(model_class(config).eval()).half()
    return model, (torch.randint(0, 256, (1, int(tokens)), generator=torch.Generator().manual_seed(0)),)


def plan_row(name: str, cores: int) -> dict[str, Any]:
    """Compile model ``name`` on ``cores`` cores; the figures of its plan."""
    from spyre_mlir.manifest import read_manifest
    from spyre_mlir.pipeline import compile

    row: dict[str, Any] = {"model": name, "cores": cores}
    start = time.perf_counter()
    try:
        model, inputs = build(name)
        with tempfile.TemporaryDirectory() as directory, torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = Path(directory) / "out"
            report = compile(model, inputs, cores=cores, out_dir=out).report
            manifest = read_manifest(out)
        traffic = report.traffic
        hbm = traffic.hbm_read + traffic.hbm_written
        minimum = sum(arg.nbytes for arg in (*manifest.inputs, *manifest.outputs))
        row.update(compile_s=round(time.perf_counter() - start, 1), predicted_us=round(report.total_ns / 1e3, 1),
                   lower_bound_us=round(report.lower_bound_ns / 1e3, 1),
                   over_bound=round(report.total_ns / report.lower_bound_ns, 2),
                   hbm_gb=round(hbm / 1e9, 2), hbm_over_minimum=round(hbm / minimum, 2),
                   lx_peak_bytes=max(c.lx_peak for c in report.ops))
    except Exception as e:  # a row says what failed; the benchmark goes on
        row.update(compile_s=round(time.perf_counter() - start, 1), error=f"{type(e).__name__}: {e}"[:200])
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=["granite8b-512", "granite8b-2048", "llama1b-512"])
    p.add_argument("--cores", nargs="+", type=int, default=[1, 4, 32])
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    for name in args.models:
        if name.rsplit("-", 1)[0] not in SHAPES or not name.rsplit("-", 1)[-1].isdigit():
            p.error(f"unknown model '{name}': use <shape>-<tokens> with a shape of {sorted(SHAPES)}")
    rows = [plan_row(name, cores) for name in args.models for cores in args.cores]
    print(rows_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 1 if any("error" in row for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
