"""spyre-lower-to-bundle + SDSC JSON: field-by-field against torch-spyre's references."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spyre_mlir.codegen import bundle_files
from spyre_mlir.codegen.sdsc import dumps
from spyre_mlir.dialects.spyre import attach_target, target_config
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.mlir_text import make_context, parse_module
from spyre_mlir.passes.lower_to_bundle import lower_to_bundle
from spyre_mlir.passes.plan_memory import plan_memory

from reference_files import REFERENCE, SCHEMA


def reference(name: str) -> dict:
    return json.loads((REFERENCE / name).read_text())


@pytest.fixture(scope="module")
def schema() -> dict:
    s = json.loads(SCHEMA.read_text())
    s["$defs"]["LabeledDataStructure"]["properties"]["dataFormat_"]["enum"] += ["IEEE_FP32", "SENINT8"]
    s["$defs"]["ConstantInfo"]["properties"]["dataFormat_"]["enum"] += ["IEEE_FP32", "SENINT8"]
    return s


def t(shape, layout=""):
    return f"tensor<{'x'.join(map(str, shape))}xf16{layout}>"


def compile_text(body: str, args: list, results: list, cores: int = 32) -> dict[str, str]:
    params = ", ".join(f"%{n}: {t(s)} {{spyre.name = \"{n}\", spyre.role = \"input\"}}" for n, s in args)
    outs = ", ".join(f"{t(s)} {{spyre.name = \"out{i}\"}}" for i, s in enumerate(results))
    text = f"func.func @main({params}) -> ({outs}) {{\n{body}\n}}\n"
    module = parse_module(make_context(), text, "test.mlir")
    attach_target(module, SpyreConfig(cores=cores))
    plan_memory(module.body.block.first_op, lx_limit=0)  # every value in HBM, as the checks below expect
    lower_to_bundle(module, target_config(module))
    module.verify()
    return bundle_files(module)


def sdsc(files: dict[str, str], n: int = 0) -> dict:
    doc = json.loads(files[f"sdsc_{n}.json"])
    (key,) = doc
    return doc[key]


def dsc(super_dsc: dict) -> dict:
    (inner,) = super_dsc["dscs_"]
    (value,) = inner.values()
    return value


def _spec_offsets(files: dict[str, str], n: int) -> list[list[int]]:
    """Per tensor, per core: the start offset from the tensor's base, read back through the bundle."""
    text = files["bundle.mlir"]
    line = [ln for ln in text.splitlines() if f'sdsc_filename="sdsc_{n}.json"' in ln][0]
    operands = line.split("(")[1].split(")")[0].split(", ")
    ids = [int(i) for i in line.split('"symbol_ids"=[')[1].rstrip("]}").split(", ")]
    by_id = {}
    for name, sid in zip(operands, ids):
        off = int(name.rsplit("_", 1)[1]) if "_core_" in name else 0
        by_id[str(sid)] = off
    out = []
    for node in dsc(sdsc(files, n))["scheduleTree_"]:
        data = node["startAddressCoreCorelet_"]["data_"]
        out.append([by_id[v] if node["component_"] == "hbm" else int(v) for v in data.values()])
    return out


def semantic(super_dsc: dict) -> dict:
    """The fields that must equal the reference's."""
    d = dsc(super_dsc)
    nodes = d["scheduleTree_"]
    return {
        "N_": d["N_"], "ss": d["dataStageParam_"]["0"]["ss_"], "el": d["dataStageParam_"]["0"]["el_"],
        "slices": super_dsc["numWkSlicesPerDim_"], "core_map": super_dsc["coreIdToWkSlice_"],
        "primary": d["primaryDsInfo_"], "masking": d["coordinateMasking_"],
        "scale": [x["scale_"] for x in d["labeledDs_"]], "dsType": [x["dsType_"] for x in d["labeledDs_"]],
        "format": [x["dataFormat_"] for x in d["labeledDs_"]],
        "op": [(c["opFuncName"], c["exUnit"], c["inputLabeledDs"], c["outputLabeledDs"]) for c in d["computeOp_"]],
        "backGap": [n.get("backGapCore_") for n in nodes],
        "coords": [n["coordinates_"] for n in nodes], "layout": [n["layoutDimOrder_"] for n in nodes],
        "sharing": [_sharing(n) for n in nodes],
        "cores": (super_dsc["numCoresUsed_"], d["coreIdsUsed_"]),
    }


def _sharing(node: dict) -> list[int]:
    """Which cores share a start address: index of the first core with the same value."""
    values = list(node["startAddressCoreCorelet_"]["data_"].values())
    return [values.index(v) for v in values]


def test_add_64x128_two_cores(schema):
    import jsonschema
    files = compile_text('%y = spyre.pointwise "add" (%a, %b) {core_splits = array<i64: 2, 1>} : '
                         f"({t([64, 128])}, {t([64, 128])}) -> {t([64, 128])}\nfunc.return %y : {t([64, 128])}",
                         [("a", [64, 128]), ("b", [64, 128])], [[64, 128]])
    jsonschema.validate(json.loads(files["sdsc_0.json"]), schema)
    s = sdsc(files)
    assert s["numWkSlicesPerDim_"] == {"mb": 2, "out": 1}
    assert dsc(s)["dataStageParam_"]["0"]["ss_"]["mb_"] == 32
    assert _spec_offsets(files, 0) == [[0, 4096]] * 3
    manifest = json.loads(files["manifest.json"])
    assert [(a["role"], a["name"], a["nbytes"]) for a in manifest["args"]] == [
        ("input", "a", 16384), ("input", "b", 16384), ("output", "out0", 16384)]


def test_add_100x150_four_cores(schema):
    import jsonschema
    ref = reference("sdsc/add_100x150_fp16_4cores.json")["3_add"]
    s = [100, 150]
    files = compile_text(f'%y = spyre.pointwise "add" (%a, %b) {{core_splits = array<i64: 4, 1>}} : '
                         f"({t(s)}, {t(s)}) -> {t(s)}\nfunc.return %y : {t(s)}",
                         [("a", s), ("b", s)], [s], cores=4)
    ours = sdsc(files)
    jsonschema.validate(json.loads(files["sdsc_0.json"]), schema)
    assert semantic(ours) == semantic(ref)
    # 25 rows of 3 sticks' row-stride (128 B) per core.
    assert _spec_offsets(files, 0) == [[0, 3200, 6400, 9600]] * 3
    without = copy.deepcopy(ref)
    for node in dsc(without)["scheduleTree_"]:
        node["startAddressCoreCorelet_"]["data_"] = None
    mine = copy.deepcopy(ours)
    for node in dsc(mine)["scheduleTree_"]:
        node["startAddressCoreCorelet_"]["data_"] = None
    without.pop("debug_handle_")
    assert json.dumps(mine, sort_keys=False) == json.dumps(without, sort_keys=False)


def test_add_1024x4096_32_cores(schema):
    import jsonschema
    s = [1024, 4096]
    files = compile_text(f'%y = spyre.pointwise "add" (%a, %b) {{core_splits = array<i64: 32, 1>}} : '
                         f"({t(s)}, {t(s)}) -> {t(s)}\nfunc.return %y : {t(s)}",
                         [("a", s), ("b", s)], [s])
    jsonschema.validate(json.loads(files["sdsc_0.json"]), schema)
    d = dsc(sdsc(files))
    assert d["N_"] == {"name_": "n", "mb_": 1024, "out_": 4096}
    assert d["dataStageParam_"]["0"]["ss_"]["mb_"] == 32
    # 32 rows x 128 B per core; the full tensor is 64 stick columns x 1024 rows.
    assert _spec_offsets(files, 0) == [[4096 * c for c in range(32)]] * 3


def test_sum_lastdim_256x150(schema):
    import jsonschema
    ref = reference("sdsc/sum_lastdim_256x150_fp16.json")["4_sum"]
    files = compile_text(f'%y = spyre.reduce "sum" (%a) dims [1] {{core_splits = array<i64: 32, 1>}} : '
                         f"({t([256, 150])}) -> {t([256, 1])}\nfunc.return %y : {t([256, 1])}",
                         [("a", [256, 150])], [[256, 1]])
    jsonschema.validate(json.loads(files["sdsc_0.json"]), schema)
    ours = sdsc(files)
    assert semantic(ours) == semantic(ref)
    d, r = dsc(ours), dsc(ref)
    assert d["maskingConstId_"] == r["maskingConstId_"] == 0
    assert d["constantInfo_"]["0"]["name_"] == r["constantInfo_"]["0"]["name_"]
    assert d["constantInfo_"]["0"]["data_"]["data_"] == {"[0, 0, 0]": [0]}
    assert _spec_offsets(files, 0) == [[c * 8 * 128 for c in range(32)]] * 2


def test_sum_dim0_512x1024_nonstick(schema):
    import jsonschema
    files = compile_text(f'%y = spyre.reduce "sum" (%a) dims [0] {{core_splits = array<i64: 16, 1>}} : '
                         f"({t([512, 1024])}) -> {t([1, 1024])}\nfunc.return %y : {t([1, 1024])}",
                         [("a", [512, 1024])], [[1, 1024]])
    jsonschema.validate(json.loads(files["sdsc_0.json"]), schema)
    s = sdsc(files)
    d = dsc(s)
    assert list(s) == ["sdscFoldProps_", "sdscFolds_", "coreFoldProp_", "coreletFoldProp_", "numCoresUsed_",
                       "coreIdToDsc_", "numWkSlicesPerDim_", "coreIdToWkSlice_", "coreIdToDscSchedule", "dscs_"]
    assert d["computeOp_"][0]["opFuncName"] == "sumnonstick"
    assert d["N_"] == {"name_": "n", "mb_": 1024, "out_": 512}
    assert d["coordinateMasking_"] == {} and d["maskingConstId_"] == -1
    assert [x["scale_"] for x in d["labeledDs_"]] == [[1, 1], [-1, 1]]
    assert d["primaryDsInfo_"] == {"OUTPUT": {"layoutDimOrder_": ["out", "mb"], "stickDimOrder_": ["mb"],
                                              "stickSize_": [64]}}
    # mb (1024 columns = 16 sticks) split 16: one stick column (512 rows x 128 B) per core.
    assert _spec_offsets(files, 0) == [[c * 512 * 128 for c in range(16)], [c * 128 for c in range(16)]]


def test_sum_dim0_512x1024_without_keepdim_keeps_the_reduced_label(schema):
    """``x.sum(0)`` on fp16 [512, 1024] in torch-spyre's form: the [1024] output keeps the reduced
    label ``out`` with ``scale_`` -1 and shares the input's ``primaryDsInfo_`` entry, field by field
    the SDSC of the keepdim [1, 1024] output.  (Its dim was dropped, with a KERNEL entry of its own.)"""
    import jsonschema

    def compile_sum(result: list[int]) -> dict[str, str]:
        return compile_text(f'%y = spyre.reduce "sum" (%a) dims [0] {{core_splits = array<i64: 16, 1>}} : '
                            f"({t([512, 1024])}) -> {t(result)}\nfunc.return %y : {t(result)}",
                            [("a", [512, 1024])], [result])

    files = compile_sum([1024])
    jsonschema.validate(json.loads(files["sdsc_0.json"]), schema)
    d = dsc(sdsc(files))
    assert d["computeOp_"][0]["opFuncName"] == "sumnonstick"
    assert d["primaryDsInfo_"] == {"OUTPUT": {"layoutDimOrder_": ["out", "mb"], "stickDimOrder_": ["mb"],
                                              "stickSize_": [64]}}
    assert [x["dsType_"] for x in d["labeledDs_"]] == ["OUTPUT", "OUTPUT"]
    assert [x["scale_"] for x in d["labeledDs_"]] == [[1, 1], [-1, 1]]
    assert [n["layoutDimOrder_"] for n in d["scheduleTree_"]] == [["out", "mb"], ["out", "mb"]]
    assert [n["maxDimSizes_"] for n in d["scheduleTree_"]] == [[-1, -1], [-1, -1]]
    out = d["scheduleTree_"][1]["coordinates_"]["coordInfo"]["out"]["folds"]
    assert [(f["Affine"]["alpha_"], a["factor_"], a["label_"]) for f, a in
            zip(out["dim_prop_func"], out["dim_prop_attr"])] == [
        (1, 1, "core_fold"), (0, 1, "corelet_fold"), (0, 1, "row_fold"), (1, 1, "elem_arr_0")]
    assert semantic(sdsc(files)) == semantic(sdsc(compile_sum([1, 1024])))
    assert _spec_offsets(files, 0) == [[c * 512 * 128 for c in range(16)], [c * 128 for c in range(16)]]


def _core_fold(files: dict[str, str], tensor: int, label: str) -> tuple[int, int]:
    """(alpha, factor) of the core_fold of ``label`` in tensor ``tensor``'s ``coordinates_``."""
    folds = dsc(sdsc(files))["scheduleTree_"][tensor]["coordinates_"]["coordInfo"][label]["folds"]
    (fold,) = [(f["Affine"]["alpha_"], a["factor_"]) for f, a in zip(folds["dim_prop_func"], folds["dim_prop_attr"])
               if a["label_"] == "core_fold"]
    return fold


def test_a_reduced_label_split_over_cores_folds_one_element_of_one_slice():
    """Cores that split a reduced dim share the output's element: its label's core_fold has
    factor 1 (alpha 1, the stick size for -2), as torch-spyre writes any -1 or -2 label.
    (It had the split as factor, with alpha 0.)"""
    nonstick = compile_text(f'%y = spyre.reduce "sum" (%a) dims [0] {{core_splits = array<i64: 4, 8>}} : '
                            f"({t([512, 1024])}) -> {t([1024])}\nfunc.return %y : {t([1024])}",
                            [("a", [512, 1024])], [[1024]])
    assert (_core_fold(nonstick, 0, "out"), _core_fold(nonstick, 1, "out")) == ((64, 8), (1, 1))
    stick = compile_text(f'%y = spyre.reduce "sum" (%a) dims [1] {{core_splits = array<i64: 4, 4>}} : '
                         f"({t([256, 256])}) -> {t([256, 1])}\nfunc.return %y : {t([256, 1])}",
                         [("a", [256, 256])], [[256, 1]], cores=16)
    assert (_core_fold(stick, 0, "out"), _core_fold(stick, 1, "out")) == ((64, 4), (64, 1))


def test_mean_scaling_factor_is_the_first_constant_before_the_mask(schema):
    """A mean carries ``scaling_factor`` (1 / the unpadded reduced count) as constant 0, as in
    torch-spyre's mean; the masking value follows it (``maskingConstId_`` 1)."""
    import jsonschema
    files = compile_text(f'%y = spyre.reduce "mean" (%a) dims [1] : ({t([256, 150])}) -> {t([256, 1])}\n'
                         f"func.return %y : {t([256, 1])}", [("a", [256, 150])], [[256, 1]])
    jsonschema.validate(json.loads(files["sdsc_0.json"]), schema)
    d = dsc(sdsc(files))
    assert d["computeOp_"][0]["opFuncName"] == "mean"
    assert [(c["name_"], c["data_"]["data_"]) for c in d["constantInfo_"].values()] == [
        ("scaling_factor", {"[0, 0, 0]": [12138]}),
        ("samv-maskvalue", {"[0, 0, 0]": [0]})]
    assert d["maskingConstId_"] == 1 and d["coordinateMasking_"] == {"out": [[150, 42]]}


def test_matmul_128x256x64_m2_k4(schema):
    import jsonschema
    ref = reference("sdsc/matmul_128x256x64_M2_K4.json")["1_batchmatmul"]
    files = compile_text(f'%y = spyre.matmul (%a, %b) {{core_splits = array<i64: 2, 1, 4>}} : '
                         f"({t([128, 256])}, {t([256, 64])}) -> {t([128, 64])}\nfunc.return %y : {t([128, 64])}",
                         [("a", [128, 256]), ("b", [256, 64])], [[128, 64]])
    jsonschema.validate(json.loads(files["sdsc_0.json"]), schema)
    ours = sdsc(files)
    assert semantic(ours) == semantic(ref)
    assert list(ours["coreIdToWkSlice_"]["0"]) == list(ref["coreIdToWkSlice_"]["0"]) == ["in", "mb", "out"]
    # A: K slice of 64 = 1 stick column (128 rows x 128 B), M slice of 64 rows; B: 64 rows; C: 64 rows.
    a = [(c % 4) * 128 * 128 + (c // 4) * 64 * 128 for c in range(8)]
    b = [(c % 4) * 64 * 128 for c in range(8)]
    out = [(c // 4) * 64 * 128 for c in range(8)]
    assert _spec_offsets(files, 0) == [a, b, out]


_JSON_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
                 | st.text(max_size=8))
_JSON_DOCS = st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                          | st.dictionaries(st.text(max_size=6) | st.integers() | st.booleans(), inner,
                                            max_size=4), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(document=_JSON_DOCS)
def test_sdsc_text_is_json_dumps_with_indent_2(document):
    assert dumps(document) == json.dumps(document, indent=2) + "\n"


def test_bundle_reparses_and_is_deterministic():
    s = [64, 128]
    body = (f'%y = spyre.pointwise "add" (%a, %b) {{core_splits = array<i64: 2, 1>}} : ({t(s)}, {t(s)}) -> {t(s)}\n'
            f'%z = spyre.pointwise "exp" (%y) {{core_splits = array<i64: 2, 1>}} : ({t(s)}) -> {t(s)}\n'
            f"func.return %z : {t(s)}")
    files = compile_text(body, [("a", s), ("b", s)], [s])
    assert files == compile_text(body, [("a", s), ("b", s)], [s])
    module = parse_module(make_context(), files["bundle.mlir"], "bundle.mlir")
    module.verify()
    manifest = json.loads(files["manifest.json"])
    assert manifest["args"][-1] == {"index": 3, "role": "pool", "name": "pool", "nbytes": 16384}
    assert manifest["sdsc_files"] == ["sdsc_0.json", "sdsc_1.json"]
    assert "%arg_3_core_4096 = arith.addi %arg_3, %arg_3_core_offset_4096 : index" in files["bundle.mlir"]
