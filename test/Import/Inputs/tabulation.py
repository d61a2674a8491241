import torch


class DecodePosition(torch.nn.Module):
    """A decode step's position: it indexes a buffer of 4 rows (so it takes the values 0..3), and
    the rotary angle and the causal mask are computed from it."""

    def __init__(self):
        super().__init__()
        self.register_buffer("rows", torch.arange(16.0).reshape(4, 4))
        self.register_buffer("inv_freq", torch.tensor([1.0, 0.5, 0.25, 0.125]))

    def forward(self, x, pos):
        row = torch.index_select(self.rows, 0, pos)
        mask = torch.where(torch.arange(4) <= pos, 0.0, float("-inf"))
        return x * torch.cos(pos.float() * self.inv_freq) + mask + row


class StoreRow(torch.nn.Module):
    """The row a KV cache is written at, ``arange(1) + pos``: the input itself."""

    def __init__(self, offset=0):
        super().__init__()
        self.offset = offset
        self.weight = torch.nn.Parameter(torch.randn(16, 64))

    def forward(self, pos):
        return torch.index_select(self.weight, 0, torch.arange(1) + pos + self.offset)


def rotate(x, pos):
    return x * torch.cos(pos.float())


def build():
    return DecodePosition(), (torch.randn(2, 4), torch.tensor([1]))


def build_identity():
    return StoreRow(), (torch.tensor([3]),)


def build_offset():
    return StoreRow(1), (torch.tensor([3]),)


def build_unknown_range():
    return rotate, (torch.randn(2, 4), torch.tensor([1]))
