# One sdsc_execute on the simulated device: binds the symbols, builds every
# core's accesses (with the address checks), reads all inputs, runs the op
# func with numpy on each core's whole slice, combines partial results of
# cores that share an output slice, and writes the outputs.  Reads SdscSpec
# records and device memory; writes device memory and statistics.
"""Executing one SDSC file on the simulated device.

All cores read before any core writes (in-place ops are safe).  A reduction's
output listed in ``inputLabeledDs`` is its accumulator, not a data input: the
result does not depend on the output's previous contents.  Reductions mask
``coordinateMasking_`` padding with the op func's identity (sum/mean 0, max
-inf, min +inf); mean divides by the unpadded element count.  Cores whose
work slices differ only in dims the output does not keep form a cohort: their
partial results are merged with the op func's ``combine`` and written once.

Broadcast reads (our convention; no reference shows one): an input label with
``scale_`` -1 has extent 1 and is broadcast along the iteration dim; with -2
(the stick dim) the input holds one element per stick and every position of
the label reads element 0 of its stick -- the mirror of a reduction's sparse
output, which writes the value at element 0 and zeros in the rest of the stick.
Scalar inputs of a pointwise op func (``mul``'s ``y`` in ``x * 2``) and
parameters (``clip``'s ``min``) come from ``constantInfo_`` entries of that
``name_``; the tensors of ``inputLabeledDs`` supply the other inputs in order.
Data movement (``ReStickifyOpHBM``) copies: out = in, element by element
through both tensors' layouts.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np

from spyre_mlir.diagnostics import SpyreError, op_location
from spyre_mlir.interpreter.addressing import Access, Geometry, check_origins, core_access, geometry
from spyre_mlir.interpreter.control import Execution
from spyre_mlir.interpreter.device import Device
from spyre_mlir.interpreter.sdsc import SCALE_KEPT, SCALE_STICK_REDUCED, SdscSpec
from spyre_mlir.interpreter.stats import OpStats
from spyre_mlir.opfuncs import OpKind, lookup


class SdscExecutor:
    """Runs the executions of one SDSC file; geometry is computed once per file."""

    def __init__(self, spec: SdscSpec, device: Device, stats: OpStats):
        self.spec, self.device, self.stats = spec, device, stats
        self.geometries = {name: geometry(spec, t) for name, t in spec.tensors.items()}
        op = spec.op
        self.scalars = {name: spec.constants[name] for name in op.inputs
                        if op.kind is OpKind.POINTWISE and name in spec.constants}
        """Op func inputs given as ``constantInfo_`` scalars instead of tensors."""
        self.params = {**op.params, **{k: v for k, v in spec.constants.items() if k in op.params}}
        arity = {OpKind.POINTWISE: op.arity - len(self.scalars), OpKind.MATMUL: 2}.get(op.kind, 1)
        if len(spec.inputs) != arity:
            raise SpyreError(f"op func '{spec.op_name}' takes {arity} tensor inputs besides its scalar "
                             f"constants {sorted(self.scalars)}, computeOp_ lists {len(spec.inputs)}",
                             loc=spec.filename)
        if spec.masking and op.kind is not OpKind.REDUCTION:
            raise SpyreError(f"coordinateMasking_ on the {op.kind.value} op '{spec.op_name}' is not supported",
                             loc=spec.filename)
        out = spec.tensors[spec.outputs[0]]
        self.reduced = tuple(label for label in spec.labels
                             if label not in out.scale or out.scale[label] != SCALE_KEPT)
        """Iteration dims the output does not keep (cores differing only there share an output slice)."""

    def run(self, execution: Execution, index: int) -> None:
        """Execute once; ``index`` numbers the execution in the bundle run."""
        spec = self.spec
        values = self._bind(execution)
        accesses = {name: self._accesses(name, values) for name in (*spec.inputs, *spec.outputs)}
        partials = {core: self._compute(core, [accesses[n][core] for n in spec.inputs]) for core in spec.cores}
        self._store(accesses[spec.outputs[0]], partials, index)
        self.stats.executions += 1
        self.stats.cores_used = max(self.stats.cores_used, len(spec.cores))

    # 1. Symbols: every symbol the file uses bound exactly once, nothing else bound.
    def _bind(self, execution: Execution) -> dict[int, int]:
        spec, bound = self.spec, execution.bindings
        where = op_location(execution.op) or "bundle.mlir"
        used = spec.symbols()
        for symbol, (tensor, core) in used.items():
            if symbol not in bound:
                raise SpyreError(f"symbol {symbol} (start address of {tensor} on core {core} in {spec.filename}) "
                                 "is not bound by this sdsc_execute", loc=where)
        for symbol in bound:
            if symbol not in used:
                raise SpyreError(f"sdsc_execute binds symbol {symbol}, which {spec.filename} does not use",
                                 loc=where)
        return bound

    # 2. Per-core accesses with the address checks, then the LX read checks.
    def _accesses(self, name: str, symbols: Mapping[int, int]) -> dict[int, Access]:
        spec, g = self.spec, self.geometries[name]
        out = {}
        for core in spec.cores:
            start = g.tensor.starts[core]
            out[core] = core_access(spec, g, core, symbols[start] if start < 0 else start, self.device)
        check_origins(spec, list(out.values()))
        return out

    def _read(self, a: Access) -> np.ndarray:
        g = a.geometry
        if g.tensor.component == "lx":
            problem = self.device.lx_read_check(a.core, a.start, a.start + g.span)
            if problem:
                raise SpyreError(f"{g.tensor.name} on core {a.core}: {problem}", loc=self.spec.filename)
            self.stats.lx_bytes_read += g.nbytes
        else:
            self.stats.hbm_bytes_read += g.nbytes
        return a.read()

    # 3. The op func on one core's slice, in float32.
    def _compute(self, core: int, inputs: list[Access]) -> np.ndarray:
        spec, op = self.spec, self.spec.op
        if op.kind is OpKind.MATMUL:
            return self._matmul(inputs)
        full = [self._full_rank(a.geometry, self._read(a)) for a in inputs]
        if op.kind is OpKind.REDUCTION:
            x = self._masked(core, full[0])
            axes = tuple(spec.labels.index(label) for label in self.reduced)
            if op.averages:
                count = math.prod(self._valid(label) for label in self.reduced)
                return np.sum(x, axis=axes, keepdims=True) / np.float32(count)
            return op.compute(x, axis=axes)
        tensors = iter(full)
        args = [np.float32(self.scalars[name]) if name in self.scalars else next(tensors) for name in op.inputs]
        return np.asarray(op.compute(*args, **self.params), dtype=np.float32)

    def _full_rank(self, g: Geometry, values: np.ndarray) -> np.ndarray:
        """``values`` with size-1 axes for the iteration dims the tensor lacks or is broadcast along.

        A label with ``scale_`` -1 has one element; with -2 (broadcast along the
        stick) only element 0 of the stick is read.
        """
        scale = g.tensor.scale
        values = values[tuple(slice(0, 1) if scale[label] == SCALE_STICK_REDUCED else slice(None)
                              for label in g.dims)]
        return values.reshape([g.core_extent[label] if label in g.dims and scale[label] == SCALE_KEPT else 1
                               for label in self.spec.labels])

    def _matmul(self, inputs: list[Access]) -> np.ndarray:
        spec = self.spec
        letters = {label: chr(ord("a") + i) for i, label in enumerate(spec.labels)}
        a, b = (self._read(x) for x in inputs)
        subscripts = ",".join("".join(letters[d] for d in x.geometry.dims) for x in inputs)
        out = "".join(letters[label] for label in spec.labels if label not in self.reduced)
        result = np.einsum(f"{subscripts}->{out}", a, b, optimize=True)
        return self._full_rank_of_kept(result)

    def _full_rank_of_kept(self, kept: np.ndarray) -> np.ndarray:
        return kept.reshape([1 if label in self.reduced else self.spec.core_sizes[label]
                             for label in self.spec.labels])

    def _masked(self, core: int, x: np.ndarray) -> np.ndarray:
        """``x`` with padded coordinates (``coordinateMasking_``) set to the op's identity."""
        spec = self.spec
        for label, segments in spec.masking.items():
            axis = spec.labels.index(label)
            pad = np.concatenate([np.r_[np.zeros(v, bool), np.ones(p, bool)] for v, p in segments])
            first = spec.slices[core][label] * spec.core_sizes[label]
            mask = pad[first: first + x.shape[axis]]
            if mask.any():
                shape = [1] * x.ndim
                shape[axis] = mask.size
                x = np.where(mask.reshape(shape), np.float32(spec.op.identity), x)
        return x

    def _valid(self, label: str) -> int:
        segments = self.spec.masking.get(label)
        return sum(v for v, _ in segments) if segments else self.spec.sizes[label]

    # 4. Outputs: combine the partial results of each cohort, write once.
    def _store(self, accesses: dict[int, Access], partials: dict[int, np.ndarray], index: int) -> None:
        spec = self.spec
        g = next(iter(accesses.values())).geometry
        cohorts: dict[tuple[int, ...], list[int]] = {}
        for core in spec.cores:
            key = tuple(v for label, v in spec.slices[core].items() if label not in self.reduced)
            cohorts.setdefault(key, []).append(core)
        combine = lookup(spec.op.combine).compute if spec.op.combine else None
        value = (self.device.new_lx_value(f"{g.tensor.name} of {spec.filename} (execution {index})")
                 if g.tensor.component == "lx" else 0)
        for cores in cohorts.values():
            first = accesses[cores[0]]
            for core in cores[1:]:
                if accesses[core].start != first.start:
                    raise SpyreError(f"{g.tensor.name}: cores {cores[0]} and {core} compute parts of the same "
                                     f"output slice but write to {first.start:#x} and {accesses[core].start:#x}",
                                     loc=spec.filename)
            if len(cores) > 1 and combine is None:
                raise SpyreError(f"{g.tensor.name}: cores {cores} share an output slice, but op func "
                                 f"'{spec.op_name}' has no combine", loc=spec.filename)
            result = functools.reduce(combine, (partials[c] for c in cores)) if len(cores) > 1 else partials[cores[0]]
            values = self._output_values(g, result)
            if g.tensor.component == "hbm":
                first.write(values)
                self.stats.hbm_bytes_written += g.nbytes
                continue
            for core in cores:  # each core's own LX
                accesses[core].write(values)
                self.device.lx_write(core, first.start, first.start + g.span, value)
                self.stats.lx_bytes_written += g.nbytes
                self.stats.note_lx_end(core, first.start + g.span)

    def _output_values(self, g: Geometry, result: np.ndarray) -> np.ndarray:
        """The full-rank result as the output tensor's per-core array (sparse sticks: value first)."""
        spec = self.spec
        full = np.broadcast_to(result, [1 if label in self.reduced else spec.core_sizes[label]
                                        for label in spec.labels])
        kept = full.reshape([n for n, label in zip(full.shape, spec.labels) if label in g.dims])
        if kept.shape == g.logical_shape:
            return kept
        out = np.zeros(g.logical_shape, np.float32)
        out[tuple(slice(0, n) for n in kept.shape)] = kept
        return out
