import torch


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def stacked(a, b):
    return torch.stack([a, b * 2])


def build_rotate_half():
    return rotate_half, (torch.randn(2, 16, 64, dtype=torch.float16),)


def swapped_halves(x):
    half = x.shape[-1] // 2
    return torch.cat((x[..., half:], x[..., :half]), dim=-1)


def build_stack():
    return stacked, (torch.randn(8, 64), torch.randn(8, 64))


def build_swapped_halves():
    return swapped_halves, (torch.randn(2, 16, 64, dtype=torch.float16),)


def rotary(q, cos, sin):
    return q * cos + rotate_half(q) * sin


def rotary_product_read_twice(q, cos, sin):
    direct = q * cos
    return direct + rotate_half(q) * sin, direct


def _rotary_inputs():
    angles = torch.randn(16, 128)
    return (torch.randn(1, 2, 16, 128, dtype=torch.float16), angles.cos().half(), angles.sin().half())


def build_rotary():
    return rotary, _rotary_inputs()


def build_rotary_product_read_twice():
    return rotary_product_read_twice, _rotary_inputs()
