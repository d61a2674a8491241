"""Optional dependencies: a tool that needs one that is not installed says so in one line, naming the extra.

Each case runs a tool in a fresh interpreter where the optional module cannot be
imported (``sys.modules[name] = None`` makes ``import name`` raise
``ModuleNotFoundError``), and checks: exit code 1, stderr exactly the one line
``<tool>: error: <what> needs <module>: pip install 'spyre-mlir[<extra>]'``, no
traceback, nothing written.  What does not need the module still works.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from spyre_mlir.optional import EXTRAS, MissingDependency, require

from reference_files import SCHEMA

ROOT = Path(__file__).resolve().parents[2]
SEED = f"{ROOT / 'examples' / 'add_mul_nested.py'}:build"
ADD = """\
func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<64x128xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<64x128xf16> {spyre.name = "add"}) {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
"""


def run_without(module: str, tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``tool`` (``spyre_compile``, ``spyre_run``, ...) with ``args``, in a Python that cannot import ``module``."""
    code = (f"import sys; sys.modules[{module!r}] = None; "
            f"from spyre_mlir.tools.{tool} import main; sys.exit(main())")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def assert_one_error(result: subprocess.CompletedProcess[str], line: str) -> None:
    assert result.returncode == 1, result.stderr
    assert result.stderr == line + "\n"
    assert result.stdout == ""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    """A small output directory, compiled from .mlir in a Python without torch (which it does not need)."""
    tmp = tmp_path_factory.mktemp("compiled")
    (tmp / "add.mlir").write_text(ADD)
    result = run_without("torch", "spyre_compile", "add.mlir", "-o", "out", "--cores", "4", cwd=tmp)
    assert result.returncode == 0, result.stderr
    return tmp / "out"


def test_compile_without_torch_names_the_torch_extra(tmp_path):
    result = run_without("torch", "spyre_compile", SEED, "-o", "out", cwd=tmp_path)
    assert_one_error(result, "spyre-compile: error: importing a PyTorch model needs torch: "
                             "pip install 'spyre-mlir[torch]'")
    assert list(tmp_path.iterdir()) == []


def test_import_without_torch_names_the_torch_extra(tmp_path):
    result = run_without("torch", "spyre_import", SEED, "-o", "add_mul.mlir", cwd=tmp_path)
    assert_one_error(result, "spyre-import: error: importing a PyTorch model needs torch: "
                             "pip install 'spyre-mlir[torch]'")
    assert list(tmp_path.iterdir()) == []


def test_run_check_without_torch_names_the_torch_extra(compiled, tmp_path):
    result = run_without("torch", "spyre_run", str(compiled), "--check", SEED, cwd=tmp_path)
    assert_one_error(result, "spyre-run: error: checking against PyTorch eager (--check) needs torch: "
                             "pip install 'spyre-mlir[torch]'")


def test_run_without_torch_needs_no_torch(compiled, tmp_path):
    result = run_without("torch", "spyre_run", str(compiled), "--stats", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "total" in result.stdout


def test_run_schema_without_jsonschema_names_the_schema_extra(compiled, tmp_path):
    result = run_without("jsonschema", "spyre_run", str(compiled), "--schema", str(SCHEMA), cwd=tmp_path)
    assert_one_error(result, "spyre-run: error: validating SDSC files against a schema needs jsonschema: "
                             "pip install 'spyre-mlir[schema]'")


def test_png_timeline_without_matplotlib_names_the_timeline_extra(compiled, tmp_path):
    result = run_without("matplotlib", "spyre_run", str(compiled), "--timeline", "t.png", cwd=tmp_path)
    assert_one_error(result, "spyre-run: error: a .png timeline needs matplotlib: "
                             "pip install 'spyre-mlir[timeline]'")
    assert list(tmp_path.iterdir()) == []


def test_hint_api_without_torch_is_a_missing_dependency(tmp_path):
    code = textwrap.dedent("""\
        import sys
        sys.modules["torch"] = None
        from spyre_mlir.optional import MissingDependency
        try:
            from spyre_mlir import spyre_hint
        except MissingDependency as e:
            print(e)
        """)
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "spyre_hint and named tensor dims needs torch: pip install 'spyre-mlir[torch]'\n"


def test_every_extra_named_installs_its_module():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for module, extra in EXTRAS.items():
        assert any(req.startswith(module) for req in extras.get(extra, ())), (module, extra)


def test_require_reraises_a_broken_install(tmp_path, monkeypatch):
    (tmp_path / "brokenpkg").mkdir()
    (tmp_path / "brokenpkg" / "__init__.py").write_text("import nonexistent_dependency_of_brokenpkg\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(EXTRAS, "brokenpkg", "broken")
    with pytest.raises(ModuleNotFoundError) as info:
        require("brokenpkg", "testing")
    assert not isinstance(info.value, MissingDependency)
    assert info.value.name == "nonexistent_dependency_of_brokenpkg"
