# The importer's builders: element and tensor types of torch values, and
# NodeEmitter, which the ATen table's emitters build spyre ops with (each op at
# its node's location, with its node's hints).  Reads nothing; writes ops into
# the block it is given.
"""Builders of spyre ops for one graph node (:class:`NodeEmitter`) and the types they use."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from xdsl.dialects.builtin import ArrayAttr, TensorType, i32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineMap

from spyre_mlir.dialects.spyre import ComputeOp, FillOp, MatmulOp, PointwiseOp, ReduceOp, ViewOp
from spyre_mlir.importer.elements import result_element
from spyre_mlir.opfuncs import COPY

Scalar = int | float
Value = SSAValue

# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------


def tensor_type(elem: Attribute, shape: Sequence[int]) -> TensorType:
    return TensorType(elem, list(shape))


def shape_of(v: Value) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def elem_of(v: Value) -> Attribute:
    assert isinstance(v.type, TensorType)
    return v.type.get_element_type()


def broadcast_shape(shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, n in enumerate(s):
            j = rank - len(s) + i
            if n != 1:
                out[j] = n
    return tuple(out)


class Unsupported(Exception):
    """Raised by emitters: the node uses a form the importer cannot lower."""


# --------------------------------------------------------------------------
# Emission
# --------------------------------------------------------------------------


@dataclass
class NodeEmitter:
    """What an emitter gets: builders that stamp the node's location and hints."""

    node: torch.fx.Node
    block: Block
    location: Attribute
    hints: ArrayAttr | None
    created: list[Operation] = field(default_factory=list)
    known: Callable[[torch.fx.Node], Any] = lambda node: None
    """The value of an argument node known at compile time (None when it is not known)."""
    constant: Callable[[torch.Tensor, Attribute], Value] | None = None
    """Makes a compile-time tensor a value of the given element type (a fill or a constant argument)."""
    input_range: Callable[[Value], int | None] = lambda value: None
    """``N`` for an integer input known to take the values ``[0, N)`` (or a view of one), else None."""

    # -- the node -----------------------------------------------------------
    @property
    def val(self) -> Any:
        return self.node.meta.get("val")

    def out_elem(self, like: Value | None = None) -> Attribute:
        """The node's element type; a bool result, or an integer one computed from float data, takes
        ``like``'s (:func:`~spyre_mlir.importer.elements.result_element`: Spyre has no bool)."""
        val = self.val
        v = val[0] if isinstance(val, (tuple, list)) else val
        if isinstance(v, torch.Tensor):
            elem = result_element(v.dtype, None if like is None else elem_of(like))
            if elem is None:
                raise Unsupported(f"dtype {v.dtype} is not supported (Spyre has float16, bfloat16, "
                                  "float32 and int8; integers and bools computed from data are held in "
                                  "the float type of that data)")
            return elem
        assert like is not None
        return elem_of(like)

    # -- builders -------------------------------------------------------------
    def _add(self, op: Operation) -> Value:
        if isinstance(op, ComputeOp):
            empty = next((v for v in (*op.operands, *op.results) if 0 in shape_of(v)), None)
            if empty is not None:
                raise Unsupported(f"it computes on a tensor of shape {list(shape_of(empty))}: Spyre computes "
                                  "on tensors with at least one element in every dim")
        op.location = self.location
        if isinstance(op, ComputeOp) and self.hints is not None:
            op.properties["hints"] = self.hints
        self.block.add_op(op)
        self.created.append(op)
        return op.results[0]

    def cast(self, v: Value, elem: Attribute) -> Value:
        if elem_of(v) == elem:
            return v
        owner = v.owner
        if isinstance(owner, FillOp):
            return self.fill(owner.fill_value(), shape_of(v), elem)
        if elem_of(v) == i32:
            raise Unsupported("an integer tensor (int64 inputs are staged as int32) is read only as the index "
                              "of embedding, index_select or gather")
        return self._before_broadcast(COPY, v, {}, elem) or \
            self._add(PointwiseOp(COPY, [v], tensor_type(elem, shape_of(v))))

    def _before_broadcast(self, op_func: str, v: Value, consts: Mapping[str, float],
                          elem: Attribute) -> Value | None:
        """``op_func`` of the one tensor ``v``, a chain of views that repeats elements of its
        source (an ``expand``: the K and V caches of grouped-query attention read by each query
        head of a group), computed on the source and read through the same chain, so that it
        computes and writes each element once; None when ``v`` reads no fewer elements.

        ``%y = cast(view(%kv) : 1x8x2048x128 -> 1x32x2048x128)`` becomes
        ``%c = cast(%kv) : 1x8x2048x128``, ``%y = view(%c)``."""
        chain: list[ViewOp] = []
        source = v
        while isinstance(source.owner, ViewOp):
            chain.append(source.owner)
            source = source.owner.source
        if not chain or math.prod(shape_of(source)) >= math.prod(shape_of(v)):
            return None
        value = self._add(PointwiseOp(op_func, [source], tensor_type(elem, shape_of(source)), dict(consts)))
        for view in reversed(chain):
            value = self.view(value, view.map.data, shape_of(view.result))
        return value

    def pointwise(self, op_func: str, operands: Sequence[Value], consts: Mapping[str, Scalar] | None = None,
                  elem: Attribute | None = None) -> Value:
        """An elementwise op; operands are cast to ``elem`` (default: the node's), and a
        ``spyre.fill`` the others broadcast to the result's shape is read as one element
        (:meth:`narrow_fills`)."""
        if elem is None:
            elem = self.out_elem(operands[0] if operands else None)
        operands = [self.cast(v, elem) for v in operands]
        shape = broadcast_shape([shape_of(v) for v in operands])
        operands = self.narrow_fills(operands, shape)
        values = {k: float(c) for k, c in (consts or {}).items()}
        if len(operands) == 1 and (moved := self._before_broadcast(op_func, operands[0], values, elem)) is not None:
            return moved
        return self._add(PointwiseOp(op_func, operands, tensor_type(elem, shape), values))

    def copy(self, v: Value) -> Value:
        """A copy of ``v`` into a tensor of its own (an ``identity`` that writes every element of
        its result, even where ``v`` repeats the elements of a view's source)."""
        return self._add(PointwiseOp("identity", [v], tensor_type(elem_of(v), shape_of(v))))

    def narrow_fills(self, operands: Sequence[Value], shape: Sequence[int]) -> list[Value]:
        """``operands`` with each ``spyre.fill`` (a splat constant, such as a ``zeros_like`` folded
        at compile time) of more than one element made a fill of one element, where the other
        operands still broadcast to ``shape``: the op reads the value through broadcasting, not a
        tensor of copies from HBM."""
        narrowed = list(operands)
        for i, v in enumerate(narrowed):
            if not isinstance(v.owner, FillOp) or all(n == 1 for n in shape_of(v)):
                continue
            ones = (1,) * len(shape_of(v))
            if broadcast_shape([*(shape_of(w) for w in narrowed[:i] + narrowed[i + 1:]), ones]) == tuple(shape):
                narrowed[i] = self.fill(v.owner.fill_value(), ones, elem_of(v))
        return narrowed

    def binary(self, op_func: str, x: Value | Scalar, y: Value | Scalar,
               elem: Attribute | None = None, extra: Mapping[str, Scalar] | None = None) -> Value:
        """``op_func(x, y)`` where either side may be a Python scalar (a const)."""
        consts = dict(extra or {})
        operands = []
        for name, a in (("x", x), ("y", y)):
            if isinstance(a, SSAValue):
                operands.append(a)
            else:
                consts[name] = scalar(a)
        if not operands:
            raise Unsupported("both operands are scalars")
        return self.pointwise(op_func, operands, consts, elem)

    def reduce(self, op_func: str, x: Value, dims: Sequence[int] | None, keepdim: bool,
               elem: Attribute | None = None) -> Value:
        shape = shape_of(x)
        rank = len(shape)
        dims = sorted({d % rank for d in dims}) if dims else list(range(rank))
        if rank == 0:
            return x
        out = [1 if d in dims else n for d, n in enumerate(shape)] if keepdim else \
            [n for d, n in enumerate(shape) if d not in dims]
        elem = elem or self.out_elem(x)
        return self._add(ReduceOp(op_func, self.cast(x, elem), dims, tensor_type(elem, out)))

    def matmul(self, a: Value, b: Value) -> Value:
        sa, sb = shape_of(a), shape_of(b)
        if len(sa) < 2 or len(sb) < 2:
            raise Unsupported(f"matmul operands must have rank >= 2, got {list(sa)} and {list(sb)}")
        elem = self.out_elem(a)
        out = (*broadcast_shape([sa[:-2], sb[:-2]]), sa[-2], sb[-1])
        return self._add(MatmulOp(self.cast(a, elem), self.cast(b, elem), tensor_type(elem, out)))

    def view(self, x: Value, view_map: AffineMap, shape: Sequence[int]) -> Value:
        if tuple(shape) == shape_of(x) and view_map == AffineMap.identity(len(shape)):
            return x
        return self._add(ViewOp(x, view_map, tensor_type(elem_of(x), shape)))

    def fill(self, value: Scalar, shape: Sequence[int], elem: Attribute | None = None) -> Value:
        return self._add(FillOp(float(value), tensor_type(elem or self.out_elem(), shape)))

    def gather(self, table: Value, dim: int, index: Value, along: bool = False, step: int = 1) -> Value:
        """``table`` read along ``dim`` at the values of the i32 ``index``: ``np.take``, or with
        ``along`` ``np.take_along_axis`` (``torch.gather``, see :meth:`PointwiseOp.gather`); with a
        ``step``, blocks of that many rows (a dim of ``step`` after the index's)."""
        block = (step,) if step > 1 else ()
        shape = shape_of(index) if along else \
            (*shape_of(table)[:dim], *shape_of(index), *block, *shape_of(table)[dim + 1:])
        return self._add(PointwiseOp.gather(index, table, dim, tensor_type(elem_of(table), shape), along, step))

    def scatter(self, dest: Value, dim: int, index: Value, rows: Value, step: int = 1) -> Value:
        """``dest`` with its rows along ``dim`` at the values of the 1-D i32 ``index`` replaced by
        ``rows`` (:meth:`PointwiseOp.scatter`: a row store, written in place); with a ``step``, blocks
        of that many rows."""
        return self._add(PointwiseOp.scatter(index, rows, dest, dim, step))

    def tensor(self, value: torch.Tensor, elem: Attribute) -> Value:
        """``value``, computed at compile time, as a tensor of ``elem`` the node's ops read."""
        if self.constant is None:
            raise Unsupported("it needs a compile-time tensor, and none can be made here")
        return self.constant(value, elem)

    def upstream(self, op: Operation) -> Value:
        """An upstream op (``tensor.empty``, ``tensor.insert_slice``) at the node's location."""
        return self._add(op)


def scalar(a: Any) -> float:
    if isinstance(a, bool) or not isinstance(a, (int, float)):
        raise Unsupported(f"expected a number, got {a!r}")
    return float(a)


def ident(name: str) -> str:
    """``name`` as an SSA name hint (letters, digits and underscores)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


__all__ = ["NodeEmitter", "Unsupported", "scalar", "tensor_type", "shape_of",
           "elem_of", "broadcast_shape", "ident"]
