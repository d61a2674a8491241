# The ATen table of the importer: one entry per supported ATen overload, mapping
# it to an emitter that builds spyre ops (or a decomposition into op funcs).
# Read by core._Importer; writes IR through NodeEmitter.  The rows of indirect
# accesses come from indirect.py.
"""ATen overload -> emitter.

An emitter is ``fn(cx: NodeEmitter, *args, **kwargs)`` called with the node's
arguments (FX nodes replaced by SSA values or tuples of them) and returns the
node's value: an SSA value, a tuple for multi-output ops, or None.  Pointwise
ops whose ATen name maps 1:1 to an op func are listed in :data:`UNARY` and
:data:`BINARY`; everything else is a small function below.  Decompositions
(softmax, layer norm, comparisons, ...) live here too and produce only op
funcs of :mod:`spyre_mlir.opfuncs`; reads and writes through an index are in
:mod:`spyre_mlir.importer.indirect` (:data:`~spyre_mlir.importer.indirect.ROWS`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import torch
from xdsl.dialects import tensor
from xdsl.dialects.builtin import Float32Type
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from spyre_mlir.importer import indirect, views
from spyre_mlir.importer.elements import FLAG_ELEMENT, dtype_of, index_values, is_integral
from spyre_mlir.importer.emitter import NodeEmitter, Unsupported, elem_of, scalar, shape_of, tensor_type
from spyre_mlir.importer.rotation import half_rotation, rotated_on_halves

aten = torch.ops.aten
Emitter = Callable[..., Any]

# --------------------------------------------------------------------------
# 1. Pointwise ops that are one op func
# --------------------------------------------------------------------------

UNARY: dict[Any, str] = {
    aten.neg.default: "neg",
    aten.exp.default: "exp",
    aten.log.default: "log",
    aten.sqrt.default: "sqrt",
    aten.rsqrt.default: "rsqrt",
    aten.reciprocal.default: "reciprocal",
    aten.abs.default: "abs",
    aten.tanh.default: "tanh",
    aten.sigmoid.default: "sigmoid",
    aten.relu.default: "relufwd",
    aten.silu.default: "silu",
}

BINARY: dict[Any, str] = {
    aten.mul.Tensor: "mul",
    aten.mul.Scalar: "mul",
    aten.div.Tensor: "realdiv",
    aten.div.Scalar: "realdiv",
    aten.maximum.default: "maximum",
    aten.minimum.default: "minimum",
    aten.eq.Scalar: "equal",
    aten.eq.Tensor: "equal",
    aten.ne.Scalar: "notequal",
    aten.ne.Tensor: "notequal",
    aten.ge.Scalar: "greaterequal",
    aten.ge.Tensor: "greaterequal",
    aten.le.Scalar: "lesserequal",
    aten.le.Tensor: "lesserequal",
}

# Comparisons without an op func: 1 - (the complementary comparison).
NEGATED: dict[Any, str] = {
    aten.gt.Scalar: "lesserequal",
    aten.gt.Tensor: "lesserequal",
    aten.lt.Scalar: "greaterequal",
    aten.lt.Tensor: "greaterequal",
}

_COMPARISONS = {k for k, v in BINARY.items() if v in ("equal", "notequal", "greaterequal", "lesserequal")}


def _unary(op_func: str) -> Emitter:
    def emit(cx: NodeEmitter, x: SSAValue) -> SSAValue:
        return cx.pointwise(op_func, [x])
    return emit


def _first_tensor(*args: Any) -> SSAValue | None:
    return next((a for a in args if isinstance(a, SSAValue)), None)


def _binary(op_func: str, comparison: bool) -> Emitter:
    def emit(cx: NodeEmitter, x: Any, y: Any) -> SSAValue:
        elem = cx.out_elem(_first_tensor(x, y)) if comparison else None
        return cx.binary(op_func, x, y, elem)
    return emit


def _negated(op_func: str) -> Emitter:
    def emit(cx: NodeEmitter, x: Any, y: Any) -> SSAValue:
        elem = cx.out_elem(_first_tensor(x, y))
        flag = cx.binary(op_func, x, y, elem)
        return cx.pointwise("sub", [flag], {"x": 1.0}, elem)
    return emit


# --------------------------------------------------------------------------
# 2. Arithmetic with extra arguments
# --------------------------------------------------------------------------


def _scaled(cx: NodeEmitter, y: Any, alpha: Any) -> Any:
    if alpha == 1:
        return y
    if isinstance(y, SSAValue):
        return cx.binary("mul", y, alpha)
    return scalar(y) * scalar(alpha)


def _add(cx: NodeEmitter, x: Any, y: Any, *, alpha: Any = 1) -> SSAValue:
    if alpha == 1 and isinstance(x, SSAValue) and isinstance(y, SSAValue) \
            and (rotated := rotated_on_halves(cx, x, y)) is not None:
        return rotated
    return cx.binary("add", x, _scaled(cx, y, alpha))


def _sub(cx: NodeEmitter, x: Any, y: Any, *, alpha: Any = 1) -> SSAValue:
    return cx.binary("sub", x, _scaled(cx, y, alpha))


def _rsub(cx: NodeEmitter, x: Any, y: Any, *, alpha: Any = 1) -> SSAValue:
    return cx.binary("sub", y, _scaled(cx, x, alpha))


def _div_mode(cx: NodeEmitter, x: Any, y: Any, *, rounding_mode: str | None = None) -> SSAValue:
    if rounding_mode is not None:
        raise Unsupported(f"rounding_mode='{rounding_mode}' is not supported")
    return cx.binary("realdiv", x, y)


def _gelu(cx: NodeEmitter, x: SSAValue, *, approximate: str = "none") -> SSAValue:
    if approximate == "none":
        return cx.pointwise("gelufwd", [x])
    if approximate != "tanh":
        raise Unsupported(f"approximate='{approximate}'")
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    x3 = cx.binary("mul", cx.binary("mul", x, x), x)
    inner = cx.binary("add", x, cx.binary("mul", x3, 0.044715))
    t = cx.pointwise("tanh", [cx.binary("mul", inner, math.sqrt(2.0 / math.pi))])
    return cx.binary("mul", cx.binary("mul", x, 0.5), cx.binary("add", t, 1.0))


def _log1p(cx: NodeEmitter, x: SSAValue) -> SSAValue:
    return cx.pointwise("log", [cx.binary("add", x, 1.0)])


def _softplus(cx: NodeEmitter, x: SSAValue, beta: Any = 1, threshold: Any = 20) -> SSAValue:
    return cx.pointwise("softplus", [x], {"beta": scalar(beta), "threshold": scalar(threshold)})


def _clamp(cx: NodeEmitter, x: SSAValue, min: Any = None, max: Any = None) -> SSAValue:
    consts = {}
    if min is not None:
        consts["min"] = scalar(min)
    if max is not None:
        consts["max"] = scalar(max)
    if not consts:
        return x
    return cx.pointwise("clip", [x], consts)


def _clamp_tensor(cx: NodeEmitter, x: SSAValue, min: Any = None, max: Any = None) -> SSAValue:
    if min is not None:
        x = cx.binary("maximum", x, min)
    if max is not None:
        x = cx.binary("minimum", x, max)
    return x


def _pow(cx: NodeEmitter, x: SSAValue, exponent: Any) -> SSAValue:
    e = scalar(exponent)
    if e in (1, 2, 3, 4):  # GPT-2's tanh gelu cubes its input
        power = x
        for _ in range(int(e) - 1):
            power = cx.pointwise("mul", [power, x])
        return power
    named = {0.5: "sqrt", -1: "reciprocal", -0.5: "rsqrt"}
    if e in named:
        return cx.pointwise(named[e], [x])
    raise Unsupported(f"exponent {exponent} (supported: 1, 2, 3, 4, 0.5, -0.5, -1)")


def _where(cx: NodeEmitter, cond: SSAValue, x: Any, y: Any) -> SSAValue:
    chosen = _known_choice(cx, x, y)
    if chosen is not None:
        return chosen
    consts = {}
    operands = [cond]
    for name, a in (("x", x), ("y", y)):
        if isinstance(a, SSAValue):
            operands.append(a)
        else:
            consts[name] = scalar(a)
    elem = cx.out_elem(_first_tensor(x, y))
    return cx.pointwise("where3", operands, consts, elem)


def _known_choice(cx: NodeEmitter, x: Any, y: Any) -> SSAValue | None:
    """The operand a ``where`` selects everywhere when its condition is known at compile time and
    the same everywhere (safe softmax's guard under a causal mask: no row is all masked), if that
    operand is a computed value of the result's shape and element type; else None."""
    cond = cx.known(cx.node.args[0]) if isinstance(cx.node.args[0], torch.fx.Node) else None
    if not isinstance(cond, torch.Tensor) or cond.numel() == 0:
        return None
    chosen = x if bool(cond.all()) else y if not bool(cond.any()) else None
    val = cx.node.meta.get("val")
    if not isinstance(chosen, SSAValue) or not isinstance(val, torch.Tensor) \
            or list(shape_of(chosen)) != list(val.shape) or elem_of(chosen) != cx.out_elem(chosen):
        return None
    return chosen


# Bool tensors are 0/1 in the float type they are computed in (``out_elem``): a comparison
# gives its flag in its operands' type, and the logical ops below read any operand
# that is not bool as ``operand != 0``, as torch does.


def _is_bool(cx: NodeEmitter, position: int) -> bool:
    return position < len(cx.node.args) and dtype_of(cx.node.args[position]) == torch.bool


def _flag(cx: NodeEmitter, position: int, x: SSAValue) -> SSAValue:
    """Operand ``position`` as 0/1."""
    return x if _is_bool(cx, position) else cx.binary("notequal", x, 0.0)


def _logical_not(cx: NodeEmitter, x: SSAValue) -> SSAValue:
    if _is_bool(cx, 0):
        return cx.pointwise("sub", [x], {"x": 1.0})
    return cx.binary("equal", x, 0.0)


def _index_values(cx: NodeEmitter, index: SSAValue, bound: int) -> SSAValue:
    """An index input's values as float32 data (:func:`~spyre_mlir.importer.elements.index_values`):
    the table ``[0, 1, ..., bound - 1]`` read through it, exact below 2**24."""
    table = cx.tensor(torch.arange(bound, dtype=torch.float32)[:, None], Float32Type())
    rank = len(shape_of(index))
    rows = cx.gather(table, 0, index)
    dims = tuple(AffineExpr.dimension(i) for i in range(rank))
    return cx.view(rows, AffineMap(rank, 0, (*dims, AffineExpr.constant(0))), shape_of(index))


def _isinf(cx: NodeEmitter, x: SSAValue) -> SSAValue:
    """``|x| == inf``, compared in float32: a float16 op holds no infinite constant (DLFloat16 has
    no infinity; on the device an fp16 value past 65504 stays finite, so it is no inf there)."""
    magnitude = cx.pointwise("abs", [x], elem=Float32Type())
    return cx.binary("equal", magnitude, math.inf, elem=Float32Type())


def _isnan(cx: NodeEmitter, x: SSAValue) -> SSAValue:
    """``x != x``: only a nan differs from itself."""
    return cx.pointwise("notequal", [x, x], elem=cx.out_elem(x))


def _logical(op_func: str) -> Emitter:
    """and: the product of the flags; or: their maximum; xor: their difference."""
    def emit(cx: NodeEmitter, x: SSAValue, y: SSAValue) -> SSAValue:
        return cx.pointwise(op_func, [_flag(cx, 0, x), _flag(cx, 1, y)])
    return emit


def _bitwise(op_func: str) -> Emitter:
    """Bitwise ops on bool tensors are the logical ops; on integers Spyre has none."""
    logical = _logical(op_func)

    def emit(cx: NodeEmitter, x: Any, y: Any) -> SSAValue:
        if not (_is_bool(cx, 0) and _is_bool(cx, 1)):
            raise Unsupported("bitwise ops on integer tensors (Spyre computes bools as 0/1 only)")
        return logical(cx, x, y)
    return emit


def _bitwise_not(cx: NodeEmitter, x: SSAValue) -> SSAValue:
    if not _is_bool(cx, 0):
        raise Unsupported("bitwise_not of an integer tensor (Spyre computes bools as 0/1 only)")
    return _logical_not(cx, x)


def _any_all(op_func: str) -> Emitter:
    """any: the maximum of the flags over ``dim``; all: their minimum."""
    def emit(cx: NodeEmitter, x: SSAValue, dim: Any = None, keepdim: bool = False) -> SSAValue:
        dims = [dim] if isinstance(dim, int) else list(dim or [])
        return cx.reduce(op_func, _flag(cx, 0, x), dims, keepdim)
    return emit


def _to_copy(cx: NodeEmitter, x: SSAValue, **kwargs: Any) -> SSAValue:
    """A conversion: to bool, the flag ``x != 0`` (a bool stays itself); to an integer dtype, an
    integer or bool value as it is held (an int32 index, or a float of integer value: also the
    values of an integer input read through it, :func:`index_values`); to a float
    dtype, a cast."""
    dtype, source = kwargs.get("dtype"), dtype_of(cx.node.args[0])
    if dtype == torch.bool:
        return x if source == torch.bool else cx.binary("notequal", x, 0.0)
    if dtype is not None and is_integral(dtype):
        if (source is None or not is_integral(source)) and getattr(cx.node.args[0], "target", None) is not index_values:
            raise Unsupported(f"conversion of a float tensor to {dtype} (Spyre has no integer arithmetic; "
                              "it holds integers computed from bools and integer inputs as floats)")
        return x
    return cx.cast(x, cx.out_elem(x))


def _noop(cx: NodeEmitter, *args: Any, **kwargs: Any) -> None:
    return None


# --------------------------------------------------------------------------
# 3. Reductions
# --------------------------------------------------------------------------


def _reduction(op_func: str) -> Emitter:
    def emit(cx: NodeEmitter, x: SSAValue, dim: Any = None, keepdim: bool = False, **kw: Any) -> SSAValue:
        dims = [dim] if isinstance(dim, int) else list(dim or [])
        return cx.reduce(op_func, x, dims, keepdim)
    return emit


def _cumsum(cx: NodeEmitter, x: SSAValue, dim: int, *, dtype: Any = None) -> SSAValue:
    """The running sum along ``dim`` (of size ``n``): a matmul of ``x``, ``dim`` last, with the
    ``[n, n]`` upper-triangular matrix of ones (``y[.., i] = sum(x[.., j] for j <= i)``).  An integer
    sum held in float16 is exact up to 2048 only: a longer ``dim`` is refused."""
    shape = shape_of(x)
    rank = len(shape)
    if rank == 0:
        return x
    dim %= rank
    n = shape[dim]
    elem = cx.out_elem(x)
    if is_integral(cx.val.dtype) and elem == FLAG_ELEMENT and n > _FLOAT16_EXACT:
        raise Unsupported(f"an integer running sum over {n} elements, held in float16 (exact up to "
                          f"{_FLOAT16_EXACT}): Spyre has no integer arithmetic")
    perm = [d for d in range(rank) if d != dim] + [dim]
    rows = _permute(cx, cx.cast(x, elem), perm) if perm != list(range(rank)) else cx.cast(x, elem)
    moved = shape_of(rows)
    flat = (math.prod(moved[:-1]), n)
    table = cx.tensor(torch.ones(n, n).triu(), elem)
    summed = cx.matmul(cx.view(rows, views.reshape_map(moved, flat), flat), table)
    out = cx.view(summed, views.reshape_map(flat, moved), moved)
    back = [perm.index(d) for d in range(rank)]
    return _permute(cx, out, back) if back != list(range(rank)) else out


_FLOAT16_EXACT = 2048
"""float16 holds every integer up to this one exactly."""


# --------------------------------------------------------------------------
# 4. Matmul
# --------------------------------------------------------------------------


def _mm(cx: NodeEmitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return cx.matmul(a, b)


def _addmm(cx: NodeEmitter, bias: Any, a: SSAValue, b: SSAValue, *, beta: Any = 1, alpha: Any = 1) -> SSAValue:
    p = cx.matmul(a, b)
    if alpha != 1:
        p = cx.binary("mul", p, alpha)
    if beta == 0:
        return p
    return cx.binary("add", p, _scaled(cx, bias, beta))


# --------------------------------------------------------------------------
# 5. Decompositions of normalisations
# --------------------------------------------------------------------------


def _softmax(cx: NodeEmitter, x: SSAValue, dim: int, half_to_float: bool = False) -> SSAValue:
    if half_to_float:
        raise Unsupported("half_to_float=True")
    m = cx.reduce("max", x, [dim], True)
    s = cx.pointwise("sub", [x, m])
    e = cx.pointwise("exp", [s])
    t = cx.reduce("sum", e, [dim], True)
    return cx.pointwise("realdiv", [e, t])


def _log_softmax(cx: NodeEmitter, x: SSAValue, dim: int, half_to_float: bool = False) -> SSAValue:
    if half_to_float:
        raise Unsupported("half_to_float=True")
    m = cx.reduce("max", x, [dim], True)
    s = cx.pointwise("sub", [x, m])
    t = cx.reduce("sum", cx.pointwise("exp", [s]), [dim], True)
    return cx.pointwise("sub", [s, cx.pointwise("log", [t])])


def _layer_norm(cx: NodeEmitter, x: SSAValue, normalized_shape: Sequence[int], weight: Any, bias: Any,
                eps: float) -> tuple[SSAValue, SSAValue, SSAValue]:
    """``aten.native_layer_norm``, computed in float32 as eager computes it for 16-bit floats (a
    variance of 0 plus an ``eps`` below float16's range, a zero [CLS] token's, stays finite), its
    three results in ``x``'s type."""
    rank, elem, f32 = len(shape_of(x)), elem_of(x), Float32Type()
    dims = list(range(rank - len(normalized_shape), rank))
    wide = cx.cast(x, f32)
    mean = cx.reduce("mean", wide, dims, True, elem=f32)
    centred = cx.pointwise("sub", [wide, mean], elem=f32)
    var = cx.reduce("mean", cx.pointwise("mul", [centred, centred], elem=f32), dims, True, elem=f32)
    rstd = cx.pointwise("rsqrt", [cx.binary("add", var, eps, elem=f32)], elem=f32)
    y = cx.pointwise("mul", [centred, rstd], elem=f32)
    if weight is not None:
        y = cx.pointwise("mul", [y, weight], elem=f32)
    if bias is not None:
        y = cx.pointwise("add", [y, bias], elem=f32)
    return cx.cast(y, elem), cx.cast(mean, elem), cx.cast(rstd, elem)


# --------------------------------------------------------------------------
# 6. Views and fills
# --------------------------------------------------------------------------


def _reshape(cx: NodeEmitter, x: SSAValue, *args: Any) -> SSAValue:
    out = tuple(int(s) for s in cx.val.shape)
    if not math.prod(out):
        raise Unsupported(f"it reshapes a tensor of shape {list(shape_of(x))}, which has no element: Spyre "
                          "computes on tensors with at least one element in every dim")
    return cx.view(x, views.reshape_map(shape_of(x), out), out)


def _permute(cx: NodeEmitter, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    src = shape_of(x)
    perm = [p % len(src) for p in perm]
    return cx.view(x, views.permute_map(src, perm), [src[p] for p in perm])


def _transpose(cx: NodeEmitter, x: SSAValue, d0: int = 0, d1: int = 1) -> SSAValue:
    rank = len(shape_of(x))
    perm = list(range(rank))
    if rank >= 2:
        a, b = d0 % rank, d1 % rank
        perm[a], perm[b] = perm[b], perm[a]
    return _permute(cx, x, perm)


def _expand(cx: NodeEmitter, x: SSAValue, size: Sequence[int], *, implicit: bool = False) -> SSAValue:
    out = tuple(int(s) for s in cx.val.shape)
    return cx.view(x, views.expand_map(shape_of(x), out), out)


def _slice(cx: NodeEmitter, x: SSAValue, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> SSAValue:
    src = shape_of(x)
    dim %= len(src)
    start, _, step = slice(start, end, step).indices(src[dim])
    out = tuple(int(s) for s in cx.val.shape)
    return cx.view(x, views.slice_map(src, dim, start, step), out)


def _select(cx: NodeEmitter, x: SSAValue, dim: int, index: int) -> SSAValue:
    src = shape_of(x)
    dim %= len(src)
    index %= src[dim]
    out = tuple(int(s) for s in cx.val.shape)
    return cx.view(x, views.select_map(src, dim, index), out)


def _split_with_sizes(cx: NodeEmitter, x: SSAValue, sizes: Sequence[int], dim: int = 0) -> tuple[SSAValue, ...]:
    src = shape_of(x)
    dim %= len(src)
    pieces, start = [], 0
    for size in sizes:
        out = list(src)
        out[dim] = int(size)
        pieces.append(cx.view(x, views.slice_map(src, dim, start, 1), out))
        start += int(size)
    return tuple(pieces)


def _forward(cx: NodeEmitter, x: SSAValue, *args: Any, **kwargs: Any) -> SSAValue:
    """clone / contiguous / alias of the same shape: the value itself (no op)."""
    return x


def _full(cx: NodeEmitter, size: Sequence[int], fill_value: Any, **kwargs: Any) -> SSAValue:
    return cx.fill(scalar(fill_value), [int(s) for s in size])


def _full_like(cx: NodeEmitter, x: SSAValue, fill_value: Any, **kwargs: Any) -> SSAValue:
    return cx.fill(scalar(fill_value), shape_of(x))


def _filled(value: float, like: bool) -> Emitter:
    def emit(cx: NodeEmitter, arg: Any, *args: Any, **kwargs: Any) -> SSAValue:
        shape = shape_of(arg) if like else [int(s) for s in arg]
        return cx.fill(value, shape)
    return emit


def _scalar_tensor(cx: NodeEmitter, value: Any, **kwargs: Any) -> SSAValue:
    return cx.fill(scalar(value), [])


def _getitem(cx: NodeEmitter, tup: Any, index: int) -> Any:
    return tup[index]


# --------------------------------------------------------------------------
# 7. Concatenation
# --------------------------------------------------------------------------


def _assemble(cx: NodeEmitter, tensors: Sequence[SSAValue], dim: int) -> SSAValue:
    """The pieces one after another along ``dim``: a ``tensor.empty`` of the result, and per
    non-empty piece a ``spyre.pointwise "identity"`` copy inserted at its offset (the copy
    writes its window of the result in place, a repeating view's elements included: never
    computed on the view's source, :meth:`NodeEmitter.copy`).  One non-empty piece is the result
    itself."""
    elem = cx.out_elem(tensors[0] if tensors else None)
    pieces = [cx.cast(t, elem) for t in tensors if math.prod(shape_of(t))]
    if not pieces:
        raise Unsupported("every piece is empty")
    if len(pieces) == 1:
        return pieces[0]
    shape = tuple(int(s) for s in cx.val.shape)
    full = cx.upstream(tensor.EmptyOp([], tensor_type(elem, shape)))
    offset = 0
    for piece in pieces:
        copy = cx.copy(piece)
        offsets = [offset if d == dim else 0 for d in range(len(shape))]
        full = cx.upstream(tensor.InsertSliceOp.from_static_parameters(copy, full, offsets, shape_of(piece)))
        offset += shape_of(piece)[dim]
    return full


def _cat(cx: NodeEmitter, tensors: Sequence[SSAValue], dim: int = 0) -> SSAValue:
    dim %= len(cx.val.shape)
    return half_rotation(cx, tensors, dim) or _assemble(cx, tensors, dim)


def _stack(cx: NodeEmitter, tensors: Sequence[SSAValue], dim: int = 0) -> SSAValue:
    """``cat`` of the pieces viewed with a dim of extent 1 at ``dim``."""
    dim %= len(cx.val.shape)
    pieces = []
    for t in tensors:
        shape = list(shape_of(t))
        shape.insert(dim, 1)
        pieces.append(cx.view(t, views.reshape_map(shape_of(t), shape), shape))
    return _assemble(cx, pieces, dim)


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------

TABLE: dict[Any, Emitter] = {
    **{op: _unary(f) for op, f in UNARY.items()},
    **{op: _binary(f, op in _COMPARISONS) for op, f in BINARY.items()},
    **{op: _negated(f) for op, f in NEGATED.items()},
    aten.add.Tensor: _add,
    aten.add.Scalar: _add,
    aten.sub.Tensor: _sub,
    aten.sub.Scalar: _sub,
    aten.rsub.Scalar: _rsub,
    aten.rsub.Tensor: _rsub,
    aten.div.Tensor_mode: _div_mode,
    aten.gelu.default: _gelu,
    aten.log1p.default: _log1p,
    aten.softplus.default: _softplus,
    aten.clamp.default: _clamp,
    aten.clamp_min.default: lambda cx, x, m: _clamp(cx, x, min=m),
    aten.clamp_max.default: lambda cx, x, m: _clamp(cx, x, max=m),
    aten.clamp.Tensor: _clamp_tensor,
    aten.hardtanh.default: lambda cx, x, lo=-1.0, hi=1.0: _clamp(cx, x, min=lo, max=hi),  # ReLU6: 0, 6
    aten.pow.Tensor_Scalar: _pow,
    aten.where.self: _where,
    aten.logical_not.default: _logical_not,
    index_values: _index_values,
    aten.isinf.default: _isinf,
    aten.isnan.default: _isnan,
    aten.logical_and.default: _logical("mul"),
    aten.logical_or.default: _logical("maximum"),
    aten.logical_xor.default: _logical("notequal"),
    aten.bitwise_and.Tensor: _bitwise("mul"),
    aten.bitwise_or.Tensor: _bitwise("maximum"),
    aten.bitwise_xor.Tensor: _bitwise("notequal"),
    aten.bitwise_not.default: _bitwise_not,
    aten._to_copy.default: _to_copy,
    aten._assert_tensor_metadata.default: _noop,
    # reductions
    aten.sum.dim_IntList: _reduction("sum"),
    aten.sum.default: _reduction("sum"),
    aten.cumsum.default: _cumsum,
    aten.mean.dim: _reduction("mean"),
    aten.mean.default: _reduction("mean"),
    aten.amax.default: _reduction("max"),
    aten.amin.default: _reduction("min"),
    aten.any.default: _any_all("max"),
    aten.any.dim: _any_all("max"),
    aten.any.dims: _any_all("max"),
    aten.all.default: _any_all("min"),
    aten.all.dim: _any_all("min"),
    aten.all.dims: _any_all("min"),
    # matmul
    aten.mm.default: _mm,
    aten.bmm.default: _mm,
    aten.matmul.default: _mm,
    aten.addmm.default: _addmm,
    # normalisations
    aten._softmax.default: _softmax,
    aten._log_softmax.default: _log_softmax,
    aten.native_layer_norm.default: _layer_norm,
    # views
    aten.view.default: _reshape,
    aten._unsafe_view.default: _reshape,
    aten.reshape.default: _reshape,
    aten.unsqueeze.default: _reshape,
    aten.squeeze.default: _reshape,
    aten.squeeze.dim: _reshape,
    aten.squeeze.dims: _reshape,
    aten.flatten.using_ints: _reshape,
    aten.permute.default: _permute,
    aten.transpose.int: _transpose,
    aten.t.default: _transpose,
    aten.expand.default: _expand,
    aten.slice.Tensor: _slice,
    aten.select.int: _select,
    aten.split_with_sizes.default: _split_with_sizes,
    aten.contiguous.default: _forward,
    aten.clone.default: _forward,
    aten.alias.default: _forward,
    aten.lift_fresh_copy.default: _forward,
    # fills
    aten.full.default: _full,
    aten.full_like.default: _full_like,
    aten.zeros.default: _filled(0.0, like=False),
    aten.ones.default: _filled(1.0, like=False),
    aten.zeros_like.default: _filled(0.0, like=True),
    aten.ones_like.default: _filled(1.0, like=True),
    aten.scalar_tensor.default: _scalar_tensor,
    operator.getitem: _getitem,
    # concatenation
    aten.cat.default: _cat,
    aten.stack.default: _stack,
    # indirect access and row stores
    **indirect.ROWS,
}


def lookup(target: Any) -> Emitter | None:
    """The emitter of an FX call target, None when the importer does not support it."""
    return TABLE.get(target)


def supported_ops() -> list[str]:
    """Names of the supported ATen overloads, sorted."""
    names = []
    for op in TABLE:
        if isinstance(op, torch._ops.OpOverload):
            names.append(f"aten.{op._opname}.{op._overloadname}")
    return sorted(names)
