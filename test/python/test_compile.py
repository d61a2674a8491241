"""spyre-compile end to end: the driver, the CLI, the writer's guarantees, the upstream oracle."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from spyre_mlir.codegen import print_mixed
from spyre_mlir.codegen.bundle_text import print_bundle
from spyre_mlir.mlir_text import make_context, parse_module
from spyre_mlir.pipeline import COMPILE_STAGES, CompileOptions, run_stages
from spyre_mlir.tools.spyre_compile import main

ROOT = Path(__file__).resolve().parents[2]
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
ADD = """func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<64x128xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<64x128xf16> {spyre.name = "add"}) {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  %z = spyre.pointwise "exp" (%y) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %z : tensor<64x128xf16>
}
"""


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.fixture
def add_mlir(tmp_path: Path) -> Path:
    path = tmp_path / "add.mlir"
    path.write_text(ADD)
    return path


def test_cli_writes_directory_deterministically(tmp_path, add_mlir):
    assert main([str(add_mlir), "-o", str(tmp_path / "o1"), "--cores", "4"]) == 0
    assert main([str(add_mlir), "-o", str(tmp_path / "o2"), "--cores", "4"]) == 0
    first = files_of(tmp_path / "o1")
    assert list(first) == ["bundle.mlir", "manifest.json", "sdsc_0.json", "sdsc_1.json"]
    assert first == files_of(tmp_path / "o2")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_existing_nonempty_directory_needs_force(tmp_path, add_mlir, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    assert main([str(add_mlir), "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not empty (use --force" in err[0]
    assert files_of(out) == {"keep.txt": b"x"}
    assert main([str(add_mlir), "-o", str(out), "--force"]) == 0
    assert "keep.txt" not in files_of(out)


def test_unwritable_directory_is_one_error(tmp_path, add_mlir, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user that can write read-only directories")
        assert main([str(add_mlir), "-o", str(locked / "out")]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "cannot write the output directory" in err[0]
        assert not list(locked.iterdir())
    finally:
        locked.chmod(0o700)


def test_output_below_a_file_is_one_error(tmp_path, add_mlir, capsys):
    """Unwritable even for root: the output directory's parent is a regular file."""
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    assert main([str(add_mlir), "-o", str(blocker / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write the output directory" in err[0] and "Traceback" not in err[0]
    assert blocker.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["add.mlir", "blocker"]


def test_unsupported_construct_is_one_error(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text("""func.func @main(%a: tensor<64x128xf16>) -> tensor<64x2x32xf16> {
  %z = spyre.fill 0.0 : tensor<64x128xf16>
  %y = spyre.pointwise "add" (%a, %z) : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  %r = spyre.restickify (%y) {iteration_space = array<i64: 64, 2, 32>, indexing_maps = [
    affine_map<(d0, d1, d2) -> (d0, d1 * 32 + d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]}
    : (tensor<64x128xf16>) -> tensor<64x2x32xf16>
  func.return %r : tensor<64x2x32xf16>
}
""")
    assert main([str(bad), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{bad}:4:3: error: cannot lower 'spyre.restickify'")
    assert "shares a stick with another dim" in err[0]
    assert not (tmp_path / "out").exists()


def test_pipeline_order_is_the_design_order():
    design = ["spyre-propagate-named-dims", "spyre-stickify", "spyre-fold-views", "spyre-coarse-tile",
              "spyre-work-division", "spyre-plan-memory", "spyre-lower-to-bundle"]
    assert [s for s in design if s in COMPILE_STAGES] == list(COMPILE_STAGES)
    assert COMPILE_STAGES[-1] == "spyre-lower-to-bundle"


def test_compile_api(tmp_path):
    torch = pytest.importorskip("torch")
    import spyre_mlir

    a = torch.randn(64, 128, dtype=torch.float16)
    program = spyre_mlir.compile(lambda x, y: x * y + x, (a, a), cores=2, out_dir=tmp_path / "api")
    assert program.directory == tmp_path / "api"
    assert sorted(files_of(program.directory)) == ["bundle.mlir", "manifest.json", "sdsc_0.json", "sdsc_1.json"]
    temp = spyre_mlir.compile(lambda x: x + x, (a,))
    assert (temp.directory / "bundle.mlir").exists()
    shutil.rmtree(temp.directory.parent)


@pytest.mark.parametrize("example", ["add_mul_nested", "transformer_block"])
def test_example_compiles_twice_identically(tmp_path, example):
    pytest.importorskip("torch")
    spec = f"{ROOT / 'examples' / example}.py:build"
    assert main([spec, "-o", str(tmp_path / "a")]) == 0
    assert main([spec, "-o", str(tmp_path / "b")]) == 0
    assert files_of(tmp_path / "a") == files_of(tmp_path / "b")


def test_mixed_bundle_lowers_in_upstream_mlir_opt(tmp_path):
    if not os.access(MLIR_OPT, os.X_OK):
        pytest.skip(f"upstream mlir-opt not found at {MLIR_OPT}")
    module = parse_module(make_context(), ADD, "add.mlir")
    run_stages(module, CompileOptions(cores=4))
    bundle = parse_module(make_context(), print_bundle(module), "bundle.mlir")
    text = print_mixed(bundle)
    done = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "-lower-affine", "-convert-scf-to-cf"],
                          input=text, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert '"sdscbundle.sdsc_execute"' in done.stdout
