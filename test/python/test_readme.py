"""The README's generated parts match the tools: the pass list and the command-line reference."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BIN = Path(sys.executable).parent
PASS_LIST_MARKER = "<!-- spyre-opt --list-passes -->"


def tool_output(*argv: str) -> str:
    """Stdout of an installed console script."""
    done = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def readme_section(heading: str) -> str:
    """The README text from ``heading`` to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = README.index(f"\n{heading}\n")
    ends = [m.start() for m in re.finditer(r"\n#{1,%d} " % len(level), README) if m.start() > start]
    return README[start:ends[0] if ends else len(README)]


def long_options(help_text: str) -> set[str]:
    """The ``--long`` options a ``--help`` text lists, ``--help`` itself excluded."""
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_text)) - {"--help"}


def table_flags(section: str) -> set[str]:
    """The ``--long`` options named in the first column of a section's tables."""
    flags = set()
    for row in re.findall(r"^\| (.+?) \|", section, flags=re.MULTILINE):
        flags |= set(re.findall(r"`(--[a-z][a-z-]*)`", row))
    return flags


def test_pass_list_is_the_list_passes_output():
    after = README.split(PASS_LIST_MARKER, 1)[1]
    block = re.match(r"\s*```text\n(.*?)```", after, flags=re.DOTALL)
    assert block is not None, "no ```text block after the pass-list marker"
    assert block.group(1) == tool_output("spyre-opt", "--list-passes")


def test_pass_list_has_every_pipeline_stage():
    from spyre_mlir.pipeline import COMPILE_STAGES

    listed = {line.split("{")[0].split()[0] for line in tool_output("spyre-opt", "--list-passes").splitlines()}
    assert set(COMPILE_STAGES) | {"spyre-compile"} <= listed


@pytest.mark.parametrize("tool", ["spyre-import", "spyre-compile", "spyre-run"])
def test_cli_reference_lists_exactly_the_help_flags(tool):
    assert table_flags(readme_section(f"### `{tool}`")) == long_options(tool_output(tool, "--help"))


def test_cli_reference_of_spyre_opt_names_real_flags():
    documented = table_flags(readme_section("### `spyre-opt`"))
    assert "--list-passes" in documented
    assert documented <= long_options(tool_output("spyre-opt", "--help"))
