# spyre-pad-dims (DESIGN §8): pads a dim no split fills the cores with to one that does.
# Reads the compute ops of each function, loop bodies included (iteration spaces, indexing
# maps, op funcs, consts), their tensors' layouts, the arguments' roles and the module's
# `#spyre.target`; prices the padded plan against the plain one with the later planning stages
# (analysis.cost).  Writes wider `device_size`s (padding) into the layouts of the tensors along a
# padded dim, the function signature for the arguments among them, and explicit iteration
# spaces that iterate the padding on the ops that compute it.
"""Padding a dim for the cores.

Intermediate 12,800 of a Granite-8B MLP is 200 sticks: no split of 200
fills 32 cores (the best, 25, gives each core 8 sticks), so SwiGLU's silu, mul
and down projection ran on 25 cores.  Padded to 224 sticks, each of 32 cores
takes 7::

    %h = spyre.pointwise "silu" (%g) : (tensor<512x12800xf16, #L>) -> tensor<512x12800xf16, #L>

becomes, with ``#P = #spyre.layout<device_size = [224, 512, 64], ...>``::

    %h = spyre.pointwise "silu" (%g) {iteration_space = array<i64: 512, 14336>, ...}
           : (tensor<512x12800xf16, #P>) -> tensor<512x12800xf16, #P>

Host shapes stay; the layouts hold the padding, and the ops that iterate it
address it through them.

1. **Groups** (:func:`pad_groups`).  An iteration dim of a compute op (at the
   top level or in a loop's body) and a host dim of a tensor the op indexes by
   that dim alone (``d``: coefficient 1, no offset) are linked, and so, through
   it, are all the ops that index one tensor's dim: a linked set is a group,
   padded as one.  A matmul's M, N and batch dims are the group's edge: the
   matmul iterates their valid extent, reading its operands' valid part and
   writing its result's, whose padding a zeroed buffer supplies (DESIGN §9).  A
   matmul's K is in the group: it iterates the padding of both operands.  An op
   that reads a padded tensor through another map (a slice at an offset) reads
   inside its valid extent and stays as it is.
2. **Soundness.**  A group is padded only where its padding holds zeros: every
   tensor in it is a staged argument (parameter, buffer or constant: staging
   writes zeros in a layout's padding) the program does not update in place,
   the result of an edge matmul, or the result of an op in the group whose op
   func keeps zeros (:meth:`OpFunc.keeps_zeros`: ``silu``, a product; not
   ``exp``, not ``x + 1``) and whose tensor inputs are all in the group and
   hold zeros there.  A padded K then adds ``0 * 0``, and every op computes
   zeros where it iterates the padding.  A group is refused where one of its
   ops indexes a tensor by its dim another way (an offset, a multiple, a
   division), reduces along it (a max would see the zeros), reads through an
   index or moves data, or a tensor in it is a user input, a function result,
   used by anything but a compute op (a loop's yield, a window's insertion) or
   written otherwise, or its tensors differ in extent or stick width, or one
   has two dims in it or is padded along it already.
3. **Decision.**  A group of ``P`` pieces (sticks, where a tensor is sticked
   along it, else elements) is a candidate on ``c`` cores when padding it to
   ``ceil(P / c) * c`` pieces gives each core fewer than the largest divisor of
   ``P`` within ``c`` does (:meth:`PadGroup.padded_extent`).  The candidates
   (but one sharing an op or a tensor with an earlier candidate, which stays as
   it is) are padded together on a clone; the padded and the plain module go
   through the later planning stages, and the padding is kept where the cost
   model predicts the padded plan faster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import BlockArgument, OpResult, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from spyre_mlir.analysis.decisions import shared_decisions
from spyre_mlir.analysis.kernel_args import argument_role_and_name, updated_arguments
from spyre_mlir.analysis.work import divisors
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, layout_attr, target_config, tensor_layout, used_dims
from spyre_mlir.dialects.spyre.types import tensor_shape
from spyre_mlir.layout import stick_layout
from spyre_mlir.manifest import STAGED_ROLES
from spyre_mlir.opfuncs import OpKind


class _Node(NamedTuple):
    """An iteration dim of a compute op (``kind`` "op", or "edge" for a matmul's M, N or batch
    dims) or a host dim of a tensor (``kind`` "value")."""

    kind: str
    item: ComputeOp | SSAValue
    dim: int


@dataclass
class PadGroup:
    """A dim padded as one: the ops that iterate its padding and the tensors that hold it."""

    extent: int
    """The valid extent (host elements)."""

    piece: int
    """Elements per piece: the stick width where a tensor is sticked along the dim, else 1."""

    ops: dict[ComputeOp, int] = field(default_factory=dict)
    """The ops that iterate the padding, with their iteration dim along the group."""

    values: dict[SSAValue, int] = field(default_factory=dict)
    """The tensors that hold the padding, with their host dim along the group."""

    def padded_extent(self, cores: int) -> int | None:
        """The extent to pad to on ``cores``, None when padding gives no core fewer pieces."""
        pieces = self.extent // self.piece
        best = max(d for d in divisors(pieces) if d <= cores)
        per_core = -(-pieces // cores)
        if per_core * best >= pieces:
            return None
        return per_core * cores * self.piece


class _Links:
    """Union-find over :data:`_Node`s, with the nodes whose group may not be padded."""

    def __init__(self) -> None:
        self.parent: dict[_Node, _Node] = {}
        self.refused: set[_Node] = set()

    def root(self, node: _Node) -> _Node:
        self.parent.setdefault(node, node)
        while self.parent[node] != node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def link(self, a: _Node, b: _Node) -> None:
        self.parent[self.root(a)] = self.root(b)

    def groups(self) -> dict[_Node, list[_Node]]:
        out: dict[_Node, list[_Node]] = {}
        for node in list(self.parent):
            out.setdefault(self.root(node), []).append(node)
        return out


def _link_op(op: ComputeOp, links: _Links) -> None:
    """Link ``op``'s iteration dims with the host dims of the tensors it indexes by them alone."""
    maps, tensors = op.get_indexing_maps(), [*op.inputs, op.result]
    func_kind = op.op_func().kind
    reduced = set(op.reduction_dims())
    edge = set() if func_kind is not OpKind.MATMUL else set(range(len(op.get_iteration_space()))) - reduced
    for d in range(len(op.get_iteration_space())):
        node = _Node("edge" if d in edge else "op", op, d)
        links.root(node)
        if func_kind is OpKind.DATA_MOVEMENT or op.indirect_access() is not None or \
                (func_kind is OpKind.REDUCTION and d in reduced):
            links.refused.add(node)
        for position, (m, value) in enumerate(zip(maps, tensors)):
            for h, expr in enumerate(m.results):
                if d not in used_dims(expr):
                    continue
                if expr != AffineDimExpr(d):
                    links.refused.add(node)
                elif d not in edge or position == len(tensors) - 1:
                    links.link(node, _Node("value", value, h))
        if d not in edge and any(d not in (e.position for e in m.results if isinstance(e, AffineDimExpr))
                                 for m in maps[:-1]):
            links.refused.add(node)  # an input broadcast along the dim: its padding is no zero


def _check_value(staged: set[BlockArgument], value: SSAValue, h: int, links: _Links) -> None:
    """Refuse ``value``'s dim ``h`` unless a compute op or one of the ``staged`` arguments (staged
    by the runtime, never updated in place) holds it, and only compute ops read it."""
    node = _Node("value", value, h)
    if any(not isinstance(use.operation, ComputeOp) for use in value.uses):
        links.refused.add(node)
    if isinstance(value, BlockArgument):
        if value not in staged:  # a user input, a buffer updated in place, a loop's argument
            links.refused.add(node)
    elif not (isinstance(value, OpResult) and isinstance(value.op, ComputeOp)
              and isinstance(value.op.get_indexing_maps()[-1].results[h], AffineDimExpr)):
        links.refused.add(node)


def _group(nodes: list[_Node]) -> PadGroup | None:
    """The group of ``nodes``, None when a tensor has two dims in it, or its tensors' extents,
    pieces or padding disagree."""
    tensor_nodes = [n for n in nodes if n.kind == "value"]
    values: dict[SSAValue, int] = {n.item: n.dim for n in tensor_nodes}  # type: ignore[misc]
    ops: dict[ComputeOp, int] = {n.item: n.dim for n in nodes if n.kind == "op"}  # type: ignore[misc]
    if not ops or len(values) < len(tensor_nodes):
        return None
    extents = {tensor_shape(v)[h] for v, h in values.items()}
    extents |= {op.get_iteration_space()[d] for op, d in ops.items()}
    if len(extents) != 1:
        return None
    extent = extents.pop()
    layouts = {v: tensor_layout(v.type) for v in values}
    if any(layouts[v].padded_host_shape[h] != extent for v, h in values.items()):
        return None
    pieces = {layouts[v].elems_per_stick for v, h in values.items() if layouts[v].stick_dim == h}
    if len(pieces) > 1:
        return None
    piece = pieces.pop() if pieces else 1
    if extent % piece:
        return None
    return PadGroup(extent, piece, ops, values)


def _holds_zeros(group: PadGroup) -> bool:
    """Every tensor of ``group`` holds zeros in its padding (the module docstring's rule 2)."""
    zeros: dict[SSAValue, bool] = {}

    def zero(value: SSAValue) -> bool:
        if value not in zeros:
            writer = value.op if isinstance(value, OpResult) else None
            if isinstance(writer, ComputeOp) and writer in group.ops:
                zeros[value] = writer.op_func().keeps_zeros(writer.const_values()) and \
                    all(zero(v) for v in writer.inputs)
            else:  # a staged argument, or an edge matmul's result (a zeroed buffer)
                assert writer is None or writer.op_func().kind is OpKind.MATMUL, writer
                zeros[value] = True
        return zeros[value]

    return all(zero(v) for v in group.values)


def pad_groups(module: ModuleOp) -> list[PadGroup]:
    """The groups of every function of ``module`` that may be padded, in program order."""
    found: list[PadGroup] = []
    for body in module.ops:
        if not isinstance(body, func.FuncOp) or not body.body.blocks:
            continue
        links = _Links()
        for op in body.walk():
            if isinstance(op, ComputeOp):
                _link_op(op, links)
        updated = set(updated_arguments(body).values())
        staged = {arg for i, arg in enumerate(body.body.block.args)
                  if i not in updated and argument_role_and_name(body, i)[0] in STAGED_ROLES}
        for node in list(links.parent):
            if node.kind == "value":
                _check_value(staged, node.item, node.dim, links)  # type: ignore[arg-type]
        for nodes in links.groups().values():
            if any(node in links.refused for node in nodes):
                continue
            group = _group(nodes)
            if group is not None and _holds_zeros(group):
                found.append(group)
    return found


def pad(group: PadGroup, extent: int) -> None:
    """Pad ``group`` to ``extent``: its tensors' layouts and the iteration spaces of its ops."""
    for value, h in group.values.items():
        assert isinstance(value.type, TensorType)
        layout = tensor_layout(value.type)
        padded = list(layout.padded_host_shape)
        padded[h] = extent
        wider = stick_layout(layout.host_shape, layout.dtype, layout.dim_order, padded_shape=padded)
        new = Rewriter.replace_value_with_new_type(
            value, TensorType(value.type.get_element_type(), value.type.get_shape(), layout_attr(wider)))
        if isinstance(new, BlockArgument):
            body = new.block.parent_op()
            assert isinstance(body, func.FuncOp)
            inputs = list(body.function_type.inputs.data)
            inputs[new.index] = new.type
            body.function_type = FunctionType.from_lists(inputs, body.function_type.outputs.data)
    for op, d in group.ops.items():
        space = list(op.get_iteration_space())
        space[d] = extent
        op.set_indexing(space, op.get_indexing_maps())


def _pad_candidates(module: ModuleOp, cores: int) -> bool:
    """Pad the candidate groups of ``module`` on ``cores`` (of those sharing an op or a tensor,
    the first in program order); False when there is none."""
    taken: set[object] = set()
    candidates = []
    for group in pad_groups(module):
        extent = group.padded_extent(cores)
        members = {*group.ops, *group.values}
        if extent is not None and not members & taken:
            taken |= members
            candidates.append((group, extent))
    for group, extent in candidates:
        pad(group, extent)
    return bool(candidates)


def _predicted_ns(module: ModuleOp, lx_solver: str) -> float:
    """The cost model's total for ``module`` (a clone) after the stages that follow this one
    (memory planning with ``lx_solver``)."""
    from spyre_mlir.analysis.cost import cost_report
    from spyre_mlir.pipeline import planning_stages

    for stage in planning_stages(lx_solver=lx_solver, first="spyre-work-division"):
        stage.apply(Context(), module)
    return cost_report(module).total_ns


def pad_dims(module: ModuleOp, lx_solver: str = "auto") -> bool:
    """Pad ``module``'s candidate groups where the padded plan is predicted faster (memory
    planned with ``lx_solver``); True when it did.  An error planning the module as it is (a bad
    ``lx_solver``) is raised; a padded plan a stage refuses is not taken."""
    cores = target_config(module).cores
    if cores == 1:
        return False
    padded = module.clone()
    if not _pad_candidates(padded, cores):
        return False
    with shared_decisions():  # the two plans differ only around the padding
        without = _predicted_ns(module.clone(), lx_solver)
        try:
            with_padding = _predicted_ns(padded, lx_solver)
        except SpyreError:
            return False
    return with_padding < without and _pad_candidates(module, cores)


@dataclass(frozen=True)
class PadDimsPass(ModulePass):
    """Pad the dims no split fills the cores with, where the cost model predicts it pays."""

    name = "spyre-pad-dims"

    lx_solver: str = "auto"
    """spyre-plan-memory's LX solver in the stages that price the padding."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pad_dims(op, self.lx_solver)
