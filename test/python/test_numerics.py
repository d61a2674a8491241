"""The interpreter's numerics modes: ``ieee`` holds float16 tensors (SEN169_FP16) as IEEE float16,
``dlfloat16`` as the device stores them, DLFloat16 (9 fraction bits, rounded half away from zero,
finite to about 8.6e9).  Each mode's output is the numpy model of the same computation with its
rounding after staging and after each op; the modes differ exactly where their models do."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import spyre_mlir
from spyre_mlir.diagnostics import SpyreError, SpyreWarning
from spyre_mlir.hardware import from_dlfloat16_bits, to_dlfloat16_bits
from spyre_mlir.interpreter import compare, run, tolerance_for
from spyre_mlir.interpreter.loading import load_output_dir
from spyre_mlir.interpreter.runner import execute, host_inputs

SCALE = 1.0009765625
"""1 + 2**-10: a float16, whose SDSC constant (DLFloat16) is 1 + 2**-9 in either mode."""

SCALE_CONSTANT = np.float32(1 + 2 ** -9)


def _f16(values: np.ndarray) -> np.ndarray:
    """float32 ``values`` rounded to float16 and widened again (IEEE: nearest even, past 65504 inf)."""
    with np.errstate(over="ignore"):
        return values.astype(np.float16).astype(np.float32)


def _dl(values: np.ndarray) -> np.ndarray:
    """float32 ``values`` rounded to DLFloat16 and widened again (half away from zero, 9 fraction bits)."""
    return from_dlfloat16_bits(to_dlfloat16_bits(values))


def _inputs(shape: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return tuple(torch.randn(shape, generator=generator).half() for _ in range(2))


@pytest.mark.parametrize("shape", [(64, 128), (50, 100)], ids=["unpadded", "stick-padded"])
def test_each_mode_rounds_as_its_format_after_staging_and_each_op(shape, tmp_path):
    """x * SCALE + y on 4 cores: ieee is eager's result within float16's tolerance and, bit for bit,
    float16 rounding after each op; dlfloat16 rounds the staged inputs and each op's result to
    DLFloat16, and reads the output back as float16."""
    x, y = _inputs(shape)
    program = spyre_mlir.compile(lambda a, b: a * SCALE + b, (x, y), cores=4, out_dir=tmp_path / "out")
    x32, y32 = x.float().numpy(), y.float().numpy()
    ieee_model = _f16(_f16(x32 * SCALE_CONSTANT) + y32).astype(np.float16)
    dlfloat16_model = _f16(_dl(_dl(_dl(x32) * SCALE_CONSTANT) + _dl(y32))).astype(np.float16)

    (ieee,) = program.run_by_name(x, y)[0].values()
    compare("add", ieee, (x * SCALE + y).numpy(), tolerance_for("float16"))
    np.testing.assert_array_equal(ieee, ieee_model)
    assert program.run(x, y, numerics="ieee").numpy().tobytes() == ieee.tobytes()

    dlfloat16 = program.run(x, y, numerics="dlfloat16").numpy()
    assert dlfloat16.dtype == np.float16
    np.testing.assert_array_equal(dlfloat16, dlfloat16_model)
    differs = dlfloat16 != ieee
    np.testing.assert_array_equal(differs, dlfloat16_model != ieee_model)
    assert np.count_nonzero(differs) > differs.size // 4


def test_an_intermediate_past_float16_survives_in_dlfloat16(tmp_path):
    """(x * 1024) * 2**-10 with |x| up to 100: the intermediate reaches 102400, past float16's 65504.
    ieee holds it as inf (as eager does); dlfloat16 holds it (DLFloat16 goes to about 8.6e9), so
    the result is finite.  The output x * 1024 itself is read back as float16: inf past 65504 in
    both modes, as a cast would."""
    x = torch.linspace(-100, 100, 64 * 128).reshape(64, 128).half()
    program = spyre_mlir.compile(lambda a: ((a * 1024.0) * 0.0009765625, a * 1024.0), (x,), cores=4,
                                 out_dir=tmp_path / "out")
    x32 = x.float().numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpyreWarning)  # the inf outputs
        ieee_back, ieee_big = (t.numpy() for t in program.run(x))
        dl_back, dl_big = (t.numpy() for t in program.run(x, numerics="dlfloat16"))
    past = np.isinf(_f16(x32 * 1024))
    assert 0 < np.count_nonzero(past) < past.size
    np.testing.assert_array_equal(np.isinf(ieee_back), past)
    assert np.isfinite(dl_back).all()
    np.testing.assert_array_equal(dl_back, _f16(_dl(_dl(_dl(x32) * 1024) * np.float32(2 ** -10))).astype(np.float16))
    np.testing.assert_array_equal(ieee_big, _f16(x32 * 1024).astype(np.float16))
    np.testing.assert_array_equal(dl_big, _f16(_dl(_dl(x32) * 1024)).astype(np.float16))
    assert np.isinf(dl_big).any()


def test_a_reused_device_takes_each_runs_mode(tmp_path):
    """Runs of one loaded directory reuse its device: a dlfloat16 run between two ieee runs
    changes neither, and a second dlfloat16 run gives the first's result."""
    x, y = _inputs((64, 128))
    spyre_mlir.compile(lambda a, b: a * SCALE + b, (x, y), cores=4, out_dir=tmp_path / "out")
    loaded = load_output_dir(tmp_path / "out")
    inputs = host_inputs(loaded.manifest, [x, y])
    results = [execute(loaded, inputs, numerics=mode)[0]["add"]
               for mode in ("ieee", "dlfloat16", "ieee", "dlfloat16")]
    assert results[0].tobytes() == results[2].tobytes()
    assert results[1].tobytes() == results[3].tobytes()
    assert results[0].tobytes() != results[1].tobytes()


def test_dlfloat16_overflow_is_nan_and_the_warning_says_why(tmp_path):
    """DLFloat16 has no infinity: a result past about 8.6e9 (60000**2 * 4) is its NaN-or-infinity
    pattern, which reads as nan; the intermediate 60000**2 = 3.6e9 is finite."""
    x = torch.full((64, 128), 60000.0).half()
    program = spyre_mlir.compile(lambda a: (a * a) * 4.0, (x,), cores=4, out_dir=tmp_path / "out")
    with pytest.warns(SpyreWarning, match=r"output '\w+' holds nan at index \(0, 0\) \(8192 of 8192 elements are "
                      r"inf or nan\): DLFloat16 holds no infinity \(an inf, or a value beyond about 8\.6e9"):
        assert program.run(x, numerics="dlfloat16").isnan().all()


@pytest.mark.parametrize("shape", [(64, 128), (8, 12)], ids=["unpadded", "stick-padded"])
def test_a_staged_infinity_is_the_largest_dlfloat16(shape, tmp_path):
    """A mask's -inf, staged as an input (padded to a stick or not), is the largest finite
    DLFloat16 of its sign (DLFloat16 has no infinity): softmax of masked scores gives 0 where
    eager does, not nan."""
    scores = torch.randn(shape, generator=torch.Generator().manual_seed(0)).half()
    mask = torch.zeros(shape).half()
    mask[:, shape[1] // 2:] = float("-inf")
    program = spyre_mlir.compile(lambda s, m: torch.softmax(s + m, dim=-1), (scores, mask), cores=4,
                                 out_dir=tmp_path / "out")
    got = program.run(scores, mask, numerics="dlfloat16")
    assert torch.isfinite(got).all()
    assert (got[:, shape[1] // 2:] == 0).all()
    compare("softmax", got.numpy(), torch.softmax(scores.float() + mask.float(), dim=-1).numpy(),
            tolerance_for("float16"))


@pytest.mark.parametrize("numerics", ["fp16", "IEEE", None])
def test_an_unknown_mode_is_one_error(numerics, tmp_path):
    x, y = _inputs((64, 128))
    program = spyre_mlir.compile(lambda a, b: a + b, (x, y), cores=1, out_dir=tmp_path / "out")
    message = rf"^unknown numerics mode {numerics!r} \(choose from ieee, dlfloat16\)$"
    with pytest.raises(SpyreError, match=message):
        program.run(x, y, numerics=numerics)
    with pytest.raises(SpyreError, match=message):
        run(tmp_path / "out", [x, y], numerics=numerics)
