# Span-overflow levels of spyre-coarse-tile.  Reads a compute op's iteration
# space, `dims` names and the storage of its tensors (spyre_mlir.analysis.work:
# layouts, strides, sticks) and the target's cores and span limit; writes
# nothing (it returns the loop levels the op needs).
"""Loop levels that bring a compute op within the per-core span limit.

Spans are those of the tensors' storage: a tile in a loop is a window of the
whole tensor and steps by its strides, so tiling shrinks a span only along the
dims it divides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from spyre_mlir.analysis.work import DeviceDim, PieceSpace, WorkProblem, reduce_spans, stick_pieces, work_problem
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.passes.coarse_tile.schedule import Level


def _fits(problem: WorkProblem, config: SpyreConfig, sizes: Sequence[int]) -> bool:
    """True when work division can keep every tensor of ``problem`` within the span limit on a
    tile of ``sizes`` (each tensor's strides those of its storage, which tiling does not change)."""
    space = PieceSpace(tuple(sizes), stick_pieces(sizes, problem.tensors))
    try:
        reduce_spans(problem, space, config)
    except SpyreError:
        return False
    return True


def span_levels(op: ComputeOp, config: SpyreConfig) -> list[Level]:
    """The loop levels that bring ``op`` within the span limit, none when it fits already.

    While work division could not keep the tile within the limit, the first tensor over it
    whole has its outermost spanning device dim's driver of the largest step that divides tiled: by the smallest
    stick-aligned count that makes the op fit, else the smallest that makes that tensor fit, else
    the largest (the dim then spans a position at a time and the next dim in decides).  One level
    per tiled dim, in iteration order; no count left is an error naming the op.
    """
    problem = work_problem(op)
    sizes = list(op.get_iteration_space())
    counts: dict[int, int] = {}
    while not _fits(problem, config, sizes):
        space = PieceSpace(tuple(sizes), stick_pieces(sizes, problem.tensors))
        over = next(t for i, t in enumerate(problem.tensors)
                    if i not in problem.shared and space.span(t, {}) > config.span_limit_bytes)
        spanning = next(dim for dim in over.dims if dim.positions(space.padded_per_core({})) > 1)
        choices = [(d, _tile_counts(sizes[d], space.piece_elems[d])) for d in _outermost_first(spanning)]
        d, options = next(((d, c) for d, c in choices if c), (None, []))
        if d is None:
            raise SpyreError(f"'{op.name}' op: no tile count that keeps whole sticks brings {over.name} within the "
                             f"per-core span limit of {config.span_limit_bytes} bytes on {config.cores} cores",
                             op=op)
        alone = replace(problem, tensors=(over,), shared=())

        def tiled(count: int) -> list[int]:
            return [s // count if i == d else s for i, s in enumerate(sizes)]

        count = next((c for c in options if _fits(problem, config, tiled(c))),
                     next((c for c in options if _fits(alone, config, tiled(c))), options[-1]))
        counts[d] = counts.get(d, 1) * count
        sizes = tiled(count)
    names = op.get_dim_names()
    return [Level(count, names[d][0] if names else f"d{d}", None, (d,)) for d, count in sorted(counts.items())]


def _outermost_first(dim: DeviceDim) -> list[int]:
    """The iteration dims driving ``dim``'s host coordinate, the one of the largest step first: a
    tile of an inner one (the query head within its group of ``kv * 4 + q``) leaves a window as
    wide as before, its elements strided, which no matmul can address."""
    linear = dim.linear
    return sorted(dim.coord.used_dims(), key=lambda d: (-(linear.coefficient(d) if linear else 0), d))


def _tile_counts(size: int, piece: int) -> list[int]:
    """The counts above 1 that divide ``size`` into tiles of whole pieces, increasing."""
    return [c for c in range(2, size + 1) if size % c == 0 and (size // c) % piece == 0]
