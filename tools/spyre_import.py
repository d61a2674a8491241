# spyre-import: torch.export programs -> spyre dialect text.  Reads a model
# file (`model.py:factory`) or a `.pt2` archive; writes .mlir text (stdout, or
# -o FILE; `-o -` is stdout).  Errors are one located line on stderr and exit code 1.
"""``spyre-import``: import a PyTorch program into the ``spyre`` dialect.

::

    spyre-import examples/add_mul_nested.py:build -o add_mul.mlir
    spyre-import program.pt2

``factory()`` returns an ``ExportedProgram`` or ``(module_or_callable,
example_inputs)``; the latter is exported non-strict inside
``torch.fx.traceback.preserve_node_meta()`` (``--strict`` for strict export),
so ``spyre_hint`` annotations are kept.  The output is printed in xDSL's custom
syntax and round-trips through ``spyre-opt``.  An unsupported op prints
``model.py:42: error: unsupported ATen op 'aten.sort.default'`` and exits 1;
``--debug`` (or ``SPYRE_TRACEBACK=1``) shows the traceback of any error.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence

from xdsl.printer import Printer

from spyre_mlir.sources import parse_source
from spyre_mlir.tools.cli import add_version_argument, check_output_files, output_file, plain_text, run_tool


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="spyre-import", description=plain_text(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="model.py:factory or program.pt2")
    p.add_argument("-o", "--output", help="output .mlir file (default, or -: stdout)")
    p.add_argument("--func-name", default="main", help="name of the emitted function (default: main)")
    p.add_argument("--strict", action="store_true", help="export with strict=True (TorchDynamo)")
    p.add_argument("--mlir-print-debuginfo", action="store_true",
                   help="print op locations (model.py:line:col) as loc(...)")
    p.add_argument("--no-verify", action="store_true", help="do not verify the imported module")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    add_version_argument(p)
    return p


def run(args: argparse.Namespace) -> int:
    output = output_file(args.output)
    check_output_files(output)
    parse_source(args.model)  # before torch is imported or the model runs
    from spyre_mlir.importer import import_program, load_program
    from spyre_mlir.mlir_text import verify_located

    program = load_program(args.model, strict=args.strict)
    module = import_program(program, func_name=args.func_name)
    if not args.no_verify:
        verify_located(module)
    text = io.StringIO()
    Printer(stream=text, print_debuginfo=args.mlir_print_debuginfo).print_op(module)
    text.write("\n")
    if output is not None:
        with open(output, "w") as f:
            f.write(text.getvalue())
    else:
        sys.stdout.write(text.getvalue())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run spyre-import; returns the process exit code."""
    args = _parser().parse_args(argv)
    return run_tool("spyre-import", lambda: run(args), args.model.rpartition(":")[0] or args.model,
                    debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
