"""Parameters staged once in the layout their readers want (spyre-stage-layouts), end to end.

An ``nn.Linear`` weight read transposed by its matmul is staged by the runtime
sticked on its output dim: the manifest says so, the bundle has no restickify,
the interpreter stages it that way and the result matches eager with less HBM
traffic.  User inputs keep their copy unless ``stage_inputs`` is given.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import spyre_mlir
from spyre_mlir.diagnostics import SpyreWarning
from spyre_mlir.interpreter import compare, tolerance_for
from spyre_mlir.interpreter.runner import as_numpy
from spyre_mlir.manifest import read_manifest


def _restickifies(program: Any) -> int:
    return sum(1 for c in program.report.ops if c.op.op_func().name == "ReStickifyOpHBM")


def _check(program: Any, fn: Any, inputs: tuple[Any, ...]) -> Any:
    """Run ``program`` on the interpreter, compare with eager, return the interpreter's stats."""
    manifest = read_manifest(program.directory)
    outputs, stats = program.run_by_name(*inputs)
    with torch.no_grad():
        expected = fn(*inputs)
    arg = manifest.outputs[0]
    compare(arg.name, outputs[arg.name], as_numpy(expected), tolerance_for(arg.dtype))
    return stats


def _linear() -> tuple[torch.nn.Module, tuple[torch.Tensor]]:
    torch.manual_seed(0)
    model = torch.nn.Linear(256, 128, bias=False).to(torch.float16)
    return model, (torch.randn(64, 256, dtype=torch.float16),)


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_linear_weight_is_staged_transposed_and_matches_eager(cores, tmp_path):
    model, inputs = _linear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SpyreWarning)  # a staged parameter is no copy to warn about
        program = spyre_mlir.compile(model, inputs, cores=cores, out_dir=tmp_path / "out")
    (weight,) = [a for a in read_manifest(program.directory).args if a.role == "parameter"]
    assert weight.shape == (128, 256) and weight.layout is not None
    assert list(weight.layout.dim_order) == [1, 0]  # sticked on the output dim, as the matmul reads it
    assert _restickifies(program) == 0
    stats = _check(program, model, inputs)
    # The weight is read once, by the matmul: input, weight and output, no copy of the weight.
    minimum = (64 * 256 + 128 * 256 + 64 * 128) * 2
    assert stats.total("hbm_bytes_read") + stats.total("hbm_bytes_written") <= 2 * minimum


def _transposed_input() -> tuple[Any, tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(1)
    return (lambda a, b: a.t() @ b), (torch.randn(256, 64, dtype=torch.float16),
                                      torch.randn(256, 128, dtype=torch.float16))


def test_a_user_input_keeps_its_copy_with_a_warning(tmp_path):
    fn, inputs = _transposed_input()
    with pytest.warns(SpyreWarning, match="function argument 'a' \\(#0\\) is copied by spyre.restickify"):
        program = spyre_mlir.compile(fn, inputs, cores=4, out_dir=tmp_path / "out")
    (a, _) = read_manifest(program.directory).inputs
    assert a.layout is not None and list(a.layout.dim_order) == [0, 1]
    assert _restickifies(program) == 1
    _check(program, fn, inputs)


def test_stage_inputs_stages_a_user_input_like_a_parameter(tmp_path):
    fn, inputs = _transposed_input()
    copied = spyre_mlir.compile(fn, inputs, cores=4, out_dir=tmp_path / "copied")
    staged = spyre_mlir.compile(fn, inputs, cores=4, stage_inputs=True, out_dir=tmp_path / "staged")
    (a, _) = read_manifest(staged.directory).inputs
    assert a.layout is not None and list(a.layout.dim_order) == [1, 0]
    assert _restickifies(staged) == 0
    traffic = [_check(p, fn, inputs).total("hbm_bytes_read") for p in (copied, staged)]
    assert traffic[1] < traffic[0]
    got_copied, got_staged = (p.run(*inputs) for p in (copied, staged))
    torch.testing.assert_close(got_copied, got_staged, rtol=0, atol=0)
