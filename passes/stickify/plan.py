# The plan of spyre-stickify: the layout decided for each materialised value,
# and what it implies for an op's tensors (padding, followers of a driver).
# Reads shapes, element types, layouts of types and each compute op's reads of
# storage through views; writes no IR.
"""Stick decisions and the facts read off them.

:class:`Plan` holds one layout per decided materialised value.  From it follow
the iteration dims an op pads to whole sticks (:func:`padded_dims`), the tensors
that lack that padding (:func:`missing_padding`) and the dims that could carry a
required driver (:func:`followers`).  The layout of a view and the stick dims an
assembly's buffer may take are fixed by the plan of their storage.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, SSAValue

from spyre_mlir.analysis.assembly import Assembly, assembly_filled_by, assembly_of
from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.views import Dim, Read, atoms, dim, map_coords, nest_row, op_reads, read_through_views
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import (
    ComputeOp,
    FillOp,
    LayoutAttr,
    ViewOp,
    element_dtype,
    layout_attr,
    tensor_layout,
)
from spyre_mlir.hardware import element_bytes, round_up
from spyre_mlir.layout import StickLayout, stick_layout
from spyre_mlir.passes.stickify.drivers import (
    BROADCAST,
    dim_order,
    dims_driven_by,
    driven_stick,
    splits_stick,
    stick_driver,
)


def value_shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def value_layout(value: SSAValue, stick: int | None, padded: Sequence[int] | None = None) -> StickLayout:
    assert isinstance(value.type, TensorType)
    dtype = element_dtype(value.type.get_element_type())
    shape = value_shape(value)
    return stick_layout(shape, dtype, dim_order(len(shape), stick), padded_shape=padded)


def host_bytes(value: SSAValue) -> int:
    """Bytes of ``value``'s elements: what a restickify of it copies, padding aside."""
    assert isinstance(value.type, TensorType)
    return math.prod(value_shape(value)) * element_bytes(element_dtype(value.type.get_element_type()))


def with_layout(value: SSAValue, layout: StickLayout) -> TensorType:
    assert isinstance(value.type, TensorType)
    return TensorType(value.type.get_element_type(), value.type.get_shape(), layout_attr(layout))


@dataclass
class Plan:
    """Stick decisions: the layout of every decided materialised value."""

    layouts: dict[SSAValue, StickLayout] = field(default_factory=dict)
    fixed: set[SSAValue] = field(default_factory=set)
    """Values whose layout comes from their type (arguments, restickify results, earlier runs)."""

    def stick(self, value: SSAValue) -> int | None:
        return self.layouts[value].stick_dim

    def driver(self, read: Read) -> int | None:
        """The iteration dim driving ``read``'s storage stick coordinate."""
        stick = self.stick(read.storage)
        return BROADCAST if stick is None else stick_driver(read.coords[stick])

    def fix(self, value: SSAValue, layout: StickLayout) -> None:
        self.layouts[value] = layout
        self.fixed.add(value)


def check_storage(op: ComputeOp, index: int, storage: SSAValue) -> None:
    """One located error unless operand ``index`` of ``op`` reads storage this pass lays out or
    finds laid out: a block argument, a compute or fill result, a concatenation buffer, or a
    value whose type has a layout already.  (A tile of spyre-coarse-tile, a slice with no
    layout, reaches this pass only when a tiled program is fed to the pipeline again.)"""
    owner = storage.owner
    if isinstance(storage, BlockArgument) or isinstance(owner, ComputeOp | FillOp):
        return
    if isinstance(owner, tensor.InsertSliceOp) and assembly_filled_by(owner) is not None:
        return
    if isinstance(owner, tensor.EmptyOp) and assembly_of(owner) is not None:
        return
    if isinstance(storage.type, TensorType) and isinstance(storage.type.encoding, LayoutAttr):
        return
    raise SpyreError(f"operand #{index} of '{op.name}' is a '{owner.name}' result without a layout: "
                     "spyre-stickify lays out programs before spyre-coarse-tile tiles them", op=op)


def followers(plan: Plan, op: ComputeOp, index: int, read: Read, required: int) -> tuple[list[int], list[int]]:
    """The dims of operand ``index``'s storage, and of the view ``op`` reads, that ``required``
    drives: where a restickify of the storage, or a copy of the view, could put the stick.  An
    operand that ``required`` steps nowhere (it broadcasts along it) is followed by a dim of
    one element it reads at 0: sticked there, it is a broadcast (``ids[:, :, None] == experts``)."""
    eps = plan.layouts[read.storage].elems_per_stick
    storage_dims = [j for j in dims_driven_by(read.coords, required) if not splits_stick(read.coords[j], eps)]
    space = list(op.get_iteration_space())
    view_coords = map_coords(op.get_indexing_maps()[index], space)
    view_dims = dims_driven_by(view_coords, required)
    if not any(isinstance(atom, Dim) and atom.pos == required for coord in read.coords for atom in atoms(coord)):
        storage_dims = storage_dims or _unit_reads(read.coords, value_shape(read.storage))
        view_dims = view_dims or _unit_reads(view_coords, value_shape(op.operands[index]))
    return storage_dims, view_dims


def _unit_reads(coords: Sequence[Linear], shape: Sequence[int]) -> list[int]:
    """The dims of one element that ``coords`` read at 0."""
    return [j for j, (c, n) in enumerate(zip(coords, shape)) if n == 1 and not c.terms and c.const == 0]


def missing_padding(plan: Plan, op: ComputeOp) -> list[tuple[int, Read, StickLayout]]:
    """``(tensor index, read, padded layout)`` for each tensor of ``op`` (operands, then the
    result) whose layout does not reach as far as the op steps along a padded iteration dim.

    An iteration dim that drives a tensor's stick (and spans more than one element) is
    padded to whole sticks of the widest such tensor (SDSC ``N_``), so every tensor that
    steps along it is read (or written) that far too: off its stick (a [2, 192] sum over
    its stick into a [2] result iterates 64 rows of its input; a matmul B operand's K
    rows), and on its stick when its sticks hold fewer elements (an fp16 -> fp32 cast of
    96 columns iterates 128: four fp32 sticks, not three).

    A dim that the op, or the writer of the tensor, indexes by a row-major nest of dims (the
    heads of ``h * 80 + d`` merged back into a hidden dim) spans whole rows of the nest's
    outermost dim (:func:`nest_rows`), so that the nest's labels describe its extent: a hidden
    dim of 160 padded to 192 for a reader is padded to 240.  A dim read every k-th element
    spans whole steps of k, which its labels count in.  A dim the op steps along past the
    tensor's extent (a row slice of a batched matmul's result folded into it: 8 rows computed
    into a result of 7) reaches as far as it steps.
    """
    space, reads, result = op_reads(op)
    tensors = [*reads, Read(op.result, tuple(result), ())]
    padded = padded_dims(plan, op)
    needs = []
    for index, read in enumerate(tensors):
        layout = plan.layouts[read.storage]
        extents = list(layout.padded_host_shape)
        rows: list[int] = []
        for j, coord in enumerate(read.coords):
            driver, step = stick_driver(coord), 1
            if driver is None and len(coord.terms) == 1 and isinstance(coord.terms[0][0], Dim):
                driver, step = coord.terms[0][0].pos, coord.terms[0][1]  # every step-th element
            reach = extents[j] if j != layout.stick_dim else round_up(extents[j], layout.elems_per_stick)
            if driver in padded:
                needed = round_up(step * (padded[driver] - 1) + 1 + coord.const, step)
            elif len(coord.terms) == 1 and isinstance(atom := coord.terms[0][0], Dim):
                # As far as the op steps (past the extent: a row slice folded into a matmul).
                needed = coord.terms[0][1] * (space[atom.pos] - 1) + 1 + coord.const
            else:
                needed = 0
            needed = max(needed, _nest_reach(coord, padded, space), round_up(extents[j], step))
            if needed > reach:  # whole steps: a strided dim is labelled in steps (op_spec's gap dim)
                extents[j] = needed
            if extents[j] > layout.host_shape[j]:
                rows = rows or nest_rows(read)
                extents[j] = round_up(extents[j], rows[j])
        if extents != list(layout.padded_host_shape):
            needs.append((index, read, stick_layout(layout.host_shape, layout.dtype, layout.dim_order,
                                                    padded_shape=extents)))
    return needs


def _nest_reach(coord: Linear, padded: Mapping[int, int], space: Sequence[int]) -> int:
    """How far a coordinate that nests iteration dims (``d1 * 4 + d0``) reaches when each dim runs
    over its padded extent (``padded``, else its extent in ``space``), as the lowering addresses it;
    0 for another coordinate or when no dim of it is padded.  A padded outer dim of a nest (96
    columns of a transpose, padded to a stick of 128, each repeated 4 times) reaches past the
    rows the nest holds (512, not 384)."""
    dims = [(atom.pos, k) for atom, k in coord.terms if isinstance(atom, Dim)]
    if len(coord.terms) < 2 or len(dims) < len(coord.terms) or not any(d in padded for d, _ in dims):
        return 0
    return coord.const + sum(k * (padded.get(d, space[d]) - 1) for d, k in dims if k > 0) + 1


def nest_rows(read: Read) -> list[int]:
    """Per dim of ``read``'s storage, the elements of one row of the outermost dim of the row-major
    nests that index it (the coefficient of the outermost term; 1 without a nest): in ``read``, and
    in the result of the op that wrote the storage."""
    coords = [read.coords]
    writer = read.storage.owner
    if isinstance(writer, ComputeOp):
        coords.append(tuple(op_reads(writer)[2]))
    rows = [1] * len(read.coords)
    for each in coords:
        for j, coord in enumerate(each):
            rows[j] = math.lcm(rows[j], nest_row(coord))
    return rows


def padded_dims(plan: Plan, op: ComputeOp) -> dict[int, int]:
    """The iteration dims of ``op`` padded to whole sticks (:func:`missing_padding`), with
    their padded extents."""
    space, reads, result = op_reads(op)
    padded: dict[int, int] = {}
    for read in [*reads, Read(op.result, tuple(result), ())]:
        driver = plan.driver(read)
        eps = plan.layouts[read.storage].elems_per_stick
        if driver not in (None, BROADCAST) and space[driver] > 1 and space[driver] % eps:
            padded[driver] = max(padded.get(driver, 0), round_up(space[driver], eps))
    return padded


def whole_stick_dims(assembly: Assembly) -> list[int]:
    """The dims of an assembly's buffer along which every piece starts at a whole number of sticks."""
    full = assembly.empty.tensor
    rank = len(value_shape(full))
    eps = value_layout(full, rank - 1).elems_per_stick
    return [d for d in range(rank) if all(o[d] % eps == 0 for o in assembly.offsets())]


def view_layout(view: ViewOp) -> StickLayout:
    """A view's layout, once its storage's is written: sticked on :func:`view_stick`, with the view
    dim that drives the storage's first dim first when the storage's order is not the default one
    (a matmul's row dim moved just outside the stick, ``rows.py``)."""
    read = read_through_views(view.result, [dim(i) for i in range(len(value_shape(view.result)))],
                              list(value_shape(view.result)))
    storage = tensor_layout(read.storage.type)
    layout = value_layout(view.result, view_stick(view, storage.stick_dim))
    if storage.dim_order == dim_order(len(storage.host_shape), storage.stick_dim):
        return layout
    first = stick_driver(read.coords[storage.dim_order[0]])
    if first in (None, BROADCAST) or first == layout.stick_dim:
        return layout
    return dataclasses.replace(layout, dim_order=(first, *(d for d in layout.dim_order if d != first)))


def view_stick(view: ViewOp, storage_stick: int | None) -> int | None:
    """The stick dim of a view whose storage is sticked on ``storage_stick``: the view dim that
    drives the storage's stick coordinate, read through the whole chain of views (a chain that
    divides dims and merges them again drives it through no single link); else the one that
    drives its source's (a view's, recursively); else the innermost."""
    space = value_shape(view.result)
    if not space:
        return None
    read = read_through_views(view.result, [dim(i) for i in range(len(space))], list(space))
    driver = stick_driver(read.coords[storage_stick]) if storage_stick is not None else None
    if driver not in (None, BROADCAST):
        return driver
    source = view.source.owner
    source_stick = view_stick(source, storage_stick) if isinstance(source, ViewOp) else storage_stick
    return driven_stick(map_coords(view.map.data, space), source_stick, len(space))