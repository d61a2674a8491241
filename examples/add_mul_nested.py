"""Coarse-tiling seed example (seed 000): ``y = a + b; z = y * c`` on fp16 [1024, 4096].

Rows (A) are split in 2 tiles by the outer hint, columns (B) in 4 by the inner
one, so each inner iteration works on a 512 x 1024 tile.

    spyre-import examples/add_mul_nested.py:build
"""

import torch

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint

A, B = 1024, 4096


class AddMulNested(torch.nn.Module):
    def forward(self, a, b, c):
        with spyre_hint(slices={"A": 2}):  # outer loop: 2 iterations over rows
            with spyre_hint(slices={"B": 4}):  # inner loop: 4 iterations over columns
                y = a + b
                z = y * c
        return z


def build():
    declare_tensor_dim("A", A)
    declare_tensor_dim("B", B)
    torch.manual_seed(0)
    inputs = tuple(torch.randn(A, B, dtype=torch.float16) for _ in range(3))
    for t in inputs:
        name_tensor_dims(t, ["A", "B"])
    return AddMulNested(), inputs
