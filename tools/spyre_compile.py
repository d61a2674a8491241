# spyre-compile: the whole pipeline in one process.  Reads a model file
# (`model.py:factory`), a `.pt2` archive or a `.mlir` module; writes the output
# directory (bundle.mlir, sdsc_<n>.json, manifest.json) and one line saying so
# (stdout).  Errors are one line on stderr and exit code 1; nothing is half-written.
"""``spyre-compile``: compile a PyTorch program (or spyre IR) for Spyre.

::

    spyre-compile examples/add_mul_nested.py:build -o out/
    spyre-compile model.mlir -o out/ --cores 4 --force --time-passes
    spyre-compile model.mlir -o out/ --lx-solver bestfit --lx-fraction 0.1

The stages are :data:`spyre_mlir.pipeline.COMPILE_STAGES`.  The options'
values, the source and the output directory are checked before any work
(before torch is imported or the model runs).  When done, one line on stdout
says where it wrote, how many SDSC files and the predicted time; on a
terminal, a compile longer than a few seconds names each phase on stderr as it starts: importing
torch, building, exporting, decomposing and importing the model, each stage, writing.  ``--debug`` (or
``SPYRE_TRACEBACK=1``) shows the traceback of any error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.timing import announced, timed
from spyre_mlir.tools.cli import STDIO, Progress, add_version_argument, argument_errors, plain_text, run_tool

TOOL = "spyre-compile"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=TOOL, description=plain_text(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help="model.py:factory, program.pt2 or in.mlir")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    p.add_argument("--cores", type=int, default=None,
                   help="cores of the target, 1..32 (default: $SENCORES, else the input's #spyre.target, "
                        "else 32)")
    p.add_argument("--lx-solver", default="auto", metavar="{auto,greedy,firstfit,bestfit,valuefit}",
                   help="LX solver of memory planning (default: auto, the one that moves the fewest bytes "
                        "through HBM)")
    p.add_argument("--lx-fraction", type=float, default=None, metavar="F",
                   help="share of LX kept by the back end, 0 <= F < 1 (default: the input's #spyre.target, "
                        "else 0.2)")
    p.add_argument("--force", action="store_true", help="replace a non-empty output directory")
    p.add_argument("--print-ir-after-all", action="store_true", help="print the IR after every stage (stderr)")
    p.add_argument("--time-passes", action="store_true",
                   help="report the time of every phase (stderr): torch's import, the model's build, export, "
                        "decomposition, import, every stage, verification and writing, adding up to the total")
    p.add_argument("--verify-each", action="store_true", help="verify after every stage")
    p.add_argument("--no-span-tiling", dest="span_tiling", action="store_false",
                   help="do not tile ops that overflow the per-core span limit (spyre-coarse-tile)")
    p.add_argument("--no-auto-tile", dest="auto_tile", action="store_false",
                   help="do not tile a program without tiles hints where the cost model predicts it pays "
                        "(spyre-auto-tile)")
    p.add_argument("--stage-inputs", action="store_true",
                   help="stage user inputs, like parameters, in the layout their readers want instead of "
                        "copying them on every run (the manifest says which layout to stage)")
    p.add_argument("--report", action="store_true",
                   help="print the cost model's prediction for the plan: per SDSC file and in total, the "
                        "predicted time, HBM and LX bytes, LX peak and cores, and the roofline lower bound")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    add_version_argument(p)
    return p


def run(args: argparse.Namespace) -> int:
    with timed() as timings:
        module = _compile(args)
    if args.time_passes:
        timings.write(sys.stderr, TOOL)
    from spyre_mlir.codegen.writer import bundle_summary

    summary = bundle_summary(module)
    predicted = f", predicted {summary.predicted_us:.1f} us" if summary.predicted_us is not None else ""
    print(f"{TOOL}: wrote {args.output}: {summary.sdsc_files} SDSC file{'s' if summary.sdsc_files != 1 else ''}"
          f"{predicted} on {summary.cores} core{'s' if summary.cores != 1 else ''}")
    return 0


def _compile(args: argparse.Namespace):
    """Check the arguments, load the source, compile it and write the output directory; the
    compiled module."""
    cores = check_arguments(args)
    from spyre_mlir.pipeline import CompileOptions, compile_module, load_source

    options = CompileOptions(cores=cores, force=args.force, print_ir_after_all=args.print_ir_after_all,
                             verify_each=args.verify_each,
                             span_tiling=args.span_tiling, lx_solver=args.lx_solver,
                             lx_fraction=args.lx_fraction, stage_inputs=args.stage_inputs,
                             auto_tile=args.auto_tile)
    with Progress(TOOL, sys.stderr) as progress, announced(progress.stage):
        module = load_source(args.source)
        compile_module(module, args.output, options, planned=_print_report if args.report else None)
    return module


def check_arguments(args: argparse.Namespace) -> int | None:
    """Check what the command line says before any work (before torch is imported or the
    model runs): the options' values, the source file, the output directory.  Returns the
    core count to compile for (``--cores``, else ``$SENCORES``, else None)."""
    from spyre_mlir.codegen.writer import check_output_directory
    from spyre_mlir.hardware import check_target_option, driver_cores
    from spyre_mlir.passes.plan_memory import LX_SOLVERS
    from spyre_mlir.sources import parse_source

    if args.cores is not None:
        with argument_errors(TOOL, "--cores"):
            check_target_option("cores", args.cores)
    if args.lx_fraction is not None:
        with argument_errors(TOOL, "--lx-fraction"):
            check_target_option("backend_lx_fraction", args.lx_fraction)
    if args.lx_solver not in LX_SOLVERS:
        raise SpyreError(f"argument --lx-solver: invalid choice: '{args.lx_solver}' "
                         f"(choose from {', '.join(LX_SOLVERS)})", loc=TOOL)
    if args.output == STDIO:
        raise SpyreError(f"argument -o/--output: {TOOL} writes a directory, not standard output", loc=TOOL)
    cores = driver_cores(args.cores, TOOL)  # the one place the command line reads $SENCORES
    parse_source(args.source, mlir=True)
    check_output_directory(args.output, force=args.force)
    return cores


def _print_report(module) -> None:
    from spyre_mlir.analysis.cost import cost_report

    sys.stdout.write(cost_report(module).table())


def main(argv: Sequence[str] | None = None) -> int:
    """Run spyre-compile; returns the process exit code."""
    args = _parser().parse_args(argv)
    source = args.source.rpartition(":")[0] if args.source.count(":") else args.source
    return run_tool(TOOL, lambda: run(args), source, debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
