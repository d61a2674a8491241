# The cost model (DESIGN §16): the predicted device time of every compute op of
# a planned function and of the whole bundle.  Reads the planned IR (after work
# division and memory planning): each compute op through the ComputeOp
# interface, where each of its tensors lives (analysis.storage), its per-core
# work (analysis.work) and the target's cores; writes nothing.  Pure Python.
"""Analytical device time of a planned program.

Traffic (:class:`Traffic`) is counted as the device moves it: every core reads
its whole slice of every input (a tensor several cores read is read by each of
them), an output slice is written once however many cores combined partial
results into it, a slice is whole sticks.  A tensor in LX costs LX traffic, one
in HBM costs HBM traffic.  Ops inside ``scf.for`` nests run once per iteration.

Pricing (:func:`kernel_ns`, one SDSC execution is one kernel), with the facts
of :class:`CostFacts`: memory takes ``(R + W) / BW + turnaround * min(R, W)``,
peak bandwidth for one-directional traffic and a balanced read+write copy at
about 105 GB/s, plus a matmul's replicated reads (cores re-reading a slice
another core reads) at the per-core replicated rate; another op's slice that
several cores read (a broadcast operand) takes the bus once, as torch-spyre
measured a broadcast operand to cost one load whatever the split.  A matmul
operand each core reads its own slice of and each of whose elements feeds at
most a few MACs (a weight at one token: a decode step streams its weights) is
streamed: each core pulls its slice at a per-core share of the peak, so that
``c`` cores read it at ``min(peak, c * rate)``, and a decode projection on few
cores is as slow as its reads, not as the bus.  A kernel takes the longer of
compute and memory, since the engine streams operands while the array works.

Some kernels run at measured rates of their kind (:func:`kernel_rates`): a
matmul computes at 1,140 MACs per ns per core, derated when a core has fewer
than 64 rows of the left-hand operand, and at a much lower measured rate when
its tensors are batches of matrices in the default layout (the batch just
outside the stick), each such tensor adding its own share of the time lost;
a row reduction reads at a rate that falls with its rows
and with fewer cores (one core drives about 11 % of the bus), its small write
at peak; a reduction across sticks and a restickify that swaps the stick dim
move at their flat measured rates.  In a coarse-tiling loop, a kernel other
than a matmul whose per-core working set exceeds the practical LX (about
512 KB) spills: its memory time grows by ``(working set / 512 KB) ** 0.06``.

The roofline bound (:func:`lower_bound_ns`) reads every input and writes every
output once at peak bandwidth, or computes every MAC at the full matmul rate of
the target's cores: the best any plan can do under these facts.

Error against every torch-spyre figure this model can reproduce (32 cores, fp16;
``test_cost.py`` reproduces each program):

=========================================  ====================  ====================  =======================
program                                    torch-spyre           this model            error; why
=========================================  ====================  ====================  =======================
softmax ``[4096, 2048]``, untiled          320 us predicted      349 us                +9 %: x is read twice
                                                                                       (by max and by sub)
softmax ``[4096, 2048]``, 8 row tiles      320 us predicted      336 us                +5 %: the same
matmul ``[4096, 2048] @ [2048, 1024]``,    423 us predicted;     439 us; 58.7 MB       +4 %
8 row tiles, K split 32 ways               58.7 MB
``[8r, 256] @ [256, 512]`` split M 8 x     29.7, 29.9, 29.8,     27.0, 27.3, 27.9,     -9, -9, -7, -1, +9 %
N 4: each core re-reads a quarter of the   29.4, 28.8 us         29.1, 31.4 us
right-hand input (r = 1, 2, 4, 8, 16)      measured
``x * 2 + x * 3``, x of 8 MiB              113 us measured       168 us                +48 %: three kernels,
                                                                                       x read twice (one
                                                                                       fused kernel there)
batched matmul, B >= 4, the batch just     161.5, 236, 287,      160, 233.7, 284.3,    -1, -1, -1, -1 %
outside the stick of every tensor; of the  650 MACs/ns per core  646.5 MACs/ns per
left-hand operand and the result; of the   measured              core
right-hand one and the result; of the
result only
=========================================  ====================  ====================  =======================

torch-spyre documents its own model's error by kind of kernel (5-9 % for
memory-bound kernels, 21-40 % and biased low for softmax and matmuls); the
figures of its other documented cases (a broadcast probe, relayouts) name no
shape to reproduce.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.ir import SSAValue

from spyre_mlir.analysis.kernel_args import argument_role_and_name, output_results
from spyre_mlir.analysis.loops import iterations
from spyre_mlir.analysis.storage import Loc, StorageTrace, Traced, TracedLoop
from spyre_mlir.analysis.work import DeviceDim, WorkProblem, core_division, replica_count, work_problem
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, Memory, target_config, tensor_layout
from spyre_mlir.figures import figures_table
from spyre_mlir.manifest import STAGED_ROLES
from spyre_mlir.opfuncs import OpKind


EXPERTS_ATTR = "spyre.experts"
"""Function attribute the importer sets: the form each mixture-of-experts layer got and why
(:mod:`spyre_mlir.importer.experts`), which the report lists."""

PREDICTED_ATTR = "spyre.predicted"
"""Attribute of a lowered ``sdsc_execute`` (its :meth:`OpCost.figures`) and of the bundle function
(``lower_bound_us``): the prediction the writer puts in ``cost.json``."""


@dataclass(frozen=True)
class CostFacts:
    """Facts about Spyre the model prices with.  Source: torch-spyre's calibrated analytical
    cost model (``docs/source/compiler/cost_model.md`` and the docstring of
    ``torch_spyre/_inductor/cost_model.py``, torch-spyre/torch-spyre)."""

    hbm_bytes_per_ns: float = 150.0
    """Peak HBM bandwidth of one-directional traffic (read-only or write-only), ~150 GB/s; one bus
    shared by all cores."""

    balanced_bytes_per_ns: float = 105.0
    """Effective HBM bandwidth of a balanced read+write copy (~105 GB/s): the bus turns around."""

    macs_per_ns_per_core: float = 1140.0
    """Sustained rate of one core on a matmul whose rows fill the array (a 2-D matmul, fitted where
    compute was 80-90 % of the kernel; the 1,536 of the data sheet is about a third optimistic)."""

    matmul_full_rows_per_core: int = 64
    """Rows of the left-hand operand a core needs for the full rate: the array takes them in passes
    of 8 rows and fills at 8 passes."""

    matmul_underfill_exponent: float = 0.35
    """With fewer rows per core a matmul runs at ``(rows / full rows) ** exponent`` of the rate:
    0.23 at one row (a decode step), 0.62 at 16 (torch-spyre's ``pt_eff``, from a sweep measuring
    0.72, 0.63 and 0.50 at 8, 4 and 2 rows per core)."""

    batched_default_macs_per_ns_per_core: tuple[tuple[int, float], ...] = (
        (1, 407.0), (2, 241.0), (4, 168.0), (8, 160.0))
    """Rate of one core, by the cores the kernel runs on (:func:`by_cores`), on a batched matmul
    with its operands and its result in the default layout of a batch of matrices: the batch at
    the device position just outside the stick (dim order ``[0, 1, 2]``), as in ``[B, M, K] @
    [B, K, N]``.  Measured at B >= 4: about 214 us per GMAC on 32 cores, 160 after the overlap of
    reads; the figures at 1, 2 and 4 cores are the rates their measurements imply."""

    batched_default_full_batch: int = 4
    """The batch from which :attr:`batched_default_macs_per_ns_per_core` holds."""

    batched_default_small_batch_macs_per_ns_per_core: float = 290.0
    """Rate of one core on such a batched matmul with a smaller batch (measured at B = 2: about
    108 us per GMAC on 32 cores)."""

    batched_rhs_outer_macs_per_ns_per_core: float = 236.0
    """Rate of one core on a batched matmul whose right-hand operand has its batch outermost (dim
    order ``[1, 0, 2]``), the left-hand operand and the result the default (32 cores, B >= 4)."""

    batched_lhs_outer_macs_per_ns_per_core: float = 287.0
    """The same with the left-hand operand's batch outermost, the right-hand one's the default."""

    batched_operands_outer_macs_per_ns_per_core: float = 650.0
    """The same with both operands' batch outermost, the result's the default.  With the result's
    too, torch-spyre measured up to 8.3 times the default rate, which the 2-D rate
    (:attr:`macs_per_ns_per_core`) caps.  Each tensor in the default layout adds its own time per
    MAC, within about 2 % (:func:`default_layout_shares`)."""

    replicated_read_bytes_per_ns_per_core: float = 2.3
    """Per-core rate of matmul reads every core repeats (an M split re-reading the right-hand input)."""

    streamed_read_bytes_per_ns_per_core: float = 150.0 / 32
    """Per-core rate of a streamed matmul operand (each core reads its own slice, each element feeds
    at most :attr:`stream_pass_rows` MACs: a decode projection's weight), so that ``c`` cores read it
    at ``min(hbm peak, c * rate)``: the peak shared equally by the 32 cores, an effective rate
    (torch-spyre's partitioned-read rate); decode projections on 22 and 25 cores land within
    about 3 % of it, a 16-core one ran about 15 % faster, fewer cores are unmeasured."""

    stream_pass_rows: int = 8
    """A matmul operand streams when each of its elements feeds at most this many MACs: the rows
    (tokens) of a decode step, batch up to 8.  torch-spyre measured one row (``MACs <= elements``);
    at 8 rows a core streaming fp16 at its share computes about 19 of its 1,140 MAC/ns, so the
    reads are still the work."""

    row_store_bytes_per_ns_per_core: float = 30.0
    """Per-core rate of rows written through an index (a KV-cache row store), ~30 GB/s."""

    lx_practical_bytes_per_core: int = 512 * 1024
    """The working set one core keeps on chip in practice (~512 KB); above it a coarse-tiled
    kernel's intermediates spill and its memory traffic runs slower."""

    spill_exponent: float = 0.06
    """A spilling kernel's bandwidth is derated by ``(lx_practical / working set) ** spill_exponent``
    (refitted jointly with the underfill of coarse tiles: the measured derate goes from 1.13 at a
    256 KB working set to 0.98 at 3 MB; the earlier 0.15 over-derated large tiles by up to 24 %)."""

    reduction_bus_share_by_cores: tuple[tuple[int, float], ...] = (
        (1, 0.11), (2, 0.22), (4, 0.43), (8, 0.54), (16, 0.54), (32, 1.0))
    """Share of the 32-core bandwidth a row reduction (a max, sum or mean along the stick) reads
    at, by the cores it runs on (:func:`by_cores`): one core drives about 11 % of the bus, not a
    32nd (the 8- and 16-core points are single measurements).  Measured on reductions alone: an
    elementwise kernel was measured to get the same bandwidth on any number of cores from 2."""

    reduction_read_floor_bytes_per_ns: float = 114.0
    """A row reduction on 32 cores reads at ``min(peak, floor + amplitude * exp(-rows / scale))``
    (turnaround included: it writes little): 149 GB/s over 2,048 rows, 134 over 4,096, 115 over
    16,384."""

    reduction_read_amplitude_bytes_per_ns: float = 61.0
    """See :attr:`reduction_read_floor_bytes_per_ns`."""

    reduction_read_scale_rows: float = 3700.0
    """See :attr:`reduction_read_floor_bytes_per_ns`."""

    reduce_outer_bytes_per_ns: float = 113.0
    """Bandwidth of a reduction across sticks (a column sum: the reduced dim is not along the
    stick), reads and writes together."""

    restickify_bytes_per_ns: float = 116.0
    """Bandwidth of a restickify that swaps the stick dim (a transpose in HBM), reads and writes
    together."""

    @property
    def turnaround_ns_per_byte(self) -> float:
        """The read/write turnaround penalty per byte of overlap, so that a balanced copy of
        ``X`` read and ``X`` written takes ``2X / balanced_bytes_per_ns``."""
        return 2 / self.balanced_bytes_per_ns - 2 / self.hbm_bytes_per_ns


SPYRE_FACTS = CostFacts()


def by_cores(table: Sequence[tuple[int, float]], cores: int) -> float:
    """The value of a by-cores fact ``table`` (anchors in increasing cores) at ``cores``: linear in
    ``log2(cores)`` between anchors, the first anchor's below them and the last's above them."""
    if cores <= table[0][0]:
        return table[0][1]
    for (lo, low), (hi, high) in itertools.pairwise(table):
        if cores <= hi:
            return low + (high - low) * math.log2(cores / lo) / math.log2(hi / lo)
    return table[-1][1]


@dataclass(frozen=True)
class KernelRates:
    """The rates one kernel runs at, by what kind of kernel it is (:func:`kernel_rates`)."""

    macs_per_ns_per_core: float
    """Its matmul rate per core."""

    bus_bytes_per_ns: float | None = None
    """A measured bandwidth of its HBM reads and writes together (a column reduction's, a
    restickify's); None for the bus at peak with the turnaround penalty."""

    read_bytes_per_ns: float | None = None
    """A measured bandwidth of its HBM reads (a row reduction's, the turnaround of its small write
    included), its writes at peak; None for the bus."""


def kernel_rates(problem: WorkProblem, splits: Sequence[int], facts: CostFacts = SPYRE_FACTS) -> KernelRates:
    """The rates of the op ``problem`` describes divided by ``splits``: a matmul computes at the rate
    of its layout, derated when a core has few rows; a row reduction reads at the rate of its rows
    and cores; a column reduction and a restickify that swaps the stick dim move at their
    measured rates."""
    return _kernel_rates(problem, tuple(splits), facts)


@functools.lru_cache(maxsize=1 << 14)
def _kernel_rates(problem: WorkProblem, splits: tuple[int, ...], facts: CostFacts) -> KernelRates:
    full = facts.macs_per_ns_per_core
    if problem.matmul:
        return KernelRates(_matmul_rate(problem, splits, facts))
    source = problem.tensors[0].stick_coord
    if problem.op_func == "ReStickifyOpHBM" and source != problem.tensors[-1].stick_coord:
        return KernelRates(full, bus_bytes_per_ns=facts.restickify_bytes_per_ns)
    if not problem.reduction_dims or source is None:
        return KernelRates(full)
    if not set(problem.reduction_dims) & source.used_dims():
        return KernelRates(full, bus_bytes_per_ns=facts.reduce_outer_bytes_per_ns)
    rows = math.prod(problem.sizes[d] for d in problem.output_dims)
    read = min(facts.hbm_bytes_per_ns, facts.reduction_read_floor_bytes_per_ns
               + facts.reduction_read_amplitude_bytes_per_ns * math.exp(-rows / facts.reduction_read_scale_rows))
    return KernelRates(full, read_bytes_per_ns=read * by_cores(facts.reduction_bus_share_by_cores, math.prod(splits)))


@functools.lru_cache(maxsize=4)
def default_layout_shares(facts: CostFacts) -> tuple[float, float, float]:
    """The share of the left-hand operand, the right-hand operand and the result in the time per
    MAC a batched matmul in the default layout loses against the 2-D rate: each tensor with its
    batch just outside the stick adds its own (torch-spyre measured the penalties to add in time
    within about 2 %), from the rates of :class:`CostFacts` with one tensor after another in the
    default layout."""
    full, operands = 1 / facts.macs_per_ns_per_core, 1 / facts.batched_operands_outer_macs_per_ns_per_core
    lost = (1 / facts.batched_rhs_outer_macs_per_ns_per_core - operands,
            1 / facts.batched_lhs_outer_macs_per_ns_per_core - operands, operands - full)
    return tuple(x / sum(lost) for x in lost)


def batch_inside(problem: WorkProblem) -> tuple[int, int, int]:
    """The batch each of a matmul's left-hand operand, right-hand operand and result holds at the
    device position just outside the stick (1 for none): the default layout of a batch of matrices,
    which the array runs slowly (:func:`default_layout_shares`).  A position that steps through
    rows of each matrix first and through the batch only after them (``128 * h + d``: the heads of
    a ``[S, H * D]`` projection read as ``[H, D, S]``) holds no batch there."""
    lhs, rhs, result = problem.tensors[0], problem.tensors[1], problem.tensors[-1]
    batch = {d for d in problem.output_dims
             if problem.sizes[d] > 1 and d in lhs.used_dims and d in rhs.used_dims and d in result.used_dims}
    return tuple(math.prod(problem.sizes[d] for d in batch & _fastest_dims(t.dims[-1])) if t.dims else 1
                 for t in (lhs, rhs, result))


def _fastest_dims(dim: DeviceDim) -> set[int]:
    """The iteration dims that step a device dim's coordinate by its smallest stride (all it uses
    when it is no sum of multiples of them)."""
    linear = dim.linear
    return set(dim.coord.used_dims()) if linear is None else linear.fastest_keys()


def _matmul_rate(problem: WorkProblem, splits: Sequence[int], facts: CostFacts) -> float:
    """The MACs per ns one core of the matmul ``problem`` divided by ``splits`` computes: the rate
    of its layout, the 2-D rate slowed by the share of each tensor holding a batch just outside its
    stick (:func:`batch_inside`) in what the default layout of a batch of that size loses on these
    cores (:attr:`CostFacts.batched_default_macs_per_ns_per_core`), derated by its rows per core
    (:attr:`CostFacts.matmul_underfill_exponent`)."""
    inside = batch_inside(problem)
    rate = facts.macs_per_ns_per_core
    if max(inside) > 1:
        default = (by_cores(facts.batched_default_macs_per_ns_per_core, math.prod(splits))
                   if max(inside) >= facts.batched_default_full_batch
                   else facts.batched_default_small_batch_macs_per_ns_per_core)
        slow = sum(share for share, batch in zip(default_layout_shares(facts), inside) if batch > 1)
        rate = 1 / (1 / rate + slow * (1 / default - 1 / rate))
    lhs, rhs = problem.tensors[0], problem.tensors[1]
    per_core = problem.space.per_core(dict(enumerate(splits)))
    rows = math.prod(per_core[d] for d in problem.output_dims if d in lhs.used_dims and d not in rhs.used_dims)
    return rate * min(1.0, (rows / facts.matmul_full_rows_per_core) ** facts.matmul_underfill_exponent)


@dataclass(frozen=True)
class Traffic:
    """Bytes an execution (or a sum of them) moves, and the MACs it computes."""

    hbm_read: int = 0
    """All HBM bytes read, replicated reads included."""
    hbm_written: int = 0
    lx_read: int = 0
    lx_written: int = 0
    macs: int = 0
    replicated_read: int = 0
    """Of ``hbm_read``, a matmul's repeated reads: every core but the first that reads a slice."""
    shared_read: int = 0
    """Of ``hbm_read``, any other op's repeated reads (a broadcast operand's slice every core
    reads): the device delivers such a slice once, whatever the split."""
    row_stored: int = 0
    """Of ``hbm_written``, rows written through an index (a row store)."""
    streamed_read: int = 0
    """Of ``hbm_read``, streamed matmul operands: slices each one core reads, of an operand whose
    elements each feed at most :attr:`CostFacts.stream_pass_rows` MACs (a weight at one token)."""

    def __add__(self, other: Traffic) -> Traffic:
        return Traffic(*(a + b for a, b in zip(self._fields(), other._fields())))

    def times(self, runs: int) -> Traffic:
        """The traffic of ``runs`` executions."""
        return Traffic(*(a * runs for a in self._fields()))

    def _fields(self) -> tuple[int, ...]:
        return (self.hbm_read, self.hbm_written, self.lx_read, self.lx_written, self.macs, self.replicated_read,
                self.shared_read, self.row_stored, self.streamed_read)


def memory_ns(traffic: Traffic, cores: int, facts: CostFacts = SPYRE_FACTS, rates: KernelRates | None = None) -> float:
    """HBM time: the bus at peak bandwidth plus the turnaround penalty on the read/write overlap
    (or at the measured bandwidths of the kernel's kind, ``rates``);
    a matmul's replicated reads at the per-core replicated rate of the ``cores`` reading; other
    shared reads once (they are in ``hbm_read`` once per core); rows stored through an index at
    the per-core row-store rate; streamed reads no faster than the per-core streamed rate of the
    ``cores`` reading (the excess over the bus, as torch-spyre adds it)."""
    read = traffic.hbm_read - traffic.replicated_read - traffic.shared_read
    written = traffic.hbm_written - traffic.row_stored
    if rates is not None and rates.bus_bytes_per_ns is not None:
        bus = (read + written) / rates.bus_bytes_per_ns
    elif rates is not None and rates.read_bytes_per_ns is not None:
        bus = read / rates.read_bytes_per_ns + written / facts.hbm_bytes_per_ns
    else:
        bus = (read + written) / facts.hbm_bytes_per_ns + facts.turnaround_ns_per_byte * min(read, written)
    streamed = max(0.0, traffic.streamed_read / (cores * facts.streamed_read_bytes_per_ns_per_core)
                   - traffic.streamed_read / facts.hbm_bytes_per_ns)
    return bus + streamed + traffic.replicated_read / (cores * facts.replicated_read_bytes_per_ns_per_core) \
        + traffic.row_stored / (cores * facts.row_store_bytes_per_ns_per_core)


def compute_ns(traffic: Traffic, cores: int, facts: CostFacts = SPYRE_FACTS, rates: KernelRates | None = None) -> float:
    """Matmul time on ``cores`` cores at ``rates`` (the full rate by default; 0 for an op without MACs)."""
    rate = facts.macs_per_ns_per_core if rates is None else rates.macs_per_ns_per_core
    return traffic.macs / (cores * rate)


def kernel_ns(traffic: Traffic, cores: int, facts: CostFacts = SPYRE_FACTS, spill: float = 1.0,
              rates: KernelRates | None = None) -> float:
    """One kernel's time at ``rates`` (:func:`kernel_rates`): compute and memory overlap, so the
    longer one; memory ``spill`` times slower (:func:`spill_factor`)."""
    return max(compute_ns(traffic, cores, facts, rates), spill * memory_ns(traffic, cores, facts, rates))


def spill_factor(problem: WorkProblem, splits: Sequence[int], tiled: bool, facts: CostFacts = SPYRE_FACTS) -> float:
    """How much slower the memory traffic of a coarse-tiled (``tiled``) kernel other than a matmul
    runs when its per-core working set (every tensor's slice) exceeds the practical LX: 1 else."""
    if not tiled or problem.matmul:
        return 1.0
    working_set = sum(slice_bytes(problem, splits))
    return max(1.0, (working_set / facts.lx_practical_bytes_per_core) ** facts.spill_exponent)


def slice_bytes(problem: WorkProblem, splits: Sequence[int]) -> tuple[int, ...]:
    """The bytes of each tensor (operands, then the result) one core moves under ``splits``: whole
    sticks over the device positions it touches (one table row per index entry it iterates, for a
    table read through an index)."""
    return _slice_bytes(problem, tuple(splits))


@functools.lru_cache(maxsize=1 << 14)
def _slice_bytes(problem: WorkProblem, splits: tuple[int, ...]) -> tuple[int, ...]:
    per_core = problem.space.per_core(dict(enumerate(splits)))
    rows = math.prod(per_core[d] for d in problem.entry_dims)
    return tuple((rows if i in problem.shared else 1) * math.prod(dim.touched(per_core) for dim in tensor.dims)
                 * tensor.stick_bytes for i, tensor in enumerate(problem.tensors))


@dataclass(frozen=True)
class OpCost:
    """The prediction for one compute op over all its executions."""

    op: ComputeOp
    runs: int
    """Executions: the trip counts of the loops around it."""
    cores: int
    """The cores one execution runs on: the product of its ``core_splits`` and ``core_replicas``."""
    traffic: Traffic
    """Over all executions."""
    ns: float
    lx_peak: int
    """The highest LX byte offset it writes on a core (0 when its result is in HBM)."""

    def figures(self) -> dict[str, float | int]:
        """The prediction by the names of the interpreter's statistics (``predicted_us`` besides)."""
        return {"predicted_us": round(self.ns / 1000, 3), "executions": self.runs, "cores_used": self.cores,
                "hbm_bytes_read": self.traffic.hbm_read, "hbm_bytes_written": self.traffic.hbm_written,
                "lx_bytes_read": self.traffic.lx_read, "lx_bytes_written": self.traffic.lx_written,
                "lx_peak_bytes": self.lx_peak}


def streams(problem: WorkProblem, operand: int, facts: CostFacts = SPYRE_FACTS) -> bool:
    """Whether operand ``operand`` of the matmul ``problem`` streams: each of its elements feeds at
    most :attr:`CostFacts.stream_pass_rows` MACs (the iteration dims it does not use, the rows of
    a decode step, span that few), so that reading it, not computing with it, is the work."""
    tensor = problem.tensors[operand]
    return problem.matmul and math.prod(n for d, n in enumerate(problem.sizes)
                                        if d not in tensor.used_dims) <= facts.stream_pass_rows


def division_traffic(problem: WorkProblem, splits: Sequence[int], memories: Sequence[Memory],
                     facts: CostFacts = SPYRE_FACTS) -> Traffic:
    """One execution's traffic of the op ``problem`` describes, divided by ``splits``, with its
    tensors (operands, then the result) in ``memories``.

    Each core moves its slice of each tensor (:func:`slice_bytes`); an operand is
    read by every core, an LX result written by every core, an HBM result once
    per distinct slice (the partial results of a split reduction combine into one).
    ``splits`` is a division (:func:`~spyre_mlir.analysis.work.core_division`): the
    cores of a replicated op read the same slices, which is a matmul's replicated read
    or another op's shared read, and compute each slice once per replica.
    A matmul operand in HBM of which each core reads a slice no other core reads
    is a streamed read when it :func:`streams`.
    """
    cores = math.prod(splits)
    moved = {Memory.HBM: [0, 0], Memory.LX: [0, 0]}
    replicated = shared = streamed = 0
    for i, (tensor, memory, nbytes) in enumerate(zip(problem.tensors, memories, slice_bytes(problem, splits),
                                                     strict=True)):
        if i in problem.tied:  # a row store's destination: the result's storage, counted there
            continue
        # Cores differing only in a dim the tensor does not use share a slice; a table's rows are
        # those of each core's own index entries.
        distinct = cores if i in problem.shared else math.prod(s for d, s in enumerate(splits)
                                                                if d in tensor.used_dims)
        if i < len(problem.tensors) - 1:
            moved[memory][0] += cores * nbytes
            if memory is Memory.HBM and problem.matmul:
                replicated += (cores - distinct) * nbytes
                if distinct == cores and streams(problem, i, facts):
                    streamed += cores * nbytes
            elif memory is Memory.HBM:
                shared += (cores - distinct) * nbytes
        else:
            moved[memory][1] += (cores if memory is Memory.LX else distinct) * nbytes
    # A replicated op computes each slice once per replica.
    macs = math.prod(problem.sizes) * replica_count(splits, len(problem.sizes)) if problem.matmul else 0
    (hbm_read, hbm_written), (lx_read, lx_written) = moved[Memory.HBM], moved[Memory.LX]
    row_stored = hbm_written if problem.tied else 0
    return Traffic(hbm_read, hbm_written, lx_read, lx_written, macs, replicated, shared, row_stored, streamed)


def division_ns(problem: WorkProblem, splits: Sequence[int], memories: Sequence[Memory], tiled: bool = False,
                facts: CostFacts = SPYRE_FACTS) -> float:
    """Predicted ns of one execution of the op ``problem`` describes, divided by ``splits``, with its
    tensors in ``memories``; ``tiled`` when it runs in a coarse-tiling loop of more than one
    iteration.  The one price work division and :func:`price` both use."""
    traffic = division_traffic(problem, splits, memories, facts)
    return kernel_ns(traffic, math.prod(splits), facts, spill_factor(problem, splits, tiled, facts),
                     kernel_rates(problem, splits, facts))


def op_traffic(op: ComputeOp, problem: WorkProblem, locs: Sequence[Loc],
               facts: CostFacts = SPYRE_FACTS) -> tuple[Traffic, int, int]:
    """One execution's traffic of ``op`` (its :func:`work_problem` is ``problem``) whose tensors
    (operands, then result) live at ``locs``, the cores it runs on and the highest LX byte offset it
    writes on a core."""
    splits = core_division(op)
    traffic = division_traffic(problem, splits, [loc.storage.memory for loc in locs], facts)
    result = locs[-1].storage
    lx_peak = 0
    if result.memory is Memory.LX:
        lx_peak = result.placement.value.data + traffic.lx_written // math.prod(splits)
    return traffic, math.prod(splits), lx_peak


def _executions(items: Sequence[Traced | TracedLoop], runs: int = 1,
                tiled: bool = False) -> Iterator[tuple[Traced, int, bool]]:
    """Every traced op, its executions and whether it runs in a coarse-tiling loop (of more than
    one iteration)."""
    for item in items:
        if isinstance(item, TracedLoop):
            yield from _executions(item.items, runs * item.count, tiled or item.count > 1)
        else:
            yield item, runs, tiled


def price(items: Sequence[Traced | TracedLoop], facts: CostFacts = SPYRE_FACTS) -> list[OpCost]:
    """The cost of every compute op a storage trace walked (:meth:`StorageTrace.run`), in program
    order (the order of the SDSC files)."""
    costs = []
    for traced, runs, tiled in _executions(items):
        problem = work_problem(traced.op)
        traffic, cores, lx_peak = op_traffic(traced.op, problem, traced.locs, facts)
        splits = core_division(traced.op)
        ns = division_ns(problem, splits, [loc.storage.memory for loc in traced.locs], tiled, facts)
        costs.append(OpCost(traced.op, runs, cores, traffic.times(runs), runs * ns, lx_peak))
    return costs


def predict(body: func.FuncOp, alignment: int, facts: CostFacts = SPYRE_FACTS) -> list[OpCost]:
    """The predicted cost of every compute op of the planned function ``body``, in program order."""
    return price(StorageTrace(body, alignment).run(), facts)


def lower_bound_ns(body: func.FuncOp, cores: int, facts: CostFacts = SPYRE_FACTS) -> float:
    """The roofline lower bound of ``body`` on ``cores`` cores: each graph input read once and each
    output written once at peak bandwidth, against all its MACs (a matmul in a loop's body once per
    iteration, a padded dim at its valid extent: the bound does not depend on the plan's tiling or
    padding) at the peak of all the cores.  A buffer the program updates in place counts once, as
    an input.  Tensors count their elements, not the padding of the layout they are staged in (a
    plan may stage them otherwise), and a table read through an index the rows it can address
    (:func:`_read_bytes`)."""
    inputs = sum(_read_bytes(arg) for arg in body.body.block.args)
    outputs = sum(tensor_layout(body.function_type.outputs.data[j]).host_nbytes for j in output_results(body))
    macs = sum(math.prod(op.valid_iteration_space()) * iterations(op) for op in body.walk()
               if isinstance(op, ComputeOp) and op.op_func().kind is OpKind.MATMUL)
    return max((inputs + outputs) / facts.hbm_bytes_per_ns, macs / (cores * facts.macs_per_ns_per_core))


def streaming_bound_ns(body: func.FuncOp, facts: CostFacts = SPYRE_FACTS) -> float:
    """The weight-streaming bound of ``body``: its parameters, buffers and constants (the weights
    and a KV cache; their elements, padding aside, and of a table read through an index the rows
    it can address) read once at peak bandwidth: what one decode step cannot beat however few
    tokens it computes."""
    state = [arg for i, arg in enumerate(body.body.block.args)
             if argument_role_and_name(body, i)[0] in STAGED_ROLES]
    return sum(_read_bytes(arg) for arg in state) / facts.hbm_bytes_per_ns


def _read_bytes(arg: SSAValue) -> int:
    """The bytes of argument ``arg`` a program must read: its elements, padding aside; of a table
    only read through indices (an embedding, the experts of a mixture-of-experts decode step),
    at most the rows its index entries address (a block of ``step`` rows each)."""
    layout = tensor_layout(arg.type)
    rows = 0
    for use in arg.uses:
        op = use.operation
        indirect = op.indirect_access() if isinstance(op, ComputeOp) else None
        if indirect is None or indirect.stores or use.index != indirect.table:
            return layout.host_nbytes
        rows += math.prod(tensor_layout(op.operands[indirect.index].type).host_shape) * indirect.step
        extent = layout.host_shape[indirect.table_dim]
    return min(layout.host_nbytes, rows * layout.host_nbytes // extent) if rows else layout.host_nbytes


@dataclass(frozen=True)
class CostReport:
    """The prediction for a planned program: per compute op (SDSC file) and in total."""

    ops: tuple[OpCost, ...]
    lower_bound_ns: float
    streaming_bound_ns: float = 0.0
    """The weights and buffers read once at peak bandwidth (:func:`streaming_bound_ns`)."""
    experts: tuple[str, ...] = ()
    """The form of each mixture-of-experts layer and why (:data:`EXPERTS_ATTR`)."""

    @property
    def total_ns(self) -> float:
        """Predicted device time of the whole bundle: its kernels run one after another."""
        return sum(c.ns for c in self.ops)

    @property
    def traffic(self) -> Traffic:
        """All the bytes the bundle moves."""
        return sum((c.traffic for c in self.ops), Traffic())

    def table(self) -> str:
        """The report as text: the table of :func:`spyre_mlir.figures.figures_table` (the columns
        and totals of ``spyre-run --stats``), the predicted time beside, then the lower bound and
        the ratio, for a program that reads weights, the weight-streaming bound and the ratio, and
        the form of each mixture-of-experts layer."""
        us = [f"{c.ns / 1000:.1f}" for c in self.ops] + [f"{self.total_ns / 1000:.1f}"]
        table = figures_table([(f"sdsc_{i}.json", c.op.op_func().name, c.figures()) for i, c in enumerate(self.ops)],
                              [("predicted us", us)])
        ratio = self.total_ns / self.lower_bound_ns if self.lower_bound_ns else float("inf")
        text = (f"{table}\nlower bound {self.lower_bound_ns / 1000:.1f} us (graph inputs read and outputs written "
                f"once at peak bandwidth, or all MACs at peak); predicted / lower bound = {ratio:.2f}\n")
        if self.streaming_bound_ns:
            text += (f"weight-streaming bound {self.streaming_bound_ns / 1000:.1f} us (parameters, buffers and "
                     f"constants read once at peak bandwidth); predicted / weight-streaming bound = "
                     f"{self.total_ns / self.streaming_bound_ns:.2f}\n")
        return text + "".join(f"mixture of experts {layer}\n" for layer in self.experts)


def cost_report(module: ModuleOp, facts: CostFacts = SPYRE_FACTS) -> CostReport:
    """The :class:`CostReport` of a planned module (after spyre-plan-memory): its one function on
    its ``#spyre.target``."""
    bodies = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    if len(bodies) != 1:
        raise SpyreError(f"a cost report needs one function of compute ops, found {len(bodies)}", op=module)
    config = target_config(module)
    layers = bodies[0].attributes.get(EXPERTS_ATTR)
    return CostReport(tuple(predict(bodies[0], config.alignment, facts)),
                      lower_bound_ns(bodies[0], config.cores, facts), streaming_bound_ns(bodies[0], facts),
                      tuple(layer.data for layer in layers.data) if isinstance(layers, ArrayAttr) else ())
