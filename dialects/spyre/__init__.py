# The `spyre` dialect: tensor-level ops and attributes of the Spyre front end.
# Reads the op-func table (spyre_mlir.opfuncs) and the stick-layout model
# (spyre_mlir.layout); writes nothing.  Every pass talks to compute ops through
# ComputeOp (iteration space, indexing maps, reduction dims, op func), and reads
# the target facts (cores, LX fraction) through target_config (`spyre.target`).
# The Dialect object is here; beside it: attributes.py (layout, hint, placement,
# target), types.py (dtypes, tensor layouts, type checks), maps.py (default
# indexing maps), interface.py (ComputeOp), ops.py (the ops).
"""The ``spyre`` dialect.

Ops::

    %y = spyre.pointwise "add" (%a, %b) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
    %y = spyre.pointwise "add" (%a) consts {y = 2.0 : f32} : (tensor<4x64xf16>) -> tensor<4x64xf16>
    %e = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64} : (tensor<2x100xi32>, tensor<1000x96xf16>) -> tensor<2x100x96xf16>
    %s = spyre.reduce "sum" (%a) dims [1] : (tensor<4x64xf16>) -> tensor<4xf16>
    %c = spyre.matmul (%a, %b) : (tensor<4x64xf16>, tensor<64x8xf16>) -> tensor<4x8xf16>
    %v = spyre.view %a affine_map<(d0, d1) -> (d1, d0)> : tensor<4x64xf16> -> tensor<64x4xf16>
    %r = spyre.restickify (%a) : (tensor<64x128xf16, #L0>) -> tensor<64x128xf16, #L1>
    %z = spyre.fill 0.0 : tensor<4x64xf16>

Attributes: ``#spyre.layout`` (tensor encoding), ``#spyre.hint`` (a ``spyre_hint``
scope), ``#spyre.placement`` (where a value lives), ``#spyre.target`` (the machine
a module is compiled for, the module attribute ``spyre.target``: read it with
:func:`target_config`, write it with :func:`attach_target`).  Compute ops optionally carry
``dims`` (names per iteration dim), ``core_splits`` (cores per iteration dim),
``core_replicas`` (cores computing each slice, into their own LX), ``placement`` (of the result), ``hints``, and explicit ``indexing_maps`` /
``iteration_space`` written by view folding.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from spyre_mlir.dialects.spyre.attributes import (
    CONSTANT_VALUE_ATTR,
    RANGE_ATTR,
    HOST_DTYPE_ATTR,
    TARGET_ATTR,
    HintAttr,
    LayoutAttr,
    Memory,
    PlacementAttr,
    PlacementKind,
    TargetAttr,
    attach_target,
    layout_attr,
    target_config,
)
from spyre_mlir.dialects.spyre.interface import ComputeOp, IndirectAccess
from spyre_mlir.dialects.spyre.maps import expr_range, used_dims
from spyre_mlir.dialects.spyre.ops import FillOp, MatmulOp, PointwiseOp, ReduceOp, RestickifyOp, ViewOp
from spyre_mlir.dialects.spyre.types import element_dtype, tensor_layout

__all__ = [
    "Spyre",
    "PointwiseOp", "ReduceOp", "MatmulOp", "RestickifyOp", "ViewOp", "FillOp",
    "ComputeOp", "IndirectAccess",
    "LayoutAttr", "HintAttr", "PlacementAttr", "TargetAttr", "Memory", "PlacementKind",
    "TARGET_ATTR", "CONSTANT_VALUE_ATTR", "RANGE_ATTR", "HOST_DTYPE_ATTR", "target_config", "attach_target",
    "layout_attr", "tensor_layout", "element_dtype", "expr_range", "used_dims",
]


Spyre = Dialect(
    "spyre",
    [PointwiseOp, ReduceOp, MatmulOp, RestickifyOp, ViewOp, FillOp],
    [LayoutAttr, HintAttr, PlacementAttr, TargetAttr],
)
