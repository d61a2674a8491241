"""Helpers for the interpreter tests: output directories built around torch-spyre's reference files.

The per-core offsets of the single-op bundles are derived here from the host
layout (``spyre_mlir.layout``) and the JSON's work slices, independently of
the interpreter's own address computation.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

from spyre_mlir.layout import stick_layout
from spyre_mlir.manifest import Manifest, tensor_arg

from reference_files import BUNDLE_REF

SEED_SHAPE = [1024, 4096]


def reference_bundle_dir(tmp: Path) -> Path:
    """A copy of the reference bundle with a manifest: args a, b, c (inputs), z (output)."""
    out = tmp / "ref_bundle"
    out.mkdir()
    for name in ("bundle.mlir", "sdsc_0.json", "sdsc_1.json"):
        shutil.copyfile(BUNDLE_REF / name, out / name)
    layout = stick_layout(SEED_SHAPE, "float16")
    args = tuple(tensor_arg(i, "output" if n == "z" else "input", n, SEED_SHAPE, "float16", layout.device_size,
                            [0, 1], "SEN169_FP16", layout.nbytes) for i, n in enumerate("abcz"))
    (out / "manifest.json").write_text(Manifest(args, ("sdsc_0.json", "sdsc_1.json"), 32).to_json())
    return out


@dataclass(frozen=True)
class HostTensor:
    """A kernel argument of a single-op bundle: the host tensor behind one labeled tensor."""

    name: str
    role: str
    shape: tuple[int, ...]
    labels: tuple[str, ...]
    """The SDSC dim label of each host dim."""


def per_core_offsets(doc: dict, tensor_index: int, host: HostTensor) -> dict[int, int]:
    """Byte offset of each core's slice of ``host``: sum of slice x per-core extent x device stride."""
    (top,) = doc.values()
    (dsc,) = top["dscs_"][0].values()
    core_sizes = dsc["dataStageParam_"]["0"]["ss_"]
    scale = dict(zip(dsc["scheduleTree_"][tensor_index]["layoutDimOrder_"], dsc["labeledDs_"][tensor_index]["scale_"]))
    layout = stick_layout(host.shape, "float16")
    device_dims, sizes = layout.device_dims, layout.device_size
    stride = [128 * math.prod(sizes[j + 1:-1]) for j in range(len(sizes) - 1)]
    offsets = {}
    for core, wk in top["coreIdToWkSlice_"].items():
        total = 0
        for dim, label in enumerate(host.labels):
            if scale.get(label, 1) != 1:
                continue
            j = device_dims.index(dim)
            units = core_sizes[f"{label}_"] // (64 if dim == layout.stick_dim else 1)
            total += wk[label] * units * stride[j]
        offsets[int(core)] = total
    return offsets


def single_op_dir(tmp: Path, json_path: Path, tensors: list[HostTensor]) -> Path:
    """An output directory running one reference SDSC file once: one argument per labeled tensor."""
    out = tmp / json_path.stem
    out.mkdir()
    doc = json.loads(json_path.read_text())
    shutil.copyfile(json_path, out / "op.json")
    (top,) = doc.values()
    (dsc,) = top["dscs_"][0].values()
    lines = []
    bound: dict[int, tuple[int, int, str]] = {}  # symbol -> (tensor, offset, SSA value)
    for i, host in enumerate(tensors):
        lines.append(f"%t{i} = sdscbundle.input_arg_extract value from %arg{i} "
                     ": !sdscbundle.input_arg<index> -> index")
        starts = dsc["scheduleTree_"][i]["startAddressCoreCorelet_"]["data_"]
        for core, offset in per_core_offsets(doc, i, host).items():
            symbol = int(starts[f"[{core}, 0, 0]"])
            if symbol in bound:
                assert bound[symbol][:2] == (i, offset), f"symbol {symbol} stands for two addresses"
                continue
            bound[symbol] = (i, offset, f"%addr{i}_{core}")
            lines.append(f"%off{i}_{core} = arith.constant {offset} : index")
            lines.append(f"%addr{i}_{core} = arith.addi %t{i}, %off{i}_{core} : index")
    operands = ", ".join(value for _, _, value in bound.values())
    ids = ", ".join(str(s) for s in bound)
    lines.append(f'sdscbundle.sdsc_execute ({operands}) {{sdsc_filename="op.json", "symbol_ids"=[{ids}]}}')
    params = ", ".join(f"%arg{i}: !sdscbundle.input_arg<index>" for i in range(len(tensors)))
    body = "\n".join(f"\t\t{line}" for line in lines)
    (out / "bundle.mlir").write_text(f"module {{\n\tfunc.func @sdsc_bundle({params}) {{\n{body}\n"
                                     "\t\treturn\n\t}\n}\n")
    args = []
    for i, host in enumerate(tensors):
        layout = stick_layout(host.shape, "float16")
        args.append(tensor_arg(i, host.role, host.name, host.shape, "float16", layout.device_size,
                               list(range(len(host.shape))), "SEN169_FP16", layout.nbytes))
    (out / "manifest.json").write_text(Manifest(tuple(args), ("op.json",), top["numCoresUsed_"]).to_json())
    return out


def edit_json(path: Path, edit) -> None:
    """Apply ``edit(dsc, top)`` to the single DSC of the SDSC file at ``path``."""
    doc = json.loads(path.read_text())
    (top,) = doc.values()
    (dsc,) = top["dscs_"][0].values()
    edit(dsc, top)
    path.write_text(json.dumps(doc))
