# Matmuls of one output column, in the decomposition table the importer hands to
# run_decompositions(): when the contraction is short (ConvBERT's span-based dynamic
# convolution, `[.., head, 9] @ [.., 9, 1]`), `a @ b` is `sum(a * b^T, -1)`, a product
# broadcast over the rows and a sum over the contraction.  Reads an aten.mm, aten.bmm or
# aten.addmm call; writes ATen transpose, mul, sum and add.  Every other matmul is left
# to the importer.
"""Matrix-vector products with a short contraction as a product and a sum (:func:`product_and_sum`).

The matmul unit fills sticks along a matmul's columns and its contraction: a matmul of one
output column writes a whole stick per row (64 times the float16 result) and reads the
left-hand side with its contraction padded to whole sticks.  The product and the sum read the
left-hand side, write the products and read them back, unpadded once sticked on the rows.  Per
output row, with ``K`` the contraction and ``b`` the bytes of an element, the matmul moves
``(ceil(K b / 128) + 1) * 128`` bytes and the product and sum ``3 K b``; the decomposition applies
where it moves fewer.  ConvBERT's ``K = 9`` in float16: 256 bytes against 54.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from spyre_mlir.limits import STICK_BYTES

aten = torch.ops.aten


def moves_fewer_bytes(contraction: int, itemsize: int) -> bool:
    """Whether a product and a sum move fewer bytes per output row than a one-column matmul of
    ``contraction`` elements of ``itemsize`` bytes (module docstring)."""
    matmul = (math.ceil(contraction * itemsize / STICK_BYTES) + 1) * STICK_BYTES
    return 3 * contraction * itemsize < matmul


def _applies(a: torch.Tensor, b: torch.Tensor) -> bool:
    return b.shape[-1] == 1 and a.dtype == b.dtype and moves_fewer_bytes(a.shape[-1], a.element_size())


def product_and_sum(a: torch.Tensor, b: torch.Tensor) -> Any:
    """``aten.mm`` / ``aten.bmm`` of ``b`` with one column and a short contraction as
    ``sum(a * b^T, -1, keepdim=True)``; ``NotImplemented`` for any other matmul."""
    if not _applies(a, b):
        return NotImplemented
    return aten.sum.dim_IntList(aten.mul.Tensor(a, aten.transpose.int(b, -1, -2)), [-1], True)


def biased_product_and_sum(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *, beta: Any = 1,
                           alpha: Any = 1) -> Any:
    """``aten.addmm`` (``bias + a @ b``) likewise; ``NotImplemented`` with a scale or another matmul."""
    if beta != 1 or alpha != 1 or not _applies(a, b):
        return NotImplemented
    return aten.add.Tensor(bias, product_and_sum(a, b))
