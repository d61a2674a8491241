# Copies that move no byte (DESIGN §6, §9): whether a spyre.restickify's result
# already lies in its operand's device bytes.  Read by spyre-fold-views (which
# orders a copied value's non-stick dims so that its copy is one),
# spyre-plan-memory (which gives such a copy's result its operand's buffer) and
# the storage trace (which then runs nothing for it).  Reads layouts, iteration
# spaces, indexing maps and the IR around a restickify; writes nothing.
"""Copies that move no byte.

A copy ``dst[g(i)] = src[f(i)]`` over an iteration space *reinterprets* its source when every
element's byte offset in the source's layout equals its byte offset in the result's, and the copy
writes every element of a result without padding: the result's device bytes are then the source's,
and the copy can be dropped, its readers reading the source's buffer in the result's layout.  The
attention output of a transformer, ``[B, H, L, D]`` read as ``[B * L, H * D]`` by the output
projection, is one when the heads are laid out ``H, D-sticks, L`` (dim order ``[2, 0, 1, 3]``).

Decided exactly, without visiting elements, for affine-linear maps (no floordiv or mod): a layout's
byte offset is linear in each host coordinate but the stick dim's, which it splits into a stick
index and a position in the stick.  When one iteration dim ``s`` drives the stick coordinate of both
tensors (coefficient 1, every other term and the constant whole sticks, ``s``'s extent whole
sticks), writing ``s = e * S + r`` (``e`` elements per stick) makes both offsets linear in the other
dims, ``S`` and ``r``; the copy reinterprets iff the two linear forms are equal once the dims of one
element are dropped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import func, scf
from xdsl.ir import OpResult
from xdsl.ir.affine import AffineMap

from spyre_mlir.analysis.linear import Linear, affine_linear
from spyre_mlir.dialects.spyre import ComputeOp, RestickifyOp, tensor_layout
from spyre_mlir.layout import IN_STICK, STICKS, StickLayout, offset_terms


def reinterprets(space: Sequence[int], source_map: AffineMap, result_map: AffineMap,
                 source: StickLayout, result: StickLayout) -> bool:
    """True when copying ``source[source_map(i)]`` to ``result[result_map(i)]`` for every ``i`` of
    ``space`` writes a result whose device bytes are the source's, byte for byte."""
    if source.dtype != result.dtype or source.is_padded or result.is_padded or source.nbytes != result.nbytes \
            or math.prod(space) != math.prod(result.host_shape):
        return False
    forms = [_offset_form(space, m, layout) for m, layout in ((source_map, source), (result_map, result))]
    return forms[0] is not None and forms[0] == forms[1]


def copy_reinterprets(copy: RestickifyOp) -> bool:
    """:func:`reinterprets` for a ``spyre.restickify`` in its layouts."""
    source_map, result_map = copy.get_indexing_maps()
    return reinterprets(copy.get_iteration_space(), source_map, result_map, tensor_layout(copy.inputs[0].type),
                        tensor_layout(copy.result.type))


def copies_nothing(copy: ComputeOp, outputs: Sequence[object] = ()) -> bool:
    """True when ``copy`` is a restickify memory planning drops: it reinterprets (:func:`copy_reinterprets`)
    a compute result or a loop result of the function's body (a tiled writer's, assembled in its
    loop's buffer), runs in no loop, and neither its operand nor its result is one of ``outputs``
    (the function's returned values), which live in kernel arguments of their own."""
    if not isinstance(copy, RestickifyOp) or not isinstance(copy.parent_op(), func.FuncOp):
        return False
    source = copy.inputs[0]
    return isinstance(source, OpResult) and isinstance(source.op, ComputeOp | scf.ForOp) \
        and source.op.parent_block() is copy.parent_block() and source not in outputs \
        and copy.result not in outputs and copy_reinterprets(copy)


def _offset_form(space: Sequence[int], m: AffineMap, layout: StickLayout) -> tuple[int, Linear[int]] | None:
    """The iteration dim ``s`` that drives the stick of ``layout`` read at ``m``, and the byte offset
    as a linear form over the other dims of more than one element, ``S`` (key ``len(space)``) and
    ``r`` (key ``len(space) + 1``); None when the offset has no such form."""
    coords = [affine_linear(e) for e in m.results]
    stick_dim, eps = layout.stick_dim, layout.elems_per_stick
    if stick_dim is None or any(c is None for c in coords) or layout.host_shape[stick_dim] % eps:
        return None
    coords = [Linear.of({d: c for d, c in coord.terms if space[d] > 1}, coord.const) for coord in coords]
    stick = coords[stick_dim]
    off_grid = [(d, c) for d, c in stick.terms if c % eps]
    if stick.const % eps or len(off_grid) != 1 or off_grid[0][1] != 1 or space[off_grid[0][0]] % eps:
        return None
    s = off_grid[0][0]
    big, small = len(space), len(space) + 1
    split = Linear.of({big: eps, small: 1})

    def substituted(coord: Linear[int]) -> Linear[int]:
        rest = Linear.of({d: c for d, c in coord.terms if d != s}, coord.const)
        return rest + split.scaled(coord.coefficient(s))

    offset: Linear[int] = Linear.constant(0)
    for h, how, step in offset_terms(layout):
        if how == IN_STICK:
            offset = offset + Linear.term(small, step)
        elif how == STICKS:
            whole = Linear.of({d: c // eps for d, c in stick.terms if d != s}, stick.const // eps)
            offset = offset + (whole + Linear.term(big)).scaled(step)
        else:
            offset = offset + substituted(coords[h]).scaled(step)
    if space[s] == eps:  # one stick: S is always 0
        offset = Linear.of({k: c for k, c in offset.terms if k != big}, offset.const)
    return s, offset
