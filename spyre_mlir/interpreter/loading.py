# Loading a compiled output directory for the interpreter: manifest.json, the
# bundle function of bundle.mlir (parsed with our dialects, compiled to
# closures), every SDSC file it runs (checked, then prepared as a kernel) and
# the values of its stored constants, each confined to the directory, and the
# compiler's prediction (cost.json) when there is one.  Reads DIR/*; writes nothing.  Uses no compiler pass, importer or codegen object.
"""A compiled output directory, loaded and checked."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from spyre_mlir.diagnostics import SpyreError, op_location
from spyre_mlir.dialects.sdscbundle import InputArgType, SdscExecuteOp
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.interpreter.control import BundleProgram, compile_bundle
from spyre_mlir.interpreter.device import Device
from spyre_mlir.interpreter.execute import SdscKernel
from spyre_mlir.interpreter.schema import SchemaValidator
from spyre_mlir.interpreter.sdsc import SdscSpec, parse_sdsc
from spyre_mlir.limits import core_problem, hbm_problem
from spyre_mlir.manifest import KernelArg, Manifest, constant_values, read_manifest
from spyre_mlir.mlir_text import make_context, parse_module


@dataclass(frozen=True)
class OutputDir:
    """The files of one output directory, parsed and prepared for execution."""

    path: Path
    manifest: Manifest
    module: ModuleOp
    function: func.FuncOp
    program: BundleProgram
    """``function`` compiled for tracing."""
    specs: dict[str, SdscSpec]
    """Every SDSC file an ``sdsc_execute`` names, by ``sdsc_filename``."""
    config: SpyreConfig
    """The device the directory was compiled for."""
    kernels: dict[str, SdscKernel]
    """``specs`` prepared for execution on ``config``."""
    constants: dict[str, np.ndarray]
    """The host values of every constant with ``data``, by argument name."""
    predicted: dict[str, dict[str, float]] | None = None
    """The compiler's prediction per SDSC file (``cost.json``), by statistic name; None without one."""
    devices: list[Device] = field(default_factory=list, compare=False)
    """Devices of finished runs, for later runs to reset and reuse."""


def load_output_dir(directory: str | Path, schema: SchemaValidator | None = None) -> OutputDir:
    """Load and check ``directory``; every problem is a :class:`SpyreError` naming the file."""
    root = Path(directory)
    if not root.is_dir():
        raise SpyreError(f"no such output directory '{directory}'")
    manifest = read_manifest(root)
    bundle_path = _confined(root, manifest.bundle, "manifest.json 'bundle'", str(root / "manifest.json"))
    try:
        text = bundle_path.read_text()
    except OSError as e:
        raise SpyreError(f"cannot read the bundle: {e.strerror}", loc=str(bundle_path)) from None
    module = parse_module(make_context(), text, str(bundle_path))
    function = _bundle_function(module, manifest, str(bundle_path))
    specs: dict[str, SdscSpec] = {}
    for op in function.walk():
        if isinstance(op, SdscExecuteOp) and op.sdsc_filename.data not in specs:
            name = op.sdsc_filename.data
            where = op_location(op) or str(bundle_path)
            path = _confined(root, name, "sdsc_filename", where)
            if name not in manifest.sdsc_files:
                raise SpyreError(f"sdsc_filename \"{name}\" is not listed in manifest.json 'sdsc_files'", loc=where)
            specs[name] = _load_sdsc(path, name, schema)
    config = SpyreConfig(cores=manifest.cores, backend_lx_fraction=manifest.backend_lx_fraction)
    _check_limits(manifest, specs, config, str(root / "manifest.json"))
    kernels = {name: SdscKernel(spec) for name, spec in specs.items()}
    constants = {arg.name: read_constant_data(root, arg) for arg in manifest.constants if arg.data is not None}
    return OutputDir(root, manifest, module, function, compile_bundle(function), specs, config, kernels,
                     constants, _read_prediction(root, manifest))


def _check_limits(manifest: Manifest, specs: dict[str, SdscSpec], config: SpyreConfig, where: str) -> None:
    """The limits a directory must meet before it runs (:mod:`spyre_mlir.limits`): its arguments
    within the device memory, every core an SDSC file uses among the target's."""
    if (problem := hbm_problem(sum(arg.nbytes for arg in manifest.args))) is not None:
        raise SpyreError(problem, loc=where)
    for name, spec in specs.items():
        for core in spec.cores:
            if (problem := core_problem(core, config.cores)) is not None:
                raise SpyreError(f"coreIdsUsed_: {problem}", loc=name)


def _read_prediction(root: Path, manifest: Manifest) -> dict[str, dict[str, float]] | None:
    """The compiler's prediction per SDSC file (``cost.json``), None for a directory without one."""
    path = root / "cost.json"
    if not path.exists():
        return None
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SpyreError(f"cannot read the prediction: {e}", loc=str(path)) from None
    files = document.get("sdsc_files") if isinstance(document, dict) else None
    if not isinstance(files, dict) or set(files) != set(manifest.sdsc_files) or not all(
            isinstance(figures, dict) and all(isinstance(v, int | float) for v in figures.values())
            for figures in files.values()):
        raise SpyreError("'sdsc_files' must give numbers for every SDSC file of the manifest", loc=str(path))
    return files


def read_constant_data(directory: str | Path, arg: KernelArg) -> np.ndarray:
    """The host values of constant ``arg`` from its ``data`` file, confined to ``directory``."""
    assert arg.data is not None
    root = Path(directory)
    path = _confined(root, arg.data, f"argument '{arg.name}' data", str(root / "manifest.json"))
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise SpyreError(f"cannot read the constant's data: {e.strerror}", loc=str(path)) from None
    return constant_values(raw, arg, str(path))


def _confined(root: Path, name: str, what: str, where: str) -> Path:
    """``root/name`` (as ``root`` was given, for locations), refusing names that resolve outside ``root``."""
    if not (root / name).resolve().is_relative_to(root.resolve()):
        raise SpyreError(f"{what} \"{name}\" resolves outside the output directory", loc=where)
    return root / name


def _bundle_function(module: ModuleOp, manifest: Manifest, where: str) -> func.FuncOp:
    found = [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == manifest.function]
    if not found:
        raise SpyreError(f"no function @{manifest.function} (manifest.json 'function')", loc=where)
    function = found[0]
    inputs = function.function_type.inputs.data
    if len(inputs) != len(manifest.args):
        raise SpyreError(f"@{manifest.function} takes {len(inputs)} arguments, manifest.json describes "
                         f"{len(manifest.args)}", loc=op_location(function) or where)
    for i, t in enumerate(inputs):
        if not isinstance(t, InputArgType):
            raise SpyreError(f"argument {i} of @{manifest.function} has type {t}, expected "
                             "!sdscbundle.input_arg<index>", loc=op_location(function) or where)
    return function


def _load_sdsc(path: Path, name: str, schema: SchemaValidator | None) -> SdscSpec:
    try:
        text = path.read_text()
    except OSError as e:
        raise SpyreError(f"cannot read the SDSC file: {e.strerror}", loc=name) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpyreError(f"malformed JSON at line {e.lineno} column {e.colno}: {e.msg}", loc=name) from None
    if schema is not None:
        schema.validate(doc, name)
    return parse_sdsc(doc, name)
