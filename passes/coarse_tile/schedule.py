# Loop levels of spyre-coarse-tile and the schedule tree of a group: which
# loop divides which ops.  Reads each compute op's `hints` (their `tiles`) and
# `dims` names; writes nothing but the consumption of a tiled op's hints
# (strip_tiles drops their `tiles`; a hint with `work_div` keeps it).
"""Loop levels and the schedule tree of a tiled group (used by ``spyre-coarse-tile``).

A :class:`Level` is one loop: a tile count and the iteration dims it divides in
each op (by dim name under a hint, or explicit dims for a span level).
:func:`schedule` nests the levels over a group's ops (outermost first): each
level's loop holds the contiguous run of ops it divides, the others stay
outside it (loop-invariant).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Operation

from spyre_mlir.analysis.assembly import assembled_by
from spyre_mlir.analysis.linear import affine_linear
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, HintAttr


@dataclass(frozen=True)
class Level:
    """One loop level: ``count`` tiles of the iteration dims a name (or an explicit dim) selects."""

    count: int
    """Trip count of the loop."""

    name: str
    """The dimension name tiled (for diagnostics when ``dims`` is given)."""

    hint_id: int | None = None
    """The ``spyre_hint`` this level comes from; None for an automatic (span) level."""

    dims: tuple[int, ...] | None = None
    """Explicit iteration dims to divide (automatic levels of a single op); None: by ``name``."""

    part: int = 0
    """Where an op iterates ``name`` over several dims that make one index between them
    (:func:`radix_dims`), the one this level divides, outermost 0; an op iterating ``name`` as one
    dim divides it at every part."""

    def divided_dims(self, op: ComputeOp) -> tuple[int, ...]:
        """The iteration dims of ``op`` this level divides (empty: ``op`` is invariant at this level)."""
        if self.dims is not None:
            return self.dims
        if self.hint_id is not None and self.hint_id not in tiling_hint_ids(op):
            return ()
        named = named_dims(op, self.name)
        radix = radix_dims(op, named)
        return (radix[self.part],) if radix is not None and self.part < len(radix) else named


def named_dims(op: ComputeOp, name: str) -> tuple[int, ...]:
    """The iteration dims of ``op`` that carry ``name``, in iteration order."""
    return tuple(d for d, names in enumerate(op.get_dim_names() or ()) if name in names)


def radix_dims(op: ComputeOp, dims: Sequence[int]) -> tuple[int, ...] | None:
    """``dims`` outermost first when they are the digits of one index: some coordinate of ``op``'s
    indexing maps reads them as ``sum(c_d * d)`` with each ``c_d`` the extent of the digits inside
    it (grouped-query heads: the key/value head and the query head within its group, ``kv * g + q``);
    else None (also for fewer than two dims)."""
    if len(dims) < 2:
        return None
    space = op.get_iteration_space()
    for m in op.get_indexing_maps():
        for expr in m.results:
            linear = affine_linear(expr)
            if linear is None or any(linear.coefficient(d) <= 0 for d in dims):
                continue
            inner_first = sorted(dims, key=linear.coefficient)
            place = linear.coefficient(inner_first[0])
            for d in inner_first:
                if linear.coefficient(d) != place:
                    break
                place *= space[d]
            else:
                return tuple(reversed(inner_first))
    return None


@dataclass(eq=False)
class LoopNode:
    """A loop of the schedule tree of a group: its level and what its body runs, in order."""

    level: Level
    index: int
    """The level's position in the group (outermost 0): names ``%loop_bound_<index>``, ``%i_<index>``."""

    body: list[LoopNode | ComputeOp] = field(default_factory=list)

    def __lt__(self, other: LoopNode) -> bool:
        """Outer loops first: the order of a tile offset's terms."""
        return self.index < other.index


def tiling_hint_ids(op: Operation) -> tuple[int, ...]:
    """The ids of ``op``'s hints with ``tiles``; none for a piece of an assembly (its copy writes a
    window of the assembled buffer, which stays whole: concatenations are not tiled)."""
    if not isinstance(op, ComputeOp) or assembled_by(op) is not None:
        return ()
    return tuple(h.hint_id.data for h in op.get_hints() if h.tiles.data)


def strip_tiles(op: ComputeOp) -> None:
    """Consume ``op``'s tiling hints: drop their ``tiles`` (a hint with ``work_div`` stays)."""
    if op.hints is None:
        return
    kept = [HintAttr(h.hint_id.data, None, h.work_div_counts()) for h in op.get_hints() if h.work_div.data]
    if kept:
        op.hints = ArrayAttr(kept)
    else:
        del op.properties["hints"]


def schedule(ops: Sequence[ComputeOp], levels: Sequence[Level]) -> tuple[list[LoopNode | ComputeOp],
                                                                          dict[ComputeOp, tuple[LoopNode, ...]]]:
    """The loop tree of a group: each level's loop holds the contiguous ops it divides.

    Returns the root body and each op's enclosing loops (outermost first).
    """
    paths: dict[ComputeOp, tuple[LoopNode, ...]] = {}

    def build(run: Sequence[ComputeOp], index: int, path: tuple[LoopNode, ...]) -> list[LoopNode | ComputeOp]:
        if index == len(levels):
            paths.update((op, path) for op in run)
            return list(run)
        level, nodes, loops = levels[index], [], 0
        for inside, part in _runs(run, lambda op: bool(level.divided_dims(op))):
            if not inside:
                nodes.extend(build(part, index + 1, path))
                continue
            loops += 1
            if loops > 1:
                raise SpyreError(f"'{part[0].name}' op: the ops tiled by dim '{level.name}' are not contiguous "
                                 "inside their enclosing loop: they would need two loops", op=part[0])
            node = LoopNode(level, index)
            node.body = build(part, index + 1, (*path, node))
            nodes.append(node)
        return nodes

    return build(ops, 0, ()), paths


def _runs(ops: Sequence[ComputeOp], key: Callable[[ComputeOp], bool]) -> list[tuple[bool, list[ComputeOp]]]:
    runs: list[tuple[bool, list[ComputeOp]]] = []
    for op in ops:
        if runs and runs[-1][0] == key(op):
            runs[-1][1].append(op)
        else:
            runs.append((key(op), [op]))
    return runs


def subtree_ops(nodes: Iterable[LoopNode | ComputeOp]) -> list[ComputeOp]:
    """The compute ops of ``nodes`` and of the loops among them, in order."""
    ops: list[ComputeOp] = []
    for n in nodes:
        ops.extend(subtree_ops(n.body) if isinstance(n, LoopNode) else [n])
    return ops
