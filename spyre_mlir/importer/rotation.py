# Rotary embeddings' rotate_half as one matmul: `cat((-x2, x1), -1)` of the two
# halves of one tensor along its last dim, each narrower than a stick, is `x @ R`,
# R a constant signed permutation.  Reads the pieces of an aten.cat as imported (a
# neg of one half-view and the other half-view of the same value); writes a
# spyre.matmul with a constant argument, or nothing for any other concatenation.
# Used by the importer's cat emitter.
"""``rotate_half`` as a matmul by a signed permutation (:func:`half_rotation`).

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
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from spyre_mlir.dialects.spyre import PointwiseOp, ViewOp, element_dtype
from spyre_mlir.hardware import element_bytes
from spyre_mlir.importer.emitter import NodeEmitter, elem_of, shape_of
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
    if half % (STICK_BYTES // element_bytes(element_dtype(elem))) == 0:
        return None
    rotation = torch.zeros(2 * half, 2 * half)
    rotation[half:, :half] = torch.diag(torch.full((half,), -1.0))
    rotation[:half, half:] = torch.eye(half)
    return cx.matmul(x, cx.tensor(rotation, elem))
