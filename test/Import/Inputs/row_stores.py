import torch


class KeyCache(torch.nn.Module):
    """Writes one position's keys into a cache buffer (index_copy_), then reads the whole cache."""

    def __init__(self):
        super().__init__()
        self.register_buffer("keys", torch.zeros(1, 2, 16, 32))

    def forward(self, rows, position):
        self.keys.index_copy_(2, position, rows * 2)
        return self.keys.sum(-1)


class KeyValueCache(KeyCache):
    """Two caches written by indexed assignment (index_put_), and a buffer only overwritten."""

    def __init__(self):
        super().__init__()
        self.register_buffer("values", torch.zeros(1, 2, 16, 32))
        self.register_buffer("scale", torch.ones(2))

    def forward(self, rows, position):
        self.scale.copy_(torch.full((2,), 3.0))
        self.keys[:, :, position] = rows
        self.values[:, :, position] = -rows
        return self.keys + self.values


class _Layer:
    """A plain object holding the cache (as transformers' StaticCache layers do)."""


class AliasedCache(torch.nn.Module):
    """The cache is a registered buffer, but the model writes it through a plain object: non-strict
    torch.export lifts it as a constant that the program mutates."""

    def __init__(self):
        super().__init__()
        self.layer = _Layer()
        self.layer.keys = torch.zeros(2, 16, 32)
        self.register_buffer("keys", self.layer.keys, persistent=False)

    def forward(self, rows, position):
        self.layer.keys.index_copy_(1, position, rows)
        return self.layer.keys * 2


class Accumulating(KeyCache):
    def forward(self, rows, position):
        torch.ops.aten.index_put_(self.keys, [None, None, position], rows, True)
        return self.keys.sum(-1)


def build_index_copy():
    return KeyCache(), (torch.randn(1, 2, 1, 32), torch.tensor([3]))


def build_index_put():
    return KeyValueCache(), (torch.randn(1, 2, 1, 32), torch.tensor([3]))


def build_aliased():
    return AliasedCache(), (torch.randn(2, 1, 32), torch.tensor([5]))


def build_accumulate():
    return Accumulating(), (torch.randn(1, 2, 1, 32), torch.tensor([3]))
