# `python -m spyre_mlir`: the package's front door, a short help naming its
# commands.  Reads the command line and the installed package's metadata (its
# console scripts) and the tools' module docstrings (parsed, not imported);
# writes the help (stdout) or a usage error (stderr).
"""``python -m spyre_mlir``: which commands spyre-mlir installs, and its version."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from collections.abc import Sequence
from importlib.metadata import distribution

from spyre_mlir.tools.cli import add_version_argument, plain_text


def _summary(module: str) -> str:
    """The first line of ``module``'s docstring without its leading ``name:``, read without importing it."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    with open(spec.origin, encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read())) or ""
    return plain_text(doc.splitlines()[0] if doc else "").partition(": ")[2]


def commands() -> dict[str, str]:
    """Every console script of the installed package, by name, with its one-line summary."""
    scripts = [e for e in distribution("spyre-mlir").entry_points if e.group == "console_scripts"]
    return {e.name: _summary(e.module) for e in sorted(scripts, key=lambda e: e.name)}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the help (the commands and where to read more); an unknown argument is a usage error."""
    listed = commands()
    width = max(map(len, listed))
    epilog = "commands:\n" + "\n".join(f"  {name.ljust(width)}  {summary}" for name, summary in listed.items())
    parser = argparse.ArgumentParser(
        prog="python -m spyre_mlir", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="spyre-mlir: an MLIR compiler toolchain for the IBM Spyre accelerator's front end.",
        epilog=f"{epilog}\n\nEach command's --help tells more.")
    add_version_argument(parser)
    parser.parse_args(argv)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
