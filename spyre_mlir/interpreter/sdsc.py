# Reading one SDSC JSON file into the records the interpreter executes: the
# iteration space, the core -> work-slice mapping, every labeled tensor with
# its allocate node, and the compute op.  Reads parsed JSON objects; writes
# nothing.  Only the fields the interpreter uses are read, each checked with
# an error that names the file and the JSON path.
"""SDSC JSON -> :class:`SdscSpec`.

The structure follows torch-spyre's emitter (``reference/sdsc/*.json``)::

    {"<n>_<opfunc>": {"numCoresUsed_", "numWkSlicesPerDim_", "coreIdToWkSlice_",
                      "dscs_": [{"<opfunc>": {"N_", "dataStageParam_": {"0": {"ss_"}},
                                              "coordinateMasking_", "primaryDsInfo_",
                                              "scheduleTree_": [allocate nodes],
                                              "labeledDs_", "computeOp_"}}]}}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import FORMAT_BYTES, decode_scalar
from spyre_mlir.limits import stick_problem
from spyre_mlir.opfuncs import OpFunc, OpKind, lookup

SCALE_KEPT, SCALE_REDUCED, SCALE_STICK_REDUCED = 1, -1, -2
"""``scale_`` values: dim kept, reduced (size 1), reduced along the stick (one element per stick)."""

_LDS_REF = re.compile(r"^(?P<name>.+)-idx(?P<idx>\d+)$")


@dataclass(frozen=True)
class TensorSpec:
    """One labeled tensor of an SDSC op and its allocate node."""

    name: str
    """``dsName_`` (``Tensor0``)."""
    component: str
    """``hbm`` or ``lx``."""
    layout_order: tuple[str, ...]
    """``layoutDimOrder_``: the tensor's dim labels, innermost device dim first."""
    stick_label: str
    """The dim laid out along sticks (``stickDimOrder_`` of its ``primaryDsInfo_`` entry)."""
    stick_size: int
    """Elements per stick."""
    word_bytes: int
    """Bytes per element (``wordLength``)."""
    data_format: str
    """``dataFormat_``."""
    scale: Mapping[str, int]
    """``scale_`` per dim label (1 kept, -1 reduced, -2 reduced along the stick)."""
    starts: Mapping[int, int]
    """Start address per core id: an address/LX offset (>= 0) or a symbol id (< 0)."""
    back_gap: Mapping[str, int]
    """``backGapCore_``: extra extent per dim label beyond ``N_`` (a window of a bigger tensor)."""
    core_fold: Mapping[str, tuple[int, int]]
    """``coordinates_``: (factor, alpha) of the ``core_fold`` of each dim label, when present."""
    gathered: str | None = None
    """For a table read through an index (``indirectAllocType_`` ``value_tensor``): the label of
    the dim the index addresses (``maxDimSizes_`` 1, ``scale_`` -1); its rows are ``1 + backGapCore_``."""


@dataclass(frozen=True)
class SdscSpec:
    """Everything the interpreter needs from one SDSC file."""

    filename: str
    op_name: str
    """``opFuncName`` as written (``sumnonstick``)."""
    op: OpFunc
    labels: tuple[str, ...]
    """Iteration dims in ``N_`` order."""
    sizes: Mapping[str, int]
    """``N_``: padded extent of each iteration dim."""
    core_sizes: Mapping[str, int]
    """``ss_``: per-core extent of each iteration dim."""
    splits: Mapping[str, int]
    """``numWkSlicesPerDim_`` (1 for dims it omits)."""
    slices: Mapping[int, Mapping[str, int]]
    """``coreIdToWkSlice_`` for every used core, in ``coreIdsUsed_`` order."""
    tensors: Mapping[str, TensorSpec]
    inputs: tuple[str, ...]
    """Tensor names read by the op (a reduction's own output, listed as its accumulator, excluded)."""
    outputs: tuple[str, ...]
    masking: Mapping[str, tuple[tuple[int, int], ...]]
    """``coordinateMasking_``: (valid, pad) segments along a dim label."""
    constants: Mapping[str, float]
    """``constantInfo_`` by ``name_``: scalar inputs and parameters of the op func
    (``y`` of ``mul``, ``min`` of ``clip``)."""
    index: str | None = None
    """The int32 index of an indirect access (``indirectAccessIndexLabeledDs_``), not in ``inputs``."""
    table: str | None = None
    """The tensor the index addresses (its allocate node's ``value_tensor``): an input it reads, or
    the output a row store writes."""

    @property
    def stores(self) -> bool:
        """True for a row store: the index addresses the output's rows."""
        return self.table is not None and self.table in self.outputs

    @property
    def cores(self) -> tuple[int, ...]:
        """The used core ids."""
        return tuple(self.slices)

    def symbols(self) -> dict[int, tuple[str, int]]:
        """Every symbol id used as a start address -> (tensor, first core using it)."""
        found: dict[int, tuple[str, int]] = {}
        for tensor in self.tensors.values():
            for core, start in tensor.starts.items():
                if start < 0:
                    found.setdefault(start, (tensor.name, core))
        return found


class _Reader:
    """Typed access to JSON fields with errors located at ``file: path``."""

    def __init__(self, filename: str):
        self.filename = filename

    def fail(self, path: str, msg: str) -> SpyreError:
        return SpyreError(f"{path}: {msg}" if path else msg, loc=self.filename)

    def get(self, obj: Any, key: str, kind: type | tuple[type, ...], path: str) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(path, "expected an object")
        if key not in obj:
            raise self.fail(path, f"missing '{key}'")
        value = obj[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(f"{path}.{key}", f"expected {names}, got {type(value).__name__}")
        return value

    def integer(self, value: Any, path: str) -> int:
        """An int given as a JSON number or a decimal string (addresses are strings)."""
        if isinstance(value, bool):
            raise self.fail(path, f"expected an integer, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            return int(value)
        raise self.fail(path, f"expected an integer, got {value!r}")

    def dims(self, obj: Any, path: str, labels: tuple[str, ...]) -> dict[str, int]:
        """A ``{"name_": ..., "<label>_": n}`` record as ``{label: n}`` for ``labels``."""
        out = {}
        for label in labels:
            value = self.get(obj, f"{label}_", int, path)
            if value < 1:
                raise self.fail(f"{path}.{label}_", f"must be at least 1, got {value}")
            out[label] = value
        return out


def parse_sdsc(doc: Any, filename: str) -> SdscSpec:
    """Check and read one parsed SDSC JSON document."""
    r = _Reader(filename)
    if not isinstance(doc, dict) or len(doc) != 1:
        raise r.fail("", "an SDSC file holds exactly one top-level '<n>_<opfunc>' object")
    (key, top), = doc.items()
    dscs = r.get(top, "dscs_", list, key)
    if len(dscs) != 1 or not isinstance(dscs[0], dict) or len(dscs[0]) != 1:
        raise r.fail(f"{key}.dscs_", "expected exactly one DSC object")
    (dsc_name, dsc), = dscs[0].items()
    path = f"{key}.dscs_[0].{dsc_name}"

    # 1. Iteration space: labels in N_ order, per-core sizes, splits.
    n_obj = r.get(dsc, "N_", dict, path)
    labels = tuple(k[:-1] for k in n_obj if k.endswith("_") and k != "name_")
    if not labels:
        raise r.fail(f"{path}.N_", "no iteration dims")
    sizes = r.dims(n_obj, f"{path}.N_", labels)
    stages = r.get(dsc, "dataStageParam_", dict, path)
    stage = r.get(stages, "0", dict, f"{path}.dataStageParam_")
    core_sizes = r.dims(r.get(stage, "ss_", dict, f"{path}.dataStageParam_.0"),
                        f"{path}.dataStageParam_.0.ss_", labels)
    split_obj = r.get(top, "numWkSlicesPerDim_", dict, key)
    for label in split_obj:
        if label not in labels:
            raise r.fail(f"{key}.numWkSlicesPerDim_", f"unknown dim '{label}' (N_ has {', '.join(labels)})")
    splits = {label: r.integer(split_obj.get(label, 1), f"{key}.numWkSlicesPerDim_.{label}") for label in labels}
    for label in labels:
        if splits[label] < 1 or splits[label] * core_sizes[label] != sizes[label]:
            raise r.fail(f"{key}.numWkSlicesPerDim_.{label}",
                         f"{splits[label]} slices of ss_ {core_sizes[label]} do not make N_ {sizes[label]}")

    # 2. Cores and their work slices.
    slices = _core_slices(r, top, dsc, key, path, labels, splits)

    # 3. Tensors: labeledDs_ joined with their allocate nodes and layout infos.
    layouts = r.get(dsc, "primaryDsInfo_", dict, path)
    allocs = {}
    for i, node in enumerate(r.get(dsc, "scheduleTree_", list, path)):
        if r.get(node, "nodeType_", str, f"{path}.scheduleTree_[{i}]") == "allocate":
            allocs[r.get(node, "ldsIdx_", int, f"{path}.scheduleTree_[{i}]")] = (node, f"{path}.scheduleTree_[{i}]")
    tensors: dict[str, TensorSpec] = {}
    by_index: dict[int, str] = {}
    for i, lds in enumerate(r.get(dsc, "labeledDs_", list, path)):
        lpath = f"{path}.labeledDs_[{i}]"
        idx = r.get(lds, "ldsIdx_", int, lpath)
        if idx not in allocs:
            raise r.fail(lpath, f"no allocate node in scheduleTree_ for ldsIdx_ {idx}")
        tensor = _tensor(r, lds, lpath, *allocs[idx], layouts, f"{path}.primaryDsInfo_", labels, slices)
        if tensor.name in tensors:
            raise r.fail(lpath, f"duplicate dsName_ '{tensor.name}'")
        tensors[tensor.name] = tensor
        by_index[idx] = tensor.name

    # 4. The compute op.
    ops = r.get(dsc, "computeOp_", list, path)
    if len(ops) != 1:
        raise r.fail(f"{path}.computeOp_", f"expected exactly one compute op, got {len(ops)}")
    cpath = f"{path}.computeOp_[0]"
    op_name = r.get(ops[0], "opFuncName", str, cpath)
    op = _op_func(r, op_name, cpath)

    def refs(field: str) -> tuple[str, ...]:
        out = []
        for j, ref in enumerate(r.get(ops[0], field, list, cpath)):
            m = _LDS_REF.match(ref) if isinstance(ref, str) else None
            if m is None or by_index.get(int(m["idx"])) != m["name"]:
                raise r.fail(f"{cpath}.{field}[{j}]", f"'{ref}' names no labeled tensor")
            out.append(m["name"])
        return tuple(out)

    outputs = refs("outputLabeledDs")
    inputs = tuple(name for name in refs("inputLabeledDs") if name not in outputs)
    if len(outputs) != 1:
        raise r.fail(f"{cpath}.outputLabeledDs", f"expected one output tensor, got {len(outputs)}")
    _check_repeated_slices(r, key, slices, tensors[outputs[0]])
    index_name, table_name = None, None
    if _INDICES in ops[0]:
        index_name, table_name = _indirect(r, refs(_INDICES), inputs, outputs, tensors, op, f"{cpath}.{_INDICES}")
    if op.kind is OpKind.REDUCTION:
        index = next(i for i, name in by_index.items() if name == outputs[0])
        _check_reduction(r, op_name, [tensors[name] for name in inputs], tensors[outputs[0]], labels,
                         f"{path}.labeledDs_[{index}].scale_")
    masking = _masking(r, r.get(dsc, "coordinateMasking_", dict, path), f"{path}.coordinateMasking_", sizes)
    constants = _constants(r, dsc.get("constantInfo_", "{}"), f"{path}.constantInfo_")
    return SdscSpec(filename, op_name, op, labels, sizes, core_sizes, splits, slices, tensors,
                    inputs, outputs, masking, constants, index_name, table_name)


_INDICES = "indirectAccessIndexLabeledDs_"


def _indirect(r: _Reader, indices: tuple[str, ...], inputs: tuple[str, ...], outputs: tuple[str, ...],
              tensors: Mapping[str, TensorSpec], op: OpFunc, path: str) -> tuple[str, str]:
    """The index and the table of an indirect access: one int32 index, one table that has a
    gathered dim (``maxDimSizes_`` 1) off its stick (the one input of a gather, or the output of a
    row store, whose one input is the rows), and the op func ``identity``."""
    if len(indices) != 1 or indices[0] in inputs:
        raise r.fail(path, f"expected one index tensor that is not an input, got {list(indices)}")
    if op.name != "identity":
        raise r.fail(path, f"an indirect access is an 'identity', not '{op.name}'")
    index = tensors[indices[0]]
    if index.data_format != "IEEE_INT32":
        raise r.fail(path, f"index tensor {index.name} has data format {index.data_format}, expected IEEE_INT32")
    tables = [name for name in (*inputs, *outputs) if tensors[name].gathered is not None]
    if len(tables) != 1 or len(inputs) != 1:
        raise r.fail(path, f"expected one input and one value table with a gathered dim (the input of a gather, "
                     f"the output of a row store), got inputs {list(inputs)} and outputs {list(outputs)}")
    for name in (index.name, tables[0]):
        if tensors[name].component != "hbm":
            raise r.fail(path, f"{name} of an indirect access lives in {tensors[name].component}; the engine "
                         "addresses index and table in HBM")
    return index.name, tables[0]


def _check_reduction(r: _Reader, op_name: str, inputs: list[TensorSpec], out: TensorSpec,
                     labels: tuple[str, ...], spath: str) -> None:
    """A reduction in torch-spyre's form: its output has every iteration dim, each reduced one with
    ``scale_`` -1, or -2 on the stick (a sparse output), is sticked like its input, and the op func
    is the ``nonstick`` one exactly when no dim has -2."""
    missing = [label for label in labels if label not in out.scale]
    if missing:
        raise r.fail(spath, f"reduction output {out.name} has no dim '{missing[0]}'; a reduced dim stays "
                     "with scale_ -1 (-2 on the stick)")
    if all(s == SCALE_KEPT for s in out.scale.values()):
        raise r.fail(spath, f"reduction output {out.name} reduces no dim (no scale_ -1 or -2)")
    if len(inputs) == 1 and inputs[0].stick_label != out.stick_label:
        raise r.fail(spath, f"reduction output {out.name} is sticked on '{out.stick_label}', its input "
                     f"{inputs[0].name} on '{inputs[0].stick_label}'")
    sparse, base = SCALE_STICK_REDUCED in out.scale.values(), op_name.removesuffix("nonstick")
    if (base != op_name) == sparse:
        raise r.fail(spath, f"op func '{op_name}' with {'a' if sparse else 'no'} scale_ -2 on output "
                     f"{out.name}: a reduction over the stick is '{base}', another '{base}nonstick'")


def _core_slices(r: _Reader, top: dict, dsc: dict, key: str, path: str, labels: tuple[str, ...],
                 splits: Mapping[str, int]) -> dict[int, dict[str, int]]:
    used = r.get(dsc, "coreIdsUsed_", list, path)
    count = r.get(top, "numCoresUsed_", int, key)
    if len(used) != count or len(set(used)) != count:
        raise r.fail(f"{path}.coreIdsUsed_", f"expected {count} distinct core ids (numCoresUsed_), got {used}")
    table = r.get(top, "coreIdToWkSlice_", dict, key)
    slices: dict[int, dict[str, int]] = {}
    for core in used:
        cpath = f"{key}.coreIdToWkSlice_.{core}"
        entry = r.get(table, str(core), dict, f"{key}.coreIdToWkSlice_")
        sl = {label: r.integer(entry.get(label, 0), f"{cpath}.{label}") for label in labels}
        for label, index in sl.items():
            if not 0 <= index < splits[label]:
                raise r.fail(f"{cpath}.{label}", f"slice {index} outside 0..{splits[label] - 1}")
        slices[core] = sl
    return slices


def _check_repeated_slices(r: _Reader, key: str, slices: Mapping[int, Mapping[str, int]], output: TensorSpec) -> None:
    """Cores may share a work slice only when each writes its result to its own LX (a replicated
    op); two cores writing one slice of an HBM tensor is an error."""
    seen: dict[tuple[int, ...], int] = {}
    for core, sl in slices.items():
        point = tuple(sl.values())
        if point in seen and output.component != "lx":
            raise r.fail(f"{key}.coreIdToWkSlice_.{core}", f"cores {seen[point]} and {core} have the same work "
                         f"slice {dict(sl)}, and its output {output.name} is in HBM")
        seen.setdefault(point, core)


def _tensor(r: _Reader, lds: dict, lpath: str, node: dict, npath: str, layouts: dict, ipath: str,
            labels: tuple[str, ...], slices: Mapping[int, Mapping[str, int]]) -> TensorSpec:
    name = r.get(lds, "dsName_", str, lpath)
    fmt = r.get(lds, "dataFormat_", str, lpath)
    if fmt not in FORMAT_BYTES:
        raise r.fail(f"{lpath}.dataFormat_", f"unsupported data format '{fmt}'")
    word = r.get(lds, "wordLength", int, lpath)
    if word != FORMAT_BYTES[fmt]:
        raise r.fail(f"{lpath}.wordLength", f"{word} does not match {fmt} ({FORMAT_BYTES[fmt]} bytes)")
    ds_type = r.get(lds, "dsType_", str, lpath)
    info = r.get(layouts, ds_type, dict, ipath)
    order = tuple(r.get(node, "layoutDimOrder_", list, npath))
    if order != tuple(r.get(info, "layoutDimOrder_", list, f"{ipath}.{ds_type}")):
        raise r.fail(f"{npath}.layoutDimOrder_", f"{list(order)} differs from primaryDsInfo_.{ds_type} "
                     f"{info['layoutDimOrder_']} of {name}")
    if len(set(order)) != len(order) or any(label not in labels for label in order):
        raise r.fail(f"{npath}.layoutDimOrder_", f"{list(order)} is not a set of iteration dims {list(labels)}")
    stick_dims = r.get(info, "stickDimOrder_", list, f"{ipath}.{ds_type}")
    stick_sizes = r.get(info, "stickSize_", list, f"{ipath}.{ds_type}")
    if len(stick_dims) != 1 or len(stick_sizes) != 1 or stick_dims[0] not in order:
        raise r.fail(f"{ipath}.{ds_type}", f"expected one stick dim among {list(order)}, got {stick_dims}")
    stick = r.integer(stick_sizes[0], f"{ipath}.{ds_type}.stickSize_[0]")
    if (problem := stick_problem(stick, word)) is not None:
        raise r.fail(f"{ipath}.{ds_type}.stickSize_", problem)
    scale_list = r.get(lds, "scale_", list, lpath)
    if len(scale_list) != len(order):
        raise r.fail(f"{lpath}.scale_", f"{len(scale_list)} entries for {len(order)} dims {list(order)}")
    scale = {}
    for label, s in zip(order, scale_list):
        if s not in (SCALE_KEPT, SCALE_REDUCED, SCALE_STICK_REDUCED):
            raise r.fail(f"{lpath}.scale_", f"unsupported scale {s!r} for dim '{label}'")
        if s == SCALE_STICK_REDUCED and label != stick_dims[0]:
            raise r.fail(f"{lpath}.scale_", f"scale -2 on '{label}', which is not the stick dim")
        scale[label] = s
    component = r.get(node, "component_", str, npath)
    if component not in ("hbm", "lx"):
        raise r.fail(f"{npath}.component_", f"unknown component '{component}'")
    return TensorSpec(name, component, order, stick_dims[0], stick, word, fmt, scale,
                      _starts(r, node, npath, slices), _back_gap(r, node, npath, order),
                      _core_folds(r, node, npath, order), _gathered(r, node, npath, order, scale, stick_dims[0]))


def _gathered(r: _Reader, node: dict, npath: str, order: tuple[str, ...], scale: Mapping[str, int],
              stick: str) -> str | None:
    """The gathered label of a ``value_tensor`` allocation (``maxDimSizes_`` 1), None for any other."""
    if node.get("indirectAllocType_", "no_indirection") != "value_tensor":
        return None
    sizes = r.get(node, "maxDimSizes_", list, npath)
    found = [label for label, size in zip(order, sizes) if size == 1]
    if len(sizes) != len(order) or len(found) != 1:
        raise r.fail(f"{npath}.maxDimSizes_", f"a value tensor needs one gathered dim (1) among {list(order)}, "
                     f"got {sizes}")
    if found[0] == stick or scale[found[0]] != SCALE_REDUCED:
        raise r.fail(f"{npath}.maxDimSizes_", f"the gathered dim '{found[0]}' must be off the stick with scale_ -1")
    return found[0]


def _starts(r: _Reader, node: dict, npath: str, slices: Mapping[int, Mapping[str, int]]) -> dict[int, int]:
    spath = f"{npath}.startAddressCoreCorelet_"
    fold = r.get(node, "startAddressCoreCorelet_", dict, npath)
    attrs = r.get(fold, "dim_prop_attr", list, spath)
    funcs = r.get(fold, "dim_prop_func", list, spath)
    data = r.get(fold, "data_", dict, spath)
    if len(attrs) != len(funcs) or not attrs:
        raise r.fail(spath, "dim_prop_func and dim_prop_attr must have the same, non-zero length")
    kinds = [next(iter(f), None) if isinstance(f, dict) else None for f in funcs]
    labels_ = [a.get("label_") if isinstance(a, dict) else None for a in attrs]
    if labels_[0] != "core" or kinds[0] != "Map":
        raise r.fail(spath, "expected the first fold dim to be a 'core' Map")
    for label, kind, attr in zip(labels_[1:], kinds[1:], attrs[1:]):
        if kind != "Const" and attr.get("factor_") != 1:
            raise r.fail(spath, f"fold dim '{label}' ({kind}) with factor {attr.get('factor_')} is not supported")
    starts = {}
    for core in slices:
        k = "[" + ", ".join([str(core)] + ["0"] * (len(attrs) - 1)) + "]"
        if k not in data:
            raise r.fail(f"{spath}.data_", f"no start address for core {core} (key '{k}')")
        starts[core] = r.integer(data[k], f"{spath}.data_.{k}")
    return starts


def _back_gap(r: _Reader, node: dict, npath: str, order: tuple[str, ...]) -> dict[str, int]:
    gaps = node.get("backGapCore_", {})
    if not isinstance(gaps, dict):
        raise r.fail(f"{npath}.backGapCore_", "expected an object")
    out = {}
    for label, per_core in gaps.items():
        gpath = f"{npath}.backGapCore_.{label}"
        if label not in order:
            raise r.fail(gpath, f"'{label}' is not a dim of this tensor ({list(order)})")
        if not isinstance(per_core, dict) or set(per_core) != {"-1"}:
            raise r.fail(gpath, "expected {\"-1\": gap} (one gap for all cores)")
        out[label] = r.integer(per_core["-1"], f"{gpath}.-1")
        if out[label] < 0:
            raise r.fail(gpath, f"negative gap {out[label]}")
    return out


def _core_folds(r: _Reader, node: dict, npath: str, order: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    info = node.get("coordinates_", {}).get("coordInfo", {}) if isinstance(node.get("coordinates_"), dict) else {}
    out = {}
    for label, coord in info.items() if isinstance(info, dict) else ():
        folds = coord.get("folds") if isinstance(coord, dict) else None
        if not isinstance(folds, dict):
            continue
        for func, attr in zip(folds.get("dim_prop_func") or [], folds.get("dim_prop_attr") or []):
            if isinstance(attr, dict) and attr.get("label_") == "core_fold":
                affine = func.get("Affine") if isinstance(func, dict) else None
                alpha = affine.get("alpha_") if isinstance(affine, dict) else None
                factor = attr.get("factor_")
                if not isinstance(alpha, int) or not isinstance(factor, int):
                    raise r.fail(f"{npath}.coordinates_.coordInfo.{label}", "malformed core_fold")
                out[label] = (factor, alpha)
    return out


MASK_VALUE = "samv-maskvalue"
"""The ``constantInfo_`` name of the value a reduction reads at masked (padded) coordinates."""


def _constants(r: _Reader, info: Any, path: str) -> dict[str, float]:
    """``constantInfo_`` (an object of entries, or the string ``"{}"``) by ``name_``.

    The masking value (``samv-maskvalue``) is read like the others, except where a
    torch-spyre file holds a placeholder string there: masking then uses the op func's
    identity."""
    if info == "{}":
        return {}
    if not isinstance(info, dict):
        raise r.fail(path, "expected an object or the string \"{}\"")
    out = {}
    for key, entry in info.items():
        epath = f"{path}.{key}"
        name = r.get(entry, "name_", str, epath)
        fmt = r.get(entry, "dataFormat_", str, epath)
        if fmt not in FORMAT_BYTES:
            raise r.fail(f"{epath}.dataFormat_", f"unsupported data format '{fmt}'")
        values = r.get(r.get(entry, "data_", dict, epath), "data_", dict, f"{epath}.data_")
        bits = values.get("[0, 0, 0]")
        if name == MASK_VALUE and isinstance(bits, list) and bits and isinstance(bits[0], str):
            continue
        if not isinstance(bits, list) or len(bits) != 1 or not isinstance(bits[0], int):
            raise r.fail(f"{epath}.data_.data_", "expected {\"[0, 0, 0]\": [bits]} (one value for all cores)")
        out[name] = decode_scalar(bits[0], fmt)
    return out


def _op_func(r: _Reader, name: str, path: str) -> OpFunc:
    op = lookup(name)
    if op is None and name.endswith("nonstick"):
        op = lookup(name[: -len("nonstick")])
        if op is not None and op.kind is not OpKind.REDUCTION:
            op = None
    if op is None:
        raise r.fail(f"{path}.opFuncName", f"unknown op func '{name}'")
    return op


def _masking(r: _Reader, obj: dict, path: str, sizes: Mapping[str, int]) -> dict[str, tuple[tuple[int, int], ...]]:
    out = {}
    for label, segments in obj.items():
        mpath = f"{path}.{label}"
        if label not in sizes:
            raise r.fail(mpath, f"unknown dim '{label}'")
        if not isinstance(segments, list) or not all(
                isinstance(s, list) and len(s) == 2 and all(isinstance(v, int) and v >= 0 for v in s)
                for s in segments):
            raise r.fail(mpath, "expected a list of [valid, pad] pairs")
        total = sum(v + p for v, p in segments)
        if total != sizes[label]:
            raise r.fail(mpath, f"segments cover {total} elements, N_ of '{label}' is {sizes[label]}")
        out[label] = tuple((v, p) for v, p in segments)
    return out
