# Element-type decisions of the importer: which MLIR element type a torch dtype
# is, how a graph input of an integer or bool dtype is held on the device (an
# int32 index, or 0/1 flags in a float type with the host dtype recorded for
# staging), and which float type an integer or bool value computed on the
# device, or known at compile time, takes.  Reads FX nodes and their meta;
# writes nothing.
"""Element types of torch values on Spyre (DESIGN §15 "Bool values").

Spyre computes in float16, bfloat16, float32 and int8, and reads int32 only as
the index of an indirect access; it has no bool and no integer arithmetic.  So:

* an integer graph input that only indirect accesses read (as their index) is
  staged as int32 (:func:`input_element`);
* an integer or bool graph input that the program reads as data (an
  ``attention_mask``) is held as 0/1 flags in :data:`FLAG_ELEMENT`; the
  argument records the host dtype (``spyre.host_dtype``) and the range
  ``[0, 2)``, and the runtime converts it when staging and refuses any other
  value;
* a bool or integer result of a device op takes the float type of the value it
  is computed from (:func:`result_element`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import torch
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, i8, i32
from xdsl.ir import Attribute

from spyre_mlir.importer.folding import INDEX_OPS, index_arguments
from spyre_mlir.importer.locations import op_name

aten = torch.ops.aten

_ELEMENT_TYPES: dict[torch.dtype, Callable[[], Attribute]] = {
    torch.float16: Float16Type,
    torch.bfloat16: BFloat16Type,
    torch.float32: Float32Type,
    torch.int8: lambda: i8,
    torch.int32: lambda: i32,
}

FLAG_ELEMENT = Float16Type()
"""The element type integer and bool inputs read as data are held in: 0 and 1 are exact."""

FLAG_RANGE = (0, 2)
"""The values ``[lo, hi)`` an input held as flags may take."""

HOLDABLE = (torch.bool, torch.int64, torch.int32, torch.int16, torch.uint8)
"""Host dtypes an input held as flags may have."""


def element_type(dtype: torch.dtype) -> Attribute | None:
    """The MLIR element type of a torch dtype, None when Spyre has none."""
    make = _ELEMENT_TYPES.get(dtype)
    return None if make is None else make()


def dtype_of(node: object) -> torch.dtype | None:
    """The dtype of the tensor an FX node computes, None for anything else."""
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val.dtype if isinstance(val, torch.Tensor) else None


def is_integral(dtype: torch.dtype) -> bool:
    """Whether ``dtype`` is an integer or bool dtype."""
    return not dtype.is_floating_point and not dtype.is_complex


class ReadTwoWays(Exception):
    """An integer input read both as an index and as data: ``user`` reads it as the index."""

    def __init__(self, user: torch.fx.Node, message: str):
        super().__init__(message)
        self.user = user


_FORWARDING = frozenset((
    aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.unsqueeze.default,
    aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.flatten.using_ints, aten.permute.default,
    aten.transpose.int, aten.t.default, aten.expand.default, aten.slice.Tensor, aten.select.int,
    aten.split_with_sizes.default, aten.contiguous.default, aten.clone.default, aten.alias.default,
    operator.getitem))
"""Ops whose results are some of their argument's values, as they are (views, copies)."""


def _reads(node: torch.fx.Node, users: Callable[[torch.fx.Node], list[torch.fx.Node]]) -> tuple[list, list]:
    """The ops that read ``node``'s values, through :data:`_FORWARDING` ops: those that read them as
    an index, and those that read them as data (a table an indirect access reads through an index
    is neither)."""
    index: list[torch.fx.Node] = []
    data: list[torch.fx.Node] = []
    for user in users(node):
        if user.target in _FORWARDING:
            more_index, more_data = _reads(user, users)
            index += more_index
            data += more_data
        elif user.target is index_values or any(i is node for i, _, _ in index_arguments(user)):
            index.append(user)
        elif user.target not in INDEX_OPS:
            data.append(user)
    return index, data


def index_values(index: torch.Tensor, bound: int) -> torch.Tensor:
    """The values of the integer tensor ``index`` (each below ``bound``) as float32 data: the
    target of the node :func:`split_index_reads` inserts, which the importer emits as the table
    ``[0, 1, ..., bound - 1]`` read through ``index``."""
    return index.to(torch.float32)


def split_index_reads(graph: torch.fx.Graph, users: Callable[[torch.fx.Node], list[torch.fx.Node]]) -> None:
    """Make each integer graph input read both as an index and as data (RoBERTa's ``input_ids``:
    the index of its token embedding, and ``input_ids != pad`` for its position ids) an index
    only: its direct users that read it as data read an :func:`index_values` node instead, whose
    bound is the smallest extent an index use of it addresses (values past it are no valid index
    either).  A view of it read both ways is split likewise (:func:`_split_reads`).  An input of
    one element is left as it is: the importer tabulates it over its values."""
    for node in [n for n in graph.nodes if n.op == "placeholder"]:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dtype not in (torch.int64, torch.int32) or val.numel() == 1:
            continue  # a one-element input is tabulated over its values instead (folding.tabulate)
        index, data = _reads(node, users)
        if not index or not data:
            continue
        bound = min(int(table.meta["val"].shape[dim]) for user in index
                    for i, table, dim in index_arguments(user) if isinstance(table, torch.fx.Node))
        _split_reads(graph, node, bound, users)


def _split_reads(graph: torch.fx.Graph, node: torch.fx.Node, bound: int,
                 users: Callable[[torch.fx.Node], list[torch.fx.Node]]) -> None:
    """Make ``node``'s users that read it only as data read an :func:`index_values` node of it; a
    forwarding user (a view) read both ways is split the same way, one level down (CLIP's
    ``input_ids.view(-1, n)``, embedded and searched for its end token)."""
    readers = []
    for user in users(node):
        if not _reads_as_index(node, user, users):
            readers.append(user)
        elif user.target in _FORWARDING and _reads(user, users)[1] and isinstance(user.meta.get("val"), torch.Tensor):
            _split_reads(graph, user, bound, users)
    if not readers:
        return
    with graph.inserting_after(node):
        values = graph.call_function(index_values, (node, bound))
    values.meta["val"] = torch.empty(node.meta["val"].shape, dtype=torch.float32, device="meta")
    values.meta["stack_trace"] = readers[0].meta.get("stack_trace")
    for reader in readers:
        reader.replace_input_with(node, values)


def _reads_as_index(node: torch.fx.Node, user: torch.fx.Node,
                    users: Callable[[torch.fx.Node], list[torch.fx.Node]]) -> bool:
    """Whether ``user`` reads ``node`` as an index, directly or through forwarding ops."""
    if user.target in _FORWARDING:
        return bool(_reads(user, users)[0])
    return any(i is node for i, _, _ in index_arguments(user))


def input_element(node: torch.fx.Node, users: Callable[[torch.fx.Node], list[torch.fx.Node]]
                  ) -> tuple[Attribute, str | None] | None:
    """How graph input ``node`` is held on the device: its element type and, for an input held as
    flags, its host dtype (``"int64"``, ``"bool"``); None when Spyre cannot hold it.

    ``users(n)`` are the nodes the device computes that read ``n``.  A float or int8 input is held
    as itself; an integer input that no op reads as data (through views: only indirect accesses
    read it) is staged as int32 (int64 token ids); an integer or bool input read as data is held
    as flags in :data:`FLAG_ELEMENT`.  An integer input read both as an index and as data is
    :class:`ReadTwoWays`.
    """
    dtype = node.meta["val"].dtype
    index, data = _reads(node, users)
    if dtype in (torch.int64, torch.int32) and not data:
        return i32, None  # an index (or an integer table, which the indirect access refuses)
    if not is_integral(dtype) or dtype == torch.int8:
        elem = element_type(dtype)
        return None if elem is None else (elem, None)
    if dtype not in HOLDABLE:
        return None
    if index:
        raise ReadTwoWays(index[0], f"it is read both as the index of '{op_name(index[0])}' and as data; "
                          "Spyre holds an index as int32 and data as float flags, not both: give the model two "
                          "inputs, one read as the index and one as data")
    return FLAG_ELEMENT, str(dtype).removeprefix("torch.")


def result_element(dtype: torch.dtype, like: Attribute | None) -> Attribute | None:
    """The element type of a device op's result of ``dtype``, computed from a value of element type
    ``like``: a bool, or an integer computed from float-held data, takes ``like``; otherwise its
    own (None when Spyre has none)."""
    if like is not None and is_integral(dtype) and (dtype == torch.bool or is_float(like)):
        return like
    return element_type(dtype)


def is_float(elem: Attribute) -> bool:
    """Whether ``elem`` is a float element type (float16, bfloat16, float32)."""
    return isinstance(elem, Float16Type | BFloat16Type | Float32Type)


__all__ = ["FLAG_ELEMENT", "FLAG_RANGE", "HOLDABLE", "ReadTwoWays", "dtype_of", "element_type", "is_integral",
           "index_values", "input_element", "result_element", "is_float", "split_index_reads"]
