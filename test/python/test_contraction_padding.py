"""Matmuls whose K is not a whole number of sticks, with operands computed by pointwise ops.

The matmul reads both operands past K (a K of 5 float32 elements is read as a stick of 32), and a
pointwise op writes its op func of the padding there (``x + 1`` holds ones, ``log(x)`` holds
``-inf``).  spyre-mask-contractions masks an operand wherever the two would not multiply to zero
(``test/Transforms/mask-contractions/mask-contractions.mlir``); these compile every pairing of
such producers and compare with eager.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import spyre_mlir
from e2e_support import outputs_match_eager
from spyre_mlir.interpreter import compare, tolerance_for

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


class _DroppedInfinity(torch.nn.Module):
    """``log(x + 1)[:, :38] @ w`` where the columns the slice drops are ``-inf``: the left-hand side
    reads them past K, where the weight's padding is zero (``-inf * 0`` is NaN)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(38, 16).half())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x + 1)[:, :38] @ self.w


class _MixedSum(torch.nn.Module):
    """A sum over rows of a concatenation whose pieces hold 1 and 0 past K: the device holds 1 there,
    neither 0 nor 4 (the sums of one value), and ``s == 1`` holds 1."""

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        s = torch.cat([x1 + 1, x2], 0).sum(0, keepdim=True)
        return (s == 1).to(s.dtype) @ (z * 2 + 1).t()


class _SumPastFloat16(torch.nn.Module):
    """``((1 - x) * 1000).sum(0) @ w`` in float16: 100 rows of 1000 past K are 1e5, infinite in
    float16 (times the weight's zeros: NaN)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(40, 16).half())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ((1 - x) * 1000).sum(0, keepdim=True) @ self.w


class _Flattened(torch.nn.Module):
    """``x.reshape(8, 6) @ (z + 1)`` of an ``x`` [8, 2, 3]: both operands hold finite values past K;
    masking the flattening (K read as ``3 * d1 + d2``) could not be lowered, so ``z + 1`` is."""

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return x.reshape(8, 6) @ (z + 1)


def _dropped_infinity() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    x = (torch.rand(8, 100) + 0.5).half()
    x[:, 40:] = -1
    return _DroppedInfinity(), (x,)


def _sum_past_float16() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    x = torch.ones(100, 40).half()
    x[0] = 0.999
    return _SumPastFloat16(), (x,)


REVIEWED = {
    "dropped_infinity": _dropped_infinity,
    "flattened": lambda: (_Flattened(), (torch.randn(8, 2, 3), torch.randn(6, 12))),
    "mixed_sum": lambda: (_MixedSum(), (torch.rand(1, 5), torch.rand(3, 5), torch.rand(12, 5))),
    "sum_past_float16": _sum_past_float16,
}
"""Programs whose padding past K the analysis once took for zeros or finite values (name: build)."""


@pytest.mark.parametrize("cores", (1, 4))
@pytest.mark.parametrize("name", sorted(REVIEWED))
def test_regression_padding_the_program_drops_or_mixes_is_masked(name, cores):
    """Data a slice drops may be infinite; a sum of a padding holding several values is none of
    their sums; a sum of one value is rounded to float16.  Each was unmasked: off by 27 or NaN.
    And of two operands either of which would do, the one read as it is is masked: a mask of a
    flattening was an internal error in lowering."""
    torch.manual_seed(0)
    module, inputs = REVIEWED[name]()
    with torch.no_grad():
        outputs_match_eager(module, inputs, cores, (name,))


class _CacheReadThenWritten(torch.nn.Module):
    """Reads a cache (K = its 20 columns, fp32) before storing a row ``x @ wk + 1`` into it, whose
    padding holds ones: the next run reads them past K."""

    def __init__(self) -> None:
        super().__init__()
        self.wq = torch.nn.Parameter(torch.randn(20, 20) / 4)
        self.wk = torch.nn.Parameter(torch.randn(20, 20) / 4)
        self.register_buffer("cache", torch.zeros(16, 20))

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        out = (x @ self.wq + 1) @ self.cache.t()
        self.cache.index_copy_(0, pos, x @ self.wk + 1)
        return out


def test_regression_an_argument_updated_in_place_may_hold_anything_past_k():
    """A buffer a row store updates keeps, from one run to the next, what the stored rows held past
    K: the analysis took it for a staged argument's zeros, and runs after the first were off by 12."""
    torch.manual_seed(0)
    module = _CacheReadThenWritten()
    reference = copy.deepcopy(module)
    with torch.no_grad():
        compiled = spyre_mlir.compile(module, (torch.randn(1, 20), torch.tensor([0])), cores=1)
        for step in range(3):
            x, pos = torch.randn(1, 20), torch.tensor([step])
            want = reference(x, pos)
            got = torch.as_tensor(np.asarray(compiled.run(x, pos)))
            compare(f"run {step}", got.float().numpy(), want.numpy(), tolerance_for("float32"))
