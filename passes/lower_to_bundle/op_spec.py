# IR -> OpSpec for one compute op, the translation step of spyre-lower-to-bundle:
# SDSC labels, padded sizes, per-core slices and start offsets, layout labels,
# back gaps, masking.  Reads a ComputeOp through its interface (iteration
# space, indexing maps, reduction dims, op func, core splits) and where each
# tensor is stored; writes OpSpec records.
"""Building the OpSpec of one compute op (used by ``spyre-lower-to-bundle``).

Each tensor of the op (operands, then result) is a :class:`TensorStorage`: its
storage (layout, memory, placement) and the host coordinates of its window's
first element inside that storage.  Addresses follow DESIGN §6: device memory
is row-major over the storage layout's ``device_size``; a core's start is the
byte address of the first element of its work slice.

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
* any other constant (a size-1 dim, or a fixed index into a window): no label;
* ``k*d_0 + ...`` with every coefficient a multiple of ``k > 1``, off the stick dim (every
  k-th element: GPT-J's interleaved rotary pairs): the op gets an iteration dim of one
  element past its own (``add_gap_dim``), the innermost term of that host dim with a back
  gap of ``k - 1``, so that the others nest row-major outside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir.affine import AffineExpr, AffineMap

from spyre_mlir.analysis.linear import affine_linear
from spyre_mlir.analysis.storage import TensorStorage
from spyre_mlir.analysis.work import core_to_slice, slice_order
from spyre_mlir.codegen.opspec import ArgSpec, OpSpec
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, Memory
from spyre_mlir.hardware import DLFLOAT16_MAX, element_bytes, encode_scalar, round_up
from spyre_mlir.layout import ABSENT, device_offset
from spyre_mlir.limits import ALIGNMENT
from spyre_mlir.opfuncs import OpKind

_LABELS = ("mb", "x", "y", "i", "j", "ki", "kj")
_MATMUL_LABELS = ("ki", "kj", "y", "x", "mb", "out", "in")
_DS_TYPES = ("OUTPUT", "KERNEL", "INPUT", "KERNEL_IDX")
_MATMUL_DS_TYPES = ("INPUT", "KERNEL", "OUTPUT")


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
class _Term:
    """One iteration dim indexing (a part of) one host dim of a tensor's storage."""

    dim: int
    how: str
    """``dim`` (the tensor advances with it), ``reduced`` (a reduction's kept size-1 dim),
    ``broadcast`` (a size-1 operand dim read along the dim) or ``gathered`` (a table's dim
    addressed through the index: one row per iteration point)."""
    extent: int
    """Storage extent along this term, in elements (stick dims padded to whole sticks)."""


@dataclass
class _Tensor:
    """One tensor of the op, analysed: its layout labels (innermost first) and facts."""

    access: TensorStorage
    labels: list[str]
    scale: list[int]
    stick_label: str


class _SpecBuilder:
    def __init__(self, op: ComputeOp, accesses: Sequence[TensorStorage], cores: int):
        self.op, self.accesses, self.cores = op, accesses, cores
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
        self.gap: int | None = None
        """The gap dim (:meth:`add_gap_dim`), if the op has one."""
        self.add_gap_dim()

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

    def add_gap_dim(self) -> None:
        """Give an op that reads or writes a :meth:`strided_dims` dim an iteration dim of one
        element past its own (labelled after theirs): in each such host dim it is the innermost
        term, stepping once over the smallest coefficient's elements (its back gap the rest), so
        that the strided term nests row-major outside it."""
        if self.func.kind is OpKind.MATMUL or not any(self.strided_dims(t) for t in range(len(self.maps))):
            return
        rank = len(self.space)
        if rank + 1 > len(_LABELS) + 1:
            raise self.error(f"an op of iteration rank {rank} reading every k-th element has no SDSC label to spare")
        unused = [label for label in _LABELS if label not in self.labels]
        self.gap = rank
        self.space = (*self.space, 1)
        self.maps = tuple(AffineMap(rank + 1, 0, m.results) for m in self.maps)
        self.labels = (*self.labels, unused[0])

    def error(self, msg: str) -> SpyreError:
        return SpyreError(f"cannot lower '{self.op.name}' ({self.func.name}) to SDSC: {msg}", op=self.op)

    def what(self, t: int) -> str:
        return "the result" if t == self.out else f"operand #{t}"

    def host_dim_terms(self, t: int, h: int) -> list[_Term]:
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
            return self.constant_terms(t, h)
        extent = layout.padded_host_shape[h]
        if h == layout.stick_dim:
            extent = round_up(extent, layout.elems_per_stick)
        ordered = sorted(found.terms, key=lambda dc: dc[1])
        if self.gap is not None and h in self.strided_dims(t):
            ordered.insert(0, (self.gap, 1))
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
            terms.append(_Term(dim, "dim", step if inner else extent // coefficient))
            stride *= step
        return terms

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

    def constant_terms(self, t: int, h: int) -> list[_Term]:
        """A constant host dim: a reduction's kept dim, a broadcast operand dim, or no label."""
        m, layout = self.maps[t], self.accesses[t].layout
        if self.indirect is not None and t in self.tables() and h == self.indirect.table_dim:
            return [_Term(self.entry_dim(), "gathered", layout.padded_host_shape[h])]
        if t == self.out and self.func.kind is OpKind.REDUCTION:
            kept = self.kept_dims()
            if h in kept:
                return [_Term(kept[h], "reduced", 1)]
        if t != self.out and self.func.kind is OpKind.POINTWISE and layout.host_shape[h] == 1:
            shift = len(self.maps[self.out].results) - len(m.results)
            target = affine_linear(self.maps[self.out].results[h + shift])
            if target is not None and not target.is_const() and not set(target.keys()) & set(m.used_dims()):
                return [_Term(d, "broadcast", 1) for d, _ in sorted(target.terms, key=lambda dc: dc[1])]
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

    def tensor(self, t: int) -> _Tensor:
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
        return _Tensor(self.accesses[t], labels, scale, stick)

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

    def reduction_result(self, result: _Tensor, source: _Tensor) -> _Tensor:
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
        return _Tensor(result.access, labels, scale, result.stick_label)

    def padded_sizes(self, tensors: Sequence[_Tensor]) -> list[int]:
        """``N_``: the labels tensors advance along their sticks by, padded to whole sticks.

        A reduced or broadcast stick (``scale_`` -2) holds one element and pads nothing.
        """
        eps = [1] * len(self.space)
        for t in tensors:
            if t.scale[t.labels.index(t.stick_label)] != 1:
                continue
            i = self.labels.index(t.stick_label)
            eps[i] = max(eps[i], t.access.layout.elems_per_stick)
        return [round_up(s, e) for s, e in zip(self.space, eps)]

    def check_extents(self, sizes: Sequence[int]) -> None:
        """Every tensor's storage holds all the op addresses of it.

        The op iterates the padded sizes (``N_``), so a tensor that steps along a padded
        iteration dim is read or written that far too; its layout must cover it (stick
        padding, ``padded_shape``), else the op would touch the bytes of its neighbours.
        """
        for t, (m, access) in enumerate(zip(self.maps, self.accesses)):
            layout = access.layout
            for h, expr in enumerate(m.results):
                linear = affine_linear(expr)  # linear: tensor(t) checked every host dim
                assert linear is not None
                last = access.window[h] + linear.const + sum(c * (sizes[d] - 1) for d, c in linear.terms if c > 0)
                extent = layout.padded_host_shape[h]
                if h == layout.stick_dim:
                    extent = round_up(extent, layout.elems_per_stick)
                if last >= extent:
                    raise self.error(f"{self.what(t)} is addressed up to element {last} of host dim {h}, past its "
                                     f"storage extent {extent} (the op iterates the padded sizes {list(sizes)}); "
                                     "its layout lacks the padding the op needs")

    def check_result_keeps(self, result: _Tensor, sizes: Sequence[int]) -> None:
        """The result of a pointwise or data-movement op is labelled by every iteration dim the op
        iterates over more than one element (padding included): only a reduction or a matmul
        drops a dim.
        A dim of extent 1 padded to a whole stick (an operand sticked on it) that the result
        lacks would make each element of the result many values."""
        if self.func.kind in (OpKind.REDUCTION, OpKind.MATMUL):
            return
        stored = self.entry_dim() if self.indirect is not None and self.indirect.stores else None
        for d, label in enumerate(self.labels):
            if sizes[d] > 1 and label not in result.labels and d != stored:
                raise self.error(f"the result is not indexed by iteration dim d{d}, which the op iterates over "
                                 f"{sizes[d]} elements (the {self.space[d]} of its extent padded to whole sticks "
                                 "of an operand sticked on it)")

    def splits(self, sizes: Sequence[int]) -> list[int]:
        splits = list(self.op.get_core_splits() or (1,) * len(self.op.get_iteration_space() or (1,)))
        splits += [1] * (len(self.space) - len(splits))
        if math.prod(splits) > self.cores:
            raise self.error(f"core_splits {splits} need {math.prod(splits)} cores, only {self.cores} available")
        for i, (size, split) in enumerate(zip(sizes, splits)):
            if size % split:
                raise self.error(f"core split {split} does not divide the padded size {size} of "
                                 f"iteration dim {i} ('{self.labels[i]}')")
        return splits

    def core_offsets(self, t: int, starts: Sequence[Sequence[int]]) -> list[int]:
        access = self.accesses[t]
        layout, offsets = access.layout, []
        linears = [affine_linear(e) for e in self.maps[t].results]  # all linear: tensor(t) checked each host dim
        for point in starts:
            coords = [w + lin.const + sum(c * point[d] for d, c in lin.terms)
                      for w, lin in zip(access.window, linears)]
            offset = device_offset(layout, coords)
            if offset % ALIGNMENT:
                raise self.error(f"core start of {self.what(t)} at host coordinates {coords} is not "
                                 f"{ALIGNMENT}-byte aligned; core splits must give whole sticks")
            offsets.append(offset)
        return offsets

    def back_gap(self, t: _Tensor, sizes: Sequence[int], index: int) -> dict[str, int]:
        """``backGapCore_``: per label, the elements its storage extent holds beyond the padded
        size the op iterates (a window of a bigger tensor, a term nested inside the next).

        A term whose padded size exceeds its storage extent (an inner term of ``b * 100 + l``
        with ``l`` padded to 128: its label would step ``b`` by 128 rows, not 100) is an error.
        """
        layout = t.access.layout
        gaps, rows = {}, {}
        for h in layout.device_dims[:-1]:
            if h == ABSENT:
                continue
            terms = self.host_dim_terms(index, h)
            for term, outer in zip(terms, [*terms[1:], None]):
                if term.how == "dim" and term.extent < sizes[term.dim]:
                    steps = "the storage" if outer is None else f"d{outer.dim}"
                    raise self.error(f"host dim {h} of {self.what(index)} is indexed by "
                                     f"{self.maps[index].results[h]}: iteration dim d{term.dim} is padded to "
                                     f"{sizes[term.dim]} elements, more than the {term.extent} {steps} steps over")
                if term.how == "dim":
                    gaps[self.labels[term.dim]] = term.extent - sizes[term.dim]
                elif term.how == "gathered":  # the rows past the one the label reads at a time
                    rows[self.labels[term.dim]] = term.extent - 1
        kept = {label: gaps[label] for label, scale in zip(t.labels, t.scale) if label in gaps and scale == 1}
        kept.update(rows)
        return kept if any(kept.values()) else {}

    def build(self, new_symbol: Callable[[], int]) -> OpSpec:
        tensors = [self.tensor(t) for t in range(len(self.maps))]
        if self.func.kind is OpKind.REDUCTION:
            tensors[self.out] = self.reduction_result(tensors[self.out], tensors[0])
        sizes = self.padded_sizes(tensors)
        self.check_extents(sizes)
        self.check_result_keeps(tensors[self.out], sizes)
        splits = self.splits(sizes)
        order = slice_order(self.op) or (0,)  # a rank-0 op iterates one 1-element dim
        order = (*order, *range(len(order), len(self.space)))  # the gap dim, last
        cores = math.prod(splits)
        per_core = [s // n for s, n in zip(sizes, splits)]
        starts = [[i * p for i, p in zip(sl, per_core)] for sl in core_to_slice(splits, order, cores)]
        ds_types = self.ds_types(tensors)
        args = []
        positions = sdsc_tensors(self.op)
        for t, info in enumerate(tensors):
            if t not in positions:
                continue
            layout = info.access.layout
            if info.access.memory is Memory.LX:  # every core's LX holds its own slice at the planned offset
                offsets = [info.access.placement.value.data] * cores
            else:
                offsets = self.core_offsets(t, starts)
            if info.access.memory is Memory.HBM:
                ids: dict[int, int] = {}
                for o in offsets:
                    if o not in ids:
                        ids[o] = new_symbol()
                symbols = tuple(ids[o] for o in offsets)
            else:
                symbols = ()
            args.append(ArgSpec(
                name=f"Tensor{positions.index(t)}", role="output" if t == self.out else "input", ds_type=ds_types[t],
                data_format=layout.data_format, word_length=element_bytes(layout.dtype),
                device_size=tuple(layout.device_size), layout_labels=tuple(info.labels),
                stick_label=info.stick_label, stick_size=layout.elems_per_stick, scale=tuple(info.scale),
                memory=info.access.memory, placement=info.access.placement,
                core_offsets=tuple(offsets), symbols=symbols, back_gap=self.back_gap(info, sizes, t)))
        consts, mask = self.consts(), self.mask(tensors[0], sizes)
        self.check_encodable({**consts, **({"mask value": mask["value"]} if mask else {})},
                             tensors[self.out].access.layout.data_format)
        indirect = {} if self.indirect is None else {
            "index": positions.index(self.indirect.index),
            "table": positions.index(self.out if self.indirect.stores else self.indirect.table),
            "label": self.labels[self.entry_dim()]}
        return OpSpec(op_func=self.func.name, sdsc_op=self.sdsc_op(tensors[0]), ex_unit=self.func.ex_unit,
                      kind=self.func.kind.value, labels=self.labels, sizes=tuple(sizes),
                      valid_sizes=tuple(self.space), splits=tuple(splits),
                      slice_order=tuple(self.labels[d] for d in order),
                      args=tuple(args), consts=consts, mask=mask, indirect=indirect)

    def check_encodable(self, constants: dict[str, float], data_format: str) -> None:
        """Every constant has a bit pattern in the op's data format (the SDSC holds them so): an
        infinite scalar of an fp16 op is an error at the op, not at write time."""
        for name, value in constants.items():
            try:
                encode_scalar(value, data_format)
            except SpyreError as e:
                raise self.error(f"constant '{name}': {e.msg}") from None

    def ds_types(self, tensors: Sequence[_Tensor]) -> list[str]:
        matmul = self.func.kind is OpKind.MATMUL
        order = list(range(len(tensors))) if matmul else [self.out, *range(self.out)]
        names = _MATMUL_DS_TYPES if matmul else _DS_TYPES
        keys: dict[tuple, str] = {}
        types = [""] * len(tensors)
        if self.indirect is not None:  # torch-spyre's label of an index
            order.remove(self.indirect.index)
            types[self.indirect.index] = "KERNEL_IDX"
            names = names[:-1]
            if self.indirect.stores:  # a store's destination is its output's storage, no SDSC tensor
                order.remove(self.indirect.table)
        for t in order:
            info = tensors[t]
            key = (info.stick_label, tuple(info.labels), info.access.layout.elems_per_stick)
            if key not in keys:
                if len(keys) == len(names):
                    raise self.error(f"more than {len(names)} distinct operand layouts")
                keys[key] = names[len(keys)]
            types[t] = keys[key]
        return types

    def sdsc_op(self, source: _Tensor) -> str:
        if self.func.kind is not OpKind.REDUCTION:
            return self.func.name
        stick_dim = self.labels.index(source.stick_label)
        return self.func.name if stick_dim in self.reduced else f"{self.func.name}nonstick"

    def mask(self, source: _Tensor, sizes: Sequence[int]) -> dict[str, object]:
        if self.indirect is not None and self.indirect.stores:  # a store writes no padding entry
            entry = self.entry_dim()
            if sizes[entry] == self.space[entry]:
                return {}
            return {"label": self.labels[entry], "valid": self.space[entry], "pad": sizes[entry] - self.space[entry],
                    "value": 0.0}
        if self.func.kind is not OpKind.REDUCTION:
            return {}
        i = self.labels.index(source.stick_label)
        if i not in self.reduced or sizes[i] == self.space[i]:
            return {}
        assert self.func.identity is not None
        value = float(self.func.identity)
        if not math.isfinite(value) and source.access.layout.data_format == "SEN169_FP16":
            value = math.copysign(DLFLOAT16_MAX, value)  # DLFloat16 holds no infinity
        return {"label": self.labels[i], "valid": self.space[i], "pad": sizes[i] - self.space[i],
                "value": value}

    def consts(self) -> dict[str, float]:
        """Scalar inputs and parameters of the op func; for an averaging reduction (mean) the
        ``scaling_factor`` the back end multiplies the sum by: 1 / the reduced (unpadded) count."""
        if self.func.averages:
            return {"scaling_factor": 1.0 / math.prod(self.space[d] for d in self.reduced)}
        return {k: float(v) for k, v in self.op.const_values().items()}


def sdsc_tensors(op: ComputeOp) -> tuple[int, ...]:
    """The positions (operands, then the result) of ``op``'s tensors that are SDSC tensors: all but
    a row store's destination, which is its output's storage (written in place)."""
    count = len(op.inputs) + 1
    indirect = op.indirect_access()
    skipped = indirect.table if indirect is not None and indirect.stores else None
    return tuple(t for t in range(count) if t != skipped)


def build_op_spec(op: ComputeOp, accesses: Sequence[TensorStorage], cores: int,
                  new_symbol: Callable[[], int]) -> OpSpec:
    """The OpSpec of ``op`` whose tensors (operands, then result) live at ``accesses``.

    ``new_symbol()`` hands out the next free negative symbol id.
    """
    return _SpecBuilder(op, accesses, cores).build(new_symbol)
