# The hinted groups of spyre-coarse-tile.  Reads the `tiles` of every compute
# op's `hints`, the `dims` names of the function's compute ops and the pieces
# of assemblies (spyre_mlir.analysis.assembly); writes the block's op order
# (an op between a group's members moves before or after the group) and
# warnings for tile counts no op in a hint's scope uses.
"""Groups of a block: contiguous compute ops whose tiling hints overlap, and their levels.

An op without tiling hints between members (an interloper) moves before the
group when it reads nothing of it, else after it when nothing of it reads the
interloper; otherwise it is an error, as is a hint id in two groups.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue

from spyre_mlir.analysis.assembly import assembled_by
from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.dialects.spyre import ComputeOp, HintAttr
from spyre_mlir.passes.coarse_tile.schedule import Level, named_dims, radix_dims, tiling_hint_ids


@dataclass
class Group:
    """Contiguous compute ops with overlapping tiling hints, and the ops between them."""

    members: list[ComputeOp]
    hint_ids: set[int]
    interlopers: list[Operation] = field(default_factory=list)

    def describe(self) -> str:
        """How diagnostics name the group."""
        ops = ", ".join(f"'{op.name}'" for op in self.members)
        return f"the group of hints {sorted(self.hint_ids)} ({ops})"


def find_groups(block: Block) -> list[Group]:
    """The groups of ``block`` in order; a hint id in two groups is an error."""
    groups: list[Group] = []
    pending: list[Operation] = []
    for op in block.ops:
        ids = set(tiling_hint_ids(op))
        if not ids:
            if groups:
                pending.append(op)
            continue
        assert isinstance(op, ComputeOp)
        if groups and ids & groups[-1].hint_ids:
            groups[-1].members.append(op)
            groups[-1].interlopers.extend(pending)
            groups[-1].hint_ids |= ids
        else:
            for g in groups:
                if ids & g.hint_ids:
                    raise SpyreError(f"'{op.name}' op: tiling hint {sorted(ids & g.hint_ids)[0]} would form two "
                                     f"groups: {g.describe()} is separated from this op by other tiling hints",
                                     op=op)
            groups.append(Group([op], ids))
        pending = []
    return groups


def clear_interlopers(group: Group) -> None:
    """Move each op between the members out of the group: before it if possible, else after it."""
    block = group.members[0].parent_block()
    assert block is not None
    staying: set[Operation] = set(group.members)
    after: list[Operation] = []
    for op in group.interlopers:
        if any(_owner_in(block, v) in staying for nested in op.walk() for v in nested.operands):
            staying.add(op)
            after.append(op)
            continue
        op.detach()
        block.insert_op_before(op, group.members[0])
    for i, op in enumerate(after):
        users = {block.find_ancestor_op_in_block(u.operation) for r in op.results for u in r.uses}
        if users & set(group.members):
            pieces = [o for o in after[:i + 1] if assembled_by(o) is not None]
            if pieces:
                raise SpyreError(f"'{pieces[0].name}' op: a concatenation (torch.cat, torch.stack) inside "
                                 f"{group.describe()} reads an op of it and an op of it reads it; concatenations "
                                 "are not tiled: compute it outside the spyre_hint(tiles=...) scope", op=pieces[0])
            raise SpyreError(f"'{op.name}' op sits inside {group.describe()}, depends on an op of it, and an "
                             "op of it depends on it: it can move neither before nor after the group", op=op)
    anchor: Operation = group.members[-1]
    for op in after:
        op.detach()
        block.insert_op_after(op, anchor)
        anchor = op


def _owner_in(block: Block, value: SSAValue) -> Operation | None:
    owner = value.owner
    return block.find_ancestor_op_in_block(owner) if isinstance(owner, Operation) else None


def group_levels(group: Group, known_names: set[str]) -> list[Level]:
    """One level per (hint, name) of the group in hint-id order.

    A name no op of the function knows is an error; a name no op carrying the
    hint iterates is a warning, and the level is dropped.
    """
    hints: dict[int, HintAttr] = {}
    for op in group.members:
        for h in op.get_hints():
            if h.tiles.data:
                hints.setdefault(h.hint_id.data, h)
    levels = []
    for hint_id in sorted(hints):
        for name, count in hints[hint_id].tile_counts().items():
            level = Level(count, name, hint_id)
            scope = [op for op in group.members if hint_id in tiling_hint_ids(op)]
            if name not in known_names:
                raise SpyreError(f"tiling hint {hint_id} names dim '{name}' (count {count}), which no op of the "
                                 "function knows: declare it and name the input dims", op=scope[0])
            if not any(level.divided_dims(op) for op in scope):
                emit_warning(f"tiling hint {hint_id}: no op in its scope iterates dim '{name}'; "
                             f"the tile count {count} is ignored", op=scope[0])
                continue
            levels.extend(_radix_levels(level, scope))
    return levels


def _radix_levels(level: Level, scope: Sequence[ComputeOp]) -> list[Level]:
    """``level`` as one loop per digit it divides where an op of ``scope`` iterates its name over
    several dims that make one index (:func:`radix_dims`): 16 tiles of 32 grouped-query heads,
    iterated as 8 key/value heads of 4, are a loop of 8 over the key/value heads around a loop of 2
    within them.  Each loop divides the one dim of the ops that iterate the name whole, in turn."""
    for op in scope:
        digits = radix_dims(op, named_dims(op, level.name))
        if digits is not None:
            break
    else:
        return [level]
    sizes = [op.get_iteration_space()[d] for d in digits]
    levels, remaining = [], level.count
    for part, size in enumerate(sizes):
        last = part == len(sizes) - 1
        take = size if remaining > size and remaining % size == 0 and not last else remaining
        if size % take:
            raise SpyreError(f"'{op.name}' op: cannot tile dim '{level.name}' by {level.count}: the op iterates "
                             f"it as {' x '.join(map(str, sizes))} (outermost first), and {level.count} tiles "
                             "are not whole blocks of those", op=op)
        levels.append(dataclasses.replace(level, count=take, part=part))
        remaining //= take
        if remaining == 1:
            break
    return levels


def known_dim_names(func: FuncOp) -> set[str]:
    """Every dim name the compute ops of ``func`` carry."""
    names: set[str] = set()
    for op in func.walk():
        if isinstance(op, ComputeOp):
            names.update(n for dim in (op.get_dim_names() or ()) for n in dim)
    return names
