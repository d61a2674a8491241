# Statistics of an interpreter run: bytes read and written per memory, LX
# high-water marks per core, cores used and executions, per SDSC file (op) and
# in total; as a text table and as a JSON-ready dict.  Reads nothing; writes
# nothing.
"""Run statistics.

Counting rules: every core reads its whole slice of every input (a tensor
read by several cores is counted once per core); an output slice is counted
once however many cores combined partial results into it, except in LX,
where each core holds its own copy.  Sparse sticks count whole sticks.
``lx_peak_bytes`` is the LX high-water mark: the highest LX byte offset any
execution wrote on a core (per core in ``lx_peak_bytes_per_core``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_COUNTERS = ("hbm_bytes_read", "hbm_bytes_written", "lx_bytes_read", "lx_bytes_written")


@dataclass
class OpStats:
    """Statistics of one SDSC file over all its executions."""

    filename: str
    op: str
    executions: int = 0
    cores_used: int = 0
    hbm_bytes_read: int = 0
    hbm_bytes_written: int = 0
    lx_bytes_read: int = 0
    lx_bytes_written: int = 0
    lx_end: dict[int, int] = field(default_factory=dict)
    """Highest LX byte offset written, per core."""

    def note_lx_end(self, core: int, end: int) -> None:
        """Record an LX write on ``core`` ending at ``end``."""
        self.lx_end[core] = max(self.lx_end.get(core, 0), end)


@dataclass
class RunStats:
    """Statistics of one interpreter run."""

    ops: list[OpStats]
    cores: int
    max_abs_err: float | None = None
    max_rel_err: float | None = None

    def lx_peak_per_core(self) -> list[int]:
        """LX high-water mark of each core."""
        return [max((op.lx_end.get(core, 0) for op in self.ops), default=0) for core in range(self.cores)]

    def total(self, counter: str) -> int:
        """The sum of ``counter`` over all ops."""
        return sum(getattr(op, counter) for op in self.ops)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready totals and per-op entries."""
        peaks = self.lx_peak_per_core()
        out: dict[str, Any] = {counter: self.total(counter) for counter in _COUNTERS}
        out.update(lx_peak_bytes=max(peaks, default=0), lx_peak_bytes_per_core=peaks,
                   sdsc_executions=self.total("executions"),
                   cores_used=max((op.cores_used for op in self.ops), default=0),
                   ops=[{"sdsc_file": op.filename, "op": op.op, "executions": op.executions,
                         "cores_used": op.cores_used, **{c: getattr(op, c) for c in _COUNTERS},
                         "lx_peak_bytes": max(op.lx_end.values(), default=0)} for op in self.ops])
        if self.max_abs_err is not None:
            out.update(max_abs_err=self.max_abs_err, max_rel_err=self.max_rel_err)
        return out

    def table(self) -> str:
        """A fixed-width text table: one row per op and a total row."""
        head = ("sdsc file", "op", "runs", "cores", "HBM read", "HBM written", "LX read", "LX written", "LX peak")
        rows = [(op.filename, op.op, op.executions, op.cores_used, *(getattr(op, c) for c in _COUNTERS),
                 max(op.lx_end.values(), default=0)) for op in self.ops]
        d = self.as_dict()
        rows.append(("total", "", d["sdsc_executions"], d["cores_used"], *(d[c] for c in _COUNTERS),
                     d["lx_peak_bytes"]))
        cells = [head] + [tuple(f"{v:,}" if isinstance(v, int) else str(v) for v in row) for row in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 for r in cells]
        return "\n".join(lines)
