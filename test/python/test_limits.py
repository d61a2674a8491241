"""The device limits (spyre_mlir.limits): the measures and messages compiler and interpreter share."""

from __future__ import annotations

import pytest

from spyre_mlir import limits
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.interpreter.device import hbm_bases
from spyre_mlir.manifest import KernelArg


def test_the_config_plans_against_the_limits():
    config = SpyreConfig()
    assert (config.stick_bytes, config.lx_bytes, config.lx_reserved_bytes, config.span_limit_bytes,
            config.alignment) == (limits.STICK_BYTES, limits.LX_BYTES, limits.LX_RESERVED_BYTES,
                                  limits.SPAN_LIMIT_BYTES, limits.ALIGNMENT)
    assert limits.SPAN_LIMIT_BYTES == 268_431_360


def test_tensor_box_of_the_seed_tile():
    """The seed's 512 x 1024 tile of a [1024, 4096] fp16 tensor (labels mb, out; 'out' the stick), 16 rows
    per core: rows step one stick, a stick column all 1024 rows of the whole tensor."""
    shape, strides, stride = limits.tensor_box(("mb", "out"), "out", 64, 2, {"mb": 16, "out": 1024},
                                               {"mb": 1024, "out": 4096})
    assert shape == (16, 16, 64) and strides == (128 * 1024, 128, 2)
    assert stride == {"mb": 128, "out": 128 * 1024}
    assert limits.span_bytes(shape, strides, 2) == 15 * 131072 + 15 * 128 + 128


@pytest.mark.parametrize("span, over", [(limits.SPAN_LIMIT_BYTES, False), (limits.SPAN_LIMIT_BYTES + 1, True)])
def test_span_limit_edge(span, over):
    problem = limits.span_problem(span)
    assert (problem is not None) == over
    if over:
        assert problem == f"per-core span {span} bytes exceeds the limit of 268431360"


@pytest.mark.parametrize("problem, expected", [
    (limits.alignment_problem(256), None),
    (limits.alignment_problem(4098), "start address 4098 is not 128-byte aligned"),
    (limits.lx_problem(1_625_344 - 4096, 4096, 1_625_344), None),
    (limits.lx_problem(1_625_344 - 4096, 4224, 1_625_344),
     "LX offset 1621248 + 4224 bytes exceeds the usable LX of 1625344 bytes"),
    (limits.allocation_problem(4096, 4096, 8192), None),
    (limits.allocation_problem(4096, 4224, 8192), "bytes [4096, 8320) fall outside their allocation of 8192 bytes"),
    (limits.hbm_problem(128 << 30), None),
    (limits.hbm_problem((128 << 30) + 128),
     "the HBM allocations take 137438953600 bytes, more than the 137438953472 bytes of device memory"),
    (limits.core_problem(3, 4), None),
    (limits.core_problem(4, 4), "core 4 does not exist (4 cores)"),
    (limits.cores_problem(32), None),
    (limits.cores_problem(33), "cores must be an integer between 1 and 32, got 33"),
    (limits.stick_problem(32, 4), None),
    (limits.stick_problem(64, 4), "64 elements of 4 bytes is not a 128-byte stick"),
    (limits.whole_sticks_problem("out", 128, 192, 64), None),
    (limits.whole_sticks_problem("out", 96, 192, 64),
     "stick dim 'out' extent 96 per core / 192 in all is not a whole number of 64-element sticks"),
])
def test_each_limit_just_within_and_just_past(problem, expected):
    assert problem == expected


def test_an_allocation_past_16_gib_takes_the_segments_it_needs():
    """The interpreter lays allocations out 16 GiB-aligned: a 20 GiB pool takes two segments, and the
    bytes just past a 16 GiB argument belong to no allocation."""
    def arg(index: int, nbytes: int) -> KernelArg:
        return KernelArg(index, "pool", f"a{index}", nbytes)

    gib = 1 << 30
    assert hbm_bases([arg(0, 4096), arg(1, 4096), arg(2, 4096)]) == [16 * gib, 32 * gib, 48 * gib]
    assert hbm_bases([arg(0, 20 * gib), arg(1, 16 * gib), arg(2, 128)]) == [16 * gib, 48 * gib, 80 * gib]
