"""The reference interpreter on torch-spyre's real emitter output (reference bundle and single-op SDSC files)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import encode_scalar
from spyre_mlir.interpreter import compare, run, tolerance_for
from spyre_mlir.interpreter.runner import host_array, host_inputs
from spyre_mlir.interpreter.schema import SCHEMA_ENV_VAR
from spyre_mlir.manifest import KernelArg, Manifest
from reference_files import REFERENCE, SCHEMA
from test_interpreter_support import SEED_SHAPE, HostTensor, edit_json, reference_bundle_dir, single_op_dir

FP16 = tolerance_for("float16")
MIB = 1 << 20


def _normal(rng, shape):
    return rng.standard_normal(shape).astype(np.float16)


def _close(got, ref):
    compare("out", got, np.asarray(ref, np.float32).astype(got.dtype), FP16)


def test_reference_bundle_computes_add_then_mul(tmp_path):
    rng = np.random.default_rng(1)
    a, b, c = (_normal(rng, SEED_SHAPE) for _ in range(3))
    outputs, _ = run(reference_bundle_dir(tmp_path), {"a": a, "b": b, "c": c}, schema=SCHEMA)
    y = (a.astype(np.float32) + b).astype(np.float16)  # y is stored in fp16 (LX), as eager does
    _close(outputs["z"], y.astype(np.float32) * c)
    assert outputs["z"].dtype == np.float16 and list(outputs["z"].shape) == SEED_SHAPE


def test_reference_bundle_stats_hbm_traffic_and_lx(tmp_path):
    rng = np.random.default_rng(2)
    _, stats = run(reference_bundle_dir(tmp_path), [_normal(rng, SEED_SHAPE) for _ in range(3)])
    d = stats.as_dict()
    assert d["hbm_bytes_read"] == 3 * 8 * MIB and d["hbm_bytes_written"] == 8 * MIB  # a, b, c once; z once
    assert d["lx_bytes_written"] == d["lx_bytes_read"] == 8 * MIB  # y only in LX
    assert d["sdsc_executions"] == 16 and d["cores_used"] == 32
    assert d["lx_peak_bytes"] == 16 * 1024 * 2 and d["lx_peak_bytes_per_core"] == [32768] * 32
    add, mul = d["ops"]
    assert (add["op"], add["executions"], add["hbm_bytes_written"]) == ("add", 8, 0)
    assert (mul["op"], mul["lx_bytes_read"], mul["hbm_bytes_written"]) == ("mul", 8 * MIB, 8 * MIB)
    assert "total" in stats.table()


def test_add_100x150_on_4_cores_with_stick_padding(tmp_path):
    shape = (100, 150)
    out = single_op_dir(tmp_path, REFERENCE / "sdsc" / "add_100x150_fp16_4cores.json", [
        HostTensor("x", "input", shape, ("mb", "out")), HostTensor("y", "input", shape, ("mb", "out")),
        HostTensor("z", "output", shape, ("mb", "out"))])
    rng = np.random.default_rng(3)
    x, y = _normal(rng, shape), _normal(rng, shape)
    outputs, stats = run(out, {"x": x, "y": y}, schema=SCHEMA)
    _close(outputs["z"], x.astype(np.float32) + y)
    assert stats.as_dict()["hbm_bytes_read"] == 2 * 3 * 100 * 128  # padded sticks are read too


def _sum_lastdim_dir(tmp_path):
    """The reference ``x.sum(-1)`` of [256, 150] alone, its output staged as [256, 1]."""
    return single_op_dir(tmp_path, REFERENCE / "sdsc" / "sum_lastdim_256x150_fp16.json", [
        HostTensor("x", "input", (256, 150), ("mb", "out")),
        HostTensor("s", "output", (256, 1), ("mb", "out"))])


def test_sum_over_the_stick_dim_masks_padding_and_writes_sparse_sticks(tmp_path):
    out = _sum_lastdim_dir(tmp_path)
    rng = np.random.default_rng(4)
    x = _normal(rng, (256, 150))
    outputs, _ = run(out, {"x": x}, schema=SCHEMA)
    _close(outputs["s"], x.astype(np.float32).sum(axis=1, keepdims=True))


def test_sum_mask_is_what_hides_the_padding(tmp_path):
    out = _sum_lastdim_dir(tmp_path)
    edit_json(out / "op.json", lambda dsc, top: dsc.update(coordinateMasking_={"out": [[100, 92]]}))
    x = np.ones((256, 150), np.float16)
    outputs, _ = run(out, {"x": x})
    assert (outputs["s"] == 100).all()


def _as_mean(factor: float):
    """An edit making the reference sum a mean whose ``scaling_factor`` constant is ``factor``."""
    def edit(dsc, top):
        dsc["computeOp_"][0]["opFuncName"] = "mean"
        mask = dsc["constantInfo_"]["0"]
        bits = {"[0, 0, 0]": [encode_scalar(factor, "SEN169_FP16")]}
        dsc["constantInfo_"] = {"0": {**mask, "name_": "scaling_factor", "data_": {**mask["data_"], "data_": bits}},
                                "1": mask}
        dsc["maskingConstId_"] = 1
    return edit


def test_mean_scales_the_sum_by_its_scaling_factor_constant(tmp_path):
    """The device multiplies a mean's sum by the file's ``scaling_factor``, whatever it is (a
    deliberately wrong 0.5 here, not 1 / 150); the interpreter divided by the count itself."""
    out = _sum_lastdim_dir(tmp_path)
    edit_json(out / "op.json", _as_mean(0.5))
    x = _normal(np.random.default_rng(5), (256, 150))
    outputs, _ = run(out, {"x": x}, schema=SCHEMA)
    _close(outputs["s"], x.astype(np.float32).sum(axis=1, keepdims=True) * 0.5)


def _drop_reduced_label(dsc, top):
    """The output without its reduced label (a reduction without keepdim, as codegen wrote it)."""
    dsc["labeledDs_"][1].update(dsType_="KERNEL", scale_=[1])
    dsc["primaryDsInfo_"]["KERNEL"] = {"layoutDimOrder_": ["mb"], "stickDimOrder_": ["mb"], "stickSize_": [64]}
    dsc["scheduleTree_"][1].update(layoutDimOrder_=["mb"], maxDimSizes_=[-1])
    dsc["scheduleTree_"][1]["coordinates_"]["coordInfo"].pop("out")


@pytest.mark.parametrize("edit, message", [
    (_drop_reduced_label, "reduction output Tensor1 has no dim 'out'; a reduced dim stays with scale_ -1"),
    (lambda dsc, top: dsc["labeledDs_"][1].update(scale_=[1, 1]), "reduction output Tensor1 reduces no dim"),
    (lambda dsc, top: dsc["computeOp_"][0].update(opFuncName="sumnonstick"),
     "op func 'sumnonstick' with a scale_ -2 on output Tensor1: a reduction over the stick is 'sum'"),
    (lambda dsc, top: dsc["computeOp_"][0].update(opFuncName="mean"),
     "op func 'mean' needs the constant 'scaling_factor'"),
])
def test_reductions_are_read_in_torch_spyre_form(tmp_path, edit, message):
    """A reduction's output keeps every reduced label (-1, -2 on the stick), its op func says
    whether one is the stick, a mean brings its scaling factor; anything else is an error."""
    out = _sum_lastdim_dir(tmp_path)
    edit_json(out / "op.json", edit)
    with pytest.raises(SpyreError, match=message) as e:
        run(out, {"x": np.zeros((256, 150), np.float16)})
    assert e.value.location() == "op.json"


def test_matmul_m2_k4_combines_partial_sums_of_a_k_cohort(tmp_path):
    out = single_op_dir(tmp_path, REFERENCE / "sdsc" / "matmul_128x256x64_M2_K4.json", [
        HostTensor("a", "input", (128, 256), ("mb", "in")),
        HostTensor("b", "input", (256, 64), ("in", "out")),
        HostTensor("c", "output", (128, 64), ("mb", "out"))])
    rng = np.random.default_rng(5)
    a, b = _normal(rng, (128, 256)), _normal(rng, (256, 64))
    outputs, stats = run(out, [a, b], schema=SCHEMA)
    _close(outputs["c"], a.astype(np.float32) @ b.astype(np.float32))
    d = stats.as_dict()
    assert d["hbm_bytes_written"] == 128 * 64 * 2  # each K cohort's combined slice is written once
    assert d["cores_used"] == 8


def test_inputs_by_sequence_and_mapping_must_match_the_manifest(tmp_path):
    out = reference_bundle_dir(tmp_path)
    with pytest.raises(SpyreError, match=r"missing \['c'\], unexpected \['d'\]"):
        run(out, {"a": 0, "b": 0, "d": 0})
    with pytest.raises(SpyreError, match="expected 3 inputs"):
        run(out, [np.zeros(SEED_SHAPE, np.float16)])
    with pytest.raises(SpyreError, match=r"input 'a' expects float16 \[1024, 4096\], given float16 \[2, 2\]"):
        run(out, [np.zeros((2, 2), np.float16)] * 3)


def test_torch_tensors_are_accepted(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    a, b, c = (torch.randn(*SEED_SHAPE, dtype=torch.float16) for _ in range(3))
    outputs, _ = run(reference_bundle_dir(tmp_path), [a, b, c])
    np.testing.assert_array_equal(outputs["z"], ((a + b) * c).numpy())  # bit-exact with eager fp16


def _input(dtype: str) -> KernelArg:
    return KernelArg(0, "input", "x", 0, (2, 3), dtype)


@pytest.mark.parametrize("dtype, value", [
    ("int32", np.array([[0, 1, 2], [3, 99, 2 ** 31 - 1]], np.int64)),  # token ids that fit
    ("int32", np.arange(6, dtype=np.uint8).reshape(2, 3)),
    ("int8", np.array([[-128, 0, 1], [2, 3, 127]], np.int64)),
    ("float16", np.full((2, 3), 0.1, np.float16)),
    ("float32", np.full((2, 3), 0.1, np.float32)),
    ("bfloat16", np.array([[1.0, -2.5, 0.15625], [3.0, 0.0, 1e30]], np.float32)
     .view(np.uint32) & np.uint32(0xFFFF0000)),  # float32 holding bfloat16 numbers
], ids=["int64-ids", "uint8-ids", "int64-int8", "float16", "float32", "bfloat16-as-float32"])
def test_host_array_converts_what_converts_exactly(dtype, value):
    value = value.view(np.float32) if dtype == "bfloat16" else value
    got = host_array(_input(dtype), value)
    assert got.dtype == (np.float32 if dtype == "bfloat16" else np.dtype(dtype))
    np.testing.assert_array_equal(got, value)


@pytest.mark.parametrize("dtype, value, why", [
    ("float16", np.zeros((2, 3)), "given float64 [2, 3]: float64 does not convert to float16 exactly; "
                                  "convert it to float16 first"),
    ("float16", np.zeros((2, 3), np.float32), "given float32 [2, 3]: float32 does not convert to float16 exactly"),
    ("float16", np.ones((2, 3), np.int32), "given int32 [2, 3]: int32 does not convert to float16 exactly"),
    ("float16", np.ones((2, 3), bool), "given bool [2, 3]: bool does not convert to float16 exactly"),
    ("float16", np.full((2, 3), 1 + 2j), "given complex128 [2, 3]: complex128 does not convert to float16 exactly"),
    ("float32", np.zeros((2, 3), np.float16), "given float16 [2, 3]: float16 does not convert to float32 exactly"),
    ("float16", np.zeros((3, 2), np.float16), "given float16 [3, 2]: the program was compiled for static shapes; "
                                              "compile it for [3, 2] to run those"),
    ("bfloat16", np.full((2, 3), 0.1, np.float32), "given float32 [2, 3]: float32 values that are not bfloat16 "
                                                   "numbers; round them to bfloat16 first"),
    ("int32", np.array([[0, 1, 2], [3, 4, 2 ** 40]]), "given int64 [2, 3]: value 1099511627776 does not fit in "
                                                      "int32 (the program stages this input as int32)"),
    ("int32", np.ones((2, 3), bool), "given bool [2, 3]: bool does not convert to int32 exactly; give integers"),
    ("int32", np.ones((2, 3), np.float32), "given float32 [2, 3]: float32 does not convert to int32 exactly"),
    ("int8", np.full((2, 3), 300), "given int64 [2, 3]: value 300 does not fit in int8"),
], ids=["float64", "float32", "int32", "bool", "complex", "float16-for-float32", "shape", "bfloat16-inexact",
        "ids-too-big", "bool-ids", "float-ids", "int8-range"])
def test_host_array_refuses_what_does_not_convert_exactly(dtype, value, why):
    """One error at the inputs' file naming the input, the expected and the given dtype and shape;
    never numpy's ComplexWarning or a silent cast."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SpyreError) as info:
            host_inputs(Manifest((_input(dtype),), (), 1), {"x": value}, "in.npz")
    assert info.value.loc == "in.npz"
    assert info.value.msg.startswith(f"input 'x' expects {dtype} [2, 3], {why}"), info.value.msg


def test_schema_comes_from_the_environment_and_catches_violations(tmp_path, monkeypatch):
    out = reference_bundle_dir(tmp_path)
    edit_json(out / "sdsc_0.json", lambda dsc, top: top.update(numCoresUsed_=0))
    monkeypatch.setenv(SCHEMA_ENV_VAR, str(SCHEMA))
    with pytest.raises(SpyreError, match="schema violation at 0_add.numCoresUsed_") as e:
        run(out, [np.zeros(SEED_SHAPE, np.float16)] * 3)
    assert e.value.location() == "sdsc_0.json"


def test_schema_accepts_the_data_formats_real_files_use(tmp_path):
    out = reference_bundle_dir(tmp_path)
    edit_json(out / "sdsc_0.json", lambda dsc, top: dsc["labeledDs_"][0].update(dataFormat_="IEEE_FP32"))
    with pytest.raises(SpyreError, match=r"wordLength: 2 does not match IEEE_FP32 \(4 bytes\)") as e:
        run(out, [np.zeros(SEED_SHAPE, np.float16)] * 3, schema=SCHEMA)  # passes the schema, fails structure
    edit_json(out / "sdsc_0.json", lambda dsc, top: dsc["labeledDs_"][0].update(dataFormat_="FP64"))
    with pytest.raises(SpyreError, match="schema violation at 0_add.dscs_.0.add.labeledDs_.0.dataFormat_"):
        run(out, [np.zeros(SEED_SHAPE, np.float16)] * 3, schema=SCHEMA)
    assert e.value.location() == "sdsc_0.json"


@pytest.mark.parametrize("edit, message", [
    (lambda dsc, top: dsc.pop("N_"), r"0_add.dscs_\[0\].add: missing 'N_'"),
    (lambda dsc, top: top["coreIdToWkSlice_"].pop("7"), "coreIdToWkSlice_: missing '7'"),
    (lambda dsc, top: top["numWkSlicesPerDim_"].update(mb=16), "16 slices of ss_ 16 do not make N_ 512"),
    (lambda dsc, top: dsc["computeOp_"][0].update(opFuncName="frobnicate"), "unknown op func 'frobnicate'"),
    (lambda dsc, top: dsc["computeOp_"][0].update(inputLabeledDs=["Tensor0-idx0", "Tensor9-idx9"]),
     "'Tensor9-idx9' names no labeled tensor"),
    (lambda dsc, top: dsc["labeledDs_"][1].update(scale_=[1]), "1 entries for 2 dims"),
])
def test_structural_checks_name_the_file_and_field(tmp_path, edit, message):
    out = reference_bundle_dir(tmp_path)
    edit_json(out / "sdsc_0.json", edit)
    with pytest.raises(SpyreError, match=message) as e:
        run(out, [np.zeros(SEED_SHAPE, np.float16)] * 3)
    assert e.value.location() == "sdsc_0.json"



def test_the_interpreter_imports_no_compiler_pass_importer_or_codegen(tmp_path):
    import subprocess
    import sys

    out = reference_bundle_dir(tmp_path)
    code = ("import sys, numpy as np\nfrom spyre_mlir.interpreter import run\n"
            f"run({str(out)!r}, [np.zeros({SEED_SHAPE}, np.float16)] * 3)\n"
            "print([m for m in sys.modules if m.startswith(('spyre_mlir.passes', 'spyre_mlir.codegen', "
            "'spyre_mlir.importer', 'torch'))])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def _weight(index: int, dim_order: tuple[int, ...]) -> KernelArg:
    from spyre_mlir.layout import stick_layout
    from spyre_mlir.manifest import ArgLayout

    layout = stick_layout((64, 64), "float16", dim_order)
    return KernelArg(index, "parameter", "w", layout.nbytes, (64, 64), "float16",
                     ArgLayout(tuple(layout.device_size), dim_order, layout.data_format))


def test_devices_share_only_an_allocation_laid_out_alike():
    """Device.share holds the other device's bytes for an argument of the same name, shape and
    layout only: a weight sticked on another dim is no such allocation, and other numerics none."""
    from spyre_mlir.hardware import SpyreConfig
    from spyre_mlir.interpreter.device import Device

    config = SpyreConfig()
    source = Device((_weight(0, (0, 1)),), config)
    weight = np.arange(64 * 64, dtype=np.float16).reshape(64, 64)
    source.stage(source.allocations[0].arg, weight)
    alike, transposed = Device((_weight(0, (0, 1)),), config), Device((_weight(0, (1, 0)),), config)
    assert alike.share(source, {"w"}) == ["w"] and transposed.share(source, {"w"}) == []
    np.testing.assert_array_equal(alike.read_back(alike.allocations[0].arg), weight)
    with pytest.raises(SpyreError, match="cannot share the memory of one in ieee numerics"):
        Device((_weight(0, (0, 1)),), config, "dlfloat16").share(source, {"w"})
