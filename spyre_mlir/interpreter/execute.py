# One sdsc_execute on the simulated device: binds the symbols, accesses every
# tensor on all used cores at once (with the address checks), reads all
# inputs, runs the op func with numpy on all cores' slices together (a leading
# core axis), combines partial results of cores that share an output slice,
# and writes the outputs.  Reads SdscSpec records and device memory; writes
# device memory and statistics.
"""Executing one SDSC file on the simulated device.

All cores read before any core writes (in-place ops are safe).  A reduction's
output listed in ``inputLabeledDs`` is its accumulator, not a data input: the
result does not depend on the output's previous contents.  Reductions mask
``coordinateMasking_`` padding with the file's mask value (``samv-maskvalue``;
the op func's identity where a torch-spyre file holds a placeholder: sum/mean 0,
max -inf, min +inf); mean multiplies the sum by its ``scaling_factor`` constant
(1 / the unpadded element count).  An input broadcast along a reduced dim (no
label, or ``scale_`` -1) counts once per position of it: the op iterates every
dim of ``N_``.  Cores whose work slices differ only in dims the output does not
keep form a cohort: their partial results are merged with the op func's
``combine`` (in core order) and written once.  Cores with the same whole slice
(a replicated op, ``core_replicas``) each compute it into their own LX.

Broadcast reads (our convention; no reference shows one): an input label with
``scale_`` -1 has extent 1 and is broadcast along the iteration dim; with -2
(the stick dim) the input holds one element per stick and every position of
the label reads element 0 of its stick -- the mirror of a reduction's sparse
output, which writes the value at element 0 and zeros in the rest of the stick.
An index and a matmul's operands read such a stick the same way (one token id
sticked on a sequence of one; A sticked on a K of one element).
Scalar inputs of a pointwise op func (``mul``'s ``y`` in ``x * 2``) and
parameters (``clip``'s ``min``) come from ``constantInfo_`` entries of that
``name_``; the tensors of ``inputLabeledDs`` supply the other inputs in order.
An indirect access (an ``identity`` with an ``indirectAccessIndexLabeledDs_``
index) reads, at every iteration point, the row of its value table that the
int32 index holds there: the table's gathered label addresses rows (``1 +
backGapCore_`` of them) through the index, not through the work slice, and an
index outside them is an error.
Data movement (``ReStickifyOpHBM``) copies: out = in, element by element
through both tensors' layouts.  Matmul contracts in float32 with one
``np.matmul`` over all cores, over K padded to whole sticks (``N_``): B's
padded K rows are zeros (the compiler gives a padded B a zeroed buffer), A's K
padding is whatever A's writer left there.  torch-spyre states that the device
masks A's elements beyond the true K; the SDSC does not carry the true K, so
this does not mask: a non-finite value in A's padding (``1 / x`` or ``log(x)``
of zero padding feeding the matmul) makes the result NaN here, conservatively.

Arrays of all cores have a leading core axis in ``spec.cores`` order, of
length 1 when every core reads the same bytes (a weight every core uses):
numpy broadcasting then computes it once.  What depends only on the file (an
:class:`SdscKernel`) is derived once per loaded directory; an
:class:`SdscExecutor` runs it on one device.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from spyre_mlir.diagnostics import SpyreError, op_location
from spyre_mlir.dialects.sdscbundle import SdscExecuteOp
from spyre_mlir.interpreter.addressing import Geometry, Placement, TensorAccess, access_tensor, geometry
from spyre_mlir.interpreter.control import Execution
from spyre_mlir.interpreter.device import Device
from spyre_mlir.interpreter.sdsc import MASK_VALUE, SCALE_KEPT, SCALE_STICK_REDUCED, SdscSpec
from spyre_mlir.interpreter.stats import OpStats
from spyre_mlir.opfuncs import OpKind, lookup

StartPlan = dict[str, tuple[int, ...]]
"""Per tensor, per core: where its start is among an ``sdsc_execute``'s operand values
followed by the file's numeric starts (:attr:`SdscKernel.numbers`)."""

_CORE_AXIS = "core"
"""The label of the leading core axis in contractions."""


class SdscKernel:
    """One SDSC file, ready to execute: geometries, cohorts and masks, plus caches of the
    symbol plan of each ``sdsc_execute`` and of start placements (for one device configuration)."""

    def __init__(self, spec: SdscSpec):
        self.spec = spec
        self.geometries = {name: geometry(spec, t) for name, t in spec.tensors.items()}
        op = spec.op
        self.scalars = {name: spec.constants[name] for name in op.inputs
                        if op.kind is OpKind.POINTWISE and name in spec.constants}
        """Op func inputs given as ``constantInfo_`` scalars instead of tensors."""
        self.params = op.bound_params(spec.constants)
        arity = {OpKind.POINTWISE: op.arity - len(self.scalars), OpKind.MATMUL: 2}.get(op.kind, 1)
        if len(spec.inputs) != arity:
            raise SpyreError(f"op func '{spec.op_name}' takes {arity} tensor inputs besides its scalar "
                             f"constants {sorted(self.scalars)}, computeOp_ lists {len(spec.inputs)}",
                             loc=spec.filename)
        if op.averages and "scaling_factor" not in spec.constants:
            raise SpyreError(f"op func '{spec.op_name}' needs the constant 'scaling_factor' (1 / the reduced "
                             "element count) in constantInfo_", loc=spec.filename)
        stored = spec.tensors[spec.table].gathered if spec.stores else None
        if spec.masking and op.kind is not OpKind.REDUCTION and set(spec.masking) != {stored}:
            raise SpyreError(f"coordinateMasking_ on the {op.kind.value} op '{spec.op_name}' is not supported "
                             "(but on a row store's entries)", loc=spec.filename)
        out = spec.tensors[spec.outputs[0]]
        self.reduced = tuple(label for label in spec.labels if label != stored
                             and (label not in out.scale or out.scale[label] != SCALE_KEPT))
        """Iteration dims the output does not keep (cores differing only there share an output slice):
        a reduction's output labels them with ``scale_`` -1 or -2 (torch-spyre's form, checked when
        the file is read), a matmul's output lacks its contraction dim."""
        if op.kind in (OpKind.POINTWISE, OpKind.DATA_MOVEMENT):
            dropped = next((label for label in self.reduced if spec.core_sizes[label] > 1), None)
            if dropped is not None:
                raise SpyreError(f"{out.name}: the output of '{spec.op_name}' does not keep label "
                                 f"'{dropped}', which each core iterates over {spec.core_sizes[dropped]} elements "
                                 "(only a reduction or a matmul drops a label)", loc=spec.filename)
        self.full_shape = tuple(1 if label in self.reduced else spec.core_sizes[label] for label in spec.labels)
        """Per-core shape of a result over all iteration dims."""
        self.cohorts = _cohorts(spec, self.reduced)
        """Positions (in ``spec.cores``) of the cores sharing each output slice, in core order."""
        self.cohort_of = [k for i in range(len(spec.cores)) for k, cohort in enumerate(self.cohorts) if i in cohort]
        """The cohort of each core position."""
        self.placements: dict[str, dict[tuple[int, ...], Placement]] = {name: {} for name in spec.tensors}
        self.numbers = tuple(sorted({s for t in spec.tensors.values() for s in t.starts.values() if s >= 0}))
        """The starts the file gives as numbers rather than symbols."""
        self.plans: dict[SdscExecuteOp, StartPlan] = {}
        self.masks: dict[tuple[str, int], np.ndarray] = {}

    # 1. Symbols: every symbol the file uses bound exactly once, nothing else bound (checked once per op).
    def starts(self, execution: Execution) -> dict[str, tuple[int, ...]]:
        """Each tensor's start on each used core in ``execution``."""
        plan = self.plans.get(execution.op)
        if plan is None:
            plan = self.plans[execution.op] = self._plan(execution.op)
        values = execution.values + self.numbers
        return {name: tuple(map(values.__getitem__, positions)) for name, positions in plan.items()}

    def _plan(self, op: SdscExecuteOp) -> StartPlan:
        spec, symbol_ids = self.spec, op.get_symbol_ids()
        where = op_location(op) or "bundle.mlir"
        used = spec.symbols()
        for symbol, (tensor, core) in used.items():
            if symbol not in symbol_ids:
                raise SpyreError(f"symbol {symbol} (start address of {tensor} on core {core} in {spec.filename}) "
                                 "is not bound by this sdsc_execute", loc=where)
        for symbol in symbol_ids:
            if symbol not in used:
                raise SpyreError(f"sdsc_execute binds symbol {symbol}, which {spec.filename} does not use",
                                 loc=where)
        position = {**{symbol: i for i, symbol in enumerate(symbol_ids)},
                    **{number: len(symbol_ids) + i for i, number in enumerate(self.numbers)}}
        return {name: tuple(position[t.starts[core]] for core in spec.cores) for name, t in spec.tensors.items()}

    # 2. Accesses with the address checks.
    def access(self, name: str, starts: tuple[int, ...], device: Device) -> TensorAccess:
        """Tensor ``name`` on every used core, starting at ``starts``."""
        return access_tensor(self.spec, self.geometries[name], starts, device, self.placements[name])

    # 3. The op func on all cores' slices, in float32.
    def compute(self, inputs: list[np.ndarray]) -> np.ndarray:
        """The op func on the inputs (``spec.inputs`` order, as read): the full-rank result of every core."""
        spec, op = self.spec, self.spec.op
        geometries = [self.geometries[name] for name in spec.inputs]
        if op.kind is OpKind.MATMUL:
            return self._matmul(geometries, inputs)
        full = [self._full_rank(g, x) for g, x in zip(geometries, inputs)]
        if op.kind is OpKind.REDUCTION:
            axes = tuple(1 + spec.labels.index(label) for label in self.reduced)
            x = self._masked(self._over_reduced(full[0], axes))
            if op.averages:
                return np.sum(x, axis=axes, keepdims=True) * np.float32(spec.constants["scaling_factor"])
            return op.compute(x, axis=axes)
        tensors = iter(full)
        args = [np.float32(self.scalars[name]) if name in self.scalars else next(tensors) for name in op.inputs]
        return np.asarray(op.compute(*args, **self.params), dtype=np.float32)

    def _over_reduced(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        """``x`` repeated along the reduced ``axes`` it is broadcast along (extent 1): the op iterates
        every reduced dim over its per-core extent and adds a broadcast input once per position."""
        shape = list(x.shape)
        for axis in axes:
            shape[axis] = self.spec.core_sizes[self.spec.labels[axis - 1]]
        return np.broadcast_to(x, shape)

    def _full_rank(self, g: Geometry, values: np.ndarray) -> np.ndarray:
        """``values`` with size-1 axes for the iteration dims the tensor lacks or is broadcast along.

        A label with ``scale_`` -1 has one element; with -2 (broadcast along the
        stick) only element 0 of the stick is read.
        """
        scale = g.tensor.scale
        values = _stick_elements(g, values)
        return values.reshape([len(values)] + [g.core_extent[label] if label in g.dims and scale[label] == SCALE_KEPT
                                               else 1 for label in self.spec.labels])

    def _over_stick(self, g: Geometry, values: np.ndarray) -> np.ndarray:
        """``values`` (a leading core axis, then ``g``'s dims) with element 0 of a stick of ``scale_``
        -2 at every position of its label (a matmul's A sticked on a K of one element)."""
        shape = [len(values), *(self.spec.core_sizes[label] if g.tensor.scale[label] == SCALE_STICK_REDUCED
                                else n for label, n in zip(g.dims, values.shape[1:]))]
        return np.broadcast_to(_stick_elements(g, values), shape)

    def _matmul(self, geometries: list[Geometry], inputs: list[np.ndarray]) -> np.ndarray:
        """Both operands' cores in one contraction; an operand every core shares has no core axis.

        An output label neither operand has (M = 1: a constant row coordinate has no label)
        does not change the product: the result is the same along it."""
        inputs = [self._over_stick(g, x) for g, x in zip(geometries, inputs)]
        dims = [((_CORE_AXIS,) if len(x) > 1 else ()) + g.dims for g, x in zip(geometries, inputs)]
        operands = [x if len(x) > 1 else x[0] for x in inputs]
        per_core = any(len(x) > 1 for x in inputs)
        kept = [label for label in self.spec.labels if label not in self.reduced]
        read = {*dims[0], *dims[1]}
        out = ((_CORE_AXIS,) if per_core else ()) + tuple(label for label in kept if label in read)
        result = _contract(operands[0], dims[0], operands[1], dims[1], out)
        cores = len(result) if per_core else 1
        shape = [n if label not in self.reduced and label in read else 1
                 for label, n in zip(self.spec.labels, self.full_shape)]
        return np.broadcast_to(result.reshape((cores, *shape)), (cores, *self.full_shape))

    def _masked(self, x: np.ndarray) -> np.ndarray:
        """``x`` with padded coordinates (``coordinateMasking_``) set to the file's mask value (the
        op's identity where the file holds none)."""
        spec = self.spec
        value = np.float32(spec.constants.get(MASK_VALUE, spec.op.identity))
        for label in spec.masking:
            axis = 1 + spec.labels.index(label)
            mask = self._mask(label, x.shape[axis])
            if mask.any():
                shape = [1] * x.ndim
                shape[0], shape[axis] = mask.shape
                x = np.where(mask.reshape(shape), value, x)
        return x

    def _mask(self, label: str, extent: int) -> np.ndarray:
        """Per core, which of its ``extent`` coordinates along ``label`` are padding (cores x extent)."""
        key = (label, extent)
        if key not in self.masks:
            spec = self.spec
            pad = np.concatenate([np.r_[np.zeros(v, bool), np.ones(p, bool)] for v, p in spec.masking[label]])
            firsts = [spec.slices[core][label] * spec.core_sizes[label] for core in spec.cores]
            self.masks[key] = np.stack([pad[first: first + extent] for first in firsts])
        return self.masks[key]

    def gather(self, table: TensorAccess, index: TensorAccess) -> np.ndarray:
        """An indirect access: every core's rows of ``table`` at the values of ``index``, the full-rank
        result of every core (float32).  An index outside the table's rows is an error.  A row
        of one element is a sparse stick (``scale_`` -2): its element 0 is read."""
        spec, g = self.spec, table.geometry
        label = g.tensor.gathered
        assert label is not None
        if not table.placement.shared:
            raise SpyreError(f"{g.tensor.name}: the cores start the table at different addresses; a "
                             "table read through an index is shared by all cores at one base", loc=spec.filename)
        rows = 1 + g.tensor.back_gap.get(label, 0)
        sparse = {d: 1 for d in g.dims if g.tensor.scale[d] == SCALE_STICK_REDUCED}
        read = table.read_rows(label, rows)[(slice(None), *(slice(0, 1) if d in sparse else slice(None)
                                                            for d in g.dims))]
        values = self._over_labels(g, read, {label: rows, **sparse})
        indices = self._full_rank(index.geometry, index.read_indices())
        bad = (indices < 0) | (indices >= rows)
        if bad.any():
            position = np.argwhere(bad)[0]
            raise SpyreError(f"{index.geometry.tensor.name}: index {int(indices[tuple(position)])} on core "
                             f"{spec.cores[position[0]]} is outside the {rows} rows of {g.tensor.name}",
                             loc=spec.filename)
        return np.take_along_axis(values, indices, axis=1 + spec.labels.index(label))

    def scatter(self, table: TensorAccess, index: TensorAccess, rows: np.ndarray) -> None:
        """A row store: every core's ``rows`` (its slice of the op's input, float32) into ``table``
        at the values of ``index``.  An index outside the table's rows, or two entries of one
        execution naming one row, is an error before any row is written."""
        spec = self.spec
        label = table.geometry.tensor.gathered
        assert label is not None
        if not table.placement.shared:
            raise SpyreError(f"{table.geometry.tensor.name}: the cores start the table at different addresses; a "
                             "table written through an index is shared by all cores at one base", loc=spec.filename)
        count = 1 + table.geometry.tensor.back_gap.get(label, 0)
        indices = index.read_indices().reshape(len(spec.cores), -1)[:, :spec.core_sizes[label]]
        if label in spec.masking:  # entries past the valid ones (padding to whole sticks) write nothing
            valid = ~self._mask(label, indices.shape[1])
            indices = np.where(valid, indices, -1)
        elif spec.core_sizes[label] * spec.splits.get(label, 1) != spec.sizes[label]:
            raise AssertionError(f"{spec.filename}: a row store's entries do not cover N_")
        bad = (indices < -1) | (indices >= count) | ((indices == -1) & (label not in spec.masking))
        if bad.any():
            position = np.argwhere(bad)[0]
            raise SpyreError(f"{index.geometry.tensor.name}: index {int(indices[tuple(position)])} on core "
                             f"{spec.cores[position[0]]} is outside the {count} rows of {table.geometry.tensor.name}",
                             loc=spec.filename)
        distinct = np.unique(indices, axis=0)  # cores that hold the same entries write the same rows
        written = distinct[distinct >= 0]
        if len(np.unique(written)) != written.size:
            raise SpyreError(f"{index.geometry.tensor.name}: two entries name one row of "
                             f"{table.geometry.tensor.name}; a row store writes each row once", loc=spec.filename)
        table.write_rows(label, count, np.broadcast_to(rows, (len(spec.cores), *rows.shape[1:])), indices)

    def _over_labels(self, g: Geometry, values: np.ndarray, extents: dict[str, int]) -> np.ndarray:
        """``values`` (a leading core axis, then ``g``'s dims) with an axis per iteration dim: its
        per-core extent (or ``extents``') where the tensor has the dim, else 1."""
        return values.reshape([len(values)] + [extents.get(label, g.core_extent[label]) if label in g.dims else 1
                                               for label in self.spec.labels])

    # 4. Outputs: one result per cohort, as the output tensor's per-core arrays.
    @property
    def shared(self) -> bool:
        """Some cores share an output slice."""
        return len(self.cohorts) < len(self.spec.cores)

    def check_cohort_starts(self, access: TensorAccess) -> None:
        """The cores of each cohort write to one start, and the op func can combine their results."""
        spec, g = self.spec, access.geometry
        for cohort in self.cohorts:
            first = cohort[0]
            for i in cohort[1:]:
                if access.starts[i] != access.starts[first]:
                    raise SpyreError(f"{g.tensor.name}: cores {spec.cores[first]} and {spec.cores[i]} compute parts "
                                     f"of the same output slice but write to {access.starts[first]:#x} and "
                                     f"{access.starts[i]:#x}", loc=spec.filename)
        if self.shared and spec.op.combine is None:
            cores = [spec.cores[i] for i in next(c for c in self.cohorts if len(c) > 1)]
            raise SpyreError(f"{g.tensor.name}: cores {cores} share an output slice, but op func "
                             f"'{spec.op_name}' has no combine", loc=spec.filename)

    def output_values(self, g: Geometry, partials: np.ndarray) -> np.ndarray:
        """One output array per cohort (a leading 1 when all are the same): partial results merged
        with ``combine`` in core order, in the output tensor's per-core shape (sparse sticks: value first)."""
        labels = self.spec.labels
        batch = len(partials) if partials.ndim == len(labels) + 1 else 1
        full = (batch, *self.full_shape)
        result = partials if partials.shape == full else np.broadcast_to(partials, full)
        if self.shared:
            result = self._combine(result)
        kept = result.reshape((len(result), *(n for n, label in zip(self.full_shape, labels) if label in g.dims)))
        if kept.shape[1:] == g.logical_shape:
            return kept
        out = np.zeros((len(result), *g.logical_shape), np.float32)
        out[(slice(None), *(slice(0, n) for n in kept.shape[1:]))] = kept
        return out

    def _combine(self, partials: np.ndarray) -> np.ndarray:
        assert self.spec.op.combine is not None
        combine = lookup(self.spec.op.combine).compute
        partials = np.broadcast_to(partials, (len(self.spec.cores), *partials.shape[1:]))
        return np.stack([functools.reduce(combine, (partials[i] for i in cohort)) for cohort in self.cohorts])


class SdscExecutor:
    """Runs the executions of one :class:`SdscKernel` on one device, counting into ``stats``."""

    def __init__(self, kernel: SdscKernel, device: Device, stats: OpStats):
        self.kernel, self.spec, self.device, self.stats = kernel, kernel.spec, device, stats

    def run(self, execution: Execution, index: int) -> None:
        """Execute once; ``index`` numbers the execution in the bundle run."""
        spec, kernel = self.spec, self.kernel
        starts = kernel.starts(execution)
        names = (*spec.inputs, *spec.outputs, *(() if spec.index is None else (spec.index,)))
        accesses = {name: kernel.access(name, starts[name], self.device) for name in names}
        self._check_lx_reads([accesses[name] for name in spec.inputs])
        if spec.stores:
            assert spec.index is not None and spec.table is not None
            kernel.scatter(accesses[spec.table], accesses[spec.index], self._read(accesses[spec.inputs[0]]))
            self.stats.hbm_bytes_read += accesses[spec.index].geometry.nbytes * len(spec.cores)
            self.stats.hbm_bytes_written += accesses[spec.inputs[0]].geometry.nbytes * len(spec.cores)
            self._finish(execution, index, accesses)
            return
        if spec.index is None:
            result = kernel.compute([self._read(accesses[name]) for name in spec.inputs])
        else:
            assert spec.table is not None
            index, table = accesses[spec.index], accesses[spec.table]
            result = kernel.gather(table, index)
            self.stats.hbm_bytes_read += index.geometry.nbytes * len(spec.cores) + \
                result.size * table.geometry.tensor.word_bytes
        self._store(accesses[spec.outputs[0]], result, index)
        self._finish(execution, index, accesses)

    def _finish(self, execution: Execution, index: int, accesses: dict[str, TensorAccess]) -> None:
        spec = self.spec
        self.stats.executions += 1
        self.stats.cores_used = max(self.stats.cores_used, len(spec.cores))
        if self.stats.log is not None:
            self.stats.log.record(spec, self.stats, execution, index,
                                  {name: access.per_core() for name, access in accesses.items()})

    def _check_lx_reads(self, inputs: Sequence[TensorAccess]) -> None:
        """Every LX input slice holds one written value; else the error of the first core and input."""
        lx = [a for a in inputs if a.geometry.tensor.component == "lx"]
        if all(self.device.lx_reads_ok(a.cores, a.starts, a.geometry.span) for a in lx):
            return
        for i, core in enumerate(self.spec.cores):
            for a in lx:
                problem = self.device.lx_read_check(core, a.starts[i], a.starts[i] + a.geometry.span)
                if problem:
                    raise SpyreError(f"{a.geometry.tensor.name} on core {core}: {problem}", loc=self.spec.filename)
        raise AssertionError(f"{self.spec.filename}: an LX read check failed that no core fails")

    def _read(self, access: TensorAccess) -> np.ndarray:
        g = access.geometry
        if g.tensor.component == "lx":
            self.stats.lx_bytes_read += g.nbytes * len(access.cores)
        else:
            self.stats.hbm_bytes_read += g.nbytes * len(access.cores)
        return access.read()

    def _store(self, access: TensorAccess, partials: np.ndarray, index: int) -> None:
        """Write each cohort's result once to HBM, or into every core's own LX."""
        spec, kernel, g = self.spec, self.kernel, access.geometry
        value = (self.device.new_lx_value(f"{g.tensor.name} of {spec.filename} (execution {index})")
                 if g.tensor.component == "lx" else 0)
        if kernel.shared:
            kernel.check_cohort_starts(access)
        values = kernel.output_values(g, partials)
        if g.tensor.component == "hbm":
            access.write(values, [cohort[0] for cohort in kernel.cohorts] if kernel.shared else None)
            self.stats.hbm_bytes_written += g.nbytes * len(kernel.cohorts)
            return
        access.write(values[kernel.cohort_of] if kernel.shared and len(values) > 1 else values)
        self.device.lx_write_all(access.cores, access.starts, g.span, value)
        self.stats.lx_bytes_written += g.nbytes * len(access.cores)
        for core, start in zip(access.cores, access.starts):
            self.stats.note_lx_end(core, start + g.span)


def _cohorts(spec: SdscSpec, reduced: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    """Positions of the cores whose work slices agree on every kept dim, grouped, in core order.
    Cores with the same whole slice are replicas (each computes it into its own LX): the k-th
    replica of each slice joins the k-th cohort of its kept dims."""
    groups: dict[tuple[int, ...], list[int]] = {}
    replicas: dict[tuple[int, ...], int] = {}
    for i, core in enumerate(spec.cores):
        whole = tuple(spec.slices[core].values())
        replica = replicas[whole] = replicas.get(whole, -1) + 1
        key = (*(v for label, v in spec.slices[core].items() if label not in reduced), replica)
        groups.setdefault(key, []).append(i)
    return tuple(tuple(group) for group in groups.values())


def _stick_elements(g: Geometry, values: np.ndarray) -> np.ndarray:
    """``values`` (a leading core axis, then ``g``'s dims) with only element 0 of each stick of
    ``scale_`` -2 (the one element such a stick holds)."""
    return values[(slice(None), *(slice(0, 1) if g.tensor.scale[label] == SCALE_STICK_REDUCED else slice(None)
                                  for label in g.dims))]


def _contract(a: np.ndarray, a_dims: Sequence[str], b: np.ndarray, b_dims: Sequence[str],
              out_dims: Sequence[str]) -> np.ndarray:
    """``einsum(a_dims, b_dims -> out_dims)`` as ``np.matmul`` of (batch..., rows, inner) by
    (batch..., inner, columns).

    The core axis is always a batch axis (an operand without it broadcasts), so each core's
    product is its own GEMM, as on the device (and small enough that BLAS runs it in the
    calling thread).  A dim in one operand only and not in the output goes to einsum.
    """
    batch = [d for d in out_dims if d == _CORE_AXIS or (d in a_dims and d in b_dims)]
    rows = [d for d in out_dims if d in a_dims and d not in batch]
    cols = [d for d in out_dims if d in b_dims and d not in batch]
    inner = [d for d in a_dims if d in b_dims and d not in out_dims]
    if not set(a_dims) <= {*batch, *rows, *inner} or not set(b_dims) <= {*batch, *cols, *inner}:
        letters = {d: chr(ord("a") + i) for i, d in enumerate(dict.fromkeys([*a_dims, *b_dims]))}
        spec = ",".join("".join(letters[d] for d in dims) for dims in (a_dims, b_dims))
        return np.einsum(f"{spec}->{''.join(letters[d] for d in out_dims)}", a, b)
    size = {**dict(zip(a_dims, a.shape)), **dict(zip(b_dims, b.shape))}

    def grouped(x: np.ndarray, dims: Sequence[str], first: list[str], second: list[str]) -> np.ndarray:
        order = [d for d in batch if d in dims] + first + second
        return x.transpose([list(dims).index(d) for d in order]).reshape(
            [size[d] if d in dims else 1 for d in batch]
            + [math.prod(size[d] for d in first), math.prod(size[d] for d in second)])

    product = np.matmul(grouped(a, a_dims, rows, inner), grouped(b, b_dims, inner, cols))
    result_dims = [*batch, *rows, *cols]
    return product.reshape([size[d] for d in result_dims]).transpose([result_dims.index(d) for d in out_dims])
