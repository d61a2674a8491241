# The `spyre` dialect: tensor-level ops and attributes of the Spyre front end.
# Reads the op-func table (spyre_mlir.opfuncs) and the stick-layout model
# (spyre_mlir.layout); writes nothing.  Every pass talks to compute ops through
# ComputeOp (iteration space, indexing maps, reduction dims, op func), and reads
# the target facts (cores, LX fraction) through target_config (`spyre.target`).
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
``placement`` (of the result), ``hints``, and explicit ``indexing_maps`` /
``iteration_space`` written by view folding.
"""

from __future__ import annotations

import functools
import math
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar
from enum import StrEnum

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    FloatData,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    TensorType,
    f64,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from spyre_mlir import opfuncs
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import FORMAT_BYTES, SpyreConfig, data_format
from spyre_mlir.layout import ABSENT, StickLayout, stick_layout
from spyre_mlir.limits import ALIGNMENT
from spyre_mlir.opfuncs import OpFunc, OpKind

# --------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------

_DTYPES: tuple[tuple[type[Attribute], str], ...] = (
    (Float16Type, "float16"),
    (BFloat16Type, "bfloat16"),
    (Float32Type, "float32"),
)


def element_dtype(element_type: Attribute) -> str | None:
    """The canonical dtype name of an MLIR element type, None if Spyre has none."""
    for cls, name in _DTYPES:
        if isinstance(element_type, cls):
            return name
    if isinstance(element_type, IntegerType) and element_type.width.data in (8, 32):
        return f"int{element_type.width.data}"
    return None


def _shape(value: SSAValue | Attribute) -> tuple[int, ...]:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


# --------------------------------------------------------------------------
# Attributes
# --------------------------------------------------------------------------


def _parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(v) for v in values) + "]")


def _verified_parameters(parser: AttrParser, cls: type[ParametrizedAttribute], start: int,
                         params: Sequence[Attribute]) -> Sequence[Attribute]:
    """``params`` after running ``cls``'s verifier, so that an error points at the attribute text."""
    try:
        cls.new(params)
    except VerifyException as e:
        parser.raise_error(str(e), start, parser.pos)
    return params


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """A tensor's device layout (DESIGN §6), used as the tensor type's encoding.

    ``#spyre.layout<device_size = [4, 512, 64], dim_order = [0, 1], format = "SEN169_FP16">``
    """

    name = "spyre.layout"
    device_size: ArrayAttr[IntAttr]
    dim_order: ArrayAttr[IntAttr]
    data_format: StringAttr

    def __init__(self, device_size: Sequence[int], dim_order: Sequence[int], fmt: str):
        super().__init__(
            ArrayAttr(IntAttr(v) for v in device_size),
            ArrayAttr(IntAttr(v) for v in dim_order),
            StringAttr(fmt),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        with parser.in_angle_brackets():
            parser.parse_keyword("device_size")
            parser.parse_punctuation("=")
            size = _parse_int_list(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("dim_order")
            parser.parse_punctuation("=")
            order = _parse_int_list(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("format")
            parser.parse_punctuation("=")
            fmt = parser.parse_str_literal()
        return _verified_parameters(parser, cls, start, (
            ArrayAttr(IntAttr(v) for v in size),
            ArrayAttr(IntAttr(v) for v in order),
            StringAttr(fmt),
        ))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("device_size = ")
            _print_int_list(printer, self.sizes)
            printer.print_string(", dim_order = ")
            _print_int_list(printer, self.order)
            printer.print_string(", format = ")
            printer.print_string_literal(self.data_format.data)

    @property
    def sizes(self) -> tuple[int, ...]:
        """The device sizes, outermost first; the last is the stick."""
        return tuple(a.data for a in self.device_size.data)

    @property
    def order(self) -> tuple[int, ...]:
        """The host dim order; its last entry is the stick dim."""
        return tuple(a.data for a in self.dim_order.data)

    def verify(self) -> None:
        if any(s <= 0 for s in self.sizes):
            raise VerifyException(f"#spyre.layout: device sizes must be positive, got {list(self.sizes)}")
        if sorted(self.order) != list(range(len(self.order))):
            raise VerifyException(
                f"#spyre.layout: dim_order must be a permutation of 0..{len(self.order) - 1}, "
                f"got {list(self.order)}")
        formats = tuple(FORMAT_BYTES)
        if self.data_format.data not in formats:
            raise VerifyException(
                f"#spyre.layout: unknown data format '{self.data_format.data}', "
                f"expected one of {', '.join(formats)}")


def layout_attr(layout: StickLayout) -> LayoutAttr:
    """The ``#spyre.layout`` of a stick layout."""
    return LayoutAttr(layout.device_size, layout.dim_order, layout.data_format)


@functools.lru_cache(maxsize=4096)
def tensor_layout(t: Attribute) -> StickLayout:
    """The stick layout of a tensor type: its ``#spyre.layout``, else its shape's default.

    A ``device_size`` beyond the default of the dim order pads host dims (e.g. a
    matmul B operand's K dim padded to whole sticks).
    """
    assert isinstance(t, TensorType)
    dtype = element_dtype(t.get_element_type())
    assert dtype is not None, f"no Spyre dtype for {t}"
    order = list(t.encoding.order) if isinstance(t.encoding, LayoutAttr) else None
    layout = stick_layout(t.get_shape(), dtype, order or None)
    if isinstance(t.encoding, LayoutAttr) and list(t.encoding.sizes) != layout.device_size:
        padded = _padded_host_shape(layout, t.encoding.sizes)
        layout = stick_layout(t.get_shape(), dtype, order or None, padded_shape=padded)
    return layout


def _padded_host_shape(layout: StickLayout, sizes: Sequence[int]) -> list[int]:
    """The host-dim extents held by device ``sizes`` (at least ``layout``'s default sizes)."""
    padded = list(layout.host_shape)
    default = layout.device_size
    for size, minimum, dim in zip(sizes[:-1], default[:-1], layout.device_dims[:-1]):
        if dim == ABSENT or size == minimum:
            continue
        padded[dim] = size * layout.elems_per_stick if dim == layout.stick_dim else size
    return padded


def _parse_count_dict(parser: AttrParser) -> DictionaryAttr:
    counts: dict[str, Attribute] = {}

    def entry() -> None:
        pos = parser.pos
        name = parser.parse_identifier_or_str_literal("a dimension name")
        if name in counts:
            parser.raise_error(f"duplicate dimension '{name}' in #spyre.hint", pos, parser.pos)
        parser.parse_punctuation("=")
        counts[name] = IntegerAttr(parser.parse_integer(), i64)

    parser.parse_comma_separated_list(parser.Delimiter.BRACES, entry)
    return DictionaryAttr(counts)


def _print_count_dict(printer: Printer, counts: DictionaryAttr) -> None:
    printer.print_string("{")
    for i, (name, count) in enumerate(counts.data.items()):
        if i:
            printer.print_string(", ")
        printer.print_identifier_or_string_literal(name)
        assert isinstance(count, IntegerAttr)
        printer.print_string(f" = {count.value.data}")
    printer.print_string("}")


@irdl_attr_definition
class HintAttr(ParametrizedAttribute):
    """One ``spyre_hint`` scope: its process-wide id, tile counts and work division.

    ``#spyre.hint<3, tiles = {A = 2}>``, ``#spyre.hint<4, work_div = {M = 2, K = 4}>``.
    Ids increase with opening order, so an outer scope has a smaller id.
    """

    name = "spyre.hint"
    hint_id: IntAttr
    tiles: DictionaryAttr
    work_div: DictionaryAttr

    def __init__(self, hint_id: int, tiles: dict[str, int] | None = None,
                 work_div: dict[str, int] | None = None):
        def counts(d: dict[str, int] | None) -> DictionaryAttr:
            return DictionaryAttr({k: IntegerAttr(v, i64) for k, v in (d or {}).items()})

        super().__init__(IntAttr(hint_id), counts(tiles), counts(work_div))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        found = {"tiles": DictionaryAttr({}), "work_div": DictionaryAttr({})}
        start = parser.pos
        with parser.in_angle_brackets():
            hint_id = parser.parse_integer(allow_negative=False)
            while parser.parse_optional_punctuation(",") is not None:
                pos = parser.pos
                key = parser.parse_keyword_in(("tiles", "work_div"))
                if found[key].data:
                    parser.raise_error(f"duplicate '{key}' in #spyre.hint", pos, parser.pos)
                parser.parse_punctuation("=")
                found[key] = _parse_count_dict(parser)
        return _verified_parameters(parser, cls, start, (IntAttr(hint_id), found["tiles"], found["work_div"]))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_int(self.hint_id.data)
            for key, counts in (("tiles", self.tiles), ("work_div", self.work_div)):
                if counts.data:
                    printer.print_string(f", {key} = ")
                    _print_count_dict(printer, counts)

    def tile_counts(self) -> dict[str, int]:
        """Tile count per dimension name."""
        return _count_values(self.tiles)

    def work_div_counts(self) -> dict[str, int]:
        """Requested core split per dimension name."""
        return _count_values(self.work_div)

    def verify(self) -> None:
        if not self.tiles.data and not self.work_div.data:
            raise VerifyException("#spyre.hint: a hint needs tiles or work_div")
        for key, counts in (("tiles", self.tiles), ("work_div", self.work_div)):
            for name, count in counts.data.items():
                if not isinstance(count, IntegerAttr) or count.value.data <= 0:
                    raise VerifyException(
                        f"#spyre.hint: {key} count for '{name}' must be a positive integer")


def _count_values(counts: DictionaryAttr) -> dict[str, int]:
    return {k: v.value.data for k, v in counts.data.items() if isinstance(v, IntegerAttr)}


class Memory(StrEnum):
    """The memory a placed value lives in."""

    LX = "lx"
    """Every core's scratchpad."""
    HBM = "hbm"
    """Device main memory."""


class PlacementKind(StrEnum):
    """How ``#spyre.placement`` places a value."""

    LX = "lx"
    """An offset in every core's LX."""
    ARG = "arg"
    """A kernel argument (HBM), by index."""
    POOL = "pool"
    """An offset in the HBM pool argument."""
    ZEROED = "zeroed"
    """A zeroed HBM buffer of its own."""

    @property
    def memory(self) -> Memory:
        """The memory this kind of placement is in."""
        return Memory.LX if self is PlacementKind.LX else Memory.HBM


@irdl_attr_definition
class PlacementAttr(ParametrizedAttribute):
    """Where a value lives: an LX offset, an HBM kernel argument, an HBM pool offset, or a
    zeroed HBM buffer of its own.

    ``#spyre.placement<lx, 4096>``, ``#spyre.placement<hbm, arg 2>``,
    ``#spyre.placement<hbm, pool 4096>``, ``#spyre.placement<hbm, zeroed>``.  A ``zeroed``
    value needs a buffer of its own that the runtime fills with zeros before the run, so
    the padding its writer does not reach stays zero (a matmul reads the padded K rows of
    its B operand as zeros): memory planning makes it a constant kernel argument
    (``<hbm, arg N>``, :mod:`spyre_mlir.analysis.storage`).
    """

    name = "spyre.placement"
    kind: StringAttr
    value: IntAttr

    def __init__(self, kind: PlacementKind, value: int):
        super().__init__(StringAttr(kind.value), IntAttr(value))

    @property
    def placement_kind(self) -> PlacementKind:
        """The kind of placement (verified to be one)."""
        return PlacementKind(self.kind.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        with parser.in_angle_brackets():
            memory = parser.parse_keyword_in(tuple(Memory))
            parser.parse_punctuation(",")
            hbm_kinds = tuple(k.value for k in PlacementKind if k.memory is Memory.HBM)
            kind = PlacementKind.LX if memory == Memory.LX else PlacementKind(parser.parse_keyword_in(hbm_kinds))
            value = 0 if kind is PlacementKind.ZEROED else parser.parse_integer(allow_negative=False)
        return _verified_parameters(parser, cls, start, (StringAttr(kind.value), IntAttr(value)))

    def print_parameters(self, printer: Printer) -> None:
        kind = self.placement_kind
        if kind is PlacementKind.ZEROED:
            printer.print_string("<hbm, zeroed>")
            return
        where = "lx, " if kind is PlacementKind.LX else f"hbm, {kind.value} "
        printer.print_string(f"<{where}{self.value.data}>")

    def verify(self) -> None:
        if self.kind.data not in tuple(PlacementKind):
            raise VerifyException(f"#spyre.placement: unknown kind '{self.kind.data}'")
        if self.placement_kind in (PlacementKind.LX, PlacementKind.POOL) and self.value.data % ALIGNMENT:
            raise VerifyException(
                f"#spyre.placement: {self.kind.data} offset {self.value.data} is not {ALIGNMENT}-byte aligned")


def _float_text(value: float) -> str:
    """``value`` as the shortest MLIR float literal that reads back as it (``0.2``, ``1.0e-05``)."""
    mantissa, e, exponent = repr(value).partition("e")
    return (mantissa if "." in mantissa else f"{mantissa}.0") + e + exponent


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """The machine a module is compiled for (DESIGN §14): every target fact a pass reads.

    ``#spyre.target<cores = 4, lx_fraction = 0.2>``: the cores work is divided
    over (1..32) and the share of LX kept by the back end (``0 <= f < 1``).  It
    is the module attribute ``spyre.target`` (:data:`TARGET_ATTR`), set by
    ``spyre-attach-target`` or the compile driver.
    """

    name = "spyre.target"
    cores: IntAttr
    lx_fraction: FloatData

    def __init__(self, cores: int, lx_fraction: float):
        super().__init__(IntAttr(cores), FloatData(float(lx_fraction)))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        with parser.in_angle_brackets():
            parser.parse_keyword("cores")
            parser.parse_punctuation("=")
            cores = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(",")
            parser.parse_keyword("lx_fraction")
            parser.parse_punctuation("=")
            fraction = parser.parse_number()
        return _verified_parameters(parser, cls, start, (IntAttr(cores), FloatData(float(fraction))))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<cores = {self.cores.data}, lx_fraction = {_float_text(self.lx_fraction.data)}>")

    def config(self) -> SpyreConfig:
        """The machine config of this target (the other quantities at their hardware values)."""
        return SpyreConfig(cores=self.cores.data, backend_lx_fraction=self.lx_fraction.data)

    def verify(self) -> None:
        try:
            self.config()
        except SpyreError as e:
            raise VerifyException(f"#spyre.target: {e.msg}") from None


TARGET_ATTR = "spyre.target"
"""The module attribute that holds the module's :class:`TargetAttr`."""

CONSTANT_VALUE_ATTR = "spyre.value"
"""The argument attribute of a function argument of role ``constant`` (a value the import
computed at compile time): its host values as a ``dense<...>`` of the argument's shape, f32
for floats (exact for every float type: xDSL 0.74 prints bf16 elements wrongly), i32 for
indices.  Lowering carries it to the kernel argument; the writer stores it in a file."""


def target_config(module: ModuleOp) -> SpyreConfig:
    """The machine config of ``module``'s ``#spyre.target``; without one, the default (32 cores, LX fraction 0.2)."""
    target = module.attributes.get(TARGET_ATTR)
    if target is None:
        return SpyreConfig()
    if not isinstance(target, TargetAttr):
        raise SpyreError(f"module attribute '{TARGET_ATTR}' must be a #spyre.target<...>, got {target}", op=module)
    return target.config()


def attach_target(module: ModuleOp, config: SpyreConfig) -> None:
    """Record ``config``'s target facts (cores, LX fraction) as ``module``'s ``#spyre.target``."""
    module.attributes[TARGET_ATTR] = TargetAttr(config.cores, config.backend_lx_fraction)


# --------------------------------------------------------------------------
# Verification helpers shared by the ops
# --------------------------------------------------------------------------


def _verify_tensor_type(t: Attribute, what: str, index: bool = True) -> None:
    """Static shape, a Spyre element type, and a layout consistent with both.

    i32 is the type of indices: a compute op takes it only where it reads an index (``index``).
    """
    assert isinstance(t, TensorType)
    shape = tuple(t.get_shape())
    if any(s < 0 for s in shape):
        raise VerifyException(f"{what} has a dynamic shape {t}; only static shapes are supported")
    if 0 in shape:
        raise VerifyException(f"{what} has an empty dimension {t}; every dimension must be at least 1")
    dtype = element_dtype(t.get_element_type())
    if dtype is None or (dtype == "int32" and not index):
        expected = "f16, bf16, f32, i8, i32" if index else "f16, bf16, f32, i8"
        raise VerifyException(f"{what} has element type {t.get_element_type()}, expected one of {expected}")
    layout = t.encoding
    if isinstance(layout, NoneAttr):
        return
    if not isinstance(layout, LayoutAttr):
        raise VerifyException(f"{what} has encoding {layout}, expected #spyre.layout")
    if len(layout.order) != len(shape):
        raise VerifyException(f"{what}: layout dim_order {list(layout.order)} does not match rank {len(shape)}")
    expected = stick_layout(shape, dtype, list(layout.order) or None)
    if layout.data_format.data != data_format(dtype):
        raise VerifyException(f"{what}: layout format '{layout.data_format.data}' does not match "
                              f"element type {dtype} ('{data_format(dtype)}')")
    minimum = expected.device_size
    if len(layout.sizes) != len(minimum) or any(a < b for a, b in zip(layout.sizes, minimum)):
        raise VerifyException(f"{what}: layout device_size {list(layout.sizes)} cannot hold the "
                              f"tensor; needs at least {list(minimum)}")


def _element_type(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.get_element_type()


def _broadcast_map(operand_shape: Sequence[int], result_shape: Sequence[int]) -> AffineMap:
    """Map from the result's index space to a right-aligned broadcast operand."""
    offset = len(result_shape) - len(operand_shape)
    exprs = [
        AffineExpr.constant(0) if size == 1 and result_shape[offset + i] != 1
        else AffineExpr.dimension(offset + i)
        for i, size in enumerate(operand_shape)
    ]
    return AffineMap(len(result_shape), 0, tuple(exprs))


@functools.lru_cache(maxsize=4096)
def _pointwise_maps(operand_shapes: tuple[tuple[int, ...], ...],
                    result_shape: tuple[int, ...]) -> tuple[AffineMap, ...]:
    """A pointwise op's maps: each operand's broadcast map, then the result's identity.

    Built once per shape signature (passes ask for the maps of every op many
    times); affine maps are immutable, so ops share them.
    """
    return (*(_broadcast_map(s, result_shape) for s in operand_shapes), AffineMap.identity(len(result_shape)))


@functools.lru_cache(maxsize=4096)
def _gather_maps(index_rank: int, table_rank: int, dim: int) -> tuple[AffineMap, ...]:
    """An indirect identity's maps: the index's (its dims in the result), the table's (0 in the
    gathered dim), then the result's identity (built once, shared)."""
    rank = table_rank - 1 + index_rank
    index = tuple(AffineExpr.dimension(dim + i) for i in range(index_rank))
    table = tuple(AffineExpr.dimension(j) if j < dim else AffineExpr.constant(0) if j == dim
                  else AffineExpr.dimension(j + index_rank - 1) for j in range(table_rank))
    return AffineMap(rank, 0, index), AffineMap(rank, 0, table), AffineMap.identity(rank)


@functools.lru_cache(maxsize=4096)
def _reduce_maps(kept: tuple[int, ...], reduced: tuple[int, ...], keeps_dims: bool) -> tuple[AffineMap, ...]:
    """A reduction's maps over (kept dims, reduced dims): the operand's, then the result's (built once, shared)."""
    order = (*kept, *reduced)
    rank = len(order)
    position = {d: i for i, d in enumerate(order)}
    source = AffineMap(rank, 0, tuple(AffineExpr.dimension(position[d]) for d in range(rank)))
    if keeps_dims:
        out = tuple(AffineExpr.constant(0) if d in reduced else AffineExpr.dimension(position[d])
                    for d in range(rank))
    else:
        out = tuple(AffineExpr.dimension(i) for i in range(len(kept)))
    return source, AffineMap(rank, 0, out)


@functools.lru_cache(maxsize=4096)
def _matmul_maps(a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...]) -> tuple[AffineMap, ...]:
    """A (batched) matmul's maps over (batch.., M, N, K): A's, B's, then the result's (built once, shared)."""
    rank = len(out) + 1
    batch, (m, n, k) = rank - 3, (rank - 3, rank - 2, rank - 1)

    def operand_map(shape: tuple[int, ...], rows: int, cols: int) -> AffineMap:
        lead = len(shape) - 2
        exprs = [AffineExpr.constant(0) if size == 1 and out[batch - lead + i] != 1
                 else AffineExpr.dimension(batch - lead + i) for i, size in enumerate(shape[:lead])]
        return AffineMap(rank, 0, (*exprs, AffineExpr.dimension(rows), AffineExpr.dimension(cols)))

    return (operand_map(a, m, k), operand_map(b, k, n),
            AffineMap(rank, 0, tuple(AffineExpr.dimension(i) for i in range(rank - 1))))


def _used_dims(expr: AffineExpr) -> set[int]:
    """Positions of the dims ``expr`` uses."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position}
    if isinstance(expr, AffineBinaryOpExpr):
        return _used_dims(expr.lhs) | _used_dims(expr.rhs)
    return set()


def _broadcasts_to(operand_shape: Sequence[int], result_shape: Sequence[int]) -> bool:
    if len(operand_shape) > len(result_shape):
        return False
    tail = result_shape[len(result_shape) - len(operand_shape):]
    return all(o in (1, r) for o, r in zip(operand_shape, tail))


def expr_range(expr: AffineExpr, dims: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """Inclusive bounds of ``expr`` when dim ``i`` ranges over ``dims[i]`` (interval arithmetic)."""
    if isinstance(expr, AffineConstantExpr):
        return expr.value, expr.value
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if not isinstance(expr, AffineBinaryOpExpr):
        raise VerifyException(f"unexpected symbol in {expr}")
    lo_a, hi_a = expr_range(expr.lhs, dims)
    if expr.kind is AffineBinaryOpKind.Add:
        lo_b, hi_b = expr_range(expr.rhs, dims)
        return lo_a + lo_b, hi_a + hi_b
    if not isinstance(expr.rhs, AffineConstantExpr):
        raise VerifyException(f"non-affine term {expr}: the right operand must be a constant")
    c = expr.rhs.value
    if expr.kind is AffineBinaryOpKind.Mul:
        return min(lo_a * c, hi_a * c), max(lo_a * c, hi_a * c)
    if c <= 0:
        raise VerifyException(f"{expr}: the divisor must be positive")
    if expr.kind is AffineBinaryOpKind.FloorDiv:
        return lo_a // c, hi_a // c
    if expr.kind is AffineBinaryOpKind.CeilDiv:
        return -(-lo_a // c), -(-hi_a // c)
    if lo_a // c == hi_a // c:
        return lo_a % c, hi_a % c
    return 0, c - 1


# --------------------------------------------------------------------------
# The compute-op interface
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class IndirectAccess:
    """How an op reads a table through an index (DESIGN §15: ``embedding``, ``index_select``).

    The table's coordinate along ``table_dim`` is the value of the index at the
    iteration point, not an affine function of it: the table's indexing map holds
    the constant 0 there.  The table is shared by all cores at one base.
    """

    index: int
    """Operand position of the int32 index."""
    table: int
    """Operand position of the table."""
    table_dim: int
    """The table's gathered dim."""
    entry_dims: tuple[int, ...]
    """Iteration dims the index map uses: the index entries, which work may be divided by."""
    data_dims: tuple[int, ...]
    """Iteration dims the table map uses: its data dims, never split across cores."""


class ComputeOp(IRDLOperation):
    """The interface every Spyre compute op implements.

    An op iterates over an ``iteration_space()``; ``indexing_maps()`` give, for
    each operand and then for the result, the map from iteration coordinates to
    that tensor's host coordinates; the iteration dims the result map does not
    use are ``reduction_dims()``.  Ops derive all three from their types unless
    view folding wrote explicit ``iteration_space`` / ``indexing_maps``.
    """

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)

    OPERANDS: ClassVar[tuple[str, ...] | None] = None
    """The names of the tensor operands of an op that takes a fixed number of them (a matmul's
    ``lhs``, ``rhs``), None when the count varies; the verifier and the IRDL (spyre_mlir.irdl)
    both read it."""

    dims = opt_prop_def(ArrayAttr[ArrayAttr[StringAttr]])
    core_splits = opt_prop_def(DenseArrayBase.constr(i64))
    placement = opt_prop_def(PlacementAttr)
    hints = opt_prop_def(ArrayAttr[HintAttr])
    indexing_maps = opt_prop_def(ArrayAttr[AffineMapAttr])
    iteration_space = opt_prop_def(DenseArrayBase.constr(i64))

    irdl_options = (ParsePropInAttrDict(),)

    # Per-op parts of the interface.
    @abstractmethod
    def op_func(self) -> OpFunc:
        """The op func this op computes."""

    @abstractmethod
    def default_iteration_space(self) -> tuple[int, ...]:
        """The iteration space implied by the operand and result types."""

    @abstractmethod
    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        """Indexing maps implied by the types: one per operand, then the result's."""

    @abstractmethod
    def verify_types(self) -> None:
        """Op-specific checks of operand and result types."""

    # The shared part of the interface.
    def get_iteration_space(self) -> tuple[int, ...]:
        """Sizes of the iteration dims (explicit, or derived from the types)."""
        if self.iteration_space is not None:
            return tuple(self.iteration_space.get_values())
        return self.default_iteration_space()

    def get_indexing_maps(self) -> tuple[AffineMap, ...]:
        """Per-operand maps, then the result's, from iteration to host coordinates."""
        if self.indexing_maps is not None:
            return tuple(m.data for m in self.indexing_maps.data)
        return self.default_indexing_maps()

    def reduction_dims(self) -> tuple[int, ...]:
        """Iteration dims that the result does not index."""
        return tuple(sorted(self.get_indexing_maps()[-1].unused_dims()))

    def has_explicit_maps(self) -> bool:
        """True when ``indexing_maps`` are explicit: operands are then storage, not viewed shapes."""
        return self.indexing_maps is not None

    def indirect_access(self) -> IndirectAccess | None:
        """How the op reads a table through an index, None when every operand is read directly."""
        return None

    def reads_index(self, position: int) -> bool:
        """True when tensor ``position`` (operands, then the result) may hold i32 indices."""
        return False

    def const_values(self) -> dict[str, float]:
        """The op func's scalar inputs and parameters, by name (none unless the op carries them)."""
        return {}

    def set_indexing(self, space: Sequence[int], maps: Sequence[AffineMap]) -> None:
        """Write an explicit iteration space and indexing maps (for the current operands)."""
        self.properties["iteration_space"] = DenseArrayBase.from_list(i64, list(space))
        self.properties["indexing_maps"] = ArrayAttr([AffineMapAttr(m) for m in maps])

    def get_core_splits(self) -> tuple[int, ...] | None:
        """Cores per iteration dim, once work division has decided them."""
        return None if self.core_splits is None else tuple(self.core_splits.get_values())

    def get_dim_names(self) -> tuple[tuple[str, ...], ...] | None:
        """Dimension names per iteration dim, once propagated."""
        if self.dims is None:
            return None
        return tuple(tuple(s.data for s in names.data) for names in self.dims.data)

    def get_hints(self) -> tuple[HintAttr, ...]:
        """The ``spyre_hint`` scopes this op was traced in, outermost first."""
        return () if self.hints is None else tuple(self.hints.data)

    def verify_(self) -> None:
        if self.OPERANDS is not None and len(self.inputs) != len(self.OPERANDS):
            count = {1: "one operand", 2: "two operands"}[len(self.OPERANDS)]
            raise VerifyException(f"expects {count}, got {len(self.inputs)}")
        for i, v in enumerate(self.inputs):
            _verify_tensor_type(v.type, f"operand #{i}", self.reads_index(i))
        _verify_tensor_type(self.result.type, "result", self.reads_index(len(self.inputs)))
        self.verify_types()
        self._verify_interface_attrs()

    def _verify_interface_attrs(self) -> None:
        if self.iteration_space is not None and self.indexing_maps is None:
            raise VerifyException("an explicit iteration_space needs explicit indexing_maps")
        space = self.get_iteration_space()
        if any(s <= 0 for s in space):
            raise VerifyException(f"iteration space sizes must be positive, got {list(space)}")
        maps = self.get_indexing_maps()
        tensors = [*self.inputs, self.result]
        if len(maps) != len(tensors):
            raise VerifyException(f"expected {len(tensors)} indexing maps (operands then result), got {len(maps)}")
        bounds = [(0, s - 1) for s in space]
        for i, (m, v) in enumerate(zip(maps, tensors)):
            what = "result" if i == len(maps) - 1 else f"operand #{i}"
            shape = _shape(v)
            if m.num_symbols:
                raise VerifyException(f"indexing map {m} of {what} must not have symbols")
            if m.num_dims != len(space) or len(m.results) != len(shape):
                raise VerifyException(
                    f"indexing map {m} of {what} must map {len(space)} iteration dims to "
                    f"{len(shape)} coordinates")
            for d, (expr, size) in enumerate(zip(m.results, shape)):
                lo, hi = expr_range(expr, bounds)
                if lo < 0 or hi >= size:
                    raise VerifyException(
                        f"indexing map {m} of {what} reaches [{lo}, {hi}] in dim {d} of size {size}")
        for name, values in (("core_splits", self.get_core_splits()), ("dims", self.get_dim_names())):
            if values is not None and len(values) != len(space):
                raise VerifyException(
                    f"{name} has {len(values)} entries for an iteration space of rank {len(space)}")
        splits = self.get_core_splits()
        if splits is not None and any(s <= 0 for s in splits):
            raise VerifyException(f"core_splits must be positive, got {list(splits)}")


def _op_func_of_kind(name: str, kinds: tuple[OpKind, ...]) -> OpFunc:
    func = opfuncs.lookup(name)
    if func is None:
        raise VerifyException(f"unknown op func '{name}'")
    if func.kind not in kinds:
        expected = " or ".join(k.value for k in kinds)
        raise VerifyException(f"op func '{name}' is a {func.kind.value} op func, expected {expected}")
    return func


# --------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------


def _scalar_value(attr: Attribute) -> float | None:
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, IntegerAttr):
        return float(attr.value.data)
    return None


@irdl_op_definition
class PointwiseOp(ComputeOp):
    """Elementwise op func with numpy-style broadcasting of its tensor operands.

    Inputs of the op func not given as operands are scalar ``consts``, under the
    input's name; ``consts`` also holds the op func's scalar parameters.
    """

    name = "spyre.pointwise"
    op_func_name = prop_def(StringAttr)
    consts = opt_prop_def(DictionaryAttr)
    indirect_dim = opt_prop_def(IntegerAttr)
    """With ``identity``: operand #1 (a table) is read along this dim at the values of
    operand #0 (an i32 index), see :meth:`gather`."""
    traits = traits_def(Pure())

    assembly_format = ("$op_func_name ` ` `(` $inputs `)` (`consts` $consts^)? attr-dict "
                       "`:` functional-type($inputs, $result)")

    def __init__(self, op_func: str, inputs: Sequence[SSAValue], result_type: Attribute,
                 consts: dict[str, float] | None = None):
        props: dict[str, Attribute] = {"op_func_name": StringAttr(op_func)}
        if consts:
            props["consts"] = DictionaryAttr({k: FloatAttr(v, f64) for k, v in consts.items()})
        super().__init__(operands=[inputs], result_types=[result_type], properties=props)

    @classmethod
    def gather(cls, index: SSAValue, table: SSAValue, dim: int, result_type: Attribute,
               along: bool = False) -> PointwiseOp:
        """``identity`` reading ``table`` along ``dim`` at the values of the i32 ``index``: the
        result is ``table.shape[:dim] + index.shape + table.shape[dim + 1:]`` (``np.take``)::

            %e = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64}
                 : (tensor<2x100xi32>, tensor<1000x96xf16>) -> tensor<2x100x96xf16>

        With ``along`` the index has the table's rank and the result its shape, the table's other
        dims read at the index's coordinates (``np.take_along_axis``, ``torch.gather``): explicit
        maps, the table's holding 0 in ``dim``.
        """
        op = cls("identity", [index, table], result_type)
        op.properties["indirect_dim"] = IntegerAttr(dim, i64)
        if along:
            shape = _shape(index)
            rank = len(shape)
            row = AffineMap(rank, 0, tuple(AffineExpr.constant(0) if j == dim else AffineExpr.dimension(j)
                                           for j in range(rank)))
            op.set_indexing(shape, (AffineMap.identity(rank), row, AffineMap.identity(rank)))
        return op

    def op_func(self) -> OpFunc:
        return _op_func_of_kind(self.op_func_name.data, (OpKind.POINTWISE,))

    def reads_index(self, position: int) -> bool:
        return position == 0 and self.indirect_dim is not None

    def indirect_access(self) -> IndirectAccess | None:
        if self.indirect_dim is None:
            return None
        index_map, table_map = self.get_indexing_maps()[:2]
        return IndirectAccess(0, 1, self.indirect_dim.value.data,
                              tuple(sorted(set().union(*map(_used_dims, index_map.results)))),
                              tuple(sorted(set().union(*map(_used_dims, table_map.results)))))

    def const_values(self) -> dict[str, float]:
        """The scalar inputs and parameters, by name."""
        if self.consts is None:
            return {}
        return {k: v for k, a in self.consts.data.items() if (v := _scalar_value(a)) is not None}

    def tensor_input_names(self) -> tuple[str, ...]:
        """The op func input each tensor operand supplies, in operand order."""
        given = self.const_values()
        return tuple(n for n in self.op_func().inputs if n not in given)

    def default_iteration_space(self) -> tuple[int, ...]:
        return _shape(self.result)

    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        if self.indirect_dim is not None:
            return _gather_maps(len(_shape(self.inputs[0])), len(_shape(self.inputs[1])),
                                self.indirect_dim.value.data)
        return _pointwise_maps(tuple(_shape(v) for v in self.inputs), _shape(self.result))

    def verify_types(self) -> None:
        if self.indirect_dim is not None:
            self._verify_gather()
            return
        func = self.op_func()
        names = func.inputs
        consts = self.consts.data if self.consts is not None else {}
        for key, attr in consts.items():
            if key not in names and key not in func.params:
                allowed = ", ".join((*names, *func.params))
                raise VerifyException(f"op func '{func.name}' has no input or parameter '{key}' "
                                      f"(expected one of: {allowed})")
            if _scalar_value(attr) is None:
                raise VerifyException(f"const '{key}' must be a float or integer, got {attr}")
        tensor_inputs = len([n for n in names if n not in consts])
        if not self.inputs:
            raise VerifyException(f"op func '{func.name}' needs at least one tensor operand; "
                                  "an all-constant value is a spyre.fill")
        if tensor_inputs != len(self.inputs):
            raise VerifyException(
                f"op func '{func.name}' takes {len(names)} inputs ({', '.join(names)}); "
                f"{len(consts.keys() & set(names))} given as consts leaves {tensor_inputs} "
                f"tensor operands, got {len(self.inputs)}")
        out = _element_type(self.result)
        out_shape = _shape(self.result)
        for i, v in enumerate(self.inputs):
            if not func.casts and _element_type(v) != out:
                raise VerifyException(f"operand #{i} element type {_element_type(v)} differs from "
                                      f"result element type {out}")
            if not self.has_explicit_maps() and not _broadcasts_to(_shape(v), out_shape):
                raise VerifyException(f"operand #{i} of shape {list(_shape(v))} does not broadcast "
                                      f"to the result shape {list(out_shape)}")

    def _verify_gather(self) -> None:
        if self.op_func_name.data != "identity" or self.consts is not None:
            raise VerifyException(f"indirect_dim needs op func 'identity' without consts, "
                                  f"got '{self.op_func_name.data}'")
        if len(self.inputs) != 2:
            raise VerifyException(f"an indirect identity takes an index and a table, got {len(self.inputs)} operands")
        index, table = self.inputs
        if _element_type(index) != IntegerType(32):
            raise VerifyException(f"index operand #0 must have element type i32, got {_element_type(index)}")
        if _element_type(table) != _element_type(self.result):
            raise VerifyException(f"table operand #1 element type {_element_type(table)} differs from "
                                  f"result element type {_element_type(self.result)}")
        dim, table_shape = self.indirect_dim.value.data, _shape(table)
        if not 0 <= dim < len(table_shape):
            raise VerifyException(f"indirect_dim {dim} is outside the table rank {len(table_shape)}")
        if self.has_explicit_maps():
            maps = self.get_indexing_maps()
            if len(maps) != 3 or len(maps[1].results) != len(table_shape):
                return  # the interface check names the malformed maps
            gathered = maps[1].results[dim]
            if gathered != AffineExpr.constant(0):
                raise VerifyException(f"the table map must hold 0 in the gathered dim {dim}, got {gathered}")
            return
        expected = [*table_shape[:dim], *_shape(index), *table_shape[dim + 1:]]
        if list(_shape(self.result)) != expected:
            raise VerifyException(f"result shape {list(_shape(self.result))} must be {expected}: the table's "
                                  f"dims with dim {dim} replaced by the index's")


@irdl_op_definition
class ReduceOp(ComputeOp):
    """Reduction of ``dims`` of one tensor; the result drops them or keeps them as size 1.

    The iteration space is the kept dims in order, then the reduced dims.
    """

    name = "spyre.reduce"
    op_func_name = prop_def(StringAttr)
    reduce_dims = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure())
    OPERANDS: ClassVar[tuple[str, ...] | None] = ("source",)

    assembly_format = ("$op_func_name ` ` `(` $inputs `)` `dims` $reduce_dims attr-dict "
                       "`:` functional-type($inputs, $result)")

    def __init__(self, op_func: str, source: SSAValue, dims: Sequence[int], result_type: Attribute):
        super().__init__(operands=[[source]], result_types=[result_type], properties={
            "op_func_name": StringAttr(op_func),
            "reduce_dims": DenseArrayBase.from_list(i64, list(dims))})

    def op_func(self) -> OpFunc:
        return _op_func_of_kind(self.op_func_name.data, (OpKind.REDUCTION,))

    def get_reduce_dims(self) -> tuple[int, ...]:
        """The reduced dims of the operand."""
        return tuple(self.reduce_dims.get_values())

    def keeps_dims(self) -> bool:
        """True when reduced dims stay in the result with size 1.

        With explicit maps the operand is storage: a kept dim is a constant
        coordinate of the result map.
        """
        if self.has_explicit_maps():
            return any(isinstance(e, AffineConstantExpr) for e in self.get_indexing_maps()[-1].results)
        return len(_shape(self.result)) == len(_shape(self.inputs[0]))

    def set_indexing(self, space: Sequence[int], maps: Sequence[AffineMap]) -> None:
        """Explicit maps; ``reduce_dims`` becomes the operand dims that reduced iteration dims index."""
        super().set_indexing(space, maps)
        self.properties["reduce_dims"] = DenseArrayBase.from_list(i64, list(self._mapped_reduce_dims()))

    def _mapped_reduce_dims(self) -> tuple[int, ...]:
        """Operand dims whose coordinate uses a reduction iteration dim."""
        reduced = set(self.reduction_dims())
        source = self.get_indexing_maps()[0]
        return tuple(d for d, e in enumerate(source.results) if reduced & _used_dims(e))

    def _kept_dims(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(_shape(self.inputs[0]))) if d not in self.get_reduce_dims())

    def default_iteration_space(self) -> tuple[int, ...]:
        shape = _shape(self.inputs[0])
        return tuple(shape[d] for d in (*self._kept_dims(), *self.get_reduce_dims()))

    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        return _reduce_maps(self._kept_dims(), self.get_reduce_dims(), self.keeps_dims())

    def verify_types(self) -> None:
        self.op_func()
        shape = _shape(self.inputs[0])
        dims = self.get_reduce_dims()
        if not dims:
            raise VerifyException("expects at least one reduced dim")
        if list(dims) != sorted(set(dims)) or dims[0] < 0 or dims[-1] >= len(shape):
            raise VerifyException(f"reduced dims {list(dims)} must be increasing and within "
                                  f"the operand rank {len(shape)}")
        if _element_type(self.inputs[0]) != _element_type(self.result):
            raise VerifyException("operand and result element types differ")
        if self.has_explicit_maps():
            if len(self.get_indexing_maps()) == 2 and dims != self._mapped_reduce_dims():
                raise VerifyException(f"reduced dims {list(dims)} must be the operand dims the reduced "
                                      f"iteration dims index, {list(self._mapped_reduce_dims())}")
            return
        kept = [shape[d] for d in self._kept_dims()]
        keep = [1 if d in dims else s for d, s in enumerate(shape)]
        if list(_shape(self.result)) not in (kept, keep):
            raise VerifyException(f"result shape {list(_shape(self.result))} must be {kept} "
                                  f"or, keeping dims, {keep}")


@irdl_op_definition
class MatmulOp(ComputeOp):
    """(Batched) matrix product ``[..., M, K] @ [..., K, N] -> [..., M, N]``; SDSC ``batchmatmul``.

    Batch dims broadcast; the iteration space is ``(batch..., M, N, K)``.
    """

    name = "spyre.matmul"
    traits = traits_def(Pure())
    OPERANDS: ClassVar[tuple[str, ...] | None] = ("lhs", "rhs")

    assembly_format = "` ` `(` $inputs `)` attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[[lhs, rhs]], result_types=[result_type])

    def op_func(self) -> OpFunc:
        return _op_func_of_kind("batchmatmul", (OpKind.MATMUL,))

    def default_iteration_space(self) -> tuple[int, ...]:
        return (*_shape(self.result), _shape(self.inputs[0])[-1])

    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        return _matmul_maps(_shape(self.inputs[0]), _shape(self.inputs[1]), _shape(self.result))

    def verify_types(self) -> None:
        a, b, c = (_shape(v) for v in (*self.inputs, self.result))
        if not (_element_type(self.inputs[0]) == _element_type(self.inputs[1]) == _element_type(self.result)):
            raise VerifyException("operand and result element types differ")
        if self.has_explicit_maps():
            if len(self.get_indexing_maps()) == 3 and len(self.reduction_dims()) != 1:
                raise VerifyException(f"explicit indexing maps must leave exactly one reduced (K) "
                                      f"iteration dim, got {list(self.reduction_dims())}")
            return
        if len(a) < 2 or len(b) < 2:
            raise VerifyException(f"operands must have rank >= 2, got {list(a)} and {list(b)}")
        if a[-1] != b[-2]:
            raise VerifyException(f"contraction sizes differ: lhs {list(a)} has K = {a[-1]}, "
                                  f"rhs {list(b)} has K = {b[-2]}")
        batch = _broadcast_shapes(a[:-2], b[:-2])
        expected = [*batch, a[-2], b[-1]] if batch is not None else None
        if expected is None or list(c) != expected:
            raise VerifyException(f"result shape {list(c)} does not match {list(a)} @ {list(b)}")


def _broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> list[int] | None:
    rank = max(len(a), len(b))
    a1, b1 = [1] * (rank - len(a)) + list(a), [1] * (rank - len(b)) + list(b)
    if any(x != y and 1 not in (x, y) for x, y in zip(a1, b1)):
        return None
    return [max(x, y) for x, y in zip(a1, b1)]


@irdl_op_definition
class RestickifyOp(ComputeOp):
    """Change of a tensor's stick dimension in HBM; SDSC ``ReStickifyOpHBM``.

    ``spyre.restickify (%x) : (tensor<64x128xf16, #L0>) -> tensor<64x128xf16, #L1>``

    With explicit ``indexing_maps`` it copies a read pattern of its operand (a
    view that cannot be read in place) into a tensor of the view's shape.
    """

    name = "spyre.restickify"
    traits = traits_def(Pure())
    OPERANDS: ClassVar[tuple[str, ...] | None] = ("source",)

    assembly_format = "` ` `(` $inputs `)` attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, source: SSAValue, result_type: Attribute):
        super().__init__(operands=[[source]], result_types=[result_type])

    def op_func(self) -> OpFunc:
        return _op_func_of_kind("ReStickifyOpHBM", (OpKind.DATA_MOVEMENT,))

    def reads_index(self, position: int) -> bool:
        return True  # a copy of indices in another layout

    def default_iteration_space(self) -> tuple[int, ...]:
        return _shape(self.result)

    def default_indexing_maps(self) -> tuple[AffineMap, ...]:
        rank = len(_shape(self.result))
        return AffineMap.identity(rank), AffineMap.identity(rank)

    def verify_types(self) -> None:
        src, dst = self.inputs[0].type, self.result.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        if self.has_explicit_maps():
            # A copy through a read pattern (a materialised view): any shapes.
            if src.get_element_type() != dst.get_element_type():
                raise VerifyException("operand and result element types differ")
            return
        if src.get_shape() != dst.get_shape() or src.get_element_type() != dst.get_element_type():
            raise VerifyException(f"operand type {src} and result type {dst} must differ only in layout")
        if src.encoding == dst.encoding:
            raise VerifyException(f"operand and result have the same layout {src.encoding}; "
                                  "a restickify must change it")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A storage reinterpretation (reshape, permute, expand, slice, select...).

    ``map`` takes result coordinates to source coordinates; no data moves.
    """

    name = "spyre.view"
    source = operand_def(TensorType)
    map = prop_def(AffineMapAttr)
    result = result_def(TensorType)
    dims = opt_prop_def(ArrayAttr[ArrayAttr[StringAttr]])
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$source $map attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, view_map: AffineMap, result_type: Attribute):
        super().__init__(operands=[source], result_types=[result_type],
                         properties={"map": AffineMapAttr(view_map)})

    def verify_(self) -> None:
        _verify_tensor_type(self.source.type, "source")
        _verify_tensor_type(self.result.type, "result")
        if _element_type(self.source) != _element_type(self.result):
            raise VerifyException("source and result element types differ")
        m = self.map.data
        src, out = _shape(self.source), _shape(self.result)
        if m.num_symbols:
            raise VerifyException(f"map {m} must not have symbols")
        if m.num_dims != len(out) or len(m.results) != len(src):
            raise VerifyException(f"map {m} must take {len(out)} result coordinates to "
                                  f"{len(src)} source coordinates")
        bounds = [(0, s - 1) for s in out]
        for d, (expr, size) in enumerate(zip(m.results, src)):
            lo, hi = expr_range(expr, bounds)
            if lo < 0 or hi >= size:
                raise VerifyException(f"map {m} reads source dim {d} at [{lo}, {hi}], "
                                      f"outside its size {size}")
        if self.dims is not None and len(self.dims.data) != len(out):
            raise VerifyException(f"dims has {len(self.dims.data)} entries for a result of rank {len(out)}")


@irdl_op_definition
class FillOp(IRDLOperation):
    """A tensor filled with one value (reduction accumulators, constants).

    ``%z = spyre.fill -inf : tensor<4x64xf16>``
    """

    name = "spyre.fill"
    value = prop_def(FloatAttr)
    result = result_def(TensorType)
    dims = opt_prop_def(ArrayAttr[ArrayAttr[StringAttr]])
    placement = opt_prop_def(PlacementAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, value: float, result_type: Attribute):
        super().__init__(result_types=[result_type], properties={"value": FloatAttr(value, f64)})

    def fill_value(self) -> float:
        """The fill value."""
        return float(self.value.value.data)

    @classmethod
    def parse(cls, parser: Parser) -> FillOp:
        pos = parser.pos
        negative = parser.parse_optional_punctuation("-") is not None
        if parser.parse_optional_keyword("inf") is not None:
            value = math.inf
        elif parser.parse_optional_keyword("nan") is not None:
            value = math.nan
        else:
            number = parser.parse_optional_number()
            if number is None:
                parser.raise_error("expected a number, inf or nan as fill value", pos, parser.pos)
            value = float(number)
        value = -value if negative else value
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        op = cls(value, result_type)
        for key in ("dims", "placement"):
            if key in attrs:
                op.properties[key] = attrs.pop(key)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        value = self.fill_value()
        text = ("-inf" if value < 0 else "inf") if math.isinf(value) else "nan" if math.isnan(value) else repr(value)
        if "e" in text and "." not in text:
            text = text.replace("e", ".0e")  # 1e+20 is not an MLIR float literal; 1.0e+20 is
        printer.print_string(f" {text}")
        printer.print_op_attributes({**self.properties, **self.attributes}, reserved_attr_names=("value",))
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        _verify_tensor_type(self.result.type, "result")
        if self.value.type != f64:
            raise VerifyException(f"fill value must be an f64 attribute, got {self.value.type}")
        if self.dims is not None and len(self.dims.data) != len(_shape(self.result)):
            raise VerifyException(f"dims has {len(self.dims.data)} entries for a result of rank "
                                  f"{len(_shape(self.result))}")


Spyre = Dialect(
    "spyre",
    [PointwiseOp, ReduceOp, MatmulOp, RestickifyOp, ViewOp, FillOp],
    [LayoutAttr, HintAttr, PlacementAttr, TargetAttr],
)
