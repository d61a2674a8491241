# The ops of the `spyre` dialect: the compute ops `spyre.pointwise`,
# `spyre.reduce`, `spyre.matmul`, `spyre.restickify` (each a ComputeOp), and
# `spyre.view`, `spyre.fill`.  Reads the op-func table (spyre_mlir.opfuncs) and
# their text; writes the ops (builders, parsers, printers, verifiers).
"""The ops of the ``spyre`` dialect."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f64,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineMap
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from spyre_mlir import opfuncs
from spyre_mlir.dialects.spyre.attributes import PlacementAttr
from spyre_mlir.dialects.spyre.interface import ComputeOp, IndirectAccess
from spyre_mlir.dialects.spyre.maps import expr_range, gather_maps, matmul_maps, pointwise_maps, reduce_maps, \
    scatter_maps, used_dims
from spyre_mlir.dialects.spyre.types import tensor_shape, verify_tensor_type
from spyre_mlir.opfuncs import OpFunc, OpKind


def _op_func_of_kind(name: str, kinds: tuple[OpKind, ...]) -> OpFunc:
    func = opfuncs.lookup(name)
    if func is None:
        raise VerifyException(f"unknown op func '{name}'")
    if func.kind not in kinds:
        expected = " or ".join(k.value for k in kinds)
        raise VerifyException(f"op func '{name}' is a {func.kind.value} op func, expected {expected}")
    return func


def _element_type(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.get_element_type()


def _broadcasts_to(operand_shape: Sequence[int], result_shape: Sequence[int]) -> bool:
    if len(operand_shape) > len(result_shape):
        return False
    tail = result_shape[len(result_shape) - len(operand_shape):]
    return all(o in (1, r) for o, r in zip(operand_shape, tail))


def _scalar_value(attr: Attribute) -> float | None:
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, IntegerAttr):
        return float(attr.value.data)
    return None


@irdl_op_definition
class PointwiseOp(ComputeOp):
    """Elementwise op func with numpy-style broadcasting of its tensor operands.

    Inputs of the op func not given as operands are scalar ``consts``, under the
    input's name; ``consts`` also holds the op func's scalar parameters.
    """

    name = "spyre.pointwise"
    op_func_name = prop_def(StringAttr)
    consts = opt_prop_def(DictionaryAttr)
    indirect_dim = opt_prop_def(IntegerAttr)
    """With ``identity``: operand #1 (a table) is read along this dim at the values of
    operand #0 (an i32 index), see :meth:`gather`."""
    scatter_dim = opt_prop_def(IntegerAttr)
    """With ``identity``: operand #1 (rows) is written along this dim at the values of operand #0
    (an i32 index) into operand #2, whose storage the result takes, see :meth:`scatter`."""
    index_step = opt_prop_def(IntegerAttr)
    """With ``indirect_dim`` or ``scatter_dim``: the index addresses blocks of this many rows,
    read or written whole (the rows inside a block are an iteration dim, see :meth:`gather`)."""
    traits = traits_def(Pure())

    assembly_format = ("$op_func_name ` ` `(` $inputs `)` (`consts` $consts^)? attr-dict "
                       "`:` functional-type($inputs, $result)")

    def __init__(self, op_func: str, inputs: Sequence[SSAValue], result_type: Attribute,
                 consts: dict[str, float] | None = None):
        props: dict[str, Attribute] = {"op_func_name": StringAttr(op_func)}
        if consts:
            props["consts"] = DictionaryAttr({k: FloatAttr(v, f64) for k, v in consts.items()})
        super().__init__(operands=[inputs], result_types=[result_type], properties=props)

    @classmethod
    def gather(cls, index: SSAValue, table: SSAValue, dim: int, result_type: Attribute,
               along: bool = False, step: int = 1) -> PointwiseOp:
        """``identity`` reading ``table`` along ``dim`` at the values of the i32 ``index``: the
        result is ``table.shape[:dim] + index.shape + table.shape[dim + 1:]`` (``np.take``)::

            %e = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64}
                 : (tensor<2x100xi32>, tensor<1000x96xf16>) -> tensor<2x100x96xf16>

        With ``along`` the index has the table's rank and the result its shape, the table's other
        dims read at the index's coordinates (``np.take_along_axis``, ``torch.gather``): explicit
        maps, the table's holding 0 in ``dim``.

        With a ``step`` above 1 (``index_step``) the index holds block numbers: entry ``e`` reads
        the ``step`` rows from ``step * index[e]``, a dim of the result after the index's
        (``[4, 8, 128, 64]`` read at one block of 64 rows along dim 2 is ``[4, 8, 1, 64, 64]``): a
        block of a KV cache sticked on its positions, read as whole sticks.
        """
        op = cls("identity", [index, table], result_type)
        op.properties["indirect_dim"] = IntegerAttr(dim, i64)
        if step > 1:
            op.properties["index_step"] = IntegerAttr(step, i64)
        if along:
            shape = tensor_shape(index)
            rank = len(shape)
            row = AffineMap(rank, 0, tuple(AffineExpr.constant(0) if j == dim else AffineExpr.dimension(j)
                                           for j in range(rank)))
            op.set_indexing(shape, (AffineMap.identity(rank), row, AffineMap.identity(rank)))
        return op

    @classmethod
    def scatter(cls, index: SSAValue, rows: SSAValue, dest: SSAValue, dim: int, step: int = 1) -> PointwiseOp:
        """``identity`` writing ``rows`` into ``dest`` along ``dim`` at the values of the 1-D i32
        ``index`` (``index_copy``, a KV-cache row store): the result is ``dest`` with those rows
        replaced, in ``dest``'s storage (written in place, so nothing reads ``dest`` after it)::

            %k = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 2 : i64}
                 : (tensor<1xi32>, tensor<1x2x1x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>

        The iteration space is the rows' shape.  With a ``step`` above 1 (``index_step``) the index
        holds block numbers and the rows have a dim of ``step`` after the entries': entry ``e``
        writes its ``step`` rows from ``step * index[e]``.
        """
        op = cls("identity", [index, rows, dest], dest.type)
        op.properties["scatter_dim"] = IntegerAttr(dim, i64)
        if step > 1:
            op.properties["index_step"] = IntegerAttr(step, i64)
        return op

    def get_index_step(self) -> int:
        """Rows per block the index addresses (``index_step``; 1 without it)."""
        return 1 if self.index_step is None else self.index_step.value.data

    def op_func(self) -> OpFunc:
        return _op_func_of_kind(self.op_func_name.data, (OpKind.POINTWISE,))

    def reads_index(self, position: int) -> bool:
        """The index of an indirect access (operand #0), or the result of an ``identity`` of one
        operand that converts integers held as floats (position ids computed from an attention
        mask) into an index."""
        indirect = self.indirect_dim is not None or self.scatter_dim is not None
        if position == 0 and indirect:
            return True
        return (position == len(self.inputs) == 1 and not indirect
                and self.op_func_name.data == opfuncs.COPY)

    def indirect_access(self) -> IndirectAccess | None:
        if self.indirect_dim is None and self.scatter_dim is None:
            return None
        maps = self.get_indexing_maps()
        stores = self.scatter_dim is not None
        index_map, table_map = maps[0], maps[2 if stores else 1]
        dim = (self.scatter_dim if stores else self.indirect_dim)
        assert dim is not None
        return IndirectAccess(0, 2 if stores else 1, dim.value.data,
                              tuple(sorted(set().union(*map(used_dims, index_map.results)))),
                              tuple(sorted(set().union(*map(used_dims, table_map.results)))), stores,
                              self.get_index_step())

    def reduction_dims(self) -> tuple[int, ...]:
        """None: an elementwise op reduces nothing (a row store's result map holds 0 in the stored
        dim, which the index addresses, without reducing it)."""
        return ()

    def const_values(self) -> dict[str, float]:
        """The scalar inputs and parameters, by name."""
        if self.consts is None:
            return {}
        return {k: v for k, a in self.consts.data.items() if (v := _scalar_value(a)) is not None}

    def tensor_input_names(self) -> tuple[str, ...]:
        """The op func input each tensor operand supplies, in operand order."""
        given = self.const_values()
        return tuple(n for n in self.op_func().inputs if n not in given)

    def default_iteration_space(self) -> tuple[int, ...]:
        if self.scatter_dim is not None and len(self.inputs) == 3:
            return tensor_shape(self.inputs[1])
        return tensor_shape(self.result)

    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        if self.scatter_dim is not None:
            return scatter_maps(len(tensor_shape(self.result)), self.scatter_dim.value.data, self.get_index_step())
        if self.indirect_dim is not None:
            return gather_maps(len(tensor_shape(self.inputs[0])), len(tensor_shape(self.inputs[1])),
                               self.indirect_dim.value.data, self.get_index_step())
        return pointwise_maps(tuple(tensor_shape(v) for v in self.inputs), tensor_shape(self.result))

    def verify_types(self) -> None:
        if self.indirect_dim is not None and self.scatter_dim is not None:
            raise VerifyException("an identity either reads through an index (indirect_dim) or writes through "
                                  "one (scatter_dim), not both")
        if self.index_step is not None and (self.indirect_dim is None and self.scatter_dim is None
                                            or self.get_index_step() < 2):
            raise VerifyException(f"index_step must exceed 1 and goes with indirect_dim or scatter_dim, got "
                                  f"{self.get_index_step()}")
        if self.indirect_dim is not None:
            self._verify_gather()
            return
        if self.scatter_dim is not None:
            self._verify_scatter()
            return
        func = self.op_func()
        names = func.inputs
        consts = self.consts.data if self.consts is not None else {}
        for key, attr in consts.items():
            if key not in names and key not in func.params:
                allowed = ", ".join((*names, *func.params))
                raise VerifyException(f"op func '{func.name}' has no input or parameter '{key}' "
                                      f"(expected one of: {allowed})")
            if _scalar_value(attr) is None:
                raise VerifyException(f"const '{key}' must be a float or integer, got {attr}")
        tensor_inputs = len([n for n in names if n not in consts])
        if not self.inputs:
            raise VerifyException(f"op func '{func.name}' needs at least one tensor operand; "
                                  "an all-constant value is a spyre.fill")
        if tensor_inputs != len(self.inputs):
            raise VerifyException(
                f"op func '{func.name}' takes {len(names)} inputs ({', '.join(names)}); "
                f"{len(consts.keys() & set(names))} given as consts leaves {tensor_inputs} "
                f"tensor operands, got {len(self.inputs)}")
        out = _element_type(self.result)
        out_shape = tensor_shape(self.result)
        for i, v in enumerate(self.inputs):
            if not func.casts and _element_type(v) != out:
                raise VerifyException(f"operand #{i} element type {_element_type(v)} differs from "
                                      f"result element type {out}")
            if not self.has_explicit_maps() and not _broadcasts_to(tensor_shape(v), out_shape):
                raise VerifyException(f"operand #{i} of shape {list(tensor_shape(v))} does not broadcast "
                                      f"to the result shape {list(out_shape)}")

    def _verify_gather(self) -> None:
        if self.op_func_name.data != "identity" or self.consts is not None:
            raise VerifyException(f"indirect_dim needs op func 'identity' without consts, "
                                  f"got '{self.op_func_name.data}'")
        if len(self.inputs) != 2:
            raise VerifyException(f"an indirect identity takes an index and a table, got {len(self.inputs)} operands")
        index, table = self.inputs
        if _element_type(index) != IntegerType(32):
            raise VerifyException(f"index operand #0 must have element type i32, got {_element_type(index)}")
        if _element_type(table) != _element_type(self.result):
            raise VerifyException(f"table operand #1 element type {_element_type(table)} differs from "
                                  f"result element type {_element_type(self.result)}")
        dim, table_shape = self.indirect_dim.value.data, tensor_shape(table)
        if not 0 <= dim < len(table_shape):
            raise VerifyException(f"indirect_dim {dim} is outside the table rank {len(table_shape)}")
        step = self._verify_step(table_shape[dim], "table", dim)
        if self._addressed_by_index(1, len(table_shape), dim, "table", "gathered"):
            return
        block = [step] if step > 1 else []
        expected = [*table_shape[:dim], *tensor_shape(index), *block, *table_shape[dim + 1:]]
        if list(tensor_shape(self.result)) != expected:
            raise VerifyException(f"result shape {list(tensor_shape(self.result))} must be {expected}: the table's "
                                  f"dims with dim {dim} replaced by the index's"
                                  + (f" and a block of {step} rows" if block else ""))

    def _verify_step(self, extent: int, what: str, dim: int) -> int:
        """The index step, checked to divide the ``extent`` of the addressed dim ``dim``."""
        step = self.get_index_step()
        if extent % step:
            raise VerifyException(f"index_step {step} does not divide the {extent} rows of the {what}'s dim {dim}")
        return step

    def _addressed_by_index(self, operand: int, rank: int, dim: int, what: str, how: str) -> bool:
        """With explicit maps, check that operand ``operand`` (of ``rank`` dims, the one the index
        addresses along ``dim``) is read there at 0, the index's value, and return True (its
        shape then says nothing of how it is read); False without explicit maps.  Malformed maps
        are left to the interface check, which names them."""
        if not self.has_explicit_maps():
            return False
        maps = self.get_indexing_maps()
        if len(maps) == len(self.inputs) + 1 and len(maps[operand].results) == rank:
            addressed, step = maps[operand].results[dim], self.get_index_step()
            if step == 1 and addressed != AffineExpr.constant(0):
                raise VerifyException(f"the {what} map must hold 0 in the {how} dim {dim}, got {addressed}")
            space = [(0, n - 1) for n in self.get_iteration_space()]
            if step > 1 and not 0 <= expr_range(addressed, space)[0] <= expr_range(addressed, space)[1] < step:
                raise VerifyException(f"the {what} map must hold a row inside the block of {step} in the {how} "
                                      f"dim {dim}, got {addressed}")
        return True

    def _verify_scatter(self) -> None:
        if self.op_func_name.data != "identity" or self.consts is not None:
            raise VerifyException(f"scatter_dim needs op func 'identity' without consts, "
                                  f"got '{self.op_func_name.data}'")
        if len(self.inputs) != 3:
            raise VerifyException(f"a row store takes an index, rows and a destination, got {len(self.inputs)} "
                                  "operands")
        index, rows, dest = self.inputs
        if _element_type(index) != IntegerType(32) or len(tensor_shape(index)) != 1:
            raise VerifyException(f"index operand #0 must be a 1-D tensor of i32, got {index.type}")
        if dest.type != self.result.type:
            raise VerifyException(f"the result type {self.result.type} must be the destination's {dest.type}: "
                                  "the result is the destination, written in place")
        if _element_type(rows) != _element_type(dest):
            raise VerifyException(f"rows operand #1 element type {_element_type(rows)} differs from the "
                                  f"destination's {_element_type(dest)}")
        dim, dest_shape, rows_shape = self.scatter_dim.value.data, tensor_shape(dest), tensor_shape(rows)
        if not 0 <= dim < len(dest_shape):
            raise VerifyException(f"scatter_dim {dim} is outside the destination rank {len(dest_shape)}")
        step = self._verify_step(dest_shape[dim], "destination", dim)
        if self._addressed_by_index(2, len(dest_shape), dim, "destination", "scattered"):
            return
        block = [step] if step > 1 else []
        expected = [*dest_shape[:dim], tensor_shape(index)[0], *block, *dest_shape[dim + 1:]]
        if list(rows_shape) != expected:
            raise VerifyException(f"rows shape {list(rows_shape)} must be {expected}: the destination's dims with "
                                  f"dim {dim} the index's entries" + (f" and a block of {step} rows" if block else ""))


@irdl_op_definition
class ReduceOp(ComputeOp):
    """Reduction of ``dims`` of one tensor; the result drops them or keeps them as size 1.

    The iteration space is the kept dims in order, then the reduced dims.
    """

    name = "spyre.reduce"
    op_func_name = prop_def(StringAttr)
    reduce_dims = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure())
    OPERANDS: ClassVar[tuple[str, ...] | None] = ("source",)

    assembly_format = ("$op_func_name ` ` `(` $inputs `)` `dims` $reduce_dims attr-dict "
                       "`:` functional-type($inputs, $result)")

    def __init__(self, op_func: str, source: SSAValue, dims: Sequence[int], result_type: Attribute):
        super().__init__(operands=[[source]], result_types=[result_type], properties={
            "op_func_name": StringAttr(op_func),
            "reduce_dims": DenseArrayBase.from_list(i64, list(dims))})

    def op_func(self) -> OpFunc:
        return _op_func_of_kind(self.op_func_name.data, (OpKind.REDUCTION,))

    def get_reduce_dims(self) -> tuple[int, ...]:
        """The reduced dims of the operand."""
        return tuple(self.reduce_dims.get_values())

    def keeps_dims(self) -> bool:
        """True when reduced dims stay in the result with size 1.

        With explicit maps the operand is storage: a kept dim is a constant
        coordinate of the result map.
        """
        if self.has_explicit_maps():
            return any(isinstance(e, AffineConstantExpr) for e in self.get_indexing_maps()[-1].results)
        return len(tensor_shape(self.result)) == len(tensor_shape(self.inputs[0]))

    def set_indexing(self, space: Sequence[int], maps: Sequence[AffineMap]) -> None:
        """Explicit maps; ``reduce_dims`` becomes the operand dims that reduced iteration dims index."""
        super().set_indexing(space, maps)
        self.properties["reduce_dims"] = DenseArrayBase.from_list(i64, list(self._mapped_reduce_dims()))

    def _mapped_reduce_dims(self) -> tuple[int, ...]:
        """Operand dims whose coordinate uses a reduction iteration dim."""
        reduced = set(self.reduction_dims())
        source = self.get_indexing_maps()[0]
        return tuple(d for d, e in enumerate(source.results) if reduced & used_dims(e))

    def _kept_dims(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(tensor_shape(self.inputs[0]))) if d not in self.get_reduce_dims())

    def default_iteration_space(self) -> tuple[int, ...]:
        shape = tensor_shape(self.inputs[0])
        return tuple(shape[d] for d in (*self._kept_dims(), *self.get_reduce_dims()))

    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        return reduce_maps(self._kept_dims(), self.get_reduce_dims(), self.keeps_dims())

    def verify_types(self) -> None:
        self.op_func()
        shape = tensor_shape(self.inputs[0])
        dims = self.get_reduce_dims()
        if not dims:
            raise VerifyException("expects at least one reduced dim")
        if list(dims) != sorted(set(dims)) or dims[0] < 0 or dims[-1] >= len(shape):
            raise VerifyException(f"reduced dims {list(dims)} must be increasing and within "
                                  f"the operand rank {len(shape)}")
        if _element_type(self.inputs[0]) != _element_type(self.result):
            raise VerifyException("operand and result element types differ")
        if self.has_explicit_maps():
            if len(self.get_indexing_maps()) == 2 and dims != self._mapped_reduce_dims():
                raise VerifyException(f"reduced dims {list(dims)} must be the operand dims the reduced "
                                      f"iteration dims index, {list(self._mapped_reduce_dims())}")
            return
        kept = [shape[d] for d in self._kept_dims()]
        keep = [1 if d in dims else s for d, s in enumerate(shape)]
        if list(tensor_shape(self.result)) not in (kept, keep):
            raise VerifyException(f"result shape {list(tensor_shape(self.result))} must be {kept} "
                                  f"or, keeping dims, {keep}")


@irdl_op_definition
class MatmulOp(ComputeOp):
    """(Batched) matrix product ``[..., M, K] @ [..., K, N] -> [..., M, N]``; SDSC ``batchmatmul``.

    Batch dims broadcast; the iteration space is ``(batch..., M, N, K)``.
    """

    name = "spyre.matmul"
    traits = traits_def(Pure())
    OPERANDS: ClassVar[tuple[str, ...] | None] = ("lhs", "rhs")

    assembly_format = "` ` `(` $inputs `)` attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[[lhs, rhs]], result_types=[result_type])

    def op_func(self) -> OpFunc:
        return _op_func_of_kind("batchmatmul", (OpKind.MATMUL,))

    def default_iteration_space(self) -> tuple[int, ...]:
        return (*tensor_shape(self.result), tensor_shape(self.inputs[0])[-1])

    def splittable_dims(self) -> tuple[int, ...]:
        """The batch dims: a batch dim split in two is two batch dims (the K and V heads of
        grouped-query attention, read by a group of query heads each); M, N and K stay one each."""
        return tuple(range(len(self.get_iteration_space()) - 3))

    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        return matmul_maps(tensor_shape(self.inputs[0]), tensor_shape(self.inputs[1]), tensor_shape(self.result))

    def verify_types(self) -> None:
        a, b, c = (tensor_shape(v) for v in (*self.inputs, self.result))
        if not (_element_type(self.inputs[0]) == _element_type(self.inputs[1]) == _element_type(self.result)):
            raise VerifyException("operand and result element types differ")
        if self.has_explicit_maps():
            if len(self.get_indexing_maps()) == 3 and len(self.reduction_dims()) != 1:
                raise VerifyException(f"explicit indexing maps must leave exactly one reduced (K) "
                                      f"iteration dim, got {list(self.reduction_dims())}")
            return
        if len(a) < 2 or len(b) < 2:
            raise VerifyException(f"operands must have rank >= 2, got {list(a)} and {list(b)}")
        if a[-1] != b[-2]:
            raise VerifyException(f"contraction sizes differ: lhs {list(a)} has K = {a[-1]}, "
                                  f"rhs {list(b)} has K = {b[-2]}")
        batch = _broadcast_shapes(a[:-2], b[:-2])
        expected = [*batch, a[-2], b[-1]] if batch is not None else None
        if expected is None or list(c) != expected:
            raise VerifyException(f"result shape {list(c)} does not match {list(a)} @ {list(b)}")


def _broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> list[int] | None:
    rank = max(len(a), len(b))
    a1, b1 = [1] * (rank - len(a)) + list(a), [1] * (rank - len(b)) + list(b)
    if any(x != y and 1 not in (x, y) for x, y in zip(a1, b1)):
        return None
    return [max(x, y) for x, y in zip(a1, b1)]


@irdl_op_definition
class RestickifyOp(ComputeOp):
    """Change of a tensor's stick dimension in HBM; SDSC ``ReStickifyOpHBM``.

    ``spyre.restickify (%x) : (tensor<64x128xf16, #L0>) -> tensor<64x128xf16, #L1>``

    With explicit ``indexing_maps`` it copies a read pattern of its operand (a
    view that cannot be read in place) into a tensor of the view's shape.
    """

    name = "spyre.restickify"
    traits = traits_def(Pure())
    OPERANDS: ClassVar[tuple[str, ...] | None] = ("source",)

    assembly_format = "` ` `(` $inputs `)` attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, source: SSAValue, result_type: Attribute):
        super().__init__(operands=[[source]], result_types=[result_type])

    def op_func(self) -> OpFunc:
        return _op_func_of_kind("ReStickifyOpHBM", (OpKind.DATA_MOVEMENT,))

    def reads_index(self, position: int) -> bool:
        return True  # a copy of indices in another layout

    def default_iteration_space(self) -> tuple[int, ...]:
        return tensor_shape(self.result)

    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        rank = len(tensor_shape(self.result))
        return AffineMap.identity(rank), AffineMap.identity(rank)

    def verify_types(self) -> None:
        src, dst = self.inputs[0].type, self.result.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        if self.has_explicit_maps():
            # A copy through a read pattern (a materialised view): any shapes.
            if src.get_element_type() != dst.get_element_type():
                raise VerifyException("operand and result element types differ")
            return
        if src.get_shape() != dst.get_shape() or src.get_element_type() != dst.get_element_type():
            raise VerifyException(f"operand type {src} and result type {dst} must differ only in layout")
        if src.encoding == dst.encoding:
            raise VerifyException(f"operand and result have the same layout {src.encoding}; "
                                  "a restickify must change it")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A storage reinterpretation (reshape, permute, expand, slice, select...).

    ``map`` takes result coordinates to source coordinates; no data moves.
    """

    name = "spyre.view"
    source = operand_def(TensorType)
    map = prop_def(AffineMapAttr)
    result = result_def(TensorType)
    dims = opt_prop_def(ArrayAttr[ArrayAttr[StringAttr]])
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$source $map attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, view_map: AffineMap, result_type: Attribute):
        super().__init__(operands=[source], result_types=[result_type],
                         properties={"map": AffineMapAttr(view_map)})

    def verify_(self) -> None:
        verify_tensor_type(self.source.type, "source")
        verify_tensor_type(self.result.type, "result")
        if _element_type(self.source) != _element_type(self.result):
            raise VerifyException("source and result element types differ")
        m = self.map.data
        src, out = tensor_shape(self.source), tensor_shape(self.result)
        if m.num_symbols:
            raise VerifyException(f"map {m} must not have symbols")
        if m.num_dims != len(out) or len(m.results) != len(src):
            raise VerifyException(f"map {m} must take {len(out)} result coordinates to "
                                  f"{len(src)} source coordinates")
        bounds = [(0, s - 1) for s in out]
        for d, (expr, size) in enumerate(zip(m.results, src)):
            lo, hi = expr_range(expr, bounds)
            if lo < 0 or hi >= size:
                raise VerifyException(f"map {m} reads source dim {d} at [{lo}, {hi}], "
                                      f"outside its size {size}")
        if self.dims is not None and len(self.dims.data) != len(out):
            raise VerifyException(f"dims has {len(self.dims.data)} entries for a result of rank {len(out)}")


@irdl_op_definition
class FillOp(IRDLOperation):
    """A tensor filled with one value (reduction accumulators, constants).

    ``%z = spyre.fill -inf : tensor<4x64xf16>``
    """

    name = "spyre.fill"
    value = prop_def(FloatAttr)
    result = result_def(TensorType)
    dims = opt_prop_def(ArrayAttr[ArrayAttr[StringAttr]])
    placement = opt_prop_def(PlacementAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, value: float, result_type: Attribute):
        super().__init__(result_types=[result_type], properties={"value": FloatAttr(value, f64)})

    def fill_value(self) -> float:
        """The fill value."""
        return float(self.value.value.data)

    @classmethod
    def parse(cls, parser: Parser) -> FillOp:
        pos = parser.pos
        negative = parser.parse_optional_punctuation("-") is not None
        if parser.parse_optional_keyword("inf") is not None:
            value = math.inf
        elif parser.parse_optional_keyword("nan") is not None:
            value = math.nan
        else:
            number = parser.parse_optional_number()
            if number is None:
                parser.raise_error("expected a number, inf or nan as fill value", pos, parser.pos)
            value = float(number)
        value = -value if negative else value
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        op = cls(value, result_type)
        for key in ("dims", "placement"):
            if key in attrs:
                op.properties[key] = attrs.pop(key)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        value = self.fill_value()
        text = ("-inf" if value < 0 else "inf") if math.isinf(value) else "nan" if math.isnan(value) else repr(value)
        if "e" in text and "." not in text:
            text = text.replace("e", ".0e")  # 1e+20 is not an MLIR float literal; 1.0e+20 is
        printer.print_string(f" {text}")
        printer.print_op_attributes({**self.properties, **self.attributes}, reserved_attr_names=("value",))
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        verify_tensor_type(self.result.type, "result")
        if self.value.type != f64:
            raise VerifyException(f"fill value must be an f64 attribute, got {self.value.type}")
        if self.dims is not None and len(self.dims.data) != len(tensor_shape(self.result)):
            raise VerifyException(f"dims has {len(self.dims.data)} entries for a result of rank "
                                  f"{len(tensor_shape(self.result))}")
