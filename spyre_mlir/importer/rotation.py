# Rotary embeddings' rotate_half.  Halves narrower than a stick: `cat((-x2, x1), -1)`
# of the two halves of one tensor along its last dim is `x @ R`, R a constant signed
# permutation (`half_rotation`, used by the importer's cat emitter).  Halves of whole
# sticks: `x * cos + rotate_half(x) * sin` is computed on the halves, each written into its
# window of the result (`rotated_on_halves`, used by the add emitter).  Reads the ops the
# importer emitted for the pieces; writes spyre ops, or nothing for any other form.
"""``rotate_half`` as a matmul by a signed permutation (:func:`half_rotation`), and the rotary
sum on the halves (:func:`rotated_on_halves`).

Llama-family attention rotates each head as ``x * cos + rotate_half(x) * sin`` with
``rotate_half(x) = cat((-x[..., h:], x[..., :h]), -1)``.  Where a half is narrower than a
stick (a head of 64 fp16 elements), no op reads a half in place (it starts or ends inside a
stick), so each of q and k is restickified onto another dim and back around the
concatenation.  As ``x @ R`` it is one matmul over the head dim, which reads ``x`` in place
wherever it is sticked on that dim.  Halves of whole sticks (a head of 128 fp16 elements)
keep the concatenation: its copies read them in place, and its pieces need no matmul's
extra value in LX beside the others (at 2048 tokens they no longer fit on 32 cores).

It is exact for finite ``x``: each output element is one input element times 1 or -1 plus
zeros, accumulated in float32.  A non-finite element of a head makes that head's whole
rotated row non-finite (``inf * 0``), where the concatenation keeps it in one position; the
attention scores of that row are not finite either way.

Halves of whole sticks are read in place, but the concatenation still costs two copies,
and the rotated value a round trip through memory before it is multiplied by ``sin``.
:func:`rotated_on_halves` computes the sum on the halves instead::

    out[..., :h] = x1 * cos[..., :h] - x2 * sin[..., :h]
    out[..., h:] = x2 * cos[..., h:] + x1 * sin[..., h:]

each half written into its window of ``out`` in place (an assembly).  It rounds as the
original does, bit for bit: negation is exact, ``(-a) * b`` rounds to ``-(a * b)``, and
``p + -q`` is ``p - q``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from xdsl.dialects import tensor
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from spyre_mlir.dialects.spyre import PointwiseOp, ViewOp, element_dtype
from spyre_mlir.hardware import element_bytes
from spyre_mlir.importer.emitter import NodeEmitter, elem_of, shape_of, tensor_type
from spyre_mlir.limits import STICK_BYTES


def _half_of(value: SSAValue, source: SSAValue | None = None) -> tuple[SSAValue, int] | None:
    """``(x, offset)`` when ``value`` is a view of ``x`` (``source`` if given) that reads it
    unchanged but along its last dim, from ``offset`` for half of its extent; else None."""
    owner = value.owner
    if not isinstance(owner, ViewOp) or (source is not None and owner.source != source):
        return None
    whole, part = shape_of(owner.source), shape_of(value)
    if len(whole) != len(part) or whole[:-1] != part[:-1] or 2 * part[-1] != whole[-1]:
        return None
    dims = [AffineExpr.dimension(d) for d in range(len(part))]
    for shift in (0, part[-1]):
        if owner.map.data == AffineMap(len(part), 0, (*dims[:-1], dims[-1] + shift)):
            return owner.source, shift
    return None


def half_rotation(cx: NodeEmitter, tensors: Sequence[SSAValue], dim: int) -> SSAValue | None:
    """``cat((-x2, x1), dim)`` of the halves ``x1``, ``x2`` of one tensor ``x`` along its last dim
    (``dim``), ``h`` elements each, as ``x @ R``, where ``R[h + i, i] = -1`` and ``R[i, h + i] = 1``
    for ``i < h``; None for any other concatenation, for halves of whole sticks, of a vector or
    of another element type than the result's."""
    if len(tensors) != 2 or dim != len(cx.val.shape) - 1:
        return None
    negated, low = tensors
    neg = negated.owner
    if not (isinstance(neg, PointwiseOp) and neg.op_func_name.data == "neg" and neg.consts is None
            and len(neg.inputs) == 1):
        return None
    high = _half_of(neg.inputs[0])
    if high is None or high[1] == 0 or _half_of(low, high[0]) != (high[0], 0):
        return None
    x = high[0]
    if len(shape_of(x)) < 2:
        return None  # a matmul's operands have rank 2 or more
    elem = elem_of(x)
    if elem != cx.out_elem(x) or elem != elem_of(negated) or elem != elem_of(low):
        return None
    half = shape_of(low)[-1]
    if _whole_sticks(half, elem):
        return None
    rotation = torch.zeros(2 * half, 2 * half)
    rotation[half:, :half] = torch.diag(torch.full((half,), -1.0))
    rotation[:half, half:] = torch.eye(half)
    return cx.matmul(x, cx.tensor(rotation, elem))


def _whole_sticks(elems: int, elem: Attribute) -> bool:
    """Whether ``elems`` elements of ``elem`` are a whole number of sticks."""
    return elems % (STICK_BYTES // element_bytes(element_dtype(elem))) == 0


def _plain(value: SSAValue, op_func: str, operands: int, reads: int = 1) -> PointwiseOp | None:
    """``value``'s writer when it is a ``spyre.pointwise op_func`` of ``operands`` tensors, no
    consts and no hints, read by ``reads`` ops so far; else None."""
    op = value.owner
    if not (isinstance(op, PointwiseOp) and op.op_func_name.data == op_func and op.consts is None
            and len(op.inputs) == operands and not op.get_hints() and sum(1 for _ in value.uses) == reads):
        return None
    return op


def _rotated_half_of(value: SSAValue) -> SSAValue | None:
    """``x`` when ``value`` is the assembly ``cat((-x2, x1), -1)`` of the halves of ``x`` along its
    last dim, of whole sticks, as the cat emitter writes it (copies of ``neg(x2)`` and ``x1``), read
    only once; else None."""
    second = value.owner
    if not isinstance(second, tensor.InsertSliceOp) or not value.has_one_use():
        return None
    first = second.dest.owner
    if not isinstance(first, tensor.InsertSliceOp) or not isinstance(first.dest.owner, tensor.EmptyOp) \
            or not first.dest.has_one_use() or not first.result.has_one_use():
        return None
    inserts = (first, second)
    copies = [_plain(op.source, "identity", 1) for op in inserts]
    if None in copies:
        return None
    negated, low = (copy.inputs[0] for copy in copies)
    neg = _plain(negated, "neg", 1)
    high = None if neg is None else _half_of(neg.inputs[0])
    if high is None or high[1] == 0 or _half_of(low, high[0]) != (high[0], 0):
        return None
    x, half = high[0], shape_of(low)[-1]
    offsets = tuple(tuple(op.static_offsets.get_values()) for op in inserts)
    rank = len(shape_of(x))
    if offsets != ((0,) * rank, (*(0,) * (rank - 1), half)) or not _whole_sticks(half, elem_of(x)):
        return None
    return x


def _split_product(value: SSAValue) -> tuple[SSAValue, SSAValue] | None:
    """The operands of ``value``'s ``mul`` (:func:`_plain`, read by no op yet), None when it is no
    such product."""
    op = _plain(value, "mul", 2, reads=0)
    return None if op is None else (op.inputs[0], op.inputs[1])


def _halves(cx: NodeEmitter, v: SSAValue, half: int) -> tuple[SSAValue, SSAValue]:
    """The two halves of ``v`` along its last dim (``v`` itself twice when it broadcasts there)."""
    shape = shape_of(v)
    if shape[-1] == 1:
        return v, v
    dims = [AffineExpr.dimension(d) for d in range(len(shape))]
    low, high = (cx.view(v, AffineMap(len(shape), 0, (*dims[:-1], dims[-1] + shift)), (*shape[:-1], half))
                 for shift in (0, half))
    return low, high


def _rotary_terms(direct: SSAValue, rotated: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue] | None:
    """``(q, cos, sin)`` when ``direct`` is ``q * cos`` and ``rotated`` is ``rotate_half(q) * sin``
    (:func:`_rotated_half_of`), with ``cos`` and ``sin`` of ``q``'s element type, none broadcasting
    ``q`` and each either whole along the last dim or broadcast along it."""
    products = _split_product(direct), _split_product(rotated)
    if None in products:
        return None
    (a, b), (c, d) = products
    for r, sin in ((c, d), (d, c)):
        q = _rotated_half_of(r)
        if q is None:
            continue
        cos = b if a is q else a if b is q else None
        if cos is None:
            return None
        shape = shape_of(q)
        for v in (cos, sin):
            s = shape_of(v)
            if elem_of(v) != elem_of(q) or len(s) > len(shape) or s[-1] not in (1, shape[-1]) \
                    or any(n not in (1, m) for n, m in zip(reversed(s), reversed(shape))):
                return None
        return q, cos, sin
    return None


def rotated_on_halves(cx: NodeEmitter, x: SSAValue, y: SSAValue) -> SSAValue | None:
    """``x + y`` for ``x = q * cos`` and ``y = rotate_half(q) * sin`` (either way round, either
    operand order of each product), ``rotate_half`` of halves of whole sticks, every element type
    the same: computed on the halves and written into their windows of the result (see the module
    docstring); None for any other sum, when a product or the rotation is read elsewhere (by the
    graph's other nodes, or by the ops emitted so far), or when
    an op of the sum carries hints (its group would write an assembly, which is not tiled)."""
    if cx.hints is not None and len(cx.hints):
        return None
    if not all(isinstance(a, torch.fx.Node) and len(a.users) == 1 for a in cx.node.args[:2]):
        return None  # a product is read by another node too
    for direct, rotated in ((x, y), (y, x)):
        found = _rotary_terms(direct, rotated)
        if found is not None:
            break
    else:
        return None
    q, cos, sin = found
    elem, shape = elem_of(q), shape_of(q)
    if cx.out_elem(q) != elem or tuple(cx.val.shape) != shape:
        return None
    half = shape[-1] // 2
    q1, q2 = _halves(cx, q, half)
    cos1, cos2 = _halves(cx, cos, half)
    sin1, sin2 = _halves(cx, sin, half)
    low = cx.binary("sub", cx.binary("mul", q1, cos1), cx.binary("mul", q2, sin1))
    high = cx.binary("add", cx.binary("mul", q2, cos2), cx.binary("mul", q1, sin2))
    full = cx.upstream(tensor.EmptyOp([], tensor_type(elem, shape)))
    full = cx.upstream(tensor.InsertSliceOp.from_static_parameters(low, full, [0] * len(shape), shape_of(low)))
    return cx.upstream(tensor.InsertSliceOp.from_static_parameters(
        high, full, [*(0,) * (len(shape) - 1), half], shape_of(high)))
