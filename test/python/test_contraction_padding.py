"""Matmuls whose K is not a whole number of sticks, with operands computed by pointwise ops.

The matmul reads both operands past K (a K of 5 float32 elements is read as a stick of 32), and a
pointwise op writes its op func of the padding there (``x + 1`` holds ones, ``log(x)`` holds
``-inf``).  spyre-mask-contractions masks an operand wherever the two would not multiply to zero
(``test/Transforms/mask-contractions/mask-contractions.mlir``); these compile every pairing of
such producers and compare with eager.
"""

from __future__ import annotations

import pytest
import torch

from e2e_support import outputs_match_eager

PRODUCERS = {
    "as_is": lambda t: t,
    "plus_one": lambda t: t + 1,
    "exp": torch.exp,
    "log": torch.log,
    "reciprocal": torch.reciprocal,
    "scaled_shift": lambda t: t * 2 + 1,
}
"""Pointwise producers and what each holds past K of a staged operand (zeros): zeros, ones, ones,
``-inf``, ``inf``, ones."""


class _Product(torch.nn.Module):
    """``f(x) @ g(z).T``: the right-hand side computed sticked on K, then restickified onto N."""

    def __init__(self, f: str, g: str) -> None:
        super().__init__()
        self.f, self.g = PRODUCERS[f], PRODUCERS[g]

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self.f(x) @ self.g(z).t()


PAIRS = [(f, g) for f in PRODUCERS for g in PRODUCERS]


@pytest.mark.parametrize("f,g", PAIRS, ids=[f"{f}-{g}" for f, g in PAIRS])
def test_products_of_pointwise_producers_of_a_partial_stick_match_eager(f, g):
    torch.manual_seed(0)
    x, z = torch.rand(8, 5) + 0.5, torch.rand(12, 5) + 0.5
    outputs_match_eager(_Product(f, g), (x, z), 1, ("mm",))


@pytest.mark.parametrize("dtype,k,cores", [(torch.float16, 40, 4), (torch.bfloat16, 100, 32), (torch.float32, 40, 32)])
def test_batched_products_of_pointwise_producers_match_eager(dtype, k, cores):
    """``exp(x) @ (z * 2 + 1)`` batched, K of 40 float16 (64 per stick), 100 bfloat16 (two sticks
    less 28), 40 float32 (a stick and 8): ones past K in both."""

    class Batched(torch.nn.Module):
        def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
            return torch.exp(x) @ (z * 2 + 1)

    torch.manual_seed(0)
    x, z = torch.randn(2, 16, k).to(dtype) / 4, torch.randn(2, k, 24).to(dtype) / 4
    outputs_match_eager(Batched(), (x, z), cores, ("bmm",))


class _Singular(torch.nn.Module):
    """``(x + 1) @ (z * 2 + 1).T`` (ones past K in both: each element off by 27 unmasked) and
    ``log(x) @ w`` and ``(1 / x) @ w`` (``-inf`` and ``inf`` past K times the staged weight's
    zeros: NaN unmasked)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(5, 12))

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return (x + 1) @ (z * 2 + 1).t(), torch.log(x) @ self.w, (1 / x) @ self.w


@pytest.mark.parametrize("cores", (1, 4, 32))
def test_regression_what_a_matmul_reads_past_k_is_zero_in_one_operand_and_finite_in_the_other(cores):
    """A matmul contracts K padded to whole sticks; past K each pointwise producer holds its op
    func of the zeros it read there.  Both operands holding ones added 27 to every element; the
    left-hand side holding ``-inf`` made every element NaN."""
    torch.manual_seed(0)
    x, z = torch.rand(8, 5) + 0.5, torch.randn(12, 5)
    with torch.no_grad():
        outputs_match_eager(_Singular(), (x, z), cores, ("ones", "log", "reciprocal"))


class _SlicedProduct(torch.nn.Module):
    """``(x @ y)[..., :38] @ (z[:, :38] + 1).T``: the importer folds the column slice into the first
    matmul, which computes all 100 columns into the padding of its [4, 38] result; the right-hand
    side, computed sticked on K and restickified, holds ``z``'s columns past 38 plus one there."""

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return (x @ y)[..., :38] @ (z[:, :38] + 1).t()


@pytest.mark.parametrize("cores", (1, 32))
def test_regression_a_matmul_computing_past_its_result_holds_data_in_its_padding(cores):
    """spyre-mask-contractions took the first product's padding for zeros (its right-hand side is
    staged with zeros past its columns), so it masked neither operand: off by up to 7.3 (fp16)."""
    torch.manual_seed(0)
    x, y, z = (torch.randn(shape).half() / 4 for shape in ((4, 77), (77, 100), (128, 100)))
    outputs_match_eager(_SlicedProduct(), (x, y, z), cores, ("mm",))
