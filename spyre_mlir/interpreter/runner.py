# The interpreter's driver: load an output directory, stage host inputs into
# simulated HBM (of a new device, or of a finished run's, reset), trace the
# bundle's control flow, execute every sdsc_execute in order and read the
# outputs back.  A buffer the program writes in place (the manifest's
# `written`, a KV cache) keeps its bytes from one execution to the next unless
# the caller stages it anew.  Reads DIR/* and host arrays; returns host arrays
# and statistics; warns about outputs that hold inf or nan.
"""``run(directory, inputs)``: execute a compiled output directory."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from spyre_mlir.diagnostics import SpyreError, emit_warning
from spyre_mlir.hardware import NUMERICS_DLFLOAT16, NUMERICS_IEEE, check_numerics
from spyre_mlir.interpreter.device import Device
from spyre_mlir.interpreter.execute import SdscExecutor
from spyre_mlir.interpreter.loading import OutputDir, load_output_dir
from spyre_mlir.interpreter.schema import load_schema
from spyre_mlir.interpreter.stats import ExecutionLog, OpStats, RunStats
from spyre_mlir.manifest import KernelArg, Manifest


def run(directory: str | Path, inputs: Mapping[str, Any] | Sequence[Any], *,
        schema: str | os.PathLike[str] | None = None,
        numerics: str = NUMERICS_IEEE) -> tuple[dict[str, np.ndarray], RunStats]:
    """Execute ``directory`` on the simulated Spyre.

    ``inputs`` maps the manifest's input names to arrays (numpy or torch), or
    lists them in the manifest's input order.  A buffer the program writes in
    place may be left out of a mapping: it keeps the bytes the previous execution
    of the same loaded directory left (:func:`execute`).  ``schema`` is the path of
    ``sdscbundle-schema.json`` (default ``$SPYRE_SDSC_SCHEMA``; without one
    only structural checks run).  ``numerics`` is how float16 (SEN169_FP16)
    elements are held, ``'ieee'`` or ``'dlfloat16'`` (:func:`execute`).
    Returns the outputs by manifest name and the run's statistics; every
    problem is a :class:`SpyreError`.
    """
    check_numerics(numerics)
    loaded = load_output_dir(directory, load_schema(schema))
    return execute(loaded, host_inputs(loaded.manifest, inputs), numerics=numerics)


def execute(loaded: OutputDir, inputs: Mapping[str, np.ndarray], *, record_events: bool = False,
            numerics: str = NUMERICS_IEEE) -> tuple[dict[str, np.ndarray], RunStats]:
    """Run an already loaded directory on checked host inputs; ``record_events`` keeps
    one record per execution in the stats' ``events`` (for the timeline).

    A buffer the program writes in place (``written`` in the manifest) that ``inputs`` leaves
    out keeps what the previous execution of ``loaded`` left in it (:func:`state` reads it);
    before any execution it has no value, and leaving it out is an error (so is keeping it
    into another ``numerics``: its bytes are in the previous one's format).  So does an input
    whose allocation the device shares with another program's (:meth:`Device.share`).

    Op funcs compute in float32; what they write is rounded to the format of the tensor
    written.  ``numerics`` (one of ``hardware.NUMERICS``) says which format float16 tensors
    (SEN169_FP16) have: ``'ieee'`` (the default) IEEE float16, rounded to nearest even;
    ``'dlfloat16'`` DLFloat16, as the device stores them (9 fraction bits, rounded half away
    from zero, staged inputs too; finite to about 8.6e9, so an intermediate value past
    float16's 65504 survives; beyond, NaN; a staged infinity is the largest finite value of
    its sign), converted to float16 when read back.
    An overflow gives inf (DLFloat16's: nan), an invalid operation nan, silently;
    each output that holds either is one warning (:func:`warn_non_finite`).
    """
    check_numerics(numerics)
    manifest = loaded.manifest
    kept = [arg for arg in manifest.inputs if arg.name not in inputs]
    shared = loaded.devices[-1].shared if loaded.devices else set()
    for arg in kept:
        if not arg.written and arg.name not in shared:
            raise SpyreError(f"no value for input '{arg.name}'", loc=str(loaded.path))
        if not loaded.devices:
            raise SpyreError(f"buffer '{arg.name}' has no value yet: the program writes it in place, and the first "
                             "execution must stage its initial value", loc=str(loaded.path))
        if loaded.devices[-1].numerics != numerics:
            raise SpyreError(f"{arg.role} '{arg.name}' holds {loaded.devices[-1].numerics} values; stage it anew "
                             f"to run in {numerics}", loc=str(loaded.path))
    device = _device(loaded, numerics)
    with np.errstate(all="ignore"):
        for arg in manifest.inputs:
            if arg.name in inputs:
                device.stage(arg, inputs[arg.name])
        for arg in manifest.constants:
            if arg.data is not None:
                device.stage(arg, loaded.constants[arg.name])
            else:
                device.fill(arg)
        trace = loaded.program.trace(device.arguments)
        executors: dict[str, SdscExecutor] = {}
        log = ExecutionLog() if record_events else None
        for name, kernel in loaded.kernels.items():
            executors[name] = SdscExecutor(kernel, device, OpStats(name, kernel.spec.op_name, log=log))
        for index, execution in enumerate(trace):
            executors[execution.op.sdsc_filename.data].run(execution, index)
        outputs = {arg.name: device.read_back(arg) for arg in manifest.outputs}
    stats = RunStats([e.stats for e in executors.values()], manifest.cores, events=log.events if log else [],
                     predicted=loaded.predicted)
    loaded.devices.append(device)
    warn_non_finite(outputs, str(loaded.path), numerics)
    return outputs, stats


def warn_non_finite(outputs: Mapping[str, np.ndarray], where: str, numerics: str = NUMERICS_IEEE) -> None:
    """One warning at ``where`` per float output holding inf or nan, naming its first such
    element and how many there are (for inf, where its dtype overflows; for nan in a float16
    output in ``dlfloat16`` numerics, that DLFloat16 has no infinity)."""
    for name, values in outputs.items():
        if values.dtype.kind != "f":
            continue
        bad = ~np.isfinite(values)
        count = int(np.count_nonzero(bad))
        if count == 0:
            continue
        index = np.unravel_index(int(np.argmax(bad)), values.shape)
        first = values[index]
        what = "nan" if np.isnan(first) else "inf" if first > 0 else "-inf"
        many = f" ({count} of {values.size} elements are inf or nan)" if count > 1 else ""
        if what != "nan":
            why = f": {values.dtype} overflows to inf beyond {float(np.finfo(values.dtype).max):g} in magnitude"
        elif numerics == NUMERICS_DLFLOAT16 and values.dtype == np.float16:
            why = (": DLFloat16 holds no infinity (an inf, or a value beyond about 8.6e9 in magnitude, is its "
                   "NaN-or-infinity pattern, read as nan)")
        else:
            why = ""
        emit_warning(f"output '{name}' holds {what} at index {tuple(int(i) for i in index)}{many}{why}", loc=where)


def state(loaded: OutputDir) -> dict[str, np.ndarray]:
    """The host values of the buffers the program writes in place, as its last execution left
    them (empty before the first execution)."""
    if not loaded.devices:
        return {}
    device = loaded.devices[-1]
    return {arg.name: device.read_back(arg) for arg in loaded.manifest.inputs if arg.written}


def _device(loaded: OutputDir, numerics: str) -> Device:
    """A new device for ``loaded`` in ``numerics``: a finished run's, reset, if there is one
    (inputs and constants are about to be staged and filled; the written buffers not staged keep
    their bytes)."""
    manifest = loaded.manifest
    if not loaded.devices:
        return Device(manifest.args, loaded.config, numerics)
    device = loaded.devices.pop()
    device.reset(rewritten={arg.index for arg in (*manifest.inputs, *manifest.constants)}, numerics=numerics)
    return device


def host_inputs(manifest: Manifest, inputs: Mapping[str, Any] | Sequence[Any],
                where: str | None = None, held: Collection[str] = ()) -> dict[str, np.ndarray]:
    """``inputs`` as numpy arrays keyed by manifest input name, checked for completeness and each
    by :func:`host_array`; an error is located at ``where`` (the file the inputs came from).
    Buffers written in place, and the inputs named in ``held`` (those the device shares with
    another program's: :meth:`Device.share`), may be left out."""
    names = [a.name for a in manifest.inputs]
    if isinstance(inputs, Mapping):
        missing = [a.name for a in manifest.inputs if a.name not in inputs and not a.written and a.name not in held]
        extra = [n for n in inputs if n not in names]
        if missing or extra:
            raise SpyreError(f"inputs do not match the manifest: missing {missing}, unexpected {extra} "
                             f"(expected {names})", loc=where)
        return {arg.name: host_array(arg, inputs[arg.name], where) for arg in manifest.inputs if arg.name in inputs}
    values = list(inputs)
    if len(values) != len(names):
        raise SpyreError(f"expected {len(names)} inputs ({', '.join(names)}), got {len(values)}", loc=where)
    return {arg.name: host_array(arg, value, where) for arg, value in zip(manifest.inputs, values)}


def host_array(arg: KernelArg, value: Any, where: str | None = None) -> np.ndarray:
    """``value`` (a numpy array or torch tensor) as the host array of input ``arg``, converted
    only where the conversion is exact.

    Its shape must be ``arg``'s, and its dtype too, except that an integer input
    (int32 indices, int8) takes any integer dtype whose values fit (int64 token
    ids), and a bfloat16 one float32 values that are bfloat16 numbers (numpy
    has no bfloat16; a torch bfloat16 tensor arrives so).  Anything else
    (float64 or float32 for float16, bool, complex, floats for indices) is one
    :class:`SpyreError` at ``where`` naming the input, its dtype and shape and
    the expected ones, and what to do; so is a value outside the ``range`` of an
    integer input, naming the value and the range.  An input held as flags
    (``host_dtype``: an attention mask) takes a bool or integer tensor whose
    values are in its ``range`` (0 and 1) and is converted to its float dtype;
    any other value is an error naming the first one and where it is.
    """
    assert arg.shape is not None and arg.dtype is not None
    array = as_numpy(value)
    given = str(value.dtype).removeprefix("torch.") if type(value).__module__.startswith("torch") else array.dtype.name

    def refuse(why: str) -> SpyreError:
        return SpyreError(f"input '{arg.name}' expects {arg.dtype} {list(arg.shape)}, given {given} "
                          f"{list(array.shape)}: {why}", loc=where)

    if tuple(array.shape) != arg.shape:
        raise refuse(f"the program was compiled for static shapes; compile it for {list(array.shape)} to run those")
    if arg.host_dtype is not None:
        return _flags(arg, array, given, refuse, where)
    if arg.dtype in ("int32", "int8"):
        if array.dtype.kind not in "iu":
            raise refuse(f"{given} does not convert to {arg.dtype} exactly; give integers (of any integer dtype "
                         f"whose values fit in {arg.dtype})")
        limits = np.iinfo(arg.dtype)
        if array.size and (array.min() < limits.min or array.max() > limits.max):
            bad = array.min() if array.min() < limits.min else array.max()
            raise refuse(f"value {int(bad)} does not fit in {arg.dtype} (the program stages this input as {arg.dtype})")
        if arg.range is not None and array.size:
            lo, hi = arg.range
            bad = array.min() if array.min() < lo else array.max()
            if not lo <= bad < hi:
                raise SpyreError(f"input '{arg.name}' is {int(bad)}, outside [{lo}, {hi}), the values the program was "
                                 f"compiled for (it computed what it derives from '{arg.name}' for each of them)",
                                 loc=where)
        return array.astype(arg.dtype, copy=False)
    if arg.dtype == "bfloat16" and given in ("bfloat16", "float32"):
        if (array.view(np.uint32) & 0xFFFF).any():
            raise refuse("float32 values that are not bfloat16 numbers; round them to bfloat16 first (numpy has "
                         "no bfloat16: torch.from_numpy(x).bfloat16().float().numpy())")
        return array
    if given != arg.dtype:
        raise refuse(f"{given} does not convert to {arg.dtype} exactly; convert it to {arg.dtype} first")
    return array


def _flags(arg: KernelArg, array: np.ndarray, given: str, refuse: Any, where: str | None) -> np.ndarray:
    """The host tensor of an input held as flags, checked and converted to the device's float dtype."""
    assert arg.dtype is not None and arg.range is not None
    if array.dtype.kind not in "biu":
        raise refuse(f"the program holds this {arg.host_dtype} input as 0/1 flags; give a bool or integer tensor")
    lo, hi = arg.range
    outside = np.argwhere((array < lo) | (array >= hi)) if array.size else ()
    if len(outside):
        at = tuple(int(i) for i in outside[0])
        raise SpyreError(f"input '{arg.name}' holds {int(array[at])} at {list(at)}: the program holds this "
                         f"{arg.host_dtype} input as flags (it reads it as data, an attention mask, and Spyre has no "
                         f"integer arithmetic), so its values must be in [{lo}, {hi})", loc=where)
    return array.astype(arg.dtype)


def as_numpy(value: Any) -> np.ndarray:
    """A numpy array from a numpy array, torch tensor (bfloat16 as float32) or nested list."""
    if type(value).__module__.startswith("torch"):
        tensor = value.detach().cpu()
        if str(tensor.dtype) == "torch.bfloat16":
            tensor = tensor.float()
        return tensor.numpy()
    return np.asarray(value)
