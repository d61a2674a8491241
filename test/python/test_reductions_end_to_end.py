"""Reductions end to end, in torch-spyre's SDSC form: sum, max, min and mean over the stick dim, a
dim off the stick, a middle dim, several dims and all dims, with and without keepdim, compiled for
1, 4 and 32 cores, run on the interpreter and compared with PyTorch eager.

Each reduction's SDSC file must also have the form the back end consumes (the codegen module
docstring of ``spyre_mlir/codegen/sdsc.py`` says which reference each part was checked against):
the output carries every iteration label, each reduced one with ``scale_`` -1, or -2 on the input's
stick label when the reduction is over it (a sparse output); input and output share one
``primaryDsInfo_`` entry and layout order; the op func is the ``nonstick`` one exactly when no
label has -2; a mean's ``scaling_factor`` is the first constant, the masking value the next.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from spyre_mlir.opfuncs import OpKind, lookup

from e2e_support import ImportedPrograms, Program, compile_and_check

CORES = (1, 4, 32)

REDUCTIONS: dict[str, Callable[..., Any]] = {
    "sum": lambda x, dim, keepdim: x.sum(dim, keepdim=keepdim),
    "max": lambda x, dim, keepdim: x.amax(dim, keepdim=keepdim),
    "min": lambda x, dim, keepdim: x.amin(dim, keepdim=keepdim),
    "mean": lambda x, dim, keepdim: x.mean(dim, keepdim=keepdim),
}

DIMS: dict[str, tuple[tuple[int, ...], tuple[int, ...] | int]] = {
    "dim0": ((64, 150), 0),
    "middle": ((4, 8, 150), 1),
    "last": ((64, 150), -1),
    "dims01": ((4, 8, 128), (0, 1)),
    "dims12": ((4, 8, 150), (1, 2)),
    "all": ((8, 150), (0, 1)),
}
"""Shape and reduced dims; 150 columns pad the stick to 192."""


def _program(op: str, dims: str, keepdim: bool) -> Callable[[], Program]:
    shape, dim = DIMS[dims]
    reduce = REDUCTIONS[op]
    return lambda: ((lambda x: reduce(x, dim, keepdim)), (torch.randn(*shape, dtype=torch.float16),))


PROGRAMS = {f"{op}-{dims}-{'keep' if keep else 'drop'}": _program(op, dims, keep)
            for op in REDUCTIONS for dims in DIMS for keep in (True, False)}


@pytest.fixture(scope="module")
def imported() -> ImportedPrograms:
    return ImportedPrograms(PROGRAMS)


def _reduction_files(out: Path) -> list[dict[str, Any]]:
    """The DSC of each reduction SDSC file in ``out``."""
    found = []
    for path in sorted(out.glob("sdsc_*.json")):
        (top,) = json.loads(path.read_text()).values()
        ((name, dsc),) = top["dscs_"][0].items()
        func = lookup(name.removesuffix("nonstick"))
        if func is not None and func.kind is OpKind.REDUCTION:
            found.append(dsc)
    return found


def _check_form(dsc: dict[str, Any]) -> None:
    labels = [key[:-1] for key in dsc["N_"] if key != "name_"]
    op = dsc["computeOp_"][0]
    (source,) = [ref.rsplit("-idx", 1)[1] for ref in op["inputLabeledDs"] if ref not in op["outputLabeledDs"]]
    (result,) = [ref.rsplit("-idx", 1)[1] for ref in op["outputLabeledDs"]]
    lds = {str(x["ldsIdx_"]): x for x in dsc["labeledDs_"]}
    nodes = {str(n["ldsIdx_"]): n for n in dsc["scheduleTree_"]}
    src, out = lds[source], lds[result]
    order = nodes[result]["layoutDimOrder_"]
    assert sorted(order) == sorted(labels), f"the output must carry every label {labels}, has {order}"
    assert src["dsType_"] == out["dsType_"] and list(dsc["primaryDsInfo_"]) == [out["dsType_"]]
    assert nodes[source]["layoutDimOrder_"] == order == dsc["primaryDsInfo_"][out["dsType_"]]["layoutDimOrder_"]
    (stick,) = dsc["primaryDsInfo_"][out["dsType_"]]["stickDimOrder_"]
    scale = dict(zip(order, out["scale_"]))
    assert set(dict(zip(order, src["scale_"])).values()) == {1}
    reduced = [label for label in labels if scale[label] != 1]
    assert reduced and all(scale[label] == (-2 if label == stick else -1) for label in reduced)
    assert op["opFuncName"].endswith("nonstick") == (stick not in reduced)
    names = [c["name_"] for c in dsc["constantInfo_"].values()] if dsc["constantInfo_"] != "{}" else []
    assert names == ["scaling_factor"] * op["opFuncName"].startswith("mean") + ["samv-maskvalue"] * bool(
        dsc["coordinateMasking_"])
    assert dsc["maskingConstId_"] == (names.index("samv-maskvalue") if dsc["coordinateMasking_"] else -1)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("name", PROGRAMS)
def test_reduction_matches_eager_in_torch_spyre_form(name, cores, tmp_path, imported):
    out = tmp_path / "out"
    compile_and_check(name, cores, out, imported)
    files = _reduction_files(out)
    assert files
    for dsc in files:
        _check_form(dsc)


def _expanded_rows() -> Program:
    def reduce(x):
        v = x[:, None].expand(64, 3, 64).reshape(192, 64)
        return v.sum(0), v.mean(0), v.amax(0)
    return reduce, (torch.randn(64, 64, dtype=torch.float16),)


def test_a_reduction_over_a_broadcast_dim_counts_every_repetition(tmp_path):
    """Rows of x repeated 3 times by a view, then reduced: the input has no label for the repeating
    dim, which the op iterates all the same, so the sum counts each row 3 times and the mean divides
    by 192.  (The interpreter added each row once.)"""
    for cores in (1, 4):
        compile_and_check("expanded_rows", cores, tmp_path / f"cores{cores}",
                          ImportedPrograms({"expanded_rows": _expanded_rows}))


def _row_statistics() -> Program:
    def rms_norm_then_softmax(x, w):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        return torch.softmax(y, dim=-1)
    return rms_norm_then_softmax, (torch.randn(128, 256, dtype=torch.float16), torch.randn(256, dtype=torch.float16))


@pytest.mark.parametrize("cores", CORES)
def test_row_statistics_stay_in_lx_and_match_eager(tmp_path, cores):
    """RMS norm's mean, its eps and rsqrt, and softmax's row max and sum: each written one element
    per stick (a reduction over the stick) or one stick per row, and read by the cores that wrote
    those rows, whole sticks or broadcast along the columns.  Every one of them stays in LX (they
    went to HBM while a broadcast read or a sparse stick kept a value out of LX), and the result
    matches eager."""
    stats = compile_and_check("row_statistics", cores, tmp_path / "out",
                              ImportedPrograms({"row_statistics": _row_statistics}), lx_solver="auto")
    statistics = [op for op in stats.ops if op.op in ("mean", "add", "rsqrt", "max", "sum")]
    assert [op.op for op in statistics] == ["mean", "add", "rsqrt", "max", "sum"]
    assert all(op.hbm_bytes_written == 0 and op.lx_bytes_written > 0 for op in statistics), statistics
