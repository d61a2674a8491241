# Benchmark: generation (DESIGN §17).  A Granite-8B-shaped causal LM (hidden 4096, 32
# heads, 8 KV heads, intermediate 12800; layers an option) compiled as the prefill and
# the decode programs that generate() runs: their predicted device time against their
# bounds, and the compile seconds of both.  Then greedy generation on the interpreter
# for small models of several families, token for token against transformers'
# generate.  Reads examples/generation.py; compiles into a temporary directory; prints
# two tables and, with --json, writes the figures.
"""Generation: plan quality of prefill and decode at real sizes, and tokens matched.

    python bench/generate.py [--layers 1] [--prompt 2048] [--cache 2048] [--cores 32]
                             [--families llama granite qwen2 mistral] [--new-tokens 16]
                             [--skip-large] [--skip-tokens] [--json FILE]

Granite-8B-shaped: the prefill over ``--prompt`` tokens and one decode step against a
static cache of ``--cache`` positions, float16, batch 1, on ``--cores`` cores, compiled
only (the interpreter does not run them).  For each: compile seconds, the predicted
time, the lower bound, and the weight-streaming bound (parameters and the cache read
once at 150 GB/s); the decode step's target is a prediction within 1.15x of that bound.
Small models: ``--new-tokens`` greedy tokens in float32 on the interpreter, and how many
equal transformers'.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from rows import rows_table

_spec = importlib.util.spec_from_file_location("example_generation", Path(__file__).resolve().parents[1]
                                               / "examples" / "generation.py")
assert _spec is not None and _spec.loader is not None
generation_examples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generation_examples)


def large_rows(layers: int, prompt: int, cache: int, cores: int) -> list[dict[str, Any]]:
    """Compile the prefill and the decode step of the Granite-8B-shaped model; their figures."""
    from spyre_mlir.generation import _Decode, _Prefill, static_cache_recipe
    from spyre_mlir.pipeline import compile

    model = generation_examples.causal_lm("granite", hidden=4096, heads=32, kv_heads=8, layers=layers,
                                          intermediate=12800, vocab=256, dtype=torch.float16)
    recipe = static_cache_recipe(model, 1, cache)
    ids = torch.zeros(1, prompt, dtype=torch.long)
    programs = {"prefill": (_Prefill(recipe, prompt), (ids,)),
                "decode": (_Decode(recipe), (ids[:, :1], torch.tensor([prompt - 1])))}
    rows = []
    for name, (module, inputs) in programs.items():
        row: dict[str, Any] = {"program": name, "layers": layers, "cores": cores,
                               "tokens": prompt if name == "prefill" else 1, "cache": cache}
        start = time.perf_counter()
        try:
            with tempfile.TemporaryDirectory() as directory, torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report = compile(module, inputs, cores=cores, out_dir=Path(directory) / "out").report
            row.update(compile_s=round(time.perf_counter() - start, 1), predicted_us=round(report.total_ns / 1e3, 1),
                       lower_bound_us=round(report.lower_bound_ns / 1e3, 1),
                       streaming_bound_us=round(report.streaming_bound_ns / 1e3, 1),
                       over_streaming=round(report.total_ns / report.streaming_bound_ns, 3))
        except Exception as e:  # a row says what failed; the benchmark goes on
            row.update(compile_s=round(time.perf_counter() - start, 1), error=f"{type(e).__name__}: {e}"[:200])
        rows.append(row)
    return rows


def token_rows(families: list[str], new_tokens: int, cores: int) -> list[dict[str, Any]]:
    """Greedy generation of ``new_tokens`` tokens per family on the interpreter, against transformers'."""
    from spyre_mlir.generation import check_generation, generate_steps

    rows = []
    for family in families:
        model, prompt = generation_examples.causal_lm(family), generation_examples.prompt()
        row: dict[str, Any] = {"family": family, "cores": cores, "new_tokens": new_tokens}
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                generation = generate_steps(model, prompt, max_new_tokens=new_tokens, cores=cores)
            check = check_generation(model, prompt, generation)
            matched = len(check.logit_errors) if check.matches else check.first_difference
            row.update(seconds=round(time.perf_counter() - start, 1), matched=matched,
                       largest_logit_error=max(check.logit_errors, default=0.0))
        except Exception as e:
            row.update(seconds=round(time.perf_counter() - start, 1), error=f"{type(e).__name__}: {e}"[:200])
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--prompt", type=int, default=2048)
    p.add_argument("--cache", type=int, default=2048)
    p.add_argument("--cores", type=int, default=32)
    p.add_argument("--families", nargs="+", default=list(generation_examples.FAMILIES))
    p.add_argument("--new-tokens", type=int, default=16)
    p.add_argument("--skip-large", action="store_true", help="skip the Granite-8B-shaped programs")
    p.add_argument("--skip-tokens", action="store_true", help="skip generation of the small models")
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    figures: dict[str, Any] = {}
    if not args.skip_large:
        figures["granite_8b_shaped"] = large_rows(args.layers, args.prompt, args.cache, args.cores)
        print(rows_table(figures["granite_8b_shaped"]), end="\n\n")
    if not args.skip_tokens:
        figures["tokens"] = token_rows(args.families, args.new_tokens, min(args.cores, 4))
        print(rows_table(figures["tokens"]))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
