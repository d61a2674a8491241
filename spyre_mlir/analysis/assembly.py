# Assemblies (DESIGN §15, cat/stack): a full tensor written piece by piece in place.
# Reads the ops of one block: a `tensor.empty` and the chain of `tensor.insert_slice`
# that fills it, each with the result of a compute op (the piece's copy) at a static
# offset; writes nothing.  Shared by spyre-propagate-named-dims, spyre-stickify,
# spyre-coarse-tile, spyre-plan-memory and spyre-lower-to-bundle.
"""The assembly model.

The importer lowers ``torch.cat`` / ``torch.stack`` to::

    %full = tensor.empty() : tensor<4x192xf16>
    %c0 = spyre.pointwise "identity" (%a) : (tensor<4x64xf16>) -> tensor<4x64xf16>
    %f0 = tensor.insert_slice %c0 into %full[0, 0] [4, 64] [1, 1] : tensor<4x64xf16> into tensor<4x192xf16>
    %c1 = spyre.pointwise "identity" (%b) : (tensor<4x128xf16>) -> tensor<4x128xf16>
    %f1 = tensor.insert_slice %c1 into %f0[0, 64] [4, 128] [1, 1] : tensor<4x128xf16> into tensor<4x192xf16>

an :class:`Assembly`: one buffer (``%full``, one layout and one placement) whose
pieces' copies (``%c0``, ``%c1``) write their windows of it in place; ``%f1``, the
value, is what later ops read.  Outside a loop body, a ``tensor.empty`` that a
``tensor.insert_slice`` fills must be the start of a well-formed chain
(:func:`assembly_of`); inside, ``tensor.empty`` and ``tensor.insert_slice`` are
spyre-coarse-tile's loop accumulators, not assemblies.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp


@dataclass(frozen=True)
class Assembly:
    """A ``tensor.empty`` and the ``tensor.insert_slice`` chain that fills it, in order."""

    empty: tensor.EmptyOp
    inserts: tuple[tensor.InsertSliceOp, ...]

    @property
    def value(self) -> SSAValue:
        """The assembled tensor, as its readers see it (the last insert's result)."""
        return self.inserts[-1].result

    @property
    def values(self) -> tuple[SSAValue, ...]:
        """Every SSA value of the buffer: the empty's and each insert's result."""
        return (self.empty.tensor, *(op.result for op in self.inserts))

    @property
    def copies(self) -> tuple[ComputeOp, ...]:
        """The compute ops that write the pieces, in order."""
        return tuple(_compute_owner(op.source) for op in self.inserts)  # type: ignore[misc]

    def offsets(self) -> tuple[tuple[int, ...], ...]:
        """Each piece's offset in the buffer (host coordinates)."""
        return tuple(tuple(op.static_offsets.get_values()) for op in self.inserts)


def _compute_owner(value: SSAValue) -> ComputeOp | None:
    owner = value.owner
    return owner if isinstance(owner, ComputeOp) else None


def _at_top_level(op: Operation) -> bool:
    return isinstance(op.parent_op(), func.FuncOp)


def _filling(value: SSAValue) -> tensor.InsertSliceOp | None:
    """The ``tensor.insert_slice`` that takes ``value`` as its destination, when that is its only use."""
    uses = list(value.uses)
    if len(uses) == 1 and isinstance(uses[0].operation, tensor.InsertSliceOp) and uses[0].index == 1:
        return uses[0].operation
    return None


def _check_insert(insert: tensor.InsertSliceOp) -> None:
    """A piece: a compute result used only here, inserted whole at a static offset with unit strides."""
    source = insert.source
    if _compute_owner(source) is None or len(list(source.uses)) != 1:
        raise SpyreError("a piece inserted into a full buffer must be the result of a compute op "
                         "(spyre.pointwise \"identity\") that nothing else reads", op=insert)
    if insert.offsets or insert.sizes or insert.strides:
        raise SpyreError("a piece must be inserted at static offsets, sizes and strides", op=insert)
    assert isinstance(source.type, TensorType)
    if tuple(insert.static_sizes.get_values()) != tuple(source.type.get_shape()) \
            or any(s != 1 for s in insert.static_strides.get_values()):
        raise SpyreError("a piece must be inserted whole, with unit strides", op=insert)


def assembly_of(empty: tensor.EmptyOp) -> Assembly | None:
    """The assembly ``empty`` starts, None when it is not one (a loop accumulator's init, or
    outside a function body).  A malformed chain is a :class:`SpyreError` at the offending op."""
    if not _at_top_level(empty):
        return None
    inserts: list[tensor.InsertSliceOp] = []
    value = empty.tensor
    while (insert := _filling(value)) is not None:
        _check_insert(insert)
        inserts.append(insert)
        value = insert.result
    if not inserts:
        if any(isinstance(u.operation, tensor.InsertSliceOp) for u in empty.tensor.uses):
            raise SpyreError("a full buffer must be filled by one chain of tensor.insert_slice", op=empty)
        return None
    return Assembly(empty, tuple(inserts))


def assemblies(body: func.FuncOp) -> list[Assembly]:
    """The assemblies of ``body``'s top level, in program order."""
    found = [assembly_of(op) for op in body.body.block.ops if isinstance(op, tensor.EmptyOp)]
    return [a for a in found if a is not None]


def assembly_filled_by(insert: tensor.InsertSliceOp) -> Assembly | None:
    """The assembly ``insert`` is part of, None when it is not one's."""
    value = insert.dest
    while isinstance(value.owner, tensor.InsertSliceOp):
        value = value.owner.dest
    return assembly_of(value.owner) if isinstance(value.owner, tensor.EmptyOp) else None


def assembled_by(op: Operation) -> tensor.InsertSliceOp | None:
    """The ``tensor.insert_slice`` that writes ``op``'s result into an assembly, None if it does not."""
    if not isinstance(op, ComputeOp) or not _at_top_level(op):
        return None
    uses = list(op.result.uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, tensor.InsertSliceOp) or uses[0].index != 0:
        return None
    return uses[0].operation
