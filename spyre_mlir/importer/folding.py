# Compile-time evaluation (DESIGN §15): finds the nodes of a decomposed
# torch.export graph whose values depend only on shapes, constants and buffers
# and evaluates them once with torch on the host, and the nodes whose values
# depend on one single-element integer input of known range and tabulates them
# over that range.  Reads the graph, its signature and the program's buffers and
# lifted constants; writes nothing (the importer turns the values its compute
# ops read into spyre.fill ops, constant arguments and reads of tables).
"""Which nodes of a program are known at compile time, and their values; which
are tabulated over the values of one input, and their tables.

A node is known when it is a buffer or a lifted constant of the program (not a
user input, not a parameter: a user may change those between runs), or a
deterministic ATen op all of whose tensor arguments are known (``arange``,
``full``, and the ``cumsum``/``index``/bitwise/logical/``any`` chains that
build position ids, causal masks and rotary tables).  The importer emits no op
for a known node; where an emitted op reads one, the value becomes a constant
(:func:`splat_value` says when a ``spyre.fill`` suffices).

A node is tabulated (:func:`tabulate`) when it is not known and every data
input it depends on is one single-element integer user input ``p`` of known
range: a decode step's ``cache_position`` and the KV-cache row, the attention
mask and the rotary tables computed from it.  ``p``'s range is ``[0, N)``,
where ``N`` is the size of a dim that ``p``, or a value tabulated from it,
indexes (``index_put``, ``index_copy``, ``index_select``, ``embedding``,
``gather``, ``index``): torch raises on a larger value.  Where an index
computed from ``p`` leaves its dim (or torch raises) for a smaller value, the
range ends below it.  Each tabulated node an emitted op reads is evaluated for
every value in the range; the importer reads its table through ``p``, and the
runtime refuses a value outside the range.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

aten = torch.ops.aten

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
        elif node.op == "call_function" and (masked := _masked_by_known(node, known)) is not None:
            known.values[node] = masked
            known.evaluated += 1
    return known


def _masked_by_known(node: torch.fx.Node, known: KnownValues) -> torch.Tensor | None:
    """``x == -inf`` for ``x = s + m`` with ``m`` known and ``s`` computed (attention scores plus
    a mask: the guard of torch's safe softmax): ``m == -inf``, broadcast to ``x``'s shape, since a
    finite ``s`` (scores of finite inputs) plus ``m`` is ``-inf`` exactly where ``m`` is.  The
    chain that asks whether a row is all ``-inf`` is then known too, and a causal mask without
    padding proves no row is, so the guard selects the softmax everywhere.  None for any other
    node."""
    if node.target is not aten.eq.Scalar or len(node.args) != 2 or node.args[1] != float("-inf"):
        return None
    total = node.args[0]
    if not isinstance(total, torch.fx.Node) or total.target is not aten.add.Tensor or len(total.args) != 2:
        return None
    mask = [a for a in total.args if isinstance(a, torch.fx.Node) and a in known]
    scores = [a for a in total.args if isinstance(a, torch.fx.Node) and a not in known]
    val = total.meta.get("val")
    if len(mask) != 1 or len(scores) != 1 or not isinstance(val, torch.Tensor) or not val.is_floating_point() \
            or not isinstance(known[mask[0]], torch.Tensor) or total.kwargs.get("alpha", 1) != 1:
        return None
    return torch.eq(known[mask[0]], float("-inf")).expand(val.shape)


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
    return _deterministic(node) and all(arg in known for arg in node.all_input_nodes)


def _deterministic(node: torch.fx.Node) -> bool:
    return torch.Tag.nondeterministic_seeded not in getattr(node.target, "tags", ())


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


# --------------------------------------------------------------------------
# Tabulation over the values of one input
# --------------------------------------------------------------------------


INDEX_OPS = frozenset((aten.index_select.default, aten.gather.default, aten.index_copy.default,
                       aten.embedding.default, aten.index.Tensor, aten.index_put.default))
"""ATen ops that read integer tensors as indices (int32 on the device): :func:`index_arguments`."""


def index_arguments(node: torch.fx.Node) -> list[tuple[Any, torch.fx.Node | None, int]]:
    """The integer index tensors of an op of :data:`INDEX_OPS`: ``(index, table, dim)`` for each, the
    dim of the ``table`` its values address (torch raises on a value outside it); empty for any
    other op."""
    args, target = node.args, node.target
    if target in (aten.index_select.default, aten.gather.default, aten.index_copy.default):
        return [(args[2], args[0], args[1])]
    if target == aten.embedding.default:
        return [(args[1], args[0], 0)]
    if target in (aten.index.Tensor, aten.index_put.default):
        found, dim = [], 0
        for entry in args[1]:
            val = entry.meta.get("val") if isinstance(entry, torch.fx.Node) else None
            if isinstance(val, torch.Tensor) and val.dtype in (torch.bool, torch.uint8):
                dim += val.dim()  # a mask covers as many dims as it has
                continue
            if entry is not None:
                found.append((entry, args[0], dim))
            dim += 1
        return found
    return []


@dataclass
class Tabulation:
    """The nodes of one graph tabulated over the values of an input, and their tables."""

    domains: dict[torch.fx.Node, int] = field(default_factory=dict)
    """Each input of known range -> ``N``: it takes the values ``[0, N)``."""
    inputs: dict[torch.fx.Node, torch.fx.Node] = field(default_factory=dict)
    """Each tabulated op node -> the input its values depend on (the importer emits no op for it)."""
    tables: dict[torch.fx.Node, torch.Tensor] = field(default_factory=dict)
    """The values, stacked ``[N, *shape]``, of each tabulated node an emitted node reads, and of each
    input of known range an emitted node reads (row ``v`` is ``v``)."""
    unbounded: dict[torch.fx.Node, torch.fx.Node] = field(default_factory=dict)
    """Each op node whose values depend on one single-element integer input of unknown range (no
    index bounds it) -> that input."""
    invalid: dict[torch.fx.Node, str] = field(default_factory=dict)
    """Each input some index bounds but for whose value 0 the program is not valid -> why."""
    evaluated: int = 0
    """How many ATen op nodes were evaluated (each once per value of their input)."""

    def __contains__(self, node: torch.fx.Node) -> bool:
        return node in self.inputs

    def input_of(self, node: torch.fx.Node) -> torch.fx.Node:
        """The input ``node``'s values depend on (an input itself for an input)."""
        return self.inputs.get(node, node)


class _Many:
    """The data inputs of a node that is not tabulated: several, or one that is not a candidate."""


_MANY = _Many()


def _single_integer(node: torch.fx.Node) -> bool:
    val = node.meta.get("val")
    return (isinstance(val, torch.Tensor) and val.numel() == 1 and val.dtype != torch.bool
            and not val.dtype.is_floating_point and not val.dtype.is_complex)


def _sources(program: torch.export.ExportedProgram, known: KnownValues) -> dict[torch.fx.Node, Any]:
    """Per node, the one candidate input (a single-element integer user input) its values depend on,
    None for a known node, ``_MANY`` otherwise."""
    users = {spec.arg.name for spec in program.graph_signature.input_specs if spec.kind.name == "USER_INPUT"}
    source: dict[torch.fx.Node, Any] = {}
    for node in program.graph.nodes:
        if node in known:
            source[node] = None
        elif node.op == "placeholder":
            source[node] = node if node.name in users and _single_integer(node) else _MANY
        elif node.op == "call_function" and _deterministic(node):
            found = {source[a] for a in node.all_input_nodes} - {None}
            source[node] = found.pop() if len(found) == 1 else _MANY
        else:
            source[node] = _MANY
    return source


def tabulate(program: torch.export.ExportedProgram, known: KnownValues) -> Tabulation:
    """Find the nodes of ``program`` tabulated over the values of one input and evaluate those that
    a node outside them (neither known nor tabulated) reads, once per value.

    An input's range is ``[0, N)`` for the largest ``N`` no larger than any dim it (or a value
    tabulated from it) indexes such that the graph evaluates, every such index in its dim, for
    each value below ``N``.
    """
    tab = Tabulation()
    source = _sources(program, known)
    candidates = {node for node, s in source.items() if s is node}
    bounds: dict[torch.fx.Node, list[tuple[torch.fx.Node, int]]] = {}
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        for index, table, dim in index_arguments(node):
            p = source.get(index) if isinstance(index, torch.fx.Node) else None
            val = table.meta.get("val") if isinstance(table, torch.fx.Node) else None
            if p in candidates and isinstance(val, torch.Tensor) and val.dim():
                bounds.setdefault(p, []).append((index, int(val.shape[dim % val.dim()])))
    derived = {node: p for node, p in source.items() if p in candidates and node is not p}
    for node, p in derived.items():
        (tab.inputs if p in bounds else tab.unbounded)[node] = p
    for p, uses in bounds.items():
        read = [n for n, q in derived.items() if q is p and _read_outside(n, known, tab)]
        if _read_outside(p, known, tab):
            read.append(p)
        checks = [(index, size) for index, size in uses if index is not p]
        _evaluate(p, min(size for _, size in uses), read, checks, known, tab)
    return tab


def _read_outside(node: torch.fx.Node, known: KnownValues, tab: Tabulation) -> bool:
    """Whether a node that is neither known nor tabulated reads ``node``."""
    return any(user not in known and user not in tab for user in node.users)


def _evaluate(p: torch.fx.Node, limit: int, read: list[torch.fx.Node], checks: list[tuple[torch.fx.Node, int]],
              known: KnownValues, tab: Tabulation) -> None:
    """Evaluate what ``read`` and ``checks`` need for ``p`` = 0, 1, ... below ``limit`` while the
    graph evaluates and every checked index lies in its dim; record ``p``'s range and the tables."""
    wanted = [*read, *(index for index, _ in checks)]
    if not wanted:
        tab.domains[p] = limit
        return
    with torch.no_grad(), _tabulating():
        columns, count, why = _columns(_subgraph(p, wanted, known, tab), p, limit)
        for (index, size), column in zip(checks, columns[len(read):]):
            inside = _rows_in_range(column, size, count)
            if not all(inside):
                count, why = inside.index(False), f"the index '{index.name}' leaves [0, {size})"
    if count == 0:
        tab.invalid[p] = why or "no index bounds it"
        return
    tab.domains[p] = count
    for node, column in zip(read, columns):
        if column is not None:
            tab.tables[node] = column[:count]


def _columns(evaluate: Callable[[torch.Tensor], tuple[Any, ...]], p: torch.fx.Node,
             limit: int) -> tuple[list[torch.Tensor | None], int, str | None]:
    """The values ``evaluate`` gives for ``p`` = 0, 1, ... below ``limit``, each output's stacked
    (None for one that is not a tensor), the count of values it evaluated and why it stopped (None
    when it did not).  All at once (``torch.func.vmap``), else, when a value raises (or an op has no
    batched form), one at a time up to the first value that raises."""
    val = p.meta["val"]
    inputs = torch.arange(limit, dtype=val.dtype).reshape(limit, *val.shape)
    try:
        outputs = torch.func.vmap(evaluate)(inputs)
        return [x if isinstance(x, torch.Tensor) else None for x in outputs], limit, None
    except Exception:  # some value raises, or an op has no batched form: one value at a time below
        pass
    rows, why = [], None
    for v in range(limit):
        try:
            rows.append(evaluate(inputs[v]))
        except Exception as e:  # torch rejects the value: the range ends below it
            why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            break
    if not rows:
        return [], 0, why
    columns = [torch.stack(c) if all(isinstance(x, torch.Tensor) for x in c) else None for c in zip(*rows)]
    return columns, len(rows), why


def _rows_in_range(column: torch.Tensor | None, size: int, count: int) -> list[bool]:
    """For each of the first ``count`` rows of ``column`` (an index per value of the input), whether
    all its values lie in ``[0, size)``."""
    if column is None or column.dtype.is_floating_point or column.dtype == torch.bool:
        return [False] * count
    rows = column[:count].reshape(count, -1).to(torch.int64)
    if rows.shape[1] == 0:
        return [True] * count
    return ((rows.min(dim=1).values >= 0) & (rows.max(dim=1).values < size)).tolist()


def _subgraph(p: torch.fx.Node, wanted: list[torch.fx.Node], known: KnownValues,
              tab: Tabulation) -> Callable[[torch.Tensor], tuple[Any, ...]]:
    """``p``'s value -> the values of ``wanted`` (nodes tabulated from ``p``, or ``p``): the nodes
    they need copied into a graph module of their own (Python code torch.fx generates, no lookup
    per op), the known values they read passed in.  Counts the nodes in ``tab.evaluated``."""
    needed: set[torch.fx.Node] = set()
    stack = [n for n in wanted if n is not p]
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(a for a in node.all_input_nodes if a in tab.inputs)
    steps = [n for n in p.graph.nodes if n in needed]
    tab.evaluated += len(steps)
    graph = torch.fx.Graph()
    env = {p: graph.placeholder("p")}
    constants = []
    for node in steps:
        for a in node.all_input_nodes:
            if a not in env and a not in needed:
                env[a] = graph.placeholder(f"known_{len(constants)}")
                constants.append(known[a])
    for node in steps:
        env[node] = graph.node_copy(node, env.__getitem__)
    graph.output(tuple(env[n] for n in wanted))
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    return lambda value: module(value, *constants)


@contextlib.contextmanager
def _tabulating() -> Iterator[None]:
    """torch as a tabulation wants it: on one thread (its ops are small or, one value at a time,
    tiny, and intra-op threads can cost more to wake than the work: 1 ms for a cos of 4096
    elements on two busy cores, 7 µs on one), and without the warning ``vmap`` prints for an op
    it batches by a loop (``copy``; the values are right, only slower)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch._C._functorch._set_vmap_fallback_warning_enabled(False)
    try:
        yield
    finally:
        torch._C._functorch._set_vmap_fallback_warning_enabled(True)
        torch.set_num_threads(threads)


def same_rows(table: torch.Tensor) -> bool:
    """Whether every row of ``table`` (its values for each value of the input) holds the same bits:
    the value does not depend on the input after all."""
    rows = table.detach().reshape(len(table), -1)
    if rows.dtype in _SAME_WIDTH_INT:
        rows = rows.view(_SAME_WIDTH_INT[rows.dtype])
    return bool((rows == rows[:1]).all())


def identity_offset(table: torch.Tensor) -> int | None:
    """``c`` when every element of row ``v`` of the integer ``table`` is ``v + c`` (the value is the
    input plus a constant), else None."""
    if table.dtype.is_floating_point or table.dtype == torch.bool:
        return None
    rows = table.detach().reshape(len(table), -1).to(torch.int64)
    shifted = rows - torch.arange(len(table), dtype=torch.int64)[:, None]
    offset = int(shifted[0, 0])
    return offset if bool((shifted == offset).all()) else None


__all__ = ["KnownValues", "known_values", "splat_value", "Tabulation", "tabulate", "INDEX_OPS", "index_arguments",
           "same_rows", "identity_offset"]
