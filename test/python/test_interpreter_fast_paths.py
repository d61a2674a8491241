"""The interpreter's fast paths give what its general paths give.

float16 casts through torch (when the caller imported it) and through numpy give the
same bits; cores whose starts form no lattice (one view per core) give the same bytes
as the regular case (one view for all cores); a device reused by a later run of a
loaded directory starts as a new one.
"""

from __future__ import annotations

import sys

import numpy as np
import torch  # noqa: F401  (imported, so the casts go through torch unless a test hides it)

from spyre_mlir.interpreter import run
from spyre_mlir.interpreter.casts import store, to_float32
from spyre_mlir.interpreter.loading import load_output_dir
from spyre_mlir.interpreter.runner import execute, host_inputs
from test_interpreter_support import SEED_SHAPE, edit_json, reference_bundle_dir

EVERY_FLOAT16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


def _same_bits(got: np.ndarray, ref: np.ndarray) -> None:
    """Equal bit patterns, except that any NaN matches any NaN."""
    assert got.dtype == ref.dtype and got.shape == ref.shape
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    unsigned = {2: np.uint16, 4: np.uint32}[ref.itemsize]
    assert np.array_equal(got.view(unsigned)[~nan], ref.view(unsigned)[~nan])


def _rounding_cases() -> np.ndarray:
    """float32 values around every float16 rounding boundary, and random bit patterns."""
    finite = EVERY_FLOAT16[np.isfinite(EVERY_FLOAT16)].astype(np.float64)
    ordered = np.unique(finite)
    midpoints = ((ordered[:-1] + ordered[1:]) / 2).astype(np.float32)  # exact in float32: ties
    near = np.concatenate([midpoints, np.nextafter(midpoints, np.float32(np.inf)),
                           np.nextafter(midpoints, np.float32(-np.inf))])
    overflow = np.array([65504, 65519.996, 65520, 65536, 1e30, np.inf, -np.inf, np.nan], np.float32)
    random = np.random.default_rng(0).integers(0, 1 << 32, 1 << 18, dtype=np.uint32).view(np.float32)
    return np.concatenate([near, -near, overflow, random])


def test_float16_to_float32_gives_the_same_bits_through_torch_and_numpy(monkeypatch):
    strided = EVERY_FLOAT16.reshape(256, 256).T  # a transposed view, as device slices are
    through_torch = to_float32(strided)
    monkeypatch.setitem(sys.modules, "torch", None)
    through_numpy = to_float32(strided)
    _same_bits(through_torch, strided.astype(np.float32))
    _same_bits(through_numpy, strided.astype(np.float32))
    assert through_torch.flags.c_contiguous and through_numpy.flags.c_contiguous


def test_float32_to_float16_rounds_to_nearest_even_through_torch_and_numpy(monkeypatch):
    values = _rounding_cases()
    with np.errstate(over="ignore", invalid="ignore"):
        expected = values.astype(np.float16)
    through_torch = np.empty(values.shape, np.float16)
    store(through_torch, values)
    monkeypatch.setitem(sys.modules, "torch", None)
    through_numpy = np.empty(values.shape, np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        store(through_numpy, values)
    _same_bits(through_torch, expected)
    _same_bits(through_numpy, expected)


def _seed_inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(SEED_SHAPE).astype(np.float16) for _ in range(3)]


def test_cores_listed_in_reverse_give_the_same_bytes_and_stats(tmp_path):
    """Reversed ``coreIdsUsed_``: each core's start is below the previous core's, so every
    tensor is accessed one view per core instead of one lattice view."""
    inputs = _seed_inputs(4)
    (tmp_path / "regular").mkdir()
    (tmp_path / "reversed").mkdir()
    regular = reference_bundle_dir(tmp_path / "regular")
    reversed_ = reference_bundle_dir(tmp_path / "reversed")
    for name in ("sdsc_0.json", "sdsc_1.json"):
        edit_json(reversed_ / name, lambda dsc, top: dsc["coreIdsUsed_"].reverse())
    expected, expected_stats = run(regular, inputs)
    got, stats = run(reversed_, inputs)
    assert np.array_equal(got["z"].view(np.uint16), expected["z"].view(np.uint16))
    assert stats.as_dict() == expected_stats.as_dict()


def test_a_reused_device_starts_as_a_new_one(tmp_path):
    directory = reference_bundle_dir(tmp_path)
    loaded = load_output_dir(directory)
    first, second = _seed_inputs(5), _seed_inputs(6)
    execute(loaded, host_inputs(loaded.manifest, first))
    assert len(loaded.devices) == 1
    again, stats = execute(loaded, host_inputs(loaded.manifest, second))
    fresh, fresh_stats = run(directory, second)
    assert np.array_equal(again["z"].view(np.uint16), fresh["z"].view(np.uint16))
    assert stats.as_dict() == fresh_stats.as_dict()
