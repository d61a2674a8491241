# spyre-opt: the mlir-opt-style pass runner of spyre-mlir.  Reads .mlir text
# (a file or stdin), runs a pass pipeline, writes .mlir text; diagnostics go to
# stderr as one located line each.  Never imports torch.
"""``spyre-opt``: parse, verify, run passes, print.

::

    spyre-opt in.mlir -p spyre-stickify,cse -o out.mlir
    spyre-opt in.mlir --split-input-file --verify-diagnostics
    spyre-opt --list-passes

A parse or verify error prints ``file:line:col: error: message`` and exits 1
(with ``--verify-diagnostics`` it is printed on stdout and the exit code is 0,
so lit tests can FileCheck it).  ``SPYRE_TRACEBACK=1`` shows the traceback of
an internal error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, get_pass_option_infos
from xdsl.utils.arg_spec import ArgSpecParseError
from xdsl.utils.exceptions import DiagnosticException
from xdsl.xdsl_opt_main import xDSLOptMain

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.tools.cli import run_tool
from spyre_mlir.mlir_text import make_context, parse_module, verify_located
from spyre_mlir.passes import all_passes


class SpyreOptMain(xDSLOptMain):
    """xDSL's opt driver with our dialects and passes and located diagnostics."""

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="spyre-mlir modular optimizer driver", args=args)

    def register_all_dialects(self) -> None:
        self.ctx = make_context()

    def register_all_passes(self) -> None:
        for name, factory in all_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--list-passes", action="store_true",
                                help="list the available passes with their options and exit")

    def setup_pipeline(self) -> None:
        def verify_between(_prev: ModulePass | None, module: ModuleOp, _next: ModulePass | None) -> None:
            if not self.args.disable_verify:
                verify_located(module)

        self.pipeline = PassPipeline.parse_spec(self.available_passes, self.args.passes, verify_between)

    def run(self) -> int:
        if self.args.list_passes:
            self._list_passes()
            return 0
        chunks, _ = self.prepare_input()
        output = self.prepare_output()
        failed = False
        try:
            for i, (chunk, line_offset) in enumerate(chunks):
                if i:
                    output.write("// -----\n")
                try:
                    module = parse_module(self.ctx, chunk.read(), self.get_input_name(), line_offset)
                    self.apply_passes(module)
                    output.write(self.output_resulting_program(module))
                except SpyreError as e:
                    self._report(e.format(self.get_input_name()))
                    failed = True
                except DiagnosticException as e:
                    self._report(f"{self.get_input_name()}: error: {e}")
                    failed = True
        finally:
            if output is not sys.stdout:
                output.close()
        return 1 if failed and not self.args.verify_diagnostics else 0

    def _list_passes(self) -> None:
        for name, factory in sorted(self.available_passes.items()):
            pass_cls = factory()
            summary = (pass_cls.__doc__ or "").strip().splitlines()
            options = ", ".join(f"{opt}: {typ} = {default}"
                                for opt, typ, default in get_pass_option_infos(pass_cls))
            print(f"{name}{f'{{{options}}}' if options else ''}  {summary[0] if summary else ''}".rstrip())

    def _report(self, message: str) -> None:
        print(message, file=sys.stdout if self.args.verify_diagnostics else sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run spyre-opt; returns the process exit code."""
    return run_tool("spyre-opt", lambda: SpyreOptMain(argv).run(), "spyre-opt",
                    user_errors=(ArgSpecParseError, ValueError, OSError))


if __name__ == "__main__":
    sys.exit(main())
