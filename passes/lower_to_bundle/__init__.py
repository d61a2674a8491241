# spyre-lower-to-bundle (DESIGN §4 stage 7, §10): planned compute ops -> the SDSC
# bundle.  Reads the one func.func of compute ops: each op's ComputeOp interface
# (iteration space, indexing maps, reduction dims, op func, core_splits), the
# layouts of its tensor types, where each value lives as spyre-plan-memory
# recorded it (`placement`, `spyre.constants`, an scf.for's `spyre.buffers`;
# spyre_mlir.analysis.storage reads them); the `spyre.role` / `spyre.name`
# argument and result attributes; the module's `#spyre.target` (cores).  The
# translation of one compute op to its OpSpec is op_spec.py beside it.  Writes
# `func.func @sdsc_bundle` of sdscbundle/arith ops, one `sdscbundle.sdsc_execute`
# per compute op carrying its OpSpec (`op_spec`), and the manifest facts as
# `spyre.kernel_args` / `spyre.cores` attributes of the bundle function.  Every
# OpSpec is checked against the device limits first (codegen/limit_check.py).
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

The input is planned IR: spyre-plan-memory placed every value and recorded the
buffers it created (:mod:`spyre_mlir.analysis.storage` says where each value
lives and what the records mean); this pass translates, and an unplaced value is
an error naming it.  It decides nothing about storage.

Kernel arguments, in manifest order: the function's arguments (graph inputs,
parameters, buffers, constants the import computed), then its results (graph
outputs), then the function's ``spyre.constants`` (buffers the runtime fills:
fills, zeroed values, fill accumulators' buffers; stacked buffers are described
as one flat tensor), then the HBM pool when an intermediate lives there.  The
SDSC interface has no fill op: a fill is a kernel argument the runtime
initialises (manifest role ``constant`` with its ``fill`` value, every device
element including stick padding), read by its consumers like any HBM tensor.
An output a fill accumulator ends in carries that ``fill``; an output padded
beyond its shape carries ``fill`` 0, so padding always reads as zeros.

Addresses: operand ``i`` of an ``sdsc_execute`` is the start address of one
(tensor, core) pair, ``base + core offset``, bound to symbol ``symbol_ids[i]``;
cores that start at the same address of a tensor share one symbol.  Symbol ids
count down from -1 over the whole bundle in op, argument, core order.

Limits: no output directory the interpreter would refuse is produced.  The
kernel arguments and the pool together fit the device memory, and every OpSpec,
before it is kept, is measured as the interpreter measures its SDSC file
(:mod:`spyre_mlir.codegen.limit_check`, over every iteration of its loops): a
plan that breaks a limit the planning passes should have kept is one error at
the compute op naming the file, tensor, core, limit and value found.

Loop nests (spyre-coarse-tile): each ``scf.for 0 .. count step 1`` is mirrored
with constant bounds (``%c0``, ``%c1``, ``%loop_bound_<k>``).  A tile is a
window of its storage (``TensorStorage.window`` holds its constant offsets, so
the back gap is the storage extent minus the tile extent per label); the
iv-dependent part is a byte stride per loop level, emitted inside the loop as
one ``affine.apply affine_map<(d0, ..)[s0] -> (s0 + stride*d0 + ..)>`` over all
enclosing ivs per (tensor, core), the per-core address being the symbol.  Not
handled (an error names the op): rank-changing slices, iv-dependent windows of
LX values.  ``spyre.view`` must not reach this pass.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import affine, arith, func, scf, tensor
from xdsl.dialects.builtin import (
    UnitAttr,
    AffineMapAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, Block, OpResult, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from spyre_mlir.analysis.cost import PREDICTED_ATTR, OpCost, lower_bound_ns, price
from spyre_mlir.analysis.kernel_args import (
    argument_host_dtype,
    argument_range,
    argument_role_and_name,
    check_kernel_names,
    argument_types,
    constant_name,
    output_arguments,
    output_results,
    result_name,
    updated_arguments,
)
from spyre_mlir.analysis.updates import check_row_stores, check_update
from spyre_mlir.analysis.storage import StorageTrace, Traced, TracedLoop
from spyre_mlir.codegen.limit_check import Placed, op_spec_problem
from spyre_mlir.codegen.opspec import OP_SPEC_ATTR, OpSpec
from spyre_mlir.diagnostics import SpyreError, describe_argument
from spyre_mlir.dialects.sdscbundle import InputArgExtractOp, InputArgType, SdscExecuteOp
from spyre_mlir.dialects.spyre import (
    CONSTANT_VALUE_ATTR,
    ComputeOp,
    Memory,
    PlacementAttr,
    PlacementKind,
    target_config,
    tensor_layout,
)
from spyre_mlir.hardware import SpyreConfig, element_bytes
from spyre_mlir.layout import StickLayout
from spyre_mlir.limits import hbm_problem
from spyre_mlir.passes.lower_to_bundle.op_spec import build_op_spec, sdsc_tensors

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
    written: bool = False
    """A ``buffer`` the program writes in place (a result updates it, ``spyre.updates``)."""
    value_range: tuple[int, int] | None = None
    """The values ``[lo, hi)`` an integer input takes (its ``spyre.range``)."""
    host_dtype: str | None = None
    """The host dtype of an input held as flags (its ``spyre.host_dtype``)."""

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
        if self.written:
            entries["written"] = UnitAttr()
        if self.value_range is not None:
            entries["range"] = ArrayAttr(IntegerAttr(v, i64) for v in self.value_range)
        if self.host_dtype is not None:
            entries["host_dtype"] = StringAttr(self.host_dtype)
        return DictionaryAttr(entries)


@dataclass(frozen=True)
class BundleResult:
    """What the lowering produced: the bundle function, its arguments and OpSpecs."""

    bundle: func.FuncOp
    kernel_args: tuple[KernelArgInfo, ...]
    op_specs: tuple[OpSpec, ...]


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


def _stacked_layout(layout: StickLayout, stack: int) -> StickLayout:
    """``stack`` buffers of ``layout`` one after another in device memory, described as one flat
    tensor of their bytes (the runtime fills every element; the ops address each buffer)."""
    return StickLayout((stack * layout.nbytes // element_bytes(layout.dtype),), layout.dtype, (0,),
                       layout.elems_per_stick)


def _constant_value(source: func.FuncOp, index: int, role: str) -> DenseIntOrFPElementsAttr | None:
    """The ``spyre.value`` of argument ``index``: required for role ``constant``, refused otherwise."""
    attrs = source.arg_attrs
    value = attrs.data[index].data.get(CONSTANT_VALUE_ATTR) if attrs is not None else None
    arg = source.body.block.args[index]
    if role != "constant":
        if value is not None:
            raise SpyreError(f"{describe_argument(arg)} has a {CONSTANT_VALUE_ATTR} but role '{role}', "
                             "not 'constant'", op=source)
        return None
    if not isinstance(value, DenseIntOrFPElementsAttr) or value.get_shape() != tuple(arg.type.get_shape()):
        raise SpyreError(f"{describe_argument(arg)} of role 'constant' needs a {CONSTANT_VALUE_ATTR} = "
                         f"dense<...> of shape {list(arg.type.get_shape())}", op=source)
    return value


def _check_results(source: func.FuncOp) -> None:
    """Every returned value is computed (by a compute op, a loop or a concatenation) and returned
    once; an update of an argument is a row store into that argument (:func:`check_update`)."""
    ret = source.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    outputs, updates = output_arguments(source), updated_arguments(source)
    first = len(source.body.block.args)
    for j, value in enumerate(ret.arguments):
        if j in updates:
            check_update(source, j, updates[j])
            continue
        computed = isinstance(value, OpResult) and isinstance(value.op, ComputeOp | scf.ForOp
                                                              | tensor.InsertSliceOp)
        if not computed or outputs[value] != first + len([k for k in range(j) if k not in updates]):
            raise SpyreError(f"result #{j} must be computed by a compute op and returned once: "
                             "returning an argument, a non-compute value or one value twice needs a copy",
                             op=ret)


def _argument_infos(source: func.FuncOp) -> list[KernelArgInfo]:
    """1a. The function's arguments as kernel arguments (their roles, names and constant values;
    written: a result updates them)."""
    args = []
    written = set(updated_arguments(source).values())
    for i, arg_type in enumerate(argument_types(source)):
        layout = tensor_layout(arg_type)
        role, name = argument_role_and_name(source, i)
        args.append(KernelArgInfo(role, name, layout.nbytes, layout, value=_constant_value(source, i, role),
                                  written=i in written, value_range=argument_range(source, i),
                                  host_dtype=argument_host_dtype(source, i)))
    return args


def _kernel_args(source: func.FuncOp, inputs: list[KernelArgInfo], trace: StorageTrace) -> list[KernelArgInfo]:
    """1b. Every kernel argument in manifest order (:mod:`spyre_mlir.analysis.storage`): ``inputs``,
    the results (initialised to what a fill accumulating in them starts from, a padded one to
    zeros), the constants memory planning created, the pool."""
    args = list(inputs)
    ret = source.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    for j in output_results(source):
        layout = tensor_layout(ret.arguments[j].type)
        fill = trace.output_fills.get(len(args), 0.0 if layout.is_padded else None)
        args.append(KernelArgInfo("output", result_name(source, j), layout.nbytes, layout, fill))
    for constant in trace.constants:
        layout, stack = constant.layout, constant.stack
        arg_layout = _filled_layout(layout) if stack == 1 else _stacked_layout(layout, stack)
        args.append(KernelArgInfo("constant", constant_name(len(args)), stack * layout.nbytes, arg_layout,
                                  constant.fill))
    if trace.pool_size:
        args.append(KernelArgInfo("pool", "pool", trace.pool_size))
    return args


@dataclass(frozen=True)
class _Target:
    """What the OpSpecs are checked against: the machine and each kernel argument's bytes."""

    config: SpyreConfig
    args: Sequence[KernelArgInfo]
    pool_index: int


def _specs(items: Sequence[Traced | TracedLoop], target: _Target, new_symbol: Callable[[], int],
           files: Iterator[int], counts: tuple[int, ...] = ()) -> list[_Exec | _Loop]:
    """2. The OpSpec of every traced compute op, loops mirrored (``counts``: the trip counts of the
    loops around ``items``), each checked against the device limits (:func:`_check_limits`)."""
    out: list[_Exec | _Loop] = []
    for item in items:
        if isinstance(item, TracedLoop):
            out.append(_Loop(item.count, _specs(item.items, target, new_symbol, files, (*counts, item.count))))
            continue
        spec = build_op_spec(item.op, [loc.storage for loc in item.locs], target.config.cores, new_symbol)
        item = Traced(item.op, tuple(item.locs[t] for t in sdsc_tensors(item.op)), item.depth)
        for loc, arg in zip(item.locs, spec.args, strict=True):
            if loc.strides and arg.memory != Memory.HBM:
                raise SpyreError("a tile window of an LX value is not lowered", op=item.op)
        _check_limits(item, spec, target, counts, next(files))
        out.append(_Exec(spec, tuple(dict(loc.strides) for loc in item.locs), item.depth))
    return out


def _check_limits(item: Traced, spec: OpSpec, target: _Target, counts: tuple[int, ...], n: int) -> None:
    """The last check before the SDSC file exists: ``spec`` within every device limit the
    interpreter checks (:func:`~spyre_mlir.codegen.limit_check.op_spec_problem`), else one error at
    the compute op naming the file, tensor, core, limit and value."""
    placed = []
    for loc, arg in zip(item.locs, spec.args):
        if arg.memory != Memory.HBM:
            placed.append(None)
            continue
        k, base = _address_key(arg.placement, target.pool_index)
        placed.append(Placed(base, target.args[k].nbytes, dict(loc.strides), counts))
    problem = op_spec_problem(spec, placed, target.config)
    if problem is not None:
        raise SpyreError(f"'{item.op.name}' op ({spec.op_func}) breaks a device limit in sdsc_{n}.json: {problem}",
                         op=item.op)


def _record_prediction(bundle: func.FuncOp, costs: Sequence[OpCost], bound_ns: float) -> None:
    """The cost model's prediction for each ``sdsc_execute`` (``spyre.predicted``, by the names of
    the interpreter's statistics) and the program's lower bound (on the bundle function); the
    writer gathers them into ``cost.json``."""
    executes = [op for op in bundle.walk() if isinstance(op, SdscExecuteOp)]
    for op, cost in zip(executes, costs, strict=True):
        op.attributes[PREDICTED_ATTR] = DictionaryAttr({
            key: FloatAttr(value, f64) if isinstance(value, float) else IntegerAttr(value, i64)
            for key, value in cost.figures().items()})
    bundle.attributes[PREDICTED_ATTR] = DictionaryAttr({"lower_bound_us": FloatAttr(round(bound_ns / 1000, 3), f64)})


def _pool_index(args: Sequence[KernelArgInfo]) -> int:
    """The kernel argument that is the HBM pool, -1 when there is none."""
    return next((i for i, a in enumerate(args) if a.role == "pool"), -1)


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
    pool_index = _pool_index(args)
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
    check_kernel_names(source)
    inputs = _argument_infos(source)
    _check_results(source)
    check_row_stores(source)
    trace = StorageTrace(source, config.alignment)
    items = trace.run()
    costs, bound_ns = price(items), lower_bound_ns(source, config.cores)
    args = _kernel_args(source, inputs, trace)
    if (problem := hbm_problem(sum(a.nbytes for a in args))) is not None:
        raise SpyreError(f"{problem} (arguments {', '.join(f'{a.name} {a.nbytes}' for a in args)})", op=source)
    symbols = itertools.count(-1, -1)
    target = _Target(config, args, _pool_index(args))
    lowered = _specs(items, target, lambda: next(symbols), itertools.count())
    specs = [e.spec for e in _flatten(lowered)]
    bundle = build_bundle(lowered, args, config.cores)
    _record_prediction(bundle, costs, bound_ns)
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
