import torch


def attention(q, k, v):
    return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v


def _inputs(batch):
    torch.manual_seed(0)
    return tuple(torch.randn(batch, 2, 16, 32) for _ in range(3))


def build_one():
    return attention, _inputs(1)


def build_two():
    return attention, _inputs(2)
