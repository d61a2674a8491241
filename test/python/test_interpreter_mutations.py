"""Mutation suite: every corruption of a correct output directory is detected, never passes silently.

A mutation is detected when the interpreter raises a named error, or runs but
produces numbers that fail the fp16 comparison with the expected result.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.interpreter import compare, run, tolerance_for
from test_interpreter_support import SEED_SHAPE, edit_json, reference_bundle_dir

WRONG_NUMBERS = "wrong numbers"


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(SEED_SHAPE).astype(np.float16) for _ in range(3))
    expected = ((a.astype(np.float32) + b).astype(np.float16).astype(np.float32) * c).astype(np.float16)
    return [a, b, c], expected


def _outcome(directory, inputs) -> str:
    """The error message, or WRONG_NUMBERS; fails the test if the mutation passes unnoticed."""
    values, expected = inputs
    try:
        outputs, _ = run(directory, values)
    except SpyreError as e:
        return f"{e.location()}: {e.msg}"
    try:
        compare("z", outputs["z"], expected, tolerance_for("float16"))
    except SpyreError:
        return WRONG_NUMBERS
    pytest.fail("the mutation passed silently")


def _edit_bundle(directory, old, new, count=1):
    path = directory / "bundle.mlir"
    text = path.read_text()
    assert text.count(old) >= count, old
    path.write_text(text.replace(old, new, count))


def _lx_start(dsc, value, cores=None):
    data = dsc["scheduleTree_"][2]["startAddressCoreCorelet_"]["data_"]
    for key in data:
        if cores is None or int(key.strip("[]").split(",")[0]) in cores:
            data[key] = str(value)


def test_the_unmutated_directory_passes(tmp_path, inputs):
    outputs, _ = run(reference_bundle_dir(tmp_path), inputs[0])
    compare("z", outputs["z"], inputs[1], tolerance_for("float16"))


def test_start_address_shifted_by_one_stick_in_the_bundle(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    _edit_bundle(out, "%arg_1_core_offset_2048 = arith.constant 2048", "%arg_1_core_offset_2048 = arith.constant 2176")
    assert "sdsc_0.json: Tensor1 on core 1: start address" in _outcome(out, inputs)
    assert "does not match its work slice" in _outcome(out, inputs)


def test_tile_step_shifted_by_one_stick_gives_wrong_numbers_or_an_error(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    _edit_bundle(out, "65536*d0", "65664*d0")  # every core, every tile of rows: one stick too far
    outcome = _outcome(out, inputs)
    assert outcome == WRONG_NUMBERS or "outside their allocation" in outcome


def test_lx_start_shifted_by_one_stick(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    edit_json(out / "sdsc_0.json", lambda dsc, top: _lx_start(dsc, 128, cores={3}))
    assert _outcome(out, inputs) == ("sdsc_1.json: Tensor0 on core 3: reads LX bytes [0, 32768) "
                                     "but byte 0 was never written")


def test_swapped_work_slices(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)

    def swap(dsc, top):
        s = top["coreIdToWkSlice_"]
        s["4"], s["9"] = s["9"], s["4"]

    edit_json(out / "sdsc_1.json", swap)
    assert "does not match its work slice" in _outcome(out, inputs)


def test_changed_layout_dim_order_of_one_allocate_node(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    edit_json(out / "sdsc_0.json", lambda dsc, top: dsc["scheduleTree_"][0].update(layoutDimOrder_=["out", "mb"]))
    assert "differs from primaryDsInfo_.OUTPUT" in _outcome(out, inputs)


def test_changed_layout_dim_order_everywhere(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)

    def flip(dsc, top):
        for node in dsc["scheduleTree_"]:
            node["layoutDimOrder_"] = ["out", "mb"]
        dsc["primaryDsInfo_"]["OUTPUT"]["layoutDimOrder_"] = ["out", "mb"]

    edit_json(out / "sdsc_1.json", flip)
    outcome = _outcome(out, inputs)
    assert outcome == WRONG_NUMBERS or "does not match its work slice" in outcome


def test_sdsc_filename_outside_the_directory(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    (tmp_path / "x.json").write_text((out / "sdsc_0.json").read_text())
    _edit_bundle(out, 'sdsc_filename="sdsc_0.json"', 'sdsc_filename="../x.json"')
    assert 'sdsc_filename "../x.json" resolves outside the output directory' in _outcome(out, inputs)


def test_lx_offset_past_capacity(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    edit_json(out / "sdsc_0.json", lambda dsc, top: _lx_start(dsc, 1_600_000))
    assert _outcome(out, inputs) == ("sdsc_0.json: Tensor2 on core 0: LX offset 1600000 + 32768 bytes exceeds "
                                     "the usable LX of 1625344 bytes")


def test_unbound_symbol(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    _edit_bundle(out, "sdscbundle.sdsc_execute (%addr_0, ", "sdscbundle.sdsc_execute (")
    _edit_bundle(out, '"symbol_ids"=[-1, ', '"symbol_ids"=[')
    assert "symbol -1 (start address of Tensor0 on core 0 in sdsc_0.json) is not bound" in _outcome(out, inputs)


def test_symbol_bound_twice(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    _edit_bundle(out, '"symbol_ids"=[-1, -2, ', '"symbol_ids"=[-1, -1, ')
    assert "symbol id -1 is bound more than once" in _outcome(out, inputs)


def test_symbol_bound_but_unused(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    _edit_bundle(out, "sdscbundle.sdsc_execute (%addr_0, ", "sdscbundle.sdsc_execute (%addr_0, %addr_0, ")
    _edit_bundle(out, '"symbol_ids"=[-1, ', '"symbol_ids"=[-1, -200, ')
    assert "binds symbol -200, which sdsc_0.json does not use" in _outcome(out, inputs)


def test_misaligned_start_address(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    _edit_bundle(out, "%arg_2_core_offset_4096 = arith.constant 4096", "%arg_2_core_offset_4096 = arith.constant 4098")
    assert "Tensor1 on core 2: start address" in _outcome(out, inputs)
    assert "is not 128-byte aligned" in _outcome(out, inputs)


def test_address_outside_its_allocation(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    _edit_bundle(out, "2097152*d1", "4194304*d1")
    assert "fall outside their allocation" in _outcome(out, inputs)


def test_per_core_span_over_the_limit(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    edit_json(out / "sdsc_0.json", lambda dsc, top: dsc["scheduleTree_"][0].update(
        backGapCore_={"mb": {"-1": "4194304"}, "out": {"-1": "3072"}}))
    assert "per-core span" in _outcome(out, inputs) and "exceeds the limit of 268431360" in _outcome(out, inputs)


def test_core_beyond_the_targets_cores(tmp_path, inputs):
    """The reference files run on 32 cores; a manifest of 16 cores has no core 16."""
    out = reference_bundle_dir(tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "cores": 16}))
    assert _outcome(out, inputs) == "sdsc_0.json: coreIdsUsed_: core 16 does not exist (16 cores)"


def test_arguments_beyond_the_device_memory(tmp_path, inputs):
    """Arguments that take more than the card's 128 GB are refused at load, before any is allocated."""
    out = reference_bundle_dir(tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["args"][3]["nbytes"] = 128 << 30
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert _outcome(out, inputs).endswith(f"manifest.json: the HBM allocations take {(128 << 30) + 3 * (8 << 20)} "
                                          "bytes, more than the 137438953472 bytes of device memory")


def test_overlapping_live_lx_values(tmp_path, inputs):
    """A second add writes LX [16384, 49152) while y (LX [0, 32768)) is still to be read by the mul."""
    out = reference_bundle_dir(tmp_path)
    shutil.copyfile(out / "sdsc_0.json", out / "sdsc_2.json")
    edit_json(out / "sdsc_2.json", lambda dsc, top: _lx_start(dsc, 16384))
    text = (out / "bundle.mlir").read_text()
    first = next(line for line in text.splitlines() if 'sdsc_filename="sdsc_0.json"' in line)
    (out / "bundle.mlir").write_text(text.replace(first, first + "\n" + first.replace("sdsc_0", "sdsc_2")))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["sdsc_files"].append("sdsc_2.json")
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert "(live LX values overlap)" in _outcome(out, inputs)


def test_truncated_json(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    path = out / "sdsc_1.json"
    path.write_text(path.read_text()[:1000])
    assert _outcome(out, inputs).startswith("sdsc_1.json: malformed JSON")


def test_repeated_work_slice_of_an_hbm_output(tmp_path, inputs):
    out = reference_bundle_dir(tmp_path)
    edit_json(out / "sdsc_1.json", lambda dsc, top: top["coreIdToWkSlice_"].update({"9": top["coreIdToWkSlice_"]["4"]}))
    assert _outcome(out, inputs).startswith("sdsc_1.json: 1_mul.coreIdToWkSlice_.9: cores 4 and 9 have the same "
                                            "work slice")
    assert _outcome(out, inputs).endswith("and its output Tensor2 is in HBM")


def test_repeated_work_slice_of_an_lx_output_is_a_replica_its_reader_finds_wrong(tmp_path, inputs):
    """Cores may repeat a slice into their own LX (a replicated op), but a reader that expects
    another slice there is caught."""
    out = reference_bundle_dir(tmp_path)
    edit_json(out / "sdsc_0.json", lambda dsc, top: top["coreIdToWkSlice_"].update({"9": top["coreIdToWkSlice_"]["4"]}))
    assert "does not match its work slice" in _outcome(out, inputs)
