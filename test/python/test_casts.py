"""Casts between the three float formats round as eager does.

bfloat16 has its own device format (SEN169_BFP16): an ``identity`` copy into it rounds to bfloat16's
8 significant bits, to nearest even, and every op that writes a bfloat16 tensor rounds its float32
result the same way, as eager does after each op.  Held in float16's format instead (as it once
was), ``x.to(torch.bfloat16)`` of a float16 ``x`` kept all 11 bits: the casts below returned ``x``
unrounded (0.12548828 where eager gives 0.125), ``x.to(bfloat16).float() - x.float()`` was 0
everywhere, and ``minimum(x, x.to(bfloat16)).sum()`` was off by 10 %.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from spyre_mlir.hardware import decode_scalar, encode_scalar, from_bfloat16_bits, to_bfloat16_bits

from e2e_support import ImportedPrograms, compile_and_check


def _half_input() -> torch.Tensor:
    torch.manual_seed(0)
    return (torch.randn(77, 128) * 3).half()


def _bfloat16_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(1)
    return torch.randn(64, 128).bfloat16(), torch.randn(64, 128).bfloat16()


PROGRAMS = {
    "f16_bf16_f32": lambda: ((lambda x: x.to(torch.bfloat16).to(torch.float32)), (_half_input(),)),
    "rounding_error": lambda: ((lambda x: x.to(torch.bfloat16).float() - x.float()), (_half_input(),)),
    "minimum_sum": lambda: ((lambda x: torch.minimum(x, x.to(torch.bfloat16)).sum()), (_half_input(),)),
    "f32_bf16_f16": lambda: ((lambda x: x.to(torch.bfloat16).half()), (torch.randn(64, 128) * 100,)),
    "bf16_ops_widened": lambda: ((lambda a, b: (a * b + a).float() - a.float() * b.float()), _bfloat16_inputs()),
    "f16_f32_f16": lambda: ((lambda x: (x.float() * 1.001).half()), (_half_input(),)),
}

imported = ImportedPrograms(PROGRAMS)


@pytest.mark.parametrize("cores", [1, 3, 4, 32])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_cast_rounds_as_eager_does(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


def test_the_rounding_error_of_a_cast_to_bfloat16_is_not_zero(tmp_path):
    """The program the differential fuzzer drew: eager's result is the rounding error itself, so
    an unrounded cast is as wrong as it can be while the tolerance of a difference is small."""
    from spyre_mlir.interpreter import run
    from spyre_mlir.manifest import read_manifest

    out = tmp_path / "out"
    compile_and_check("rounding_error", 4, out, imported)
    outputs, _ = run(out, imported.inputs("rounding_error", read_manifest(out)))
    (result,) = outputs.values()
    assert np.count_nonzero(result) > result.size // 2


def test_bfloat16_bits_round_to_nearest_even_like_torch():
    """Every float16 value, float32 ties at bfloat16's last place, infinities and NaN."""
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    rng = np.random.default_rng(0)
    ties = (rng.integers(0, 1 << 32, 4096, dtype=np.uint64).astype(np.uint32) & 0xFFFF0000 | 0x8000).view(np.float32)
    values = np.concatenate([halves, ties, np.array([np.inf, -np.inf, 3.4e38, -3.4e38], np.float32)])
    expected = torch.from_numpy(values).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    got = to_bfloat16_bits(values)
    finite = ~np.isnan(values)
    np.testing.assert_array_equal(got[finite], expected[finite])
    assert np.isnan(from_bfloat16_bits(got[~finite])).all()
    np.testing.assert_array_equal(from_bfloat16_bits(expected[finite]),
                                  torch.from_numpy(values[finite]).to(torch.bfloat16).float().numpy())


def test_a_bfloat16_constant_is_its_bfloat16_bit_pattern():
    assert encode_scalar(0.1, "SEN169_BFP16") == 0x3DCD
    assert encode_scalar(float("-inf"), "SEN169_BFP16") == 0xFF80
    assert decode_scalar(0x3DCD, "SEN169_BFP16") == float(torch.tensor(0.1).bfloat16())
