# Benchmark: the reference interpreter against eager PyTorch on the same
# machine, in one process: the seed example and the transformer block compiled
# for 32 cores, and torch-spyre's reference bundle.  Reads the examples and
# test/data/reference; writes output directories in a temporary directory, a
# table on stdout and, with --json, the figures as JSON.
"""Reference interpreter vs eager PyTorch.

    python bench/interpreter.py [--repeat N] [--json FILE]

Cases: ``seed`` (examples/add_mul_nested.py:build, [1024, 4096] fp16, its
2 x 4 tile hints, 32 cores), ``reference`` (torch-spyre's bundle of the same
program, test/data/reference/bundle_add_mul_nested) and ``transformer``
(examples/transformer_block.py:build, 32 cores).  Each is compiled in process
(the reference is copied) and checked once against eager within the fp16
tolerance; then, best of N:

- eager: the program in PyTorch with its default intra-op threads, and in one
  thread (on a busy machine the faster; the interpreter runs in one thread);
- load: ``load_output_dir`` (manifest, bundle.mlir parse and compile, SDSC
  JSON checks, kernels);
- execute: ``execute`` on the loaded directory (staging, bundle trace, every
  ``sdsc_execute``, read-back), the figure the target is about.

Target: seed execute / eager <= 3, reported against eager with default threads
and against the faster of the two eager figures.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "python"))
from e2e_support import EXAMPLES, ImportedPrograms  # noqa: E402
from test_interpreter_support import SEED_SHAPE, reference_bundle_dir  # noqa: E402

from spyre_mlir.interpreter import compare, tolerance_for  # noqa: E402
from spyre_mlir.interpreter.loading import load_output_dir  # noqa: E402
from spyre_mlir.interpreter.runner import execute, host_inputs  # noqa: E402
from spyre_mlir.manifest import Manifest  # noqa: E402
from spyre_mlir.pipeline import CompileOptions, compile_module  # noqa: E402

CORES = 32
RATIO_TARGET = 3.0


@dataclass(frozen=True)
class Case:
    """A program, its example inputs, and its compiled output directory."""

    name: str
    fn: Callable[..., Any]
    inputs: tuple[torch.Tensor, ...]
    directory: Path
    host: Callable[[Manifest], dict[str, np.ndarray]]
    """The interpreter's inputs for the loaded manifest."""


@dataclass(frozen=True)
class Row:
    """The figures of one case (milliseconds)."""

    case: str
    eager_ms: float
    eager_one_thread_ms: float
    load_ms: float
    execute_ms: float

    @property
    def fastest_eager_ms(self) -> float:
        """Eager in its faster configuration (one thread wins on a busy machine)."""
        return min(self.eager_ms, self.eager_one_thread_ms)

    def as_json(self) -> dict[str, Any]:
        """The row with its ratios, for ``--json``."""
        return {**asdict(self), "execute_ratio": self.execute_ms / self.eager_ms,
                "execute_ratio_fastest_eager": self.execute_ms / self.fastest_eager_ms,
                "load_and_execute_ratio": (self.load_ms + self.execute_ms) / self.eager_ms}


def best_ms(fn: Callable[[], Any], repeat: int) -> float:
    """The least wall time of ``repeat`` calls of ``fn``, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def compiled_example(case: str, example: str, tmp: Path, imported: ImportedPrograms) -> Case:
    """``example`` of the example table, compiled with its hints for :data:`CORES` cores into ``tmp/case``."""
    (fn, inputs), module = imported(example)
    out = tmp / case
    compile_module(module.clone(), out, CompileOptions(cores=CORES), log=io.StringIO())
    return Case(case, fn, inputs, out, lambda manifest: host_inputs(manifest, imported.inputs(example, manifest)))


def reference_case(tmp: Path) -> Case:
    """torch-spyre's bundle of ``z = (a + b) * c`` on random fp16 inputs."""
    torch.manual_seed(0)
    inputs = tuple(torch.randn(*SEED_SHAPE, dtype=torch.float16) for _ in range(3))
    return Case("reference", lambda a, b, c: (a + b) * c, inputs, reference_bundle_dir(tmp),
                lambda manifest: host_inputs(manifest, inputs))


def measure(case: Case, repeat: int) -> Row:
    """Check ``case`` once against eager, then time eager, load and execute."""
    loaded = load_output_dir(case.directory)
    host = case.host(loaded.manifest)
    outputs, _ = execute(loaded, host)
    with torch.no_grad():
        result = case.fn(*case.inputs)
        expected = list(result) if isinstance(result, (tuple, list)) else [result]
        for arg, ref in zip(loaded.manifest.outputs, expected):
            compare(arg.name, outputs[arg.name], ref.numpy(), tolerance_for(arg.dtype or "float16"))
        eager = best_ms(lambda: case.fn(*case.inputs), repeat)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            eager_one_thread = best_ms(lambda: case.fn(*case.inputs), repeat)
        finally:
            torch.set_num_threads(threads)
    load = best_ms(lambda: load_output_dir(case.directory), repeat)
    run = best_ms(lambda: execute(loaded, host), repeat)
    return Row(case.name, eager, eager_one_thread, load, run)


def print_table(rows: list[Row]) -> None:
    """One line per case: the times and the interpreter / eager ratios."""
    print(f"{'case':<12} {'eager ms':>9} {'1 thread':>9} {'load ms':>9} {'execute ms':>11} "
          f"{'execute/eager':>14} {'execute/fastest':>16} {'(load+execute)/eager':>21}")
    for r in rows:
        print(f"{r.case:<12} {r.eager_ms:>9.2f} {r.eager_one_thread_ms:>9.2f} {r.load_ms:>9.1f} "
              f"{r.execute_ms:>11.1f} {r.execute_ms / r.eager_ms:>14.2f} {r.execute_ms / r.fastest_eager_ms:>16.2f} "
              f"{(r.load_ms + r.execute_ms) / r.eager_ms:>21.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure; the best counts (default 5)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    imported = ImportedPrograms(EXAMPLES)
    with tempfile.TemporaryDirectory() as tmp:
        cases = [compiled_example("seed", "add_mul_nested", Path(tmp), imported), reference_case(Path(tmp)),
                 compiled_example("transformer", "transformer_block", Path(tmp), imported)]
        rows = [measure(case, args.repeat) for case in cases]
    print_table(rows)
    ratio = rows[0].execute_ms / rows[0].eager_ms
    strict = rows[0].execute_ms / rows[0].fastest_eager_ms
    print(f"\nseed execute / eager: {ratio:.2f}, / fastest eager: {strict:.2f} "
          f"(target <= {RATIO_TARGET}: {'met' if ratio <= RATIO_TARGET else 'missed'}, "
          f"{'met' if strict <= RATIO_TARGET else 'missed'})")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "cores": CORES, "repeat": args.repeat, "torch_threads": torch.get_num_threads(),
            "rows": [r.as_json() for r in rows],
            "target": {"value": ratio, "value_fastest_eager": strict, "target": RATIO_TARGET,
                       "met": ratio <= RATIO_TARGET, "met_fastest_eager": strict <= RATIO_TARGET}}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
