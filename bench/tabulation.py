# Benchmark: tabulation over an input's values (spyre_mlir/importer/folding.py)
# on transformers' Llama decode step with a static KV cache, as ExecuTorch
# exports it, at several cache lengths.  Builds the model from a small config;
# prints a table and, with --json, writes the figures.
"""How long the import takes to tabulate a decode step's position.

    python bench/tabulation.py [--lengths 64,1024,4096] [--layers 2] [--json FILE]

Per cache length ``N``: the seconds :func:`~spyre_mlir.importer.folding.tabulate`
takes (the values of ``cache_position`` over ``[0, N)``: the causal mask, the
rotary cos/sin and the cache row, evaluated at once with ``torch.func.vmap``),
the tabulated nodes, the nodes evaluated, the tables the device reads and their
elements.  Target: under one second at ``N`` = 4096.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import asdict, dataclass

import torch

from spyre_mlir.importer.core import decomposition_table, graph_inputs
from spyre_mlir.importer.folding import known_values, tabulate
from spyre_mlir.importer.quiet import quiet_torch

TARGET_S = 1.0


@dataclass
class Row:
    """The figures of one cache length."""

    length: int
    seconds: float
    tabulated: int
    evaluated: int
    tables: int
    elements: int


def decode_step(length: int, layers: int) -> tuple[torch.export.ExportedProgram, list[torch.Tensor]]:
    """A small Llama's decode step with a static cache of ``length`` positions, decomposed."""
    import transformers
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128,
                                      num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=max(length, 128))
    model = transformers.LlamaForCausalLM(config).eval()
    model.generation_config = transformers.GenerationConfig(
        use_cache=True, cache_implementation="static", max_length=length,
        cache_config={"batch_size": 1, "max_cache_len": length})
    wrapped = TorchExportableModuleWithStaticCache(model, batch_size=1, max_cache_len=length)
    inputs = {"input_ids": torch.tensor([[3]]), "cache_position": torch.tensor([5])}
    program = torch.export.export(wrapped, (), kwargs=inputs, strict=True)
    return program.run_decompositions(decomposition_table()), list(inputs.values())


def measure(length: int, layers: int) -> Row:
    program, inputs = decode_step(length, layers)
    known = known_values(program, graph_inputs(program, inputs))
    start = time.perf_counter()
    tab = tabulate(program, known)
    seconds = time.perf_counter() - start
    return Row(length, round(seconds, 3), len(tab.inputs), tab.evaluated, len(tab.tables),
               sum(t.numel() for t in tab.tables.values()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="64,1024,4096", help="cache lengths, comma-separated")
    parser.add_argument("--layers", type=int, default=2, help="decoder layers (default 2)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    rows = []
    with warnings.catch_warnings(), quiet_torch():
        warnings.simplefilter("ignore")
        for length in (int(n) for n in args.lengths.split(",")):
            rows.append(measure(length, args.layers))
    print(f"{'N':>6} {'seconds':>8} {'tabulated':>9} {'evaluated':>9} {'tables':>6} {'elements':>10}")
    for r in rows:
        print(f"{r.length:>6} {r.seconds:>8.3f} {r.tabulated:>9} {r.evaluated:>9} {r.tables:>6} {r.elements:>10}")
    slowest = max(rows, key=lambda r: r.seconds)
    print(f"target: under {TARGET_S:g} s; slowest {slowest.seconds:.3f} s at N = {slowest.length}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"layers": args.layers, "target_s": TARGET_S, "rows": [asdict(r) for r in rows]}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
