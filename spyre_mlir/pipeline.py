# The named pipeline `spyre-compile` and the in-process compile driver: import
# (model file, .pt2, or .mlir) -> the registered stages in order -> the writer,
# one process, no printing or parsing between passes.  Reads models / .mlir;
# writes an output directory through spyre_mlir.codegen.writer.
"""The compile pipeline.

:data:`COMPILE_STAGES` is the one source of truth for the order of the stages
of ``spyre-compile`` (DESIGN §4).  Every listed stage must be registered in
``SPYRE_PASSES``.

* :class:`SpyreCompilePass` (``spyre-opt -p 'spyre-compile{cores=4}'``) runs the stages;
* :func:`compile_module` runs them on a module and writes the output directory;
* :func:`compile` (``spyre_mlir.compile``) exports a torch program and compiles it.

The first stage, ``spyre-attach-target``, writes the target options (cores, LX
fraction) as the module's ``#spyre.target`` (DESIGN §14), keeping the module's
value of an option not given; every later stage reads the target from there.
The two drivers, the ``spyre-compile`` command line and :func:`compile`, take
the default core count from ``$SENCORES`` (:func:`spyre_mlir.hardware.driver_cores`)
before they build their :class:`CompileOptions`; nothing else reads the environment.
"""

from __future__ import annotations

import dataclasses
import io
import os
import shutil
import sys
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from spyre_mlir.analysis.decisions import shared_decisions
from spyre_mlir.analysis.kernel_args import check_kernel_names
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.gc_tuning import fewer_collections
from spyre_mlir.hardware import NUMERICS_IEEE, check_numerics, driver_cores, target_overrides
from spyre_mlir.mlir_text import make_context, parse_module, verify_located
from spyre_mlir.timing import phase

COMPILE_STAGES: tuple[str, ...] = (
    "spyre-attach-target",
    "spyre-mask-contractions",
    "spyre-propagate-named-dims",
    "spyre-stickify",
    "spyre-stage-layouts",
    "spyre-fold-views",
    "spyre-auto-tile",
    "spyre-coarse-tile",
    "spyre-pad-dims",
    "spyre-work-division",
    "spyre-plan-memory",
    "spyre-lower-to-bundle",
)
"""The passes of ``spyre-compile``, in order."""


def compile_stages(cores: int | None = None, span_tiling: bool = True, lx_solver: str = "auto",
                   lx_fraction: float | None = None, stage_inputs: bool = False,
                   auto_tile: bool = True) -> list[ModulePass]:
    """The stage passes, each given the options it takes of ``cores``, ``span_tiling``,
    ``lx_solver``, ``lx_fraction`` (None: the module's target keeps its value) and
    ``stage_inputs``; without ``auto_tile``, no spyre-auto-tile.  Bad options are one
    :class:`SpyreError` before any stage runs."""
    from spyre_mlir.passes import SPYRE_PASSES

    check_options(cores, lx_solver, lx_fraction)
    given = {"cores": cores, "span_tiling": span_tiling, "lx_solver": lx_solver, "lx_fraction": lx_fraction,
             "stage_inputs": stage_inputs}
    passes = []
    for name in COMPILE_STAGES:
        if name == "spyre-auto-tile" and not auto_tile:
            continue
        if name not in SPYRE_PASSES:
            raise SpyreError(f"pipeline stage '{name}' is not a registered pass")
        cls = SPYRE_PASSES[name]()
        options = {f.name: given[f.name] for f in dataclasses.fields(cls) if f.name in given}
        passes.append(cls(**options))
    return passes


def planning_stages(span_tiling: bool = True, lx_solver: str = "auto",
                    first: str = "spyre-coarse-tile") -> list[ModulePass]:
    """The stages that plan a module, from ``first`` up to memory planning, without
    spyre-pad-dims (which prices on clones of its own): what a candidate plan runs before the cost
    model prices it (spyre-auto-tile, spyre-pad-dims)."""
    stages = compile_stages(span_tiling=span_tiling, lx_solver=lx_solver, auto_tile=False)
    names = [s.name for s in stages]
    chosen = stages[names.index(first):names.index("spyre-lower-to-bundle")]
    return [s for s in chosen if s.name != "spyre-pad-dims"]


def check_options(cores: int | None, lx_solver: str, lx_fraction: float | None) -> None:
    """One :class:`SpyreError` for cores outside 1..32, an unknown LX solver or an LX
    fraction outside ``0 <= f < 1``."""
    from spyre_mlir.passes.plan_memory import check_lx_solver

    target_overrides(cores, lx_fraction, "spyre-compile")
    check_lx_solver(lx_solver, "spyre-compile")


@dataclass(frozen=True)
class SpyreCompilePass(ModulePass):
    """The whole pipeline: named dims, ..., work division, lowering to the SDSC bundle."""

    name = "spyre-compile"

    cores: int | None = None
    """Cores of the target, 1..32; None keeps the module's ``#spyre.target`` (else 32)."""

    span_tiling: bool = True
    """Let spyre-coarse-tile also tile ops that overflow the per-core span limit."""

    lx_solver: str = "auto"
    """LX solver of spyre-plan-memory: auto, greedy, firstfit, bestfit or valuefit (DESIGN §9)."""

    lx_fraction: float | None = None
    """Share of LX kept by the back end (0 <= f < 1); None keeps the module's ``#spyre.target`` (else 0.2)."""

    stage_inputs: bool = False
    """Stage user inputs, not only parameters, in the layout their readers want (spyre-stage-layouts)."""

    auto_tile: bool = True
    """Tile where the cost model predicts it pays, in a module without ``tiles`` hints (spyre-auto-tile)."""

    def __post_init__(self) -> None:
        check_options(self.cores, self.lx_solver, self.lx_fraction)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with shared_decisions():
            for stage in compile_stages(self.cores, self.span_tiling, self.lx_solver, self.lx_fraction,
                                        self.stage_inputs, self.auto_tile):
                stage.apply(ctx, op)


@dataclass(frozen=True)
class CompileOptions:
    """Options of one compile."""

    cores: int | None = None
    """Cores of the target, 1..32; None keeps the module's ``#spyre.target`` (else 32)."""
    force: bool = False
    """Replace a non-empty output directory."""
    print_ir_after_all: bool = False
    """Print the module after every stage (to ``log``)."""
    verify_each: bool = False
    """Verify after every stage, not only at the end."""
    span_tiling: bool = True
    """Let spyre-coarse-tile also tile ops that overflow the per-core span limit."""
    lx_solver: str = "auto"
    """LX solver of spyre-plan-memory: auto, greedy, firstfit, bestfit or valuefit (DESIGN §9)."""
    lx_fraction: float | None = None
    """Share of LX kept by the back end (0 <= f < 1); None keeps the module's ``#spyre.target`` (else 0.2)."""
    stage_inputs: bool = False
    """Stage user inputs, not only parameters, in the layout their readers want (spyre-stage-layouts)."""
    auto_tile: bool = True
    """Tile where the cost model predicts it pays, in a module without ``tiles`` hints (spyre-auto-tile)."""

    def __post_init__(self) -> None:
        check_options(self.cores, self.lx_solver, self.lx_fraction)


@fewer_collections()
def run_stages(module: ModuleOp, options: CompileOptions, log: TextIO = sys.stderr,
               planned: Callable[[ModuleOp], None] | None = None) -> list[tuple[str, float]]:
    """Run the pipeline stages on ``module`` in place; verify at the end (or after each).
    ``planned`` is called with the planned module, after memory planning and before the
    lowering (where the cost model reads it).  Each stage is a :func:`~spyre_mlir.timing.phase`
    that says its name and number (``spyre-stickify (3/10)``).

    Returns the wall time in seconds of every stage, in pipeline order.
    """
    for body in module.ops:
        if isinstance(body, func.FuncOp):
            check_kernel_names(body)
    ctx = make_context()
    timings = []
    stages = compile_stages(options.cores, options.span_tiling, options.lx_solver, options.lx_fraction,
                            options.stage_inputs, options.auto_tile)
    with shared_decisions():  # the clones the stages price and the module divide alike
        for number, stage in enumerate(stages, 1):
            if planned is not None and stage.name == COMPILE_STAGES[-1]:
                planned(module)
            start = time.perf_counter()
            with phase(stage.name, says=f"{stage.name} ({number}/{len(stages)})"):
                stage.apply(ctx, module)
            timings.append((stage.name, time.perf_counter() - start))
            if options.verify_each:
                verify_located(module)
            if options.print_ir_after_all:
                write_ir_dump(log, stage.name, module)
    with phase("verify"):
        verify_located(module)
    return timings


def write_ir_dump(log: TextIO, pass_name: str, module: ModuleOp) -> None:
    """Print ``module`` to ``log`` under mlir-opt's ``IR Dump After <pass>`` banner."""
    log.write(f"// -----// IR Dump After {pass_name} //----- //\n")
    Printer(stream=log).print_op(module)
    log.write("\n")


def load_source(source: str) -> ModuleOp:
    """The module of ``model.py:factory``, ``program.pt2`` or ``in.mlir``."""
    if source.endswith(".mlir"):
        try:
            text = Path(source).read_bytes()
        except OSError as e:
            raise SpyreError(f"cannot read '{source}': {e.strerror}") from None
        with phase("parse", says=f"parsing {source}"):
            return parse_module(make_context(), text, source)
    with phase("import torch", says="importing torch"):
        from spyre_mlir.importer import import_program, load_program

    return import_program(load_program(source))


def compile_module(module: ModuleOp, out_dir: str | os.PathLike[str], options: CompileOptions,
                   log: TextIO = sys.stderr, planned: Callable[[ModuleOp], None] | None = None) -> Path:
    """Run the pipeline on ``module`` and write ``out_dir`` (its manifest records the module's
    target); ``planned`` as in :func:`run_stages`."""
    from spyre_mlir.codegen.writer import write_output

    run_stages(module, options, log, planned)
    with phase("write", says=f"writing {out_dir}"):
        return write_output(module, out_dir, force=options.force)


@dataclass(frozen=True)
class CompiledProgram:
    """A compiled output directory and the exported program it was compiled from;
    ``run`` executes it on the reference interpreter."""

    directory: Path
    program: Any
    """The ``torch.export.ExportedProgram``: ``run`` stages its parameters, buffers and constants."""
    temporary: Path | None = None
    """The temporary directory holding ``directory``, removed when the program is
    garbage-collected or at interpreter exit; None for a user's ``out_dir`` (never removed)."""
    report: Any = None
    """The cost model's prediction for the plan (:class:`spyre_mlir.analysis.cost.CostReport`;
    ``report.table()`` is what ``spyre-compile --report`` prints)."""
    _session: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """The loaded output directory, once a run loaded it (:meth:`_loaded`)."""

    def __post_init__(self) -> None:
        if self.temporary is not None:
            weakref.finalize(self, shutil.rmtree, self.temporary, ignore_errors=True)

    def run(self, *args: Any, numerics: str = NUMERICS_IEEE, **kwargs: Any) -> Any:
        """What the model returns for the user inputs ``args`` and ``kwargs``, computed on the
        interpreter: torch tensors of the model's dtypes, in the model's output structure (a
        tensor, a tuple, list or dict of them, a transformers ``ModelOutput``).

        The inputs are taken as the model takes them, positionally or by the names of its
        arguments (numpy arrays or torch tensors); parameters, buffers and lifted constants come
        from the exported program.  An input of another shape or dtype than the compiled
        program's is one :class:`SpyreError` naming it: only exact conversions are made (int64
        token ids that fit in int32; :func:`spyre_mlir.interpreter.runner.host_array`).
        ``numerics`` (keyword only; a model argument of that name is given by position) is
        the interpreter's: ``'ieee'`` holds float16 as IEEE float16, ``'dlfloat16'`` as the
        device stores it (:func:`spyre_mlir.interpreter.runner.execute`).
        """
        from spyre_mlir.importer.loader import model_outputs

        outputs, _stats = self.run_by_name(*args, numerics=numerics, **kwargs)
        return model_outputs(self.program, list(outputs.values()))

    def run_by_name(self, *args: Any, numerics: str = NUMERICS_IEEE, **kwargs: Any) -> tuple[dict[str, Any], Any]:
        """:meth:`run`'s raw form, as :func:`spyre_mlir.interpreter.run` returns it: the outputs by
        manifest name (numpy arrays, in the manifest's order) and the run's statistics
        (:class:`spyre_mlir.interpreter.RunStats`).

        A buffer the program writes in place (a KV cache) is state: the first run stages the
        exported program's value of it, every later run finds what the previous one left
        (:meth:`state`), until :meth:`reset`."""
        from spyre_mlir.importer.loader import call_inputs, manifest_inputs
        from spyre_mlir.interpreter.runner import execute, host_inputs

        check_numerics(numerics)
        loaded = self._loaded()
        user = call_inputs(self.program, args, kwargs, "run()")
        inputs = manifest_inputs(self.program, user, loaded.manifest, "run()")
        state = self._session.pop("state", {})
        shared = loaded.devices[-1].shared if loaded.devices else set()
        if loaded.devices:
            held = (self._written(loaded) - self._session.pop("unstaged", set())) | shared
            inputs = {name: value for name, value in inputs.items() if name not in held}
        inputs.update(state)
        return execute(loaded, host_inputs(loaded.manifest, inputs, held=shared), numerics=numerics)

    def state(self) -> dict[str, Any]:
        """The buffers the program writes in place, by manifest name, as the last :meth:`run`
        left them (numpy arrays; empty before the first run)."""
        from spyre_mlir.interpreter.runner import state

        return state(self._loaded())

    def reset(self) -> None:
        """Forget the state: the next :meth:`run` stages the exported program's buffers again."""
        self._loaded().devices.clear()
        self._session.pop("state", None)
        self._session.pop("unstaged", None)

    def set_state(self, values: Mapping[str, Any]) -> None:
        """Start the next :meth:`run` from ``values`` (host arrays by manifest name) for the buffers
        it writes in place, instead of the exported program's or the last run's (another program's
        :meth:`state`: the prefill's cache for a decode step)."""
        written = self._written(self._loaded())
        unknown = sorted(set(values) - written)
        if unknown:
            raise SpyreError(f"set_state: {', '.join(unknown)} is no buffer the program writes in place "
                             f"(those are: {', '.join(sorted(written)) or 'none'})")
        self._session["state"] = dict(values)

    def share(self, other: CompiledProgram) -> list[str]:
        """Read and write ``other``'s device memory for the parameters and buffers both programs
        take from the same tensor and lay out alike (two programs of one model: the weights staged
        once, a KV cache ``other`` wrote read and extended by this one).  A buffer both write in
        place but lay out differently is handed over instead: the next :meth:`run` starts from
        ``other``'s value of it (:meth:`set_state`).  ``other`` must have run; its numerics are this
        program's until :meth:`reset`, which ends the sharing.  Returns the names shared."""
        from spyre_mlir.importer.core import graph_inputs
        from spyre_mlir.interpreter.device import Device

        theirs = other._loaded()
        if not theirs.devices:
            raise SpyreError(f"share: {other.directory} has not run yet; its memory holds no values")
        loaded = self._loaded()
        source = theirs.devices[-1]
        values, other_values = graph_inputs(self.program, ()), graph_inputs(other.program, ())
        same = {arg.name for arg in loaded.manifest.inputs
                if arg.role in ("parameter", "buffer") and arg.name in other_values
                and _same_tensor(values.get(arg.name), other_values[arg.name])}
        if not loaded.devices:
            loaded.devices.append(Device(loaded.manifest.args, loaded.config, source.numerics))
            self._session["unstaged"] = self._written(loaded)
        shared = loaded.devices[-1].share(source, same)
        handed = (self._written(loaded) & self._written(theirs) & same) - set(shared)
        if handed:
            self._session["state"] = {**self._session.get("state", {}), **{
                arg.name: source.read_back(arg) for arg in theirs.manifest.inputs if arg.name in handed}}
        self._session["unstaged"] = self._session.get("unstaged", set()) - same
        return shared

    def _loaded(self) -> Any:
        """The output directory, loaded once (:class:`spyre_mlir.interpreter.loading.OutputDir`):
        its simulated device, and the state on it, lives from one run to the next."""
        from spyre_mlir.interpreter.loading import load_output_dir
        from spyre_mlir.interpreter.schema import load_schema

        if "directory" not in self._session:
            self._session["directory"] = load_output_dir(self.directory, load_schema(None))
        return self._session["directory"]

    @staticmethod
    def _written(loaded: Any) -> set[str]:
        return {arg.name for arg in loaded.manifest.inputs if arg.written}


def _same_tensor(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are views of the same memory with the same shape, strides and dtype."""
    import torch

    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
            and a.shape == b.shape and a.stride() == b.stride() and a.data_ptr() == b.data_ptr())


def compile(fn_or_module: Callable[..., Any], example_inputs: Sequence[Any], *, cores: int | None = None,
            lx_solver: str = "auto", stage_inputs: bool = False, auto_tile: bool = True,
            out_dir: str | os.PathLike[str] | None = None) -> CompiledProgram:
    """Export ``fn_or_module`` on ``example_inputs`` and compile it for Spyre.

    ``cores`` defaults to ``$SENCORES`` (else 32); ``lx_solver`` is memory
    planning's LX solver (auto, greedy, firstfit, bestfit or valuefit); ``stage_inputs`` stages
    user inputs, like parameters, in the layout their readers want (the manifest
    says which; :meth:`CompiledProgram.run` stages them so); ``auto_tile=False``
    leaves a program without ``tiles`` hints untiled.  The output goes to
    ``out_dir`` (which must not be a non-empty directory), or to a fresh
    temporary directory that lives as long as the returned program.
    """
    from spyre_mlir.analysis.cost import cost_report
    from spyre_mlir.codegen.writer import check_output_directory
    from spyre_mlir.importer import import_program
    from spyre_mlir.importer.loader import export_user_model

    options = CompileOptions(cores=driver_cores(cores, "spyre_mlir.compile"), lx_solver=lx_solver,
                             stage_inputs=stage_inputs, auto_tile=auto_tile)
    if out_dir is not None:
        check_output_directory(out_dir)  # before the export
    program = export_user_model(fn_or_module, example_inputs)
    module = import_program(program)
    reports = []

    def planned(planned_module: ModuleOp) -> None:
        reports.append(cost_report(planned_module))

    if out_dir is not None:
        directory = compile_module(module, Path(out_dir), options, log=io.StringIO(), planned=planned)
        return CompiledProgram(directory, program, report=reports[0])
    temporary = Path(tempfile.mkdtemp(prefix="spyre-"))
    try:
        directory = compile_module(module, temporary / "out", options, log=io.StringIO(), planned=planned)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return CompiledProgram(directory, program, temporary, reports[0])
