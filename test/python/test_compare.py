"""Comparing interpreter outputs with eager: every output dtype has a tolerance, and a mismatch is
an :class:`OutputMismatch` (a wrong number, which the fuzzer must never file as a rejection)."""

from __future__ import annotations

import numpy as np
import pytest

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import DATA_FORMATS
from spyre_mlir.interpreter import compare, tolerance_for
from spyre_mlir.interpreter.compare import OutputMismatch


@pytest.mark.parametrize("dtype", sorted(DATA_FORMATS))
def test_every_device_dtype_has_a_tolerance(dtype):
    """An int32 output (a table of indices gathered) once ended ``spyre-run --check`` in
    ``internal error: KeyError: 'int32'``."""
    assert tolerance_for(dtype).rtol >= 0


def test_integer_outputs_compare_exactly():
    ids = np.array([3, 1, 4], np.int32)
    assert compare("ids", ids, ids.astype(np.int64), tolerance_for("int32")).max_abs_err == 0
    with pytest.raises(OutputMismatch, match=r"output 'ids' differs from PyTorch eager at index \(1,\)"):
        compare("ids", ids, np.array([3, 2, 4]), tolerance_for("int32"))


def test_a_mismatch_is_a_located_spyre_error_of_its_own_kind():
    with pytest.raises(OutputMismatch) as e:
        compare("y", np.zeros((2, 2), np.float16), np.ones((2, 2), np.float16), tolerance_for("float16"))
    assert isinstance(e.value, SpyreError)
    with pytest.raises(OutputMismatch, match="has shape"):
        compare("y", np.zeros(2), np.zeros(3), tolerance_for("float32"))
