# Statistics of an interpreter run: bytes read and written per memory, LX
# high-water marks per core, cores used and executions, per SDSC file (op) and
# in total; as a text table (the columns of spyre_mlir.figures, which
# spyre-compile --report prints too) and as a JSON-ready dict.  On request, also one
# record per execution (its LX blocks per core and its HBM bytes), the input of
# the timeline picture.  Reads the executor's accesses; writes nothing.
"""Run statistics.

Counting rules: every core reads its whole slice of every input (a tensor
read by several cores is counted once per core); an output slice is counted
once however many cores combined partial results into it, except in LX,
where each core holds its own copy.  Sparse sticks count whole sticks.
``lx_peak_bytes`` is the LX high-water mark: the highest LX byte offset any
execution wrote on a core (per core in ``lx_peak_bytes_per_core``).
``cores_used`` is the number of cores an execution of the file runs on; its
total is the most any file uses (:mod:`spyre_mlir.figures`).

Execution records (:class:`ExecutionLog`, kept only when asked for): an LX
value is the output one execution wrote, named after the SDSC file and tensor
that wrote it (``Tensor2 of add (sdsc_0.json)``); a read belongs to the value
last written over its first byte on that core (the interpreter has already
checked that the read finds exactly one value).  HBM bytes per execution are
the growth of the op's counters, so they sum to the totals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from spyre_mlir.figures import figures_table, total_figures

if TYPE_CHECKING:
    from spyre_mlir.interpreter.addressing import Access
    from spyre_mlir.interpreter.control import Execution
    from spyre_mlir.interpreter.sdsc import SdscSpec

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
    log: ExecutionLog | None = field(default=None, repr=False, compare=False)
    """Where each execution of the op is recorded; None records nothing."""

    def note_lx_end(self, core: int, end: int) -> None:
        """Record an LX write on ``core`` ending at ``end``."""
        self.lx_end[core] = max(self.lx_end.get(core, 0), end)

    def figures(self) -> dict[str, int]:
        """The op's figures by statistic name (:data:`spyre_mlir.figures.FIGURES`)."""
        return {"executions": self.executions, "cores_used": self.cores_used,
                **{c: getattr(self, c) for c in _COUNTERS}, "lx_peak_bytes": max(self.lx_end.values(), default=0)}


@dataclass
class RunStats:
    """Statistics of one interpreter run."""

    ops: list[OpStats]
    cores: int
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    events: list[ExecutionEvent] = field(default_factory=list)
    """Every execution in order, when the run recorded them (else empty)."""
    predicted: Mapping[str, Mapping[str, float]] | None = None
    """The compiler's prediction per SDSC file (``cost.json``), by statistic name, when it made one."""

    def lx_peak_per_core(self) -> list[int]:
        """LX high-water mark of each core."""
        return [max((op.lx_end.get(core, 0) for op in self.ops), default=0) for core in range(self.cores)]

    def total(self, counter: str) -> int:
        """The sum of ``counter`` over all ops."""
        return sum(getattr(op, counter) for op in self.ops)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready totals and per-op entries."""
        peaks = self.lx_peak_per_core()
        totals = total_figures([op.figures() for op in self.ops])
        out: dict[str, Any] = {counter: totals[counter] for counter in _COUNTERS}
        out.update(lx_peak_bytes=max(peaks, default=0), lx_peak_bytes_per_core=peaks,
                   sdsc_executions=totals["executions"], cores_used=totals["cores_used"],
                   ops=[{"sdsc_file": op.filename, "op": op.op, **op.figures()} for op in self.ops])
        if self.max_abs_err is not None:
            out.update(max_abs_err=self.max_abs_err, max_rel_err=self.max_rel_err)
        if self.events:
            out["executions"] = [event.as_dict() for event in self.events]
        if self.predicted is not None:
            out["predicted"] = {name: dict(figures) for name, figures in self.predicted.items()}
        return out

    def table(self) -> str:
        """A fixed-width text table (:func:`spyre_mlir.figures.figures_table`): one row per op and a
        total row; with the compiler's prediction (``cost.json``), its time and HBM bytes beside."""
        extra: list[tuple[str, list[str]]] = []
        if self.predicted is not None:
            predicted = [self.predicted[op.filename] for op in self.ops]
            us = [p["predicted_us"] for p in predicted]
            extra.append(("predicted us", [f"{v:.1f}" for v in (*us, sum(us))]))
            for name, title in (("hbm_bytes_read", "predicted HBM read"),
                                ("hbm_bytes_written", "predicted HBM written")):
                values = [int(p[name]) for p in predicted]
                extra.append((title, [f"{v:,}" for v in (*values, sum(values))]))
        return figures_table([(op.filename, op.op, op.figures()) for op in self.ops], extra)


@dataclass(frozen=True)
class LxBlock:
    """LX bytes [offset, offset + size) of one core that one execution reads or writes."""

    core: int
    offset: int
    size: int
    value: str
    """The value the bytes hold: ``<tensor> of <op> (<sdsc file>)`` of the output that wrote them."""
    written_at: int
    """Index of the execution that wrote the value (the block's own execution for a write)."""


@dataclass(frozen=True)
class ExecutionEvent:
    """One run of an ``sdsc_execute``: its HBM bytes and the LX blocks it touched on each core."""

    index: int
    filename: str
    op: str
    iteration: tuple[int, ...]
    """Iteration number of each enclosing ``scf.for``, outermost first; empty outside loops
    or when a loop bound is not an ``arith.constant``."""
    hbm_bytes_read: int
    hbm_bytes_written: int
    lx: tuple[LxBlock, ...]
    """LX blocks read (``written_at`` < ``index``) and written, on every core."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form; each LX block as ``[core, offset, size, value, written_at]``."""
        return {"index": self.index, "sdsc_file": self.filename, "op": self.op,
                "iteration": list(self.iteration), "hbm_bytes_read": self.hbm_bytes_read,
                "hbm_bytes_written": self.hbm_bytes_written,
                "lx": [[b.core, b.offset, b.size, b.value, b.written_at] for b in self.lx]}


class ExecutionLog:
    """Builds one :class:`ExecutionEvent` per execution, in execution order."""

    def __init__(self) -> None:
        self.events: list[ExecutionEvent] = []
        self._held: dict[int, list[LxBlock]] = {}
        """Per core, the blocks of the values last written (no two overlap)."""
        self._hbm_seen: dict[str, tuple[int, int]] = {}
        """Per SDSC file, its HBM read and written counters at its previous execution."""
        self._runs: dict[Operation, int] = {}
        self._trips: dict[Operation, tuple[int, ...]] = {}

    def record(self, spec: SdscSpec, stats: OpStats, execution: Execution, index: int,
               accesses: Mapping[str, Mapping[int, Access]]) -> None:
        """Record execution ``index`` of ``spec`` once it has run; ``accesses`` are its
        per-core accesses by tensor name and ``stats`` the op's counters after it."""
        reads = [self._read_block(a) for name in spec.inputs for a in accesses[name].values()
                 if a.geometry.tensor.component == "lx"]
        writes = [self._write_block(a, f"{name} of {spec.op_name} ({spec.filename})", index)
                  for name in spec.outputs for a in accesses[name].values() if a.geometry.tensor.component == "lx"]
        read_before, written_before = self._hbm_seen.get(spec.filename, (0, 0))
        self._hbm_seen[spec.filename] = (stats.hbm_bytes_read, stats.hbm_bytes_written)
        self.events.append(ExecutionEvent(index, spec.filename, spec.op_name, self._iteration(execution.op),
                                          stats.hbm_bytes_read - read_before,
                                          stats.hbm_bytes_written - written_before, (*reads, *writes)))

    def _read_block(self, access: Access) -> LxBlock:
        held = self._held.get(access.core, [])
        owner = next(b for b in held if b.offset <= access.start < b.offset + b.size)
        return LxBlock(access.core, access.start, access.geometry.span, owner.value, owner.written_at)

    def _write_block(self, access: Access, value: str, index: int) -> LxBlock:
        block = LxBlock(access.core, access.start, access.geometry.span, value, index)
        end = block.offset + block.size
        held = self._held.setdefault(access.core, [])
        held[:] = [b for b in held if b.offset + b.size <= block.offset or end <= b.offset]
        held.append(block)
        return block

    def _iteration(self, op: Operation) -> tuple[int, ...]:
        """The loop iteration numbers of this run of ``op``: its run count unravelled over the
        trip counts of its loops (the bundle function runs once)."""
        run = self._runs.get(op, 0)
        self._runs[op] = run + 1
        if op not in self._trips:
            self._trips[op] = _loop_trips(op)
        numbers = []
        for trips in reversed(self._trips[op]):
            run, number = divmod(run, trips)
            numbers.append(number)
        return tuple(reversed(numbers))


def _loop_trips(op: Operation) -> tuple[int, ...]:
    """Trip counts of the ``scf.for`` loops around ``op``, outermost first; empty if a bound
    is not an ``arith.constant``."""
    trips = []
    loop = op.parent_op()
    while loop is not None:
        if isinstance(loop, scf.ForOp):
            lb, ub, step = (_constant(v) for v in (loop.lb, loop.ub, loop.step))
            if lb is None or ub is None or step is None or step <= 0:
                return ()
            trips.append(max(0, -(-(ub - lb) // step)))
        loop = loop.parent_op()
    return tuple(reversed(trips))


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None
