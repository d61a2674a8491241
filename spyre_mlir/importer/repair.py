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
"""

from __future__ import annotations

from typing import Any

import torch

from spyre_mlir.diagnostics import SpyreError, first_line
from spyre_mlir.importer.locations import user_frame


def _storage_key(tensor: torch.Tensor) -> tuple[Any, ...]:
    return (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape), tensor.stride(),
            tensor.dtype)


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
    for spec in list(signature.input_specs):
        tensor = program.constants.get(spec.target) if spec.kind.name == "CONSTANT_TENSOR" else None
        buffer = buffers.get(_storage_key(tensor)) if isinstance(tensor, torch.Tensor) else None
        if buffer is None:
            continue
        node = placeholders[spec.arg.name]
        node.replace_all_uses_with(placeholders[buffer.arg.name])
        program.graph.erase_node(node)
        signature.input_specs.remove(spec)
        del program.constants[spec.target]
        rebound.append(spec.target)
    if rebound:
        program.graph_module.recompile()
    return rebound


def decompose(program: torch.export.ExportedProgram, table: dict[Any, Any]) -> torch.export.ExportedProgram:
    """``program.run_decompositions(table)`` after :func:`rebind_buffer_aliases`; a failure of torch's
    is one :class:`SpyreError` naming what torch raised, located at the model's forward."""
    rebind_buffer_aliases(program)
    try:
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
