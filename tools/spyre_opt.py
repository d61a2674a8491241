# spyre-opt: the mlir-opt-style pass runner of spyre-mlir.  Reads .mlir text
# (a file or stdin), runs a pass pipeline, writes .mlir text; diagnostics go to
# stderr as one located line each.  Never imports torch.
"""``spyre-opt``: parse, verify, run passes, print.

::

    spyre-opt in.mlir -p spyre-stickify,cse -o out.mlir
    spyre-opt in.mlir --split-input-file --verify-diagnostics
    spyre-opt --list-passes
    spyre-opt in.mlir -t upstream-mlir | mlir-opt --irdl-file=spyre.irdl.mlir
    spyre-opt --emit-irdl > spyre.irdl.mlir

A parse or verify error prints ``file:line:col: error: message`` and exits 1
(with ``--verify-diagnostics`` it is printed on stdout and the exit code is 0,
so lit tests can FileCheck it).  The chunks that succeed are printed on stdout;
``-o`` is written only when no chunk failed.  As for mlir-opt, the file ``-`` is
stdin as the input and stdout as ``-o``.
A malformed ``-p`` pipeline, an unknown pass or a bad pass option is one
``spyre-opt: error: ...`` line.
``--emit-irdl`` prints the IRDL of our dialects (:mod:`spyre_mlir.irdl`) and
exits; the ``upstream-mlir`` target prints IR in the form ``mlir-opt --irdl-file``
of that IRDL reads (generic ops, properties as attributes, our attributes by
their parameters).  ``SPYRE_TRACEBACK=1`` shows the traceback of
an internal error.
"""

from __future__ import annotations

import argparse
import inspect
import io
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, get_pass_option_infos
from xdsl.utils.arg_spec import ArgSpecParseError, parse_pipeline
from xdsl.utils.exceptions import DiagnosticException
from xdsl.xdsl_opt_main import xDSLOptMain

from spyre_mlir import irdl
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.tools.cli import STDIO, add_version_argument, check_output_files, output_file, plain_text, run_tool
from spyre_mlir.mlir_text import make_context, parse_module, verify_located
from spyre_mlir.pipeline import write_ir_dump
from spyre_mlir.timing import write_rows
from spyre_mlir.passes import all_passes


QUOTE = "'"
"""Option types of passes with postponed annotations come quoted (``'bool'``)."""


class SpyreOptMain(xDSLOptMain):
    """xDSL's opt driver with our dialects and passes and located diagnostics."""

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description=plain_text(__doc__), args=args)

    def register_all_dialects(self) -> None:
        self.ctx = make_context()

    def register_all_passes(self) -> None:
        for name, factory in all_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(_WithoutOption(arg_parser, "--version"))  # xdsl-opt's names xdsl-opt
        arg_parser.prog = "spyre-opt"
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        add_version_argument(arg_parser)
        arg_parser.add_argument("--list-passes", action="store_true",
                                help="list the available passes with their options and exit")
        arg_parser.add_argument("--emit-irdl", action="store_true",
                                help="print the IRDL of the spyre and sdscbundle dialects (for mlir-opt "
                                     "--irdl-file) and exit")

    def register_all_targets(self) -> None:
        super().register_all_targets()
        self.available_targets["upstream-mlir"] = lambda: irdl.UpstreamMLIRTarget

    def setup_pipeline(self) -> None:
        """The ``-p`` passes; between them: verification, ``--print-between-passes``, ``--time-passes`` (stderr)."""
        timings: list[tuple[str, float]] = []
        started = time.perf_counter()

        def between(prev: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None) -> None:
            nonlocal started
            if prev is not None:
                timings.append((prev.name, time.perf_counter() - started))
                if self.args.print_between_passes and next_pass is not None:
                    write_ir_dump(sys.stderr, prev.name, module)
            if not self.args.disable_verify:
                verify_located(module)
            if self.args.time_passes and prev is not None and next_pass is None:
                write_rows(sys.stderr, "spyre-opt pass timing", [*timings, ("total", sum(t for _, t in timings))])
                timings.clear()
            started = time.perf_counter()

        self.pipeline = PassPipeline(parse_pipeline_spec(self.available_passes, self.args.passes), between)

    def run(self) -> int:
        if self.args.list_passes:
            print(list_passes(self.available_passes))
            return 0
        if self.args.emit_irdl:
            print(irdl.irdl_module())
            return 0
        if self.args.input_file == STDIO:  # as for mlir-opt, "-" is stdin and stdout
            self.args.input_file = None
        self.args.output_file = output_file(self.args.output_file)
        check_output_files(self.args.output_file)
        chunks, _ = self.prepare_input()
        output = io.StringIO()
        failed = False
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
        failed = failed and not self.args.verify_diagnostics
        self._write(output.getvalue(), failed)
        return 1 if failed else 0

    def _write(self, text: str, failed: bool) -> None:
        """The output of the chunks that succeeded: on stdout always, to ``-o`` only when none failed."""
        if self.args.output_file is None:
            sys.stdout.write(text)
        elif not failed:
            with open(self.args.output_file, "w") as f:
                f.write(text)

    def _report(self, message: str) -> None:
        print(message, file=sys.stdout if self.args.verify_diagnostics else sys.stderr)


class _WithoutOption:
    """An argument parser that ignores the arguments declaring ``option`` (for a base class's
    arguments, one of which this driver replaces); everything else goes to ``parser``."""

    def __init__(self, parser: argparse.ArgumentParser, option: str):
        self._parser = parser
        self._option = option

    def add_argument(self, *names: str, **kwargs: Any) -> argparse.Action | None:
        if self._option in names:
            return None
        return self._parser.add_argument(*names, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)


def parse_pipeline_spec(available: Mapping[str, Callable[[], type[ModulePass]]], spec: str) -> tuple[ModulePass, ...]:
    """The passes of ``-p spec``; a malformed spec, an unknown pass or a bad option is one :class:`SpyreError`."""
    try:
        specs = list(parse_pipeline(spec))
    except ArgSpecParseError as e:
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        column = lines[1].rpartition(":")[2]
        raise SpyreError(f"malformed pass pipeline '{spec}' at column {column}: {lines[-1]}") from None
    passes = []
    for pass_spec in specs:
        if pass_spec.name not in available:
            raise SpyreError(f"unknown pass '{pass_spec.name}' (spyre-opt --list-passes lists them)")
        try:
            passes.append(available[pass_spec.name]().from_pass_spec(pass_spec))
        except (ValueError, TypeError) as e:
            raise SpyreError(f"pass '{pass_spec.name}': {e}") from None
    return tuple(passes)


def list_passes(available: Mapping[str, Callable[[], type[ModulePass]]]) -> str:
    """One line per pass, by name: ``name{option: type = default, ...}  first sentence of its docstring``."""
    return "\n".join(_pass_line(name, factory()) for name, factory in sorted(available.items()))


def _pass_line(name: str, pass_cls: type[ModulePass]) -> str:
    options = [f"{opt.replace('_', '-')}: {typ.strip(QUOTE)} = {default}"
               for opt, typ, default in get_pass_option_infos(pass_cls)]
    braces = f"{{{', '.join(options)}}}" if options else ""
    return f"{name}{braces}  {_summary(pass_cls)}"


def _summary(pass_cls: type[ModulePass]) -> str:
    """The first sentence of the docstring's first paragraph, on one line."""
    paragraph = " ".join(inspect.cleandoc(pass_cls.__doc__ or "").split("\n\n")[0].split())
    if not paragraph:
        return f"(undocumented: {pass_cls.__module__}.{pass_cls.__name__})"
    return re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0]


def main(argv: Sequence[str] | None = None) -> int:
    """Run spyre-opt; returns the process exit code."""
    return run_tool("spyre-opt", lambda: SpyreOptMain(argv).run(), "spyre-opt", user_errors=(ValueError, OSError))


if __name__ == "__main__":
    sys.exit(main())
