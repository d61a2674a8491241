"""The reference outputs are test data of the repository, each with a note of what produced it."""

from __future__ import annotations

import re

from reference_files import BUNDLE_REF, REFERENCE, SCHEMA


def noted_files() -> list[str]:
    """The files the table of ``test/data/reference/README.md`` describes, in its order."""
    return re.findall(r"^\| `([^`]+)` \| \S", (REFERENCE / "README.md").read_text(), flags=re.MULTILINE)


def test_every_reference_file_has_a_note():
    present = sorted(str(p.relative_to(REFERENCE)) for p in REFERENCE.rglob("*")
                     if p.is_file() and p.name != "README.md")
    assert sorted(noted_files()) == present


def test_the_references_the_tests_name_are_in_the_repository():
    for path in (SCHEMA, BUNDLE_REF / "bundle.mlir", BUNDLE_REF / "sdsc_0.json", BUNDLE_REF / "sdsc_1.json"):
        assert path.is_file(), path
    assert len(list((REFERENCE / "sdsc").glob("*.json"))) >= 3
