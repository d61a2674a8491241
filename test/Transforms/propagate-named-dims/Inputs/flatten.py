"""``x.flatten(0, 1) + y``: x [50, 10, 200] named [C, D, E], y [500, 200] named [C, D, E].

The flatten merges C and D into one dim that carries ["C", "D"].
"""

import torch

from spyre_mlir import declare_tensor_dim, name_tensor_dims

C, D, E = 50, 10, 200


def flatten_add(x, y):
    return x.flatten(0, 1) + y


def build():
    for name, size in (("C", C), ("D", D), ("E", E)):
        declare_tensor_dim(name, size)
    torch.manual_seed(0)
    x = torch.randn(C, D, E, dtype=torch.float16)
    y = torch.randn(C * D, E, dtype=torch.float16)
    name_tensor_dims(x, ["C", "D", "E"])
    name_tensor_dims(y, ["C", "D", "E"])
    return flatten_add, (x, y)
