# The importer's engine: walks a decomposed torch.export graph and emits one
# func.func of spyre ops.  Reads an ExportedProgram (graph, signature, node
# meta: val, stack_trace, custom hints) and named dims; writes a ModuleOp.
# Which ATen op becomes which spyre ops is decided by the table in table.py.
# graph_inputs() gives each input's tensor under the name the importer gives it
# (spyre.name, the manifest's), through the program's signature.
"""``torch.export`` -> ``spyre`` dialect (DESIGN §4 stage 0).

Recipe of :func:`import_program`:

1. ``run_decompositions()`` (default core-ATen table).
2. One block argument per placeholder, with ``spyre.role``, ``spyre.name``
   (``spyre.target`` for parameters/buffers) and ``spyre.dims``.
3. Per ``call_function`` node: look its target up in the ATen table and call the
   emitter with a :class:`NodeEmitter` that stamps the node's location on every
   op and the node's hints on every compute op.
4. ``func.return`` of the user outputs (``spyre.name`` result attributes);
   unused ops (e.g. layer norm's mean/rstd outputs) are dropped.
"""

from __future__ import annotations

import linecache
import os
import re
import sysconfig
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnknownLoc,
    f32,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap

from spyre_mlir.analysis.kernel_args import UPDATES_ATTR
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import (
    CONSTANT_VALUE_ATTR,
    ComputeOp,
    FillOp,
    HintAttr,
    MatmulOp,
    PointwiseOp,
    ReduceOp,
    ViewOp,
)
from spyre_mlir.gc_tuning import fewer_collections
from spyre_mlir.importer.folding import KnownValues, known_values, splat_value, state_buffers
from spyre_mlir.importer import repair
from spyre_mlir.importer.quiet import quiet_torch
from spyre_mlir.hints import HINT_KEY_PREFIX, declared_dims, group_dim_names, tensor_dim_names
from spyre_mlir.opfuncs import COPY

Scalar = int | float
Value = SSAValue

# --------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------

_ELEMENT_TYPES: dict[torch.dtype, Callable[[], Attribute]] = {
    torch.float16: Float16Type,
    torch.bfloat16: BFloat16Type,
    torch.float32: Float32Type,
    torch.int8: lambda: i8,
    torch.int32: lambda: i32,
}


def element_type(dtype: torch.dtype) -> Attribute | None:
    """The MLIR element type of a torch dtype, None when Spyre has none."""
    make = _ELEMENT_TYPES.get(dtype)
    return None if make is None else make()


def tensor_type(elem: Attribute, shape: Sequence[int]) -> TensorType:
    return TensorType(elem, list(shape))


def shape_of(v: Value) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def elem_of(v: Value) -> Attribute:
    assert isinstance(v.type, TensorType)
    return v.type.get_element_type()


def broadcast_shape(shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, n in enumerate(s):
            j = rank - len(s) + i
            if n != 1:
                out[j] = n
    return tuple(out)


# --------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>[^\n]*)\n'
                    r'(?P<code>[^\n]*)(?:\n(?P<marks>\s*[~^]+)\s*(?=\n|$))?')
_SKIP_DIRS = tuple(os.path.abspath(p) + os.sep for p in (
    os.path.dirname(torch.__file__),
    os.path.dirname(os.path.dirname(__file__)),  # spyre_mlir/
    sysconfig.get_paths()["stdlib"],
))


@dataclass(frozen=True)
class SourceLoc:
    """A line of the user's model."""

    file: str
    """The file as Python knows it: a model file as the user named it to the tools."""
    line: int
    col: int

    def short(self) -> str:
        return f"{self.file}:{self.line}"


def user_frame(stack_trace: str | None) -> SourceLoc | None:
    """The last frame of ``stack_trace`` outside torch, spyre_mlir and the stdlib."""
    if not stack_trace:
        return None
    found: SourceLoc | None = None
    for m in _FRAME.finditer(stack_trace):
        path = m["file"]
        if path.startswith("<") or os.path.abspath(path).startswith(_SKIP_DIRS):
            continue
        line = int(m["line"])
        col = 1
        source = linecache.getline(path, line)
        indent = len(source) - len(source.lstrip()) if source else 0
        marks = m["marks"]
        if marks:
            shown_indent = len(m["code"]) - len(m["code"].lstrip())
            first = min(i for i in (marks.find("^"), marks.find("~")) if i >= 0)
            col = indent + first - shown_indent + 1
        else:
            col = indent + 1
        found = SourceLoc(path, line, max(col, 1))
    return found


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def op_name(node: torch.fx.Node) -> str:
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return f"aten.{target._opname}.{target._overloadname}" if target.namespace == "aten" else str(target)
    return getattr(target, "__name__", str(target))


class Unsupported(Exception):
    """Raised by emitters: the node uses a form the importer cannot lower."""


# --------------------------------------------------------------------------
# Emission
# --------------------------------------------------------------------------


@dataclass
class NodeEmitter:
    """What an emitter gets: builders that stamp the node's location and hints."""

    node: torch.fx.Node
    block: Block
    location: Attribute
    hints: ArrayAttr | None
    created: list[Operation] = field(default_factory=list)

    # -- the node -----------------------------------------------------------
    @property
    def val(self) -> Any:
        return self.node.meta.get("val")

    def out_elem(self, like: Value | None = None) -> Attribute:
        """The node's element type; a bool result takes ``like``'s (Spyre has no bool)."""
        val = self.val
        v = val[0] if isinstance(val, (tuple, list)) else val
        if isinstance(v, torch.Tensor):
            if v.dtype == torch.bool and like is not None:
                return elem_of(like)
            elem = element_type(v.dtype)
            if elem is None:
                raise Unsupported(f"dtype {v.dtype} is not supported (Spyre has float16, bfloat16, "
                                  "float32 and int8)")
            return elem
        assert like is not None
        return elem_of(like)

    # -- builders -------------------------------------------------------------
    def _add(self, op: Operation) -> Value:
        if isinstance(op, ComputeOp):
            empty = next((v for v in (*op.operands, *op.results) if 0 in shape_of(v)), None)
            if empty is not None:
                raise Unsupported(f"it computes on a tensor of shape {list(shape_of(empty))}: Spyre computes "
                                  "on tensors with at least one element in every dim")
        op.location = self.location
        if isinstance(op, ComputeOp) and self.hints is not None:
            op.properties["hints"] = self.hints
        self.block.add_op(op)
        self.created.append(op)
        return op.results[0]

    def cast(self, v: Value, elem: Attribute) -> Value:
        if elem_of(v) == elem:
            return v
        owner = v.owner
        if isinstance(owner, FillOp):
            return self.fill(owner.fill_value(), shape_of(v), elem)
        if elem_of(v) == i32:
            raise Unsupported("an integer tensor (int64 inputs are staged as int32) is read only as the index "
                              "of embedding, index_select or gather")
        return self._add(PointwiseOp(COPY, [v], tensor_type(elem, shape_of(v))))

    def pointwise(self, op_func: str, operands: Sequence[Value], consts: Mapping[str, Scalar] | None = None,
                  elem: Attribute | None = None) -> Value:
        """An elementwise op; operands are cast to ``elem`` (default: the node's), and a
        ``spyre.fill`` the others broadcast to the result's shape is read as one element
        (:meth:`narrow_fills`)."""
        if elem is None:
            elem = self.out_elem(operands[0] if operands else None)
        operands = [self.cast(v, elem) for v in operands]
        shape = broadcast_shape([shape_of(v) for v in operands])
        operands = self.narrow_fills(operands, shape)
        return self._add(PointwiseOp(op_func, operands, tensor_type(elem, shape),
                                     {k: float(c) for k, c in (consts or {}).items()}))

    def narrow_fills(self, operands: Sequence[Value], shape: Sequence[int]) -> list[Value]:
        """``operands`` with each ``spyre.fill`` (a splat constant, such as a ``zeros_like`` folded
        at compile time) of more than one element made a fill of one element, where the other
        operands still broadcast to ``shape``: the op reads the value through broadcasting, not a
        tensor of copies from HBM."""
        narrowed = list(operands)
        for i, v in enumerate(narrowed):
            if not isinstance(v.owner, FillOp) or all(n == 1 for n in shape_of(v)):
                continue
            ones = (1,) * len(shape_of(v))
            if broadcast_shape([*(shape_of(w) for w in narrowed[:i] + narrowed[i + 1:]), ones]) == tuple(shape):
                narrowed[i] = self.fill(v.owner.fill_value(), ones, elem_of(v))
        return narrowed

    def binary(self, op_func: str, x: Value | Scalar, y: Value | Scalar,
               elem: Attribute | None = None, extra: Mapping[str, Scalar] | None = None) -> Value:
        """``op_func(x, y)`` where either side may be a Python scalar (a const)."""
        consts = dict(extra or {})
        operands = []
        for name, a in (("x", x), ("y", y)):
            if isinstance(a, SSAValue):
                operands.append(a)
            else:
                consts[name] = scalar(a)
        if not operands:
            raise Unsupported("both operands are scalars")
        return self.pointwise(op_func, operands, consts, elem)

    def reduce(self, op_func: str, x: Value, dims: Sequence[int] | None, keepdim: bool,
               elem: Attribute | None = None) -> Value:
        shape = shape_of(x)
        rank = len(shape)
        dims = sorted({d % rank for d in dims}) if dims else list(range(rank))
        if rank == 0:
            return x
        out = [1 if d in dims else n for d, n in enumerate(shape)] if keepdim else \
            [n for d, n in enumerate(shape) if d not in dims]
        elem = elem or self.out_elem(x)
        return self._add(ReduceOp(op_func, self.cast(x, elem), dims, tensor_type(elem, out)))

    def matmul(self, a: Value, b: Value) -> Value:
        sa, sb = shape_of(a), shape_of(b)
        if len(sa) < 2 or len(sb) < 2:
            raise Unsupported(f"matmul operands must have rank >= 2, got {list(sa)} and {list(sb)}")
        elem = self.out_elem(a)
        out = (*broadcast_shape([sa[:-2], sb[:-2]]), sa[-2], sb[-1])
        return self._add(MatmulOp(self.cast(a, elem), self.cast(b, elem), tensor_type(elem, out)))

    def view(self, x: Value, view_map: AffineMap, shape: Sequence[int]) -> Value:
        if tuple(shape) == shape_of(x) and view_map == AffineMap.identity(len(shape)):
            return x
        return self._add(ViewOp(x, view_map, tensor_type(elem_of(x), shape)))

    def fill(self, value: Scalar, shape: Sequence[int], elem: Attribute | None = None) -> Value:
        return self._add(FillOp(float(value), tensor_type(elem or self.out_elem(), shape)))

    def gather(self, table: Value, dim: int, index: Value, along: bool = False) -> Value:
        """``table`` read along ``dim`` at the values of the i32 ``index``: ``np.take``, or with
        ``along`` ``np.take_along_axis`` (``torch.gather``, see :meth:`PointwiseOp.gather`)."""
        shape = shape_of(index) if along else (*shape_of(table)[:dim], *shape_of(index), *shape_of(table)[dim + 1:])
        return self._add(PointwiseOp.gather(index, table, dim, tensor_type(elem_of(table), shape), along))

    def scatter(self, dest: Value, dim: int, index: Value, rows: Value) -> Value:
        """``dest`` with its rows along ``dim`` at the values of the 1-D i32 ``index`` replaced by
        ``rows`` (:meth:`PointwiseOp.scatter`: a row store, written in place)."""
        return self._add(PointwiseOp.scatter(index, rows, dest, dim))

    def upstream(self, op: Operation) -> Value:
        """An upstream op (``tensor.empty``, ``tensor.insert_slice``) at the node's location."""
        return self._add(op)


def scalar(a: Any) -> float:
    if isinstance(a, bool) or not isinstance(a, (int, float)):
        raise Unsupported(f"expected a number, got {a!r}")
    return float(a)


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


def input_name(spec: Any) -> str:
    """The name of a graph input (a ``graph_signature.input_specs`` entry) everywhere after
    import: its argument's ``spyre.name`` and its manifest name.  It is the placeholder name
    torch.export chose (``x``, ``p_layernorm_weight``, ``c_lifted_tensor_0``), which
    ``run_decompositions()`` keeps."""
    return spec.arg.name


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


def _node_loc(node: torch.fx.Node) -> tuple[Attribute, SourceLoc | None]:
    src = user_frame(node.meta.get("stack_trace"))
    if src is None:
        return NameLoc(StringAttr(node.name), UnknownLoc()), None
    return FileLineColLoc(StringAttr(src.file), IntAttr(src.line), IntAttr(src.col)), src


def _where(node: torch.fx.Node) -> str:
    """Where a node comes from: its model line, else the module that traced it (a node of a
    no-grad region has no line of its own), else its name."""
    _, src = _node_loc(node)
    if src is not None:
        return src.short()
    stack = node.meta.get("nn_module_stack") or {}
    if stack:
        path, cls = list(stack.values())[-1]
        return f"module '{path}' ({str(getattr(cls, '__name__', cls)).rsplit('.', 1)[-1]})"
    return f"node '{node.name}'"


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
        self.constants: dict[tuple[torch.fx.Node, Attribute], SSAValue] = {}
        self.block = Block()
        self.arg_types: list[Attribute] = []
        self.arg_attrs: list[DictionaryAttr] = []

    # 1. errors ----------------------------------------------------------------
    def fail(self, node: torch.fx.Node, msg: str) -> SpyreError:
        _, src = _node_loc(node)
        return SpyreError(msg, loc=src.short() if src else f"<node {node.name}>")

    # 2. arguments ---------------------------------------------------------------
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
        found: dict[str, list[torch.fx.Node]] = {}
        for node in self.ep.graph.nodes:
            if node.op == "call_function" and node not in self.known and lookup(node.target) is None:
                found.setdefault(op_name(node), []).append(node)
        if not found:
            return
        first = next(iter(found.values()))[0]
        if len(found) == 1:
            (name, nodes), = found.items()
            times = f" ({len(nodes)} times)" if len(nodes) > 1 else ""
            raise self.fail(first, f"unsupported ATen op '{name}'{times}")
        parts = []
        for name, nodes in found.items():
            count = f"{len(nodes)} times" if len(nodes) > 1 else "once"
            parts.append(f"'{name}' ({count}, first at {_where(nodes[0])})")
        raise self.fail(first, f"unsupported ATen ops: {', '.join(parts)}")

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
                raise self.fail(node, f"the program has a data-dependent output shape: the size of what "
                                f"'{op_name(node)}' returns depends on the values of its input, and Spyre "
                                "compiles static shapes only; keep the shape static with a mask, e.g. "
                                "torch.where(mask, x, 0) instead of x[mask] or torch.nonzero")
            raise self.fail(node, f"the program reads a tensor's value into Python ('{op_name(node)}', as "
                            ".item(), int() or float() of a tensor do), which Spyre cannot compile; keep it "
                            "a tensor (x * m broadcasts a 1-element m)")

    def run(self) -> ModuleOp:
        ep = self.ep
        sig = ep.graph_signature
        examples = self._example_tensors()
        self.known = known_values(ep, examples)
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
                raise self.fail(node, f"unsupported graph input '{node.name}' of kind {kind}")
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor):
                raise self.fail(node, f"unsupported non-tensor graph input '{node.name}' ({val!r})")
            shape = self._static_shape(node, val)
            if 0 in shape:
                raise self.fail(node, f"graph input '{node.name}' has the empty shape {list(shape)}: Spyre computes "
                                      "on tensors with at least one element in every dim")
            # int64 inputs (token ids) are staged as int32, the device's index type.
            elem = i32 if val.dtype == torch.int64 else element_type(val.dtype)
            if elem is None:
                raise self.fail(node, f"graph input '{node.name}' has unsupported dtype {val.dtype} "
                                      "(Spyre has float16, bfloat16, float32, int8 and int32; int64 is "
                                      "staged as int32)")
            arg_types.append(tensor_type(elem, shape))
            attrs: dict[str, Attribute] = {"spyre.role": StringAttr(role),
                                           "spyre.name": StringAttr(input_name(spec))}
            if spec.target is not None:
                attrs["spyre.target"] = StringAttr(spec.target)
            index = user_index if kind == "USER_INPUT" else spec.arg.name
            if kind == "USER_INPUT":
                user_index += 1
            dims = self._dims_for(index, spec, shape, examples.get(spec.arg.name))
            if dims is not None:
                attrs["spyre.dims"] = _names_attr(dims)
            arg_attrs.append(DictionaryAttr(attrs))
            arguments.append(node)

        block = self.block
        for node, arg_type in zip(arguments, arg_types):
            arg = block.insert_arg(arg_type, len(block.args))
            self.values[node] = arg
            arg.name_hint = _ident(node.name)

        # 3. nodes
        output_node = None
        for node in ep.graph.nodes:
            if node.op == "placeholder" or node in self.known:
                continue
            if node.op == "output":
                output_node = node
                continue
            if node.op != "call_function":
                raise self.fail(node, f"unsupported graph node '{node.name}' ({node.op})")
            self._emit(node, block)

        # 4. outputs
        assert output_node is not None
        results, res_attrs = [], []
        out_specs = sig.output_specs
        state = state_buffers(ep)
        buffers = {spec.target: spec for spec in sig.input_specs if spec.kind.name == "BUFFER"}
        for spec, out in zip(out_specs, output_node.args[0]):
            attrs: dict[str, Attribute] = {"spyre.name": StringAttr(getattr(spec.arg, "name", str(out)))}
            if spec.kind.name == "BUFFER_MUTATION":
                buffer = buffers[spec.target]
                if buffer.arg.name not in state:
                    continue  # only overwritten, never read: no state of the program (state_buffers)
                attrs = {UPDATES_ATTR: StringAttr(input_name(buffer))}
            elif spec.kind.name != "USER_OUTPUT":
                raise self.fail(output_node, f"unsupported graph output '{spec.arg.name}' of kind "
                                             f"{spec.kind.name} (in-place mutation of a user input or parameter)")
            v = self._value(out, output_node) if isinstance(out, torch.fx.Node) else None
            if not isinstance(v, SSAValue):
                raise self.fail(output_node, f"unsupported graph output {out!r}: not a tensor")
            if 0 in shape_of(v):
                raise self.fail(output_node, f"graph output '{out.name}' has the empty shape {list(shape_of(v))}: "
                                             "Spyre computes tensors with at least one element in every dim")
            results.append(v)
            res_attrs.append(DictionaryAttr(attrs))
        ret = func.ReturnOp(*results)
        block.add_op(ret)
        _drop_dead(block)
        f = func.FuncOp(self.func_name, (arg_types, [r.type for r in results]), Region(block),
                        arg_attrs=ArrayAttr(arg_attrs), res_attrs=ArrayAttr(res_attrs))
        folded = self._folded_ops()
        if folded:
            f.attributes[FOLDED_OPS_ATTR] = IntegerAttr(folded, i64)
        return ModuleOp([f])

    def _folded_ops(self) -> int:
        """ATen ops evaluated at compile time, not counting a creation op (``full``, ``zeros``)
        that became a ``spyre.fill`` of its own: that is the op, not a fold."""
        fills = {node for (node, _), v in self.constants.items()
                 if isinstance(v.owner, FillOp) and not node.all_input_nodes}
        return self.known.evaluated - len(fills)

    def _static_shape(self, node: torch.fx.Node, val: torch.Tensor) -> tuple[int, ...]:
        shape = []
        for s in val.shape:
            if not isinstance(s, int):
                what = op_name(node) if node.op == "call_function" else f"graph input '{node.name}'"
                raise self.fail(node, f"dynamic shape {list(val.shape)} of {what} is unsupported "
                                      "(symbolic dims are not implemented yet)")
            shape.append(int(s))
        return tuple(shape)

    def _emit(self, node: torch.fx.Node, block: Block) -> None:
        from spyre_mlir.importer.table import lookup

        name = op_name(node)
        emitter = lookup(node.target)
        if emitter is None:
            raise self.fail(node, f"unsupported ATen op '{name}'")
        vals = node.meta.get("val")
        for v in (vals if isinstance(vals, (tuple, list)) else [vals]):
            if isinstance(v, torch.Tensor):
                self._static_shape(node, v)
        loc, _ = _node_loc(node)
        cx = NodeEmitter(node, block, loc, _hint_attr(node, self.renumber))
        args = torch.fx.node.map_arg(node.args, lambda n: self._value(n, node))
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: self._value(n, node))
        try:
            result = emitter(cx, *args, **kwargs)
        except Unsupported as e:
            raise self.fail(node, f"unsupported ATen op '{name}': {e}") from None
        except TypeError as e:
            raise self.fail(node, f"unsupported ATen op '{name}': unexpected arguments ({e})") from None
        self.values[node] = result

    def _value(self, node: torch.fx.Node, consumer: torch.fx.Node) -> Any:
        if node not in self.values and node in self.known:
            return self._constant(node, consumer)
        v = self.values[node]
        if isinstance(v, _Missing):
            raise Unsupported(v.why)
        return v

    # 5. values known at compile time --------------------------------------------------
    def _is_argument(self, node: torch.fx.Node) -> bool:
        """A placeholder is a function argument unless it is known and only known nodes read it, or
        it is known and its dtype is not a device dtype (it is then a constant where it is read)."""
        if node not in self.known:
            return True
        val = node.meta.get("val")
        read = any(user not in self.known for user in node.users)
        return read and isinstance(val, torch.Tensor) and element_type(val.dtype) is not None

    def _constant(self, node: torch.fx.Node, consumer: torch.fx.Node) -> Any:
        """The known value of ``node`` as ``consumer`` reads it: a ``spyre.fill`` when every element
        is the same, else a function argument of role ``constant`` holding the values
        (``spyre.value``); Python values as they are."""
        value = self.known[node]
        if not isinstance(value, torch.Tensor):
            return value
        elem = self._constant_elem(value, consumer)
        key = (node, elem)
        if key not in self.constants:
            self.constants[key] = self._materialise(node, value, elem)
        return self.constants[key]

    def _constant_elem(self, value: torch.Tensor, consumer: torch.fx.Node) -> Attribute:
        """The element type a known tensor takes: its own for a float dtype, int32 for the index of
        an indirect access, else (bool, integers) the float type ``consumer`` computes in."""
        if value.dtype.is_floating_point and element_type(value.dtype) is not None:
            return element_type(value.dtype)
        if not value.dtype.is_floating_point and consumer.target in INDEX_CONSUMERS:
            return i32
        for candidate in (consumer, *consumer.all_input_nodes):
            val = candidate.meta.get("val")
            if isinstance(val, torch.Tensor) and val.dtype.is_floating_point and candidate not in self.known:
                elem = element_type(val.dtype)
                if elem is not None:
                    return elem
        raise self.fail(consumer, f"a compile-time {value.dtype} tensor feeds '{op_name(consumer)}', which "
                                  "computes in no float type (Spyre has float16, bfloat16, float32 and int8)")

    def _materialise(self, node: torch.fx.Node, value: torch.Tensor, elem: Attribute) -> SSAValue:
        shape = tuple(value.shape)
        host = value.detach().to(_TORCH_DTYPES.get(elem, torch.float32))
        splat = 0.0 if host.numel() == 0 else splat_value(host)  # an empty value holds any value
        if splat is not None:
            loc, _ = _node_loc(node)
            return NodeEmitter(node, self.block, loc, None).fill(splat, shape, elem)
        if elem == i32:
            wide = value.detach().to(torch.int64)
            if shape and (wide.min() < -2**31 or wide.max() >= 2**31):
                raise self.fail(node, f"an index computed at compile time does not fit in int32 "
                                      f"(range [{int(wide.min())}, {int(wide.max())}])")
            stored, data = i32, host.contiguous().numpy().tobytes()
        else:
            stored, data = f32, host.to(torch.float32).contiguous().numpy().tobytes()
        base = f"const_{node.name.lstrip('_')}"
        name = base if all(n is not node for n, _ in self.constants) else f"{base}_{len(self.constants)}"
        arg = self.block.insert_arg(tensor_type(elem, shape), len(self.block.args))
        arg.name_hint = _ident(name)
        self.arg_types.append(arg.type)
        self.arg_attrs.append(DictionaryAttr({
            "spyre.role": StringAttr("constant"), "spyre.name": StringAttr(name),
            CONSTANT_VALUE_ATTR: DenseIntOrFPElementsAttr(tensor_type(stored, shape), BytesAttr(data))}))
        return arg


FOLDED_OPS_ATTR = "spyre.folded_ops"
"""Function attribute: how many ATen ops the import evaluated at compile time."""

INDEX_CONSUMERS = (torch.ops.aten.embedding.default, torch.ops.aten.index_select.default,
                   torch.ops.aten.gather.default, torch.ops.aten.index_copy.default,
                   torch.ops.aten.index_put.default)
"""ATen ops that read an integer tensor as indices (int32 on the device)."""

_TORCH_DTYPES = {Float16Type(): torch.float16, BFloat16Type(): torch.bfloat16, Float32Type(): torch.float32,
                 i32: torch.int32}


@dataclass(frozen=True)
class _Missing:
    """A node output the importer does not produce (e.g. argmax indices)."""

    why: str


def missing(why: str) -> _Missing:
    return _Missing(why)


def _implied_sizes(names: Sequence[str], shape: Sequence[int]) -> dict[str, int]:
    """Sizes of undeclared names, when names and dims pair one to one."""
    if len(names) == len(shape):
        return {n: s for n, s in zip(names, shape)}
    return {}


def _ident(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _drop_dead(block: Block) -> None:
    for op in reversed(list(block.ops)):
        if op.name.startswith("spyre.") and all(not r.uses for r in op.results):
            block.erase_op(op)


# ATen ops with an op func of their own: kept whole instead of decomposed
# (torch decomposes silu of fp16 into an fp32 sigmoid and mul with casts).
KEEP_WHOLE = ("silu", "softplus")


def decomposition_table() -> dict[Any, Any]:
    """torch.export's default core-ATen table minus the ops in :data:`KEEP_WHOLE`."""
    table = torch.export.default_decompositions()
    for name in KEEP_WHOLE:
        op = getattr(torch.ops.aten, name).default
        if op in table:
            del table[op]
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
        ep = repair.decompose(exported_program, decomposition_table()) if decompose else exported_program
        return _Importer(ep, named_dims, func_name, renumber_hints, exported_program).run()


__all__ = ["import_program", "graph_inputs", "input_name", "NodeEmitter", "Unsupported", "missing", "user_frame",
           "element_type"]

