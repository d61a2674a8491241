# Buffers a program writes in place (DESIGN §17): a result with `spyre.updates` is the
# new value of a buffer argument, built by row stores (`spyre.pointwise "identity"`
# with `scatter_dim`) whose destinations chain back to that argument.  Reads a
# func.func's row stores, their operands' uses and the returned values; writes nothing.
# Shared by spyre-lower-to-bundle (which refuses what cannot be written in place).
"""In-place updates: which row stores write which buffer argument, and the checks that make
writing in place exact (nothing reads a destination after a store overwrote it)."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import BlockArgument, Operation, SSAValue

from spyre_mlir.analysis.kernel_args import argument_role_and_name, updated_arguments
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import PointwiseOp


def is_row_store(op: Operation) -> bool:
    """True for a row store: an ``identity`` writing rows through an index (``scatter_dim``)."""
    return isinstance(op, PointwiseOp) and op.scatter_dim is not None


def store_chain(value: SSAValue) -> tuple[list[PointwiseOp], SSAValue]:
    """The row stores that built ``value``, first to last, and the value the first one wrote into."""
    stores: list[PointwiseOp] = []
    while is_row_store(value.owner):
        store = value.owner
        assert isinstance(store, PointwiseOp)
        stores.append(store)
        value = store.inputs[2]
    return stores[::-1], value


def check_update(body: func.FuncOp, result: int, argument: int) -> None:
    """Result ``result`` of ``body`` updates argument ``argument`` in place: it is the last of a
    chain of row stores into that argument, at the function's top level, and nothing reads a
    destination after the store that overwrote it.  Else one :class:`SpyreError`."""
    ret = body.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    name = argument_role_and_name(body, argument)[1]
    stores, root = store_chain(ret.arguments[result])
    if not stores or not (isinstance(root, BlockArgument) and root.index == argument
                          and root.owner is body.body.block):
        raise SpyreError(f"result #{result} updates buffer '{name}' in place, so it must be built by row stores "
                         f"(spyre.pointwise \"identity\" with scatter_dim) into that argument", op=ret)
    block = body.body.block
    for store in stores:
        if store.parent_block() is not block:
            raise SpyreError(f"a row store into buffer '{name}' must be at the function's top level", op=store)
        dest = store.inputs[2]
        late = [use.operation for use in dest.uses
                if use.operation is not store and not _before(use.operation, store, block)]
        if late:
            raise SpyreError(f"'{late[0].name}' reads buffer '{name}' after a row store overwrote it in place; "
                             "read it before the store, or store into a copy", op=late[0])


def check_row_stores(body: func.FuncOp) -> None:
    """Every row store of ``body`` writes a buffer argument that a result updates (a store writes its
    destination in place: into anything else it would lose the destination's other rows)."""
    ret = body.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    updated = {ret.arguments[j] for j in updated_arguments(body)}
    chained = {store for value in updated for store in store_chain(value)[0]}
    for op in body.walk():
        if is_row_store(op) and op not in chained:
            raise SpyreError("a row store writes its destination in place: its destination must be a buffer "
                             "argument that a result updates (spyre.updates), through row stores only", op=op)


def _before(op: Operation, anchor: Operation, block) -> bool:
    """True when ``op`` (or the top-level op holding it) comes before ``anchor`` in ``block``."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        if parent is None:
            return False
        op = parent
    return block.get_operation_index(op) < block.get_operation_index(anchor)
