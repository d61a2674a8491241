# What a tensor's device padding holds (DESIGN §6, §9): the values an op reads
# past a tensor's host extent along one dim once spyre-stickify pads that dim.
# Read by spyre-mask-contractions, for the operands of a matmul whose K is not a
# whole number of sticks.  Reads the IR before spyre-stickify (the op-func
# table's numpy references, fills, view chains, concatenations); writes nothing.
"""The values a tensor's padding may hold (:class:`PaddingValues`).

Padding a dim to whole sticks adds elements nobody computes as part of the
program.  Who writes them decides what they hold:

* the runtime stages every function argument with zeros there;
* a compute op writes whole sticks: where the padded dim is its result's stick
  dim, it writes its op func applied to what its operands hold there (``x + 1``
  of a staged ``x`` holds ``1``, ``log(x)`` holds ``-inf``);
* elsewhere nobody writes them, and memory planning gives the tensor a zeroed
  buffer (``_zeroed`` in spyre-plan-memory).

Before spyre-stickify the stick dims are not chosen, so a computed tensor's
padding may hold either; the analysis keeps both.  A :data:`Padding` is the set
of values the padding may hold, or, where no small set is known, whether they
are at least finite (:class:`Unknown`).  An operand broadcast there reads the
values the program computes with, taken as finite; one that reads data the
program drops (a slice, a stride, a result computed past its extent, an
argument updated in place) may read any value; an op func that may leave the
finite numbers (``exp``, ``log``, a division) on finite inputs makes them
:attr:`Unknown.ANY`; a value a float16 tensor cannot hold is infinite.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping
from enum import Enum

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import Float16Type
from xdsl.ir import BlockArgument, OpResult, SSAValue

from spyre_mlir.analysis.views import Dim, dim, op_reads
from spyre_mlir.dialects.spyre import ComputeOp, FillOp, MatmulOp, PointwiseOp, ReduceOp, RestickifyOp
from spyre_mlir.dialects.spyre.types import tensor_shape
from spyre_mlir.opfuncs import OP_FUNCS, OpFunc


class Unknown(Enum):
    """Padding whose values are not known: finite ones, or any (infinities and NaN too)."""

    FINITE = "finite"
    ANY = "any"


Padding = frozenset[float] | Unknown
"""The values a padding may hold: a set of them, or :class:`Unknown`."""

ZERO: Padding = frozenset({0.0})

_MAX_VALUES = 8
"""More distinct values than this are kept as :class:`Unknown`."""

_PROBES = (0.0, 1.0, -1.0, 100.0, -100.0)
"""Finite inputs on which an op func must stay finite to keep an unknown finite padding finite:
zero (``log``, a division), and magnitudes ``exp`` leaves float16's range at."""

_FLOAT16_MAX = float(np.finfo(np.float16).max)


def is_finite(padding: Padding) -> bool:
    """True when every value ``padding`` may hold is finite."""
    if isinstance(padding, Unknown):
        return padding is Unknown.FINITE
    return all(math.isfinite(v) for v in padding)


def join(*paddings: Padding) -> Padding:
    """The padding that may hold any value one of ``paddings`` may hold."""
    if any(isinstance(p, Unknown) for p in paddings):
        return Unknown.FINITE if all(is_finite(p) for p in paddings) else Unknown.ANY
    return _capped(frozenset().union(*paddings))


def _capped(values: frozenset[float]) -> Padding:
    if len(values) <= _MAX_VALUES:
        return values
    return Unknown.FINITE if all(math.isfinite(v) for v in values) else Unknown.ANY


@functools.lru_cache(maxsize=256)
def _stays_finite(name: str, consts: tuple[tuple[str, float], ...]) -> bool:
    """True when ``op`` computes a finite value (within float16's range) from every probe of its
    tensor inputs (:data:`_PROBES`): ``add``, ``mul``, ``tanh`` do; ``exp``, ``log``, ``realdiv`` do not."""
    op, given = OP_FUNCS[name], dict(consts)
    tensors = [name for name in op.inputs if name not in given]
    for probe in itertools.product(_PROBES, repeat=len(tensors)):
        args = dict(zip(tensors, probe))
        out = _evaluate(op, given, args)
        if not (math.isfinite(out) and abs(out) <= _FLOAT16_MAX):
            return False
    return True


def _evaluate(op: OpFunc, consts: Mapping[str, float], tensors: Mapping[str, float]) -> float:
    """``op`` at one point: its tensor inputs ``tensors``, its scalar inputs and parameters ``consts``."""
    args = [np.full((1,), tensors[name] if name in tensors else consts[name], np.float32) for name in op.inputs]
    with np.errstate(all="ignore"):
        return float(np.asarray(op.compute(*args, **op.bound_params(consts))).reshape(-1)[0])


def _selected(func: OpFunc, operands: Mapping[str, Padding], consts: Mapping[str, float]) -> Padding | None:
    """What a ``where3`` whose condition is known selects when another operand is not (the masks
    of spyre-mask-contractions: a condition of zeros selects ``y``), None for another op func or
    an unknown condition."""
    if func.name != "where3" or not isinstance(cond := operands.get("cond"), frozenset):
        return None
    chosen = [operands.get(name, frozenset({consts[name]}) if name in consts else Unknown.ANY)
              for name, pick in (("x", any(cond)), ("y", not all(cond))) if pick]
    return join(*chosen)


def _product_of_zero(func: OpFunc, operands: list[Padding]) -> Padding | None:
    """Zero for a product one of whose factors holds zeros and the others unknown finite values
    (``x * rsqrt(mean(x * x))`` of a staged ``x``), None otherwise."""
    if func.name == "mul" and ZERO in operands and all(is_finite(p) for p in operands):
        return ZERO
    return None


def _rounded(values: frozenset[float], value: SSAValue) -> Padding:
    """``values`` as ``value``'s element type holds them (float16 overflows past 65504)."""
    if isinstance(getattr(value.type, "element_type", None), Float16Type):
        with np.errstate(over="ignore"):
            values = frozenset(float(np.float16(v)) for v in values)
    return _capped(values)


def _same_rank(op: tensor.InsertSliceOp) -> bool:
    """True when ``op`` inserts a piece of its buffer's rank (a piece of a concatenation)."""
    return len(tensor_shape(op.source)) == len(tensor_shape(op.dest))


class PaddingValues:
    """What the padding of each tensor may hold, found on demand and remembered.

    :meth:`of` answers for a tensor and one of its host dims; :meth:`read` for what an op reads
    past an iteration dim's extent through one of its operands."""

    def __init__(self, updated: frozenset[BlockArgument] = frozenset()) -> None:
        self.known: dict[tuple[SSAValue, int], Padding] = {}
        self.updated = updated
        """Arguments updated in place (a KV cache): a row store leaves its rows' padding in them,
        from one run to the next."""

    def of(self, value: SSAValue, host_dim: int) -> Padding:
        """What ``value``'s elements past its extent along ``host_dim`` may hold, were that dim
        padded.  Walks the writers depth-first without recursion (a model's chain of values is
        longer than Python's stack)."""
        pending = [(value, host_dim)]
        while pending:
            key = pending[-1]
            if key in self.known:
                pending.pop()
                continue
            needed = [k for k in self._needs(*key) if k not in self.known]
            if needed:
                pending.extend(needed)
                continue
            self.known[key] = self._padding(*key)
            pending.pop()
        return self.known[value, host_dim]

    def read(self, op: ComputeOp, index: int, iteration_dim: int) -> Padding:
        """What operand ``index`` of ``op`` holds where ``op`` iterates ``iteration_dim`` past its
        extent: its storage's padding when the operand reads that dim of it as is; the values the
        program computes with (finite) when it is broadcast along it; else (a slice, a stride)
        data the program drops, which may be any value."""
        need, fixed = self._read(op, index, iteration_dim)
        return join(fixed, *(self.of(*k) for k in need))

    # The rules, each a pair: the (tensor, dim) paddings a padding needs, then the padding itself.

    @staticmethod
    def _read(op: ComputeOp, index: int, iteration_dim: int) -> tuple[list[tuple[SSAValue, int]], Padding]:
        space, reads, _ = op_reads(op)
        read = reads[index]
        along = [j for j, c in enumerate(read.coords) if c.coefficient(Dim(iteration_dim))]
        extents = tensor_shape(read.storage)
        if not along:
            return [], Unknown.FINITE  # a broadcast: the value the program computes with
        if len(along) == 1 and read.coords[along[0]] == dim(iteration_dim) \
                and extents[along[0]] == space[iteration_dim]:
            return [(read.storage, along[0])], frozenset()
        return [(read.storage, j) for j in along], Unknown.ANY  # data the program drops: inf too

    @staticmethod
    def _result_dim(value: SSAValue, host_dim: int) -> int | None:
        """The iteration dim of ``value``'s writer that writes ``host_dim`` as is, if one does."""
        assert isinstance(value, OpResult) and isinstance(value.op, ComputeOp)
        space, _, written = op_reads(value.op)
        return next((i for i in range(len(space)) if written[host_dim] == dim(i)), None)

    def _needs(self, value: SSAValue, host_dim: int) -> list[tuple[SSAValue, int]]:
        writer = value.op if isinstance(value, OpResult) else None
        if isinstance(writer, tensor.InsertSliceOp) and _same_rank(writer):
            return [(writer.source, host_dim), (writer.dest, host_dim)]
        if not isinstance(writer, ComputeOp):
            return []
        i = self._result_dim(value, host_dim)
        if i is None or isinstance(writer, PointwiseOp) and writer.indirect_access() is not None:
            return []
        if isinstance(writer, MatmulOp):
            return self._read(writer, 1, i)[0] if i in self._n_dims(writer) else []
        return [k for index in range(len(writer.inputs)) for k in self._read(writer, index, i)[0]]

    def _padding(self, value: SSAValue, host_dim: int) -> Padding:
        if isinstance(value, BlockArgument):
            return Unknown.ANY if value in self.updated else ZERO  # staged with zeros
        writer = value.op if isinstance(value, OpResult) else None
        if isinstance(writer, FillOp):
            return frozenset({writer.fill_value()})  # a fill writes every element
        if isinstance(writer, tensor.EmptyOp):
            return ZERO  # a concatenation's buffer: its padding no piece writes is zeroed
        if isinstance(writer, tensor.InsertSliceOp) and _same_rank(writer):
            # A piece of a concatenation (a convolution's padded input): what the piece's padding
            # holds where it writes the buffer's, what the buffer held elsewhere.
            return join(self.known[writer.source, host_dim], self.known[writer.dest, host_dim])
        if not isinstance(writer, ComputeOp):
            return Unknown.ANY
        i = self._result_dim(value, host_dim)
        if i is None or isinstance(writer, PointwiseOp) and writer.indirect_access() is not None:
            return Unknown.ANY
        if writer.get_iteration_space()[i] > tensor_shape(value)[host_dim]:
            # It computes past the extent (a slice of its result folded into it): data the program
            # drops there, which may be any value.
            return Unknown.ANY
        return self._written(writer, value, i)

    def _written(self, writer: ComputeOp, value: SSAValue, i: int) -> Padding:
        """What ``writer`` leaves past ``value``'s extent along iteration dim ``i``."""
        if isinstance(writer, MatmulOp):
            return self._matmul(writer, i)
        operands = [self._known_read(writer, index, i) for index in range(len(writer.inputs))]
        if isinstance(writer, RestickifyOp):
            written = operands[0]
        elif isinstance(writer, ReduceOp):
            written = self._reduced(writer, operands[0])
        else:
            assert isinstance(writer, PointwiseOp)
            written = self._pointwise(writer, operands, value)
        return join(written, ZERO)  # or, off the result's stick, a zeroed buffer

    def _known_read(self, op: ComputeOp, index: int, iteration_dim: int) -> Padding:
        need, fixed = self._read(op, index, iteration_dim)
        return join(fixed, *(self.known[k] for k in need))

    @staticmethod
    def _n_dims(op: MatmulOp) -> set[int]:
        """The iteration dims of a matmul that its right-hand side and its result share (N)."""
        maps = op.get_indexing_maps()
        used = [set().union(*(e.used_dims() for e in m.results)) if m.results else set() for m in maps]
        return (used[1] & used[2]) - used[0]

    def _matmul(self, op: MatmulOp, i: int) -> Padding:
        """Rows past M and batches past the batch are never written (the result is sticked on N);
        columns past N are rows of A times B's padding along N."""
        if i not in self._n_dims(op):
            return ZERO
        columns = self._known_read(op, 1, i)
        if columns == ZERO:
            return ZERO
        return Unknown.FINITE if is_finite(columns) else Unknown.ANY

    @staticmethod
    def _reduced(op: ReduceOp, operand: Padding) -> Padding:
        """A kept dim's padding, reduced over the reduced dims' extents: a sum of ``n`` copies of
        one value ``v`` is ``n * v`` (in the result's precision); a mean, a max or a min of them is
        ``v``.  Of several values (the pieces of a concatenation), only whether the extremes are
        finite."""
        if isinstance(operand, Unknown):
            return operand
        space = op.get_iteration_space()
        n = math.prod(space[d] for d in op.reduction_dims())
        scale = n if op.op_func().name == "sum" else 1
        extremes = _rounded(frozenset({min(operand) * scale, max(operand) * scale}), op.result)
        if len(operand) > 1:  # the reduction mixes them: between the extremes, if those are finite
            return Unknown.FINITE if is_finite(extremes) else Unknown.ANY
        return extremes

    @staticmethod
    def _pointwise(op: PointwiseOp, operands: list[Padding], value: SSAValue) -> Padding:
        func, consts = op.op_func(), op.const_values()
        tensors = [name for name in func.inputs if name not in consts]
        if any(isinstance(p, Unknown) for p in operands):
            known = _selected(func, dict(zip(tensors, operands)), consts)
            if known is None:
                known = _product_of_zero(func, operands)
            if known is not None:
                return known
            finite = all(is_finite(p) for p in operands) and _stays_finite(func.name, tuple(sorted(consts.items())))
            return Unknown.FINITE if finite else Unknown.ANY
        values = frozenset(_evaluate(func, consts, dict(zip(tensors, combo)))
                           for combo in itertools.product(*(sorted(p) for p in operands)))
        return _rounded(values, value)


__all__ = ["PaddingValues", "Padding", "Unknown", "ZERO", "is_finite", "join"]
