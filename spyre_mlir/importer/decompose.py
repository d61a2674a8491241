# Core-ATen decomposition of a torch.export program, node by node: each distinct node
# (its op, its arguments' shapes, strides and dtypes, its constants) is traced through the
# decomposition table once and its trace reused for every node like it, so a model of
# repeated layers pays for one layer's tracing.  Reads an ExportedProgram (graph,
# signature, node meta); writes a new ExportedProgram, or declines (None) for a program
# that needs torch's whole-program re-trace (mutations, symbolic shapes, autocast).
# Used by repair.decompose before run_decompositions.
"""Node-by-node decomposition into core ATen ops, each distinct node traced once.

``ExportedProgram.run_decompositions`` re-traces the whole program through functionalization
and the dispatcher: its time grows with the number of nodes (twice the export itself for a
40-layer transformer).  A functional program of fixed shapes needs less.  A node whose op is
core ATen, functional and not in the table is what the re-trace makes of it; any other node is
its op's decomposition, traced with ``make_fx`` on fake tensors of its arguments' shapes,
strides and dtypes, with the table split as ``run_decompositions`` splits it (composite ops
the table names decompose through the table's entry, the others it keeps whole).  Nodes alike
in all a trace reads share one trace, and values alike share one propagation, so the work
grows with the distinct nodes of a program, not with its depth: the ``decompose`` line of
``--time-passes`` counts the ops traced and those taken from an op traced alike.

Every value is propagated anew through the new graph, as the re-trace propagates it: a
decomposition may lay its result out otherwise than export recorded (attention's math
decomposition returns a permuted layout), and how a later ``reshape`` decomposes depends on it.

:func:`decompose_by_node` builds the graph ``run_decompositions`` would (the same ops in the
same order, named as its re-trace names them, dead values dropped) and declines, returning
``None``, any program where the two could differ: a mutating op (``detach_`` aside, which
changes nothing) or a mutated input, a symbolic shape, a higher-order op other than a
grad-mode region, an argument that is not a strided tensor or a hashable constant.
"""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch._dispatch.python import enable_python_dispatcher
from torch.export.exported_program import (
    _override_composite_implicit_decomp,
    _split_decomp_table_to_cia_and_python_decomp,
)
from torch.export.graph_signature import ExportGraphSignature, OutputSpec, TensorArgument
from torch.fx.experimental.proxy_tensor import make_fx

from spyre_mlir.timing import tally

_META = ("stack_trace", "nn_module_stack", "source_fn_stack", "custom", "from_node", "seq_nr", "torch_fn")
"""Node meta a decomposed node takes from the node it comes from, as the re-trace keeps it."""

_FUNCTIONAL_FORMS = {torch.ops.aten.lift_fresh_copy.default: torch.ops.aten.clone.default}
"""Ops the re-trace's functionalization writes as another: a lifted constant's copy is a clone."""

_GRAD_REGIONS = (torch.ops.higher_order.wrap_with_set_grad_enabled,)
"""Higher-order ops whose region is inlined: grad mode does not change an inference program."""

_Key = tuple[Any, ...]


class _Declined(Exception):
    """The program needs ``run_decompositions``; the message says why (for tests)."""


def _tensor_key(val: torch.Tensor) -> _Key:
    if val.layout != torch.strided:
        raise _Declined(f"an argument is a {val.layout} tensor")
    if any(not isinstance(d, int) for d in (*val.shape, *val.stride())):
        raise _Declined("a symbolic shape")
    return ("tensor", tuple(val.shape), tuple(val.stride()), val.dtype, val.device.type)


def _constant_key(leaf: Any) -> _Key:
    # A float by its repr: 0.0 == -0.0, but a trace of one is not a trace of the other.
    return (float, repr(leaf)) if isinstance(leaf, float) else (type(leaf), leaf)


def _key(target: Any, arguments: Any) -> _Key:
    """What a trace or a value of ``target`` on ``arguments`` (values in place of nodes) depends on."""
    leaves, spec = pytree.tree_flatten(arguments)
    key = (target, spec, tuple(_tensor_key(leaf) if isinstance(leaf, torch.Tensor) else _constant_key(leaf)
                               for leaf in leaves))
    try:
        hash(key)
    except TypeError:
        raise _Declined(f"an argument of {target} is not hashable") from None
    return key


def _without_value(node: torch.fx.Node) -> dict[str, Any]:
    """``node``'s meta but its value, which the new graph propagates anew."""
    return {name: data for name, data in node.meta.items() if name != "val"}


def _is_core(op: torch._ops.OpOverload, table: dict[Any, Any]) -> bool:
    """Whether the re-trace keeps ``op`` as it is: core ATen, functional, not in ``table``."""
    return (op not in table and torch.Tag.core in op.tags and not op._schema.is_mutable
            and not torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"))


class _Decomposer:
    """Copies a program's graph into a new one, each node decomposed; traces are cached by key and
    every value is propagated anew, as the re-trace computes it (a decomposition may lay out its
    result otherwise than the op did at export)."""

    def __init__(self, table: dict[Any, Any], python_table: dict[Any, Any], fake_mode: Any) -> None:
        self.table = table
        self.python_table = python_table
        self.fake_mode = fake_mode
        self.traces: dict[_Key, torch.fx.GraphModule] = {}
        self.values: dict[_Key, Any] = {}
        self.reused = 0
        self.graph = torch.fx.Graph()

    def run(self, graph: torch.fx.Graph, owner: torch.fx.GraphModule) -> torch.fx.Graph:
        """The decomposition of ``graph`` (whose regions are ``owner``'s attributes)."""
        env: dict[torch.fx.Node, Any] = {}
        for node in graph.nodes:
            if node.op == "placeholder":
                env[node] = self.graph.node_copy(node)
                env[node].name = node.name  # as export named it, where FX would not (`input`)
            elif node.op == "output":
                self.graph.node_copy(node, env.__getitem__)
            elif node.op == "get_attr" and all(user.target in _GRAD_REGIONS for user in node.users):
                continue
            elif node.op != "call_function":
                raise _Declined(f"a {node.op} node")
            else:
                env[node] = self._call(node, env, owner)
        self.graph.eliminate_dead_code()
        return self.graph

    def _call(self, node: torch.fx.Node, env: dict[torch.fx.Node, Any], owner: torch.fx.GraphModule) -> Any:
        """What ``node`` is in the new graph: a node, a tuple of them, or ``None``."""
        target = node.target
        if target is operator.getitem:
            source, index = node.args
            value = env[source]
            return self._copy(node, env, _without_value(node)) if isinstance(value, torch.fx.Node) else value[index]
        if target in _GRAD_REGIONS:
            return self._inline(getattr(owner, node.args[1].target), [env[a] for a in node.args[2:]])
        if not isinstance(target, torch._ops.OpOverload):
            raise _Declined(f"the call of {target}")
        if target is torch.ops.aten.detach_.default:
            return env[node.args[0]]
        if target._schema.is_mutable:
            raise _Declined(f"the mutating op {target}")
        if target in _FUNCTIONAL_FORMS:
            return self._copy(node, env, _without_value(node), _FUNCTIONAL_FORMS[target])
        if _is_core(target, self.table):
            return self._copy(node, env, _without_value(node))
        return self._decomposed(node, env)

    def _copy(self, node: torch.fx.Node, env: dict[torch.fx.Node, Any], meta: dict[str, Any],
              target: Any = None) -> torch.fx.Node:
        """A node of ``target`` (``node``'s op by default) on ``node``'s arguments in ``env``, named
        as the re-trace names it, with ``meta`` and, unless ``meta`` has it, its value propagated."""
        target = node.target if target is None else target
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), env.__getitem__)
        copy = self.graph.create_node("call_function", target, args, kwargs, name=_base_name(self.graph, target))
        copy.meta.update(meta)
        if "val" not in meta:
            copy.meta["val"] = self._value(target, args, kwargs)
        return copy

    def _value(self, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The value of ``target`` on the values of ``args`` and ``kwargs``; one fake tensor for every
        call of the same key (shapes, strides and dtypes are all a value is read for)."""
        values, kwvalues = torch.fx.node.map_arg((args, kwargs), lambda n: n.meta["val"])
        if target is operator.getitem:
            return values[0][values[1]]
        key = _key(target, (values, kwvalues))
        value = self.values.get(key)
        if value is None:
            with self.fake_mode:
                try:
                    value = target(*values, **kwvalues)
                except Exception as e:
                    if target is not torch.ops.aten.view.default:
                        raise _Declined(f"{target} on the re-traced values: {type(e).__name__}") from e
                    # A decomposition strided an operand otherwise than export did (sdpa's output
                    # [B, S, H * D] laid out heads first): the view reads the same elements in the
                    # same order as a reshape, which is what it imports as.
                    value = torch.ops.aten.reshape.default(*values, **kwvalues)
            self.values[key] = value
        return value

    def _inline(self, region: torch.fx.GraphModule, args: list[Any]) -> Any:
        """The decomposition of ``region``'s graph on ``args``, in this graph."""
        env: dict[torch.fx.Node, Any] = {}
        inputs = iter(args)
        for node in region.graph.nodes:
            if node.op == "placeholder":
                env[node] = next(inputs)
            elif node.op == "output":
                return torch.fx.node.map_arg(node.args[0], env.__getitem__)
            elif node.op == "call_function":
                env[node] = self._call(node, env, region)
            else:
                raise _Declined(f"a {node.op} node in a grad-mode region")
        raise _Declined("a grad-mode region without an output")

    def _decomposed(self, node: torch.fx.Node, env: dict[torch.fx.Node, Any]) -> Any:
        """``node``'s op traced through the table on values like its arguments', inlined; the trace
        is reused for every node of the same key."""
        leaves, spec = pytree.tree_flatten((node.args, node.kwargs))
        leaves = [env[leaf] if isinstance(leaf, torch.fx.Node) else leaf for leaf in leaves]
        values = [leaf.meta["val"] for leaf in leaves if isinstance(leaf, torch.fx.Node)]
        key = _key(node.target, torch.fx.node.map_arg((node.args, node.kwargs), lambda n: env[n].meta["val"]))
        trace = self.traces.get(key)
        if trace is None:
            trace = self.traces[key] = self._trace(node.target, leaves, spec, values)
        else:
            self.reused += 1
        inner_env: dict[torch.fx.Node, Any] = {}
        inputs = iter(leaf for leaf in leaves if isinstance(leaf, torch.fx.Node))
        meta = {name: node.meta[name] for name in _META if name in node.meta}
        for inner in trace.graph.nodes:
            if inner.op == "placeholder":
                inner_env[inner] = next(inputs)
            elif inner.op == "output":
                return torch.fx.node.map_arg(inner.args[0], inner_env.__getitem__)
            else:
                inner_env[inner] = self._copy(inner, inner_env, {"val": inner.meta["val"], **meta})
        raise _Declined(f"the trace of {node.name} has no output")

    def _trace(self, op: Any, leaves: list[Any], spec: Any, values: list[torch.Tensor]) -> torch.fx.GraphModule:
        """``op`` on ``leaves`` (tensors like ``values`` where a leaf is a node) through the table."""
        with self.fake_mode:
            examples = [_empty_like(v) for v in values]

        def call(*tensors: torch.Tensor) -> Any:
            it = iter(tensors)
            args, kwargs = pytree.tree_unflatten([next(it) if isinstance(leaf, torch.fx.Node) else leaf
                                                  for leaf in leaves], spec)
            return op(*args, **kwargs)

        trace = make_fx(call, decomposition_table=self.python_table, tracing_mode="fake")(*examples)
        for inner in trace.graph.nodes:
            if isinstance(inner.target, torch._ops.OpOverload) and inner.target._schema.is_mutable:
                raise _Declined(f"{op} decomposes into the mutating op {inner.target}")
            inner.meta["val"] = pytree.tree_map_only(torch.Tensor, self._owned, inner.meta.get("val"))
        return trace

    def _owned(self, value: torch.Tensor) -> torch.Tensor:
        """``value`` as a fake tensor of the program's mode (a trace without tensor inputs has its own)."""
        if getattr(value, "fake_mode", None) is self.fake_mode:
            return value
        with self.fake_mode:
            return _empty_like(value)


def _empty_like(value: torch.Tensor) -> torch.Tensor:
    """A tensor of ``value``'s shape, strides, dtype and device (in the active fake mode)."""
    return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device=value.device)


def _base_name(graph: torch.fx.Graph, target: Any) -> str:
    """The name the re-trace gives a node of ``target``, before the graph numbers it."""
    packet = target.overloadpacket.__name__ if isinstance(target, torch._ops.OpOverload) else target
    return graph._target_to_str(packet)


def decompose_by_node(program: torch.export.ExportedProgram,
                      table: dict[Any, Any]) -> torch.export.ExportedProgram | None:
    """``program`` decomposed into core ATen ops by ``table``, each distinct node traced once;
    ``None`` where only ``run_decompositions`` can (see the module docstring)."""
    if program.range_constraints or any(spec.kind.name not in ("USER_OUTPUT",)
                                        for spec in program.graph_signature.output_specs):
        return None
    fake_mode = torch._guards.detect_fake_mode([node.meta.get("val") for node in program.graph.nodes
                                                 if node.op == "placeholder"])
    if fake_mode is None:
        return None
    composites, python_table = _split_decomp_table_to_cia_and_python_decomp(dict(table))
    decomposer = _Decomposer(table, python_table, fake_mode)
    try:
        with _override_composite_implicit_decomp(composites), enable_python_dispatcher():
            graph = decomposer.run(program.graph, program.graph_module)
    except _Declined:
        return None
    tally("ops traced", len(decomposer.traces))
    tally("taken from an op traced alike", decomposer.reused)
    outputs = next(n for n in graph.nodes if n.op == "output").args[0]
    specs = [OutputSpec(spec.kind, TensorArgument(out.name), spec.target)
             for spec, out in zip(program.graph_signature.output_specs, outputs)]
    signature = ExportGraphSignature(program.graph_signature.input_specs, specs)
    # The program builds the graph's module (generating its Python code) once.
    return torch.export.ExportedProgram(root=program.graph_module, graph=graph, graph_signature=signature,
                                        state_dict=program.state_dict, range_constraints={},
                                        module_call_graph=program._module_call_graph,
                                        example_inputs=program.example_inputs, constants=program.constants)
