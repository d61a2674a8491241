# The `sdscbundle` dialect: what the Spyre back end consumes in bundle.mlir.
# Reads and prints the back end's spelling
# (test/data/reference/bundle_add_mul_nested); writes nothing.
"""The ``sdscbundle`` dialect.

::

    func.func @sdsc_bundle(%arg_0_base_addr: !sdscbundle.input_arg<index>) {
      %arg_0 = sdscbundle.input_arg_extract value from %arg_0_base_addr : !sdscbundle.input_arg<index> -> index
      sdscbundle.sdsc_execute (%arg_0) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1]}
    }

``sdsc_execute`` runs one SDSC JSON file; operand ``i`` supplies the value of
the symbol ``symbol_ids[i]`` (a negative id) used in that file's start addresses.
Its operands are untyped in the text: they are always ``index``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IndexType, IntAttr, IntegerAttr, NoneAttr, StringAttr, i64
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


@irdl_attr_definition
class InputArgType(ParametrizedAttribute, TypeAttribute):
    """A bundle argument: ``!sdscbundle.input_arg<index>``.

    A symbolic value may carry ``granularity`` (it is a multiple of it) and
    ``max_value``: ``!sdscbundle.input_arg<index, granularity = 64, max_value = 512>``.
    """

    name = "sdscbundle.input_arg"
    elem: Attribute
    granularity: IntAttr | NoneAttr
    max_value: IntAttr | NoneAttr

    def __init__(self, granularity: int | None = None, max_value: int | None = None):
        def opt(v: int | None) -> IntAttr | NoneAttr:
            return NoneAttr() if v is None else IntAttr(v)

        super().__init__(IndexType(), opt(granularity), opt(max_value))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        found: dict[str, IntAttr | NoneAttr] = {"granularity": NoneAttr(), "max_value": NoneAttr()}
        start = parser.pos
        with parser.in_angle_brackets():
            elem = parser.parse_type()
            while parser.parse_optional_punctuation(",") is not None:
                pos = parser.pos
                key = parser.parse_keyword_in(("granularity", "max_value"))
                if not isinstance(found[key], NoneAttr):
                    parser.raise_error(f"duplicate '{key}' in !sdscbundle.input_arg", pos, parser.pos)
                parser.parse_punctuation("=")
                found[key] = IntAttr(parser.parse_integer(allow_negative=False))
        params = (elem, found["granularity"], found["max_value"])
        try:  # verify here so that an error points at the type, not at the op using it
            cls.new(params)
        except VerifyException as e:
            parser.raise_error(str(e), start, parser.pos)
        return params

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.elem)
            for key, value in (("granularity", self.granularity), ("max_value", self.max_value)):
                if isinstance(value, IntAttr):
                    printer.print_string(f", {key} = {value.data}")

    def verify(self) -> None:
        if not isinstance(self.elem, IndexType):
            raise VerifyException(f"!sdscbundle.input_arg holds index values, got {self.elem}")
        if isinstance(self.granularity, IntAttr) and self.granularity.data <= 0:
            raise VerifyException("!sdscbundle.input_arg: granularity must be positive")
        if isinstance(self.granularity, IntAttr) and isinstance(self.max_value, IntAttr):
            if self.max_value.data % self.granularity.data:
                raise VerifyException(
                    f"!sdscbundle.input_arg: max_value {self.max_value.data} is not a multiple of "
                    f"granularity {self.granularity.data}")


@irdl_op_definition
class InputArgExtractOp(IRDLOperation):
    """The index value of a bundle argument."""

    name = "sdscbundle.input_arg_extract"
    arg = operand_def(InputArgType)
    result = result_def(IndexType)
    traits = traits_def(Pure())

    assembly_format = "`value` `from` $arg attr-dict `:` type($arg) `->` type($result)"

    def __init__(self, arg: SSAValue):
        super().__init__(operands=[arg], result_types=[IndexType()])


@functools.lru_cache(maxsize=4096)
def i64_attr(value: int) -> IntegerAttr:
    """``IntegerAttr(value, i64)``, shared: a bundle repeats the same few integers (symbol ids,
    the integers of its op specs), and building one verifies it."""
    return IntegerAttr(value, i64)


@irdl_op_definition
class SdscExecuteOp(IRDLOperation):
    """Run one SDSC JSON file with its symbols bound to the operands.

    Reads both the standard spelling, ``{sdsc_filename = "sdsc_0.json", symbol_ids = [-1]}``,
    and the back end's, ``{sdsc_filename="sdsc_0.json", "symbol_ids"=[-1]}``.
    """

    name = "sdscbundle.sdsc_execute"
    args = var_operand_def(IndexType)
    sdsc_filename = prop_def(StringAttr)
    symbol_ids = prop_def(ArrayAttr[IntegerAttr])

    def __init__(self, args: Sequence[SSAValue], sdsc_filename: str, symbol_ids: Sequence[int],
                 attributes: dict[str, Attribute] | None = None):
        super().__init__(operands=[args], attributes=attributes, properties={
            "sdsc_filename": StringAttr(sdsc_filename),
            "symbol_ids": ArrayAttr(i64_attr(i) for i in symbol_ids)})

    def get_symbol_ids(self) -> tuple[int, ...]:
        """The symbol id each operand binds, in operand order."""
        return tuple(a.value.data for a in self.symbol_ids.data)

    @classmethod
    def parse(cls, parser: Parser) -> SdscExecuteOp:
        operands_pos = parser.pos
        unresolved = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        args = [parser.resolve_operand(u, IndexType()) for u in unresolved]
        pos = parser.pos
        attrs = dict(parser.parse_optional_attr_dict())
        if not attrs:  # point at this op, not at the next token
            pos = operands_pos
        for key in ("sdsc_filename", "symbol_ids"):
            if key not in attrs:
                parser.raise_error(f"sdscbundle.sdsc_execute expects a '{key}' attribute", pos, parser.pos)
        if not isinstance(attrs["sdsc_filename"], StringAttr):
            parser.raise_error(f"sdscbundle.sdsc_execute expects 'sdsc_filename' to be a string, "
                               f"got {attrs['sdsc_filename']}", pos, parser.pos)
        ids = attrs["symbol_ids"]
        if not isinstance(ids, ArrayAttr) or not all(isinstance(i, IntegerAttr) for i in ids.data):
            parser.raise_error(f"sdscbundle.sdsc_execute expects 'symbol_ids' to be an array of integers, "
                               f"got {ids}", pos, parser.pos)
        props = {"sdsc_filename": attrs.pop("sdsc_filename"), "symbol_ids": attrs.pop("symbol_ids")}
        return cls.create(operands=args, attributes=attrs, properties=props)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        with printer.in_parens():
            printer.print_list(self.args, printer.print_operand)
        printer.print_string(" {sdsc_filename = ")
        printer.print_string_literal(self.sdsc_filename.data)
        printer.print_string(", symbol_ids = [")
        printer.print_list(self.get_symbol_ids(), printer.print_int)
        printer.print_string("]")
        for key, value in self.attributes.items():
            printer.print_string(", ")
            printer.print_identifier_or_string_literal(key)
            printer.print_string(" = ")
            printer.print_attribute(value)
        printer.print_string("}")

    def verify_(self) -> None:
        ids = self.get_symbol_ids()
        if len(ids) != len(self.args):
            raise VerifyException(f"expects one symbol id per operand, got {len(ids)} ids for "
                                  f"{len(self.args)} operands")
        if any(i >= 0 for i in ids):
            raise VerifyException(f"symbol ids must be negative, got {[i for i in ids if i >= 0][0]}")
        if len(set(ids)) != len(ids):
            twice = next(i for i in ids if ids.count(i) > 1)
            raise VerifyException(f"symbol id {twice} is bound more than once")
        if not self.sdsc_filename.data:
            raise VerifyException("sdsc_filename must not be empty")


SdscBundle = Dialect("sdscbundle", [InputArgExtractOp, SdscExecuteOp], [InputArgType])
