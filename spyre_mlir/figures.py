# The figures of one SDSC file that the cost model predicts (`spyre-compile
# --report`, cost.json) and the reference interpreter counts (`spyre-run
# --stats`, --stats-json): their names, the columns of the table both tools
# print (one set of titles, one order), how the total row combines them, and
# the fixed-width text of that table.  Reads and writes nothing; imports
# nothing of the compiler or the interpreter, so that both can use it.
"""Per-SDSC-file figures and their table.

A figure is named by its statistic (the keys of ``cost.json`` and of
``spyre-run --stats-json``) and titled by its column::

    sdsc file    op   runs  cores    HBM read  HBM written    LX read  LX written  LX peak  predicted us
    sdsc_0.json  add     8     32  16,777,216            0          0   8,388,608   32,768         111.8

``cores`` is the number of cores one execution of the file uses (the product
of its work division).  In the total row, executions and bytes are summed;
``cores`` and ``LX peak`` are the most any execution uses, since the files run
one after another.  Columns a tool adds (the predicted time, predictions
beside counts) follow the figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FIGURES: tuple[tuple[str, str], ...] = (
    ("executions", "runs"),
    ("cores_used", "cores"),
    ("hbm_bytes_read", "HBM read"),
    ("hbm_bytes_written", "HBM written"),
    ("lx_bytes_read", "LX read"),
    ("lx_bytes_written", "LX written"),
    ("lx_peak_bytes", "LX peak"),
)
"""(statistic name, column title) of every figure, in column order."""

PEAK_FIGURES = frozenset({"cores_used", "lx_peak_bytes"})
"""Figures whose total is the most of any file, not the sum."""


def total_figures(per_file: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The total row of ``per_file`` figures: sums, except :data:`PEAK_FIGURES` (the largest)."""
    return {name: max((f[name] for f in per_file), default=0) if name in PEAK_FIGURES
            else sum(f[name] for f in per_file) for name, _ in FIGURES}


def figures_table(files: Sequence[tuple[str, str, Mapping[str, Any]]],
                  extra: Sequence[tuple[str, Sequence[str]]] = ()) -> str:
    """The fixed-width table of ``files`` (sdsc file, op, figures by statistic name), one row
    each, then the total row (:func:`total_figures`).  ``extra`` columns (title, one cell per
    file then the total's) follow the figures.  Integers print with thousands separators;
    the two name columns are left-aligned, the rest right-aligned."""
    head = ("sdsc file", "op", *(title for _, title in FIGURES), *(title for title, _ in extra))
    rows = [(filename, op, *(figures[name] for name, _ in FIGURES)) for filename, op, figures in files]
    totals = total_figures([figures for _, _, figures in files])
    rows.append(("total", "", *(totals[name] for name, _ in FIGURES)))
    rows = [(*row, *(cells[i] for _, cells in extra)) for i, row in enumerate(rows)]
    cells = [head, *(tuple(f"{v:,}" if isinstance(v, int) else str(v) for v in row) for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
                     for row in cells)
