# The attributes of the `spyre` dialect: `#spyre.layout` (a tensor type's
# encoding), `#spyre.hint` (a spyre_hint scope), `#spyre.placement` (where a
# value lives), `#spyre.target` (the module's machine), and the names of the
# attributes that hold them.  Reads and prints their text; reads the data
# formats and the target's limits (spyre_mlir.hardware, spyre_mlir.limits);
# writes the module attribute `spyre.target` (attach_target).
"""Attributes of the ``spyre`` dialect, their parsers, printers and verifiers."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatData,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import FORMAT_BYTES, SpyreConfig
from spyre_mlir.layout import StickLayout
from spyre_mlir.limits import ALIGNMENT


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


RANGE_ATTR = "spyre.range"
"""The argument attribute ``array<i64: 0, N>`` of an integer input: it takes the values ``[0, N)``
(the import tabulated what the program computes from it over them).  Lowering carries it to the
kernel argument (the manifest's ``range``); the runtime refuses a value outside."""

HOST_DTYPE_ATTR = "spyre.host_dtype"
"""The argument attribute ``"int64"`` (or ``"bool"``, ...) of a float input that holds an integer or
bool host tensor as 0/1 flags (an attention mask; Spyre has no integer arithmetic): lowering carries
it to the kernel argument (the manifest's ``host_dtype``); the runtime converts the host tensor when
staging it, and refuses values outside its ``spyre.range``."""


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
