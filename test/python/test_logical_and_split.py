"""Bool values on the device and the slicing views models use, end to end.

A bool tensor computed from data is 0/1 in the float type it is computed in: comparisons give
their flag in their operands' type; ``logical_not`` / ``and`` / ``or`` / ``xor`` (and the bitwise
ops on bools) are arithmetic on flags; ``any`` / ``all`` are a max / min reduction of flags;
``where`` and ``masked_fill`` select by the flag.  This is how the safe softmax of
``scaled_dot_product_attention``'s decomposition runs (``eq(-inf)``, ``logical_not``, ``any``,
``where``).  ``split``, ``split_with_sizes``, ``chunk``, ``unbind`` and ``narrow`` are views.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from e2e_support import ImportedPrograms, compile_and_check


def logical(x, y):
    both = (x > 0) & (y < 0.5)
    either = torch.logical_or(x < -1, y > 1)
    differ = torch.logical_xor(both, ~either)
    picked = torch.where(differ | torch.logical_not(x == y), x, y)
    rows = (x > 1).any(-1, keepdim=True).to(x.dtype) + (y > -3).all(-1, keepdim=True).to(x.dtype)
    return picked.masked_fill(either, -2.0) + rows


def sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def sdpa_causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def split_views(x):
    q, k, v = x.split(64, dim=-1)
    a, b = x.chunk(2, dim=0)
    first, *_ = x.unbind(0)
    return (q @ k.transpose(-1, -2) @ v).sum(-1) + (a - b).sum(-1) + first.narrow(-1, 64, 128).sum(-1)


def split_sizes(x):
    head, tail = torch.split(x, [40, 24], dim=1)
    return head.sum(1) - tail.amax(1)


def select_inner(x):
    """``x[1]`` of ``[2, 64, 192]``: dim 0 lies inside dim 1 on the device."""
    return x[1][:, 64:192].sum(-1) + x[0].amax(-1)


def _qkv(length: int, dtype: torch.dtype):
    return lambda: tuple(torch.randn(1, 2, length, 64, dtype=dtype) for _ in range(3))


PROGRAMS = {
    "logical_fp16": lambda: (logical, (torch.randn(64, 128, dtype=torch.float16),
                                       torch.randn(64, 128, dtype=torch.float16))),
    "logical_bf16": lambda: (logical, (torch.randn(64, 96, dtype=torch.bfloat16),
                                       torch.randn(64, 96, dtype=torch.bfloat16))),
    "sdpa_64_fp16": lambda: (sdpa, _qkv(64, torch.float16)()),
    "sdpa_100_fp32": lambda: (sdpa, _qkv(100, torch.float32)()),
    "sdpa_causal_100_fp16": lambda: (sdpa_causal, _qkv(100, torch.float16)()),
    "split_views": lambda: (split_views, (torch.randn(2, 64, 192, dtype=torch.float16) / 4,)),
    "split_sizes": lambda: (split_sizes, (torch.randn(4, 64, 128),)),
}

SELECT_INNER = {"select_inner": lambda: (select_inner, (torch.randn(2, 64, 192, dtype=torch.float16),))}

imported = ImportedPrograms({**PROGRAMS, **SELECT_INNER})


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


def test_sdpa_safe_softmax_runs_on_the_device():
    """The bool chain of the decomposition is device ops, not compile-time constants."""
    _, module = imported("sdpa_64_fp16")
    funcs = [op.op_func_name.data for op in module.walk() if hasattr(op, "op_func_name")]
    assert {"equal", "where3"} <= set(funcs)
    assert "constant" not in str(module.ops.first.arg_attrs)


def test_the_causal_mask_is_a_constant():
    _, module = imported("sdpa_causal_100_fp16")
    roles = [a.data["spyre.role"].data for a in module.ops.first.arg_attrs.data]
    assert roles.count("constant") == 1


@pytest.mark.parametrize("cores", [1, 4])
def test_a_select_inside_an_iterated_dim_reads_its_own_rows(cores, tmp_path):
    """Once read in place with no label for the fixed dim: row r of x[1] read row r/2 of x's storage
    interleaved across x[0] and x[1] (wrong numbers on 1 core, a rejected SDSC on 4)."""
    compile_and_check("select_inner", cores, tmp_path / "out", imported)
