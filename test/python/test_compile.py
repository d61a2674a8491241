"""spyre-compile end to end: the driver, the CLI, the writer's guarantees, the upstream oracle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    assert list(first) == ["bundle.mlir", "cost.json", "manifest.json", "sdsc_0.json", "sdsc_1.json"]
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
    # DESIGN §4's stages, after the target of §14 is attached; the staged layout of parameters is
    # decided right after the stick dims, the padding of a dim for the cores right before work
    # division; what a matmul reads past K is masked before any dim is named.
    design = ["spyre-attach-target", "spyre-mask-contractions", "spyre-propagate-named-dims", "spyre-stickify", "spyre-stage-layouts",
              "spyre-fold-views", "spyre-auto-tile", "spyre-coarse-tile", "spyre-pad-dims",
              "spyre-work-division", "spyre-plan-memory", "spyre-lower-to-bundle"]
    assert [s for s in design if s in COMPILE_STAGES] == list(COMPILE_STAGES)
    assert COMPILE_STAGES[-1] == "spyre-lower-to-bundle"


def test_compile_api(tmp_path):
    torch = pytest.importorskip("torch")
    import spyre_mlir

    a = torch.randn(64, 128, dtype=torch.float16)
    program = spyre_mlir.compile(lambda x, y: x * y + x, (a, a), cores=2, out_dir=tmp_path / "api")
    assert program.directory == tmp_path / "api"
    assert sorted(files_of(program.directory)) == ["bundle.mlir", "cost.json", "manifest.json", "sdsc_0.json",
                                                   "sdsc_1.json"]
    temp = spyre_mlir.compile(lambda x: x + x, (a,))
    assert (temp.directory / "bundle.mlir").exists()
    shutil.rmtree(temp.directory.parent)


def test_compiled_program_run_stages_parameters_and_constants(tmp_path):
    """``run`` takes the user inputs only; parameters (of a capitalised submodule) and
    lifted constants come from the exported program."""
    torch = pytest.importorskip("torch")
    import spyre_mlir

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.LayerNorm = torch.nn.LayerNorm(128, dtype=torch.float16)
            self.shift = torch.linspace(-1, 1, 128, dtype=torch.float16)

        def forward(self, x):
            return self.LayerNorm(x) * torch.tensor(3.0, dtype=torch.float16) + self.shift

    torch.manual_seed(0)
    model, x = Model(), torch.randn(64, 128, dtype=torch.float16)
    with torch.no_grad():
        model.LayerNorm.weight.uniform_(0.5, 1.5)
    program = spyre_mlir.compile(model, (x,), cores=2, out_dir=tmp_path / "out")
    got = program.run(x)
    with torch.no_grad():
        expected = model(x)
    torch.testing.assert_close(got, expected, rtol=1e-2, atol=1e-2)


TEMPORARY_DIRECTORIES = """
import gc, sys
import torch
import spyre_mlir

a = torch.ones(64, 128, dtype=torch.float16)
dropped = spyre_mlir.compile(lambda x: x + x, (a,))
kept = spyre_mlir.compile(lambda x: x * x, (a,))
given = spyre_mlir.compile(lambda x: x - x, (a,), out_dir=sys.argv[1])
directory = dropped.directory
assert (directory / "bundle.mlir").exists() and (kept.directory / "bundle.mlir").exists()
del dropped
gc.collect()
print(directory.exists(), kept.directory)
"""


def test_temporary_output_directory_is_removed_with_the_program(tmp_path):
    """Without ``out_dir``, the output lives in a temporary directory removed when the program
    is garbage-collected or at exit; a given ``out_dir`` stays."""
    pytest.importorskip("torch")
    temp = tmp_path / "tmp"
    temp.mkdir()
    # torch's export makes its inductor cache directory in TMPDIR unless the environment names one
    # (a process that made it before names it for its children): not ours to remove, kept apart.
    env = {**os.environ, "TMPDIR": str(temp), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "torch-cache")}
    done = subprocess.run([sys.executable, "-c", TEMPORARY_DIRECTORIES, str(tmp_path / "given")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    exists_after_gc, kept = done.stdout.split()
    assert exists_after_gc == "False"
    assert Path(kept).is_relative_to(temp) and not Path(kept).exists()
    assert not list(temp.iterdir())
    assert (tmp_path / "given" / "bundle.mlir").exists()


def test_restickify_warning_names_the_argument_at_its_model_line(tmp_path):
    """A function argument copied by spyre.restickify is named by its input name, and the
    warning is located at the model line that reads it, never at ``<unknown>``."""
    model = tmp_path / "model.py"
    model.write_text("import torch\n\n\ndef build():\n"
                     "    a, b = torch.ones(256, 64, dtype=torch.float16), torch.ones(256, 128, dtype=torch.float16)\n"
                     "    return (lambda a, b: a.t() @ b), (a, b)\n")
    done = subprocess.run([sys.executable, "-m", "spyre_mlir.tools.spyre_compile", f"{model}:build",
                           "-o", str(tmp_path / "out"), "--cores", "4"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"{model}:6:5: warning: function argument 'a' (#0) is copied by spyre.restickify to dim_order [1, 0], "
        "device_size [4, 64, 64]; stage it that way to avoid the copy"]


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


def test_compile_api_reports_a_failing_export_as_one_located_error():
    """A torch.export failure in spyre_mlir.compile is one SpyreError at the model's line, not
    torch's traceback."""
    torch = pytest.importorskip("torch")
    import spyre_mlir
    from spyre_mlir.diagnostics import SpyreError

    class Broken(torch.nn.Module):
        def forward(self, x):
            return x.no_such_method()  # the line the error names

    with pytest.raises(SpyreError) as info:
        spyre_mlir.compile(Broken(), (torch.ones(4, 64, dtype=torch.float16),))
    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                if text.strip().startswith("return x.no_such_method()"))
    assert info.value.format("api") == (f"{__file__}:{line}: error: torch.export raised AttributeError: "
                                        "'FakeTensor' object has no attribute 'no_such_method'")


WARNINGS_OF_THE_API = """
import warnings
import torch
import spyre_mlir


def model(x):
    warnings.warn("the model's own warning", FutureWarning)
    return x + x


spyre_mlir.compile(model, (torch.ones(64, 128, dtype=torch.float16),))
"""


def test_compile_api_hides_torchs_leafspec_warning_but_not_the_models(tmp_path):
    """torch's pytree internals warn about LeafSpec on every export; spyre_mlir.compile keeps that
    one out of the caller's output, and no other warning."""
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", WARNINGS_OF_THE_API], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "LeafSpec" not in done.stderr
    assert "FutureWarning: the model's own warning" in done.stderr
