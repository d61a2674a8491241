"""Shared by the end-to-end tests: export each program once, compile, interpret, compare with eager."""

from __future__ import annotations

import importlib.util
import io
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

import spyre_mlir
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.importer.loader import load_factory, manifest_inputs
from spyre_mlir.interpreter import compare, run, tolerance_for
from spyre_mlir.interpreter.compare import Tolerance
from spyre_mlir.interpreter.runner import as_numpy
from spyre_mlir.manifest import Manifest, read_manifest
from spyre_mlir.pipeline import CompileOptions, compile_module

Program = tuple[Callable[..., Any], tuple[Any, ...]]

ROOT = Path(__file__).resolve().parents[2]


def example_models() -> ModuleType:
    """``examples/models.py`` as a module, loaded once (registered in ``sys.modules``: its
    dataclasses need it)."""
    if "example_models" not in sys.modules:
        spec = importlib.util.spec_from_file_location("example_models", ROOT / "examples" / "models.py")
        assert spec is not None and spec.loader is not None
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules["example_models"]


def _example(spec: str) -> Callable[[], Program]:
    return lambda: load_factory(str(ROOT / "examples" / spec))()


EXAMPLES: dict[str, Callable[[], Program]] = {
    "add_mul_nested": _example("add_mul_nested.py:build"),
    "wsr_matmul": _example("wsr_matmul.py:build"),
    "wsr_matmul_view": _example("wsr_matmul.py:build_view"),
    "softmax": _example("softmax.py:build"),
    "rope": _example("rope.py:build"),
    "transformer_block": _example("transformer_block.py:build"),
}
"""Every example factory, with its hints."""


class ImportedPrograms:
    """Per program name: its (fn, inputs), exported program and imported module, exported once."""

    def __init__(self, programs: Mapping[str, Callable[[], Program]]):
        self.programs = programs
        self.cache: dict[str, tuple[Program, Any]] = {}
        self.exported: dict[str, torch.export.ExportedProgram] = {}

    def __call__(self, name: str) -> tuple[Program, Any]:
        if name not in self.cache:
            torch.manual_seed(0)
            fn, inputs = self.programs[name]()
            self.exported[name] = export_model(fn, tuple(inputs))
            self.cache[name] = ((fn, tuple(inputs)), import_program(self.exported[name]))
        return self.cache[name]

    def inputs(self, name: str, manifest: Manifest) -> dict[str, Any]:
        """The inputs of ``manifest`` (compiled from ``name``), staged by the exported program's signature."""
        (_, inputs), _ = self(name)
        return manifest_inputs(self.exported[name], inputs, manifest, name)


def compile_and_check(name: str, cores: int, out: Path, imported: ImportedPrograms,
                      lx_solver: str = "greedy", lx_fraction: float | None = None,
                      tolerance: Tolerance | None = None) -> Any:
    """Compile ``name`` on ``cores`` (with ``lx_solver`` and ``lx_fraction``) into ``out``, run it
    on the interpreter, compare with eager (within ``tolerance``, by default the output dtype's).

    Returns the interpreter's stats.
    """
    (fn, inputs), module = imported(name)
    compile_module(module.clone(), out, CompileOptions(cores=cores, lx_solver=lx_solver, lx_fraction=lx_fraction),
                   log=io.StringIO())
    manifest = read_manifest(out)
    outputs, stats = run(out, imported.inputs(name, manifest))
    with torch.no_grad():
        result = fn(*inputs)
    expected = list(result) if isinstance(result, (tuple, list)) else [result]
    assert len(expected) == len(manifest.outputs)
    for arg, ref in zip(manifest.outputs, expected):
        assert arg.dtype is not None
        compare(arg.name, outputs[arg.name], as_numpy(ref), tolerance or tolerance_for(arg.dtype))
    return stats


def outputs_match_eager(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], cores: int,
                        names: tuple[str, ...]) -> None:
    """``module`` compiled for ``cores`` and run on ``inputs`` gives eager's outputs (one per name,
    in order), within the tolerance of each output's dtype."""
    with torch.no_grad():
        want = module(*inputs)
        got = spyre_mlir.compile(module, inputs, cores=cores).run(*inputs)
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for name, g, w in zip(names, got, want, strict=True):
        compare(name, g.float().numpy(), w.float().numpy(), tolerance_for(str(w.dtype).removeprefix("torch.")))


def base_model_matches_eager(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], cores: int,
                             dtype: torch.dtype) -> Any:
    """A transformers base ``model``'s last hidden state and pooled output on ``inputs``, compiled
    for ``cores``, match eager's within ``dtype``'s tolerance; returns eager's output."""
    with torch.no_grad():
        want = model(*inputs)
        got = spyre_mlir.compile(model, inputs, cores=cores).run(*inputs)
    tolerance = tolerance_for(str(dtype).removeprefix("torch."))
    compare("hidden", got.last_hidden_state.numpy(), want.last_hidden_state.numpy(), tolerance)
    compare("pooled", got.pooler_output.numpy(), want.pooler_output.numpy(), tolerance)
    return want


def vision_model_matches_eager(model: torch.nn.Module, dtype: torch.dtype, cores: int, size: int = 32) -> None:
    """``model``'s hidden states and pooled output of a random ``size`` x ``size`` image match eager's."""
    base_model_matches_eager(model, (torch.randn(1, 3, size, size, dtype=dtype),), cores, dtype)
