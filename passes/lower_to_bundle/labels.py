# The layout labels of spyre-lower-to-bundle: an op's iteration dims named by SDSC
# labels, and each host dim of each of its tensors as labels (innermost first) with
# their scales and storage extents, read through the tensor's indexing map.  Reads a
# ComputeOp through its interface (iteration space, indexing maps, reduction dims, op
# func, indirect access) and where each tensor is stored; writes no IR.
"""Layout labels of one compute op's tensors (:class:`OpLabels`, used by :mod:`.op_spec`).

Each host dim of a tensor's storage becomes layout labels (``layoutDimOrder_``,
innermost first) through the tensor's indexing map:

* ``d_i + c``: the label of ``d_i`` (``c`` moves the window, see ``window``);
* ``c_0*d_0 + c_1*d_1 + ...`` nesting row-major (``c_0 = 1``, ``c_k+1 = c_k x
  extent(d_k)``, a view folded into the map): one label per term, innermost
  first, ``scale_`` 1 each; on the stick dim the innermost term must span whole
  sticks (it is the stick label, the outer terms count in elements of one step).
  The interpreter derives each label's byte stride from the extents inside it;
  the outermost term carries any back gap of the storage;
* a constant in a reduction's output where its input has a reduced dim: that
  dim's label with ``scale_`` -1 (-2 on the stick dim, which keeps the reduced
  dim that drives the input's stick: ``kept_dims``);
* a reduction's output also carries every reduced dim its storage has no dim
  for (no keepdim), ``scale_`` -1, placed where the input has it, so that both
  share one ``primaryDsInfo_`` entry (``reduction_result``);
* a constant in a size-1 host dim of a pointwise input where the output has
  iteration dims there: their labels, innermost first, with ``scale_`` -1, or
  -2 on the stick dim (broadcast: the tensor does not advance along the label;
  on the stick every position reads the stick's element 0);
* a constant stick coordinate otherwise (rank 0, or a pointwise input reading a
  sparse reduction result): the stick label of ``constant_stick``, -2;
* the gathered dim of a table read through an index (its coordinate is the
  index's value, the constant 0 in its map): the label of the entry dim that
  drives the index's stick, ``scale_`` -1 (one row per iteration point), with a
  back gap of the other rows, so that the table's extent there is its row count;
  an index that addresses blocks of rows (``index_step``) labels the blocks so,
  as the outermost term of that dim, outside the row inside the block (on the
  stick dim, the stick label: a block is whole sticks);
* a constant of more than one element inside a device dim the tensor steps along (a
  column of a tensor sticked on its rows, read between two sticks of rows): an iteration
  dim of one element spanning the whole dim (``enclosed_constants``), so that the strides
  around it keep its extent;
* any other constant (a size-1 dim, or a fixed index into a window): no label;
* ``k*d_0 + ...`` with every coefficient a multiple of ``k > 1``, off the stick dim (every
  k-th element: GPT-J's interleaved rotary pairs): the op gets an iteration dim of one
  element past its own for each such dim (``add_gap_dims``), the innermost term of that
  host dim with a back gap of ``k - 1``, so that the others nest row-major outside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir.affine import AffineExpr, AffineMap

from spyre_mlir.analysis.linear import affine_linear
from spyre_mlir.analysis.storage import TensorStorage
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.hardware import round_up
from spyre_mlir.layout import ABSENT
from spyre_mlir.opfuncs import OpKind

_LABELS = ("mb", "x", "y", "i", "j", "ki", "kj")
_MATMUL_LABELS = ("ki", "kj", "y", "x", "mb", "out", "in")


def sdsc_labels(rank: int, kind: OpKind) -> tuple[str, ...]:
    """SDSC dim labels of an iteration space of ``rank`` dims (DESIGN §10)."""
    if kind is OpKind.MATMUL:
        if rank > len(_MATMUL_LABELS):
            raise SpyreError(f"a matmul of iteration rank {rank} has no SDSC labels (at most 7)")
        return _MATMUL_LABELS[len(_MATMUL_LABELS) - rank:]
    if rank > len(_LABELS) + 1:
        raise SpyreError(f"an op of iteration rank {rank} has no SDSC labels (at most 8)")
    return (*_LABELS[:rank - 1], "out")


def _dim_plus_const(expr: AffineExpr) -> tuple[int | None, int] | None:
    """``(dim, c)`` for ``d_dim + c`` or ``(None, c)`` for a constant; None otherwise."""
    found = affine_linear(expr)
    if found is None or len(found.terms) > 1 or any(c != 1 for _, c in found.terms):
        return None
    return next(found.keys(), None), found.const


@dataclass(frozen=True)
class Term:
    """One iteration dim indexing (a part of) one host dim of a tensor's storage."""

    dim: int
    how: str
    """``dim`` (the tensor advances with it), ``reduced`` (a reduction's kept size-1 dim),
    ``broadcast`` (a size-1 operand dim read along the dim) or ``gathered`` (a table's dim
    addressed through the index: one row per iteration point)."""
    extent: int
    """Storage extent along this term, in elements (stick dims padded to whole sticks)."""


@dataclass
class LabelledTensor:
    """One tensor of the op, analysed: its layout labels (innermost first) and facts."""

    access: TensorStorage
    labels: list[str]
    scale: list[int]
    stick_label: str


class OpLabels:
    """An op's iteration space, indexing maps and SDSC labels, and the layout labels of each of its
    tensors (:meth:`tensor`)."""

    def __init__(self, op: ComputeOp, accesses: Sequence[TensorStorage]):
        self.op, self.accesses = op, accesses
        self.func = op.op_func()
        self.space = op.get_iteration_space()
        self.maps = op.get_indexing_maps()
        if not self.space:  # a rank-0 op: one 1-element dim carries every tensor's stick
            self.space = (1,)
            self.maps = tuple(AffineMap(1, 0, m.results) for m in self.maps)
        self.reduced = set(op.reduction_dims())
        self.labels = sdsc_labels(len(self.space), self.func.kind)
        self.out = len(self.maps) - 1
        self.indirect = op.indirect_access()
        self.gaps: tuple[int, ...] = ()
        """The gap dims (:meth:`add_gap_dims`), if the op has any."""
        self.add_gap_dims()

    def strided_dims(self, t: int) -> list[int]:
        """The host dims of tensor ``t``, not its stick dim, that no iteration dim steps one element
        at a time: every coefficient a multiple of the smallest, which exceeds 1 (``d * 2 + 1``, the
        odd elements: GPT-J's interleaved rotary pairs)."""
        layout, found = self.accesses[t].layout, []
        for h, expr in enumerate(self.maps[t].results):
            linear = affine_linear(expr)
            if h == layout.stick_dim or linear is None or linear.is_const():
                continue
            step = min(c for _, c in linear.terms)
            if step > 1 and all(c % step == 0 for _, c in linear.terms):
                found.append(h)
        return found

    def enclosed_constants(self, t: int) -> list[int]:
        """The host dims of tensor ``t`` it reads at a constant, of more than one element, inside a
        device dim it steps along (a column of a ``[33, 2]`` tensor sticked on its 33 rows: two
        sticks of rows, each holding both columns).  Unlabelled, such a dim would vanish from the
        strides of the dims around it; it takes a gap dim of one element instead."""
        layout, found = self.accesses[t].layout, []
        stepped = False
        for h, size in zip(layout.device_dims, layout.device_size):
            if h == ABSENT:
                continue
            linear = affine_linear(self.maps[t].results[h])
            constant = linear is not None and linear.is_const()
            if constant and stepped and h != layout.stick_dim and layout.padded_host_shape[h] > 1 \
                    and h not in found and not self.constant_terms(t, h):
                found.append(h)
            stepped = stepped or (not constant and size > 1)
        return found

    def add_gap_dims(self) -> None:
        """Give an op that reads or writes :meth:`strided_dims` dims iteration dims of one element
        past its own (labelled after theirs), the k-th for each tensor's k-th such dim: in that host
        dim it is the innermost term, stepping once over the smallest coefficient's elements (its
        back gap the rest), so that the strided term nests row-major outside it."""
        self.strided = {t: sorted({*self.strided_dims(t), *self.enclosed_constants(t)}) for t in range(len(self.maps))}
        """Each tensor's :meth:`strided_dims` and :meth:`enclosed_constants`."""
        count = max(map(len, self.strided.values()), default=0)
        if not count:
            return
        if self.func.kind is OpKind.MATMUL:
            t = next(t for t, dims in self.strided.items() if dims)
            raise self.error(f"{self.what(t)} is read or written every k-th element along host dim "
                             f"{self.strided[t][0]} (indexing map {self.maps[t]}), which a matmul cannot address")
        rank = len(self.space)
        unused = [label for label in _LABELS if label not in self.labels]
        if count > len(unused):
            raise self.error(f"an op of iteration rank {rank} reading every k-th element of {count} dims has "
                             "no SDSC labels to spare")
        self.gaps = tuple(range(rank, rank + count))
        self.space = (*self.space, *[1] * count)
        self.maps = tuple(AffineMap(rank + count, 0, m.results) for m in self.maps)
        self.labels = (*self.labels, *unused[:count])

    def error(self, msg: str) -> SpyreError:
        return SpyreError(f"cannot lower '{self.op.name}' ({self.func.name}) to SDSC: {msg}", op=self.op)

    def what(self, t: int) -> str:
        return "the result" if t == self.out else f"operand #{t}"

    def host_dim_terms(self, t: int, h: int) -> list[Term]:
        """The iteration dims indexing host dim ``h`` of tensor ``t``, innermost first.

        A host dim indexed by ``c_0*d_0 + c_1*d_1 + ... (+ constant)`` whose terms
        nest row-major (sorted by coefficient: ``c_0 = 1`` and each ``c_i+1 = c_i x
        extent(d_i)``) is several device dims, one label each; on the stick dim the
        innermost term must span whole sticks.
        """
        m, layout = self.maps[t], self.accesses[t].layout
        found = affine_linear(m.results[h])
        if found is None:
            raise self.error(f"indexing map {m} of {self.what(t)} is not a sum of scaled dims in host dim "
                             f"{h}; views must be folded (spyre-fold-views) or materialised")
        if found.is_const():
            if h in self.strided[t]:
                return [Term(self.gaps[self.strided[t].index(h)], "dim", layout.padded_host_shape[h])]
            return self.constant_terms(t, h)
        extent = layout.padded_host_shape[h]
        if h == layout.stick_dim:
            extent = round_up(extent, layout.elems_per_stick)
        ordered = sorted(found.terms, key=lambda dc: dc[1])
        if h in self.strided[t]:
            ordered.insert(0, (self.gaps[self.strided[t].index(h)], 1))
        gathered = self.stepped_dim(t) == h
        if gathered:  # the blocks the index addresses nest outside the row inside the block
            assert self.indirect is not None
            ordered.append((self.entry_dim(), self.indirect.step))
        terms, stride = [], 1
        for i, (dim, coefficient) in enumerate(ordered):
            # A window of a wider storage (a tile's strided bounding slice) steps by more than the
            # inner dims' sizes: the inner term's extent is then the next coefficient (a back gap).
            if coefficient != stride:
                raise self.error(f"host dim {h} of {self.what(t)} is indexed by {m.results[h]}, whose terms "
                                 f"do not nest row-major (coefficient {coefficient} of d{dim}, expected {stride})")
            inner = i < len(ordered) - 1
            step = self.space[dim]
            if inner:
                following = ordered[i + 1][1]
                if following % coefficient or following // coefficient < step:
                    raise self.error(f"host dim {h} of {self.what(t)} is indexed by {m.results[h]}, whose terms "
                                     f"do not nest row-major (coefficient {following} of d{ordered[i + 1][0]}, "
                                     f"expected a multiple of {coefficient * step})")
                step = following // coefficient
            if inner and i == 0 and h == layout.stick_dim and self.space[dim] % layout.elems_per_stick:
                raise self.error(f"host dim {h} of {self.what(t)} is indexed by {m.results[h]}: iteration dim "
                                 f"d{dim} of {self.space[dim]} elements shares a stick with another dim")
            if not inner and extent % coefficient:
                raise self.error(f"host dim {h} of {self.what(t)} has {extent} elements, not a multiple of "
                                 f"the stride {coefficient} of d{dim} in {m.results[h]}")
            how = "gathered" if gathered and not inner else "dim"
            terms.append(Term(dim, how, step if inner else extent // coefficient))
            stride *= step
        return terms

    def stepped_dim(self, t: int) -> int | None:
        """The host dim of tensor ``t`` the index addresses in blocks (``index_step``), if any."""
        if self.indirect is None or self.indirect.step == 1 or t not in self.tables():
            return None
        return self.indirect.table_dim

    def kept_dims(self) -> dict[int, int]:
        """A reduction's result host dims of extent 1 -> the reduced iteration dim each keeps.

        The result's stick keeps the dim that drives the operand's stick when that one is
        reduced (a stick reduction's sparse output); the others, in order, the reduced dim
        the operand has at the same host position, else the next one left.
        """
        out_map, source_map = self.maps[self.out], self.maps[0]
        kept = [h for h, e in enumerate(out_map.results) if _dim_plus_const(e) == (None, 0)]
        found: dict[int, int] = {}
        stick_in, stick_out = self.accesses[0].layout.stick_dim, self.accesses[self.out].layout.stick_dim
        driver = _dim_plus_const(source_map.results[stick_in]) if stick_in is not None else None
        if stick_out in kept and driver is not None and driver[0] in self.reduced:
            found[stick_out] = driver[0]
        for h in kept:
            if h in found:
                continue
            left = [d for d in sorted(self.reduced) if d not in found.values()]
            same = _dim_plus_const(source_map.results[h]) if h < len(source_map.results) else None
            if same is not None and same[0] in left:
                found[h] = same[0]
            elif left:
                found[h] = left[0]
        return found

    def constant_terms(self, t: int, h: int) -> list[Term]:
        """A constant host dim: a reduction's kept dim, a broadcast operand dim, or no label."""
        m, layout = self.maps[t], self.accesses[t].layout
        if self.indirect is not None and t in self.tables() and h == self.indirect.table_dim:
            return [Term(self.entry_dim(), "gathered", layout.padded_host_shape[h])]
        if t == self.out and self.func.kind is OpKind.REDUCTION:
            kept = self.kept_dims()
            if h in kept:
                return [Term(kept[h], "reduced", 1)]
        if t != self.out and self.func.kind is OpKind.POINTWISE and layout.host_shape[h] == 1:
            shift = len(self.maps[self.out].results) - len(m.results)
            target = affine_linear(self.maps[self.out].results[h + shift])
            if target is not None and not target.is_const() and not set(target.keys()) & set(m.used_dims()):
                return [Term(d, "broadcast", 1) for d, _ in sorted(target.terms, key=lambda dc: dc[1])]
        return []

    def tables(self) -> tuple[int, ...]:
        """The tensors addressed through the index: the table, and a store's result (its storage)."""
        assert self.indirect is not None
        return (self.indirect.table, self.out) if self.indirect.stores else (self.indirect.table,)

    def entry_dim(self) -> int:
        """The iteration dim that labels a table's gathered dim: the one driving the index's stick."""
        assert self.indirect is not None
        index = self.accesses[self.indirect.index].layout
        found = _dim_plus_const(self.maps[self.indirect.index].results[index.stick_dim])
        if found is None or found[0] is None or found[0] in self.indirect.data_dims:
            raise self.error("the index's stick must be driven by an entry dim of its own")
        return found[0]

    def tensor(self, t: int) -> LabelledTensor:
        layout = self.accesses[t].layout
        dims = layout.device_dims
        labels, scale, stick, constant_at = [], [], None, None
        for j in reversed(range(len(dims) - 1)):
            h = dims[j]
            if h == ABSENT:
                continue
            terms = self.host_dim_terms(t, h)
            if not terms and h == layout.stick_dim:
                constant_at = len(labels)
            for k, term in enumerate(terms):
                label = self.labels[term.dim]
                if label in labels:
                    raise self.error(f"{self.what(t)} is indexed twice by iteration dim {term.dim}")
                labels.append(label)
                is_stick = h == layout.stick_dim and k == 0
                sparse = is_stick and layout.host_shape[h] == 1 and self.space[term.dim] == 1
                if term.how == "gathered" and is_stick:
                    raise self.error(f"{self.what(t)} is read through the index along its stick dim")
                scale.append(1 if term.how == "dim" and not sparse else -2 if is_stick else -1)
                if is_stick:
                    stick = label
        if stick is None and (layout.stick_dim is None or constant_at is not None):
            stick = self.constant_stick(t)
            if stick in labels:
                stick = None
            elif stick is not None:
                at = len(labels) if constant_at is None else constant_at
                labels.insert(at, stick)
                scale.insert(at, -2)
        if stick is None:
            raise self.error(f"the stick dim of {self.what(t)} is not indexed by any iteration dim")
        return LabelledTensor(self.accesses[t], labels, scale, stick)

    def constant_stick(self, t: int) -> str | None:
        """The stick label (``scale_`` -2) of a tensor of rank 0 or read at a constant stick
        coordinate (a sparse reduction result, one element per stick): for a reduction's result,
        the reduced dim that drives the operand's stick; for a pointwise operand, the result's
        stick label (every position along it reads element 0 of the stick)."""
        if t == self.out and self.func.kind is OpKind.REDUCTION:
            stick_in = self.accesses[0].layout.stick_dim
            driver = _dim_plus_const(self.maps[0].results[stick_in]) if stick_in is not None else None
            return self.labels[driver[0]] if driver is not None and driver[0] in self.reduced else None
        if not self.op.get_iteration_space():
            return self.labels[0]
        if t != self.out and self.func.kind is OpKind.POINTWISE:
            return self.tensor(self.out).stick_label
        return None

    def reduction_result(self, result: LabelledTensor, source: LabelledTensor) -> LabelledTensor:
        """A reduction's result in the back end's form: sticked on its input's stick label (the
        reduced one with ``scale_`` -2 for a reduction over the stick: a sparse result), and
        labelled with every reduced dim.  A reduced dim its storage has no dim for (no keepdim)
        gets ``scale_`` -1 at its place among the input's labels, so that the two tensors'
        labels agree and share one ``primaryDsInfo_`` entry (appended outermost if the kept
        labels run in another order)."""
        if result.stick_label != source.stick_label:
            raise self.error(f"the result is sticked on '{result.stick_label}', its operand on "
                             f"'{source.stick_label}': a reduction keeps its operand's stick (over the "
                             "stick, a sparse result sticked on a kept size-1 dim)")
        missing = [self.labels[d] for d in sorted(self.reduced) if self.labels[d] not in result.labels]
        if not missing:
            return result
        labels = [label for label in source.labels if label in result.labels or label in missing]
        if [label for label in labels if label in result.labels] != result.labels:
            labels = [*result.labels, *(label for label in source.labels if label in missing)]
        labels += [label for label in missing if label not in labels]
        scale = [result.scale[result.labels.index(label)] if label in result.labels else -1 for label in labels]
        return LabelledTensor(result.access, labels, scale, result.stick_label)
