# Validation of SDSC JSON files against torch-spyre's sdscbundle schema.  The
# schema comes from an explicit path or the SPYRE_SDSC_SCHEMA environment
# variable (the repository keeps a copy as test data,
# test/data/reference/sdscbundle-schema.json).  Reads the schema file; writes
# nothing.
"""Optional JSON-schema validation of SDSC files.

Real files from torch-spyre's emitter deviate from the schema in three
observed ways, which are accepted (and nothing else):

* data formats ``IEEE_FP32``, ``SENINT8`` and ``IEEE_INT32`` (torch-spyre's names, outside the
  ``dataFormat_`` enums);
* a top-level ``debug_handle_`` field on each SuperDsc;
* placeholder constant values such as ``["<encoded 0 as SEN169_FP16>"]`` in
  fold-manager ``data_`` tables (``constantInfo_`` of masked reductions).
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.optional import require

SCHEMA_ENV_VAR = "SPYRE_SDSC_SCHEMA"
"""Environment variable naming the schema file when no explicit path is given."""

EXTRA_DATA_FORMATS = ("IEEE_FP32", "SENINT8", "IEEE_INT32")


class SchemaValidator:
    """Validates SDSC documents against the (patched) sdscbundle schema."""

    def __init__(self, schema: dict[str, Any], source: str):
        jsonschema = require("jsonschema", "validating SDSC files against a schema")

        self.source = source
        patched = _accept_known_deviations(schema)
        try:
            jsonschema.Draft202012Validator.check_schema(patched)
        except jsonschema.SchemaError as e:
            raise SpyreError(f"not a valid JSON schema: {e.message}", loc=source) from None
        self._validator = jsonschema.Draft202012Validator(patched)

    def validate(self, doc: Any, filename: str) -> None:
        """Raise a :class:`SpyreError` naming the first schema violation of ``doc``."""
        errors = sorted(self._validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            e = errors[0]
            where = ".".join(str(p) for p in e.absolute_path) or "<top>"
            raise SpyreError(f"schema violation at {where}: {_short(e.message)}", loc=filename)


def load_schema(path: str | os.PathLike[str] | None = None) -> SchemaValidator | None:
    """The validator for ``path``, else for ``$SPYRE_SDSC_SCHEMA``, else None (no schema)."""
    source = path if path is not None else os.environ.get(SCHEMA_ENV_VAR) or None
    if source is None:
        return None
    try:
        schema = json.loads(Path(source).read_text())
    except OSError as e:
        raise SpyreError(f"cannot read the SDSC schema: {e.strerror}", loc=str(source)) from None
    except json.JSONDecodeError as e:
        raise SpyreError(f"malformed JSON schema: {e.msg} at line {e.lineno}", loc=str(source)) from None
    if not isinstance(schema, dict):
        raise SpyreError("not a JSON schema object", loc=str(source))
    return SchemaValidator(schema, str(source))


def _accept_known_deviations(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` that accepts the deviations listed in the module docstring."""
    patched = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            fmt = node.get("properties", {}).get("dataFormat_") if isinstance(node.get("properties"), dict) else None
            if isinstance(fmt, dict) and isinstance(fmt.get("enum"), list):
                fmt["enum"] = fmt["enum"] + [f for f in EXTRA_DATA_FORMATS if f not in fmt["enum"]]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(patched)
    defs = patched.get("$defs", {})
    super_dsc = defs.get("SuperDsc", {}).get("properties")
    if isinstance(super_dsc, dict):
        super_dsc.setdefault("debug_handle_", {})
    table = defs.get("FoldManager", {}).get("properties", {}).get("data_", {}).get("patternProperties", {})
    for entry in table.values() if isinstance(table, dict) else ():
        if isinstance(entry, dict) and isinstance(entry.get("oneOf"), list):
            entry["oneOf"].append({"type": "array", "items": {"type": "string"}})
    return patched


def _short(message: str, limit: int = 160) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."
