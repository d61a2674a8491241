# OpSpec -> SDSC JSON (DESIGN §10): the per-op file the Spyre back end
# consumes, with the structure and key order of torch-spyre's emitter
# (test/data/reference/sdsc/*.json).  Reads OpSpec records; writes JSON-ready
# dicts/text.
"""SDSC JSON generation.

:func:`sdsc_json` builds the ``{"<n>_<opFuncName>": SuperDsc}`` document of one
op; :func:`dumps` prints it deterministically (two-space indent, the key order
built here).  Field rules:

* ``N_``: padded iteration sizes per label; ``dataStageParam_`` ``ss_``/``el_``:
  per-core sizes (``N_ / splits``).
* ``numWkSlicesPerDim_``: splits per label; ``coreIdToWkSlice_``: core -> slice
  (cores step through a matmul's ``in`` first, then the labels innermost first:
  :attr:`~spyre_mlir.analysis.work.WorkProblem.slice_order`; keys in torch-spyre's
  order, ``in`` first, then the labels in order).
* ``primaryDsInfo_``: one entry per distinct layout label; ``layoutDimOrder_``
  innermost first.
* one ``allocate`` node per argument: start address per core (HBM: the
  negative symbol id as a string, ``isStartAddrSymbolic_`` 1; LX: the offset),
  ``backGapCore_`` for a window of a larger tensor, ``coordinates_`` folds.
* no ``debug_handle_`` (the schema forbids it; torch-spyre writes null);
* ``labeledDs_`` ``scale_`` per layout label: 1 the tensor advances with the
  label; -1 extent 1 (a reduced label of a reduction's output, and also an
  input's size-1 dim broadcast along the label); -2 one element per stick on
  the stick dim (a reduction over the stick, and also an input broadcast along
  the stick: every position of the label reads element 0 of the stick).  No
  reference shows a broadcast read; this symmetric use of ``scale_`` is our
  convention.  The ``coordinates_`` of a -1 or -2 label fold one element of one
  slice, however many cores split the label: core_fold factor 1 and alpha 1
  (-1) or the stick size (-2), element folds of one element (-2: alpha 0 within
  the stick), as torch-spyre writes them;
* a storage dim indexed by several iteration dims (``d0*256 + d2``: a view
  folded into the indexing map) is several layout labels, innermost first,
  each with its own ``coordinates_`` entry; the strides follow from the extents;
* ``computeOp_`` with ``opFuncName`` and ``exUnit``;
* a table read through an index (``embedding``, ``index_select``: an
  ``identity`` whose value table is addressed by an int32 index, DESIGN §15)
  takes torch-spyre's form: the index is listed in ``computeOp_``'s
  ``indirectAccessIndexLabeledDs_`` (the schema's spelling; torch-spyre's
  emitter writes it without the trailing underscore, which the schema rejects),
  not in ``inputLabeledDs``, its ``dsType_`` is ``KERNEL_IDX``, its ``memOrg_``
  HBM only; the allocate nodes of index and table are ``indirectAllocType_``
  ``index_tensor`` / ``value_tensor``, each naming the other in
  ``relatedIndirectAccessAlloc_`` (torch-spyre's ``indexTensorType_`` "index"
  is left out: the schema has no such field).  The table's gathered dim is
  our convention, as no reference shows one: it carries the label of the
  index's stick (entry) dim with ``scale_`` -1 and ``maxDimSizes_`` 1 (torch-spyre
  writes 1 there: one row per iteration point), and a ``backGapCore_`` of its
  other rows, so that its extent is the table's row count and the labels
  outside it get their strides; every core starts at the table's base;
  ``constantInfo_`` for scalar operands and a mean's ``scaling_factor``, then
  the mask value, each its bit pattern in the op's data format (SEN169_FP16 is
  DLFloat16, 1-6-9, not IEEE binary16: ``hardware.encode_scalar``; checked
  against torch-spyre's ``mean_keepdim`` example, whose 1/1024 is 10752).
  torch-spyre writes the pattern as a decimal string (``["10752"]``); the
  SDSC bundle schema allows only integers there, so we write the integer;
  ``coordinateMasking_`` / ``maskingConstId_`` (the mask value's id) for
  reductions over a padded stick.  The mask value is the op's identity, except
  that a max or min in SEN169_FP16 masks with the largest finite DLFloat16
  (``hardware.DLFLOAT16_MAX``): DLFloat16 has no infinity, and torch-spyre's
  65504 would make a row of -inf reduce to -65504 instead of -inf.

Reductions (every reduction op func: sum, max, min, mean) take torch-spyre's
form; what each part was checked against:

* over the stick: the output is sparse, sticked on the reduced label with
  ``scale_`` -2, and shares the input's ``primaryDsInfo_`` entry and label
  order; the op func is ``<op>``: ``sdsc/sum_lastdim_256x150_fp16.json`` of
  ``test/data/reference`` (``x.sum(-1)``), field by field in test_codegen.py.
  Without keepdim the result has the same form (spyre-stickify keeps its
  reduced dims, size 1, and views them away);
* off the stick: the output keeps each reduced label with ``scale_`` -1, at its
  place among the input's labels, and shares the input's entry (``x.sum(0)``
  on [512, 1024]: one OUTPUT entry, ``layoutDimOrder_`` [out, mb], output
  ``scale_`` [-1, 1], keepdim or not); the op func is ``<op>nonstick``.  No
  torch-spyre file of such an op was at hand: checked against its SDSC
  emitter's source (``torch_spyre/_inductor/codegen/superdsc.py``: every
  tensor gets the reduced dims it lacks, -1, or -2 on the op's stick for a
  sparse one; ``nonstick`` exactly when the output has no -2; tensors whose
  labels, stick and stick size agree share one layout entry) and the SDSC
  bundle interface spec (a reduction's input and output have the same stick
  layout);
* a mean's ``scaling_factor`` (1 / the reduced unpadded count) as constant 0,
  the mask value after it: torch-spyre's ``mean_keepdim`` example SDSC (its
  ``extensions/spyre-cli/examples``) and the interface spec's op table;
* our conventions where no torch-spyre form was found: a reduction over
  several dims keeps each reduced label in one op (torch-spyre splits such
  reductions into single-dim ones first); every allocate node's
  ``layoutDimOrder_`` is its ``primaryDsInfo_`` entry's (torch-spyre's current
  emitter writes the tensor's own order there, the reduced labels last, which
  places the extent-1 labels elsewhere but addresses the same bytes); an
  output whose labels do not agree with the input's gets its own entry
  (OUTPUT for the output, KERNEL for the input).
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring_ascii
from typing import Any


from spyre_mlir.analysis.work import core_to_slice
from spyre_mlir.codegen.opspec import ArgSpec, OpSpec
from spyre_mlir.hardware import encode_scalar
from spyre_mlir.opfuncs import OpKind

_DIM_EXTRAS = ("symbolicDimInfo_", "maxSymbolicVolume_", "coreletSplit_", "rowSplit_",
               "peSfpSplit_", "paddingSizes_")


def core_slices(spec: OpSpec) -> list[dict[str, int]]:
    """Per core, the work slice of each label (cores step through the labels in ``slice_order``,
    after the replicas of a replicated op: consecutive cores repeat a slice), keys in
    torch-spyre's order: a matmul's reduction label (the one its result lacks) first, then the
    labels in order."""
    order = [spec.labels.index(label) for label in spec.slice_order]
    slices = core_to_slice((*spec.splits, spec.replicas), order, spec.num_cores)
    keys = spec.labels
    if spec.kind == OpKind.MATMUL.value:
        result = next(arg.layout_labels for arg in spec.args if arg.role == "output")
        keys = (*(label for label in keys if label not in result), *(label for label in keys if label in result))
    return [{label: s[spec.labels.index(label)] for label in keys} for s in slices]


def _fold(factor: int, label: str) -> dict[str, Any]:
    return {"factor_": factor, "label_": label}


def _affine(alpha: int) -> dict[str, Any]:
    return {"Affine": {"alpha_": alpha, "beta_": 0}}


def _dims(name: str, spec: OpSpec, sizes: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {"name_": name}
    out.update({f"{label}_": size for label, size in zip(spec.labels, sizes)})
    if name != "n":
        out.update({key: {} for key in _DIM_EXTRAS})
    return out


def _per_core(spec: OpSpec) -> list[int]:
    return [size // split for size, split in zip(spec.sizes, spec.splits)]


def _coordinates(spec: OpSpec, arg: ArgSpec) -> dict[str, Any]:
    """``coordinates_.coordInfo``: how each label folds over cores and elements."""
    per_core = dict(zip(spec.labels, _per_core(spec)))
    splits = dict(zip(spec.labels, spec.splits))
    info = {}
    for label, scale in zip(arg.layout_labels, arg.scale):
        stick, eps = label == arg.stick_label, arg.stick_size
        # A label the tensor does not advance along (-1, -2) folds as one element of one slice.
        n, split = (per_core[label], splits[label]) if scale == 1 else (1, 1)
        if scale == -2:
            core_alpha = eps
            inner = [(_affine(eps), _fold(1, "elem_arr_1")), (_affine(0), _fold(eps, "elem_arr_0"))]
        elif stick:
            core_alpha = n
            inner = [(_affine(eps), _fold(max(n // eps, 1), "elem_arr_1")), (_affine(1), _fold(eps, "elem_arr_0"))]
        else:
            core_alpha, inner = n, [(_affine(1), _fold(n, "elem_arr_0"))]
        folds = [(_affine(core_alpha), _fold(split, "core_fold")),
                 (_affine(0), _fold(1, "corelet_fold")), (_affine(0), _fold(1, "row_fold")), *inner]
        info[label] = {"spatial": 3, "temporal": 0, "elemArr": 2 if stick else 1, "padding": "nopad",
                       "folds": {"dim_prop_func": [f for f, _ in folds], "dim_prop_attr": [a for _, a in folds]}}
    return info


def _allocate(spec: OpSpec, index: int, arg: ArgSpec) -> dict[str, Any]:
    cores = spec.num_cores
    node: dict[str, Any] = {"nodeType_": "allocate", "name_": f"allocate-{arg.name}_{arg.memory}",
                            "prev_": "", "ldsIdx_": index, "component_": arg.memory}
    if arg.memory == "hbm":
        node["isStartAddrSymbolic_"] = 1
        starts = [str(s) for s in arg.symbols]
    else:
        starts = [str(o) for o in arg.core_offsets]
    node["layoutDimOrder_"] = list(arg.layout_labels)
    role, related = _indirect_role(spec, index)
    gathered = spec.indirect.get("label") if role == "value_tensor" else None
    node["maxDimSizes_"] = [1 if label == gathered else -1 for label in arg.layout_labels]
    node["indirectAllocType_"] = role
    if related is not None:
        node["relatedIndirectAccessAlloc_"] = f"allocate-{related.name}_{related.memory}"
    node["startAddressCoreCorelet_"] = {
        "dim_prop_func": [{"Map": {}}, {"Const": {}}, {"Const": {}}],
        "dim_prop_attr": [_fold(cores, "core"), _fold(1, "corelet"), _fold(1, "time")],
        "data_": {f"[{c}, 0, 0]": starts[c] for c in range(cores)}}
    if arg.back_gap:
        node["backGapCore_"] = {label: {"-1": str(gap)} for label, gap in arg.back_gap.items()}
    node["coordinates_"] = {"coordInfo": _coordinates(spec, arg), "coreIdToWkSlice_": {}}
    return node


def _indirect_role(spec: OpSpec, index: int) -> tuple[str, ArgSpec | None]:
    """``indirectAllocType_`` of argument ``index`` and the argument its allocation is paired with."""
    if not spec.indirect:
        return "no_indirection", None
    if index == spec.indirect["index"]:
        return "index_tensor", spec.args[spec.indirect["table"]]
    if index == spec.indirect["table"]:
        return "value_tensor", spec.args[spec.indirect["index"]]
    return "no_indirection", None


def _labeled_ds(spec: OpSpec, index: int, arg: ArgSpec) -> dict[str, Any]:
    if _indirect_role(spec, index)[0] == "index_tensor":  # the engine reads indices from HBM only
        memory: dict[str, Any] = {"hbm": {"isPresent": 1}}
    elif arg.memory == "hbm":
        memory = {"hbm": {"isPresent": 1}, "lx": {"isPresent": 1}}
    else:
        memory = {"lx": {"isPresent": 1}}
    return {"ldsIdx_": index, "dsName_": arg.name, "dsType_": arg.ds_type, "scale_": list(arg.scale),
            "wordLength": arg.word_length, "dataFormat_": arg.data_format, "memOrg_": memory}


def _constants(spec: OpSpec, data_format: str) -> tuple[dict[str, Any] | str, int]:
    """``constantInfo_`` and the masking constant's id (-1 when none): the op's constants, then the
    masking value (a mean's ``scaling_factor`` comes first, as in torch-spyre)."""
    entries = list(spec.consts.items())
    if spec.mask:
        entries.append(("samv-maskvalue", float(spec.mask["value"])))
    if not entries:
        return "{}", -1
    info = {}
    for i, (name, value) in enumerate(entries):
        info[str(i)] = {"dataFormat_": data_format, "name_": name, "data_": {
            "dim_prop_func": [{"Const": {}}, {"Const": {}}, {"Map": {}}],
            "dim_prop_attr": [_fold(spec.num_cores, "core"), _fold(1, "corelet"), _fold(1, "time")],
            "data_": {"[0, 0, 0]": [encode_scalar(value, data_format)]}}}
    return info, len(spec.consts) if spec.mask else -1


def _primary_ds_info(spec: OpSpec) -> dict[str, Any]:
    info: dict[str, Any] = {}
    for arg in sorted(spec.args, key=lambda a: ("OUTPUT", "KERNEL", "INPUT", "KERNEL_IDX").index(a.ds_type)
                      if spec.kind != "matmul" else ("INPUT", "KERNEL", "OUTPUT").index(a.ds_type)):
        info.setdefault(arg.ds_type, {"layoutDimOrder_": list(arg.layout_labels),
                                      "stickDimOrder_": [arg.stick_label], "stickSize_": [arg.stick_size]})
    return info


def sdsc_json(spec: OpSpec, index: int) -> dict[str, Any]:
    """The SDSC document of ``spec``, the ``index``-th op of its bundle."""
    cores = spec.num_cores
    out_format = spec.args[-1].data_format
    constants, mask_id = _constants(spec, out_format)
    indices = [f"{a.name}-idx{i}" for i, a in enumerate(spec.args) if _indirect_role(spec, i)[0] == "index_tensor"]
    inputs = [f"{a.name}-idx{i}" for i, a in enumerate(spec.args) if a.role == "input"
              and f"{a.name}-idx{i}" not in indices]
    outputs = [f"{a.name}-idx{i}" for i, a in enumerate(spec.args) if a.role == "output"]
    if spec.kind == "reduction":
        inputs += outputs
    masking = {spec.mask["label"]: [[spec.mask["valid"], spec.mask["pad"]]]} if spec.mask else {}
    dsc = {
        "numCoresUsed_": cores,
        "numCoreletsUsed_": 1,
        "coreIdsUsed_": list(range(cores)),
        "N_": _dims("n", spec, list(spec.sizes)),
        "coordinateMasking_": masking,
        "maskingConstId_": mask_id,
        "dataStageParam_": {"0": {"ss_": _dims("core", spec, _per_core(spec)),
                                  "el_": _dims("core", spec, _per_core(spec))}},
        "primaryDsInfo_": _primary_ds_info(spec),
        "scheduleTree_": [_allocate(spec, i, a) for i, a in enumerate(spec.args)],
        "labeledDs_": [_labeled_ds(spec, i, a) for i, a in enumerate(spec.args)],
        "constantInfo_": constants,
        "computeOp_": [{"exUnit": spec.ex_unit, "opFuncName": spec.sdsc_op,
                        "attributes_": {"dataFormat_": out_format, "fidelity_": "regular"},
                        "location": "Inner", "inputLabeledDs": inputs, "outputLabeledDs": outputs,
                        **({"indirectAccessIndexLabeledDs_": indices} if indices else {})}],
    }
    one = _fold(1, "time")
    super_dsc = {
        "sdscFoldProps_": [one],
        "sdscFolds_": {"dim_prop_func": [_affine(1)], "dim_prop_attr": [one], "data_": {"[0]": "0"}},
        "coreFoldProp_": _fold(cores, "core"),
        "coreletFoldProp_": _fold(1, "corelet"),
        "numCoresUsed_": cores,
        "coreIdToDsc_": {str(c): 0 for c in range(cores)},
        "numWkSlicesPerDim_": dict(zip(spec.labels, spec.splits)),
        "coreIdToWkSlice_": {str(c): s for c, s in enumerate(core_slices(spec))},
        "coreIdToDscSchedule": {str(c): [[-1, 0, 0, 0]] for c in range(cores)},
        "dscs_": [{spec.sdsc_op: dsc}],
    }
    return {f"{index}_{spec.sdsc_op}": super_dsc}


def dumps(document: dict[str, Any]) -> str:
    """Deterministic JSON text of an SDSC document: ``json.dumps(document, indent=2)`` and a newline.

    Written here rather than with :mod:`json`, whose indenting encoder is pure
    Python and resumes a generator per nesting level for every token; the text is
    the same.
    """
    out: list[str] = []
    _write_json(document, "\n", out)
    out.append("\n")
    return "".join(out)


def _json_scalar(value: Any) -> str:
    """The JSON text of a string, number, boolean or None, as :func:`json.dumps` writes it."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (math.inf, -math.inf):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _write_json(value: Any, newline: str, out: list[str]) -> None:
    """Append the JSON text of ``value`` to ``out``; ``newline`` is a newline and the current indent.

    Strings and integers, most of an SDSC document, are written in place
    rather than through a call each.
    """
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        sep, comma = "{" + inner, "," + inner
        for key, item in value.items():
            key_text = encode_basestring_ascii(key if isinstance(key, str) else _json_scalar(key))
            kind = type(item)
            if kind is str:
                out.append(f"{sep}{key_text}: {encode_basestring_ascii(item)}")
            elif kind is int:
                out.append(f"{sep}{key_text}: {item!r}")
            else:
                out.append(f"{sep}{key_text}: ")
                _write_json(item, inner, out)
            sep = comma
        out.append(newline + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        sep, comma = "[" + inner, "," + inner
        for item in value:
            kind = type(item)
            if kind is str:
                out.append(sep + encode_basestring_ascii(item))
            elif kind is int:
                out.append(sep + repr(item))
            else:
                out.append(sep)
                _write_json(item, inner, out)
            sep = comma
        out.append(newline + "]")
    else:
        out.append(_json_scalar(value))
