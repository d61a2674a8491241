"""manifest.json: round trip, determinism and every rejection of malformed text."""

import json

import numpy as np
import pytest

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.manifest import KernelArg, Manifest, parse_manifest, read_manifest, tensor_arg


def _manifest() -> Manifest:
    return Manifest(
        args=(tensor_arg(0, "input", "a", [1024, 4096], "float16", [64, 1024, 64], [0, 1], "SEN169_FP16", 8388608),
              tensor_arg(1, "output", "z", [1024, 4096], "float16", [64, 1024, 64], [0, 1], "SEN169_FP16", 8388608),
              KernelArg(2, "pool", "pool", 65536)),
        sdsc_files=("sdsc_0.json",), cores=32)


def test_round_trip_is_exact_and_deterministic(tmp_path):
    m = _manifest()
    text = m.to_json()
    assert parse_manifest(text) == m
    assert m.to_json() == text
    (tmp_path / "manifest.json").write_text(text)
    assert read_manifest(tmp_path) == m
    assert [a.name for a in m.inputs] == ["a"] and [a.name for a in m.outputs] == ["z"]


def test_a_padded_output_layout_round_trips_and_stages_its_padding():
    """An fp32 output of 96 columns an op writes 128 of: four sticks, padded_shape says so."""
    from spyre_mlir.interpreter.device import Device

    out = tensor_arg(0, "output", "w", [64, 96], "float32", [4, 64, 32], [0, 1], "IEEE_FP32", 32768,
                     fill=0.0, padded_shape=[64, 128])
    m = Manifest(args=(out,), sdsc_files=(), cores=1)
    assert json.loads(m.to_json())["args"][0]["layout"]["padded_shape"] == [64, 128]
    assert parse_manifest(m.to_json()) == m
    assert Device.layout_of(out).device_size == [4, 64, 32]
    plain = tensor_arg(0, "output", "w", [64, 96], "float32", [4, 64, 32], [0, 1], "IEEE_FP32", 32768)
    with pytest.raises(SpyreError, match=r"device_size \[4, 64, 32\] does not match"):
        Device.layout_of(plain)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(format="other"), "not a spyre-mlir manifest"),
    (lambda d: d.update(version=7), "unsupported manifest version 7"),
    (lambda d: d["args"][0].update(role="weird"), "unknown role 'weird'"),
    (lambda d: d["args"][0].pop("layout"), "missing 'layout'"),
    (lambda d: d["args"][0].update(shape=[1, "x"]), "'shape' must be a list of integers"),
    (lambda d: d["args"][0]["layout"].update(padded_shape=[1024, "x"]), "'padded_shape' must be a list of integers"),
    (lambda d: d["args"][1].update(index=5), "argument indices must be 0..2"),
    (lambda d: d["args"][1].update(name=d["args"][0]["name"]), "argument names must be unique, 'a' names 2"),
    (lambda d: d.update(cores="32"), "'cores' has the wrong type"),
    (lambda d: d.update(sdsc_files=[1]), "'sdsc_files' must be a list of file names"),
    (lambda d: d.update(backend_lx_fraction=1.0), "'backend_lx_fraction' must be a number with 0 <= f < 1, got 1.0"),
    (lambda d: d.update(backend_lx_fraction="0.2"), "'backend_lx_fraction' must be a number"),
    (lambda d: d["args"][0].update(range=[0, "64"]), "'range' must be a list of integers"),
    (lambda d: d["args"][0].update(range=[64, 64], dtype="int32"),
     r"'range' must be \[lo, hi\] with lo < hi on an integer input, got \[64, 64\] on int32 role 'input'"),
    (lambda d: d["args"][0].update(range=[0, 64]),
     r"'range' must be \[lo, hi\] with lo < hi on an integer input, got \[0, 64\] on float16 role 'input'"),
    (lambda d: d["args"][1].update(range=[0, 64], dtype="int32"),
     r"'range' must be \[lo, hi\] with lo < hi on an integer input, got \[0, 64\] on int32 role 'output'"),
    (lambda d: d["args"][0].update(host_dtype="int32", dtype="int32"),
     r"'host_dtype' must be one of bool, int64, int32, int16, uint8 on a float input, got 'int32' on int32"),
    (lambda d: d["args"][0].update(host_dtype="float64"),
     r"'host_dtype' must be one of .* on a float input, got 'float64' on float16 role 'input'"),
])
def test_malformed_manifests_are_rejected_with_a_located_message(mutate, message):
    d = json.loads(_manifest().to_json())
    mutate(d)
    with pytest.raises(SpyreError, match=message) as e:
        parse_manifest(json.dumps(d), "out/manifest.json")
    assert e.value.location().startswith("out/manifest.json")


def test_an_input_range_round_trips_and_refuses_values_outside_it():
    """A decode step's position, compiled for the values [0, 64): staging 64 (or -1) is one error
    naming the input, the value and the range, before anything runs."""
    from spyre_mlir.interpreter.runner import host_array

    pos = tensor_arg(0, "input", "pos", [1], "int32", [1, 32], [0], "IEEE_INT32", 128, value_range=[0, 64])
    m = Manifest(args=(pos,), sdsc_files=(), cores=1)
    assert json.loads(m.to_json())["args"][0]["range"] == [0, 64]
    assert parse_manifest(m.to_json()) == m and m.inputs[0].range == (0, 64)
    assert host_array(pos, np.array([63], np.int64)).tolist() == [63]
    for value in (64, -1):
        with pytest.raises(SpyreError, match=rf"input 'pos' is {value}, outside \[0, 64\), the values the program "
                                             "was compiled for") as e:
            host_array(pos, np.array([value], np.int64), "in.npz")
        assert e.value.location() == "in.npz"


def test_truncated_and_missing_files(tmp_path):
    with pytest.raises(SpyreError, match="malformed JSON"):
        parse_manifest(_manifest().to_json()[:40])
    with pytest.raises(SpyreError, match="cannot read the manifest"):
        read_manifest(tmp_path)


@pytest.mark.parametrize("value, written", [(1.5, 1.5), (float("-inf"), "-inf"), (0.0, 0.0)])
def test_constant_arguments_carry_their_fill_value(value, written):
    const = tensor_arg(0, "constant", "fill_0", [4, 64], "float16", [1, 4, 64], [0, 1], "SEN169_FP16", 512,
                       fill=value)
    m = Manifest(args=(const,), sdsc_files=(), cores=1)
    assert json.loads(m.to_json())["args"][0]["fill"] == written
    assert parse_manifest(m.to_json()) == m
    assert m.constants == (const,) and m.inputs == () and m.outputs == ()


@pytest.mark.parametrize("fill, message", [(None, "missing 'fill'"), ("lots", "'fill' must be a number")])
def test_constant_without_a_valid_fill_is_rejected(fill, message):
    d = json.loads(_manifest().to_json())
    d["args"][0]["role"] = "constant"
    if fill is not None:
        d["args"][0]["fill"] = fill
    with pytest.raises(SpyreError, match=message):
        parse_manifest(json.dumps(d))


def test_a_manifest_without_backend_lx_fraction_has_the_hardware_default():
    d = json.loads(_manifest().to_json())
    del d["backend_lx_fraction"]
    assert parse_manifest(json.dumps(d)).backend_lx_fraction == SpyreConfig().backend_lx_fraction
