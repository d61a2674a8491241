import torch


class TokenEmbedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Embedding(1000, 96, dtype=torch.float16)

    def forward(self, input_ids):
        return self.wte(input_ids)


def select_rows(table, rows):
    return torch.index_select(table, 1, rows)


def gather_last(table, index):
    return torch.gather(table, 1, index)


def select_ids(ids, rows):
    return torch.index_select(ids, 0, rows)


def build_embedding():
    return TokenEmbedding(), (torch.randint(0, 1000, (2, 100)),)


def build_index_select():
    return select_rows, (torch.randn(4, 50, 64), torch.randint(0, 50, (40,)))


def build_gather():
    return gather_last, (torch.randn(4, 50, dtype=torch.float16), torch.randint(0, 50, (4, 40)))


def build_integer_table():
    return select_ids, (torch.randint(0, 9, (10, 64)), torch.randint(0, 10, (4,)))
