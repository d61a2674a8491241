# The writer (DESIGN §4 stage 8): the lowered bundle module -> an output
# directory of DIR/bundle.mlir, DIR/sdsc_<n>.json, DIR/manifest.json, one
# DIR/<name>.bin per constant the import computed (its values) and
# DIR/cost.json (the cost model's prediction the lowering recorded), written
# atomically (a staging directory beside DIR, then a rename; the staging
# directories of killed writers are swept by the next write beside them).  Reads the
# @sdsc_bundle function (its sdsc_execute OpSpecs and kernel-argument
# attributes) and the module's `#spyre.target` (cores, LX fraction); writes
# files.  The only stage that touches the file system.
"""Writing a compiled output directory.

:func:`bundle_files` renders every file in memory (deterministic bytes);
:func:`write_output` puts them in place: an existing non-empty directory is an
error unless ``force``; a failure leaves DIR as it was.  :func:`bundle_summary`
says what the directory holds, in figures.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    f32,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from spyre_mlir.analysis.cost import PREDICTED_ATTR
from spyre_mlir.codegen.bundle_text import bundle_func, print_bundle
from spyre_mlir.codegen.opspec import OP_SPEC_ATTR, OpSpec
from spyre_mlir.codegen.sdsc import dumps, sdsc_json
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.sdscbundle import SdscExecuteOp
from spyre_mlir.dialects.spyre import target_config
from spyre_mlir.gc_tuning import fewer_collections
from spyre_mlir.manifest import KernelArg, Manifest, constant_data, tensor_arg


def _data_name(attr: DictionaryAttr) -> str | None:
    """The file holding a constant argument's values (``<name>.bin``), None when it has none."""
    name = attr.data["name"]
    assert isinstance(name, StringAttr)
    return f"{name.data}.bin" if isinstance(attr.data.get("value"), DenseIntOrFPElementsAttr) else None


def _data_bytes(attr: DictionaryAttr) -> bytes:
    """The bytes of that file: the host values in the argument's dtype."""
    value, dtype = attr.data["value"], attr.data["dtype"]
    assert isinstance(value, DenseIntOrFPElementsAttr) and isinstance(dtype, StringAttr)
    host = np.frombuffer(value.data.data, np.float32 if value.get_element_type() == f32 else np.int32)
    return constant_data(host, dtype.data)


def _kernel_arg(attr: DictionaryAttr) -> KernelArg:
    d = attr.data

    def value(key: str):
        a = d[key]
        if isinstance(a, IntegerAttr):
            return a.value.data
        if isinstance(a, StringAttr):
            return a.data
        if isinstance(a, FloatAttr):
            return float(a.value.data)
        assert isinstance(a, ArrayAttr)
        return [x.value.data for x in a.data]

    if value("role") == "pool":
        return KernelArg(value("index"), "pool", value("name"), value("nbytes"))
    return tensor_arg(value("index"), value("role"), value("name"), value("shape"), value("dtype"),
                      value("device_size"), value("dim_order"), value("data_format"), value("nbytes"),
                      value("fill") if "fill" in d else None,
                      value("padded_shape") if "padded_shape" in d else None,
                      _data_name(attr), "written" in d, value("range") if "range" in d else None,
                      value("host_dtype") if "host_dtype" in d else None)


def _number(attr: Attribute) -> int | float:
    return attr.value.data if isinstance(attr, IntegerAttr) else float(attr.value.data)


def _predicted_per_file(bundle: FuncOp) -> dict[str, dict[str, int | float]]:
    """The cost model's figures of every SDSC file that carries them, by file name."""
    return {op.sdsc_filename.data: {k: _number(v) for k, v in op.attributes[PREDICTED_ATTR].data.items()}
            for op in bundle.walk() if isinstance(op, SdscExecuteOp) and PREDICTED_ATTR in op.attributes}


def _prediction(bundle: FuncOp) -> str | None:
    """``cost.json``: the cost model's figures per SDSC file and the program's lower bound, None
    for a bundle that carries no prediction."""
    per_file = _predicted_per_file(bundle)
    total = bundle.attributes.get(PREDICTED_ATTR)
    if not per_file or not isinstance(total, DictionaryAttr):
        return None
    document = {"sdsc_files": per_file, **{k: _number(v) for k, v in total.data.items()}}
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True)
class BundleSummary:
    """An output directory in three figures (what ``spyre-compile`` says when it is done)."""

    sdsc_files: int
    cores: int
    """The cores of the module's ``#spyre.target``."""
    predicted_us: float | None
    """The cost model's predicted time of the whole bundle (its SDSC files' ``predicted_us``, one
    execution after another); None for a bundle without a prediction."""


def bundle_summary(module: ModuleOp) -> BundleSummary:
    """The :class:`BundleSummary` of a lowered module."""
    bundle = bundle_func(module)
    names = {op.sdsc_filename.data for op in bundle.walk() if isinstance(op, SdscExecuteOp)}
    per_file = _predicted_per_file(bundle)
    predicted = sum(float(figures["predicted_us"]) for figures in per_file.values()) \
        if names and set(per_file) == names else None
    return BundleSummary(len(names), target_config(module).cores, predicted)


def bundle_files(module: ModuleOp) -> dict[str, str | bytes]:
    """File name -> text (or bytes, for constants' values) of every file of the output directory.

    The manifest records the module's ``#spyre.target``: its cores and the LX
    share memory planning left to the back end (``backend_lx_fraction``).
    """
    bundle = bundle_func(module)
    files: dict[str, str | bytes] = {}
    names = []
    for op in bundle.walk():
        if not isinstance(op, SdscExecuteOp):
            continue
        if OP_SPEC_ATTR not in op.attributes:
            raise SpyreError("sdscbundle.sdsc_execute has no op_spec to write", op=op)
        name = op.sdsc_filename.data
        index = int(name.removeprefix("sdsc_").removesuffix(".json"))
        files[name] = dumps(sdsc_json(OpSpec.from_attr(op.attributes[OP_SPEC_ATTR]), index))
        names.append(name)
    kernel_args = bundle.attributes.get("spyre.kernel_args")
    if not isinstance(kernel_args, ArrayAttr):
        raise SpyreError("@sdsc_bundle lacks spyre.kernel_args", op=bundle)
    for attr in kernel_args.data:
        if (name := _data_name(attr)) is not None:
            files[name] = _data_bytes(attr)
    if (prediction := _prediction(bundle)) is not None:
        files["cost.json"] = prediction
    target = target_config(module)
    manifest = Manifest(args=tuple(_kernel_arg(a) for a in kernel_args.data), sdsc_files=tuple(names),
                        cores=target.cores, backend_lx_fraction=target.backend_lx_fraction)
    files["bundle.mlir"] = print_bundle(module)
    files["manifest.json"] = manifest.to_json()
    return files


def check_output_directory(directory: str | os.PathLike[str], *, force: bool = False) -> None:
    """Fail unless :func:`write_output` can create (or, with ``force``, replace) ``directory``.

    Each problem is one :class:`SpyreError` located at ``directory`` as given: it
    is a file, or a non-empty directory without ``force``, or the closest
    existing directory above it is not a directory or not writable.  The drivers
    call it before any work, the writer again before it writes.
    """
    target = Path(directory)
    if target.is_dir():
        if not force and any(target.iterdir()):
            raise SpyreError("output directory is not empty (use --force to replace it)", loc=str(target))
    elif target.exists() or target.is_symlink():
        raise SpyreError("cannot write the output directory: a file of that name exists", loc=str(target))
    above = next(p for p in target.parents if p.exists())  # "." or "/" at the latest
    if not above.is_dir():
        raise SpyreError(f"cannot write the output directory: '{above}' is not a directory", loc=str(target))
    if not os.access(above, os.W_OK | os.X_OK):
        raise SpyreError(f"cannot write the output directory: directory '{above}' is not writable",
                         loc=str(target))


STAGING_TAG = ".spyre-staging-"
"""What names a staging directory of the writer: ``.<DIR>.spyre-staging-<pid>-<8 random characters>``,
beside the output directory ``DIR``, owned by process ``pid``."""

_STAGING_NAME = re.compile(r"^\..+" + re.escape(STAGING_TAG) + r"(?P<pid>[0-9]+)-[a-z0-9_]{8}$")


def _staging_directory(parent: Path, name: str) -> Path:
    """A new, empty staging directory for the output directory ``parent/name``, owned by this process."""
    return Path(tempfile.mkdtemp(prefix=f".{name}{STAGING_TAG}{os.getpid()}-", dir=parent))


def sweep_staging(parent: str | os.PathLike[str]) -> list[Path]:
    """Remove the staging directories in ``parent`` that a writer left behind when it was killed
    (their owning process no longer exists); returns them.

    Only directories named as :data:`STAGING_TAG` says are candidates; one whose process
    is still running (another compile writing beside this one) stays.
    """
    swept = []
    for entry in Path(parent).iterdir():
        found = _STAGING_NAME.match(entry.name)
        if found and entry.is_dir() and not entry.is_symlink() and not _running(int(found["pid"])):
            shutil.rmtree(entry, ignore_errors=True)
            swept.append(entry)
    return swept


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (it may be another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@fewer_collections()
def write_output(module: ModuleOp, directory: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write the output directory of a lowered module (see :func:`bundle_files`); returns its path.

    ``directory`` must pass :func:`check_output_directory`.  The files are written into
    a staging directory beside it, renamed into place at the end: a failure or an
    interrupt (``KeyboardInterrupt``) removes the staging directory and leaves an
    existing ``directory`` as it was, and the staging directories of writers that
    were killed are swept (:func:`sweep_staging`) by the next write into the same parent.
    """
    target = Path(directory)
    check_output_directory(target, force=force)
    files = bundle_files(module)
    parent = target.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        sweep_staging(parent)
        staging = _staging_directory(parent, target.name)
    except OSError as e:
        raise SpyreError(f"cannot write the output directory: {e.strerror}", loc=str(target)) from None
    replaced: Path | None = None  # holds the directory being replaced, as replaced/d
    try:
        for name, content in files.items():
            if isinstance(content, bytes):
                (staging / name).write_bytes(content)
            else:
                (staging / name).write_text(content)
        os.chmod(staging, 0o755)
        if target.exists():
            replaced = _staging_directory(parent, target.name)
            os.rename(target, replaced / "d")
            os.rename(staging, target)
        else:
            os.rename(staging, target)
    except BaseException as e:
        if replaced is not None and (replaced / "d").exists() and not target.exists():
            os.rename(replaced / "d", target)
        shutil.rmtree(staging, ignore_errors=True)
        if replaced is not None:
            shutil.rmtree(replaced, ignore_errors=True)
        if isinstance(e, OSError):
            raise SpyreError(f"cannot write the output directory: {e.strerror}", loc=str(target)) from None
        raise
    if replaced is not None:
        shutil.rmtree(replaced, ignore_errors=True)
    return target
