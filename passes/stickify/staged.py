# Step 1 of spyre-stickify for the arguments the runtime stages: a buffer a program
# updates in place (a KV cache) and a parameter, buffer or constant without a layout yet
# take the stick dim the readers of their values need, chosen once.  Reads the func's
# argument roles, its updated arguments and their row-store chains
# (spyre_mlir.analysis.updates), the indirect accesses that address each value, and the
# readers' demands (Chooser); writes no IR.
"""The stick dim of an argument the runtime stages (step 1 of :mod:`spyre_mlir.passes.stickify`).

An argument's layout is fixed before any op is visited: the runtime stages it, and
every row store into it keeps it.  An argument staged once (role ``parameter``,
``buffer`` or ``constant``: the manifest tells the runtime its layout) or updated in
place, whose type carries no layout yet, takes the stick dim that the readers of its
values (the argument and each store's result) want, as far as
:meth:`Chooser.reader_demands` knows them (not counting the indirect accesses that read
and write it: they follow it):

- a key cache read transposed by attention (a matmul's B, ``N`` its positions) is
  sticked on its positions, so that no step restickifies it;
- a weight read by two ops that want it sticked alike, on a dim other than its
  innermost (wav2vec2's positional convolution kernel ``[O, C, K]``, normalised over
  ``O`` and ``C`` and read per tap as a matmul's ``[O, C]`` left-hand side), is staged
  sticked on ``C`` instead of being copied on every run; one read by one op only was
  staged so by ``spyre-stage-layouts`` already, and still is.

Only dims every indirect access of those values allows are candidates: the dim an
index addresses carries the stick only when the index addresses whole sticks of it
(``index_step`` a multiple of the elements per stick: a decode step's store of one
position as a block, not an embedding table's row gather).  Ties go to the innermost
dim, the default.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, SSAValue

from spyre_mlir.analysis.kernel_args import argument_role_and_name, updated_arguments
from spyre_mlir.analysis.updates import store_chain
from spyre_mlir.dialects.spyre import ComputeOp, LayoutAttr
from spyre_mlir.manifest import STAGED_ROLES
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


def staged_arguments(body: func.FuncOp) -> dict[BlockArgument, list[SSAValue]]:
    """Each argument of ``body`` without a layout yet that the runtime stages -> the values laid out
    as it is: a buffer updated in place, its row stores' results (:func:`updated_buffers`); a
    parameter, buffer or constant of at least one dim, itself (a scalar has no stick to choose)."""
    found = updated_buffers(body)
    for index, arg in enumerate(body.args):
        if arg not in found and isinstance(arg.type, TensorType) and not isinstance(arg.type.encoding, LayoutAttr) \
                and arg.type.get_shape() and argument_role_and_name(body, index)[0] in STAGED_ROLES:
            found[arg] = [arg]
    return found


def staged_stick(values: list[SSAValue], chooser: Chooser) -> int:
    """The stick dim of an argument whose ``values`` (:func:`staged_arguments`) are laid out alike:
    the allowed dim whose readers' restickifies copy the fewest bytes, ties to the innermost."""
    rank = len(value_shape(values[0]))
    candidates = [d for d in range(rank) if all(allows(v, d) for v in values)]
    demands = [(v, chooser.reader_demands(v, through_index=False)) for v in values]

    def cost(stick: int) -> int:
        return sum(chooser.demand_bytes(v, stick, wanted) for v, wanted in demands)

    return min(candidates, key=lambda s: (cost(s), s != rank - 1, s))
