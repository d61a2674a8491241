# spyre-run: execute a compiled output directory (bundle.mlir + SDSC JSON +
# manifest.json) on the reference interpreter, optionally checking the outputs
# against PyTorch eager.  Reads DIR, an inputs .npz or a model factory; writes
# an outputs .npz, a stats table (stdout), stats JSON and a timeline picture.
# Errors are one line on stderr with exit code 1.
"""``spyre-run``: run a compiled directory on the simulated Spyre.

::

    spyre-run out/ --inputs in.npz --outputs out.npz --stats
    spyre-run out/ --check examples/add_mul_nested.py:build --stats-json stats.json
    spyre-run out/ --timeline timeline.svg
    spyre-run out/ --numerics dlfloat16 --check examples/add_mul_nested.py:build

Inputs come from ``--inputs`` (an .npz keyed by the manifest's input names),
else from ``--check``'s factory example inputs, else seeded random normal
tensors (``--seed``; int32 indices are zeros).  Each must have its manifest
shape and dtype, or one that converts exactly (``host_array`` in
spyre_mlir.interpreter.runner): one located error otherwise.  With both
``--inputs`` and ``--check``, the eager model runs on the ``--inputs`` arrays
too, and the parameters, buffers and constants they leave out are the
model's.  ``--debug`` (or ``SPYRE_TRACEBACK=1``) shows the traceback of any error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import zipfile
from collections.abc import Mapping, Sequence

import numpy as np

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import NUMERICS, NUMERICS_IEEE, SpyreConfig, check_numerics
from spyre_mlir.tools.cli import add_version_argument, argument_errors, check_output_files, plain_text, run_tool
from spyre_mlir.interpreter.compare import compare, tolerance_for
from spyre_mlir.interpreter.loading import load_output_dir
from spyre_mlir.interpreter.runner import as_numpy, execute, host_inputs
from spyre_mlir.interpreter.schema import SCHEMA_ENV_VAR, load_schema
from spyre_mlir.interpreter.timeline import timeline_format, write_timeline
from spyre_mlir.manifest import Manifest
from spyre_mlir.optional import require
from spyre_mlir.sources import parse_source

_EPILOG = """\
--check compares every output with PyTorch eager: an element passes when
|interpreter - eager| <= atol + rtol * |eager|, with rtol = atol = 1e-2 for
float16, 2**-4 for bfloat16, rtol = 1e-4 and atol = 1e-5 for float32, exact for
int8 and int32.

--numerics says how float16 tensors (the device format SEN169_FP16) are held:
ieee (the default) as IEEE float16, every op's result rounded to nearest even
and past 65504 infinity; dlfloat16 as the device stores them, DLFloat16 (6
exponent bits, 9 fraction bits): staged inputs and every op's result rounded
half away from zero, values up to about 8.6e9 finite (an intermediate past
65504 survives), beyond that NaN; outputs are read back as float16 (past 65504
infinity).  --check keeps float16's tolerance in dlfloat16 mode, though
DLFloat16 carries one fraction bit less than float16.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="spyre-run", description=plain_text(__doc__), epilog=_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("directory", help="output directory (bundle.mlir, sdsc_*.json, manifest.json)")
    p.add_argument("--inputs", metavar="IN.npz", help="input arrays keyed by the manifest's input names, each of "
                   "its shape and dtype (integers that fit for int32 indices); with --check, eager runs on them "
                   "too, and parameters, buffers and constants left out are the model's")
    p.add_argument("--outputs", metavar="OUT.npz", help="write the outputs, keyed by the manifest's output names")
    p.add_argument("--check", metavar="MODEL.py:FACTORY",
                   help="compare with the factory's model run eagerly in PyTorch (see tolerance below)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random normal inputs (default 0)")
    p.add_argument("--schema", metavar="SCHEMA.json",
                   help=f"validate SDSC files against this sdscbundle schema (default ${SCHEMA_ENV_VAR})")
    p.add_argument("--stats", action="store_true", help="print the statistics table")
    p.add_argument("--stats-json", metavar="FILE", help="write the statistics as JSON (with --timeline, also "
                   "one record per execution: its HBM bytes and LX blocks per core)")
    p.add_argument("--timeline", metavar="FILE.svg|FILE.png",
                   help="draw per core which LX value holds which bytes over the executions, and the HBM "
                   "bytes of each execution (.png needs matplotlib)")
    p.add_argument("--numerics", default=NUMERICS_IEEE, metavar="{" + ",".join(NUMERICS) + "}",
                   help="hold float16 tensors as IEEE float16 (ieee, the default) or as the device stores "
                   "them, DLFloat16 (dlfloat16); see below")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    add_version_argument(p)
    return p


def _npz_inputs(path: str) -> dict[str, np.ndarray]:
    if os.path.isfile(path) and not zipfile.is_zipfile(path):
        raise SpyreError("cannot read the inputs: not an .npz archive (numpy.savez writes one)", loc=path)
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as e:
        raise SpyreError(f"cannot read the inputs: {e}", loc=path) from None


def _random_inputs(manifest: Manifest, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for arg in manifest.inputs:
        assert arg.shape is not None and arg.dtype is not None
        if arg.dtype == "int32":  # indices: 0 addresses the first row of any table
            out[arg.name] = np.zeros(arg.shape, np.int32)
            continue
        values = rng.standard_normal(arg.shape)
        if arg.dtype == "bfloat16":  # float32 values that are bfloat16 numbers (numpy has no bfloat16)
            values = (values.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)
        out[arg.name] = values.astype(np.int8) if arg.dtype == "int8" else values.astype(
            np.float32 if arg.dtype in ("float32", "bfloat16") else np.float16)
    return out


def _eager(spec: str, manifest: Manifest, given: Mapping[str, np.ndarray] | None,
           where: str | None) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """The checked inputs by manifest name, and the eager outputs of the factory's model on them.

    The inputs are ``given`` (the ``--inputs`` arrays, read from ``where``), where they
    leave out a parameter, buffer or constant the factory's; without ``given``, the
    factory's example inputs.  The model is called with the user inputs the interpreter
    stages, as its arguments (by the signature of the program it exports to), in its
    example arguments' dtypes; a parameter, buffer or constant in ``given`` must be the
    model's own, which the model runs with.
    """
    torch = require("torch", "checking against PyTorch eager (--check)")

    from spyre_mlir.importer.loader import load_model, manifest_inputs, model_arguments

    model = load_model(spec)
    if model.module is not None and model.example_inputs is not None:
        fn, example = model.module, (model.example_inputs, {})
    elif model.program.example_inputs is not None:
        fn, example = model.program.module(), model.program.example_inputs
    else:
        raise SpyreError(f"'{spec}' has no example inputs to check with")
    own = host_inputs(manifest, manifest_inputs(model.program, example, manifest, f"factory '{spec}'"), spec)
    if given is None:
        inputs, (args, kwargs) = own, example
    else:
        user = {arg.name for arg in manifest.inputs if arg.role == "input"}
        state = {name: value for name, value in own.items() if name not in user}
        inputs = host_inputs(manifest, {**state, **given}, where)
        for arg in manifest.inputs:
            if arg.name in state and arg.name in given and inputs[arg.name].tobytes() != state[arg.name].tobytes():
                raise SpyreError(f"'{arg.name}' differs from the model's {arg.role} (--check runs '{spec}' with its "
                                 f"own): leave '{arg.name}' out of the inputs (the model's is staged) or give the "
                                 "model's values", loc=where)
        args, kwargs = model_arguments(model.program, inputs, example)
    with torch.no_grad():
        result = fn(*args, **kwargs)
    return inputs, [as_numpy(t) for t in torch.utils._pytree.tree_leaves(result)]


def run(args: argparse.Namespace) -> int:
    with argument_errors("spyre-run", "--numerics"):
        check_numerics(args.numerics)
    check_output_files(args.outputs, args.stats_json, args.timeline)
    if args.timeline:
        timeline_format(args.timeline)
    if args.check:
        parse_source(args.check)  # before torch is imported or the model runs
    loaded = load_output_dir(args.directory, load_schema(args.schema))
    manifest = loaded.manifest
    given = _npz_inputs(args.inputs) if args.inputs else None
    expected: list[np.ndarray] | None = None
    if args.check:
        inputs, expected = _eager(args.check, manifest, given, args.inputs)
        if len(expected) != len(manifest.outputs):
            raise SpyreError(f"the manifest has {len(manifest.outputs)} outputs, eager gives {len(expected)}")
    else:
        inputs = host_inputs(manifest, _random_inputs(manifest, args.seed) if given is None else given, args.inputs)
    outputs, stats = execute(loaded, inputs, record_events=bool(args.timeline), numerics=args.numerics)
    if expected is not None:
        worst_abs = worst_rel = 0.0
        for arg, ref in zip(manifest.outputs, expected):
            assert arg.dtype is not None
            result = compare(arg.name, outputs[arg.name], ref, tolerance_for(arg.dtype))
            worst_abs, worst_rel = max(worst_abs, result.max_abs_err), max(worst_rel, result.max_rel_err)
        stats.max_abs_err, stats.max_rel_err = worst_abs, worst_rel
    if args.outputs:
        np.savez(args.outputs, **outputs)
    if args.stats:
        print(stats.table())
    if args.stats_json:
        with open(args.stats_json, "w") as f:
            json.dump(stats.as_dict(), f, indent=2, sort_keys=True)
            f.write("\n")
    if args.timeline:
        write_timeline(stats, args.timeline, SpyreConfig(cores=manifest.cores).usable_lx_bytes,
                       f"LX occupancy and HBM traffic of {args.directory}")
        print(f"spyre-run: wrote the timeline to {args.timeline}")
    if expected is not None:
        print(f"spyre-run: {len(expected)} output(s) match PyTorch eager "
              f"(max abs err {stats.max_abs_err:.3g}, max rel err {stats.max_rel_err:.3g})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run spyre-run; returns the process exit code."""
    args = _parser().parse_args(argv)
    return run_tool("spyre-run", lambda: run(args), args.directory, user_errors=(OSError,), debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
