"""End to end: torch program -> spyre-compile (in process) -> reference interpreter -> PyTorch eager.

Every example factory and a set of small Bundle programs is exported and imported
once, then compiled for 1, 4 and 32 cores and run on the
interpreter; every output must match eager within the interpreter's fp16 tolerance
(``spyre_mlir.interpreter.compare``).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import spyre_mlir
from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint
from spyre_mlir.interpreter import compare, tolerance_for
from spyre_mlir.manifest import read_manifest
from spyre_mlir.pipeline import CompileOptions, compile_module

from e2e_support import EXAMPLES, ImportedPrograms, Program, compile_and_check

ROOT = Path(__file__).resolve().parents[2]
CORES = (1, 4, 32)



def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float16)


def _binary(shape_a: tuple[int, ...], shape_b: tuple[int, ...], fn: Callable[..., Any]) -> Callable[[], Program]:
    return lambda: (fn, (_randn(*shape_a), _randn(*shape_b)))


def _unary(shape: tuple[int, ...], fn: Callable[..., Any]) -> Callable[[], Program]:
    return lambda: (fn, (_randn(*shape),))


def _matmul_work_div() -> Program:
    """[128, 256] @ [256, 64] with ``work_div={"M": 2, "K": 4}`` (reference matmul_128x256x64_M2_K4)."""
    for name, size in (("M", 128), ("K", 256), ("N", 64)):
        declare_tensor_dim(name, size)
    x, w = _randn(128, 256), _randn(256, 64)
    name_tensor_dims(x, ["M", "K"])
    name_tensor_dims(w, ["K", "N"])

    def matmul(x, w):
        with spyre_hint(work_div={"M": 2, "K": 4}):
            return x @ w

    return matmul, (x, w)


PROGRAMS: dict[str, Callable[[], Program]] = {
    **EXAMPLES,
    "add_64x128": _binary((64, 128), (64, 128), lambda a, b: a + b),
    "add_1024x4096": _binary((1024, 4096), (1024, 4096), lambda a, b: a + b),
    "add_100x150": _binary((100, 150), (100, 150), lambda a, b: a + b),
    "sum_lastdim_keep_256x150": _unary((256, 150), lambda x: x.sum(-1, keepdim=True)),
    "sum_lastdim_drop_256x150": _unary((256, 150), lambda x: x.sum(-1)),
    "sum_dim0_512x1024": _unary((512, 1024), lambda x: x.sum(0)),
    "matmul_M2_K4": _matmul_work_div,
    "broadcast_add_stick": _binary((2, 4096), (2, 1), lambda a, b: a + b),
    "broadcast_add_rows": _binary((64, 128), (1, 128), lambda a, b: a * b),
    "restickify_transposed_weight": _binary((64, 128), (192, 128), lambda x, w: x @ w.t()),
    "fill": _unary((64, 128), lambda x: x * 2.0 + torch.ones_like(x)),
}


def _cases() -> list[Any]:
    return [pytest.param(name, cores, id=f"{name}-{cores}") for name in PROGRAMS for cores in CORES]


@pytest.fixture(scope="module")
def imported() -> ImportedPrograms:
    """Per program: its (fn, inputs) and its imported module, exported once."""
    return ImportedPrograms(PROGRAMS)


@pytest.mark.parametrize("name, cores", _cases())
def test_program_matches_eager(name, cores, tmp_path, imported):
    compile_and_check(name, cores, tmp_path / "out", imported)


def test_compile_then_run_through_the_public_api(tmp_path):
    torch.manual_seed(0)
    a, b, c = (_randn(64, 256) for _ in range(3))
    program = spyre_mlir.compile(lambda a, b, c: (a + b) * c, (a, b, c), cores=4, out_dir=tmp_path / "out")
    got = program.run(a, b, c)
    assert got.dtype == torch.float16
    compare("out", got.numpy(), ((a + b) * c).numpy(), tolerance_for("float16"))


def test_compiling_twice_gives_identical_bytes(tmp_path, imported):
    _, module = imported("softmax")
    for out in ("a", "b"):
        compile_module(module.clone(), tmp_path / out, CompileOptions(cores=4), log=io.StringIO())
    first = {p.name: p.read_bytes() for p in sorted((tmp_path / "a").iterdir())}
    second = {p.name: p.read_bytes() for p in sorted((tmp_path / "b").iterdir())}
    assert first == second and "sdsc_0.json" in first


def test_sencores_is_the_default_core_count(tmp_path, monkeypatch):
    monkeypatch.setenv("SENCORES", "2")
    a = np.ones((64, 128), np.float16)
    program = spyre_mlir.compile(lambda a: a + a, (torch.from_numpy(a),), out_dir=tmp_path / "out")
    assert read_manifest(program.directory).cores == 2
