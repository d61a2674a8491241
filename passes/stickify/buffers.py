# Step 1 of spyre-stickify for a buffer a program updates in place (a KV cache): its stick
# dim, chosen once by what the readers of its values need.  Reads the func's updated
# arguments and their row-store chains (spyre_mlir.analysis.updates), the indirect
# accesses that address each value, and the readers' demands (Chooser); writes no IR.
"""The stick dim of a buffer argument updated in place (step 1 of :mod:`spyre_mlir.passes.stickify`).

An argument's layout is fixed before any op is visited: the runtime stages it, and
every row store into it keeps it.  A buffer whose type carries no layout yet takes
the stick dim that the readers of its values (the argument and each store's result)
want, as far as :meth:`Chooser.reader_demands` knows them (not counting the
indirect accesses that read and write it: they follow it): a key cache read
transposed by attention (a matmul's B, ``N`` its positions) is sticked on its
positions, so that no step restickifies it.  Only dims every indirect access of
those values allows are candidates: the dim an index addresses carries the stick
only when the index addresses whole sticks of it (``index_step`` a multiple of the
elements per stick: a decode step's store of one position as a block).  Ties go to
the innermost dim, the default.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import BlockArgument, SSAValue

from spyre_mlir.analysis.kernel_args import updated_arguments
from spyre_mlir.analysis.updates import store_chain
from spyre_mlir.dialects.spyre import ComputeOp, LayoutAttr
from spyre_mlir.passes.stickify.choice import Chooser
from spyre_mlir.passes.stickify.plan import value_layout, value_shape


def updated_buffers(body: func.FuncOp) -> dict[BlockArgument, list[SSAValue]]:
    """Each buffer argument of ``body`` a result updates in place, without a layout yet -> its values:
    the argument, then each row store's result, first to last."""
    ret = body.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    found: dict[BlockArgument, list[SSAValue]] = {}
    for result, index in updated_arguments(body).items():
        arg = body.body.block.args[index]
        stores, root = store_chain(ret.arguments[result])
        if root is arg and not isinstance(arg.type.encoding, LayoutAttr):
            found[arg] = [arg, *(store.result for store in stores)]
    return found


def allows(value: SSAValue, stick: int) -> bool:
    """Whether every indirect access that addresses ``value`` as its table allows it sticked on
    ``stick``: off the addressed dim, or on it in blocks of whole sticks."""
    eps = value_layout(value, stick).elems_per_stick
    for use in value.uses:
        op = use.operation
        indirect = op.indirect_access() if isinstance(op, ComputeOp) else None
        if indirect is not None and use.index == indirect.table and indirect.table_dim == stick \
                and indirect.step % eps:
            return False
    return True


def buffer_stick(values: list[SSAValue], chooser: Chooser) -> int:
    """The stick dim of a buffer whose ``values`` (:func:`updated_buffers`) are laid out alike: the
    allowed dim whose readers' restickifies copy the fewest bytes, ties to the innermost."""
    rank = len(value_shape(values[0]))
    candidates = [d for d in range(rank) if all(allows(v, d) for v in values)]
    demands = [(v, chooser.reader_demands(v, through_index=False)) for v in values]

    def cost(stick: int) -> int:
        return sum(chooser.demand_bytes(v, stick, wanted) for v, wanted in demands)

    return min(candidates, key=lambda s: (cost(s), s != rank - 1, s))
