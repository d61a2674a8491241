# Batched matmuls written in the shape their program reads them as.  Reads the
# imported function body (spyre.matmul results and the spyre.view ops reading
# them); rewrites a matmul whose one reader views its result with unit dims
# inserted to write that shape itself (explicit iteration space and maps), and
# drops the view.  Used by import_program.
"""Matmul results in the shape of their one view.

torch decomposes a matmul of ``[1, H, S, D]`` tensors into a ``bmm`` of ``[H, S, D]`` views
whose ``[H, S, S]`` result it views back as ``[1, H, S, S]``: attention's scores and its
product by the values.  The two shapes have different device layouts (a layout places its
first host dim just outside the stick: the heads of ``[H, S, S]``, the unit dim of
``[1, H, S, S]``), so the ops that read the view (the mask's add, the softmax) could neither
overwrite the matmul's result in place nor read it where they write their own.  A matmul
that is read only through a view inserting dims of one element writes the view's shape
instead: its result map gains a constant 0 for each inserted dim, every element stays where
it was, and the view goes.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from spyre_mlir.dialects.spyre import MatmulOp, ViewOp


def _inserted_unit_dims(view: ViewOp) -> tuple[int, ...] | None:
    """The view's result dims that each source dim becomes, when the view only inserts dims of
    one element (its map reads the source dims in order, one result dim each) and none after the
    last (a matmul's N stays its result's innermost dim, which the device fills sticks along:
    ``(x @ w).unsqueeze(-1)`` stays a view); else None."""
    assert isinstance(view.result.type, TensorType)
    shape = view.result.type.get_shape()
    taken = []
    for expr in view.map.data.results:
        if not isinstance(expr, AffineDimExpr) or (taken and expr.position <= taken[-1]):
            return None
        taken.append(expr.position)
    if any(shape[d] != 1 for d in range(len(shape)) if d not in taken) or taken[-1:] != [len(shape) - 1]:
        return None
    return tuple(taken)


def write_viewed_matmul_results(block: Block) -> None:
    """Give each matmul of ``block`` read only through a view inserting unit dims the view's shape."""
    for view in [op for op in block.ops if isinstance(op, ViewOp)]:
        writer = view.source.owner
        if not isinstance(writer, MatmulOp) or not view.source.has_one_use():
            continue
        taken = _inserted_unit_dims(view)
        if taken is None:
            continue
        space, maps = writer.get_iteration_space(), writer.get_indexing_maps()
        old = maps[-1].results
        results = [old[taken.index(d)] if d in taken else AffineConstantExpr(0)
                   for d in range(view.map.data.num_dims)]
        new = MatmulOp.create(operands=list(writer.operands), result_types=[view.result.type],
                              properties=dict(writer.properties), attributes=dict(writer.attributes),
                              location=writer.location)
        new.set_indexing(space, (*maps[:-1], AffineMap(len(space), 0, tuple(results))))
        block.insert_op_before(new, writer)
        view.result.replace_all_uses_with(new.result)
        block.erase_op(view)
        block.erase_op(writer)
