# spyre-lower-to-bundle (DESIGN §4 stage 7, §10): compute ops -> the SDSC bundle.
# Reads the one func.func of compute ops: each op's ComputeOp interface
# (iteration space, indexing maps, reduction dims, op func, core_splits), the
# layouts of its tensor types (tensor_layout) and `placement`; the `spyre.role` /
# `spyre.name` argument and result attributes.  Writes `func.func @sdsc_bundle`
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
``placement`` (``<lx, off>``, ``<hbm, arg N>``, ``<hbm, pool off>``); without one,
the output argument when the function returns it, else the HBM pool at the next
128-byte aligned offset (a bump allocation, until memory planning decides).

Addresses: operand ``i`` of an ``sdsc_execute`` is the start address of one
(tensor, core) pair, ``base + core offset``, bound to symbol ``symbol_ids[i]``;
cores that start at the same address of a tensor share one symbol.  Symbol ids
count down from -1 over the whole bundle in op, argument, core order.

Not handled yet (an error names the op): ``scf.for`` loop nests.  Coarse tiling
must hand this pass, per compute op inside a loop, each HBM tensor's window as
``tensor.extract_slice`` / ``tensor.insert_slice`` offsets that are affine in the
(normalised) loop induction variables; the pass then adds, per tensor and loop
level, the byte stride ``device_offset(layout, d offsets / d iv)`` (DESIGN §6,
e.g. ``affine_map<(d0, d1)[s0] -> (s0 + 65536*d0 + 2097152*d1)>``) through one
``affine.apply`` per (tensor, core) whose symbol is the per-core address, and
mirrors each ``scf.for`` with constant bounds ``0 .. count`` step 1
(``TensorAccess.window`` already carries constant window offsets; ``back_gap``
is derived from the storage extent minus the per-tile size).  ``spyre.view``
must not reach this pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
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
from xdsl.ir import Attribute, BlockArgument, OpResult, SSAValue
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint
from xdsl.passes import ModulePass

from spyre_mlir.codegen.build_spec import TensorAccess, build_op_spec
from spyre_mlir.codegen.opspec import OP_SPEC_ATTR, OpSpec
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.sdscbundle import InputArgExtractOp, InputArgType, SdscExecuteOp
from spyre_mlir.dialects.spyre import ComputeOp, FillOp, PlacementAttr, tensor_layout
from spyre_mlir.hardware import SpyreConfig, round_up
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

    def to_attr(self, index: int) -> DictionaryAttr:
        entries: dict[str, Attribute] = {"index": IntegerAttr(index, i64), "role": StringAttr(self.role),
                                         "name": StringAttr(self.name), "nbytes": IntegerAttr(self.nbytes, i64)}
        if self.layout is not None:
            lay = self.layout
            entries.update({
                "shape": ArrayAttr(IntegerAttr(s, i64) for s in lay.host_shape),
                "dtype": StringAttr(lay.dtype),
                "device_size": ArrayAttr(IntegerAttr(s, i64) for s in lay.device_size),
                "dim_order": ArrayAttr(IntegerAttr(s, i64) for s in lay.dim_order),
                "data_format": StringAttr(lay.data_format)})
        if self.fill is not None:
            entries["fill"] = FloatAttr(self.fill, f64)
        return DictionaryAttr(entries)


@dataclass(frozen=True)
class BundleResult:
    """What the lowering produced: the bundle function, its arguments and OpSpecs."""

    bundle: func.FuncOp
    kernel_args: tuple[KernelArgInfo, ...]
    op_specs: tuple[OpSpec, ...]


def _str_attr(attrs: ArrayAttr | None, index: int, key: str) -> str | None:
    if attrs is None or index >= len(attrs.data):
        return None
    value = attrs.data[index].data.get(key)
    return value.data if isinstance(value, StringAttr) else None


class _Lowering:
    """Storage assignment and OpSpecs of one function's compute ops."""

    def __init__(self, source: func.FuncOp, config: SpyreConfig):
        self.source, self.config = source, config
        self.storage: dict[SSAValue, TensorAccess] = {}
        self.args: list[KernelArgInfo] = []
        self.outputs: dict[SSAValue, int] = {}
        self.pool_size = 0
        self.next_symbol = -1

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
            self.args.append(KernelArgInfo(role, name, layout.nbytes, layout))
            self.storage[arg] = TensorAccess(layout, "hbm", PlacementAttr("arg", i), (0,) * len(layout.host_shape))
        ret = self.source.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        for j, value in enumerate(ret.arguments):
            if not isinstance(value, OpResult) or not isinstance(value.op, ComputeOp) or value in self.outputs:
                raise SpyreError(f"result #{j} must be computed by a compute op and returned once: "
                                 "returning an argument, a non-compute value or one value twice needs a copy",
                                 op=ret)
            layout = tensor_layout(value.type)
            name = _str_attr(self.source.res_attrs, j, "spyre.name") or f"output{j}"
            self.outputs[value] = len(self.args)
            self.args.append(KernelArgInfo("output", name, layout.nbytes, layout))

    def result_access(self, op: ComputeOp) -> TensorAccess:
        """2. Where a compute op's result lives."""
        layout = tensor_layout(op.result.type)
        origin = (0,) * len(layout.host_shape)
        placement = op.placement
        if placement is None:
            if op.result in self.outputs:
                placement = PlacementAttr("arg", self.outputs[op.result])
            else:
                placement = PlacementAttr("pool", self.pool_size)
        kind, value = placement.kind.data, placement.value.data
        if kind == "lx":
            return TensorAccess(layout, "lx", placement, origin)
        if kind == "pool":
            self.pool_size = max(self.pool_size, round_up(value + layout.nbytes, self.config.alignment))
        elif not 0 <= value < len(self.args) or self.args[value].role != "output":
            raise SpyreError(f"placement {placement} does not name an output kernel argument", op=op)
        return TensorAccess(layout, "hbm", placement, origin)

    def constant(self, op: FillOp) -> None:
        """3a. A ``spyre.fill`` becomes a ``constant`` kernel argument the runtime fills."""
        layout = tensor_layout(op.result.type)
        index = len(self.args)
        self.args.append(KernelArgInfo("constant", f"fill_{index}", layout.nbytes, layout, op.fill_value()))
        self.storage[op.result] = TensorAccess(layout, "hbm", PlacementAttr("arg", index),
                                               (0,) * len(layout.host_shape))

    def op_specs(self) -> list[OpSpec]:
        """3. One OpSpec per compute op, in program order."""
        specs = []
        for op in self.source.body.block.ops:
            if isinstance(op, func.ReturnOp):
                continue
            if isinstance(op, FillOp):
                self.constant(op)
                continue
            if not isinstance(op, ComputeOp):
                raise SpyreError(f"'{op.name}' cannot be lowered to the SDSC bundle: only compute ops "
                                 "(spyre.pointwise, reduce, matmul, restickify) and spyre.fill on kernel "
                                 "arguments and their results reach spyre-lower-to-bundle", op=op)
            accesses = []
            for i, v in enumerate(op.inputs):
                if v not in self.storage:
                    raise SpyreError(f"operand #{i} of '{op.name}' is not a kernel argument, a fill or a "
                                     "compute result (spyre.view must be folded first)", op=op)
                accesses.append(self.storage[v])
            self.storage[op.result] = self.result_access(op)
            specs.append(build_op_spec(op, [*accesses, self.storage[op.result]], self.config.cores,
                                       self.new_symbol))
        return specs


def _address_key(spec_arg_placement: PlacementAttr, pool_index: int) -> tuple[int, int]:
    """(kernel argument, byte offset) of a tensor's base."""
    if spec_arg_placement.kind.data == "pool":
        return pool_index, spec_arg_placement.value.data
    return spec_arg_placement.value.data, 0


def build_bundle(specs: Sequence[OpSpec], args: Sequence[KernelArgInfo], cores: int) -> func.FuncOp:
    """4. ``func.func @sdsc_bundle``: argument extraction, per-core addresses, one execute per op."""
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
    needed = sorted({(k, base + off) for spec in specs for a in spec.args if a.memory == "hbm"
                     for k, base in [_address_key(a.placement, pool_index)] for off in a.core_offsets})
    addresses: dict[tuple[int, int], SSAValue] = {}
    for k, off in needed:
        if off == 0:
            addresses[(k, off)] = bases[k]
            continue
        const = b.insert(arith.ConstantOp(IntegerAttr(off, IndexType())))
        const.result.name_hint = "core_offset"
        add = b.insert(arith.AddiOp(bases[k], const.result))
        add.result.name_hint = "core"
        addresses[(k, off)] = add.result
    for n, spec in enumerate(specs):
        operands, ids = [], []
        for a in spec.args:
            if a.memory != "hbm":
                continue
            k, base = _address_key(a.placement, pool_index)
            for symbol, off in dict(zip(a.symbols, a.core_offsets)).items():
                operands.append(addresses[(k, base + off)])
                ids.append(symbol)
        b.insert(SdscExecuteOp(operands, f"sdsc_{n}.json", ids, attributes={OP_SPEC_ATTR: spec.to_attr()}))
    b.insert(func.ReturnOp())
    return bundle


def lower_to_bundle(module: ModuleOp, config: SpyreConfig) -> BundleResult:
    """Replace the module's function of compute ops by ``@sdsc_bundle``."""
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(funcs) != 1 or funcs[0].sym_name.data == BUNDLE_FUNC:
        raise SpyreError(f"spyre-lower-to-bundle expects one func.func of compute ops, found "
                         f"{[f.sym_name.data for f in funcs]}", op=module)
    source = funcs[0]
    for op in source.walk():
        if op is not source and op.parent_op() is not source and not isinstance(op, func.ReturnOp):
            raise SpyreError(f"'{op.parent_op().name}' regions (loop nests) are not lowered yet", op=op)
    lowering = _Lowering(source, config)
    lowering.kernel_arguments()
    specs = lowering.op_specs()
    args = list(lowering.args)
    if lowering.pool_size:
        args.append(KernelArgInfo("pool", "pool", lowering.pool_size))
    bundle = build_bundle(specs, args, config.cores)
    module.body.block.insert_op_before(bundle, source)
    module.body.block.erase_op(source)
    return BundleResult(bundle, tuple(args), tuple(specs))


@dataclass(frozen=True)
class LowerToBundlePass(ModulePass):
    """Lower the compute ops to func.func @sdsc_bundle (sdsc_execute + OpSpec per op)."""

    name = "spyre-lower-to-bundle"

    cores: int | None = None
    """Cores of the target (recorded in the manifest; core_splits must fit); None takes
    ``SENCORES`` from the environment, else 32."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_to_bundle(op, SpyreConfig.from_env() if self.cores is None else SpyreConfig(cores=self.cores))
