# spyre-lower-to-bundle (DESIGN §4 stage 7, §10): compute ops -> the SDSC bundle.
# Reads the one func.func of compute ops: each op's ComputeOp interface
# (iteration space, indexing maps, reduction dims, op func, core_splits), the
# layouts of its tensor types (tensor_layout) and `placement`; the `spyre.role` /
# `spyre.name` argument and result attributes; the module's `#spyre.target`
# (cores); scf.for nests and top-level assemblies (spyre_mlir.analysis.assembly).
# The translation of one compute op to its OpSpec is op_spec.py beside it.
# Writes `func.func @sdsc_bundle`
# of sdscbundle/arith ops, one `sdscbundle.sdsc_execute` per compute op carrying
# its OpSpec (`op_spec`), and the manifest facts as `spyre.kernel_args` /
# `spyre.cores` attributes of the bundle function.
"""Lowering to the SDSC bundle.

Before (after work division)::

    func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"},
                    %b: tensor<64x128xf16> {spyre.name = "b", spyre.role = "input"})
        -> (tensor<64x128xf16> {spyre.name = "add"}) {
      %y = spyre.pointwise "add" (%a, %b) {core_splits = array<i64: 2, 1>} : ...
      func.return %y : tensor<64x128xf16>
    }

After::

    func.func @sdsc_bundle(%0 : !sdscbundle.input_arg<index>, %1 : ..., %2 : ...)
        attributes {spyre.cores = 32 : i64, spyre.kernel_args = [{index = 0 : i64, role = "input", ...}, ...]} {
      %arg = sdscbundle.input_arg_extract value from %0 : !sdscbundle.input_arg<index> -> index
      ...
      %off = arith.constant 4096 : index
      %core = arith.addi %arg, %off : index
      ...
      sdscbundle.sdsc_execute (%arg, %core, ...) {sdsc_filename = "sdsc_0.json",
          symbol_ids = [-1, -2, ...], op_spec = {...}}
      func.return
    }

Kernel arguments, in manifest order: the function's arguments (graph inputs,
parameters, buffers), then its results (graph outputs), then one ``constant``
per ``spyre.fill`` (in program order), then the HBM pool when an intermediate
lives there.  The SDSC interface has no fill op: a fill is a kernel argument
the runtime initialises (manifest role ``constant`` with its ``fill`` value,
every device element including stick padding), read by its consumers like any
HBM tensor; its ``placement`` (if memory planning chose LX) is not used.  Storage of a compute op's result: its
``placement`` (``<lx, off>``, ``<hbm, arg N>``, ``<hbm, pool off>``, or ``<hbm, zeroed>``:
a ``constant`` argument of its own the runtime fills with zeros); without one, the
output argument when the function returns it, a zeroed argument when its layout is
padded beyond its writer's reach (``StickLayout.is_padded``), else the HBM pool at the
next 128-byte aligned offset (a bump allocation, until memory planning decides).  An
output with such padding carries ``fill`` 0 and a full buffer a padded tile value is
inserted into is a zeroed argument too, so padding always reads as zeros (a matmul's
B operand padded along K).

Addresses: operand ``i`` of an ``sdsc_execute`` is the start address of one
(tensor, core) pair, ``base + core offset``, bound to symbol ``symbol_ids[i]``;
cores that start at the same address of a tensor share one symbol.  Symbol ids
count down from -1 over the whole bundle in op, argument, core order.

Loop nests (spyre-coarse-tile): each ``scf.for 0 .. count step 1`` is mirrored
with constant bounds (``%c0``, ``%c1``, ``%loop_bound_<k>``).  Every tensor of a
compute op inside loops is traced to its storage: through
``tensor.extract_slice`` (offsets affine in the loop ivs: ``arith.constant``, the
ivs, ``affine.apply``), ``iter_args`` (the init's storage), loop results and
``tensor.insert_slice`` (a value inserted into an accumulator, or yielded, is
written straight into the accumulator's window; a ``tensor.empty`` init takes
the storage its loop's result ends in: the output it is returned as, the
enclosing accumulator's window, else a fresh pool buffer).  The tile is a window
of the storage (``TensorStorage.window`` holds its constant offsets, so the
back gap is the storage extent minus the tile extent per label); the
iv-dependent part is a byte stride per loop level (``device_offset`` of the
offset's coefficients; stick-dim steps must be whole sticks), emitted inside the
loop as one ``affine.apply affine_map<(d0, ..)[s0] -> (s0 + stride*d0 + ..)>``
over all enclosing ivs per (tensor, core), the per-core address being the
symbol.  Per-tile values that only live in the body take their ``placement``
(LX or pool, tile-sized).  A reduction accumulator (``spyre.fill`` init,
combine op yielded) lives where its loop result ends: a kernel output, which
the runtime initialises to the fill value (manifest ``fill`` on the output),
or the fresh buffer an enclosing loop inserts it into, which becomes a
``constant`` argument the runtime fills (each iteration of that loop
accumulates into its own window of it; one buffer per iteration of the loops
around the buffer's own definition); when a compute op reads the loop result
instead, a ``constant`` argument stacking one tile per iteration of the
enclosing loops, so each outer iteration starts from a fresh identity tile
(stacked buffers are described as one flat tensor).  Not handled (an
error names the op): an accumulator that leaves its loop into a buffer already
placed otherwise (needs a copy), rank-changing slices, iv-dependent windows of
LX values.  ``spyre.view`` must
not reach this pass.

Assemblies (``torch.cat``, :mod:`spyre_mlir.analysis.assembly`): at the top level too, a
compute result inserted into a ``tensor.empty`` chain is written straight into
its window of one buffer, and the chain's value reads the whole buffer.  The
buffer is the output the value is returned as, else the placement memory
planning gave the pieces' copies (all the same, in HBM), else a fresh pool
buffer (a zeroed one when its layout is padded).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine, arith, func, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f64,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint
from xdsl.passes import ModulePass

from spyre_mlir.analysis.assembly import Assembly, assembled_by, assemblies, assembly_of
from spyre_mlir.analysis.kernel_args import output_arguments
from spyre_mlir.analysis.linear import Linear, affine_linear
from spyre_mlir.analysis.loops import carried_argument, carried_init, carried_result
from spyre_mlir.passes.lower_to_bundle.op_spec import TensorStorage, build_op_spec, device_offset
from spyre_mlir.codegen.opspec import OP_SPEC_ATTR, OpSpec
from spyre_mlir.diagnostics import SpyreError, describe_argument
from spyre_mlir.dialects.sdscbundle import InputArgExtractOp, InputArgType, SdscExecuteOp
from spyre_mlir.dialects.spyre import (
    CONSTANT_VALUE_ATTR,
    ComputeOp,
    FillOp,
    Memory,
    PlacementAttr,
    PlacementKind,
    target_config,
    tensor_layout,
)
from spyre_mlir.hardware import SpyreConfig, element_bytes, round_up
from spyre_mlir.layout import StickLayout

BUNDLE_FUNC = "sdsc_bundle"
KERNEL_ARGS_ATTR = "spyre.kernel_args"
CORES_ATTR = "spyre.cores"


@dataclass(frozen=True)
class KernelArgInfo:
    """One argument of ``@sdsc_bundle`` (the manifest facts)."""

    role: str
    name: str
    nbytes: int
    layout: StickLayout | None = None
    fill: float | None = None
    """The value of a ``constant`` argument (a lowered ``spyre.fill``)."""
    value: DenseIntOrFPElementsAttr | None = None
    """The host values of a ``constant`` argument the import computed (its ``spyre.value``)."""

    def to_attr(self, index: int) -> DictionaryAttr:
        entries: dict[str, Attribute] = {"index": IntegerAttr(index, i64), "role": StringAttr(self.role),
                                         "name": StringAttr(self.name), "nbytes": IntegerAttr(self.nbytes, i64)}
        if self.layout is not None:
            lay = self.layout
            if lay.is_padded:
                entries["padded_shape"] = ArrayAttr(IntegerAttr(s, i64) for s in lay.padded_host_shape)
            entries.update({
                "shape": ArrayAttr(IntegerAttr(s, i64) for s in lay.host_shape),
                "dtype": StringAttr(lay.dtype),
                "device_size": ArrayAttr(IntegerAttr(s, i64) for s in lay.device_size),
                "dim_order": ArrayAttr(IntegerAttr(s, i64) for s in lay.dim_order),
                "data_format": StringAttr(lay.data_format)})
        if self.fill is not None:
            entries["fill"] = FloatAttr(self.fill, f64)
        if self.value is not None:
            entries["value"] = self.value
        return DictionaryAttr(entries)


@dataclass(frozen=True)
class BundleResult:
    """What the lowering produced: the bundle function, its arguments and OpSpecs."""

    bundle: func.FuncOp
    kernel_args: tuple[KernelArgInfo, ...]
    op_specs: tuple[OpSpec, ...]


def _whole_argument(layout: StickLayout, index: int) -> TensorStorage:
    """The storage of a value that is all of kernel argument ``index`` (in HBM)."""
    return TensorStorage(layout, Memory.HBM, PlacementAttr(PlacementKind.ARG, index), (0,) * len(layout.host_shape))


def _str_attr(attrs: ArrayAttr | None, index: int, key: str) -> str | None:
    if attrs is None or index >= len(attrs.data):
        return None
    value = attrs.data[index].data.get(key)
    return value.data if isinstance(value, StringAttr) else None


@dataclass(frozen=True)
class _Loc:
    """Where a (tile) tensor value lives: its storage window and byte stride per loop level."""

    access: TensorStorage
    strides: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class _Exec:
    """One ``sdsc_execute``: the OpSpec and, per argument, its byte stride per loop level."""

    spec: OpSpec
    strides: tuple[dict[int, int], ...]
    depth: int


@dataclass(frozen=True)
class _Loop:
    """One mirrored ``scf.for 0 .. count step 1``."""

    count: int
    items: list


def _filled_layout(layout: StickLayout) -> StickLayout:
    """The layout a ``constant`` argument of ``layout`` is described by in the manifest: its padded
    extents are its shape (the runtime fills every device element, padding included)."""
    return StickLayout(layout.padded_host_shape, layout.dtype, layout.dim_order, layout.elems_per_stick)


def _loop_depth(value: SSAValue) -> int:
    """How many ``scf.for`` loops enclose the definition of ``value``."""
    depth, parent = 0, value.owner.parent_op() if isinstance(value.owner, Operation) else None
    while isinstance(parent, scf.ForOp):
        depth, parent = depth + 1, parent.parent_op()
    return depth


def _stacked_layout(layout: StickLayout, stack: int) -> StickLayout:
    """``stack`` buffers of ``layout`` one after another in device memory, described as one flat
    tensor of their bytes (the runtime fills every element; the ops address each buffer)."""
    return StickLayout((stack * layout.nbytes // element_bytes(layout.dtype),), layout.dtype, (0,),
                       layout.elems_per_stick)


class _Lowering:
    """Storage assignment and OpSpecs of one function's compute ops (and loop nests)."""

    def __init__(self, source: func.FuncOp, config: SpyreConfig, pool_base: int = 0):
        self.source, self.config = source, config
        self.storage: dict[SSAValue, TensorStorage] = {}
        self.locs: dict[SSAValue, _Loc] = {}
        self.args: list[KernelArgInfo] = []
        self.outputs: dict[SSAValue, int] = {}
        self.pool_size = 0
        self.pool_bump = pool_base
        self.next_symbol = -1
        self.ivs: dict[SSAValue, int] = {}
        self.counts: list[int] = []

    def new_symbol(self) -> int:
        self.next_symbol -= 1
        return self.next_symbol + 1

    def kernel_arguments(self) -> None:
        """1. Function arguments, then returned values, become kernel arguments."""
        for i, arg in enumerate(self.source.body.block.args):
            if not isinstance(arg.type, TensorType):
                raise SpyreError(f"argument #{i} of @{self.source.sym_name.data} is not a tensor", op=self.source)
            layout = tensor_layout(arg.type)
            role = _str_attr(self.source.arg_attrs, i, "spyre.role") or "input"
            name = _str_attr(self.source.arg_attrs, i, "spyre.name") or f"arg{i}"
            self.args.append(KernelArgInfo(role, name, layout.nbytes, layout, value=self.constant_value(i, role)))
            self.storage[arg] = _whole_argument(layout, i)
            self.locs[arg] = _Loc(self.storage[arg])
        ret = self.source.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        self.outputs = output_arguments(self.source)
        for j, value in enumerate(ret.arguments):
            computed = isinstance(value, OpResult) and isinstance(value.op, ComputeOp | scf.ForOp
                                                                  | tensor.InsertSliceOp)
            if not computed or self.outputs[value] != len(self.args):
                raise SpyreError(f"result #{j} must be computed by a compute op and returned once: "
                                 "returning an argument, a non-compute value or one value twice needs a copy",
                                 op=ret)
            layout = tensor_layout(value.type)
            name = _str_attr(self.source.res_attrs, j, "spyre.name") or f"output{j}"
            fill = 0.0 if layout.is_padded else None  # its padding reads as zeros, as a zeroed value's
            self.args.append(KernelArgInfo("output", name, layout.nbytes, layout, fill))

    def constant_value(self, index: int, role: str) -> DenseIntOrFPElementsAttr | None:
        """The ``spyre.value`` of argument ``index``: required for role ``constant``, refused otherwise."""
        attrs = self.source.arg_attrs
        value = attrs.data[index].data.get(CONSTANT_VALUE_ATTR) if attrs is not None else None
        arg = self.source.body.block.args[index]
        if role != "constant":
            if value is not None:
                raise SpyreError(f"{describe_argument(arg)} has a {CONSTANT_VALUE_ATTR} but role '{role}', "
                                 "not 'constant'", op=self.source)
            return None
        if not isinstance(value, DenseIntOrFPElementsAttr) or value.get_shape() != tuple(arg.type.get_shape()):
            raise SpyreError(f"{describe_argument(arg)} of role 'constant' needs a {CONSTANT_VALUE_ATTR} = "
                             f"dense<...> of shape {list(arg.type.get_shape())}", op=self.source)
        return value

    def result_access(self, op: ComputeOp) -> TensorStorage:
        """2. Where a compute op's result lives."""
        layout = tensor_layout(op.result.type)
        placement = op.placement
        if placement is None:
            if op.result in self.outputs:
                placement = PlacementAttr(PlacementKind.ARG, self.outputs[op.result])
            elif layout.is_padded:
                placement = PlacementAttr(PlacementKind.ZEROED, 0)
            else:
                placement = PlacementAttr(PlacementKind.POOL, self.pool_alloc(layout.nbytes))
        return self.placed_access(layout, placement, op)

    def placed_access(self, layout: StickLayout, placement: PlacementAttr, op: Operation) -> TensorStorage:
        """The storage of a ``layout`` value at ``placement``."""
        origin = (0,) * len(layout.host_shape)
        kind, value = placement.placement_kind, placement.value.data
        if kind is PlacementKind.LX:
            return TensorStorage(layout, Memory.LX, placement, origin)
        if kind is PlacementKind.ZEROED:
            return self.filled_buffer(layout, 0.0, ()).access
        if kind is PlacementKind.POOL:
            end = round_up(value + layout.nbytes, self.config.alignment)
            self.pool_size = max(self.pool_size, end)
        elif not 0 <= value < len(self.args) or self.args[value].role != "output":
            raise SpyreError(f"placement {placement} does not name an output kernel argument", op=op)
        return TensorStorage(layout, Memory.HBM, placement, origin)

    def assembled(self, assembly: Assembly) -> _Loc:
        """Where an assembly's buffer lives: the output its value is returned as, else the placement
        memory planning gave its pieces' copies (one buffer in HBM), else a fresh buffer."""
        copy = assembly.copies[0]
        if assembly.value in self.outputs or copy.placement is None:
            loc = self.destination(assembly.value, assembly.empty.tensor)
            assert loc is not None
            return loc
        if copy.placement.placement_kind is PlacementKind.LX:
            raise SpyreError("the buffer of a concatenation must live in HBM: its pieces write windows of it",
                             op=copy)
        return _Loc(self.placed_access(tensor_layout(assembly.empty.tensor.type), copy.placement, copy))

    def pool_alloc(self, nbytes: int) -> int:
        """A fresh pool block: a bump allocation from ``pool_base`` (:func:`planned_pool_end`), above
        every pool block memory planning placed."""
        offset = max(self.pool_bump, self.pool_size)
        self.pool_bump = round_up(offset + nbytes, self.config.alignment)
        self.pool_size = max(self.pool_size, self.pool_bump)
        return offset

    def constant(self, op: FillOp) -> None:
        """3a. A ``spyre.fill`` becomes a ``constant`` kernel argument the runtime fills.

        Inside loops, one fresh tile per iteration of the enclosing loops: the
        argument stacks ``prod(counts)`` tiles and the fill's window advances
        by one tile per iteration (the accumulator is re-initialised for free).
        """
        layout = tensor_layout(op.result.type)
        dest = self.accumulator_destination(op)
        if dest is not None:  # accumulate in place in an output the runtime initialises (manifest ``fill``)
            output = dest.access.placement.value.data
            previous = self.args[output].fill
            if previous is not None and previous != op.fill_value():
                raise SpyreError(f"output '{self.args[output].name}' would need two initial values", op=op)
            self.args[output] = dataclasses.replace(self.args[output], fill=op.fill_value())
            self.storage[op.result] = dest.access
            self.locs[op.result] = dest
            return
        loc = self.filled_buffer(layout, op.fill_value(), self.counts)
        self.storage[op.result] = loc.access
        self.locs[op.result] = loc

    def filled_buffer(self, layout: StickLayout, value: float, counts: Sequence[int]) -> _Loc:
        """A ``constant`` argument the runtime fills with ``value``: a fresh ``layout`` buffer for
        each iteration of the enclosing loops of trip ``counts`` (outermost first), stacked one
        after another, the window advancing by one buffer per iteration."""
        index = len(self.args)
        stack = math.prod(counts)
        strides: dict[int, int] = {}
        if stack > 1:
            step = layout.nbytes
            for level in reversed(range(len(counts))):
                strides[level] = step
                step *= counts[level]
        arg_layout = _filled_layout(layout) if stack == 1 else _stacked_layout(layout, stack)
        self.args.append(KernelArgInfo("constant", f"fill_{index}", stack * layout.nbytes, arg_layout, value))
        access = _whole_argument(layout, index)
        return _Loc(access, tuple(sorted(strides.items())))

    def accumulator_destination(self, op: FillOp) -> _Loc | None:
        """The output window a fill-initialised accumulator ends in, when its loop result is
        returned or inserted into an output (else None: a compute op reads the result)."""
        uses = list(op.result.uses)
        result = carried_result(uses[0]) if len(uses) == 1 else None
        if result is None:
            return None
        dest = self.destination(result, None, fill=op.fill_value())
        if dest is None:
            return None
        placement = dest.access.placement
        if (placement.placement_kind is not PlacementKind.ARG
                or self.args[placement.value.data].role not in ("output", "constant")):
            raise SpyreError("a reduction accumulator that leaves its loop into a buffer other than a "
                             "kernel output or a fresh buffer needs a copy; not lowered yet", op=op)
        return dest

    # -- affine index values and slices ---------------------------------------------------------

    def affine_of(self, v: SSAValue) -> Linear[int]:
        """An index value as ``constant + sum(coefficient x iv_level)`` (levels: loop depth, outermost 0)."""
        if v in self.ivs:
            return Linear.term(self.ivs[v])
        owner = v.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return Linear.constant(owner.value.value.data)
        if isinstance(owner, affine.ApplyOp):
            m = owner.map.data
            found = affine_linear(m.results[0]) if len(m.results) == 1 and not m.num_symbols else None
            if found is not None:
                total = Linear.constant(found.const)
                for d, c in found.terms:
                    total = total + self.affine_of(owner.mapOperands[d]).scaled(c)
                return total
        raise SpyreError("a tile offset must be affine in the loop induction variables "
                         "(arith.constant, scf.for iv, affine.apply)", op=owner if isinstance(owner, Operation)
                         else self.source)

    def offsets(self, op: tensor.ExtractSliceOp | tensor.InsertSliceOp) -> list[Linear[int]]:
        dynamic = iter(op.offsets)
        return [self.affine_of(next(dynamic)) if o == DYNAMIC_INDEX else Linear.constant(o)
                for o in op.static_offsets.get_values()]

    def shifted(self, loc: _Loc, offsets: Sequence[Linear[int]], op: Operation) -> _Loc:
        access = loc.access
        layout = access.layout
        if len(offsets) != len(access.window):
            raise SpyreError("rank-changing slices are not lowered", op=op)
        window = tuple(w + offset.const for w, offset in zip(access.window, offsets))
        strides = dict(loc.strides)
        levels = sorted({level for offset in offsets for level in offset.keys()})
        for level in levels:
            delta = [offset.coefficient(level) for offset in offsets]
            stick = layout.stick_dim
            if stick is not None and delta[stick] % layout.elems_per_stick:
                raise SpyreError(f"tile offsets along the stick dim step by {delta[stick]} elements per "
                                 f"iteration, not whole sticks of {layout.elems_per_stick}", op=op)
            strides[level] = strides.get(level, 0) + device_offset(layout, delta)
        return _Loc(TensorStorage(layout, access.memory, access.placement, window), tuple(sorted(strides.items())))

    # -- where values live ----------------------------------------------------------------------

    def loc_of(self, v: SSAValue, fill: float | None = None) -> _Loc:
        """Where ``v`` lives; ``fill``: the value of the fill accumulator being traced to it (a fresh
        buffer it ends in is then filled with it)."""
        if v in self.locs:
            return self.locs[v]
        owner = v.owner
        if (init := carried_init(v)) is not None:
            loc = self.loc_of(init, fill)
        elif isinstance(owner, tensor.ExtractSliceOp):
            loc = self.shifted(self.loc_of(owner.source, fill), self.offsets(owner), owner)
        elif isinstance(owner, tensor.InsertSliceOp):
            loc = self.loc_of(owner.dest, fill)
        elif isinstance(owner, tensor.EmptyOp) and (assembly := assembly_of(owner)) is not None:
            loc = self.assembled(assembly)
        elif isinstance(owner, tensor.EmptyOp):
            results = [r for u in v.uses if (r := carried_result(u)) is not None]
            if len(results) != 1 or len(list(v.uses)) != 1:
                raise SpyreError("a tensor.empty must initialise exactly one loop accumulator", op=owner)
            loc = self.destination(results[0], v, fill)
        else:
            raise SpyreError(f"operand defined by '{getattr(owner, 'name', 'a block argument')}' is not a "
                             "kernel argument, a fill, a compute result or a slice of one "
                             "(spyre.view must be folded first)", op=owner if isinstance(owner, Operation)
                             else self.source)
        self.locs[v] = loc
        return loc

    def destination(self, value: SSAValue, full: SSAValue | None, fill: float | None = None) -> _Loc | None:
        """Where a value that leaves its region goes: an output, an enclosing accumulator, else
        (when ``full`` is the ``tensor.empty`` it started from) a fresh buffer, filled with ``fill``
        when a fill accumulator ends there; None when it does not leave."""
        if value in self.outputs:
            return _Loc(_whole_argument(tensor_layout(value.type), self.outputs[value]))
        for use in value.uses:
            user = use.operation
            if isinstance(user, tensor.InsertSliceOp) and use.index == 0:
                return self.shifted(self.loc_of(user.dest, fill), self.offsets(user), user)
            if (carried := carried_argument(use)) is not None:
                return self.loc_of(carried, fill)
        if full is None:
            return None
        layout = tensor_layout(full.type)
        if fill is not None:
            # A fill accumulator ends in this buffer: the runtime fills it, afresh for each
            # iteration of the loops around the buffer's definition.
            return self.filled_buffer(layout, fill, self.counts[:_loop_depth(full)])
        if layout.is_padded:  # its padding must read as zeros (a zeroed placement)
            return self.filled_buffer(layout, 0.0, ())
        placement = PlacementAttr(PlacementKind.POOL, self.pool_alloc(layout.nbytes))
        return _Loc(TensorStorage(layout, Memory.HBM, placement, (0,) * len(layout.host_shape)))

    def compute(self, op: ComputeOp, depth: int) -> _Exec:
        locs = [self.loc_of(v) for v in op.inputs]
        dest = self.destination(op.result, None) if depth or assembled_by(op) is not None else None
        if dest is None:
            dest = _Loc(self.result_access(op))
        self.locs[op.result] = dest
        self.storage[op.result] = dest.access
        locs.append(dest)
        spec = build_op_spec(op, [loc.access for loc in locs], self.config.cores, self.new_symbol)
        for loc, arg in zip(locs, spec.args):
            if loc.strides and arg.memory != Memory.HBM:
                raise SpyreError("a tile window of an LX value is not lowered", op=op)
        return _Exec(spec, tuple(dict(loc.strides) for loc in locs), depth)

    def block(self, block: Block, depth: int) -> list:
        items: list = []
        for op in block.ops:
            if isinstance(op, func.ReturnOp | scf.YieldOp | arith.ConstantOp | affine.ApplyOp | tensor.EmptyOp
                          | tensor.ExtractSliceOp | tensor.InsertSliceOp):
                continue
            if isinstance(op, FillOp):
                self.constant(op)
            elif isinstance(op, scf.ForOp):
                lb, ub, step = (self.affine_of(v) for v in (op.lb, op.ub, op.step))
                if not (lb.is_const() and ub.is_const() and step.is_const()) or lb.const != 0 or step.const != 1:
                    raise SpyreError("only scf.for 0 .. constant step 1 loops are lowered", op=op)
                self.ivs[op.body.block.args[0]] = depth
                self.counts.append(ub.const)
                items.append(_Loop(ub.const, self.block(op.body.block, depth + 1)))
                self.counts.pop()
            elif isinstance(op, ComputeOp):
                items.append(self.compute(op, depth))
            else:
                raise SpyreError(f"'{op.name}' cannot be lowered to the SDSC bundle: only compute ops "
                                 "(spyre.pointwise, reduce, matmul, restickify), spyre.fill and the scf.for "
                                 "nests of spyre-coarse-tile reach spyre-lower-to-bundle", op=op)
        return items


def _address_key(spec_arg_placement: PlacementAttr, pool_index: int) -> tuple[int, int]:
    """(kernel argument, byte offset) of a tensor's base."""
    if spec_arg_placement.placement_kind is PlacementKind.POOL:
        return pool_index, spec_arg_placement.value.data
    return spec_arg_placement.value.data, 0


def _flatten(items: Sequence) -> list[_Exec]:
    out = []
    for item in items:
        out.extend(_flatten(item.items) if isinstance(item, _Loop) else [item])
    return out


def build_bundle(items: Sequence, args: Sequence[KernelArgInfo], cores: int) -> func.FuncOp:
    """4. ``func.func @sdsc_bundle``: argument extraction, per-core addresses, loops, one execute per op."""
    items = [_Exec(i, (), 0) if isinstance(i, OpSpec) else i for i in items]
    execs = _flatten(items)
    pool_index = next((i for i, a in enumerate(args) if a.role == "pool"), -1)
    bundle = func.FuncOp(BUNDLE_FUNC, ([InputArgType()] * len(args), []))
    bundle.attributes[KERNEL_ARGS_ATTR] = ArrayAttr(a.to_attr(i) for i, a in enumerate(args))
    bundle.attributes[CORES_ATTR] = IntegerAttr(cores, i64)
    block = bundle.body.block
    b = Builder(InsertPoint.at_end(block))
    bases = []
    for arg in block.args:
        extract = b.insert(InputArgExtractOp(arg))
        extract.result.name_hint = "arg"
        bases.append(extract.result)
    index = IndexType()
    loops = [item for e in [items] for item in _loops(e)]
    zero = one = None
    bounds: list[SSAValue] = []
    if loops:
        zero = b.insert(arith.ConstantOp(IntegerAttr(0, index))).result
        one = b.insert(arith.ConstantOp(IntegerAttr(1, index))).result
        for loop in loops:
            const = b.insert(arith.ConstantOp(IntegerAttr(loop.count, index)))
            const.result.name_hint = "loop_bound"
            bounds.append(const.result)
    needed = sorted({(k, base + off) for e in execs for a in e.spec.args if a.memory == Memory.HBM
                     for k, base in [_address_key(a.placement, pool_index)] for off in a.core_offsets})
    addresses: dict[tuple[int, int], SSAValue] = {}
    for k, off in needed:
        if off == 0:
            addresses[(k, off)] = bases[k]
            continue
        const = b.insert(arith.ConstantOp(IntegerAttr(off, index)))
        const.result.name_hint = "core_offset"
        add = b.insert(arith.AddiOp(bases[k], const.result))
        add.result.name_hint = "core"
        addresses[(k, off)] = add.result
    counter = iter(range(len(execs)))
    bound_of = {id(loop): bound for loop, bound in zip(loops, bounds)}

    def emit(builder: Builder, body: Sequence, ivs: list[SSAValue]) -> None:
        for item in body:
            if isinstance(item, _Loop):
                inner = Block(arg_types=[index])
                inner.args[0].name_hint = "i"
                builder.insert(scf.ForOp(zero, bound_of[id(item)], one, [], inner))
                emit(Builder(InsertPoint.at_end(inner)), item.items, [*ivs, inner.args[0]])
                Builder(InsertPoint.at_end(inner)).insert(scf.YieldOp())
                continue
            n = next(counter)
            spec = item.spec
            operands, ids = [], []
            for a, strides in zip(spec.args, item.strides or [{}] * len(spec.args)):
                if a.memory != Memory.HBM:
                    continue
                k, base = _address_key(a.placement, pool_index)
                amap = None
                if any(strides.values()):
                    expr = AffineExpr.symbol(0)
                    for level in range(len(ivs)):
                        if strides.get(level):
                            expr = expr + AffineExpr.dimension(level) * strides[level]
                    amap = AffineMapAttr(AffineMap(len(ivs), 1, (expr,)))
                for symbol, off in dict(zip(a.symbols, a.core_offsets)).items():
                    address = addresses[(k, base + off)]
                    if amap is not None:
                        apply = builder.insert(affine.ApplyOp([*ivs, address], amap))
                        apply.result.name_hint = "addr"
                        address = apply.result
                    operands.append(address)
                    ids.append(symbol)
            builder.insert(SdscExecuteOp(operands, f"sdsc_{n}.json", ids,
                                         attributes={OP_SPEC_ATTR: spec.to_attr()}))

    emit(b, items, [])
    b.insert(func.ReturnOp())
    return bundle


def _loops(items: Sequence) -> list[_Loop]:
    out = []
    for item in items:
        if isinstance(item, _Loop):
            out.append(item)
            out.extend(_loops(item.items))
    return out


def _leaves(value: SSAValue, outputs: dict[SSAValue, int]) -> bool:
    """True when ``value`` leaves its region (:meth:`_Lowering.destination` finds where it goes):
    it is returned, inserted into a larger tensor or yielded by a loop."""
    return value in outputs or any((isinstance(u.operation, tensor.InsertSliceOp) and u.index == 0)
                                   or carried_argument(u) is not None for u in value.uses)


def planned_pool_end(source: func.FuncOp, alignment: int) -> int:
    """The end of the HBM pool blocks memory planning placed values in, as the lowering uses them:
    a compute result's own placement, unless it is a concatenation piece or a loop-body value that
    leaves its region (written straight into its destination), and each concatenation's buffer
    (its pieces' placement, at the full buffer's size)."""
    outputs = output_arguments(source)
    placed = [(copy.placement, assembly.empty.tensor) for assembly in assemblies(source)
              if assembly.value not in outputs and (copy := assembly.copies[0]).placement is not None]
    placed += [(op.placement, op.result) for op in source.walk()
               if isinstance(op, ComputeOp) and op.placement is not None and assembled_by(op) is None
               and not (_loop_depth(op.result) and _leaves(op.result, outputs))]
    return max((round_up(placement.value.data + tensor_layout(value.type).nbytes, alignment)
                for placement, value in placed if placement.placement_kind is PlacementKind.POOL), default=0)


def lower_to_bundle(module: ModuleOp, config: SpyreConfig) -> BundleResult:
    """Replace the module's function of compute ops by ``@sdsc_bundle``."""
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(funcs) != 1 or funcs[0].sym_name.data == BUNDLE_FUNC:
        raise SpyreError(f"spyre-lower-to-bundle expects one func.func of compute ops, found "
                         f"{[f.sym_name.data for f in funcs]}", op=module)
    source = funcs[0]
    for op in source.walk():
        parent = op.parent_op()
        if op is not source and parent is not source and not isinstance(parent, scf.ForOp):
            raise SpyreError(f"'{parent.name}' regions are not lowered (only scf.for loop nests)", op=op)
    # Full-size buffers the lowering itself allocates go above the pool blocks memory planning placed.
    lowering = _Lowering(source, config, planned_pool_end(source, config.alignment))
    lowering.kernel_arguments()
    lowering.items = lowering.block(source.body.block, 0)
    specs = [e.spec for e in _flatten(lowering.items)]
    args = list(lowering.args)
    if lowering.pool_size:
        args.append(KernelArgInfo("pool", "pool", lowering.pool_size))
    bundle = build_bundle(lowering.items, args, config.cores)
    module.body.block.insert_op_before(bundle, source)
    module.body.block.erase_op(source)
    return BundleResult(bundle, tuple(args), tuple(specs))


@dataclass(frozen=True)
class LowerToBundlePass(ModulePass):
    """Lower the compute ops to func.func @sdsc_bundle (sdsc_execute + OpSpec per op).

    The core count (``spyre.cores``; core_splits must fit) is the module's ``#spyre.target``.
    """

    name = "spyre-lower-to-bundle"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_to_bundle(op, target_config(op))
