# spyre-mask-contractions (DESIGN §6, §9): a matmul contracts its K padded to
# whole sticks, so what both operands hold there must multiply to zero.  Reads
# every spyre.matmul whose K is not a whole number of sticks and what its
# operands' padding may hold (analysis/padding.py).  Writes, after the operand
# whose padding may hold anything but zero, a `where3` of it against a
# `constant` argument of K ones (staged with zeros past K) that the matmul reads
# instead, and that argument into the func signature.
"""Zero what a matmul reads past K (:func:`mask_contractions`).

The matmul unit reads the left-hand side sticked on K, so a K of 5 float32
elements is read as a stick of 32; the right-hand side's rows are padded to
match.  Every term past K must be zero, and it is only when one operand holds
zeros there and the other finite values (``0 * inf`` is NaN).  A staged argument
holds zeros, so ``(x + 1) @ w`` needs nothing; but ``(x + 1) @ (z * 2 + 1).t()``
holds ones in both (each pointwise op writes whole sticks, ``1 + 0``), and
``log(x) @ w`` holds ``-inf`` in the left-hand side.  Such an operand is masked::

    %ones = func argument {spyre.role = "constant", spyre.value = dense<1.0> : tensor<5xf32>}
    %cond = spyre.view %ones affine_map<(d0, d1) -> (d1)> : tensor<5xf32> -> tensor<8x5xf32>
    %a0 = spyre.pointwise "where3" (%cond, %a) consts {y = 0.0} : ... -> tensor<8x5xf32>
    %c = spyre.matmul (%a0, %b) ...

``where3`` selects rather than multiplies, so an infinity past K leaves nothing;
past K the staged ones are zeros, and it writes zeros there (or, off its stick,
nobody writes them and memory planning zeroes them).  One operand is masked
when that leaves the other finite (the smaller one when either would do),
else both.  A mask follows the operand it reads (it joins the ``tiles`` hint
groups of the op that writes it); one value several matmuls read alike is
masked once.  The pass runs before spyre-propagate-named-dims, which names the
dims of what it adds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.passes import ModulePass

from spyre_mlir.analysis.kernel_args import argument_role_and_name, updated_arguments
from spyre_mlir.analysis.padding import ZERO, PaddingValues, is_finite
from spyre_mlir.analysis.views import Dim, dim, op_reads
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import CONSTANT_VALUE_ATTR, ComputeOp, MatmulOp, PointwiseOp, ViewOp, target_config
from spyre_mlir.dialects.spyre.types import element_dtype, tensor_shape
from spyre_mlir.hardware import SpyreConfig

MASK = "where3"
"""The op func that keeps an operand's values up to K and writes zeros past it."""


def padded_contraction(op: MatmulOp, config: SpyreConfig) -> int | None:
    """``op``'s iteration dim K when K is not a whole number of its left-hand side's sticks on
    ``config``, else None."""
    (k,) = op.reduction_dims()
    assert isinstance(op.inputs[0].type, TensorType)
    per_stick = config.elems_per_stick(element_dtype(op.inputs[0].type.get_element_type()))
    return k if op.get_iteration_space()[k] % per_stick else None


def operands_to_mask(op: MatmulOp, k: int, padding: PaddingValues) -> list[int]:
    """The operands of ``op`` to mask so that every term past K is zero: none when one operand
    holds zeros there and the other finite values, else one that leaves the other finite (when
    either would: one read as it is rather than through a view that moves K, a flattening the
    mask could not be read through; then the one of fewer elements), else both."""
    held = [padding.read(op, index, k) for index in (0, 1)]
    if any(held[i] == ZERO and is_finite(held[1 - i]) for i in (0, 1)):
        return []
    alone = [i for i in (0, 1) if is_finite(held[1 - i])]
    if not alone:
        return [0, 1]
    return [min(alone, key=lambda i: (_moves_k(op, i, k), math.prod(tensor_shape(op.inputs[i]))))]


def _moves_k(op: MatmulOp, index: int, k: int) -> bool:
    """True when operand ``index`` of ``op`` reads K through a view that does not keep it one
    dim of its storage, read as it is (``x.reshape(8, 6)`` of an ``x`` [8, 2, 3])."""
    _, reads, _ = op_reads(op)
    coords = [c for c in reads[index].coords if c.coefficient(Dim(k))]
    return coords != [dim(k)]


class _Masks:
    """The ``constant`` arguments of K ones of one function, one per element type and K."""

    def __init__(self, body: func.FuncOp):
        self.body = body
        self.ones: dict[tuple[Attribute, int], BlockArgument] = {}
        self.masked: dict[tuple[SSAValue, int], SSAValue] = {}
        """Each mask by the operand it reads and its K dim: one value read by several matmuls (a
        norm's output by the q, k and v projections) is masked once."""

    def argument(self, element: Attribute, extent: int) -> BlockArgument:
        """The argument of ``extent`` ones of ``element``, added to the signature on first use."""
        if (element, extent) not in self.ones:
            block = self.body.body.block
            names = {argument_role_and_name(self.body, i)[1] for i in range(len(block.args))}
            base = f"const_ones_{extent}"
            name = next(n for j in range(len(names) + 1) if (n := base if j == 0 else f"{base}_{j}") not in names)
            arg = block.insert_arg(TensorType(element, [extent]), len(block.args))
            arg.name_hint = name
            data = np.ones(extent, np.float32).tobytes()
            attrs = [*(self.body.arg_attrs.data if self.body.arg_attrs is not None
                       else [DictionaryAttr({})] * (len(block.args) - 1)),
                     DictionaryAttr({"spyre.role": StringAttr("constant"), "spyre.name": StringAttr(name),
                                     CONSTANT_VALUE_ATTR: DenseIntOrFPElementsAttr(TensorType(f32, [extent]),
                                                                                   BytesAttr(data))})]
            self.body.arg_attrs = ArrayAttr(attrs)
            self.body.function_type = FunctionType.from_lists(block.arg_types, self.body.function_type.outputs.data)
            self.ones[element, extent] = arg
        return self.ones[element, extent]

    def mask(self, op: MatmulOp, index: int, k: int) -> None:
        """Read operand ``index`` of ``op`` through a ``where3`` that keeps it up to K, zero past."""
        operand = op.inputs[index]
        assert isinstance(operand.type, TensorType)
        results = op.get_indexing_maps()[index].results
        host = next((j for j, e in enumerate(results) if isinstance(e, AffineDimExpr) and e.position == k), None)
        if host is None or tensor_shape(operand)[host] != op.get_iteration_space()[k]:
            raise SpyreError(f"cannot zero what this matmul reads past its contraction of "
                             f"{op.get_iteration_space()[k]} elements: operand #{index} reads it through "
                             f"{op.get_indexing_maps()[index]}", op=op)
        key = (operand, host)
        if key in self.masked:
            op.operands[index] = self.masked[key]
            return
        shape, element = tensor_shape(operand), operand.type.get_element_type()
        ones = self.argument(element, shape[host])
        plain = TensorType(element, shape)
        cond = ViewOp(ones, AffineMap(len(shape), 0, (AffineExpr.dimension(host),)), plain)
        masked = PointwiseOp(MASK, [cond.result, operand], plain, {"y": 0.0})
        for new in (cond, masked):
            new.location = op.location
        writer = _writer(operand)
        if writer is not None and writer.hints is not None:  # a member of its producer's tile groups
            masked.hints = writer.hints
        cond.result.name_hint, masked.result.name_hint = "k_valid", "k_masked"
        block = self.body.body.block
        if isinstance(operand.owner, Operation):
            block.insert_ops_after([cond, masked], operand.owner)
        else:
            block.insert_ops_before([cond, masked], block.first_op)
        op.operands[index] = self.masked[key] = masked.result


def _writer(value: SSAValue) -> ComputeOp | None:
    """The compute op that writes the storage ``value`` views, None for an argument's."""
    while isinstance(value.owner, ViewOp):
        value = value.owner.source
    return value.owner if isinstance(value.owner, ComputeOp) else None


def mask_contractions(body: func.FuncOp, config: SpyreConfig) -> None:
    """Mask, for each matmul of ``body`` whose K is not a whole number of ``config``'s sticks, the
    operands :func:`operands_to_mask` names."""
    block = body.body.block
    updated = frozenset(block.args[i] for i in updated_arguments(body).values())
    padding, masks = PaddingValues(updated), _Masks(body)
    for op in [op for op in body.walk() if isinstance(op, MatmulOp)]:
        k = padded_contraction(op, config)
        if k is None:
            continue
        for index in operands_to_mask(op, k, padding):
            masks.mask(op, index, k)


@dataclass(frozen=True)
class MaskContractionsPass(ModulePass):
    """Zero what each matmul reads past a K that is not a whole number of sticks."""

    name = "spyre-mask-contractions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = target_config(op)
        for body in op.ops:
            if isinstance(body, func.FuncOp) and not body.is_declaration:
                mask_contractions(body, config)
