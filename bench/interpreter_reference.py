# Benchmark: the reference interpreter on torch-spyre's reference bundle
# (z = (a + b) * c, fp16 [1024, 4096], 2 x 4 tiles, 32 cores) against eager
# PyTorch on the same machine.  Reads ../shared/reference; writes a temporary
# directory; prints the times and their ratio.
"""Interpreter vs eager PyTorch on the reference [1024, 4096] bundle.

    python bench/interpreter_reference.py [--repeat N]

Times are the best of N runs.  "execute" is staging + bundle + read-back on an
already loaded directory; "run" adds loading (manifest, bundle.mlir parse,
JSON checks).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "python"))
from test_interpreter_support import REFERENCE, reference_bundle_dir  # noqa: E402

from spyre_mlir.interpreter import run  # noqa: E402
from spyre_mlir.interpreter.loading import load_output_dir  # noqa: E402
from spyre_mlir.interpreter.runner import execute, host_inputs  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not REFERENCE.is_dir():
        print(f"reference outputs not found at {REFERENCE}", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    a, b, c = (torch.randn(1024, 4096, dtype=torch.float16) for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp:
        directory = reference_bundle_dir(Path(tmp))
        loaded = load_output_dir(directory)
        inputs = host_inputs(loaded.manifest, [a, b, c])
        outputs, _ = execute(loaded, inputs)
        assert np.array_equal(outputs["z"], ((a + b) * c).numpy()), "interpreter disagrees with eager"
        t_exec = best(lambda: execute(loaded, inputs), args.repeat)
        t_run = best(lambda: run(directory, [a, b, c]), args.repeat)
    t_eager = best(lambda: (a + b) * c, args.repeat)
    print(f"eager (a + b) * c        {t_eager * 1e3:8.1f} ms")
    print(f"interpreter execute      {t_exec * 1e3:8.1f} ms   ratio {t_exec / t_eager:5.1f}x")
    print(f"interpreter run (+load)  {t_run * 1e3:8.1f} ms   ratio {t_run / t_eager:5.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
