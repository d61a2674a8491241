"""Batched matmuls whose tensors put their row dim just outside the stick
(``spyre_mlir.passes.stickify.rows``): computed operands and a returned result, and expert
weights staged with their experts outermost, compared with eager on 1, 4 and 32 cores; the plan
holds no batch just outside the stick of any of them."""

from __future__ import annotations

import pytest
import torch
from xdsl.context import Context

import spyre_mlir
from spyre_mlir.analysis.cost import batch_inside
from spyre_mlir.analysis.work import work_problem
from spyre_mlir.dialects.spyre import MatmulOp
from spyre_mlir.importer import export_model, import_program
from spyre_mlir.interpreter import compare, tolerance_for
from spyre_mlir.pipeline import compile_stages


class Products(torch.nn.Module):
    """``exp(a) @ exp(b)``: both operands computed, the result returned as the matmul writes it."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a.exp(), b.exp())


class Experts(torch.nn.Module):
    """Each of 4 experts' tokens through its weights ``[E, N, K]``, read transposed."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(4, 192, 128) / 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(torch.relu(x), self.weight.transpose(1, 2))


CASES = {"products": (Products, lambda: (torch.rand(8, 64, 128) - 0.5, torch.rand(8, 128, 96) - 0.5)),
         "experts": (Experts, lambda: (torch.randn(4, 256, 128),))}


@pytest.mark.parametrize("cores", [1, 4, 32])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_batched_matmul_holds_no_batch_just_outside_a_stick_and_matches_eager(case, cores):
    torch.manual_seed(0)
    factory, inputs = CASES[case]
    module = factory().half().eval()
    args = tuple(x.half() for x in inputs())
    planned = import_program(export_model(module, args))
    for stage in compile_stages(cores)[:-1]:
        stage.apply(Context(), planned)
    matmuls = [op for op in planned.walk() if isinstance(op, MatmulOp)]
    assert matmuls and all(batch_inside(work_problem(op)) == (1, 1, 1) for op in matmuls)
    with torch.no_grad():
        want = module(*args)
        got = spyre_mlir.compile(module, args, cores=cores).run(*args)
    compare(case, got.numpy(), want.numpy(), tolerance_for("float16"))
