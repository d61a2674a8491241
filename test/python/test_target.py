"""The target (DESIGN §14): ``--cores``, ``spyre_mlir.compile(cores=)``, ``{cores=N}`` and ``$SENCORES`` agree.

Every pass reads cores and the LX fraction from the module's ``#spyre.target``;
only the drivers read ``$SENCORES``, as the default of their core count.  The
program of the regression is a ``[16384, 65536]`` fp16 add: on 4 cores each
core's span of an operand is over the limit, so ``spyre-coarse-tile`` must see
the 4 cores to add a loop.  It is only compiled (its data would be 4 GiB).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.manifest import read_manifest
from spyre_mlir.pipeline import CompileOptions
from spyre_mlir.tools.spyre_compile import main as spyre_compile
from spyre_mlir.tools.spyre_opt import main as spyre_opt

BIG_ADD = '''\
import torch


class Add(torch.nn.Module):
    def forward(self, a, b):
        return a + b


def build():
    # torch.empty: shapes for the export, no 2 GiB of data written.
    return Add(), tuple(torch.empty(16384, 65536, dtype=torch.float16) for _ in range(2))
'''

SMALL_ADD = """func.func @main(%a: tensor<256x128xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<256x128xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<256x128xf16> {spyre.name = "add"}) {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<256x128xf16>, tensor<256x128xf16>) -> tensor<256x128xf16>
  func.return %y : tensor<256x128xf16>
}
"""


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.fixture(scope="module")
def big_add(tmp_path_factory) -> tuple[str, dict[str, bytes]]:
    """The big add's ``model.py:build`` and its output directory from ``SENCORES=4 spyre-compile`` (no --cores)."""
    root = tmp_path_factory.mktemp("big_add")
    (root / "big_add.py").write_text(BIG_ADD)
    source = f"{root / 'big_add.py'}:build"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SENCORES", "4")
        assert spyre_compile([source, "-o", str(root / "sencores4")]) == 0
    return source, files_of(root / "sencores4")


def set_sencores(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    """``$SENCORES`` set to ``value``, or unset for None."""
    if value is None:
        monkeypatch.delenv("SENCORES", raising=False)
    else:
        monkeypatch.setenv("SENCORES", value)


@pytest.mark.parametrize("sencores", [None, "4", "32", "1"])
def test_cores_option_compiles_the_big_add_as_sencores_does(big_add, tmp_path, monkeypatch, sencores):
    source, expected = big_add
    set_sencores(monkeypatch, sencores)
    assert spyre_compile([source, "-o", str(tmp_path / "out"), "--cores", "4"]) == 0
    assert files_of(tmp_path / "out") == expected
    manifest = read_manifest(tmp_path / "out")
    assert (manifest.cores, manifest.backend_lx_fraction) == (4, 0.2)
    assert "scf.for" in expected["bundle.mlir"].decode()  # coarse-tile split the span on 4 cores


@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch.export's own deprecation notices
@pytest.mark.parametrize("sencores", [None, "32"])
def test_compile_api_cores_compiles_the_big_add_as_sencores_does(big_add, tmp_path, monkeypatch, sencores):
    import spyre_mlir

    source, expected = big_add
    set_sencores(monkeypatch, sencores)
    spec = importlib.util.spec_from_file_location("big_add", source.rpartition(":")[0])
    model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model)
    program = spyre_mlir.compile(*model.build(), cores=4, out_dir=tmp_path / "api")
    assert files_of(program.directory) == expected


def test_spyre_opt_passes_divide_over_the_attached_target_not_sencores(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SENCORES", "1")
    (tmp_path / "add.mlir").write_text(SMALL_ADD)
    assert spyre_opt([str(tmp_path / "add.mlir"), "-p", "spyre-attach-target{cores=4},spyre-work-division"]) == 0
    out = capsys.readouterr().out
    assert "spyre.target = #spyre.target<cores = 4, lx_fraction = 0.2>" in out
    assert "core_splits = array<i64: 4, 1>" in out


def test_compile_options_do_not_read_sencores(monkeypatch):
    """Only the drivers read $SENCORES; the options a library caller builds mean what they say."""
    monkeypatch.setenv("SENCORES", "8")
    assert CompileOptions().cores is None  # the module's target, else 32
    assert CompileOptions(cores=2).cores == 2


@pytest.mark.parametrize("options, message", [
    ({"cores": 33}, "spyre-compile: cores=33: cores must be an integer between 1 and 32, got 33"),
    ({"lx_fraction": 1.0}, "spyre-compile: lx-fraction: backend_lx_fraction must satisfy 0 <= fraction < 1, got 1.0"),
])
def test_bad_target_options_are_one_error(options, message):
    with pytest.raises(SpyreError) as info:
        CompileOptions(**options)
    assert info.value.msg == message


def test_a_bad_sencores_is_one_error_of_the_driver(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SENCORES", "64")
    assert spyre_compile([str(tmp_path / "missing.mlir"), "-o", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "spyre-compile: error: SENCORES=64: cores must be an integer between 1 and 32, got 64"]


@pytest.mark.parametrize("flags, cores, fraction", [
    ((), 8, 0.1),
    (("--cores", "2"), 2, 0.1),
    (("--lx-fraction", "0.5"), 8, 0.5),
])
def test_manifest_records_the_module_target(tmp_path, monkeypatch, flags, cores, fraction):
    """A target in the input stays unless an option replaces it; the manifest records the result."""
    monkeypatch.delenv("SENCORES", raising=False)
    source = tmp_path / "add.mlir"
    source.write_text("module attributes {spyre.target = #spyre.target<cores = 8, lx_fraction = 0.1>} {\n"
                      f"{SMALL_ADD}}}\n")
    assert spyre_compile([str(source), "-o", str(tmp_path / "out"), *flags]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert (manifest["cores"], manifest["backend_lx_fraction"]) == (cores, fraction)
    (sdsc,) = json.loads((tmp_path / "out" / "sdsc_0.json").read_text()).values()
    assert sdsc["numCoresUsed_"] == cores
