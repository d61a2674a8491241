# A table of benchmark rows (dicts), shared by the benchmarks that print them.
# Reads nothing; writes nothing.
"""Rows of figures as a plain-text table."""

from __future__ import annotations

from typing import Any


def rows_table(rows: list[dict[str, Any]]) -> str:
    """``rows`` as a table: one column per key any row has (in first-seen order), left-aligned."""
    keys = list(dict.fromkeys(k for row in rows for k in row))
    widths = {k: max(len(k), *(len(str(row.get(k, ""))) for row in rows)) for k in keys}
    lines = ["  ".join(k.ljust(widths[k]) for k in keys)]
    lines += ["  ".join(str(row.get(k, "")).ljust(widths[k]) for k in keys) for row in rows]
    return "\n".join(lines)
