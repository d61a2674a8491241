"""Attention heads narrower than a stick, compiled and compared with eager.

A head of 32 fp16 elements (or 16, or 16 fp32) fills part of a stick of the projection's hidden
dim, which it shares with the next head: spyre-stickify reads such heads through a restickify of
the projection sticked on its sequence dim, and merges them back the same way
(``test/Transforms/stickify/narrow-heads.mlir``).  torch.nn's TransformerEncoderLayer and
transformers' LlamaModel (``examples/models.py``) at ``hidden=128``, on 1, 4 and 32 cores.
"""

from __future__ import annotations

import pytest
import torch

from e2e_support import ImportedPrograms, compile_and_check, example_models, outputs_match_eager

models = example_models()
Model = models.Model

CORES = (1, 4, 32)
MODELS = [Model("encoder", heads=4), Model("encoder", heads=8), Model("encoder", heads=8, dtype=torch.float32),
          Model("llama", attention="eager", heads=4), Model("llama", attention="sdpa", heads=4)]
CASES = [(model, cores) for model in MODELS for cores in CORES] + [
    (Model("encoder", heads=8, dtype=torch.float32, length=100), 4),
    (Model("llama", attention="sdpa", heads=4, length=100), 32),
]
"""(model, cores): heads of 32 and 16 fp16 elements and of 16 fp32 on every core count, and two
at a length of partial sticks."""

imported = ImportedPrograms({f"{m.name}-{m.heads}heads": (lambda m=m: models.build(m)) for m, _ in CASES})


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
@pytest.mark.parametrize("model,cores", CASES, ids=[f"{m.name}-{m.heads}heads-{c}cores" for m, c in CASES])
def test_heads_narrower_than_a_stick_match_eager(model, cores, tmp_path):
    if model.family in models.TRANSFORMERS:
        pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    compile_and_check(f"{model.name}-{model.heads}heads", cores, tmp_path / "out", imported)


class _FusedSingleHead(torch.nn.Module):
    """One head of 32 fp16 elements (half a stick) split from a fused QKV projection, attending;
    and the product of two such column slices of inputs (``x[:, :32] @ y[:, :32].T``)."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(64, 96, dtype=torch.float16)

    def forward(self, h: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, k, v = self.qkv(h).split(32, dim=-1)
        return torch.softmax(q @ k.t(), dim=-1) @ v, x[:, :32] @ y[:, :32].t()


@pytest.mark.parametrize("cores", CORES)
def test_regression_a_matmul_never_reads_data_as_the_zero_rows_of_its_padded_k(cores):
    """A matmul pads K to whole sticks and reads its right-hand side's rows past the true K as
    zeros.  When that operand was a slice of wider storage (the keys ``qkv[:, 32:64]``, whose next
    32 columns are the values; ``y[:, :32]`` of 64 columns), those rows held data: the scores
    added the values' products (wrong numbers on every core count).  The operand is now copied,
    its padding zeros, and both results match eager."""
    torch.manual_seed(0)
    module = _FusedSingleHead().eval()
    inputs = (torch.randn(10, 64, dtype=torch.float16), torch.randn(10, 64, dtype=torch.float16),
              torch.randn(12, 64, dtype=torch.float16))
    outputs_match_eager(module, inputs, cores, ("attention", "slices"))


SLICED_PRODUCTS = {
    "both_columns": (lambda x, y: x[:, :32] @ y[:, :32].t(), (10, 64), (10, 64)),
    "both_mid_columns": (lambda x, y: x[:, 64:96] @ y[:, 64:96].t(), (10, 128), (10, 128)),
    "right_columns": (lambda x, y: x @ y[:, :32].t(), (10, 32), (10, 64)),
    "left_columns": (lambda x, y: x[:, :32] @ y, (10, 64), (32, 12)),
    "right_rows": (lambda x, y: x[:, :32] @ y[:32], (10, 64), (64, 12)),
    "right_rows_at_an_offset": (lambda x, y: x[:, 16:48] @ y[16:48], (10, 64), (64, 12)),
    "batched_columns": (lambda x, y: x[:, :, :16] @ y[:, :, :16].transpose(1, 2), (3, 10, 48), (3, 12, 48)),
    "odd_columns": (lambda x, y: x[:, 5:28] @ y[:, 5:28].t(), (10, 40), (12, 40)),
}
"""Products whose K is a slice of part of a stick, of one operand or both (name: fn, shapes)."""


class _Product(torch.nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.fn(x, y)


@pytest.mark.parametrize("dtype,cores", [(torch.float16, 1), (torch.float32, 1), (torch.bfloat16, 32)])
@pytest.mark.parametrize("name", sorted(SLICED_PRODUCTS))
def test_a_product_of_slices_of_part_of_a_stick_matches_eager(name, dtype, cores):
    """Whichever operand is sliced along K, at whatever offset, the product is the slices' own."""
    fn, x_shape, y_shape = SLICED_PRODUCTS[name]
    torch.manual_seed(0)
    outputs_match_eager(_Product(fn), (torch.randn(*x_shape, dtype=dtype), torch.randn(*y_shape, dtype=dtype)),
                        cores, (name,))


class _RowsOfColumnsAtAnOffset(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x[:, :5] @ y[:5, 1:]


@pytest.mark.parametrize("cores", CORES)
def test_regression_a_right_hand_side_whose_copy_pads_k_with_data_meets_zeros(cores):
    """``x[:, :5] @ y[:5, 1:]``: to reach the columns from 1, ``y`` is restickified onto its rows,
    so the copy of the 5 rows pads them to a stick with the next rows' data, which the matmul read
    as K's zeros (the product over all 64 rows, on every core count), and then was one located
    error.  spyre-mask-contractions now zeroes both operands past K (each a slice reading data
    the program drops there), and the right-hand side is read in place."""
    torch.manual_seed(0)
    inputs = (torch.randn(4, 64, dtype=torch.float16), torch.randn(64, 64, dtype=torch.float16))
    outputs_match_eager(_RowsOfColumnsAtAnOffset(), inputs, cores, ("mm",))
