"""The figures of memory planning (DESIGN §9) on the seed program ``y = a + b; z = y * c``, fp16, 32 cores.

Where ``y`` lives is read from its SDSC allocate node (the add's output), HBM
traffic from the interpreter's statistics: reading a, b, c once and writing z
once is 4 x the tensor's bytes; ``y`` through HBM adds a write and a read.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from spyre_mlir.interpreter import run
from spyre_mlir.interpreter.sdsc import TensorSpec, parse_sdsc
from spyre_mlir.manifest import read_manifest
from spyre_mlir.mlir_text import make_context, parse_module
from spyre_mlir.pipeline import CompileOptions, compile_module, load_source

from seed_program import seed_program

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20


def _compile(text: str, out: Path) -> Path:
    """``text`` compiled on 32 cores, tiled as its hints say (no automatic tiling)."""
    return compile_module(parse_module(make_context(), text, "seed.mlir"), out,
                          CompileOptions(cores=32, auto_tile=False))


def _y(out: Path) -> TensorSpec:
    """The allocate node of ``y``: the output of the add, ``sdsc_0.json``."""
    spec = parse_sdsc(json.loads((out / "sdsc_0.json").read_text()), "sdsc_0.json")
    (name,) = spec.outputs
    return spec.tensors[name]


def _hbm_traffic(out: Path, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, int]:
    """``z`` and the HBM bytes read plus written by one interpreter run."""
    outputs, stats = run(out, [a, b, c])
    totals = stats.as_dict()
    (z,) = outputs.values()
    return z, totals["hbm_bytes_read"] + totals["hbm_bytes_written"]


def test_seed_example_keeps_y_in_lx_at_offset_0(tmp_path):
    """examples/add_mul_nested.mlir ([1024, 4096], A in 2 tiles around B in 4): y never touches HBM."""
    out = compile_module(load_source(str(ROOT / "examples" / "add_mul_nested.mlir")), tmp_path / "out",
                         CompileOptions(cores=32))
    y = _y(out)
    assert y.component == "lx" and y.starts == {core: 0 for core in range(32)}
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((1024, 4096)).astype(np.float16) for _ in range(3))
    z, traffic = _hbm_traffic(out, a, b, c)
    assert traffic == 4 * 8 * MIB
    expected = (a.astype(np.float32) + b.astype(np.float32)) * c.astype(np.float32)
    np.testing.assert_allclose(z.astype(np.float32), expected, rtol=1e-2, atol=1e-2)


BIG = (8192, 8192)
"""128 MiB per tensor: y's share on each of 32 cores is 4 MiB, more than the 1,625,344 usable LX bytes."""


@pytest.fixture(scope="module")
def big_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Constant inputs (cheap to make and to check): z = (0.5 + 0.25) * 2 = 1.5 exactly."""
    return tuple(np.full(BIG, v, np.float16) for v in (0.5, 0.25, 2.0))


@pytest.mark.parametrize("hints, where, tensors", [
    pytest.param("", "hbm", 6, id="untiled-y-in-pool"),
    pytest.param("#spyre.hint<0, tiles = {A = 8}>", "lx", 4, id="A-in-8-tiles-y-in-lx"),
])
def test_big_seed_program(hints, where, tensors, tmp_path, big_inputs):
    """Untiled, y (4 MiB per core) goes to the HBM pool: 6 x 128 MiB of traffic; in 8 row
    tiles its share is 512 KiB, it lives in LX and the traffic is 4 x 128 MiB."""
    out = _compile(seed_program(*BIG, hints), tmp_path / "out")
    assert _y(out).component == where
    pool = [arg for arg in read_manifest(out).args if arg.role == "pool"]
    assert [arg.nbytes for arg in pool] == ([128 * MIB] if where == "hbm" else [])
    z, traffic = _hbm_traffic(out, *big_inputs)
    assert traffic == tensors * 128 * MIB
    assert (z == np.float16(1.5)).all()
