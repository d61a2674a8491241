"""The error sweep: bad inputs to every tool give one located error line, exit 1, and write nothing.

Each case runs one console script (spyre-opt, spyre-import, spyre-compile,
spyre-run) in a fresh working directory holding the case's files (and, for
spyre-run, a corrupted copy of a compiled directory), and checks: exit code 1;
stderr is exactly one line, starting with the expected location and naming
the problem; no Python traceback anywhere; the working directory is byte for
byte what it was before the run.  The README's "Common errors" list is drawn
from these cases.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from spyre_mlir.tools.spyre_compile import main as spyre_compile

BIN = Path(sys.executable).parent

ADD = """\
func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<64x128xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<64x128xf16> {spyre.name = "add"}) {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  %z = spyre.pointwise "exp" (%y) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %z : tensor<64x128xf16>
}
"""


def unary(body: str, arg: str = "tensor<64x128xf16>", result: str = "tensor<64x128xf16>",
          arg_attrs: str = "") -> str:
    """A one-op function: ``%y = <body>`` on argument ``%a`` (the op is on line 2)."""
    return (f"func.func @main(%a: {arg}{arg_attrs}) -> {result} {{\n  %y = {body}\n"
            f"  func.return %y : {result}\n}}\n")


def hinted(hint: str) -> str:
    """The seed-shaped exp over named dims A x B, carrying ``hint`` (the op is on line 2)."""
    return unary(f'spyre.pointwise "exp" (%a) {{hints = [{hint}]}} : (tensor<1024x4096xf16>) -> '
                 "tensor<1024x4096xf16>", "tensor<1024x4096xf16>", "tensor<1024x4096xf16>",
                 ' {spyre.dims = [["A"], ["B"]], spyre.name = "a", spyre.role = "input"}')


BIG_MATMUL = """\
func.func @main(%a: tensor<8192x32768xf16>, %w: tensor<32768x4096xf16>) -> tensor<8192x4096xf16> {
  %c = spyre.matmul (%a, %w) : (tensor<8192x32768xf16>, tensor<32768x4096xf16>) -> tensor<8192x4096xf16>
  func.return %c : tensor<8192x4096xf16>
}
"""
TWO_REDUCTIONS = """\
func.func @main(%a: tensor<4194304x2x64xf16>) -> tensor<64xf16> {
  %s = spyre.reduce "sum" (%a) dims [0, 1] : (tensor<4194304x2x64xf16>) -> tensor<64xf16>
  func.return %s : tensor<64xf16>
}
"""
SEED_PIPELINE = "spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile"
SORT_MODEL = """\
import torch


def build():
    return (lambda x: torch.sort(x).values), (torch.randn(64, 128, dtype=torch.float16),)
"""
RAISING_MODEL = """\
def build():
    raise RuntimeError("no weights found")
"""
MISMATCHED_MATMUL = """\
import torch


def build():
    x = torch.ones(4, 64, dtype=torch.float16)
    return (lambda x: x @ x), (x,)
"""
DATA_DEPENDENT_MODEL = """\
import torch


def build():
    x = torch.randn(64, 128, dtype=torch.float16)
    return (lambda x: x[x > 0] * 2), (x,)
"""
TENSOR_NOT_TUPLE_MODEL = """\
import torch


def build():
    return (lambda x: x + 1), torch.ones(64, 128, dtype=torch.float16)
"""
UNDECLARED_MODEL = """\
import torch
from spyre_mlir import name_tensor_dims


def build():
    x = torch.randn(64, 128, dtype=torch.float16)
    name_tensor_dims(x, ["Q", "C"])
    return (lambda x: x.exp()), (x,)
"""


# --------------------------------------------------------------------------
# Corruptions of a compiled directory (`out`, ADD on 4 cores)
# --------------------------------------------------------------------------


def edit_json(name: str, change: Callable[[dict], None]) -> Callable[[Path], None]:
    """Load ``out/<name>``, apply ``change``, write it back."""
    def corrupt(out: Path) -> None:
        data = json.loads((out / name).read_text())
        change(data)
        (out / name).write_text(json.dumps(data))
    return corrupt


def truncate(name: str, keep: int) -> Callable[[Path], None]:
    """Keep the first ``keep`` bytes of ``out/<name>``."""
    return lambda out: (out / name).write_bytes((out / name).read_bytes()[:keep])


def remove(name: str) -> Callable[[Path], None]:
    return lambda out: (out / name).unlink()


def rename_sdsc(new: str) -> Callable[[Path], None]:
    """Point the bundle's second ``sdsc_execute`` at ``new`` (with a valid SDSC file there)."""
    def corrupt(out: Path) -> None:
        bundle = out / "bundle.mlir"
        bundle.write_text(bundle.read_text().replace('sdsc_filename="sdsc_1.json"', f'sdsc_filename="{new}"'))
        (out.parent / "x.json").write_bytes((out / "sdsc_1.json").read_bytes())
    return corrupt


def npz_bytes(**arrays: np.ndarray) -> bytes:
    """An .npz archive of ``arrays``, as bytes."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def set_arg_shape(data: dict) -> None:
    data["args"][0]["shape"] = [64, "x"]


def null_core_fold(data: dict) -> None:
    """Blank the core fold function of the LX tensor ``add`` writes (allocate node 2)."""
    node = data["0_add"]["dscs_"][0]["add"]["scheduleTree_"][2]
    node["coordinates_"]["coordInfo"]["mb"]["folds"]["dim_prop_func"][0]["Affine"] = None


# --------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One bad input: the command, the expected diagnostic, the files it needs."""

    tool: str
    args: tuple[str, ...]
    where: str
    """The line starts with ``<where>: error: ``: a path as the command names it, or the tool."""
    words: tuple[str, ...]
    """What the message must say, in order."""
    files: dict[str, str | bytes] = field(default_factory=dict)
    corrupt: Callable[[Path], None] | None = None
    """Applied to ``out``, a compiled directory, before the run (spyre-run cases)."""
    env: dict[str, str] = field(default_factory=dict)


CASES: dict[str, Case] = {
    # --- spyre-opt: text, verifier, pipeline, hints ---
    "opt-malformed-mlir": Case(
        "spyre-opt", ("bad.mlir",), "bad.mlir:2:34", ("Expected ')'",),
        {"bad.mlir": unary('spyre.pointwise "exp" (%a : (tensor<64x128xf16>) -> tensor<64x128xf16>')}),
    "opt-not-utf8": Case("spyre-opt", ("bad.mlir",), "bad.mlir", ("not UTF-8 text",),
                         {"bad.mlir": b"\xff\xfe\x00module"}),
    "opt-stray-token": Case("spyre-opt", ("bad.mlir",), "bad.mlir:1:1", ("expected an operation", "'}'"),
                            {"bad.mlir": "}\n"}),
    "opt-unregistered-op": Case(
        "spyre-opt", ("bad.mlir",), "bad.mlir:2:16", ("foo.bar is not registered",),
        {"bad.mlir": unary("foo.bar (%a) : (tensor<64x128xf16>) -> tensor<64x128xf16>")}),
    "opt-undefined-value": Case(
        "spyre-opt", ("bad.mlir",), "bad.mlir:2:3", ("undefined value '%q'",),
        {"bad.mlir": unary('spyre.pointwise "exp" (%q) : (tensor<64x128xf16>) -> tensor<64x128xf16>')}),
    "opt-verifier-arity": Case(
        "spyre-opt", ("bad.mlir",), "bad.mlir:2:3", ("'spyre.pointwise' op", "'add'", "got 1"),
        {"bad.mlir": unary('spyre.pointwise "add" (%a) : (tensor<64x128xf16>) -> tensor<64x128xf16>')}),
    "opt-verifier-unknown-op-func": Case(
        "spyre-opt", ("bad.mlir",), "bad.mlir:2:3", ("unknown op func 'frobnicate'",),
        {"bad.mlir": unary('spyre.pointwise "frobnicate" (%a) : (tensor<64x128xf16>) -> tensor<64x128xf16>')}),
    "opt-verifier-matmul-shapes": Case(
        "spyre-opt", ("bad.mlir",), "bad.mlir:2:3", ("'spyre.matmul' op", "contraction sizes differ"),
        {"bad.mlir": unary("spyre.matmul (%a, %a) : (tensor<64x128xf16>, tensor<64x128xf16>) -> "
                           "tensor<64x128xf16>")}),
    "opt-verifier-placement-alignment": Case(
        "spyre-opt", ("bad.mlir",), "bad.mlir:2:", ("lx offset 7", "128-byte aligned"),
        {"bad.mlir": unary('spyre.pointwise "exp" (%a) {placement = #spyre.placement<lx, 7>} : '
                           "(tensor<64x128xf16>) -> tensor<64x128xf16>")}),
    "opt-unknown-pass": Case("spyre-opt", ("add.mlir", "-p", "cse,spyre-tile"), "spyre-opt",
                             ("unknown pass 'spyre-tile'",), {"add.mlir": ADD}),
    "opt-bad-pass-option-value": Case(
        "spyre-opt", ("add.mlir", "-p", "spyre-attach-target{cores=many}"), "spyre-opt",
        ("pass 'spyre-attach-target'", "many"), {"add.mlir": ADD}),
    "opt-unknown-pass-option": Case(
        "spyre-opt", ("add.mlir", "-p", "spyre-attach-target{core=4}"), "spyre-opt",
        ("pass 'spyre-attach-target'", "core"), {"add.mlir": ADD}),
    "opt-malformed-pipeline": Case(
        "spyre-opt", ("add.mlir", "-p", "spyre-attach-target{cores=4"), "spyre-opt",
        ("malformed pass pipeline", "column 28"), {"add.mlir": ADD}),
    "opt-pass-cores-33": Case(
        "spyre-opt", ("add.mlir", "-p", "spyre-attach-target{cores=33}"), "spyre-opt",
        ("spyre-attach-target: cores=33: cores must be an integer between 1 and 32, got 33",), {"add.mlir": ADD}),
    "opt-hint-tile-count-not-divisor": Case(
        "spyre-opt", ("hint.mlir", "-p", SEED_PIPELINE, "-o", "tiled.mlir"), "hint.mlir:2:3",
        ("dim 'A' of extent 1024 is not divisible by the tile count 3",),
        {"hint.mlir": hinted("#spyre.hint<0, tiles = {A = 3}>")}),
    "opt-hint-undeclared-dim": Case(
        "spyre-opt", ("hint.mlir", "-p", SEED_PIPELINE, "-o", "tiled.mlir"), "hint.mlir:2:3",
        ("tiling hint 0 names dim 'Z'", "no op of the function knows"),
        {"hint.mlir": hinted("#spyre.hint<0, tiles = {Z = 2}>")}),
    "opt-hint-work-div-not-divisor": Case(
        "spyre-opt", ("hint.mlir", "-p", "spyre-propagate-named-dims,spyre-work-division"), "hint.mlir:2:3",
        ("work_div split 3 for dim 'A' does not divide its size 1024",),
        {"hint.mlir": hinted("#spyre.hint<0, work_div = {A = 3}>")}),
    "opt-missing-input": Case("spyre-opt", ("nosuch.mlir",), "nosuch.mlir", ("No such file or directory",)),
    "opt-output-in-missing-dir": Case("spyre-opt", ("add.mlir", "-o", "missing/out.mlir"), "missing/out.mlir",
                                      ("directory 'missing' does not exist",), {"add.mlir": ADD}),
    # --- spyre-compile ---
    "compile-cores-33": Case("spyre-compile", ("add.mlir", "-o", "out2", "--cores", "33"), "spyre-compile",
                             ("argument --cores: cores must be an integer between 1 and 32, got 33",),
                             {"add.mlir": ADD}),
    "compile-lx-fraction-1": Case("spyre-compile", ("add.mlir", "-o", "out2", "--lx-fraction", "1"),
                                  "spyre-compile", ("argument --lx-fraction:", "0 <= fraction < 1, got 1.0"),
                                  {"add.mlir": ADD}),
    "compile-sencores-64": Case("spyre-compile", ("add.mlir", "-o", "out2"), "spyre-compile",
                                ("SENCORES=64: cores must be", "got 64"), {"add.mlir": ADD}, env={"SENCORES": "64"}),
    "compile-span-not-met": Case(
        "spyre-compile", ("mm.mlir", "-o", "out2", "--cores", "2", "--no-span-tiling"), "mm.mlir:2:3",
        ("'spyre.matmul' op", "per-core span", "no split on 2 cores meets it"), {"mm.mlir": BIG_MATMUL}),
    "compile-span-needs-two-reduction-splits": Case(
        "spyre-compile", ("sum.mlir", "-o", "out2", "--no-span-tiling"), "sum.mlir:2:3",
        ("'spyre.reduce' op", "per-core span", "more than one reduction dim"), {"sum.mlir": TWO_REDUCTIONS}),
    "compile-hint-tile-count-not-divisor": Case(
        "spyre-compile", ("hint.mlir", "-o", "out2"), "hint.mlir:2:3", ("not divisible by the tile count 3",),
        {"hint.mlir": hinted("#spyre.hint<0, tiles = {A = 3}>")}),
    "compile-dynamic-shape": Case(
        "spyre-compile", ("dyn.mlir", "-o", "out2"), "dyn.mlir:2:3", ("dynamic shape", "only static shapes"),
        {"dyn.mlir": unary('spyre.pointwise "exp" (%a) : (tensor<?x128xf16>) -> tensor<?x128xf16>',
                           "tensor<?x128xf16>", "tensor<?x128xf16>")}),
    "compile-unsupported-dtype": Case(
        "spyre-compile", ("i32.mlir", "-o", "out2"), "i32.mlir:2:3", ("element type i32",),
        {"i32.mlir": unary('spyre.pointwise "exp" (%a) : (tensor<64x128xi32>) -> tensor<64x128xi32>',
                           "tensor<64x128xi32>", "tensor<64x128xi32>")}),
    "compile-returns-an-argument": Case(
        "spyre-compile", ("ret.mlir", "-o", "out2"), "ret.mlir:2:3", ("result #0", "needs a copy"),
        {"ret.mlir": "func.func @main(%a: tensor<64x128xf16>) -> tensor<64x128xf16> {\n"
                     "  func.return %a : tensor<64x128xf16>\n}\n"}),
    "compile-unknown-lx-solver": Case("spyre-compile", ("add.mlir", "-o", "out2", "--lx-solver", "optimal"),
                                      "spyre-compile", ("argument --lx-solver: invalid choice: 'optimal'",
                                                        "(choose from auto, greedy"), {"add.mlir": ADD}),
    "compile-missing-source": Case("spyre-compile", ("nosuch.mlir", "-o", "out2"), "nosuch.mlir",
                                   ("cannot read 'nosuch.mlir'", "No such file"), {}),
    "compile-output-not-empty": Case(
        "spyre-compile", ("add.mlir", "-o", "keep"), "keep", ("output directory is not empty", "--force"),
        {"add.mlir": ADD, "keep/notes.txt": "mine"}),
    "compile-output-is-a-file": Case("spyre-compile", ("add.mlir", "-o", "add.mlir"), "add.mlir",
                                     ("cannot write the output directory: a file of that name exists",),
                                     {"add.mlir": ADD}),
    "compile-output-below-a-file": Case("spyre-compile", ("add.mlir", "-o", "add.mlir/out"), "add.mlir/out",
                                        ("cannot write the output directory: 'add.mlir' is not a directory",),
                                        {"add.mlir": ADD}),
    "compile-output-is-stdout": Case("spyre-compile", ("add.mlir", "-o", "-"), "spyre-compile",
                                     ("argument -o/--output: spyre-compile writes a directory",), {"add.mlir": ADD}),
    "compile-no-factory": Case("spyre-compile", ("model.py", "-o", "out2"), "model.py",
                               ("name the factory to call: 'model.py:FACTORY'", "without parameters: build"),
                               {"model.py": RAISING_MODEL}),
    "import-missing-model": Case("spyre-import", ("nosuch.py:build",), "nosuch.py",
                                 ("cannot read the file: no such file or directory",)),
    # --- spyre-run: corrupted and truncated output directories ---
    "run-missing-directory": Case("spyre-run", ("nosuch",), "nosuch", ("no such output directory",)),
    "run-manifest-missing": Case("spyre-run", ("out",), "out/manifest.json",
                                 ("cannot read the manifest", "No such file"), corrupt=remove("manifest.json")),
    "run-manifest-bad-json": Case("spyre-run", ("out",), "out/manifest.json", ("malformed JSON", "at line"),
                                  corrupt=truncate("manifest.json", 40)),
    "run-manifest-bad-shape": Case("spyre-run", ("out",), "out/manifest.json: args[0]",
                                   ("'shape' must be a list of integers",),
                                   corrupt=edit_json("manifest.json", set_arg_shape)),
    "run-manifest-33-cores": Case("spyre-run", ("out",), "out/manifest.json", ("'cores': cores must be an integer between 1 and 32",),
                                  corrupt=edit_json("manifest.json", lambda m: m.update(cores=33))),
    "run-sdsc-missing": Case("spyre-run", ("out",), "sdsc_1.json", ("cannot read the SDSC file", "No such file"),
                             corrupt=remove("sdsc_1.json")),
    "run-sdsc-truncated": Case("spyre-run", ("out",), "sdsc_0.json", ("malformed JSON",),
                               corrupt=truncate("sdsc_0.json", 300)),
    "run-sdsc-missing-key": Case(
        "spyre-run", ("out",), "sdsc_0.json", ("0_add", "missing 'numWkSlicesPerDim_'"),
        corrupt=edit_json("sdsc_0.json", lambda s: s["0_add"].pop("numWkSlicesPerDim_"))),
    "run-sdsc-core-fold-malformed": Case(
        "spyre-run", ("out",), "sdsc_0.json", ("scheduleTree_[2].coordinates_.coordInfo.mb", "malformed core_fold"),
        corrupt=edit_json("sdsc_0.json", null_core_fold)),
    "run-bundle-missing": Case("spyre-run", ("out",), "out/bundle.mlir", ("cannot read the bundle",),
                               corrupt=remove("bundle.mlir")),
    "run-bundle-truncated": Case("spyre-run", ("out",), "out/bundle.mlir:", ("identifier after %",),
                                 corrupt=truncate("bundle.mlir", 600)),
    "run-sdsc-filename-escapes": Case("spyre-run", ("out",), "out/bundle.mlir:",
                                      ('sdsc_filename "../x.json" resolves outside the output directory',),
                                      corrupt=rename_sdsc("../x.json")),
    "run-sdsc-filename-not-listed": Case("spyre-run", ("out",), "out/bundle.mlir:",
                                         ('sdsc_filename "sdsc_0.json"', "not listed in manifest.json"),
                                         corrupt=edit_json("manifest.json", lambda m: m.update(sdsc_files=[]))),
    "run-inputs-not-npz": Case("spyre-run", ("out", "--inputs", "in.npz"), "in.npz", ("not an .npz archive",),
                               {"in.npz": "a,b\n1,2\n"}),
    "run-inputs-wrong-names": Case("spyre-run", ("out", "--inputs", "in.npz"), "in.npz",
                                   ("inputs do not match the manifest", "missing ['a', 'b']", "unexpected ['q']"),
                                   {"in.npz": npz_bytes(q=np.zeros((64, 128), np.float16))}),
    **{f"run-inputs-{name}": Case("spyre-run", ("out", "--inputs", "in.npz"), "in.npz",
                                  ("input 'a' expects float16 [64, 128], given ", given, why),
                                  {"in.npz": npz_bytes(a=a, b=np.zeros((64, 128), np.float16))})
       for name, a, given, why in (
           ("float64", np.zeros((64, 128)), "float64 [64, 128]", "convert it to float16 first"),
           ("int32", np.zeros((64, 128), np.int32), "int32 [64, 128]", "convert it to float16 first"),
           ("bool", np.zeros((64, 128), bool), "bool [64, 128]", "convert it to float16 first"),
           ("complex", np.full((64, 128), 1 + 1j, np.complex64), "complex64 [64, 128]", "convert it to float16 first"),
           ("shape", np.zeros((64, 64), np.float16), "float16 [64, 64]", "compile it for [64, 64]"))},
    "run-outputs-in-missing-dir": Case("spyre-run", ("out", "--stats-json", "stats.json", "--outputs", "no/o.npz"),
                                       "no/o.npz", ("directory 'no' does not exist",)),
    # --- from PyTorch (each imports torch: keep them few) ---
    "import-unsupported-aten-op": Case("spyre-import", ("sort.py:build",), "sort.py:5",
                                       ("unsupported ATen op 'aten.sort.default'",), {"sort.py": SORT_MODEL}),
    "import-model-raises": Case("spyre-import", ("model.py:build", "-o", "m.mlir"), "model.py:2",
                                ("the model raised RuntimeError: no weights found",), {"model.py": RAISING_MODEL}),
    "compile-export-fails-in-a-torch-op": Case(
        "spyre-compile", ("model.py:build", "-o", "out2"), "model.py:6",
        ("torch.export raised RuntimeError: a and b must have same reduction dim",), {"model.py": MISMATCHED_MATMUL}),
    "compile-data-dependent-shape": Case(
        "spyre-compile", ("model.py:build", "-o", "out2"), "model.py:6",
        ("the program has a data-dependent output shape", "'aten.index.Tensor'", "torch.where(mask, x, 0)"),
        {"model.py": DATA_DEPENDENT_MODEL}),
    "import-example-inputs-not-a-tuple": Case(
        "spyre-import", ("model.py:build",), "model.py:4",
        ("factory 'build' returned (function, Tensor): the example inputs must be a tuple, e.g. return model, (x,)",),
        {"model.py": TENSOR_NOT_TUPLE_MODEL}),
    "compile-undeclared-dim-name": Case("spyre-compile", ("model.py:build", "-o", "out2"), "model.py:7",
                                        ("undeclared dimension name 'Q'", "declare_tensor_dim('Q', size)"),
                                        {"model.py": UNDECLARED_MODEL}),
    "compile-not-a-pt2": Case("spyre-compile", ("model.pt2", "-o", "out2"), "model.pt2",
                              ("not a .pt2 archive",), {"model.pt2": b"PK? not really"}),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    """ADD compiled on 4 cores: the directory the spyre-run cases corrupt."""
    root = tmp_path_factory.mktemp("compiled")
    (root / "add.mlir").write_text(ADD)
    assert spyre_compile([str(root / "add.mlir"), "-o", str(root / "out"), "--cores", "4"]) == 0
    return root / "out"


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and directory (None) below ``directory``, by relative path."""
    return {str(p.relative_to(directory)): None if p.is_dir() else p.read_bytes()
            for p in sorted(directory.rglob("*"))}


def test_the_sweep_is_wide():
    assert len(CASES) >= 30
    assert {case.tool for case in CASES.values()} == {"spyre-opt", "spyre-import", "spyre-compile", "spyre-run"}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_located_error(name, tmp_path, compiled):
    case = CASES[name]
    for rel, content in case.files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (tmp_path / rel).write_bytes(content)
        else:
            (tmp_path / rel).write_text(content)
    if case.tool == "spyre-run":
        shutil.copytree(compiled, tmp_path / "out")
        if case.corrupt is not None:
            case.corrupt(tmp_path / "out")
    before = snapshot(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("SPYRE_TRACEBACK", "SENCORES")} | case.env
    done = subprocess.run([str(BIN / case.tool), *case.args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(case.where), lines[0]
    message = lines[0][len(case.where):].partition("error: ")[2]
    assert message, lines[0]
    position = 0
    for word in case.words:
        found = message.find(word, position)
        assert found >= 0, f"{word!r} not in {message!r}"
        position = found + len(word)
    assert snapshot(tmp_path) == before
