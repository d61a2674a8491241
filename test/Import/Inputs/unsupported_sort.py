import torch


def kernel(x):
    y = x + 1
    return torch.sort(y).values


def build():
    return kernel, (torch.randn(4, 64),)
