# Compile-time evaluation (DESIGN §15): finds the nodes of a decomposed
# torch.export graph whose values depend only on shapes, constants and buffers
# and evaluates them once with torch on the host.  Reads the graph, its
# signature and the program's buffers and lifted constants; writes nothing (the
# importer turns the values its compute ops read into spyre.fill ops or
# constant arguments).
"""Which nodes of a program are known at compile time, and their values.

A node is known when it is a buffer or a lifted constant of the program (not a
user input, not a parameter: a user may change those between runs), or a
deterministic ATen op all of whose tensor arguments are known (``arange``,
``full``, and the ``cumsum``/``index``/bitwise/logical/``any`` chains that
build position ids, causal masks and rotary tables).  The importer emits no op
for a known node; where an emitted op reads one, the value becomes a constant
(:func:`splat_value` says when a ``spyre.fill`` suffices).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

_KNOWN_INPUTS = ("BUFFER", "CONSTANT_TENSOR")


@dataclass
class KnownValues:
    """The known nodes of one graph and their values (tensors, tuples of them, Python values)."""

    values: dict[torch.fx.Node, Any] = field(default_factory=dict)
    evaluated: int = 0
    """How many ATen op nodes were evaluated on the host."""

    def __contains__(self, node: torch.fx.Node) -> bool:
        return node in self.values

    def __getitem__(self, node: torch.fx.Node) -> Any:
        return self.values[node]


def known_values(program: torch.export.ExportedProgram, inputs: Mapping[str, Any]) -> KnownValues:
    """Evaluate every node of ``program`` known at compile time.

    ``inputs`` holds the tensor of each graph input by placeholder name
    (:func:`spyre_mlir.importer.core.graph_inputs`); only buffers and lifted
    constants among them are used.  An op that torch fails to evaluate on the
    values is left to the importer (it then reports it like any other op).
    """
    known = KnownValues()
    kinds = {spec.arg.name: spec.kind.name for spec in program.graph_signature.input_specs}
    state = state_buffers(program)
    for node in program.graph.nodes:
        if node.op == "placeholder":
            if kinds.get(node.name) in _KNOWN_INPUTS and node.name in inputs and node.name not in state:
                known.values[node] = inputs[node.name]
        elif node.op == "call_function" and _foldable(node, known):
            args = torch.fx.node.map_arg(node.args, known.values.__getitem__)
            kwargs = torch.fx.node.map_arg(node.kwargs, known.values.__getitem__)
            try:
                with torch.no_grad():
                    known.values[node] = node.target(*args, **kwargs)
            except Exception:  # torch rejects the call: the importer reports the node instead
                continue
            known.evaluated += 1
    return known


def state_buffers(program: torch.export.ExportedProgram) -> set[str]:
    """The placeholders of the buffers that are the program's state: buffers it mutates (torch.export's
    buffer mutations) whose values it also reads (a KV cache).  A mutated buffer only overwritten
    (``aten.copy`` into it, as transformers' ``cumulative_length``) is no state: nothing the
    program computes depends on what it held."""
    signature = program.graph_signature
    mutated = set(signature.buffers_to_mutate.values())
    placeholders = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    state = set()
    for spec in signature.input_specs:
        node = placeholders.get(spec.arg.name)
        if spec.kind.name != "BUFFER" or spec.target not in mutated or node is None:
            continue
        if any(not (user.target is torch.ops.aten.copy.default and user.args[0] is node
                    and all(a is not node for a in user.args[1:])) for user in node.users):
            state.add(node.name)
    return state


def _foldable(node: torch.fx.Node, known: KnownValues) -> bool:
    tags = getattr(node.target, "tags", ())
    if torch.Tag.nondeterministic_seeded in tags:
        return False
    return all(arg in known for arg in node.all_input_nodes)


def splat_value(value: torch.Tensor) -> float | None:
    """The one value every element of ``value`` holds (bit for bit), else None."""
    if value.numel() == 0:
        return None
    flat = value.detach().reshape(-1)
    bits = flat.view(_SAME_WIDTH_INT[flat.dtype]) if flat.dtype in _SAME_WIDTH_INT else flat
    if not bool((bits == bits[0]).all()):
        return None
    return float(flat[0])


_SAME_WIDTH_INT = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
                   torch.float64: torch.int64}


__all__ = ["KnownValues", "known_values", "splat_value"]
