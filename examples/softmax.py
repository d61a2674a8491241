"""Row softmax of an fp16 [512, 1024] tensor, tiled over rows (R) in 4.

    spyre-import examples/softmax.py:build
"""

import torch

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint

R, C = 512, 1024


class RowSoftmax(torch.nn.Module):
    def forward(self, x):
        with spyre_hint(tiles={"R": 4}):
            return torch.softmax(x, dim=-1)


def build():
    declare_tensor_dim("R", R)
    declare_tensor_dim("C", C)
    torch.manual_seed(0)
    x = torch.randn(R, C, dtype=torch.float16)
    name_tensor_dims(x, ["R", "C"])
    return RowSoftmax(), (x,)
