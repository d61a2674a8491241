"""Seed 001's flatten example: ``x.flatten(0, 1) + y`` with x [50, 10, 200], y [500, 200] fp16.

    spyre-import flatten.py:build
"""

import torch


def flatten_add(x, y):
    return x.flatten(0, 1) + y


def build():
    torch.manual_seed(0)
    x = torch.rand(50, 10, 200, dtype=torch.float16)
    y = torch.rand(500, 200, dtype=torch.float16)
    return flatten_add, (x, y)


def build_transposed_matmul():
    """``a.t() @ b``: A is read transposed, so its stick (a's dim 1) is M, not K."""
    torch.manual_seed(0)
    a = torch.rand(256, 64, dtype=torch.float16)
    b = torch.rand(256, 128, dtype=torch.float16)
    return (lambda a, b: a.t() @ b), (a, b)
