# Snapshot of every output directory the project's programs compile to, for
# refactors that must not change behaviour.  Reads the examples, the lit suite's
# .mlir programs and the pytest suite; writes SNAPSHOT/<source>/<files> (each
# compiled output's bundle.mlir, SDSC JSON, manifest and constants, or the
# error a program fails with).  Compare two snapshots with `diff -r`.
"""Snapshot every compiled output, to check a change keeps them byte-identical.

    python utils/snapshot_outputs.py SNAPSHOT [--skip-pytest]

Three sources, each compiled for 1, 4 and 32 cores where it is a program:

* ``examples/*.py`` (every factory named ``build``) and ``examples/models.py``'s
  models at their default sizes;
* every ``.mlir`` file under ``test/`` that the full pipeline accepts (a file it
  rejects records its error message instead, so a change in diagnostics shows
  too);
* every output directory the pytest suite writes: the suite runs with this
  module as a plugin, which records what :func:`spyre_mlir.codegen.writer.bundle_files`
  returns, per test and call, under ``pytest/<test id>/<n>/``.

Then ``diff -r BEFORE AFTER`` is empty exactly when nothing changed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT_ENV = "SPYRE_SNAPSHOT_DIR"
CORES = (1, 4, 32)
MODEL_FACTORIES = ("llama", "granite", "gpt2", "bert", "encoder", "mha")


def _store(directory: Path, files: dict[str, str | bytes]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = directory / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def _compile(module_factory, directory: Path, cores: int) -> None:
    """Compile a fresh module for ``cores`` and store its files, or the error it fails with."""
    from spyre_mlir.codegen.writer import bundle_files
    from spyre_mlir.diagnostics import SpyreError
    from spyre_mlir.pipeline import CompileOptions, run_stages

    try:
        module = module_factory()
        run_stages(module, CompileOptions(cores=cores), log=io.StringIO())
        _store(directory, bundle_files(module))
    except SpyreError as e:
        _store(directory, {"error.txt": f"{e}\n"})
    except Exception as e:  # an internal error is recorded too, so that a change in it shows
        _store(directory, {"error.txt": f"internal error: {type(e).__name__}: {e}\n"})


def _examples(snapshot: Path) -> None:
    from spyre_mlir.importer import export_model, import_program

    sys.path.insert(0, str(ROOT / "examples"))
    programs = {}
    for path in sorted((ROOT / "examples").glob("*.py")):
        module = __import__(path.stem)
        names = MODEL_FACTORIES if path.stem == "models" else ("build", "build_view")
        for name in names:
            if hasattr(module, name):
                programs[f"{path.stem}.{name}"] = getattr(module, name)
    for name, build in programs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = export_model(*build())
        for cores in CORES:
            _compile(lambda: import_program(program), snapshot / "examples" / name / f"cores{cores}", cores)


def _lit_programs(snapshot: Path) -> None:
    from spyre_mlir.diagnostics import SpyreError
    from spyre_mlir.pipeline import load_source

    for path in sorted((ROOT / "test").rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        relative = path.relative_to(ROOT / "test")
        for cores in CORES:
            target = snapshot / "lit" / relative / f"cores{cores}"
            try:
                with contextlib.redirect_stderr(io.StringIO()):
                    load_source(str(path))
            except SpyreError as e:
                _store(target, {"error.txt": f"{e}\n"})
                continue
            with contextlib.redirect_stderr(io.StringIO()):
                _compile(lambda: load_source(str(path)), target, cores)


def _pytest(snapshot: Path) -> int:
    env = {**os.environ, SNAPSHOT_ENV: str(snapshot / "pytest"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "utils"), os.environ.get("PYTHONPATH")]))}
    return subprocess.call([sys.executable, "-m", "pytest", str(ROOT / "test/python"), "-q", "-x",
                            "-p", "no:cacheprovider", "-p", "snapshot_outputs"], env=env, cwd=ROOT)


def pytest_configure(config) -> None:
    """pytest plugin: record every ``bundle_files`` result under ``$SPYRE_SNAPSHOT_DIR``."""
    root = os.environ.get(SNAPSHOT_ENV)
    if not root:
        return
    import pytest

    from spyre_mlir.codegen import writer

    original = writer.bundle_files
    counts: dict[str, int] = {}
    current = {"test": "outside-tests"}

    def recording(module):
        files = original(module)
        test = current["test"]
        counts[test] = counts.get(test, 0) + 1
        _store(Path(root) / test / str(counts[test]), files)
        return files

    writer.bundle_files = recording

    class _Tracker:
        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(self, item) -> None:
            current["test"] = item.nodeid.replace("/", "_").replace("::", "/")

    config.pluginmanager.register(_Tracker())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", type=Path, help="directory to write (must not exist)")
    parser.add_argument("--skip-pytest", action="store_true", help="only the examples and the lit programs")
    args = parser.parse_args()
    args.snapshot.mkdir(parents=True)
    _examples(args.snapshot)
    _lit_programs(args.snapshot)
    return 0 if args.skip_pytest else _pytest(args.snapshot)


if __name__ == "__main__":
    sys.exit(main())
