# spyre-fold-views (DESIGN §4 stage 3): folds chains of spyre.view into the
# indexing maps of the compute ops that read them.
# Reads: spyre.view chains, each compute op's iteration space and indexing maps,
#   the #spyre.layout of every storage value (its stick dim and stick width).
# Writes: explicit `iteration_space` / `indexing_maps` (iteration coords ->
#   storage host coords) on every compute op that read through a view or whose
#   maps co-simplify, with the storage values as operands (`reduce_dims` follows
#   through the ComputeOp interface); `spyre.restickify` copies (explicit maps)
#   for views that cannot be read in place; erases the views.
"""View folding and iteration-space co-simplification (seed 001, "Views and Index Translation").

A ``spyre.view`` is a read pattern over its source's storage, never a copy.
This pass composes each compute op's operand map with the view chain behind the
operand, so the op reads the materialised value (function argument, compute or
fill result) directly::

    %v = spyre.view %x affine_map<(d0, d1) -> (d0 floordiv 10, d0 mod 10, d1)>
           : tensor<50x10x200xf16, #Lx> -> tensor<500x200xf16, #L>
    %r = spyre.pointwise "add" (%v, %y) : (tensor<500x200xf16, #L>, tensor<500x200xf16, #L>) -> ...

becomes (the seed's flatten example)::

    %r = spyre.pointwise "add" (%x, %y) {indexing_maps = [
           affine_map<(d0, d1, d2) -> (d1, d0, d2)>,
           affine_map<(d0, d1, d2) -> (((d1 * 10) + d0), d2)>,
           affine_map<(d0, d1, d2) -> (((d1 * 10) + d0), d2)>],
           iteration_space = array<i64: 10, 50, 200>} : ...

Rules:

1. **Composition.** ``operand map := view_1.map o ... o view_n.map o operand map``
   (view maps take result coords to source coords).  Expressions are kept in a
   normal form (:class:`Linear`): integer combinations of iteration dims and of
   ``floordiv``/``mod`` atoms, where ``(c*Q + R) floordiv c = Q + R floordiv c``,
   ``(c*Q + R) mod c = R mod c`` and both fold away when ``R`` stays inside one
   block of ``c`` over the iteration space.
2. **Co-simplification.** While some map holds ``d_i floordiv c`` or ``d_i mod c``
   with ``c`` a proper divisor of ``d_i``'s extent, ``d_i`` is split into two
   iteration dims in every map of the op (the result's included):
   ``d_i = c * outer + inner``.  The remainder dim ``inner`` (extent ``c``) takes
   ``d_i``'s position and the quotient dim ``outer`` (extent ``extent / c``)
   follows it; this is the seed's order (``{p: 10, q: 50, s: 200}``).  The result
   map becomes a linear combination (``outer * c + inner``), so every result
   element stays addressed exactly once.  A split dim's names (``dims``) go: the
   last name to ``inner`` and the others to ``outer`` when it has several, the
   same names to both otherwise.  Only the dims the op's
   ``splittable_dims`` names are split: a matmul keeps its ``(batch..., M, N, K)``
   form, a batch dim split in two being two batch dims (the K and V heads of
   grouped-query attention, ``h floordiv g``, become a dim of their own, along
   which the query heads of a group are a broadcast of K and V).
3. **Readability.** An operand can be read in place when its stick coordinate
   (the coordinate of its layout's stick dim) is a constant (a broadcast) or one
   iteration dim with coefficient 1 plus terms and an offset that are multiples
   of the stick width, and no coordinate keeps a ``floordiv``/``mod`` after step 2
   (a division of a matmul's M, N or K is a copy), a stick coordinate is
   constant only for a pointwise op (which broadcasts element 0 of the stick), and no
   host dim of more than one element is read at a constant inside a device dim
   the read iterates (``x[0]`` of a ``[2, 32, 64]`` storage: its dim 0 lies inside
   dim 1 on the device, and no label would step over it).  Any other
   view operand (a stick coordinate that mixes dims across sticks, a misaligned
   slice, such a fixed dim) is materialised: ``spyre.restickify`` with explicit maps copies the
   view's elements into a tensor of the view's type (its layout chosen by
   ``spyre-stickify``), and the op reads that copy.  Data-movement ops
   (restickify) read any pattern.
4. **Other users.** A view used by anything but a compute op (``func.return``)
   is materialised the same way, since a function result is staged in the
   layout of its own host shape.  A copy whose storage sticks on a dim of
   extent 1 that the view drops (``x.sum(-1, keepdim=True).squeeze(-1)``), or
   that the view fixes inside an iterated dim, iterates that dim too (extent 1),
   so that the storage's dim has a label.
5. **Widening.** A copy whose source coordinate still divides an iteration dim
   at an offset, or by a divisor of no whole number of its blocks (rows ``(d + 1)
   floordiv 3`` of a row-repeated tensor sliced at row 1), or reads its storage's
   stick from inside a stick (``b[16:32]`` copied into a column), is widened: it
   copies whole blocks of the divisor, from a stick's start, into a wider tensor
   (a divided dim then splits, rule 2) and its readers read their rows as a slice
   of it (a view, folded like any other), so that no copy keeps a division or a
   start the SDSC cannot address.  Only positions in the blocks and sticks the
   narrow copy reads are read, and only where its storage holds them
   (``widen_copy_reads``); a widened dim is not sliced at an offset inside a
   stick of the copy's layout.  A copy that writes dims flattened (Swin's window
   reverse cropped to 10 x 10 tokens and flattened, rows ``10 * h + w``) is widened
   as the copy of one dim per iteration dim (12 x 12), which the view flattens.
6. Dead views are erased.
7. **Copies that move nothing.**  A pointwise result that only a copy reads may
   take any order of its dims around the stick (each tensor of a pointwise
   kernel has its own ``layoutDimOrder_``).  When one order makes the copy
   reinterpret it (:mod:`spyre_mlir.analysis.reinterpret`: the copy's result
   would hold the very bytes of its source), the result takes it, and
   spyre-plan-memory drops the copy.  Attention's output ``[B, H, L, D]``, read
   as ``[B * L, H * D]`` by the output projection, is laid out ``H, D-sticks,
   L`` (dim order ``[2, 0, 1, 3]``).

The pass is idempotent: without views and with no splittable division left, it
changes nothing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, TensorType
from xdsl.ir import OpResult, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.reinterpret import reinterprets
from spyre_mlir.analysis.views import (
    Dim,
    Indexing,
    Widened,
    dim,
    flattening,
    fold_indexing,
    map_coords,
    materialise_view,
    nest_row,
    split_names,
    substitute,
    unreadable_reason,
    widen_copy_reads,
    writes_in_place,
)
from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.dialects.spyre import ComputeOp, RestickifyOp, ViewOp, layout_attr, tensor_layout
from spyre_mlir.hardware import round_up
from spyre_mlir.layout import ABSENT, StickLayout, stick_layout
from spyre_mlir.opfuncs import OpKind


@dataclass
class FoldViewsResult:
    """What :func:`fold_views` did."""

    folded: list[ComputeOp] = field(default_factory=list)
    """Compute ops that now carry explicit maps over storage."""
    copies: list[RestickifyOp] = field(default_factory=list)
    """Views materialised as copies (rules 3 and 4)."""
    erased_views: int = 0


def fold_op(rewriter: Rewriter, op: ComputeOp, result: FoldViewsResult) -> None:
    """Steps 1-3 for one compute op: compose, co-simplify, materialise unreadable view operands."""
    while (folded := fold_indexing(op)) is not None:
        ix, reads = folded
        reasons = [(i, why) for i, r in enumerate(reads) if r.views and writes_in_place(op)
                   and (why := unreadable_reason(op, r, ix.coords[i], tensor_layout(r.storage.type), ix.space))
                   is not None]
        if reasons:
            i, why = reasons[0]
            emit_warning(f"operand #{i} is a view {why}; it is copied by spyre.restickify", op=op)
            copy = materialise_view(rewriter, op.inputs[i], op)
            op.operands[i] = copy.result
            result.copies.append(copy)
            continue
        if ix.splits and op.get_core_splits() is not None:
            raise SpyreError("spyre-fold-views must run before spyre-work-division: splitting "
                             f"iteration dims {[i for i, _ in ix.splits]} would invalidate core_splits", op=op)
        for i, r in enumerate(reads):
            op.operands[i] = r.storage
        names = op.dims
        op.set_indexing(ix.space, ix.maps())
        if names is not None:
            op.properties["dims"] = split_names(names, ix.splits)
        _pad_nested_rows(rewriter, op, ix.coords[-1])
        result.folded.append(op)
        return


def _pad_nested_rows(rewriter: Rewriter, op: ComputeOp, written: Sequence[Linear]) -> None:
    """Pad each dim of ``op``'s result that a split made a row-major nest (``77 * d1 + d0`` of a
    [308] result folded from a [4, 77] view) to whole rows of its outermost term, when its padding
    (for a reader that steps along it: 320 rows) is not: the SDSC labels the nest's outer dim by
    rows, so its extent must be a whole number of them (385).  A result something other than a
    compute op or a view reads keeps its type."""
    if not all(isinstance(use.operation, ComputeOp | ViewOp) for use in op.result.uses):
        return
    layout = tensor_layout(op.result.type)
    padded = list(layout.padded_host_shape)
    for j, coord in enumerate(written):
        if j != layout.stick_dim:
            padded[j] = round_up(padded[j], nest_row(coord))
    if padded != list(layout.padded_host_shape):
        assert isinstance(op.result.type, TensorType)
        rewriter.replace_value_with_new_type(op.result, TensorType(
            op.result.type.get_element_type(), op.result.type.get_shape(),
            layout_attr(stick_layout(layout.host_shape, layout.dtype, layout.dim_order, padded_shape=padded))))


def fold_views(module: ModuleOp) -> FoldViewsResult:
    """Fold every view chain of ``module`` into its readers (module docstring, rules 1-5)."""
    rewriter = Rewriter()
    result = FoldViewsResult()
    # 1. Views used by anything but compute ops and views are materialised (rule 4).
    for view in [op for op in module.walk() if isinstance(op, ViewOp)]:
        for use in list(view.result.uses):
            if not isinstance(use.operation, (ComputeOp, ViewOp)):
                copy = materialise_view(rewriter, view.result, use.operation)
                use.operation.operands[use.index] = copy.result
                result.copies.append(copy)
    # 2. Compute ops in program order: compose, co-simplify, materialise (rules 1-3).
    for op in [op for op in module.walk() if isinstance(op, ComputeOp)]:
        fold_op(rewriter, op, result)
    # 3. Copies that keep a division are widened; their readers fold the slice they read (rule 5).
    for copy in [op for op in module.walk() if isinstance(op, RestickifyOp)]:
        narrow = widen_copy(rewriter, copy)
        if narrow is None:
            continue
        for use in list(narrow.uses):
            if isinstance(use.operation, ComputeOp):
                fold_op(rewriter, use.operation, result)
            else:
                use.operation.operands[use.index] = materialise_view(rewriter, narrow, use.operation).result
    # 4. Erase the views nobody reads any more, users before their sources.
    for view in reversed([op for op in module.walk() if isinstance(op, ViewOp)]):
        if not view.result.uses:
            rewriter.erase_op(view)
            result.erased_views += 1
    # 5. Values only a copy reads are ordered so that it moves nothing (rule 7).
    for copy in [op for op in module.walk() if isinstance(op, RestickifyOp)]:
        order_for_copy(rewriter, copy)
    return result


def order_for_copy(rewriter: Rewriter, copy: RestickifyOp) -> None:
    """Rule 7 for one copy: give its source, a pointwise result nothing else reads, the first order
    of its non-stick dims that makes the copy reinterpret it; leave it alone when none does."""
    source = copy.inputs[0]
    if not copy.has_explicit_maps() or not isinstance(source, OpResult) or not isinstance(source.op, ComputeOp) \
            or source.op.op_func().kind is not OpKind.POINTWISE or len(list(source.uses)) != 1:
        return
    assert isinstance(source.type, TensorType)
    space, (source_map, result_map) = copy.get_iteration_space(), copy.get_indexing_maps()
    result, own = tensor_layout(copy.result.type), tensor_layout(source.type)
    if reinterprets(space, source_map, result_map, own, result):
        return
    for layout in _orders(own):
        if reinterprets(space, source_map, result_map, layout, result):
            rewriter.replace_value_with_new_type(source, TensorType(
                source.type.get_element_type(), source.type.get_shape(), layout_attr(layout)))
            return


_MAX_ORDERED_RANK = 6
"""A value of more dims keeps its order (:func:`_orders` would try 720 and more)."""


def _orders(layout: StickLayout) -> Iterator[StickLayout]:
    """``layout`` with each order of its non-stick dims that places its dims of more than one
    element otherwise in device memory (a dim of one element moves no byte)."""
    stick, shape = layout.stick_dim, layout.host_shape
    if stick is None or len(shape) > _MAX_ORDERED_RANK:
        return
    seen = {_placed(layout)}
    for order in itertools.permutations(d for d in range(len(shape)) if d != stick):
        candidate = replace(layout, dim_order=(*order, stick))
        if (placed := _placed(candidate)) not in seen:
            seen.add(placed)
            yield candidate


def _placed(layout: StickLayout) -> tuple[int, ...]:
    """The host dims of more than one element of ``layout``, in device order."""
    return tuple(h for h in layout.device_dims if h != ABSENT and layout.host_shape[h] > 1)


def widen_copy(rewriter: Rewriter, copy: RestickifyOp) -> SSAValue | None:
    """Rule 5 for one copy: replace it by a wider copy (:func:`widen_copy_reads`) and a view of the
    narrow result's rows in it; returns that view, or None when the copy is left as it is.  A copy
    that writes dims flattened (rows ``10 * h + w`` of a cropped window reverse) is widened as the
    copy of one dim per iteration dim (:func:`_unflattened`), which the view flattens again."""
    if not copy.has_explicit_maps():
        return None
    unflat = _unflattened(copy)
    if unflat is None:
        return None
    storage = copy.inputs[0]
    assert isinstance(storage.type, TensorType) and isinstance(copy.result.type, TensorType)
    identity = tuple(dim(i) for i in range(len(unflat.space)))
    widened = widen_copy_reads(Indexing(unflat.space, [unflat.source, identity]), tensor_layout(storage.type))
    layout = unflat.layout
    if widened is None or layout.stick_dim is not None and widened.offsets[layout.stick_dim] % layout.elems_per_stick:
        return None
    padded = _wide_padding(layout, widened, tensor_layout(storage.type))
    wide_type = TensorType(copy.result.type.get_element_type(), widened.shape,
                           layout_attr(stick_layout(widened.shape, layout.dtype, layout.dim_order, padded_shape=padded)))
    wide = RestickifyOp(storage, wide_type)
    wide.set_indexing(widened.indexing.space, widened.indexing.maps())
    if unflat.names is not None:
        wide.dims = split_names(unflat.names, widened.indexing.splits)
    if copy.hints is not None:
        wide.hints = copy.hints
    wide.location = copy.location
    rewriter.insert_op(wide, InsertPoint.before(copy))
    rows = AffineMap(len(copy.result.type.get_shape()), 0,
                     tuple(digit + o for digit, o in zip(unflat.digits, widened.offsets)))
    narrow = ViewOp(wide.result, rows, copy.result.type)
    if copy.dims is not None:
        narrow.dims = copy.dims
    narrow.location = copy.location
    rewriter.insert_op(narrow, InsertPoint.before(copy))
    copy.result.replace_all_uses_with(narrow.result)
    rewriter.erase_op(copy)
    return narrow.result


@dataclass(frozen=True)
class _Unflat:
    """A copy seen as writing one dim per iteration dim, in the order its result nests them."""

    space: list[int]
    source: tuple[Linear, ...]
    """Its source coords over ``space``."""
    names: ArrayAttr | None
    """Its iteration dims' names, in ``space``'s order."""
    layout: StickLayout
    """The layout of its unflattened result."""
    digits: tuple[AffineExpr, ...]
    """Each unflattened dim's coordinate in terms of the copy's own result dims."""


def _unflattened(copy: RestickifyOp) -> _Unflat | None:
    """``copy`` as the copy of one dim per iteration dim (:func:`flattening`: its result's dims in
    row-major nests of them), sticked on the iteration dim that its stick dim is, the other dims
    nested in its dim order where their result dim is; None when its result dims are no such
    nests, its stick dim flattens several, or a flattened dim is padded."""
    space = list(copy.get_iteration_space())
    source, result = (map_coords(m, space) for m in copy.get_indexing_maps())
    layout = tensor_layout(copy.result.type)
    nests = flattening(result, space, layout.host_shape)
    if nests is None:
        return None
    order = [d for nest in nests for d in nest]
    position = {d: k for k, d in enumerate(order)}
    if layout.stick_dim is not None and len(nests[layout.stick_dim]) != 1 or any(
            len(nest) > 1 and layout.padded_host_shape[h] != layout.host_shape[h] for h, nest in enumerate(nests)):
        return None
    unflat_space = [space[d] for d in order]
    env = [dim(position[d]) for d in range(len(space))]
    padded = [space[d] for d in order]
    for h, nest in enumerate(nests):
        if len(nest) == 1:
            padded[position[nest[0]]] = layout.padded_host_shape[h]
    dim_order = [position[d] for h in layout.dim_order for d in nests[h]]
    digits = []
    for h, nest in enumerate(nests):
        inner = math.prod(space[d] for d in nest)
        for d in nest:
            inner //= space[d]
            digit = AffineExpr.dimension(h) // inner if inner > 1 else AffineExpr.dimension(h)
            digits.append(digit % space[d] if d != nest[0] else digit)
    return _Unflat(unflat_space, tuple(substitute(c, env, unflat_space) for c in source),
                   None if copy.dims is None else ArrayAttr([copy.dims.data[d] for d in order]),
                   stick_layout(unflat_space, layout.dtype, dim_order, padded_shape=padded), tuple(digits))


def _wide_padding(layout: StickLayout, widened: Widened, storage: StickLayout) -> tuple[int, ...]:
    """The device extents of a widened copy's result (``layout`` the narrow one's): the narrow
    result's padding where its readers reach, moved by the offset, and a widened dim that drives
    its storage's stick padded to whole sticks of it, as the copy iterates it."""
    padded = list(layout.padded_host_shape)
    stick = widened.indexing.coords[0][storage.stick_dim] if storage.stick_dim is not None else None
    drivers = set() if stick is None else {a.pos for a, k in stick.terms if k == 1 and isinstance(a, Dim)}
    for h, (extent, offset) in enumerate(zip(widened.shape, widened.offsets)):
        if extent == layout.host_shape[h] and not offset:
            continue
        driven = drivers & {a.pos for a, _ in widened.indexing.coords[1][h].terms if isinstance(a, Dim)}
        own = round_up(extent, storage.elems_per_stick) if driven else extent
        padded[h] = max(extent, own, offset + padded[h])
    return tuple(padded)


@dataclass(frozen=True)
class FoldViewsPass(ModulePass):
    """Fold spyre.view chains into compute ops' indexing maps and co-simplify iteration spaces."""

    name = "spyre-fold-views"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_views(op)
