# Values the import computed on the host, as the emitted ops read them (DESIGN
# §15): a spyre.fill, or a function argument of role `constant` holding the
# values; a value tabulated over an input's range, as a read of its table
# through the input.  Reads the known values and tables of importer/folding.py;
# writes fills, gathers and views into the function's block and constant
# arguments (with their spyre.value) into its signature.
"""Compile-time values as function arguments (:class:`ConstantArguments`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    StringAttr,
    TensorType,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, SSAValue

from spyre_mlir.dialects.spyre import CONSTANT_VALUE_ATTR
from spyre_mlir.importer import views
from spyre_mlir.importer.elements import element_type, is_float
from spyre_mlir.importer.emitter import NodeEmitter, ident, shape_of, tensor_type
from spyre_mlir.importer.folding import INDEX_OPS, KnownValues, identity_offset, same_rows, splat_value
from spyre_mlir.importer.locations import node_error, node_loc, op_name

_TORCH_DTYPES = {Float16Type(): torch.float16, BFloat16Type(): torch.bfloat16, Float32Type(): torch.float32,
                 i32: torch.int32}


@dataclass
class ConstantArguments:
    """The known values (:class:`~spyre_mlir.importer.folding.KnownValues`) the function's ops
    read, each made once per element type it is read in: its ``spyre.fill`` ops go into ``block``,
    its ``constant`` arguments are appended to ``block`` and to ``arg_types`` / ``arg_attrs``."""

    block: Block
    arg_types: list[Attribute]
    arg_attrs: list[DictionaryAttr]
    known: KnownValues
    values: Mapping[torch.fx.Node, Any] = field(default_factory=dict)
    """The value the importer emitted for each node (the float type a consumer computes in)."""
    made: dict[tuple[torch.fx.Node, Attribute], SSAValue] = field(default_factory=dict)
    """The value made for each (node, element type)."""
    stored: dict[tuple[Attribute, tuple[int, ...], bytes], SSAValue] = field(default_factory=dict)
    """The ``constant`` argument holding each value (element type, shape, bytes): equal values, of
    different nodes (the tables of every layer's cache store), are one argument."""

    def read(self, node: torch.fx.Node, consumer: torch.fx.Node) -> Any:
        """The known value of ``node`` as ``consumer`` reads it: a ``spyre.fill`` when every element
        is the same, else a function argument of role ``constant`` holding the values
        (``spyre.value``); Python values as they are."""
        value = self.known[node]
        if not isinstance(value, torch.Tensor):
            return value
        elem = self.element(value, consumer)
        key = (node, elem)
        if key not in self.made:
            self.made[key] = self._materialise(node, value, elem)
        return self.made[key]

    def made_for(self, node: torch.fx.Node, value: torch.Tensor, elem: Attribute, prefix: str) -> SSAValue:
        """``value``, which ``node``'s emitter computed at compile time (a constant operand of its
        lowering), as a fill or a constant argument of ``elem`` named ``<prefix>_<node>``."""
        return self._materialise(node, value, elem, prefix)

    def read_table(self, node: torch.fx.Node, consumer: torch.fx.Node, index: SSAValue,
                   table: torch.Tensor) -> SSAValue:
        """The value of ``node`` tabulated over the values of the input ``index`` (``table``, its
        values stacked ``[N, *shape]``) as ``consumer`` reads it, in the element type a known value
        would take (:meth:`element`):

        * the same in every row: that value, as a known one (:meth:`read`);
        * an integer read as an index whose row ``v`` is ``v`` (``arange(1) + p``, the row a KV
          cache is written at): ``index`` itself, viewed to the node's shape;
        * any other integer read as an index: an error (Spyre has no integer arithmetic for
          ``v + c``, and an int32 table is not read through an index);
        * else: a ``constant`` argument holding the rows ``[N, *shape]`` (unit dims dropped, so a
          row keeps the node's dims and its view to the node's shape only adds unit dims), read at ``index`` by
          ``spyre.pointwise "identity" {indirect_dim = 0}`` and viewed to the node's shape.
        """
        elem = self.element(table, consumer)
        key = (node, elem)
        if key not in self.made:
            self.made[key] = self._read_table(node, consumer, index, table, elem)
        return self.made[key]

    def _read_table(self, node: torch.fx.Node, consumer: torch.fx.Node, index: SSAValue, table: torch.Tensor,
                    elem: Attribute) -> SSAValue:
        shape = tuple(table.shape[1:])
        if same_rows(table):
            return self._materialise(node, table[0], elem)
        located = node if node.op == "call_function" else consumer
        loc, _ = node_loc(located)
        cx = NodeEmitter(located, self.block, loc, None)
        if elem == i32:
            offset = identity_offset(table)
            if offset != 0:
                what = "a table of its values" if offset is None else \
                    f"the input {'+' if offset > 0 else '-'} {abs(offset)}"
                raise node_error(consumer, f"'{op_name(consumer)}' reads '{node.name}' as an index, computed at "
                                           f"compile time from input '{index.name_hint}' but not the input itself "
                                           f"({what}): Spyre has no integer arithmetic, and reading an integer "
                                           "table through an index is not supported")
            ones = (1,) * len(shape)
            value = cx.view(index, views.reshape_map(shape_of(index), ones), ones)
            return cx.view(value, views.expand_map(ones, shape), shape)
        kept = tuple(size for size in shape if size != 1) or (1,)
        rows = self._materialise(node, table.reshape(len(table), *kept), elem, prefix="table")
        entry = cx.view(index, views.reshape_map(shape_of(index), (1,)), (1,))
        read = cx.gather(rows, 0, entry)
        return cx.view(read, views.reshape_map(shape_of(read), shape), shape)

    def element(self, value: torch.Tensor, consumer: torch.fx.Node) -> Attribute:
        """The element type a known tensor takes: its own for a float dtype, int32 for the index of
        an indirect access, else (bool, integers) the float type ``consumer`` computes in: its own,
        or that of an operand (a float tensor, or a bool or integer one the device holds as floats)."""
        if value.dtype.is_floating_point and element_type(value.dtype) is not None:
            return element_type(value.dtype)
        if not value.dtype.is_floating_point and consumer.target in INDEX_OPS:
            return i32
        for candidate in (consumer, *consumer.all_input_nodes):
            val = candidate.meta.get("val")
            if isinstance(val, torch.Tensor) and val.dtype.is_floating_point and candidate not in self.known:
                elem = element_type(val.dtype)
                if elem is not None:
                    return elem
        for candidate in consumer.all_input_nodes:  # bools and integers the device holds as floats
            emitted = self.values.get(candidate)
            if isinstance(emitted, SSAValue) and isinstance(emitted.type, TensorType) \
                    and is_float(emitted.type.get_element_type()):
                return emitted.type.get_element_type()
        raise node_error(consumer, f"a compile-time {value.dtype} tensor feeds '{op_name(consumer)}', which "
                                   "computes in no float type (Spyre has float16, bfloat16, float32 and int8)")

    def _materialise(self, node: torch.fx.Node, value: torch.Tensor, elem: Attribute,
                     prefix: str = "const") -> SSAValue:
        shape = tuple(value.shape)
        host = value.detach().to(_TORCH_DTYPES.get(elem, torch.float32))
        splat = 0.0 if host.numel() == 0 else splat_value(host)  # an empty value holds any value
        if splat is not None:
            loc, _ = node_loc(node)
            return NodeEmitter(node, self.block, loc, None).fill(splat, shape, elem)
        if elem == i32:
            wide = value.detach().to(torch.int64)
            if shape and (wide.min() < -2**31 or wide.max() >= 2**31):
                raise node_error(node, f"an index computed at compile time does not fit in int32 "
                                       f"(range [{int(wide.min())}, {int(wide.max())}])")
            stored, data = i32, host.contiguous().numpy().tobytes()
        else:
            stored, data = f32, host.to(torch.float32).contiguous().numpy().tobytes()
        if (elem, shape, data) in self.stored:
            return self.stored[elem, shape, data]
        base = f"{prefix}_{node.name.lstrip('_')}"
        names = {attrs.data["spyre.name"].data for attrs in self.arg_attrs if "spyre.name" in attrs.data}
        name = next(n for k in range(len(names) + 1) if (n := base if k == 0 else f"{base}_{k}") not in names)
        arg = self.block.insert_arg(tensor_type(elem, shape), len(self.block.args))
        arg.name_hint = ident(name)
        self.arg_types.append(arg.type)
        self.arg_attrs.append(DictionaryAttr({
            "spyre.role": StringAttr("constant"), "spyre.name": StringAttr(name),
            CONSTANT_VALUE_ATTR: DenseIntOrFPElementsAttr(tensor_type(stored, shape), BytesAttr(data))}))
        self.stored[elem, shape, data] = arg
        return arg


__all__ = ["ConstantArguments"]
