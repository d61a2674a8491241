# Repairs of torch.export programs before their decomposition: what a model does that
# torch's own `run_decompositions()` cannot take, rewritten into the program torch
# would have exported had it seen through the model.  Reads an ExportedProgram's
# graph, signature, constants and state dict; rewrites them in place.  Used by
# import_program.
"""Repairs of exported programs, and torch's decomposition with its failures located.

Non-strict ``torch.export`` lifts a tensor the model reaches through a Python object
other than a module attribute as a constant, even when it is the very tensor of a
registered buffer: transformers' ``TorchExportableModuleWithStaticCache`` registers each
static-cache layer's keys and values as buffers, and the model writes them through the
cache object.  The program then mutates a constant, which ``run_decompositions()``
refuses (``expected compiled_fn to be GraphModule``).  :func:`rebind_buffer_aliases`
reads such a constant as the buffer it is, so the write becomes a buffer mutation.

A ``DynamicCache`` input (``register_dynamic_cache_export_support``) is a pytree node whose
unflattening builds a new cache: each layer starts from an empty tensor, which export lifts
as a constant concatenated with the past keys or values.  ``run_decompositions()`` calls the
program again through its input structure, builds a cache anew, lifts new empty constants
and refuses them (``Constant tensor lifted_tensor_4 is not in the constants dictionary``).
:func:`drop_empty_concatenands` removes the empty constants (a concatenation ignores them),
and :func:`decompose` traces the program with its inputs flattened.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import torch
import torch.utils._pytree as pytree

from spyre_mlir.diagnostics import SpyreError, first_line
from spyre_mlir.importer.decompose import decompose_by_node
from spyre_mlir.importer.locations import user_frame


def _storage_key(tensor: torch.Tensor) -> tuple[Any, ...]:
    return (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape), tensor.stride(),
            tensor.dtype)


def _lifted_constants(program: torch.export.ExportedProgram) -> list[tuple[Any, torch.Tensor]]:
    """The input specs of ``program``'s lifted constant tensors, each with its tensor."""
    found = []
    for spec in program.graph_signature.input_specs:
        tensor = program.constants.get(spec.target) if spec.kind.name == "CONSTANT_TENSOR" else None
        if isinstance(tensor, torch.Tensor):
            found.append((spec, tensor))
    return found


def _forget_constant(program: torch.export.ExportedProgram, spec: Any) -> None:
    """Remove a lifted constant whose placeholder is gone from the signature and the constants."""
    program.graph_signature.input_specs.remove(spec)
    del program.constants[spec.target]


def rebind_buffer_aliases(program: torch.export.ExportedProgram) -> list[str]:
    """Read every lifted constant that is a registered buffer's tensor (the same storage, offset,
    shape, strides and dtype) as that buffer; returns the constants rebound (their targets)."""
    signature = program.graph_signature
    buffers = {}
    for spec in signature.input_specs:
        if spec.kind.name == "BUFFER":
            tensor = program.constants.get(spec.target, program.state_dict.get(spec.target))
            if isinstance(tensor, torch.Tensor) and not isinstance(tensor, torch._subclasses.FakeTensor):
                buffers.setdefault(_storage_key(tensor), spec)
    placeholders = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    rebound = []
    for spec, tensor in _lifted_constants(program):
        buffer = buffers.get(_storage_key(tensor))
        if buffer is None:
            continue
        node = placeholders[spec.arg.name]
        node.replace_all_uses_with(placeholders[buffer.arg.name])
        program.graph.erase_node(node)
        _forget_constant(program, spec)
        rebound.append(spec.target)
    if rebound:
        program.graph_module.recompile()
    return rebound


_COPIES = (torch.ops.aten.lift_fresh_copy.default, torch.ops.aten.detach.default, torch.ops.aten.detach_.default,
           torch.ops.aten.clone.default)
"""Ops that pass a lifted constant on unchanged."""


def drop_empty_concatenands(program: torch.export.ExportedProgram) -> list[str]:
    """Remove every lifted constant with no elements that only ``aten.cat`` reads (through
    copies): each concatenation then reads its other tensors, or is the one left.  Returns the
    constants removed (their targets)."""
    graph = program.graph
    placeholders = {node.name: node for node in graph.nodes if node.op == "placeholder"}
    dropped = []
    for spec, tensor in _lifted_constants(program):
        if tensor.numel() != 0:
            continue
        chain = [placeholders[spec.arg.name]]
        while len(chain[-1].users) == 1 and next(iter(chain[-1].users)).target in _COPIES:
            chain.append(next(iter(chain[-1].users)))
        cats = list(chain[-1].users)
        if not all(cat.target == torch.ops.aten.cat.default for cat in cats):
            continue
        for cat in cats:
            rest = [t for t in cat.args[0] if t is not chain[-1]]
            if len(rest) == 1:
                cat.replace_all_uses_with(rest[0])
                graph.erase_node(cat)
            else:
                cat.args = (rest, *cat.args[1:])
        for node in reversed(chain):
            graph.erase_node(node)
        _forget_constant(program, spec)
        dropped.append(spec.target)
    if dropped:
        program.graph_module.recompile()
    return dropped


def _custom_structure(spec: Any) -> bool:
    """Whether the pytree ``spec`` has a node other than a tuple, list or dict (a cache object)."""
    plain = (tuple, list, dict)
    stack = [spec]
    while stack:
        spec = stack.pop()
        if not spec.is_leaf() and spec.type not in plain:
            return True
        stack.extend(spec.children())
    return False


@contextmanager
def _flat_outputs(program: torch.export.ExportedProgram) -> Iterator[None]:
    """``program`` returning its user outputs flattened, one tensor per graph output, while in the
    context: a re-trace then builds no output structure of the model's (a ``DynamicCache`` a
    decoder returns, whose layers start from new empty constants)."""
    signature = program.module_call_graph[0].signature
    saved = signature.out_spec
    signature.out_spec = pytree.tree_structure(tuple(range(saved.num_leaves)))
    try:
        yield
    finally:
        signature.out_spec = saved


@contextmanager
def _flat_inputs(program: torch.export.ExportedProgram) -> Iterator[None]:
    """``program`` called with its user inputs flattened, one tensor per graph input, while in the
    context: a re-trace then builds no input structure of the model's."""
    signature = program.module_call_graph[0].signature
    saved = signature.in_spec, signature.forward_arg_names, program.example_inputs
    names = [spec.arg.name for spec in program.graph_signature.input_specs if spec.kind.name == "USER_INPUT"]
    leaves = tuple(pytree.tree_leaves(saved[2])) if saved[2] is not None else (None,) * len(names)
    signature.in_spec = pytree.tree_structure((leaves, {}))
    signature.forward_arg_names = names
    program.example_inputs = (leaves, {}) if saved[2] is not None else None
    try:
        yield
    finally:
        signature.in_spec, signature.forward_arg_names = saved[:2]
        program.example_inputs = saved[2]


def decompose(program: torch.export.ExportedProgram, table: dict[Any, Any]) -> torch.export.ExportedProgram:
    """``program`` decomposed by ``table`` after :func:`rebind_buffer_aliases` and
    :func:`drop_empty_concatenands`: node by node (:func:`~spyre_mlir.importer.decompose.decompose_by_node`),
    else by ``program.run_decompositions(table)`` with the inputs flattened where a pytree node of
    the model's structures them; a failure of torch's is one :class:`SpyreError` naming what torch
    raised, located at the model's forward."""
    rebind_buffer_aliases(program)
    drop_empty_concatenands(program)
    by_node = decompose_by_node(program, table)
    if by_node is not None:
        return by_node
    try:
        with ExitStack() as flat:
            if _custom_structure(program.call_spec.in_spec):
                flat.enter_context(_flat_inputs(program))
            if _custom_structure(program.call_spec.out_spec):
                flat.enter_context(_flat_outputs(program))
            return program.run_decompositions(table)
    except Exception as e:
        raise SpyreError(f"torch could not decompose the exported program: run_decompositions() raised "
                         f"{type(e).__name__}: {first_line(str(e))}", loc=_forward_location(program)) from e


def _forward_location(program: torch.export.ExportedProgram) -> str | None:
    """``file:line`` of the first node of ``program`` with a stack trace in user code, if any."""
    for node in program.graph.nodes:
        frame = user_frame(node.meta.get("stack_trace"))
        if frame is not None:
            return frame.short()
    return None
