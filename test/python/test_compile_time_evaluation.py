"""Compile-time evaluation: what a program computes from shapes, constants and buffers alone
(position ids, causal masks, rotary tables) is evaluated once by the import and reaches the device
as a constant: a ``spyre.fill`` when every element is the same, else a kernel argument of role
``constant`` whose values the output directory stores beside the manifest and the interpreter
stages.  Bool values become 0/1 in the type their consumer computes in.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import FillOp
from spyre_mlir.interpreter import run
from spyre_mlir.interpreter.loading import read_constant_data
from spyre_mlir.manifest import constant_data, read_manifest, tensor_arg

from e2e_support import ImportedPrograms, compile_and_check


def causal_scores(x):
    """Causal attention scores of ``x`` with itself: the mask is built from ``arange``."""
    length = x.shape[-2]
    pos = torch.arange(length)
    allowed = pos[:, None] >= pos[None, :]
    scores = (x @ x.transpose(-1, -2)).masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) + pos[:, None].to(x.dtype) / length


class Rotary(torch.nn.Module):
    """transformers-style rotary tables from a non-persistent ``inv_freq`` buffer, in float32, cast
    to the input's type."""

    def __init__(self, dim: int):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, dim, 2).float() / dim), persistent=False)

    def forward(self, x):
        pos = torch.arange(x.shape[-2]).float()
        freqs = pos[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return x * emb.cos().to(x.dtype) + x * emb.sin().to(x.dtype)


class BoolBufferMask(torch.nn.Module):
    """A bool buffer selects the kept entries: the buffer itself is the constant."""

    def __init__(self, length: int):
        super().__init__()
        self.register_buffer("keep", torch.rand(length, length, generator=torch.Generator().manual_seed(1)) > 0.3)

    def forward(self, s):
        return torch.where(self.keep, s, torch.zeros_like(s)).sum(-1)


class ScaledByParameter(torch.nn.Module):
    """A parameter may change between runs: what it computes stays on the device."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.full((128,), 0.5))

    def forward(self, x):
        return x * self.scale.exp()


def splat(x):
    """``full`` times a scalar is one value everywhere: a fill, not a stored constant."""
    return x + torch.full((64, 128), 2.0, dtype=x.dtype) * 3.0


def zeros_guard(x):
    """A zeros tensor the other operands broadcast to the result's shape (sdpa's guard of fully
    masked rows): read as one element."""
    return torch.where(x > 0, x, torch.zeros(64, 128, dtype=x.dtype)) * 2


def splat_widens(x):
    """A fill that gives the result its rows: it stays the result's shape."""
    return torch.where(x > 0, torch.full((64, 128), 0.5, dtype=x.dtype), x)


PROGRAMS = {
    "causal_64_fp16": lambda: (causal_scores, (torch.randn(1, 64, 64, dtype=torch.float16) / 8,)),
    "causal_100_fp32": lambda: (causal_scores, (torch.randn(1, 100, 64) / 8,)),
    "rotary_fp16": lambda: (Rotary(64).to(torch.float16), (torch.randn(1, 2, 64, 64, dtype=torch.float16),)),
    "rotary_bf16": lambda: (Rotary(64).to(torch.bfloat16), (torch.randn(1, 2, 100, 64, dtype=torch.bfloat16),)),
    "bool_buffer": lambda: (BoolBufferMask(64), (torch.randn(64, 64),)),
    "parameter": lambda: (ScaledByParameter().to(torch.float16), (torch.randn(64, 128, dtype=torch.float16),)),
    "splat": lambda: (splat, (torch.randn(64, 128, dtype=torch.float16),)),
    "zeros_guard": lambda: (zeros_guard, (torch.randn(64, 128, dtype=torch.float16),)),
    "splat_widens": lambda: (splat_widens, (torch.randn(128, dtype=torch.float16),)),
}

imported = ImportedPrograms(PROGRAMS)


def _func(name: str):
    _, module = imported(name)
    return module.ops.first


def _arg_roles(name: str) -> dict[str, str]:
    f = _func(name)
    return {a.data["spyre.name"].data: a.data["spyre.role"].data for a in f.arg_attrs.data}


@pytest.mark.parametrize("name", ["causal_64_fp16", "causal_100_fp32", "rotary_fp16", "rotary_bf16",
                                  "bool_buffer", "parameter", "splat", "zeros_guard", "splat_widens"])
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


def test_causal_mask_and_positions_are_stored_constants(tmp_path):
    roles = _arg_roles("causal_64_fp16")
    assert sorted(n for n, r in roles.items() if r == "constant") == ["const_bitwise_not", "const_div"]
    assert _func("causal_64_fp16").attributes["spyre.folded_ops"].value.data >= 6  # arange .. bitwise_not, div
    compile_and_check("causal_64_fp16", 4, tmp_path / "out", imported)
    manifest = read_manifest(tmp_path / "out")
    stored = {a.name: a for a in manifest.args if a.data is not None}
    assert set(stored) == {"const_bitwise_not", "const_div"}
    mask = read_constant_data(tmp_path / "out", stored["const_bitwise_not"])
    assert mask.dtype == np.float16 and mask.shape == (64, 64)
    np.testing.assert_array_equal(mask, np.triu(np.ones((64, 64), np.float16), 1))  # 1 where masked
    positions = read_constant_data(tmp_path / "out", stored["const_div"])
    np.testing.assert_array_equal(positions[:, 0], (np.arange(64) / 64).astype(np.float16))


def test_rotary_tables_are_folded_from_the_buffer():
    roles = _arg_roles("rotary_fp16")
    assert "b_inv_freq" not in roles  # only compile-time nodes read it
    assert sorted(r for r in roles.values()) == ["constant", "constant", "input"]


def test_a_bool_buffer_becomes_a_constant_of_its_consumers_type(tmp_path):
    f = _func("bool_buffer")
    constants = [(a.data["spyre.name"].data, t) for a, t in zip(f.arg_attrs.data, f.function_type.inputs.data)
                 if a.data["spyre.role"].data == "constant"]
    assert [(n, str(t)) for n, t in constants] == [("const_b_keep", "tensor<64x64xf32>")]


def test_a_parameter_is_never_folded():
    assert _arg_roles("parameter") == {"p_scale": "parameter", "x": "input"}
    assert "spyre.folded_ops" not in _func("parameter").attributes


def test_one_value_everywhere_is_a_fill():
    f = _func("splat")
    assert "constant" not in _arg_roles("splat").values()
    fills = [op.fill_value() for op in f.walk() if isinstance(op, FillOp)]
    assert fills == [6.0]
    assert f.attributes["spyre.folded_ops"].value.data == 2  # the full and the mul, one fill


@pytest.mark.parametrize("name, shape", [("splat", (1, 1)), ("zeros_guard", (1, 1)), ("splat_widens", (64, 128))])
def test_a_fill_the_other_operands_broadcast_is_one_element(name, shape):
    """A fill whose shape the other operands of its pointwise reader already give is read as one
    element through broadcasting: nothing stages a tensor of copies in HBM."""
    fills = [op for op in _func(name).walk() if isinstance(op, FillOp)]
    assert [tuple(op.result.type.get_shape()) for op in fills] == [shape]


@pytest.mark.parametrize("dtype,values", [
    ("bfloat16", [1.0, -2.5, 3.140625, 2.0**100, -0.0]),
    ("float16", [1.0, -2.5, 65504.0, 2.0**-24, -0.0]),
    ("float32", [1.0, -2.5, 1e30, 1e-40, -0.0]),
    ("int32", [0, 1, -7, 2**31 - 1]),
])
def test_constant_data_round_trips_exactly(dtype, values, tmp_path):
    host = np.array(values, np.int32 if dtype == "int32" else np.float32)
    (tmp_path / "c.bin").write_bytes(constant_data(host, dtype))
    arg = tensor_arg(0, "constant", "c", [len(values)], dtype, [1], [0], "x", 0, data="c.bin")
    read = read_constant_data(tmp_path, arg)
    assert read.shape == host.shape
    np.testing.assert_array_equal(read.astype(np.float64), host.astype(np.float64))
    np.testing.assert_array_equal(np.signbit(read), np.signbit(host))


def test_a_truncated_constant_file_is_a_located_error(tmp_path):
    out = tmp_path / "out"
    compile_and_check("causal_64_fp16", 1, out, imported)
    data = out / "const_div.bin"
    data.write_bytes(data.read_bytes()[:-2])
    with pytest.raises(SpyreError) as error:
        run(out, imported.inputs("causal_64_fp16", read_manifest(out)))
    assert error.value.format("?") == f"{data.resolve()}: error: holds 126 bytes, expected 128 for [64, 1] float16"


def test_a_constant_file_outside_the_directory_is_refused(tmp_path):
    out = tmp_path / "out"
    compile_and_check("causal_64_fp16", 1, out, imported)
    text = (out / "manifest.json").read_text().replace('"data": "const_div.bin"', '"data": "../const_div.bin"')
    (out / "manifest.json").write_text(text)
    with pytest.raises(SpyreError, match="resolves outside the output directory"):
        run(out, imported.inputs("causal_64_fp16", read_manifest(out)))


def test_stored_constants_count_towards_the_kernel_arguments(tmp_path):
    compile_and_check("rotary_fp16", 4, tmp_path / "out", imported)
    manifest = read_manifest(tmp_path / "out")
    stored = [a for a in manifest.args if a.data is not None]
    assert len(stored) == 2 and all(a.role == "constant" and a.fill is None for a in stored)
    for arg in stored:
        assert (tmp_path / "out" / arg.data).stat().st_size == math.prod(arg.shape) * 2
