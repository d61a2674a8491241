# Loading models for the tools: `model.py:factory` specs and `.pt2` files,
# exporting `(module_or_callable, example_inputs)` with hints preserved (and
# transformers' experts layers in a static form, importer/experts.py),
# staging a program's tensors as the inputs of its compiled manifest, and
# mapping between a call of the model and the manifest: its arguments to the
# manifest's inputs and back, the manifest's outputs to what the model
# returns.  Reads Python files and .pt2 archives; writes nothing.  Shared by
# spyre-import, spyre-compile, spyre-run and spyre_mlir.compile.
"""Model loading for the command-line tools.

``load_program("examples/add_mul_nested.py:build")`` imports the file by path,
calls ``build()``, and returns an ``ExportedProgram``: the factory's own, or one
exported from the ``(module_or_callable, example_inputs)`` it returned.
``load_program("model.pt2")`` is ``torch.export.load``.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import traceback
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.fx.traceback as fx_traceback
from torch.utils._pytree import tree_flatten, tree_structure, tree_unflatten

from spyre_mlir.diagnostics import SpyreError, first_line, model_code_error
from spyre_mlir.importer.core import graph_inputs, input_name
from spyre_mlir.importer.experts import static_experts
from spyre_mlir.importer.locations import user_frame
from spyre_mlir.importer.quiet import quiet_torch
from spyre_mlir.manifest import Manifest
from spyre_mlir.sources import factory_choices, parse_source
from spyre_mlir.timing import phase


@dataclass
class LoadedModel:
    """What a factory produced: the program, and the eager model when there is one."""

    program: torch.export.ExportedProgram
    module: torch.nn.Module | None = None
    example_inputs: tuple[Any, ...] | None = None


class _CallableModule(torch.nn.Module):
    """Wraps a plain function so that torch.export can trace it."""

    def __init__(self, fn: Callable[..., Any]):
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


def _named_wrapper(fn: Callable[..., Any]) -> torch.nn.Module:
    """A module whose ``forward`` has ``fn``'s parameter names (they become input names)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return _CallableModule(fn)
    simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
                 and p.name.isidentifier() and p.name != "self" for p in params)
    if not simple or not params:
        return _CallableModule(fn)
    names = ", ".join(p.name for p in params)
    scope: dict[str, Any] = {}
    exec(f"def forward(self, {names}):\n    return self.fn({names})\n", scope)
    cls = type(f"{getattr(fn, '__name__', 'fn')}_module", (_CallableModule,), {"forward": scope["forward"]})
    return cls(fn)


def as_module(fn_or_module: Any) -> torch.nn.Module:
    """``fn_or_module`` as an ``nn.Module``."""
    if isinstance(fn_or_module, torch.nn.Module):
        return fn_or_module
    if callable(fn_or_module):
        # Non-strict export records stack traces of `forward` frames only; an
        # anchor makes it keep the frames of the user's function too.
        anchor = getattr(torch.fx.proxy, "_register_stack_trace_anchor", None)
        if anchor is not None and hasattr(fn_or_module, "__code__"):
            anchor(fn_or_module)
        return _named_wrapper(fn_or_module)
    raise SpyreError(f"expected an nn.Module or a callable, got {type(fn_or_module).__name__}")


def export_model(fn_or_module: Any, example_inputs: Sequence[Any], *, strict: bool = False
                 ) -> torch.export.ExportedProgram:
    """``torch.export.export`` with ``spyre_hint`` annotations preserved, torch's own
    output held back (:func:`~spyre_mlir.importer.quiet.quiet_torch`), and transformers'
    experts layers in a static form (:func:`~spyre_mlir.importer.experts.static_experts`).

    Non-strict export runs inside ``torch.fx.traceback.preserve_node_meta()``,
    which is what keeps the hints; strict export keeps them by itself.
    """
    if not isinstance(example_inputs, (tuple, list)):
        raise SpyreError(f"the example inputs must be a tuple of the model's inputs, got "
                         f"{type(example_inputs).__name__}: pass (x,) for one input x")
    module = as_module(fn_or_module)
    inputs = tuple(example_inputs)
    _register_cache_structures()
    with quiet_torch(), static_experts():
        if strict:
            return torch.export.export(module, inputs, strict=True)
        with fx_traceback.preserve_node_meta():
            return torch.export.export(module, inputs, strict=False)


def _register_cache_structures() -> None:
    """transformers' pytree registration of ``DynamicCache`` (its own export recipe), when
    transformers is loaded: a decoder called as its author calls it returns one (``use_cache``
    defaults to true), and a decode step takes one; export then flattens it to its tensors."""
    if "transformers" not in sys.modules:
        return
    from transformers.integrations.executorch import register_dynamic_cache_export_support

    register_dynamic_cache_export_support()


def export_user_model(fn_or_module: Any, example_inputs: Sequence[Any]) -> torch.export.ExportedProgram:
    """:func:`export_model` for a caller's model object: a failure of ``torch.export`` (a model
    output it cannot flatten, an error in the model's code) is one :class:`SpyreError` located
    at the innermost line of the user's code in its traceback."""
    try:
        return export_model(fn_or_module, example_inputs)
    except SpyreError:
        raise
    except Exception as e:
        frame = user_frame("".join(traceback.format_tb(e.__traceback__)))
        raise SpyreError(f"torch.export raised {type(e).__name__}: {first_line(str(e))}".rstrip(": "),
                         loc=frame.short() if frame else None) from None


def load_factory(spec: str) -> Callable[[], Any]:
    """The function named by ``path/to/model.py:factory``."""
    source = parse_source(spec)
    if source.factory is None:
        raise SpyreError(f"expected 'model.py:factory', got '{spec}'", loc=spec)
    path, name = source.path, source.factory
    module_name = "_spyre_model_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(path))
    module = sys.modules.get(module_name)
    if module is None:
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        assert loader_spec is not None and loader_spec.loader is not None
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        directory = os.path.dirname(os.path.abspath(path))
        sys.path.insert(0, directory)
        try:
            # Compiled under the path as given, so that tracebacks, the graph's stack traces and
            # every location name the file as the user did.
            with open(path, "rb") as f:
                code = compile(f.read(), path, "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except Exception as e:
            del sys.modules[module_name]
            error = model_code_error(e, path)
            raise error from (None if error is e else e)  # the cause: the traceback --debug shows
        finally:
            if sys.path and sys.path[0] == directory:
                sys.path.pop(0)
    factory = getattr(module, name, None)
    if not callable(factory):
        raise SpyreError(f"no function '{name}' ({factory_choices(path)})", loc=path)
    return factory


def load_model(spec: str, *, strict: bool = False) -> LoadedModel:
    """Load ``model.py:factory`` or ``program.pt2``."""
    source = parse_source(spec)
    if source.factory is None:
        if not zipfile.is_zipfile(spec):
            raise SpyreError("not a .pt2 archive (torch.export.save writes one)", loc=spec)
        try:
            with quiet_torch(), phase("load", says=f"loading {spec}"):  # torch.export.load logs a traceback before it raises
                return LoadedModel(torch.export.load(spec))
        except Exception as e:
            raise SpyreError(f"cannot load the program: {first_line(str(e))}", loc=spec) from e
    path = source.path
    with phase("build model", says=f"building the model of {spec}"):
        factory = load_factory(spec)
        try:
            made = factory()
        except SpyreError:
            raise
        except Exception as e:
            raise model_code_error(e, path) from e
    code = getattr(factory, "__code__", None)
    where = f"{path}:{code.co_firstlineno}" if code is not None else path
    if isinstance(made, torch.export.ExportedProgram):
        return LoadedModel(made)
    if isinstance(made, (tuple, list)) and made and callable(made[0]) and (
            len(made) != 2 or not isinstance(made[1], (tuple, list))):
        returned = ", ".join(type(v).__name__ for v in made)
        raise SpyreError(f"factory '{source.factory}' returned ({returned}): the example inputs must be a tuple, "
                         "e.g. return model, (x,)", loc=where)
    if isinstance(made, (tuple, list)) and len(made) == 2 and isinstance(made[1], (tuple, list)):
        module = as_module(made[0])
        try:
            with phase("export", says="exporting it with torch.export"):
                program = export_model(module, made[1], strict=strict)
        except SpyreError:
            raise
        except Exception as e:
            raise model_code_error(e, path, "torch.export") from e  # the cause: the traceback --debug shows
        return LoadedModel(program, module, tuple(made[1]))
    raise SpyreError(f"factory '{source.factory}' must return an ExportedProgram or "
                     f"(module_or_callable, example_inputs), got {type(made).__name__}", loc=where)


def load_program(spec: str, *, strict: bool = False) -> torch.export.ExportedProgram:
    """The ``ExportedProgram`` of ``model.py:factory`` or ``program.pt2``."""
    return load_model(spec, strict=strict).program


def manifest_inputs(program: torch.export.ExportedProgram, user_inputs: Any, manifest: Manifest,
                    what: str) -> dict[str, Any]:
    """The tensor of every input of ``manifest`` by name, staged by the signature of
    ``program``, the program the manifest was compiled from (:func:`graph_inputs`).

    ``user_inputs`` are the program's user inputs (any pytree: a tuple of tensors, or
    ``(args, kwargs)``); parameters, buffers and lifted constants come from the
    program.  ``what`` names the model in errors.
    """
    user = torch.utils._pytree.tree_leaves(user_inputs)
    expected = [a for a in manifest.inputs if a.role == "input"]
    if len(expected) != len(user):
        raise SpyreError(f"the manifest has {len(expected)} graph inputs "
                         f"({', '.join(arg.name for arg in expected)}), {what} gives {len(user)}")
    values = graph_inputs(program, user)
    for arg in manifest.inputs:
        if arg.name not in values:
            raise SpyreError(f"{what} has no {arg.role} named '{arg.name}' (its exported program's inputs: "
                             f"{', '.join(values)}); was the directory compiled from it?")
    return {arg.name: values[arg.name] for arg in manifest.inputs}


def call_inputs(program: torch.export.ExportedProgram, args: Sequence[Any], kwargs: Mapping[str, Any],
                what: str) -> list[Any]:
    """The user inputs of the call ``model(*args, **kwargs)``, flattened in the order of
    ``program``, the model's exported program (what :func:`manifest_inputs` takes).

    Inputs are taken as the model takes them: positionally, or by the names of the
    exported forward's arguments, each structured as the example input it was exported
    with.  A missing, unknown, repeated or differently structured input is one
    :class:`SpyreError` naming it; ``what`` names the call in errors.
    """
    in_spec = program.call_spec.in_spec
    positional, keywords = in_spec.child(0).num_children, list(in_spec.child(1).context)
    names = list(program.module_call_graph[0].signature.forward_arg_names)
    assert names[positional:] == keywords, (names, keywords)
    if len(args) > positional:
        raise SpyreError(f"{what} takes {positional} positional input(s) ({', '.join(names[:positional])}), "
                         f"given {len(args)}")
    given = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise SpyreError(f"{what} got an unknown input '{name}' (the program's inputs: {', '.join(names)})")
        if name in given:
            raise SpyreError(f"{what} got input '{name}' twice, by position and by name")
        given[name] = value
    missing = [name for name in names if name not in given]
    if missing:
        raise SpyreError(f"{what} is missing input(s) {', '.join(repr(name) for name in missing)}")
    expected = [*in_spec.child(0).children(), *in_spec.child(1).children()]
    for name, spec in zip(names, expected):
        if tree_structure(given[name]) != spec:
            raise SpyreError(f"{what}: input '{name}' is not structured as the example input the program was "
                             "exported with (a tensor, or the same tuples, lists and dicts of tensors)")
    return tree_flatten((tuple(given[n] for n in names[:positional]), {n: given[n] for n in keywords}))[0]


def model_arguments(program: torch.export.ExportedProgram, inputs: Mapping[str, Any], example: Any) -> Any:
    """The model's arguments that give ``program`` the user inputs ``inputs`` (host arrays by
    manifest name): torch tensors of the dtypes of the example arguments ``example`` (the
    ``(args, kwargs)`` the program was exported with), in their structure; the inverse of
    :func:`manifest_inputs`, to run the model eagerly on what the interpreter runs."""
    leaves, spec = tree_flatten(example)
    names = [input_name(s) for s in program.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    tensors = [torch.tensor(np.asarray(inputs[name])).to(like.dtype) for name, like in zip(names, leaves, strict=True)]
    return tree_unflatten(tensors, spec)


def model_outputs(program: torch.export.ExportedProgram, outputs: Sequence[np.ndarray]) -> Any:
    """The host arrays ``outputs`` of the manifest compiled from ``program`` (in its order, the
    graph's user outputs) as the model returns them: torch tensors of the model's dtypes, in the
    model's output structure (``program.call_spec.out_spec``: a tensor, a tuple, list or dict, a
    transformers ``ModelOutput``)."""
    output = next(node for node in program.graph.nodes if node.op == "output")
    values = [node.meta["val"] for node, spec in zip(output.args[0], program.graph_signature.output_specs,
                                                     strict=True) if spec.kind.name == "USER_OUTPUT"]
    if len(values) != len(outputs):
        raise SpyreError(f"the exported program returns {len(values)} tensors, the manifest has {len(outputs)} "
                         "outputs; was the directory compiled from it?")
    tensors = [torch.from_numpy(np.array(array, order="C")).to(value.dtype)  # ascontiguousarray makes 0-d 1-d
               for array, value in zip(outputs, values)]
    return tree_unflatten(tensors, program.call_spec.out_spec)
