"""The import layering of DESIGN §14: passes import analysis and dialects, never another
pass; codegen and analysis import no pass; analysis imports no codegen."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PASSES = ROOT / "passes"


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in the file (absolute names)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _pass_of(path: Path) -> str:
    """The pass module a file of passes/ belongs to (a package's files belong to the package)."""
    relative = path.relative_to(PASSES)
    return f"spyre_mlir.passes.{relative.parts[0].removesuffix('.py')}"


def _sources(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if p.name != "__init__.py" or p.parent != directory)


@pytest.mark.parametrize("path", _sources(PASSES), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_pass_imports_another_pass(path: Path) -> None:
    own = _pass_of(path)
    others = {m for m in _imports(path) if m.startswith("spyre_mlir.passes.") and not m.startswith(own)}
    assert not others, f"{path.relative_to(ROOT)} imports other passes: {sorted(others)}"


@pytest.mark.parametrize("layer, forbidden", [
    ("spyre_mlir/codegen", ("spyre_mlir.passes",)),
    ("spyre_mlir/analysis", ("spyre_mlir.passes", "spyre_mlir.codegen")),
])
def test_libraries_import_no_pass(layer: str, forbidden: tuple[str, ...]) -> None:
    offending = {f"{p.relative_to(ROOT)}: {m}" for p in (ROOT / layer).rglob("*.py")
                 for m in _imports(p) if m.startswith(forbidden)}
    assert not offending, sorted(offending)


def test_the_layering_check_sees_a_pass_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from spyre_mlir.passes.work_division import plan_work\n")
    assert "spyre_mlir.passes.work_division" in _imports(probe)
