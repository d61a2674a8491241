"""Where torch-spyre's reference outputs live: ``test/data/reference`` in this repository.

``test/data/reference/README.md`` says what produced each file.
"""

from __future__ import annotations

from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
SCHEMA = REFERENCE / "sdscbundle-schema.json"
BUNDLE_REF = REFERENCE / "bundle_add_mul_nested"
