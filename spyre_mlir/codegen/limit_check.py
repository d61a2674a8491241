# The last check before an SDSC file exists: one OpSpec measured against the
# device limits (spyre_mlir.limits) as the interpreter measures the file it
# becomes: cores, sticks, every tensor's per-core span, the alignment and range
# of every core's start in LX or in its HBM allocation over every iteration of
# the loops around it.  Read by spyre-lower-to-bundle, which locates a problem
# at the compute op.  Reads OpSpec records; writes nothing.
"""An OpSpec against the device limits.

The interpreter (``spyre_mlir.interpreter.addressing``) derives each tensor's
per-core box from the SDSC file's labels, ``N_``, ``ss_``, ``scale_`` and
``backGapCore_``; here the same box comes from the OpSpec those fields are
written from, and both measure it with :func:`spyre_mlir.limits.tensor_box` and
:func:`spyre_mlir.limits.span_bytes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from spyre_mlir.codegen.opspec import ArgSpec, OpSpec
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.limits import (
    alignment_problem,
    allocation_problem,
    core_problem,
    lx_problem,
    span_bytes,
    span_problem,
    stick_problem,
    tensor_box,
    whole_sticks_problem,
)

_KEPT, _STICK_REDUCED = 1, -2
"""``scale_`` values: the tensor advances with the label; one element per stick along it."""


@dataclass(frozen=True)
class Placed:
    """Where an argument's storage starts and how it moves: the bytes of its HBM allocation before
    its base (a pool block's offset, else 0), the allocation's size, and the byte step of its
    window per enclosing loop (level -> bytes) with the trip count of each loop, outermost first."""

    base: int
    allocation_bytes: int
    strides: Mapping[int, int]
    counts: Sequence[int]

    def reach(self) -> tuple[int, int]:
        """How far below and above its first iteration's start the window moves over the loops."""
        moves = [self.strides.get(level, 0) * (count - 1) for level, count in enumerate(self.counts)]
        return sum(m for m in moves if m < 0), sum(m for m in moves if m > 0)


def _extents(spec: OpSpec, arg: ArgSpec) -> tuple[dict[str, int], dict[str, int]]:
    """Each label's extent in elements on one core and in the whole storage (LX holds only the
    core's slice), from ``scale_``, ``N_ / splits`` and ``backGapCore_`` as the SDSC file gives them."""
    sizes = dict(zip(spec.labels, spec.sizes))
    per_core = {label: size // split for label, size, split in zip(spec.labels, spec.sizes, spec.splits)}
    stick, lx = arg.stick_size, arg.memory == "lx"
    core, full = {}, {}
    for label, scale in zip(arg.layout_labels, arg.scale):
        core[label] = {_KEPT: per_core[label], _STICK_REDUCED: stick}.get(scale, 1)
        whole = {_KEPT: sizes[label], _STICK_REDUCED: stick}.get(scale, 1) + arg.back_gap.get(label, 0)
        full[label] = core[label] if lx else whole
    return core, full


def tensor_span(spec: OpSpec, arg: ArgSpec, whole: str | None = None) -> int:
    """The per-core span of ``arg`` in bytes, as the interpreter measures it (label ``whole`` at its
    full extent: the rows of a table read through an index)."""
    core, full = _extents(spec, arg)
    if whole is not None:
        core[whole] = full[whole]
    shape, strides, _ = tensor_box(arg.layout_labels, arg.stick_label, arg.stick_size, arg.word_length, core, full)
    return span_bytes(shape, strides, arg.word_length)


def op_spec_problem(spec: OpSpec, placed: Sequence[Placed | None], config: SpyreConfig) -> str | None:
    """The first limit ``spec`` breaks, as the interpreter would report it (``Tensor2 on core 0:
    per-core span ... exceeds the limit of ...``), None when it breaks none.  ``placed`` gives
    each HBM argument's :class:`Placed` (None for one in LX)."""
    if (problem := core_problem(spec.num_cores - 1, config.cores)) is not None:
        return f"numCoresUsed_ {spec.num_cores}: {problem}"
    table = spec.args[spec.indirect["table"]].name if spec.indirect else None
    for arg, where in zip(spec.args, placed, strict=True):
        problem = _arg_problem(spec, arg, where, config, spec.indirect["label"] if arg.name == table else None)
        if problem is not None:
            return f"{arg.name}{problem}"
    return None


def _arg_problem(spec: OpSpec, arg: ArgSpec, where: Placed | None, config: SpyreConfig,
                 gathered: str | None) -> str | None:
    """The first limit ``arg`` breaks (``gathered``: the label along which it is a table's rows)."""
    if (problem := stick_problem(arg.stick_size, arg.word_length)) is not None:
        return f": stickSize_: {problem}"
    core, full = _extents(spec, arg)
    label = arg.stick_label
    if (problem := whole_sticks_problem(label, core[label], full[label], arg.stick_size)) is not None:
        return f": {problem}"
    span = tensor_span(spec, arg)
    for index, offset in enumerate(arg.core_offsets):
        problems = [alignment_problem(offset, config.alignment), span_problem(span, config.span_limit_bytes)]
        if arg.memory == "lx":
            problems.append(lx_problem(offset, span, config.usable_lx_bytes))
        else:
            assert where is not None
            start, (low, high) = where.base + offset, where.reach()
            reach = span if gathered is None else tensor_span(spec, arg, gathered)
            problems = [alignment_problem(start, config.alignment),
                        *(alignment_problem(step, config.alignment) for step in where.strides.values()),
                        problems[1], allocation_problem(start + low, reach, where.allocation_bytes),
                        allocation_problem(start + high, reach, where.allocation_bytes)]
        if (problem := next((p for p in problems if p is not None), None)) is not None:
            return f" on core {index}: {problem}"
    return None
