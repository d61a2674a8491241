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


class AttendedCache(torch.nn.Module):
    """A decode step's attention scores against a key cache of 64 float32 positions (two sticks of
    32): one position written (index_copy_), then every position read transposed (``q @ K^T``, a
    matmul whose B is sticked on the positions)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("keys", torch.zeros(1, 2, 64, 32))

    def forward(self, rows, position):
        self.keys.index_copy_(2, position, rows)
        return rows @ self.keys.transpose(-1, -2)


class PromptRun(AttendedCache):
    """A prefill's store: the positions ``start .. start + len(rows)`` (an ``arange`` known at compile
    time), then the same read."""

    def __init__(self, start: int):
        super().__init__()
        self.start = start

    def forward(self, rows):
        positions = torch.arange(self.start, self.start + rows.shape[2])
        self.keys.index_copy_(2, positions, rows)
        return rows @ self.keys.transpose(-1, -2)


def build_attended():
    return AttendedCache(), (torch.randn(1, 2, 1, 32), torch.tensor([37]))


def build_prompt_run():
    """Positions 8 to 47: inside the first block of 32 and the second, neither whole."""
    return PromptRun(8), (torch.randn(1, 2, 40, 32),)


def build_prompt_blocks():
    """Positions 0 to 63: two whole blocks."""
    return PromptRun(0), (torch.randn(1, 2, 64, 32),)


def build_index_copy():
    return KeyCache(), (torch.randn(1, 2, 1, 32), torch.tensor([3]))


def build_index_put():
    return KeyValueCache(), (torch.randn(1, 2, 1, 32), torch.tensor([3]))


def build_aliased():
    return AliasedCache(), (torch.randn(2, 1, 32), torch.tensor([5]))


def build_accumulate():
    return Accumulating(), (torch.randn(1, 2, 1, 32), torch.tensor([3]))


def build_prompt_past_the_cache():
    """Positions 40 to 79 of a cache of 64."""
    return PromptRun(40), (torch.randn(1, 2, 40, 32),)
