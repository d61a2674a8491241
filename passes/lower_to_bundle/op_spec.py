# IR -> OpSpec for one compute op, the translation step of spyre-lower-to-bundle:
# padded sizes, per-core slices and start offsets, back gaps, masking, over the
# layout labels of labels.py.  Reads a ComputeOp through its interface (iteration
# space, indexing maps, reduction dims, op func, core splits) and where each
# tensor is stored; writes OpSpec records.
"""Building the OpSpec of one compute op (used by ``spyre-lower-to-bundle``).

Each tensor of the op (operands, then result) is a :class:`TensorStorage`: its
storage (layout, memory, placement) and the host coordinates of its window's
first element inside that storage.  Addresses follow DESIGN §6: device memory
is row-major over the storage layout's ``device_size``; a core's start is the
byte address of the first element of its work slice.

Each host dim of a tensor's storage becomes layout labels through the tensor's
indexing map (:mod:`.labels`); this module adds the padded sizes, core splits,
per-core start offsets, back gaps and masking.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

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
from spyre_mlir.passes.lower_to_bundle.labels import LabelledTensor, OpLabels

_DS_TYPES = ("OUTPUT", "KERNEL", "INPUT", "KERNEL_IDX")
_MATMUL_DS_TYPES = ("INPUT", "KERNEL", "OUTPUT")


class _SpecBuilder(OpLabels):
    """The OpSpec of one compute op: its tensors' labels (:class:`OpLabels`) on ``cores`` cores."""

    def __init__(self, op: ComputeOp, accesses: Sequence[TensorStorage], cores: int):
        super().__init__(op, accesses)
        self.cores = cores

    def padded_sizes(self, tensors: Sequence[LabelledTensor]) -> list[int]:
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

    def check_result_keeps(self, result: LabelledTensor, sizes: Sequence[int], splits: Sequence[int]) -> None:
        """The result of a pointwise or data-movement op is labelled by every iteration dim the op
        iterates over more than one element (padding included), and steps along it (``scale_`` 1)
        wherever a core iterates it over more than one: only a reduction or a matmul drops a dim.
        A dim of extent 1 padded to a whole stick (an operand sticked on it) that the result
        lacks, or holds one element per stick of (a sparse stick), would make each element of the
        result many values."""
        if self.func.kind in (OpKind.REDUCTION, OpKind.MATMUL):
            return
        stored = self.entry_dim() if self.indirect is not None and self.indirect.stores else None
        for d, label in enumerate(self.labels):
            if d == stored:
                continue
            dropped = sizes[d] > 1 and label not in result.labels
            sparse = sizes[d] // splits[d] > 1 and label in result.labels and \
                result.scale[result.labels.index(label)] != 1
            if dropped or sparse:
                how = "indexed by" if dropped else "stepped along (it holds one element per stick of)"
                raise self.error(f"the result is not {how} iteration dim d{d}, which the op iterates over "
                                 f"{sizes[d]} elements (the {self.space[d]} of its extent padded to whole sticks "
                                 "of an operand sticked on it)")

    def splits(self, sizes: Sequence[int]) -> list[int]:
        splits = list(self.op.get_core_splits() or (1,) * len(self.op.get_iteration_space() or (1,)))
        splits += [1] * (len(self.space) - len(splits))
        replicas = self.op.get_core_replicas()
        if math.prod(splits) * replicas > self.cores:
            times = f" times core_replicas {replicas}" if replicas > 1 else ""
            raise self.error(f"core_splits {splits}{times} need {math.prod(splits) * replicas} cores, "
                             f"only {self.cores} available")
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

    def back_gap(self, t: LabelledTensor, sizes: Sequence[int], index: int) -> dict[str, int]:
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
            self.check_sparse_result(tensors[0], tensors[self.out])
        sizes = self.padded_sizes(tensors)
        self.check_extents(sizes)
        splits = self.splits(sizes)
        self.check_result_keeps(tensors[self.out], sizes, splits)
        order = slice_order(self.op) or (0,)  # a rank-0 op iterates one 1-element dim
        order = (*order, *range(len(order), len(self.space)))  # the gap dim, last
        replicas = self.op.get_core_replicas()
        if replicas > 1 and tensors[self.out].access.memory is not Memory.LX:
            raise self.error(f"it is replicated on {replicas} cores per slice (core_replicas), which only a "
                             "result in each core's LX allows; its result is in HBM")
        cores = math.prod(splits) * replicas
        per_core = [s // n for s, n in zip(sizes, splits)]
        starts = [[i * p for i, p in zip(sl, per_core)] for sl in core_to_slice((*splits, replicas), order, cores)]
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
                      valid_sizes=tuple(self.space), splits=tuple(splits), replicas=replicas,
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

    def ds_types(self, tensors: Sequence[LabelledTensor]) -> list[str]:
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

    def check_sparse_result(self, source: LabelledTensor, result: LabelledTensor) -> None:
        """A sparse result (``scale_`` -2: one element per stick) is a reduction over the stick's;
        a reduction off the stick of an operand held one element per stick (sticked on a dim of
        one element) would write one, which the back end refuses (``<op>nonstick`` has no -2)."""
        if self.sdsc_op(source) != self.func.name and -2 in result.scale:
            raise self.error(f"its operand is sticked on '{source.stick_label}', a dim of one element (one element "
                             "per stick), and it reduces another dim: its result would be sparse, which only a "
                             "reduction over the stick writes")

    def sdsc_op(self, source: LabelledTensor) -> str:
        if self.func.kind is not OpKind.REDUCTION:
            return self.func.name
        stick_dim = self.labels.index(source.stick_label)
        return self.func.name if stick_dim in self.reduced else f"{self.func.name}nonstick"

    def mask(self, source: LabelledTensor, sizes: Sequence[int]) -> dict[str, object]:
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
