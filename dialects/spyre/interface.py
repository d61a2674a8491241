# The compute-op interface of the `spyre` dialect: what every pass reads of a
# compute op (iteration space, indexing maps, reduction dims, op func, indirect
# reads, scalar inputs) and its optional properties (`dims`, `core_splits`,
# `core_replicas`, `placement`, `hints`, explicit `indexing_maps` /
# `iteration_space`).  Reads
# compute ops; writes explicit indexing (set_indexing).
"""``ComputeOp``: the interface every Spyre compute op implements, and its shared verifier."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, DenseArrayBase, IntegerAttr, StringAttr, TensorType, i64
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, opt_prop_def, result_def, var_operand_def
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre.attributes import HintAttr, PlacementAttr
from spyre_mlir.dialects.spyre.maps import expr_range
from spyre_mlir.dialects.spyre.types import padded_shape, tensor_shape, verify_tensor_type
from spyre_mlir.opfuncs import OpFunc


@dataclass(frozen=True)
class IndirectAccess:
    """How an op reads a table through an index (DESIGN §15: ``embedding``, ``index_select``), or
    writes one (§17: a KV-cache row store, ``index_put``).

    The table's coordinate along ``table_dim`` is the value of the index at the
    iteration point, not an affine function of it: the table's indexing map holds
    the constant 0 there (with a ``step``, the row inside the block the index's
    value addresses: ``step * index + map``).  The table is shared by all cores at one base.  A store's
    table is its destination operand, whose storage the result takes: the result's
    map is the table's.
    """

    index: int
    """Operand position of the int32 index."""
    table: int
    """Operand position of the table."""
    table_dim: int
    """The table's gathered dim."""
    entry_dims: tuple[int, ...]
    """Iteration dims the index map uses: the index entries, which work may be divided by."""
    data_dims: tuple[int, ...]
    """Iteration dims the table map uses: its data dims, never split across cores."""
    stores: bool = False
    """True when the op writes the table's rows (the result, in the table's storage) instead of
    reading them."""
    step: int = 1
    """Rows per block the index addresses: the table's map holds the row inside the block (an
    iteration dim of ``step``) in ``table_dim`` instead of 0."""


class ComputeOp(IRDLOperation):
    """The interface every Spyre compute op implements.

    An op iterates over an ``iteration_space()``; ``indexing_maps()`` give, for
    each operand and then for the result, the map from iteration coordinates to
    that tensor's host coordinates; the iteration dims the result map does not
    use are ``reduction_dims()``.  Ops derive all three from their types unless
    view folding wrote explicit ``iteration_space`` / ``indexing_maps``.
    """

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)

    OPERANDS: ClassVar[tuple[str, ...] | None] = None
    """The names of the tensor operands of an op that takes a fixed number of them (a matmul's
    ``lhs``, ``rhs``), None when the count varies; the verifier and the IRDL (spyre_mlir.irdl)
    both read it."""

    dims = opt_prop_def(ArrayAttr[ArrayAttr[StringAttr]])
    core_splits = opt_prop_def(DenseArrayBase.constr(i64))
    core_replicas = opt_prop_def(IntegerAttr.constr(type=i64))
    placement = opt_prop_def(PlacementAttr)
    hints = opt_prop_def(ArrayAttr[HintAttr])
    indexing_maps = opt_prop_def(ArrayAttr[AffineMapAttr])
    iteration_space = opt_prop_def(DenseArrayBase.constr(i64))

    irdl_options = (ParsePropInAttrDict(),)

    # Per-op parts of the interface.
    @abstractmethod
    def op_func(self) -> OpFunc:
        """The op func this op computes."""

    @abstractmethod
    def default_iteration_space(self) -> tuple[int, ...]:
        """The iteration space implied by the operand and result types."""

    @abstractmethod
    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        """Indexing maps implied by the types: one per operand, then the result's."""

    @abstractmethod
    def verify_types(self) -> None:
        """Op-specific checks of operand and result types."""

    # The shared part of the interface.
    def get_iteration_space(self) -> tuple[int, ...]:
        """Sizes of the iteration dims (explicit, or derived from the types)."""
        if self.iteration_space is not None:
            return tuple(self.iteration_space.get_values())
        return self.default_iteration_space()

    def valid_iteration_space(self) -> tuple[int, ...]:
        """The iteration space without the padding it iterates (spyre-pad-dims): each dim clipped
        to the host extent of the tensors that it alone indexes a dim of."""
        space = list(self.get_iteration_space())
        for m, v in zip(self.get_indexing_maps(), [*self.inputs, self.result]):
            for expr, size in zip(m.results, tensor_shape(v)):
                if isinstance(expr, AffineDimExpr):
                    space[expr.position] = min(space[expr.position], size)
        return tuple(space)

    def get_indexing_maps(self) -> tuple[AffineMap, ...]:
        """Per-operand maps, then the result's, from iteration to host coordinates."""
        if self.indexing_maps is not None:
            return tuple(m.data for m in self.indexing_maps.data)
        return self.default_indexing_maps()

    def reduction_dims(self) -> tuple[int, ...]:
        """Iteration dims that the result does not index."""
        return tuple(sorted(self.get_indexing_maps()[-1].unused_dims()))

    def splittable_dims(self) -> tuple[int, ...]:
        """Iteration dims that view folding may split in two (co-simplification, spyre-fold-views
        rule 2): every dim unless the op's form fixes some (a matmul's M, N and K)."""
        return tuple(range(len(self.get_iteration_space())))

    def has_explicit_maps(self) -> bool:
        """True when ``indexing_maps`` are explicit: operands are then storage, not viewed shapes."""
        return self.indexing_maps is not None

    def indirect_access(self) -> IndirectAccess | None:
        """How the op reads a table through an index, None when every operand is read directly."""
        return None

    def reads_index(self, position: int) -> bool:
        """True when tensor ``position`` (operands, then the result) may hold i32 indices."""
        return False

    def const_values(self) -> dict[str, float]:
        """The op func's scalar inputs and parameters, by name (none unless the op carries them)."""
        return {}

    def set_indexing(self, space: Sequence[int], maps: Sequence[AffineMap]) -> None:
        """Write an explicit iteration space and indexing maps (for the current operands)."""
        self.properties["iteration_space"] = DenseArrayBase.from_list(i64, list(space))
        self.properties["indexing_maps"] = ArrayAttr([AffineMapAttr(m) for m in maps])

    def get_core_splits(self) -> tuple[int, ...] | None:
        """Cores per iteration dim, once work division has decided them."""
        return None if self.core_splits is None else tuple(self.core_splits.get_values())

    def get_core_replicas(self) -> int:
        """Cores that compute each work slice (``core_replicas``, 1 when absent): an op replicated
        ``r`` times runs on ``r`` times the product of its ``core_splits``, each group of ``r``
        consecutive cores computing one slice into each core's own LX."""
        return 1 if self.core_replicas is None else self.core_replicas.value.data

    def get_dim_names(self) -> tuple[tuple[str, ...], ...] | None:
        """Dimension names per iteration dim, once propagated."""
        if self.dims is None:
            return None
        return tuple(tuple(s.data for s in names.data) for names in self.dims.data)

    def get_hints(self) -> tuple[HintAttr, ...]:
        """The ``spyre_hint`` scopes this op was traced in, outermost first."""
        return () if self.hints is None else tuple(self.hints.data)

    def verify_(self) -> None:
        if self.OPERANDS is not None and len(self.inputs) != len(self.OPERANDS):
            count = {1: "one operand", 2: "two operands"}[len(self.OPERANDS)]
            raise VerifyException(f"expects {count}, got {len(self.inputs)}")
        for i, v in enumerate(self.inputs):
            verify_tensor_type(v.type, f"operand #{i}", self.reads_index(i))
        verify_tensor_type(self.result.type, "result", self.reads_index(len(self.inputs)))
        self.verify_types()
        self._verify_interface_attrs()

    def _verify_interface_attrs(self) -> None:
        if self.iteration_space is not None and self.indexing_maps is None:
            raise VerifyException("an explicit iteration_space needs explicit indexing_maps")
        space = self.get_iteration_space()
        if any(s <= 0 for s in space):
            raise VerifyException(f"iteration space sizes must be positive, got {list(space)}")
        maps = self.get_indexing_maps()
        tensors = [*self.inputs, self.result]
        if len(maps) != len(tensors):
            raise VerifyException(f"expected {len(tensors)} indexing maps (operands then result), got {len(maps)}")
        bounds = [(0, s - 1) for s in space]
        for i, (m, v) in enumerate(zip(maps, tensors)):
            what = "result" if i == len(maps) - 1 else f"operand #{i}"
            shape = tensor_shape(v)
            if m.num_symbols:
                raise VerifyException(f"indexing map {m} of {what} must not have symbols")
            if m.num_dims != len(space) or len(m.results) != len(shape):
                raise VerifyException(
                    f"indexing map {m} of {what} must map {len(space)} iteration dims to "
                    f"{len(shape)} coordinates")
            for d, (expr, size) in enumerate(zip(m.results, padded_shape(v.type))):
                lo, hi = expr_range(expr, bounds)
                if lo < 0 or hi >= size:
                    raise VerifyException(
                        f"indexing map {m} of {what} reaches [{lo}, {hi}] in dim {d} of size {size}")
        for name, values in (("core_splits", self.get_core_splits()), ("dims", self.get_dim_names())):
            if values is not None and len(values) != len(space):
                raise VerifyException(
                    f"{name} has {len(values)} entries for an iteration space of rank {len(space)}")
        splits = self.get_core_splits()
        if splits is not None and any(s <= 0 for s in splits):
            raise VerifyException(f"core_splits must be positive, got {list(splits)}")
        if self.core_replicas is not None:
            if self.get_core_replicas() < 2:
                raise VerifyException(f"core_replicas must be at least 2, got {self.get_core_replicas()}")
            if splits is None:
                raise VerifyException("core_replicas needs core_splits")
