# The view model (DESIGN §14, seed 001 "Views and Index Translation"): how a
# compute op reads storage through a chain of spyre.view, in a normal form of
# affine coordinates, and when a layout label can describe that read.  Read by
# spyre-stickify (to choose stick dims that views can be read through) and
# spyre-fold-views (to fold them).  Reads the IR; :func:`materialise_view`
# inserts the spyre.restickify copy of a view that cannot be read in place.
"""Views as read patterns over storage.

A coordinate is a :class:`~spyre_mlir.analysis.linear.Linear` over atoms: an
iteration dim (:class:`Dim`), or a ``floordiv`` (:class:`Div`) or ``mod``
(:class:`Mod`) of a coordinate that does not simplify over the iteration space.
:func:`read_through_views` composes a view chain onto an op's coordinates;
:func:`co_simplify` splits iteration dims until no division of one is left
(rule 2 of spyre-fold-views); :func:`copy_reason` says why a view cannot be
read in place (rule 3) and :func:`materialise_view` copies it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ArrayAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.analysis.linear import Linear
from spyre_mlir.dialects.spyre import ComputeOp, RestickifyOp, ViewOp, tensor_layout
from spyre_mlir.layout import ABSENT, StickLayout
from spyre_mlir.opfuncs import OpKind

# --------------------------------------------------------------------------
# Affine expressions in normal form
# --------------------------------------------------------------------------


class _Atom:
    """An atom of a coordinate; atoms order by :func:`atom_key`."""

    def __lt__(self, other: _Atom) -> bool:
        return atom_key(self) < atom_key(other)


@dataclass(frozen=True)
class Dim(_Atom):
    """Iteration dim ``pos``."""

    pos: int


@dataclass(frozen=True)
class Div(_Atom):
    """``arg floordiv divisor`` that does not simplify."""

    arg: Linear[Atom]
    divisor: int


@dataclass(frozen=True)
class Mod(_Atom):
    """``arg mod divisor`` that does not simplify."""

    arg: Linear[Atom]
    divisor: int


Atom = Dim | Div | Mod


def atom_key(atom: _Atom) -> tuple[int, int, str]:
    """The order of atoms: by kind (dim, div, mod), then position or divisor, then argument."""
    if isinstance(atom, Dim):
        return (0, atom.pos, "")
    assert isinstance(atom, Div | Mod)
    return (1 if isinstance(atom, Div) else 2, atom.divisor, repr(atom.arg))


def by_weight(lin: Linear[Atom]) -> list[tuple[Atom, int]]:
    """The terms of ``lin`` by decreasing coefficient, then atom: the order they are printed in."""
    return sorted(lin.terms, key=lambda t: (-abs(t[1]), atom_key(t[0])))


def atoms(lin: Linear[Atom]) -> Iterator[Atom]:
    """Every atom of ``lin`` by weight, nested ones included."""
    for atom, _ in by_weight(lin):
        yield atom
        if not isinstance(atom, Dim):
            yield from atoms(atom.arg)


def dim(pos: int) -> Linear[Atom]:
    """Iteration dim ``pos`` as a coordinate."""
    return Linear.term(Dim(pos))


def constant(value: int) -> Linear[Atom]:
    """The constant ``value`` as a coordinate."""
    return Linear.constant(value)


def nest_row(lin: Linear) -> int:
    """The elements one row of the outermost term of a row-major nest spans (``77 * d1 + d0``:
    77): the largest coefficient of a coordinate of several terms; 1 for one of one term or none."""
    return max(c for _, c in lin.terms) if len(lin.terms) > 1 else 1


def value_range(lin: Linear, space: Sequence[int]) -> tuple[int, int]:
    """Inclusive bounds of ``lin`` over the iteration space ``space``."""
    return lin.bounds(lambda atom: _atom_range(atom, space))


def _atom_range(atom: Atom, space: Sequence[int]) -> tuple[int, int]:
    if isinstance(atom, Dim):
        return 0, space[atom.pos] - 1
    lo, hi = value_range(atom.arg, space)
    if isinstance(atom, Div):
        return lo // atom.divisor, hi // atom.divisor
    return 0, atom.divisor - 1


def _split_multiples(lin: Linear, c: int) -> tuple[Linear, Linear]:
    """``(Q, R)`` with ``lin = c * Q + R``: ``Q`` gathers the terms whose coefficient ``c`` divides."""
    q_const, r_const = divmod(lin.const, c)
    q = {a: k // c for a, k in lin.terms if k % c == 0}
    r = {a: k for a, k in lin.terms if k % c}
    return Linear.of(q, q_const), Linear.of(r, r_const)


def _nested_term(r: Linear, c: int, space: Sequence[int]) -> tuple[Atom, int, Linear] | None:
    """A term ``k * a`` of ``r`` with ``k`` a proper divisor of ``c`` whose rest ``r - k * a`` stays
    in ``[0, k)`` over ``space``: ``(a, k, rest)``.  Then ``r = c * (a floordiv (c / k)) + (k * (a
    mod (c / k)) + rest)``, the second part in ``[0, c)``: rows of 9 read as blocks of 36
    (``(9 * d0 + d1) floordiv 36`` is ``d0 floordiv 4``)."""
    for a, k in r.terms:
        if 1 < k < c and c % k == 0:
            rest = r + Linear.term(a, -k)
            lo, hi = value_range(rest, space)
            if 0 <= lo and hi < k:
                return a, k, rest
    return None


def floordiv(lin: Linear, c: int, space: Sequence[int]) -> Linear:
    """``lin floordiv c`` in normal form."""
    if c == 1:
        return lin
    q, r = _split_multiples(lin, c)
    lo, hi = value_range(r, space)
    if lo // c == hi // c:
        return q + constant(lo // c)
    nested = _nested_term(r, c, space)
    if nested is not None:
        a, k, _ = nested
        return q + floordiv(Linear.term(a), c // k, space)
    return q + Linear(((Div(r, c), 1),))


def mod(lin: Linear, c: int, space: Sequence[int]) -> Linear:
    """``lin mod c`` in normal form."""
    if c == 1:
        return constant(0)
    _, r = _split_multiples(lin, c)
    lo, hi = value_range(r, space)
    if lo // c == hi // c:
        return r + constant(-c * (lo // c))
    nested = _nested_term(r, c, space)
    if nested is not None:
        a, k, rest = nested
        return mod(Linear.term(a), c // k, space).scaled(k) + rest
    return Linear(((Mod(r, c), 1),))


def recombined(lin: Linear) -> Linear:
    """``lin`` with each ``c * k * (r floordiv c) + k * (r mod c)`` pair of its terms written as
    ``k * r``: a dim split and merged back (a patch grid flattened after its rows were)."""
    terms = dict(lin.terms)
    for atom, k in lin.terms:
        if isinstance(atom, Mod) and terms.get(atom) == k and terms.get(Div(atom.arg, atom.divisor)) == k * atom.divisor:
            del terms[atom], terms[Div(atom.arg, atom.divisor)]
            return recombined(Linear.of(terms, lin.const) + atom.arg.scaled(k))
    return lin


def linear(expr: AffineExpr, env: Sequence[Linear], space: Sequence[int]) -> Linear:
    """``expr`` with its dim ``i`` replaced by ``env[i]``, in normal form over ``space``."""
    if isinstance(expr, AffineConstantExpr):
        return constant(expr.value)
    if isinstance(expr, AffineDimExpr):
        return env[expr.position]
    assert isinstance(expr, AffineBinaryOpExpr), f"unexpected affine expression {expr}"
    lhs = linear(expr.lhs, env, space)
    rhs = linear(expr.rhs, env, space)
    if expr.kind is AffineBinaryOpKind.Add:
        return recombined(lhs + rhs)
    assert not rhs.terms, f"non-affine expression {expr}"
    c = rhs.const
    if expr.kind is AffineBinaryOpKind.Mul:
        return lhs.scaled(c)
    if expr.kind is AffineBinaryOpKind.FloorDiv:
        return floordiv(lhs, c, space)
    if expr.kind is AffineBinaryOpKind.CeilDiv:
        return floordiv(lhs + constant(c - 1), c, space)
    return mod(lhs, c, space)


def substitute(lin: Linear, env: Sequence[Linear], space: Sequence[int]) -> Linear:
    """``lin`` with iteration dim ``i`` replaced by ``env[i]``, re-normalised over ``space``."""
    total = constant(lin.const)
    for atom, k in lin.terms:
        if isinstance(atom, Dim):
            part = env[atom.pos]
        elif isinstance(atom, Div):
            part = floordiv(substitute(atom.arg, env, space), atom.divisor, space)
        else:
            part = mod(substitute(atom.arg, env, space), atom.divisor, space)
        total = total + part.scaled(k)
    return recombined(total)


def to_expr(lin: Linear) -> AffineExpr:
    """``lin`` as an xDSL affine expression (largest coefficient first, constant last)."""
    expr: AffineExpr | None = None
    for atom, k in by_weight(lin):
        if isinstance(atom, Dim):
            term = AffineExpr.dimension(atom.pos)
        elif isinstance(atom, Div):
            term = AffineBinaryOpExpr(AffineBinaryOpKind.FloorDiv, to_expr(atom.arg),
                                      AffineExpr.constant(atom.divisor))
        else:
            term = AffineBinaryOpExpr(AffineBinaryOpKind.Mod, to_expr(atom.arg), AffineExpr.constant(atom.divisor))
        if k != 1:
            term = AffineBinaryOpExpr(AffineBinaryOpKind.Mul, term, AffineExpr.constant(k))
        expr = term if expr is None else AffineBinaryOpExpr(AffineBinaryOpKind.Add, expr, term)
    if expr is None:
        return AffineExpr.constant(lin.const)
    if lin.const:
        return AffineBinaryOpExpr(AffineBinaryOpKind.Add, expr, AffineExpr.constant(lin.const))
    return expr


def to_map(coords: Sequence[Linear], num_dims: int) -> AffineMap:
    """The affine map ``(d0, ..., d{num_dims-1}) -> coords``."""
    return AffineMap(num_dims, 0, tuple(to_expr(c) for c in coords))


def map_coords(m: AffineMap, space: Sequence[int]) -> tuple[Linear, ...]:
    """The results of ``m`` in normal form over the iteration space ``space``."""
    return _map_coords(m, tuple(space))


@functools.lru_cache(maxsize=1 << 14)
def _map_coords(m: AffineMap, space: tuple[int, ...]) -> tuple[Linear, ...]:
    """:func:`map_coords`, found once per map and space (the layers of a model share them)."""
    env = [dim(i) for i in range(m.num_dims)]
    return tuple(linear(e, env, space) for e in m.results)


# --------------------------------------------------------------------------
# Read patterns
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Read:
    """How an op reads a materialised value: ``storage`` at ``coords`` (iteration -> host coords)."""

    storage: SSAValue
    coords: tuple[Linear, ...]
    views: tuple[ViewOp, ...]
    """The view chain folded in, outermost (the operand's definer) first."""


def read_through_views(value: SSAValue, coords: Sequence[Linear], space: Sequence[int]) -> Read:
    """Follow ``value``'s view chain to its storage, composing the view maps onto ``coords``."""
    views: list[ViewOp] = []
    coords = tuple(coords)
    while isinstance(view := value.owner, ViewOp):
        views.append(view)
        coords = tuple(linear(e, coords, space) for e in view.map.data.results)
        value = view.source
    return Read(value, coords, tuple(views))


def op_reads(op: ComputeOp) -> tuple[list[int], list[Read], tuple[Linear, ...]]:
    """An op's iteration space, its operands' reads of storage and its result coords."""
    space = list(op.get_iteration_space())
    maps = op.get_indexing_maps()
    reads = [read_through_views(v, map_coords(m, space), space) for v, m in zip(op.inputs, maps)]
    return space, reads, map_coords(maps[-1], space)


def stick_coord_readable(coord: Linear, elems_per_stick: int) -> bool:
    """Rule 3: a constant, or one dim with coefficient 1 plus stick-aligned terms and offset."""
    if any(not isinstance(a, Dim) for a in atoms(coord)):
        return False
    if not coord.terms:
        return True
    units = [a for a, k in coord.terms if k == 1]
    aligned = all(k % elems_per_stick == 0 for _, k in coord.terms if k != 1)
    return len(units) == 1 and aligned and coord.const % elems_per_stick == 0


def fixed_inner_dims(coords: Sequence[Linear], layout: StickLayout, space: Sequence[int]) -> list[int]:
    """Host dims (not the stick dim) of more than one element that ``coords`` read at a constant
    inside a device dim they step along (``x[0]`` of a ``[2, 64, 192]`` storage whose dim 0 lies
    inside dim 1 on the device).  No layout label describes such a dim, so the label outside it
    would step as if it were not there."""
    fixed, stepped_outside = [], False
    for h in layout.device_dims[:-1]:  # outermost first; the last is the within-stick dim
        if h == ABSENT:
            continue
        if coords[h].terms:
            lo, hi = value_range(coords[h], space)
            width = layout.elems_per_stick if h == layout.stick_dim else 1
            stepped_outside = stepped_outside or lo // width != hi // width
        elif stepped_outside and h != layout.stick_dim and layout.padded_host_shape[h] > 1:
            fixed.append(h)
    return fixed


def is_read_in_place(read: Read, layout: StickLayout) -> bool:
    """True when ``read``'s stick coordinate satisfies rule 3 for its storage's ``layout`` (a rank-0
    storage always does)."""
    if layout.stick_dim is None:
        return True
    return stick_coord_readable(read.coords[layout.stick_dim], layout.elems_per_stick)


# --------------------------------------------------------------------------
# Co-simplification
# --------------------------------------------------------------------------


@dataclass
class Indexing:
    """An iteration space and per-tensor coords (operands, then the result) being simplified."""

    space: list[int]
    coords: list[tuple[Linear, ...]]
    splits: list[tuple[int, int]] = field(default_factory=list)
    """The splits applied, in order: (dim, divisor)."""
    splittable: tuple[int, ...] | None = None
    """The iteration dims that may be split (:meth:`ComputeOp.splittable_dims`); None: all."""

    def maps(self) -> list[AffineMap]:
        return [to_map(c, len(self.space)) for c in self.coords]


def _splittable(ix: Indexing) -> tuple[int, int] | None:
    """The first ``d_i floordiv c`` / ``d_i mod c`` with ``c`` a proper divisor of ``d_i``'s extent
    and ``d_i`` splittable."""
    for coords in ix.coords:
        for coord in coords:
            for atom in atoms(coord):
                if isinstance(atom, Dim) or atom.arg.const or len(atom.arg.terms) != 1:
                    continue
                (inner, k), c = atom.arg.terms[0], atom.divisor
                if isinstance(inner, Dim) and k == 1 and 1 < c < ix.space[inner.pos] and ix.space[inner.pos] % c == 0 \
                        and (ix.splittable is None or inner.pos in ix.splittable):
                    return inner.pos, c
    return None


def co_simplify(ix: Indexing) -> Indexing:
    """Rule 2: split iteration dims until no splittable division is left.

    A division of a dim that may not be split stays (a matmul's M, N or K): the view is then
    copied (rule 3).  A split dim's two halves may be split again."""
    while (found := _splittable(ix)) is not None:
        i, c = found
        space = ix.space[:i] + [c, ix.space[i] // c] + ix.space[i + 1:]
        env = [*(dim(j) for j in range(i)), dim(i + 1).scaled(c) + dim(i),
               *(dim(j + 1) for j in range(i + 1, len(ix.space)))]
        coords = [tuple(substitute(x, env, space) for x in cs) for cs in ix.coords]
        splittable = None if ix.splittable is None else \
            tuple(j + (j > i) for j in ix.splittable) + (i + 1,)
        ix = Indexing(space, coords, [*ix.splits, (i, c)], splittable)
    return ix


def _unaligned_division(ix: Indexing) -> tuple[int, int, int] | None:
    """The first ``(d_i + o) floordiv c`` / ``mod c`` that :func:`co_simplify` left (an offset
    ``o``, or an extent of ``d_i`` that ``c`` does not divide): ``(i, o, c)``."""
    for coords in ix.coords:
        for coord in coords:
            for atom in atoms(coord):
                if isinstance(atom, Dim) or len(atom.arg.terms) != 1:
                    continue
                (inner, k), c = atom.arg.terms[0], atom.divisor
                if isinstance(inner, Dim) and k == 1:
                    return inner.pos, atom.arg.const, c
    return None


@dataclass(frozen=True)
class Widened:
    """A copy widened to read whole blocks and whole sticks (rule 5 of spyre-fold-views): its
    indexing, its result's shape, and where the narrow copy's result starts in it."""

    indexing: Indexing
    shape: tuple[int, ...]
    offsets: tuple[int, ...]


def _misaligned_stick(coords: Sequence[Linear], storage: StickLayout) -> tuple[int, int] | None:
    """``(d, s)`` when ``coords`` read the stick dim of ``storage`` at ``d + o`` (plus whole sticks)
    with ``o`` ``s`` elements past a stick's start."""
    if storage.stick_dim is None:
        return None
    coord, eps = coords[storage.stick_dim], storage.elems_per_stick
    units = [a for a, k in coord.terms if k == 1]
    if len(units) != 1 or not isinstance(units[0], Dim) or coord.const % eps == 0 \
            or any(k % eps for _, k in coord.terms if k != 1):
        return None
    return units[0].pos, coord.const % eps


def _shifted(ix: Indexing, d: int, shift: int, extent: int) -> Indexing:
    """``ix`` with iteration dim ``d`` of ``extent`` positions starting ``shift`` earlier in its
    source coords (its result coords unchanged), co-simplified."""
    space = list(ix.space)
    space[d] = extent
    env = [dim(j) + constant(-shift if j == d else 0) for j in range(len(space))]
    source = tuple(substitute(x, env, space) for x in ix.coords[0])
    return co_simplify(Indexing(space, [source, ix.coords[1]], ix.splits))


def widen_copy_reads(ix: Indexing, storage: StickLayout) -> Widened | None:
    """A copy's ``[source coords, result coords]`` (its result read as is) widened until its source
    coords divide no iteration dim and start its storage's sticks at a stick's start, so that the
    SDSC can address them: a dim read as ``(d + o) floordiv c`` or ``mod c`` starts ``o`` positions
    earlier and ends at a whole block of ``c`` (it then splits in two, rule 2); a dim read at
    ``d + o`` on the storage's stick, ``o`` past a stick's start, starts that much earlier.
    ``x[:, None].expand(128, 3, 77).reshape(384, 77)[1:68]`` reads rows ``(d + 1) floordiv 3``: the
    widened copy writes rows ``3 * q + r`` from row ``q`` and the narrow result is its rows ``1 ..
    67``; ``b[16:32]`` of a 64-element ``b`` is rows ``16 .. 31`` of a copy of ``b[0:32]``.  The
    positions the wider copy adds lie in the blocks and sticks the narrow one reads, and must lie in
    the storage: None when a source coordinate leaves it, a widened dim is not one dim of the
    result, a division is left, or nothing needs widening."""
    shape = [value_range(c, ix.space)[1] + 1 for c in ix.coords[1]]
    offsets = [0] * len(shape)

    def result_dim(d: int) -> int | None:
        h = next((h for h, x in enumerate(ix.coords[1]) if x == dim(d)), None)
        return None if h is None or offsets[h] else h

    for _ in range(2 * len(ix.space)):
        found = _unaligned_division(ix)
        if found is None:
            break
        d, o, c = found
        h = result_dim(d)
        if h is None:
            return None
        shape[h], offsets[h] = c * -(-(o + ix.space[d]) // c), o
        ix = _shifted(ix, d, o, shape[h])
    if _division_left(ix.coords[0]) is not None:
        return None
    misaligned = _misaligned_stick(ix.coords[0], storage)
    if misaligned is not None:
        d, s = misaligned
        h = result_dim(d)
        if h is None:
            return None
        shape[h], offsets[h] = ix.space[d] + s, s
        ix = _shifted(ix, d, s, shape[h])
    if not ix.splits and misaligned is None:
        return None
    for coord, extent in zip(ix.coords[0], storage.host_shape):
        lo, hi = value_range(coord, ix.space)
        if lo < 0 or hi >= extent:
            return None
    return Widened(ix, tuple(shape), tuple(offsets))


def flattening(coords: Sequence[Linear], space: Sequence[int], shape: Sequence[int]) -> list[list[int]] | None:
    """The iteration dims each dim of a tensor of ``shape`` written at ``coords`` flattens,
    outermost first, when each coordinate is a row-major nest of whole iteration dims covering its
    extent (``10 * d2 + d1`` of a dim of 100 over ``d1, d2 < 10``; ``d0``; a constant 0 of a dim of
    one element) and each iteration dim is a term of exactly one; None otherwise."""
    nests = []
    for coord, extent in zip(coords, shape, strict=True):
        terms = sorted(coord.terms, key=lambda t: t[1])
        stride = 1
        for atom, k in terms:
            if not isinstance(atom, Dim) or k != stride:
                return None
            stride *= space[atom.pos]
        if coord.const or stride != extent:
            return None
        nests.append([a.pos for a, _ in reversed(terms)])
    if sorted(d for nest in nests for d in nest) != list(range(len(space))):
        return None
    return nests


def split_names(names: ArrayAttr, splits: Sequence[tuple[int, int]]) -> ArrayAttr:
    """``dims`` after the splits: the last name to the remainder dim, the others to the quotient."""
    dims = list(names.data)
    for i, _ in splits:
        split = dims[i].data
        inner, outer = (split[-1:], split[:-1]) if len(split) > 1 else (split, split)
        dims[i:i + 1] = [ArrayAttr(inner), ArrayAttr(outer)]
    return ArrayAttr(dims)



# --------------------------------------------------------------------------
# Copies of views
# --------------------------------------------------------------------------


def writes_in_place(op: ComputeOp) -> bool:
    return op.op_func().kind is not OpKind.DATA_MOVEMENT


def broadcasts_stick(op: ComputeOp) -> bool:
    """False when ``op`` cannot read an operand at a constant stick coordinate, so a view that
    needs one is copied: a matmul labels an operand's stick by an iteration dim only.  A pointwise
    op reads element 0 of the stick along its result's stick (DESIGN §10, ``scale_`` -2); a
    reduction's read is left to the lowering, which refuses what it cannot label (a copy feeding
    it would give a reduction over a stick of one element, which the SDSC cannot spell)."""
    return op.op_func().kind is not OpKind.MATMUL


def shared_hints(storage: SSAValue, reader: Operation) -> ArrayAttr | None:
    """The hints of a copy of ``storage`` made for ``reader``: those its producer and ``reader``
    both carry, so that spyre-coarse-tile tiles it with their group instead of stopping at it."""
    producer = storage.owner
    if not isinstance(producer, ComputeOp) or not isinstance(reader, ComputeOp):
        return None
    shared = [h for h in producer.get_hints() if h in reader.get_hints()]
    return ArrayAttr(shared) if shared else None


def materialise_view(rewriter: Rewriter, value: SSAValue, before: Operation,
                     storage_stick: int | None = None) -> RestickifyOp:
    """A ``spyre.restickify`` copy of the view ``value`` (explicit maps), inserted before ``before``.

    ``storage_stick`` is the stick dim of the view's storage (default: from its type).  A
    storage stick dim of extent 1 (one element per stick, as a stick reduction keeps it)
    that the view drops, and a dim the view fixes inside an iterated one
    (:func:`fixed_inner_dims`), get an iteration dim of their own, of extent 1, for their
    labels.  The copy takes the view's dim names and the hints :func:`shared_hints` gives it.
    """
    view = value.owner
    assert isinstance(view, ViewOp) and isinstance(value.type, TensorType)
    space = list(value.type.get_shape())
    identity = tuple(dim(i) for i in range(len(space)))
    read = read_through_views(value, identity, space)
    ix = co_simplify(Indexing(space, [read.coords, identity]))
    names = None if view.dims is None else list(split_names(view.dims, ix.splits).data)
    layout = tensor_layout(read.storage.type)
    stick = layout.stick_dim if storage_stick is None else storage_stick
    storage_shape = read.storage.type.get_shape()
    own = fixed_inner_dims(ix.coords[0], layout, ix.space)
    if stick is not None and storage_shape[stick] == 1 and not ix.coords[0][stick].terms:
        own.append(stick)
    for h in own:
        source = list(ix.coords[0])
        source[h] = dim(len(ix.space)) + source[h]
        ix = Indexing([*ix.space, 1], [tuple(source), ix.coords[1]])
        names = None if names is None else [*names, ArrayAttr([])]
    copy = RestickifyOp(read.storage, value.type)
    copy.set_indexing(ix.space, ix.maps())
    if names is not None:
        copy.dims = ArrayAttr(names)
    hints = shared_hints(read.storage, before)
    if hints is not None:
        copy.hints = hints
    copy.location = view.location
    rewriter.insert_op(copy, InsertPoint.before(before))
    return copy


def fold_indexing(op: ComputeOp) -> tuple[Indexing, list[Read]] | None:
    """The folded, co-simplified indexing of ``op``; None when nothing would change."""
    space, reads, result = op_reads(op)
    ix = co_simplify(Indexing(space, [*(r.coords for r in reads), result], splittable=op.splittable_dims()))
    if not ix.splits and not any(r.views for r in reads):
        return None
    return ix, reads


def _division_left(coords: Sequence[Linear]) -> Linear | None:
    """A coordinate that still divides an iteration dim (no layout label can describe it)."""
    return next((c for c in coords if any(not isinstance(a, Dim) for a in atoms(c))), None)


def unreadable_reason(op: ComputeOp, read: Read, coords: Sequence[Linear], layout: StickLayout,
                      space: Sequence[int]) -> str | None:
    """Why a view operand of ``op`` cannot be read in place with ``coords`` from a storage of
    ``layout``, or None when it can."""
    if not is_read_in_place(Read(read.storage, tuple(coords), read.views), layout):
        stick = coords[layout.stick_dim]
        return f"whose stick coordinate {to_expr(stick)} cannot be read in place"
    if layout.stick_dim is not None and not coords[layout.stick_dim].terms and not broadcasts_stick(op):
        stick = coords[layout.stick_dim]
        return f"whose stick coordinate {to_expr(stick)} is a constant, which the op cannot broadcast"
    divided = _division_left(coords)
    if divided is not None:
        return f"whose coordinate {to_expr(divided)} keeps a division of an iteration dim"
    fixed = fixed_inner_dims(coords, layout, space)
    if fixed:
        extent = layout.padded_host_shape[fixed[0]]
        return f"which fixes host dim {fixed[0]} ({extent} elements) inside a dim it iterates"
    if _moves_gathered_dim(op, read):
        return "whose rows are not the rows of its storage that the index addresses"
    if op.op_func().kind is OpKind.MATMUL:
        strided = next((c for h, c in enumerate(coords) if h != layout.stick_dim and steps_over(c)), None)
        if strided is not None:
            return (f"whose coordinate {to_expr(strided)} reads every k-th element, which a matmul cannot "
                    "(its labels leave none for the gap)")
    return None


def _moves_gathered_dim(op: ComputeOp, read: Read) -> bool:
    """Whether ``read`` is the table (or a store's destination) of an indirect access through a
    view that does not keep the dim the index addresses as that dim of its storage, one row per
    row (``[1, 16, H]`` viewed as ``[16, H]``: folded, the index would address the storage's dim
    of one row).  Such a view is copied; the access's dim names the copy's rows."""
    indirect = op.indirect_access()
    if indirect is None or not read.views or read.views[0].result is not op.operands[indirect.table]:
        return False
    value = read.views[0].result
    assert isinstance(value.type, TensorType)
    space = list(value.type.get_shape())
    own = read_through_views(value, [dim(i) for i in range(len(space))], space).coords
    gathered = dim(indirect.table_dim)
    return len(own) <= indirect.table_dim or own[indirect.table_dim] != gathered or any(
        isinstance(a, Dim) and a.pos == indirect.table_dim
        for j, c in enumerate(own) if j != indirect.table_dim for a in atoms(c))


def steps_over(coord: Linear) -> bool:
    """True when ``coord`` reads every k-th element for some k > 1: each coefficient a multiple of
    the smallest, which exceeds 1 (``d * 2 + 1``)."""
    if not coord.terms:
        return False
    step = min(k for _, k in coord.terms)
    return step > 1 and all(k % step == 0 for _, k in coord.terms)


def copy_reason(op: ComputeOp, index: int, layout_of: Callable[[SSAValue], StickLayout]) -> str | None:
    """Why :func:`fold_op` would copy view operand ``index`` of ``op`` rather than fold it (rule 3),
    or None; ``layout_of`` gives each storage's layout (spyre-stickify asks before it writes the
    types).  Only the first round of :func:`fold_op` is judged: after a copy it folds again."""
    folded = fold_indexing(op) if writes_in_place(op) else None
    if folded is None or not folded[1][index].views:
        return None
    ix, reads = folded
    return unreadable_reason(op, reads[index], ix.coords[index], layout_of(reads[index].storage), ix.space)
