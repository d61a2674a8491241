import torch


def padding_mask(scores, attention_mask):
    # transformers' masking_utils: padding_mask[batch_idx, kv_idx] with arange grids, and the causal mask
    batch, length = attention_mask.shape
    batch_idx = torch.arange(batch)[:, None, None, None]
    kv_idx = torch.arange(length)[None, None, None, :]
    q_idx = torch.arange(length)[None, None, :, None]
    allowed = (kv_idx <= q_idx) & attention_mask.bool()[batch_idx, kv_idx]
    return scores + torch.where(allowed, 0.0, float("-inf"))


def masked_rows(x, mask):
    return x * mask[:, :, None]


def data_index(x, rows):
    return x[:, rows]


def positions(mask):
    return mask.cumsum(-1) * mask


def position_rows(table, mask):
    # position ids of left-padded rows from the mask's running sum, read as an index
    return table[(mask.cumsum(-1) - 1).clamp(min=0)]


def index_and_data(table, ids):
    return table[ids] * ids[:, :, None]


def shuffled(x):
    return x[torch.tensor([0, 2, 1])]


def shuffled_pairs(x):
    return x[torch.tensor([0, 2, 1]), torch.tensor([1, 0, 1])]


def build_padding_mask():
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1, 1, 1]])
    return padding_mask, (torch.randn(2, 1, 8, 8), mask)


def build_masked_rows():
    return masked_rows, (torch.randn(2, 8, 64, dtype=torch.float16), torch.ones(2, 8, dtype=torch.bool))


def build_data_index():
    return data_index, (torch.randn(4, 50, 64), torch.randint(0, 50, (40,)))


def build_positions():
    return positions, (torch.ones(2, 8, dtype=torch.int64),)


def build_position_rows():
    return position_rows, (torch.randn(16, 64), torch.ones(2, 8, dtype=torch.int64))


def build_uint16_mask():
    return masked_rows, (torch.randn(2, 8, 64, dtype=torch.float16), torch.ones(2, 8, dtype=torch.uint16))


def build_index_and_data():
    return index_and_data, (torch.randn(8, 64), torch.randint(0, 8, (2, 4)))


def build_shuffled():
    return shuffled, (torch.randn(3, 64),)


def build_shuffled_pairs():
    return shuffled_pairs, (torch.randn(3, 2, 64),)
