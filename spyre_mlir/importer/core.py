# The importer's engine: walks a decomposed torch.export graph and emits one
# func.func of spyre ops.  Reads an ExportedProgram (graph, signature, node
# meta: val, stack_trace, custom hints) and named dims; writes a ModuleOp.
# Which ATen op becomes which spyre ops is decided by the table in table.py,
# built with emitter.py's NodeEmitter; compile-time values become arguments
# through constants.py; how an input is held (an int32 index, 0/1 flags in a
# float type) is decided by elements.py.
# graph_inputs() gives each input's tensor under the name the importer gives it
# (spyre.name, the manifest's), through the program's signature.
"""``torch.export`` -> ``spyre`` dialect (DESIGN §4 stage 0).

Recipe of :func:`import_program`:

1. Decomposition into core ATen ops by :func:`decomposition_table` (node by node, each distinct
   node traced once, :mod:`~spyre_mlir.importer.decompose`; else ``run_decompositions()``).
2. One block argument per placeholder, with ``spyre.role``, ``spyre.name``
   (``spyre.target`` for parameters/buffers) and ``spyre.dims``.
3. Per ``call_function`` node: look its target up in the ATen table and call the
   emitter with a :class:`NodeEmitter` that stamps the node's location on every
   op and the node's hints on every compute op.
4. ``func.return`` of the user outputs (``spyre.name`` result attributes, one
   name each: an output that is an argument or an earlier output is an
   ``identity`` copy of its own); unused ops (e.g. layer norm's mean/rstd
   outputs) are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from xdsl.dialects import func, tensor
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue

from spyre_mlir.analysis.cost import EXPERTS_ATTR
from spyre_mlir.analysis.kernel_args import UPDATES_ATTR
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import HOST_DTYPE_ATTR, RANGE_ATTR, FillOp, HintAttr, PointwiseOp, ViewOp
from spyre_mlir.gc_tuning import fewer_collections
from spyre_mlir.importer.constants import ConstantArguments
from spyre_mlir.importer.elements import FLAG_RANGE, ReadTwoWays, element_type, input_element, split_index_reads
from spyre_mlir.importer.emitter import NodeEmitter, Unsupported, elem_of, ident, shape_of, tensor_type
from spyre_mlir.importer import experts, repair, selection
from spyre_mlir.importer.convolution import constant_padded, shifted_matmuls, unfolded
from spyre_mlir.importer.matvec import biased_product_and_sum, product_and_sum
from spyre_mlir.importer.folding import KnownValues, Tabulation, known_values, state_buffers, tabulate
from spyre_mlir.importer.locations import node_error, node_loc, node_origin, op_name
from spyre_mlir.importer.normalization import batch_norm_inference, group_norm
from spyre_mlir.importer.pooling import (
    average_pooled,
    bilinear_upsampled,
    block_means,
    max_pooled,
    nearest_upsampled,
)
from spyre_mlir.importer.quiet import quiet_torch
from spyre_mlir.importer.result_views import write_viewed_matmul_results
from spyre_mlir.hints import HINT_KEY_PREFIX, declared_dims, group_dim_names, tensor_dim_names
from spyre_mlir.timing import phase


# --------------------------------------------------------------------------
# The importer
# --------------------------------------------------------------------------

_ROLES = {
    "USER_INPUT": "input",
    "PARAMETER": "parameter",
    "BUFFER": "buffer",
    "CONSTANT_TENSOR": "buffer",
}

NamedDims = Mapping[str | int, Sequence[str] | Sequence[Sequence[str]]]


_STATE_PREFIXES = {"PARAMETER": "p_", "BUFFER": "b_", "CONSTANT_TENSOR": "c_"}


def input_name(spec: Any) -> str:
    """The name of a graph input (a ``graph_signature.input_specs`` entry) everywhere after
    import: its argument's ``spyre.name`` and its manifest name.  A user input's is its
    placeholder name (``x``, ``input_ids``); a parameter's, buffer's or lifted constant's is
    ``p_`` / ``b_`` / ``c_`` and its state-dict name (``p_layernorm_weight``,
    ``c_lifted_tensor_0``), as non-strict torch.export and ``run_decompositions()`` name the
    placeholder: the same before and after decomposition, whichever export named it first
    (strict export names it by the path the model read it through)."""
    prefix = _STATE_PREFIXES.get(spec.kind.name)
    if prefix is None or not isinstance(spec.target, str):
        return spec.arg.name
    return prefix + re.sub(r"[^a-zA-Z0-9]", "_", spec.target.lower())


def graph_inputs(program: torch.export.ExportedProgram, user_inputs: Sequence[Any]) -> dict[str, Any]:
    """The tensor of every input of ``program`` by :func:`input_name`, read through the
    program's own signature: user inputs from ``user_inputs`` (flattened, in order),
    parameters and buffers from ``program.state_dict`` and lifted constants (and
    non-persistent buffers) from ``program.constants``, by their spec's ``target``.
    An input with no tensor (too few user inputs, a target the tables lack) is absent.
    """
    tables = {**program.state_dict, **program.constants}
    user = iter(user_inputs)
    out: dict[str, Any] = {}
    for spec in program.graph_signature.input_specs:
        if spec.kind.name == "USER_INPUT":
            value = next(user, None)
            if value is not None:
                out[input_name(spec)] = value
        elif spec.target in tables:
            out[input_name(spec)] = tables[spec.target]
    return out


def _hint_attr(node: torch.fx.Node, renumber: Mapping[int, int]) -> ArrayAttr | None:
    custom = node.meta.get("custom") or {}
    found = []
    for key, payload in custom.items():
        if isinstance(key, str) and key.startswith(HINT_KEY_PREFIX):
            hint_id = int(key[len(HINT_KEY_PREFIX):])
            found.append((renumber.get(hint_id, hint_id), payload))
    if not found:
        return None
    return ArrayAttr([HintAttr(i, dict(p.get("tiles") or {}), dict(p.get("work_div") or {}))
                      for i, p in sorted(found, key=lambda t: t[0])])


def _collect_hint_ids(graph: torch.fx.Graph) -> list[int]:
    ids = set()
    for node in graph.nodes:
        for key in (node.meta.get("custom") or {}):
            if isinstance(key, str) and key.startswith(HINT_KEY_PREFIX):
                ids.add(int(key[len(HINT_KEY_PREFIX):]))
    return sorted(ids)


def _names_attr(groups: Sequence[Sequence[str]]) -> ArrayAttr:
    return ArrayAttr([ArrayAttr([StringAttr(n) for n in g]) for g in groups])


class _Importer:
    def __init__(self, ep: torch.export.ExportedProgram, named_dims: NamedDims | None,
                 func_name: str, renumber_hints: bool, original: torch.export.ExportedProgram):
        self.ep = ep
        self.original = original
        self.named_dims = dict(named_dims or {})
        self.func_name = func_name
        ids = _collect_hint_ids(ep.graph)
        self.renumber = {old: new for new, old in enumerate(ids, 1)} if renumber_hints else {}
        self.values: dict[torch.fx.Node, Any] = {}
        self.known = KnownValues()
        self.tabulation = Tabulation()
        self.block = Block()
        self.arg_types: list[Attribute] = []
        self.arg_attrs: list[DictionaryAttr] = []
        self.constants = ConstantArguments(self.block, self.arg_types, self.arg_attrs, self.known)

    # 1. arguments ---------------------------------------------------------------
    def _example_tensors(self) -> dict[str, Any]:
        """Example tensors by input name (user inputs, parameters, buffers, constants)."""
        user: list[Any] = []
        example = getattr(self.original, "example_inputs", None) or getattr(self.ep, "example_inputs", None)
        if example is not None:
            args, kwargs = example
            user = list(torch.utils._pytree.tree_leaves((args, kwargs)))
        return graph_inputs(self.ep, user)

    def _dims_for(self, index: int, spec: Any, shape: tuple[int, ...], example: Any) -> list[list[str]] | None:
        for key in (spec.arg.name, spec.target, index):
            if key is not None and key in self.named_dims:
                names = list(self.named_dims[key])
                if names and all(isinstance(n, str) for n in names):
                    return group_dim_names(shape, names, declared_dims() | _implied_sizes(names, shape),
                                           api=f"named_dims['{spec.arg.name}']")
                groups = [list(g) for g in names]
                if len(groups) != len(shape):
                    raise SpyreError(f"named_dims['{spec.arg.name}'] has {len(groups)} groups for a "
                                     f"tensor of rank {len(shape)}")
                return groups
        return tensor_dim_names(example)

    def check_supported(self) -> None:
        """One error naming every ATen op of the graph the table has no emitter for, each with its
        count and the model line of its first node, so that one run shows all a model needs.

        A program whose shapes or scalars depend on its input's values is one error about that
        first: the ops torch adds to check the sizes it cannot know are no problem of their own.
        """
        from spyre_mlir.importer.table import lookup

        self.check_data_independent()
        self.check_ranges()
        found: dict[str, list[torch.fx.Node]] = {}
        for node in self.ep.graph.nodes:
            if node.op == "call_function" and not self._computed(node) and lookup(node.target) is None:
                found.setdefault(op_name(node), []).append(node)
        if not found:
            return
        first = next(iter(found.values()))[0]
        if len(found) == 1:
            (name, nodes), = found.items()
            times = f" ({len(nodes)} times)" if len(nodes) > 1 else ""
            raise node_error(first, f"unsupported ATen op '{name}'{times}")
        parts = []
        for name, nodes in found.items():
            count = f"{len(nodes)} times" if len(nodes) > 1 else "once"
            parts.append(f"'{name}' ({count}, first at {node_origin(nodes[0])})")
        raise node_error(first, f"unsupported ATen ops: {', '.join(parts)}")

    def check_ranges(self) -> None:
        """One error where a value computed from a single-element integer input alone cannot be
        tabulated over the input's values: where the device reads it and the input indexes nothing
        (its range is unknown), or where the input indexes a tensor but no value is valid."""
        for p, why in self.tabulation.invalid.items():
            raise node_error(p, f"input '{p.name}' indexes a tensor, but the program is not valid for the value 0 "
                                f"({why}): its range of values [0, N) is empty")
        for node, p in self.tabulation.unbounded.items():
            if any(user not in self.tabulation.unbounded and not self._computed(user) for user in node.users):
                raise node_error(node, f"the values of '{op_name(node)}' depend on input '{p.name}', an integer "
                                       "whose range is unknown: Spyre computes such values at compile time for every "
                                       "value of the input, which needs its range; it is known when the input (or a "
                                       "value computed from it) indexes a tensor (index_select, embedding, gather, "
                                       "index, index_put, index_copy)")

    def _computed(self, node: torch.fx.Node) -> bool:
        """Whether the import computes ``node`` on the host (known or tabulated) instead of
        emitting it."""
        return node in self.known or node in self.tabulation

    def check_data_independent(self) -> None:
        """One error at the first node whose result's size (or a Python scalar) depends on the
        values of a tensor: torch gives it unbacked symbols (``u0``), Spyre compiles static shapes.

        ``x[x > 0]`` or ``torch.nonzero(x)`` (an ``aten.index.Tensor`` or ``aten.nonzero.default``
        whose length is the count of true elements) and ``x.max().item()`` (an
        ``aten._local_scalar_dense``) are such nodes.
        """
        for node in self.ep.graph.nodes:
            if not node.meta.get("unbacked_bindings"):
                continue
            val = node.meta.get("val")
            if any(isinstance(v, torch.Tensor) for v in (val if isinstance(val, (tuple, list)) else [val])):
                raise node_error(node, f"the program has a data-dependent output shape: the size of what "
                                 f"'{op_name(node)}' returns depends on the values of its input, and Spyre "
                                 "compiles static shapes only; keep the shape static with a mask, e.g. "
                                 "torch.where(mask, x, 0) instead of x[mask] or torch.nonzero")
            raise node_error(node, f"the program reads a tensor's value into Python ('{op_name(node)}', as "
                             ".item(), int() or float() of a tensor do), which Spyre cannot compile; keep it "
                             "a tensor (x * m broadcasts a 1-element m)")

    def run(self) -> ModuleOp:
        ep = self.ep
        sig = ep.graph_signature
        examples = self._example_tensors()
        split_index_reads(ep.graph, lambda n: [u for u in n.users if u.target not in _NO_READ])
        self.known = known_values(ep, examples)
        self.tabulation = tabulate(ep, self.known)
        self.constants = ConstantArguments(self.block, self.arg_types, self.arg_attrs, self.known, self.values)
        self.check_supported()
        placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
        arg_types, arg_attrs = self.arg_types, self.arg_attrs
        arguments = []
        user_index = 0
        for node, spec in zip(placeholders, sig.input_specs):
            kind = spec.kind.name
            if not self._is_argument(node):
                continue
            role = _ROLES.get(kind)
            if role is None:
                raise node_error(node, f"unsupported graph input '{node.name}' of kind {kind}")
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor):
                raise node_error(node, f"unsupported non-tensor graph input '{node.name}' ({val!r})")
            shape = self._static_shape(node, val)
            if 0 in shape:
                raise node_error(node, f"graph input '{node.name}' has the empty shape {list(shape)}: Spyre computes "
                                 "on tensors with at least one element in every dim")
            elem, host_dtype = self._input_element(node, val)
            arg_types.append(tensor_type(elem, shape))
            attrs: dict[str, Attribute] = {"spyre.role": StringAttr(role),
                                           "spyre.name": StringAttr(input_name(spec))}
            if host_dtype is not None:
                attrs[HOST_DTYPE_ATTR] = StringAttr(host_dtype)
                attrs[RANGE_ATTR] = DenseArrayBase.from_list(i64, list(FLAG_RANGE))
            if spec.target is not None:
                attrs["spyre.target"] = StringAttr(spec.target)
            index = user_index if kind == "USER_INPUT" else spec.arg.name
            if kind == "USER_INPUT":
                user_index += 1
            dims = self._dims_for(index, spec, shape, examples.get(spec.arg.name))
            if dims is not None:
                attrs["spyre.dims"] = _names_attr(dims)
            if node in self.tabulation.domains:
                attrs[RANGE_ATTR] = DenseArrayBase.from_list(i64, [0, self.tabulation.domains[node]])
            arg_attrs.append(DictionaryAttr(attrs))
            arguments.append(node)

        block = self.block
        for node, arg_type in zip(arguments, arg_types):
            arg = block.insert_arg(arg_type, len(block.args))
            self.values[node] = arg
            arg.name_hint = ident(node.name)

        # 2. nodes
        output_node = None
        for node in ep.graph.nodes:
            if node.op == "placeholder" or self._computed(node):
                continue
            if node.op == "output":
                output_node = node
                continue
            if node.op != "call_function":
                raise node_error(node, f"unsupported graph node '{node.name}' ({node.op})")
            self._emit(node, block)

        # 3. outputs
        assert output_node is not None
        results, res_attrs = [], []
        out_specs = sig.output_specs
        state = state_buffers(ep)
        buffers = {spec.target: spec for spec in sig.input_specs if spec.kind.name == "BUFFER"}
        names = {a.data["spyre.name"].data for a in arg_attrs if isinstance(a.data.get("spyre.name"), StringAttr)}
        for spec, out in zip(out_specs, output_node.args[0]):
            attrs: dict[str, Attribute] = {"spyre.name": StringAttr(getattr(spec.arg, "name", str(out)))}
            if spec.kind.name == "BUFFER_MUTATION":
                buffer = buffers[spec.target]
                if buffer.arg.name not in state:
                    continue  # only overwritten, never read: no state of the program (state_buffers)
                attrs = {UPDATES_ATTR: StringAttr(input_name(buffer))}
            elif spec.kind.name != "USER_OUTPUT":
                raise node_error(output_node, f"unsupported graph output '{spec.arg.name}' of kind "
                                 f"{spec.kind.name} (in-place mutation of a user input or parameter)")
            v = self._value(out, output_node) if isinstance(out, torch.fx.Node) else None
            if not isinstance(v, SSAValue):
                raise node_error(output_node, f"unsupported graph output {out!r}: not a tensor")
            if 0 in shape_of(v):
                raise node_error(output_node, f"graph output '{out.name}' has the empty shape {list(shape_of(v))}: "
                                 "Spyre computes tensors with at least one element in every dim")
            if "spyre.name" in attrs and (isinstance(v, BlockArgument) or v in results):
                taken = names | {a.data["spyre.name"].data for a in res_attrs if "spyre.name" in a.data}
                v, attrs["spyre.name"] = self._output_copy(v, out, attrs["spyre.name"].data, taken, block)
            results.append(v)
            res_attrs.append(DictionaryAttr(attrs))
        ret = func.ReturnOp(*results)
        block.add_op(ret)
        _drop_dead(block)
        _drop_unread_constants(block, arg_types, arg_attrs)
        write_viewed_matmul_results(block)
        f = func.FuncOp(self.func_name, (arg_types, [r.type for r in results]), Region(block),
                        arg_attrs=ArrayAttr(arg_attrs), res_attrs=ArrayAttr(res_attrs))
        folded = self._folded_ops()
        if folded:
            f.attributes[FOLDED_OPS_ATTR] = IntegerAttr(folded, i64)
        layers = _experts_layers(self.ep.graph)
        if layers:
            f.attributes[EXPERTS_ATTR] = ArrayAttr([StringAttr(layer) for layer in layers])
        return ModuleOp([f])

    def _folded_ops(self) -> int:
        """ATen ops evaluated at compile time, not counting a creation op (``full``, ``zeros``)
        that became a ``spyre.fill`` of its own: that is the op, not a fold."""
        fills = {node for (node, _), v in self.constants.made.items()
                 if isinstance(v.owner, FillOp) and not node.all_input_nodes}
        return self.known.evaluated + self.tabulation.evaluated - len(fills)

    def _input_element(self, node: torch.fx.Node, val: torch.Tensor) -> tuple[Attribute, str | None]:
        """How graph input ``node`` is held on the device (:func:`~spyre_mlir.importer.elements.input_element`):
        int64 token ids are staged as int32, the device's index type; an integer or bool input read as
        data (an attention mask) is held as 0/1 flags in a float type."""
        if node in self.tabulation.domains:
            return i32, None  # read through tables of its values (folding.tabulate)
        def users(n: torch.fx.Node) -> list[torch.fx.Node]:
            return [u for u in n.users if not self._computed(u) and u.target not in _NO_READ]

        try:
            held = input_element(node, users)
        except ReadTwoWays as e:
            raise node_error(e.user, f"graph input '{node.name}' ({val.dtype}): {e}") from None
        if held is None:  # located where the model reads it (an input has no line of its own)
            readers = users(node)
            raise node_error(readers[0] if readers else node, f"graph input '{node.name}' has unsupported dtype {val.dtype} "
                             "(Spyre has float16, bfloat16, float32, int8 and int32; integer inputs are "
                             "staged as int32 indices, or as 0/1 flags where they are read as data)")
        return held

    def _static_shape(self, node: torch.fx.Node, val: torch.Tensor) -> tuple[int, ...]:
        shape = []
        for s in val.shape:
            if not isinstance(s, int):
                what = op_name(node) if node.op == "call_function" else f"graph input '{node.name}'"
                raise node_error(node, f"dynamic shape {list(val.shape)} of {what} is unsupported: a program "
                                 "is compiled for static shapes; export one per shape, and a decode step "
                                 "against a static KV cache (transformers' TorchExportableModuleWithStaticCache, "
                                 "as spyre_mlir.generate does) rather than a cache that grows")
            shape.append(int(s))
        return tuple(shape)

    @staticmethod
    def _output_copy(v: SSAValue, out: torch.fx.Node, name: str, taken: set[str],
                     block: Block) -> tuple[SSAValue, StringAttr]:
        """A copy, at the end of ``block``, of output ``v`` that is an argument or an earlier output
        (``return x, x + 1``, ``return y, y``), so that every result is a tensor of its own, and
        ``name`` made one that no argument or earlier result has (``taken``): the manifest names
        each once."""
        copy = PointwiseOp("identity", [v], tensor_type(elem_of(v), shape_of(v)))
        copy.location = node_loc(out)[0]
        block.add_op(copy)
        unique, k = name, 1
        while unique in taken:
            unique, k = f"{name}_{k}", k + 1
        return copy.result, StringAttr(unique)

    def _emit(self, node: torch.fx.Node, block: Block) -> None:
        from spyre_mlir.importer.table import lookup

        name = op_name(node)
        emitter = lookup(node.target)
        if emitter is None:
            raise node_error(node, f"unsupported ATen op '{name}'")
        vals = node.meta.get("val")
        for v in (vals if isinstance(vals, (tuple, list)) else [vals]):
            if isinstance(v, torch.Tensor):
                self._static_shape(node, v)
        loc, _ = node_loc(node)
        cx = NodeEmitter(node, block, loc, _hint_attr(node, self.renumber), known=self._known_tensor,
                         constant=lambda value, elem: self.constants.made_for(node, value, elem, "const"),
                         input_range=self._input_range)
        args = torch.fx.node.map_arg(node.args, lambda n: self._value(n, node))
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: self._value(n, node))
        try:
            result = emitter(cx, *args, **kwargs)
        except Unsupported as e:
            raise node_error(node, f"unsupported ATen op '{name}': {e}") from None
        except TypeError as e:
            raise node_error(node, f"unsupported ATen op '{name}': unexpected arguments ({e})") from None
        self.values[node] = result

    def _known_tensor(self, node: Any) -> Any:
        """The compile-time value of ``node`` (an argument of the node being emitted), None when it
        is not known."""
        return self.known[node] if isinstance(node, torch.fx.Node) and node in self.known else None

    def _input_range(self, value: SSAValue) -> int | None:
        """``N`` when ``value`` is (a view of) an input that takes the values ``[0, N)``
        (``cache_position``, tabulated over its range), else None."""
        while isinstance(value.owner, ViewOp):
            value = value.owner.source
        return next((n for p, n in self.tabulation.domains.items() if self.values.get(p) is value), None)

    def _value(self, node: torch.fx.Node, consumer: torch.fx.Node) -> Any:
        if node in self.tabulation.tables:
            p = self.tabulation.input_of(node)
            return self.constants.read_table(node, consumer, self.values[p], self.tabulation.tables[node])
        if node in self.tabulation:
            raise Unsupported(f"'{node.name}' is computed from input '{self.tabulation.input_of(node).name}' but "
                              "its value is not a tensor")
        if node not in self.values and node in self.known:
            return self.constants.read(node, consumer)
        return self.values[node]

    # 4. values known at compile time --------------------------------------------------
    def _is_argument(self, node: torch.fx.Node) -> bool:
        """A placeholder is a function argument unless it is known and only nodes computed on the host
        read it, or it is known and its dtype is not a device dtype (it is then a constant where it is
        read)."""
        if node not in self.known:
            return True
        val = node.meta.get("val")
        read = any(not self._computed(user) for user in node.users)
        return read and isinstance(val, torch.Tensor) and element_type(val.dtype) is not None


_NO_READ = (torch.ops.aten._assert_tensor_metadata.default,)
"""ATen ops that read no value of their argument (checks of its metadata)."""

FOLDED_OPS_ATTR = "spyre.folded_ops"
"""Function attribute: how many ATen ops the import evaluated at compile time."""


def _experts_layers(graph: torch.fx.Graph) -> list[str]:
    """``"<module path>: <form and why>"`` of each mixture-of-experts layer, in graph order: the
    annotation :func:`~spyre_mlir.importer.experts.experts_forward` put on its nodes."""
    layers: dict[str, str] = {}
    for node in graph.nodes:
        form = (node.meta.get("custom") or {}).get(experts.ANNOTATION)
        if form is None:
            continue
        stack = list((node.meta.get("nn_module_stack") or {}).values())
        where = stack[-1][0] if stack else node_origin(node)
        if not any(where == layer or where.startswith(f"{layer}.") for layer in layers):
            layers[where] = form  # a node of a submodule (its activation) belongs to the layer before it
    return [f"{where}: {form}" for where, form in layers.items()]


def _implied_sizes(names: Sequence[str], shape: Sequence[int]) -> dict[str, int]:
    """Sizes of undeclared names, when names and dims pair one to one."""
    if len(names) == len(shape):
        return {n: s for n, s in zip(names, shape)}
    return {}


def _drop_dead(block: Block) -> None:
    """Erase the spyre ops and assemblies (``tensor.empty``, ``tensor.insert_slice``) nothing
    reads: an op's unused outputs (layer norm's mean), and what an emitter replaced (the
    concatenation and products of a rotary embedding computed on halves)."""
    for op in reversed(list(block.ops)):
        if (op.name.startswith("spyre.") or isinstance(op, tensor.EmptyOp | tensor.InsertSliceOp)) \
                and all(not r.uses for r in op.results):
            block.erase_op(op)


def _drop_unread_constants(block: Block, arg_types: list[Attribute], arg_attrs: list[DictionaryAttr]) -> None:
    """Erase the constant arguments no op reads (an emitter that read a compile-time index tensor's
    values, as a view's offsets, instead of the tensor)."""
    for i in reversed(range(len(block.args))):
        role = arg_attrs[i].data.get("spyre.role")
        if not block.args[i].uses and isinstance(role, StringAttr) and role.data == "constant":
            block.erase_arg(block.args[i])
            del arg_types[i], arg_attrs[i]


# ATen ops with an op func of their own: kept whole instead of decomposed
# (torch decomposes silu of fp16 into an fp32 sigmoid and mul with casts).
KEEP_WHOLE = ("silu", "softplus")


TORCH_DECOMPOSED = (torch.ops.aten.linalg_vector_norm.default,)
"""Core ATen ops that torch.export keeps whole and that torch's reference decompositions
(``torch._decomp``) write as ops the importer has: vector norms (wav2vec2's weight
normalisation)."""


def decomposition_table() -> dict[Any, Any]:
    """torch.export's default core-ATen table minus the ops in :data:`KEEP_WHOLE`, with convolutions
    as matmuls, constant padding and unfolding as concatenations
    (:mod:`~spyre_mlir.importer.convolution`), matmuls of one column and a short contraction as
    products and sums (:mod:`~spyre_mlir.importer.matvec`), pooling and upsampling
    (:mod:`~spyre_mlir.importer.pooling`), batch
    and group norms (:mod:`~spyre_mlir.importer.normalization`), torch's own decompositions of
    :data:`TORCH_DECOMPOSED`, and selections by value as reductions
    (:mod:`~spyre_mlir.importer.selection`)."""
    table = torch.export.default_decompositions()
    for name in KEEP_WHOLE:
        op = getattr(torch.ops.aten, name).default
        if op in table:
            del table[op]
    table[torch.ops.aten.convolution.default] = shifted_matmuls
    table[torch.ops.aten.constant_pad_nd.default] = constant_padded
    table[torch.ops.aten.im2col.default] = unfolded
    table[torch.ops.aten.mm.default] = product_and_sum
    table[torch.ops.aten.bmm.default] = product_and_sum
    table[torch.ops.aten.addmm.default] = biased_product_and_sum
    table[torch.ops.aten.max_pool2d_with_indices.default] = max_pooled
    table[torch.ops.aten.avg_pool2d.default] = average_pooled
    table[torch.ops.aten.adaptive_avg_pool2d.default] = block_means
    table[torch.ops.aten._adaptive_avg_pool2d.default] = block_means
    table[torch.ops.aten.upsample_nearest2d.vec] = nearest_upsampled
    table[torch.ops.aten.upsample_bilinear2d.vec] = bilinear_upsampled
    table[torch.ops.aten._native_batch_norm_legit_no_training.default] = batch_norm_inference
    table[torch.ops.aten.native_group_norm.default] = group_norm
    table.update(torch._decomp.get_decompositions(TORCH_DECOMPOSED))
    table.update(selection.TABLE)
    return table


@fewer_collections()
def import_program(exported_program: torch.export.ExportedProgram, *, named_dims: NamedDims | None = None,
                   func_name: str = "main", renumber_hints: bool = True,
                   decompose: bool = True) -> ModuleOp:
    """Import a ``torch.export`` program as one ``func.func`` of ``spyre`` ops.

    ``named_dims`` maps a user input (placeholder name or position among the
    user inputs) or a parameter/buffer (placeholder or state-dict name) to its
    dimension names: a flat list grouped by extents, or one list per dim.
    Without it, names come from :func:`spyre_mlir.name_tensor_dims` on the
    program's example inputs and state dict.  Hint ids are renumbered 1..n in
    their original order (nesting order is kept, the output is deterministic),
    unless ``renumber_hints=False``.  Errors are :class:`SpyreError` located at
    the user's model line.
    """
    with quiet_torch():
        ep = exported_program
        if decompose:
            with phase("decompose", says="decomposing it into core ATen ops"):
                ep = repair.decompose(exported_program, decomposition_table())
        with phase("import", says="importing it into the spyre dialect"):
            return _Importer(ep, named_dims, func_name, renumber_hints, exported_program).run()


__all__ = ["import_program", "graph_inputs", "input_name", "decomposition_table"]

