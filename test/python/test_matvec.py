"""Matmuls of one output column (``spyre_mlir.importer.matvec``): with a short contraction
(ConvBERT's span-based dynamic convolution, ``[.., 64, 9] @ [.., 9, 1]``) a product broadcast over
the rows and a sum over the contraction, which move fewer bytes than a matmul padding its column
and its contraction to whole sticks; with a long one, a matmul.  Compared with eager on 1, 4 and
32 cores."""

from __future__ import annotations

import pytest
import torch

import spyre_mlir
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.importer.matvec import moves_fewer_bytes
from spyre_mlir.interpreter import compare, tolerance_for


class Batched(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def _op_names(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> list[str]:
    imported = import_program(export_model(module, inputs))
    return [op.name for op in imported.walk() if op.name.startswith("spyre.")]


def _matches_eager(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], cores: int) -> None:
    with torch.no_grad():
        want = module(*inputs)
        got = spyre_mlir.compile(module, inputs, cores=cores).run(*inputs)
    assert got.shape == want.shape
    compare("matvec", got.numpy(), want.numpy(), tolerance_for(str(want.dtype).removeprefix("torch.")))


@pytest.mark.parametrize("contraction,itemsize,fewer", [
    (9, 2, True), (42, 2, True), (43, 2, False), (64, 2, False), (21, 4, True), (22, 4, False), (1, 2, True)])
def test_the_product_and_sum_applies_where_it_moves_fewer_bytes_per_row(contraction, itemsize, fewer):
    """``3 K b`` bytes against ``(ceil(K b / 128) + 1) * 128``: float16 up to 42 elements, float32 up
    to 21."""
    assert moves_fewer_bytes(contraction, itemsize) is fewer


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_a_one_column_batched_matmul_with_a_short_contraction_is_a_product_and_a_sum(dtype, cores):
    torch.manual_seed(0)
    inputs = (torch.randn(8, 64, 9, dtype=dtype), torch.randn(8, 9, 1, dtype=dtype))
    names = _op_names(Batched(), inputs)
    assert "spyre.matmul" not in names
    assert names.count("spyre.pointwise") == 1 and names.count("spyre.reduce") == 1
    _matches_eager(Batched(), inputs, cores)


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_a_one_output_linear_with_a_short_contraction_adds_its_bias_to_the_sum(cores):
    """``nn.Linear(9, 1)``: ``aten.addmm``, the bias added to the sum."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(9, 1).half().eval()
    inputs = (torch.randn(96, 9, dtype=torch.float16),)
    assert "spyre.matmul" not in _op_names(linear, inputs)
    _matches_eager(linear, inputs, cores)


@pytest.mark.parametrize("cores", [1, 4])
def test_a_one_output_linear_with_a_long_contraction_stays_a_matmul(cores):
    """``nn.Linear(256, 1)`` in float16: the matmul reads 512 bytes a row and writes a stick, 640;
    a product and a sum would move 1536."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(256, 1, bias=False).half().eval()
    inputs = (torch.randn(96, 256, dtype=torch.float16),)
    assert "spyre.matmul" in _op_names(linear, inputs)
    _matches_eager(linear, inputs, cores)
