# The manifest of a compiled output directory (DESIGN §10): what each kernel
# argument of bundle.mlir is, so that a host runtime (and the reference
# interpreter) can stage tensors.  Written by the compiler's writer, read by the
# interpreter; reads and writes DIR/manifest.json.
"""``manifest.json``: the kernel arguments of a compiled bundle.

::

    {
      "format": "spyre-mlir-manifest", "version": 1,
      "bundle": "bundle.mlir", "function": "sdsc_bundle",
      "sdsc_files": ["sdsc_0.json", "sdsc_1.json"],
      "cores": 32, "backend_lx_fraction": 0.2,
      "args": [
        {"index": 0, "role": "input", "name": "a", "shape": [1024, 4096], "dtype": "float16",
         "layout": {"device_size": [64, 1024, 64], "dim_order": [0, 1], "data_format": "SEN169_FP16"},
         "nbytes": 8388608},
        {"index": 3, "role": "output", "name": "mul", ...},
        {"index": 4, "role": "constant", "name": "fill_0", "fill": 1.0, "shape": [64, 128], ...},
        {"index": 5, "role": "pool", "name": "pool", "nbytes": 65536}
      ]
    }

Argument ``index`` is the position of the argument in ``@sdsc_bundle``'s
signature.  Inputs (roles ``input``, ``parameter``, ``buffer``) appear in the
order of the graph's inputs, outputs in the order of its outputs; a ``pool``
argument has no shape, dtype or layout.  ``backend_lx_fraction`` is the share
of LX the compile left to the back end (``spyre-compile --lx-fraction``); the
interpreter enforces the usable LX it implies (absent: the hardware default).

A ``constant`` argument is a tensor the runtime initialises itself before the
run: every element of its device bytes, stick padding included, holds
``fill`` in the argument's data format.  It is how a ``spyre.fill`` that
reaches the bundle is executed: the SDSC interface has no fill op, so the
constant becomes a kernel argument that ops read like any HBM tensor.
``fill`` is a JSON number, or the string ``"inf"``, ``"-inf"`` or ``"nan"``
(strict JSON has no non-finite numbers).  An ``output`` may carry a ``fill``
too: the runtime initialises it the same way (a tiled reduction returned
directly accumulates into the output, starting from the op's identity).

A ``constant`` may instead carry ``data``: the name of a file beside the
manifest holding its values, computed when the program was compiled (position
ids, masks, rotary tables): the host tensor, row-major, little-endian, in the
argument's dtype (bfloat16 as its 16 bits), exactly ``prod(shape) x element
bytes`` long.  The runtime stages it like an input.

An integer ``input`` may carry ``range``: ``[lo, hi]``, the values it may
take, ``lo <= v < hi``.  The program computed at compile time what it derives
from that input, for each of these values (a decode step's position: its
attention mask and rotary tables); the runtime refuses any other value.

A layout may carry ``padded_shape``: the device extent of each host dim when
some are padded beyond the shape (an output an op writes further than its
shape, an fp32 result beside fp16 sticks).  The padding holds no host
elements; staging writes zeros there and reading back drops it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.limits import cores_problem

FORMAT = "spyre-mlir-manifest"
VERSION = 1
TENSOR_ROLES = ("input", "parameter", "buffer", "output", "constant")
ROLES = (*TENSOR_ROLES, "pool")
ARGUMENT_ROLES = ("input", "parameter", "buffer", "constant")
"""The roles a compiled function's argument may have (``spyre.role``); outputs are its results."""
STAGED_ROLES = ("parameter", "buffer", "constant")
"""The roles of the arguments the runtime stages once and reuses (the weights, a KV cache, a
constant from the data the output directory stores), in their layout, zeros in its padding."""


@dataclass(frozen=True)
class ArgLayout:
    """The device layout a kernel argument is staged in."""

    device_size: tuple[int, ...]
    dim_order: tuple[int, ...]
    data_format: str
    padded_shape: tuple[int, ...] | None = None
    """The device extent of each host dim when the layout pads some beyond the shape (zeros)."""


@dataclass(frozen=True)
class KernelArg:
    """One argument of ``@sdsc_bundle``."""

    index: int
    role: str
    name: str
    nbytes: int
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    layout: ArgLayout | None = None
    fill: float | None = None
    """The value of every element of a ``constant`` argument."""
    data: str | None = None
    """The file (beside the manifest) holding the host values of a ``constant`` argument."""
    written: bool = False
    """A ``buffer`` the program writes in place (a mutated buffer: a KV cache); its bytes are the
    program's state, kept from one execution to the next."""
    range: tuple[int, int] | None = None
    """The values ``[lo, hi)`` an integer ``input`` (or one held as flags) may take (``lo <= v < hi``)."""
    host_dtype: str | None = None
    """The dtype of the host tensor of a float ``input`` that holds an integer or bool tensor as 0/1
    flags (an attention mask): the runtime converts it to ``dtype`` when staging."""

    @property
    def is_input(self) -> bool:
        """True for graph inputs, parameters and buffers (staged before the run)."""
        return self.role in ("input", "parameter", "buffer")


@dataclass(frozen=True)
class Manifest:
    """Everything a runtime needs to stage a compiled bundle's arguments."""

    args: tuple[KernelArg, ...]
    sdsc_files: tuple[str, ...]
    cores: int
    bundle: str = "bundle.mlir"
    function: str = "sdsc_bundle"
    backend_lx_fraction: float = SpyreConfig.backend_lx_fraction
    """Share of LX the back end keeps; the rest is what memory planning placed values in."""

    @property
    def inputs(self) -> tuple[KernelArg, ...]:
        """Graph inputs, parameters and buffers, in graph-input order."""
        return tuple(a for a in self.args if a.is_input)

    @property
    def outputs(self) -> tuple[KernelArg, ...]:
        """Graph outputs, in graph-output order."""
        return tuple(a for a in self.args if a.role == "output")

    @property
    def constants(self) -> tuple[KernelArg, ...]:
        """Constant tensors (and outputs with a ``fill``) the runtime fills or stages before the run."""
        return tuple(a for a in self.args if a.role == "constant" or a.fill is not None)

    def to_json(self) -> str:
        """Deterministic JSON text (sorted keys, two-space indent, trailing newline)."""
        return json.dumps(self._as_dict(), indent=2, sort_keys=True) + "\n"

    def _as_dict(self) -> dict[str, Any]:
        def arg(a: KernelArg) -> dict[str, Any]:
            out: dict[str, Any] = {"index": a.index, "role": a.role, "name": a.name, "nbytes": a.nbytes}
            if a.shape is not None:
                out["shape"] = list(a.shape)
                out["dtype"] = a.dtype
            if a.layout is not None:
                out["layout"] = {"device_size": list(a.layout.device_size),
                                 "dim_order": list(a.layout.dim_order),
                                 "data_format": a.layout.data_format}
                if a.layout.padded_shape is not None:
                    out["layout"]["padded_shape"] = list(a.layout.padded_shape)
            if a.fill is not None:
                out["fill"] = a.fill if math.isfinite(a.fill) else str(a.fill)
            if a.data is not None:
                out["data"] = a.data
            if a.written:
                out["written"] = True
            if a.range is not None:
                out["range"] = list(a.range)
            if a.host_dtype is not None:
                out["host_dtype"] = a.host_dtype
            return out

        return {"format": FORMAT, "version": VERSION, "bundle": self.bundle, "function": self.function,
                "sdsc_files": list(self.sdsc_files), "cores": self.cores,
                "backend_lx_fraction": self.backend_lx_fraction, "args": [arg(a) for a in self.args]}


def _field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise SpyreError(f"missing '{key}'", loc=where)
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SpyreError(f"'{key}' has the wrong type ({type(value).__name__})", loc=where)
    return value


def _ints(values: Any, key: str, where: str) -> tuple[int, ...]:
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise SpyreError(f"'{key}' must be a list of integers", loc=where)
    return tuple(values)


def _parse_arg(obj: Any, where: str) -> KernelArg:
    if not isinstance(obj, dict):
        raise SpyreError("each argument must be an object", loc=where)
    role = _field(obj, "role", str, where)
    if role not in ROLES:
        raise SpyreError(f"unknown role '{role}', expected one of {', '.join(ROLES)}", loc=where)
    index = _field(obj, "index", int, where)
    name = _field(obj, "name", str, where)
    nbytes = _field(obj, "nbytes", int, where)
    if role == "pool":
        return KernelArg(index, role, name, nbytes)
    layout = _field(obj, "layout", dict, where)
    data = _field(obj, "data", str, where) if role == "constant" and "data" in obj else None
    fill = _fill(obj, where) if (role == "constant" and data is None) or (role == "output" and "fill" in obj) \
        else None
    written = "written" in obj
    if written and (obj["written"] is not True or role != "buffer"):
        raise SpyreError("'written' is true on a buffer only", loc=where)
    host_dtype = _host_dtype(obj, role, where) if "host_dtype" in obj else None
    value_range = _range(obj, role, where) if "range" in obj else None
    return KernelArg(
        index, role, name, nbytes,
        shape=_ints(_field(obj, "shape", list, where), "shape", where),
        dtype=_field(obj, "dtype", str, where),
        layout=ArgLayout(_ints(_field(layout, "device_size", list, where), "device_size", where),
                         _ints(_field(layout, "dim_order", list, where), "dim_order", where),
                         _field(layout, "data_format", str, where),
                         _ints(layout["padded_shape"], "padded_shape", where) if "padded_shape" in layout
                         else None),
        fill=fill, data=data, written=written, range=value_range, host_dtype=host_dtype)


HOST_DTYPES = ("bool", "int64", "int32", "int16", "uint8")
"""Host dtypes a float input may hold as flags (``host_dtype``)."""


def _host_dtype(obj: dict[str, Any], role: str, where: str) -> str:
    value = _field(obj, "host_dtype", str, where)
    if role != "input" or obj.get("dtype") not in ("float16", "bfloat16", "float32") or value not in HOST_DTYPES:
        raise SpyreError(f"'host_dtype' must be one of {', '.join(HOST_DTYPES)} on a float input, got {value!r} on "
                         f"{obj.get('dtype')} role '{role}'", loc=where)
    return value


def _range(obj: dict[str, Any], role: str, where: str) -> tuple[int, int]:
    bounds = _ints(obj["range"], "range", where)
    integer = obj.get("dtype") in ("int32", "int8") or "host_dtype" in obj
    if role != "input" or not integer or len(bounds) != 2 or bounds[0] >= bounds[1]:
        raise SpyreError(f"'range' must be [lo, hi] with lo < hi on an integer input, got {list(bounds)} on "
                         f"{obj.get('dtype')} role '{role}'", loc=where)
    return bounds[0], bounds[1]


def _fill(obj: dict[str, Any], where: str) -> float:
    value = _field(obj, "fill", (int, float, str), where)
    if isinstance(value, str):
        if value not in ("inf", "-inf", "nan"):
            raise SpyreError(f"'fill' must be a number, \"inf\", \"-inf\" or \"nan\", got {value!r}", loc=where)
        return float(value)
    return float(value)


def parse_manifest(text: str, where: str = "manifest.json") -> Manifest:
    """Parse and check manifest text; errors are :class:`SpyreError` at ``where``."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpyreError(f"malformed JSON at line {e.lineno} column {e.colno}: {e.msg}", loc=where) from None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise SpyreError(f"not a spyre-mlir manifest (expected \"format\": \"{FORMAT}\")", loc=where)
    if obj.get("version") != VERSION:
        raise SpyreError(f"unsupported manifest version {obj.get('version')!r}, expected {VERSION}", loc=where)
    raw_args = _field(obj, "args", list, where)
    args = tuple(_parse_arg(a, f"{where}: args[{i}]") for i, a in enumerate(raw_args))
    indices = sorted(a.index for a in args)
    if indices != list(range(len(args))):
        raise SpyreError(f"argument indices must be 0..{len(args) - 1}, got {indices}", loc=where)
    names = [a.name for a in args]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SpyreError(f"argument names must be unique, '{twice[0]}' names {names.count(twice[0])} arguments",
                         loc=where)
    files = _field(obj, "sdsc_files", list, where)
    if not all(isinstance(f, str) for f in files):
        raise SpyreError("'sdsc_files' must be a list of file names", loc=where)
    cores = _field(obj, "cores", int, where)
    if (problem := cores_problem(cores)) is not None:
        raise SpyreError(f"'cores': {problem}", loc=where)
    fraction = obj.get("backend_lx_fraction", SpyreConfig.backend_lx_fraction)
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 <= fraction < 1:
        raise SpyreError(f"'backend_lx_fraction' must be a number with 0 <= f < 1, got {fraction!r}", loc=where)
    return Manifest(args=args, sdsc_files=tuple(files), cores=cores,
                    bundle=_field(obj, "bundle", str, where), function=_field(obj, "function", str, where),
                    backend_lx_fraction=float(fraction))


def read_manifest(directory: str | Path) -> Manifest:
    """Read ``DIR/manifest.json``."""
    path = Path(directory) / "manifest.json"
    try:
        text = path.read_text()
    except OSError as e:
        raise SpyreError(f"cannot read the manifest: {e.strerror}", loc=str(path)) from None
    return parse_manifest(text, str(path))


def tensor_arg(index: int, role: str, name: str, shape: Sequence[int], dtype: str,
               device_size: Sequence[int], dim_order: Sequence[int], data_format: str,
               nbytes: int, fill: float | None = None,
               padded_shape: Sequence[int] | None = None, data: str | None = None,
               written: bool = False, value_range: Sequence[int] | None = None,
               host_dtype: str | None = None) -> KernelArg:
    """A tensor kernel argument (everything but the pool); ``fill`` for a constant (or an output
    the runtime initialises), ``data`` for a constant with stored values, ``padded_shape`` for a
    layout padded beyond ``shape``, ``written`` for a buffer the program writes in place,
    ``value_range`` ``[lo, hi)`` for an integer input whose values the program was compiled for,
    ``host_dtype`` for a float input holding an integer or bool host tensor as flags."""
    padded = None if padded_shape is None else tuple(padded_shape)
    bounds = None if value_range is None else (int(value_range[0]), int(value_range[1]))
    return KernelArg(index, role, name, nbytes, tuple(shape), dtype,
                     ArgLayout(tuple(device_size), tuple(dim_order), data_format, padded), fill, data, written, bounds,
                     host_dtype)


_FILE_DTYPES = {"float16": np.dtype("<f2"), "bfloat16": np.dtype("<u2"), "float32": np.dtype("<f4"),
                "int8": np.dtype("i1"), "int32": np.dtype("<i4")}
"""How a ``data`` file holds each dtype (bfloat16: the upper 16 bits of its float32 value)."""


def constant_data(values: np.ndarray, dtype: str) -> bytes:
    """The ``data`` file bytes of host ``values`` (exactly representable in ``dtype``)."""
    if dtype == "bfloat16":
        bits = np.ascontiguousarray(values, np.float32).view(np.uint32)
        return (bits >> 16).astype("<u2").tobytes()
    return np.ascontiguousarray(values, _FILE_DTYPES[dtype]).tobytes()


def constant_values(raw: bytes, arg: KernelArg, where: str) -> np.ndarray:
    """The host values of constant ``arg`` from the bytes of its ``data`` file (bfloat16 as
    float32); a file of the wrong size is a :class:`SpyreError` at ``where``."""
    assert arg.shape is not None and arg.dtype is not None
    if arg.dtype not in _FILE_DTYPES:
        raise SpyreError(f"a constant of dtype {arg.dtype} cannot have data", loc=where)
    file_dtype = _FILE_DTYPES[arg.dtype]
    expected = math.prod(arg.shape) * file_dtype.itemsize
    if len(raw) != expected:
        raise SpyreError(f"holds {len(raw)} bytes, expected {expected} for {list(arg.shape)} {arg.dtype}",
                         loc=where)
    values = np.frombuffer(raw, file_dtype).reshape(arg.shape)
    if arg.dtype == "bfloat16":
        return (values.astype(np.uint32) << 16).view(np.float32)
    return values
