import torch

LENGTH = 16


def causal(q, k, v):
    # transformers' causal mask from arange grids: every query row keeps at least its own key
    q_idx = torch.arange(LENGTH)[:, None]
    kv_idx = torch.arange(LENGTH)[None, :]
    mask = torch.where(kv_idx <= q_idx, 0.0, float("-inf"))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def first_row_masked(q, k, v):
    # a mask whose first query row masks every key: torch's safe softmax gives that row zeros
    q_idx = torch.arange(LENGTH)[:, None]
    kv_idx = torch.arange(LENGTH)[None, :]
    mask = torch.where((kv_idx <= q_idx) & (q_idx > 0), 0.0, float("-inf"))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def _inputs():
    torch.manual_seed(0)
    return tuple(torch.randn(1, 2, LENGTH, 32) for _ in range(3))


def build_causal():
    return causal, _inputs()


def build_first_row_masked():
    return first_row_masked, _inputs()
