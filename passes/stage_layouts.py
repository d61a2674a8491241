# spyre-stage-layouts (DESIGN §6, §10): the layout the runtime stages each
# function argument in.  Reads every plain `spyre.restickify` of a function
# argument (spyre-stickify inserts them where a reader needs another stick
# dim) and the argument's `spyre.role` and other uses.  Writes the argument's
# type (its `#spyre.layout`, which the manifest passes on to the runtime) and
# the func signature, erases the restickify it replaces, and warns for every
# argument it leaves copied on each run.
"""Stage parameters in the layout their readers want, once, instead of copying them on every run.

Before (``%w``, an ``nn.Linear`` weight, read transposed by a matmul)::

    func.func @f(%x: tensor<256x1024xf16, #L>, %w: tensor<512x1024xf16, #L> {spyre.role = "parameter"}) ... {
      %wt = spyre.restickify (%w) : (tensor<512x1024xf16, #L>) -> tensor<512x1024xf16, #T>
      %v = spyre.view (%wt) ...

After ``spyre-stage-layouts``::

    func.func @f(%x: tensor<256x1024xf16, #L>, %w: tensor<512x1024xf16, #T> {spyre.role = "parameter"}) ... {
      %v = spyre.view (%w) ...

A function argument is staged in the layout of its restickify when its role is
``parameter``, ``buffer`` or ``constant`` (weights, and the values compile-time
evaluation computed, that the runtime stages once and reuses; with
``stage-inputs``, user inputs too), and that restickify, a plain
one (no explicit maps), is its only use.  Its type then carries the
restickify's layout, padding included (staging writes zeros there), the manifest
tells the runtime to stage it that way, and the copy is gone from every run.
Every other restickified argument keeps its copy, with a warning that says
which layout would avoid it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from spyre_mlir.analysis.kernel_args import argument_role_and_name
from spyre_mlir.diagnostics import describe_argument, emit_warning
from spyre_mlir.dialects.spyre import RestickifyOp, tensor_layout
from spyre_mlir.manifest import STAGED_ROLES


def stage_layouts(body: func.FuncOp, stage_inputs: bool = False) -> list[BlockArgument]:
    """Re-type each argument of ``body`` that may be staged as its one restickify wants it and
    erase that restickify (again, while the re-typed argument has such a restickify: a padded
    copy, then a change of stick); warn for every other restickified argument.  Returns the
    re-typed arguments."""
    staged: list[int] = []
    for index in range(len(body.args)):
        while (copy := _stageable_copy(body, body.args[index], stage_inputs)) is not None:
            new_arg = Rewriter.replace_value_with_new_type(body.args[index], copy.result.type)
            copy.result.replace_all_uses_with(new_arg)
            Rewriter.erase_op(copy)
            if index not in staged:
                staged.append(index)
        arg = body.args[index]
        for use in arg.uses:
            if _plain_copy(use.operation) is not None:
                layout = tensor_layout(_chain_end(use.operation).result.type)
                emit_warning(f"{describe_argument(arg)} is copied by spyre.restickify to dim_order "
                             f"{list(layout.dim_order)}, device_size {list(layout.device_size)}; stage it that "
                             "way to avoid the copy", op=use.operation)
    if staged:
        body.function_type = FunctionType.from_lists(body.body.blocks[0].arg_types, body.function_type.outputs.data)
    return [body.args[index] for index in staged]


def _plain_copy(op: Operation) -> RestickifyOp | None:
    """``op`` if it is a restickify without explicit maps (a change of layout, not of shape)."""
    return op if isinstance(op, RestickifyOp) and not op.has_explicit_maps() else None


def _only_use(value: SSAValue) -> Operation | None:
    return next(iter(value.uses)).operation if value.uses.get_length() == 1 else None


def _stageable_copy(body: func.FuncOp, arg: BlockArgument, stage_inputs: bool) -> RestickifyOp | None:
    """The plain restickify that is the only use of ``arg``, if ``arg`` may be staged in its layout."""
    role, _ = argument_role_and_name(body, arg.index)
    if role not in STAGED_ROLES and not stage_inputs:
        return None
    reader = _only_use(arg)
    return None if reader is None else _plain_copy(reader)


def _chain_end(copy: RestickifyOp) -> RestickifyOp:
    """The last of the plain restickifies that each only read the one before (a padded copy,
    then a change of stick): the layout the argument ends up in."""
    while (reader := _only_use(copy.result)) is not None and (following := _plain_copy(reader)) is not None:
        copy = following
    return copy


@dataclass(frozen=True)
class StageLayoutsPass(ModulePass):
    """Stage parameters and compile-time constants (and, with ``stage_inputs``, user inputs) in the
    layout their one restickify wants instead of copying them on every run."""

    name = "spyre-stage-layouts"

    stage_inputs: bool = False
    """Stage user inputs in their readers' layout too (the caller then provides them that way)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for body in op.ops:
            if isinstance(body, func.FuncOp) and not body.is_declaration:
                stage_layouts(body, self.stage_inputs)
