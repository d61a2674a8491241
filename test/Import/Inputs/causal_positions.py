import torch


def kernel(x):
    pos = torch.arange(x.shape[-2])
    allowed = pos[:, None] >= pos[None, :]
    scores = (x @ x.transpose(-1, -2)).masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) + pos[:, None].to(x.dtype)


def build():
    return kernel, (torch.randn(4, 64, dtype=torch.float16),)
