"""Working-set reduction seed (seed 002): ``x @ y + z`` tiled on M (8) around K (4).

``build()`` is Example 1 (2-d ``x`` named ``[M, K]``); ``build_view()`` is
Example 2, where a flat ``x_1d`` of ``M * K`` elements is named ``["M", "K"]``
and viewed as ``[M, K]`` inside the kernel.

    spyre-import examples/wsr_matmul.py:build
    spyre-import examples/wsr_matmul.py:build_view
"""

import torch

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint

M, K, N = 64, 256, 128


def _declare():
    declare_tensor_dim("M", M)
    declare_tensor_dim("K", K)
    declare_tensor_dim("N", N)


def kernel(x, y, z):
    with spyre_hint(tiles={"M": 8}):
        with spyre_hint(tiles={"K": 4}):
            p = x @ y
        return p + z


def kernel_view(x_1d, y, z):
    with spyre_hint(tiles={"M": 8, "K": 4}):
        return x_1d.view(M, K) @ y + z


def _yz():
    y = torch.rand(K, N, dtype=torch.float16)
    z = torch.rand(M, N, dtype=torch.float16)
    name_tensor_dims(y, ["K", "N"])
    name_tensor_dims(z, ["M", "N"])
    return y, z


def build():
    _declare()
    torch.manual_seed(0)
    x = torch.rand(M, K, dtype=torch.float16)
    name_tensor_dims(x, ["M", "K"])
    return kernel, (x, *_yz())


def build_view():
    _declare()
    torch.manual_seed(0)
    x_1d = torch.rand(M * K, dtype=torch.float16)
    name_tensor_dims(x_1d, ["M", "K"])
    return kernel_view, (x_1d, *_yz())
