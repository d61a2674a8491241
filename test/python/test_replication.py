"""Replicated ops (``core_replicas``): an op whose result each of a group of cores computes
whole into its own LX, so that a matmul reading it splits N without reading it from HBM.

A scaled MLP (``x * s`` scaling its rows, an up projection, silu, a down projection) is
where work division replicates: split K, the up projection would write partial sums to HBM
for the silu and the down projection to read there; split N, each core reads the scaled rows
whole, which its replicas computed into its LX.
"""

from __future__ import annotations

import json
import math

import pytest
import torch

from spyre_mlir.analysis.work import core_to_slice
from spyre_mlir.pipeline import compile
from reference_files import SCHEMA


class ScaledMlp(torch.nn.Module):
    """``x * s``, an up projection, silu and a down projection; ``gated``, silu of a gate
    projection of the scaled input times its up projection, as a transformer's MLP reads its norm."""

    def __init__(self, hidden: int = 512, inner: int = 2048, gated: bool = False):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(hidden))
        self.gate = torch.nn.Linear(hidden, inner, bias=False) if gated else None
        self.up = torch.nn.Linear(hidden, inner, bias=False)
        self.down = torch.nn.Linear(inner, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * self.scale
        if self.gate is None:
            return self.down(torch.nn.functional.silu(self.up(h)))
        return self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))


@pytest.fixture(scope="module")
def mlp() -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    return ScaledMlp().half().eval(), torch.randn(128, 512).half()


def test_core_to_slice_gives_consecutive_cores_one_slice():
    assert core_to_slice((2, 1, 4), (1, 0), 8) == [(0, 0)] * 4 + [(1, 0)] * 4
    assert core_to_slice((2, 3), (1, 0), 6) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_scaled_mlp_matches_eager(mlp, cores, tmp_path):
    model, x = mlp
    program = compile(model, (x,), cores=cores, out_dir=tmp_path / "out")
    with torch.no_grad():
        torch.testing.assert_close(program.run(x), model(x), atol=4e-3, rtol=4e-3)
    ops = [cost.op for cost in program.report.ops]
    replicated = [op for op in ops if op.get_core_replicas() > 1]
    if cores == 1:
        assert not replicated
        return
    # The scaling is replicated over the up projection's N split, and its result read from LX.
    (scaling,) = replicated
    up = ops[ops.index(scaling) + 1]  # the report lists the ops in program order
    assert up.op_func().kind.value == "matmul"
    splits = up.get_core_splits()
    assert splits[1] == scaling.get_core_replicas() > 1 and splits[2] == 1
    assert math.prod(scaling.get_core_splits()) * scaling.get_core_replicas() == math.prod(splits)
    assert scaling.placement.kind.data == "lx"


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_gated_mlp_matches_eager(cores, tmp_path):
    torch.manual_seed(0)
    model, x = ScaledMlp(hidden=1024, gated=True).half().eval(), torch.randn(256, 1024).half()
    program = compile(model, (x,), cores=cores, out_dir=tmp_path / "out")
    with torch.no_grad():
        torch.testing.assert_close(program.run(x), model(x), atol=8e-3, rtol=8e-3)
    if cores == 32:
        # Both projections split N and read the scaled input where its replicas left it.
        ops = [cost.op for cost in program.report.ops]
        (scaling,) = [op for op in ops if op.get_core_replicas() > 1]
        gate, up = [op for op in ops[ops.index(scaling):] if op.op_func().kind.value == "matmul"][:2]
        assert gate.get_core_splits() == up.get_core_splits() == (1, 32, 1)
        assert scaling.get_core_replicas() == 32 and scaling.placement.kind.data == "lx"


def test_replicated_sdsc_repeats_each_slice_on_consecutive_cores(mlp, tmp_path):
    import jsonschema
    model, x = mlp
    out = tmp_path / "out"
    program = compile(model, (x,), cores=32, out_dir=out)
    position = next(i for i, cost in enumerate(program.report.ops) if cost.op.get_core_replicas() > 1)
    replicas = program.report.ops[position].op.get_core_replicas()
    doc = json.loads((out / f"sdsc_{position}.json").read_text())
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    (top,) = doc.values()
    slices = [top["coreIdToWkSlice_"][str(core)] for core in range(top["numCoresUsed_"])]
    assert top["numCoresUsed_"] == replicas * math.prod(top["numWkSlicesPerDim_"].values())
    assert all(slices[core] == slices[core - core % replicas] for core in range(len(slices)))
    assert len({json.dumps(s, sort_keys=True) for s in slices}) == len(slices) // replicas
