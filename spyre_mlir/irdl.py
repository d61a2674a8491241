# IRDL of our dialects for upstream MLIR.  Reads the xDSL definitions of the
# `spyre` and `sdscbundle` dialects (dialects/spyre/, dialects/sdscbundle.py);
# writes one IRDL module that `mlir-opt --irdl-file=FILE` loads, and prints IR in
# the form such an mlir-opt reads (`spyre-opt -t upstream-mlir`).
"""IRDL of the ``spyre`` and ``sdscbundle`` dialects, generated from their xDSL definitions.

::

    spyre-opt --emit-irdl > spyre.irdl.mlir
    spyre-opt in.mlir -t upstream-mlir | mlir-opt --irdl-file=spyre.irdl.mlir

xDSL's ``pyrdl_to_irdl`` writes ``irdl.any`` for every constraint and drops
properties; this module translates each constraint instead:

- ``AnyAttr`` -> ``irdl.any``; ``EqAttrConstraint`` -> ``irdl.is``; ``AnyOf`` -> ``irdl.any_of``;
- ``BaseAttr`` of a builtin -> ``irdl.base "#builtin.NAME"`` (``"!builtin.NAME"`` for a type);
  of one of our attributes -> ``irdl.base @dialect::@name``;
- ``ParamAttrConstraint`` of one of our attributes -> ``irdl.parametric``;
- our attributes and types -> ``irdl.attribute`` / ``irdl.type`` with their parameters;
- required properties -> ``irdl.attributes`` (upstream has no properties for IRDL ops: they
  are given as attributes, which ``-t upstream-mlir`` does).

What IRDL (MLIR 22) cannot express, and what the IRDL checks instead:

- every ``verify_`` / ``verify`` method (op funcs, shapes, indexing maps, layout
  permutations, positive counts, symbol ids...): unchecked upstream;
- optional properties: ``irdl.attributes`` are all required, so optional properties
  are left out and upstream accepts any value for them;
- element constraints of arrays (``ArrayAttr[IntAttr]``, ``ArrayAttr[HintAttr]``) and
  the element type of a dense array: only the base (``#builtin.array``,
  ``#builtin.dense_array``) is checked;
- a constraint variable binds once per op, so all values of a variadic operand
  must have the same type.  A compute op of a declared operand count
  (``ComputeOp.OPERANDS``: ``spyre.matmul``'s ``lhs``, ``rhs``; ``spyre.reduce``'s and
  ``spyre.restickify``'s ``source``) gets one single operand per name, each its own
  variable; ``spyre.pointwise``, whose tensor operand count depends on its constants,
  keeps an ``irdl.any`` variadic, and upstream rejects one whose operands differ in
  type (a broadcasting or indirect pointwise).  A variadic whose constraint admits
  one attribute (``sdscbundle.sdsc_execute``'s ``index`` operands) is exact.

Upstream reads an IRDL attribute in its parameter form only:
``#spyre.layout<[2, 64, 64], [0, 1], "SEN169_FP16">``, ``!sdscbundle.input_arg<index, none, none>``;
xDSL's ``IntAttr`` / ``FloatData`` parameters are printed as builtin integers / floats.
spyre-opt does not read that form back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    ArrayOfConstraint,
    DenseArrayBase,
    FloatData,
    IntAttr,
    ModuleOp,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.dialects.irdl import (
    AnyOfOp,
    AnyOp,
    AttributeOp,
    AttributesOp,
    BaseOp,
    DialectOp,
    IsOp,
    OperandsOp,
    OperationOp,
    ParametersOp,
    ParametricOp,
    ResultsOp,
    TypeOp,
    VariadicityArrayAttr,
    VariadicityAttr,
)
from xdsl.ir import Attribute, Block, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    AnyOf,
    AttrConstraint,
    BaseAttr,
    EqAttrConstraint,
    IRDLOperation,
    OperandDef,
    OptionalDef,
    ParamAttrConstraint,
    PropertyDef,
    RangeConstraint,
    RangeLengthConstraint,
    RangeOf,
    VariadicDef,
)
from xdsl.printer import Printer
from xdsl.utils.target import Target

from spyre_mlir.dialects.sdscbundle import SdscBundle
from spyre_mlir.dialects.spyre import ComputeOp, Spyre

DIALECTS: tuple[Dialect, ...] = (Spyre, SdscBundle)
"""The dialects the IRDL module defines."""

_UPSTREAM_BASE_NAMES: dict[type[Attribute], str] = {
    DenseArrayBase: "#builtin.dense_array",  # xDSL calls it "array", like ArrayAttr
    IntAttr: "#builtin.integer",  # printed upstream as an integer attribute
    NoneAttr: "!builtin.none",  # printed `none`, which upstream reads as the none type
    FloatData: "#builtin.float",  # printed upstream as a float attribute
}


def _our_attribute(cls: type[Attribute]) -> bool:
    return any(cls in d.attributes for d in DIALECTS)


def _symbol(cls: type[Attribute]) -> SymbolRefAttr:
    dialect, name = Dialect.split_name(cls.name)
    return SymbolRefAttr(dialect, [name])


def _base_name(cls: type[Attribute]) -> str:
    """The upstream name of a builtin attribute class, as ``irdl.base`` spells it."""
    if cls in _UPSTREAM_BASE_NAMES:
        return _UPSTREAM_BASE_NAMES[cls]
    sigil = "!" if issubclass(cls, TypeAttribute) else "#"
    return f"{sigil}builtin.{cls.name}"


def constraint_to_irdl(builder: Builder, constr: AttrConstraint) -> SSAValue:
    """A fresh IRDL constraint value for ``constr`` (IRDL binds each value once per op).

    Falls back to the loosest constraint IRDL can check: the base of a
    parametrized builtin, ``irdl.any`` otherwise.
    """
    if isinstance(constr, EqAttrConstraint):
        return builder.insert(IsOp(constr.attr)).output
    if isinstance(constr, BaseAttr):
        base = _symbol(constr.attr) if _our_attribute(constr.attr) else _base_name(constr.attr)
        return builder.insert(BaseOp(base)).output
    if isinstance(constr, AnyOf):
        return builder.insert(AnyOfOp([constraint_to_irdl(builder, c) for c in constr.attr_constrs])).output
    if isinstance(constr, ParamAttrConstraint) and _our_attribute(constr.base_attr):
        params = [constraint_to_irdl(builder, c or AnyAttr()) for c in constr.param_constrs]
        return builder.insert(ParametricOp(_symbol(constr.base_attr), params)).output
    if isinstance(constr, ParamAttrConstraint) and constr.base_attr is not None:
        return builder.insert(BaseOp(_base_name(constr.base_attr))).output
    if isinstance(constr, ArrayOfConstraint):
        return builder.insert(BaseOp(_base_name(ArrayAttr))).output
    return builder.insert(AnyOp()).output


def _element_constraint(constr: RangeConstraint) -> AttrConstraint:
    """The constraint on each value of an operand or result definition."""
    if isinstance(constr, RangeLengthConstraint):
        constr = constr.constraint
    return constr.constr if isinstance(constr, RangeOf) else AnyAttr()


def _admits_one_attribute(constr: AttrConstraint) -> bool:
    """True when ``constr`` holds for one attribute only (all values of a variadic are then equal)."""
    if isinstance(constr, EqAttrConstraint):
        return True
    return isinstance(constr, BaseAttr) and issubclass(constr.attr, ParametrizedAttribute) \
        and not constr.attr.get_irdl_definition().parameters


def _value_definitions(builder: Builder, defs, op_cls: Callable[..., IRDLOperation]) -> None:
    """``irdl.operands`` / ``irdl.results`` of an op's operand or result definitions."""
    values, variadicities, names = [], [], []
    for name, value_def in defs:
        element = _element_constraint(value_def.constr)
        if isinstance(value_def, VariadicDef) and not isinstance(value_def, OptionalDef) \
                and not _admits_one_attribute(element):
            element = AnyAttr()  # one binding for all values: see the module docstring
        values.append(constraint_to_irdl(builder, element))
        variadicities.append(VariadicityAttr.OPTIONAL if isinstance(value_def, OptionalDef)
                             else VariadicityAttr.VARIADIC if isinstance(value_def, VariadicDef)
                             else VariadicityAttr.SINGLE)
        names.append(StringAttr(name))
    if values:
        builder.insert(op_cls(values, VariadicityArrayAttr(ArrayAttr(variadicities)), ArrayAttr(names)))


def _operand_definitions(op: type[IRDLOperation]) -> list:
    """The operand definitions of ``op``; a compute op's variadic ``inputs`` of a declared fixed
    count (``ComputeOp.OPERANDS``) become one single operand per name, each its own variable."""
    op_def = op.get_irdl_definition()
    names = op.OPERANDS if issubclass(op, ComputeOp) else None
    if names is None:
        return list(op_def.operands)
    ((_, inputs),) = op_def.operands
    return [(name, OperandDef(_element_constraint(inputs.constr))) for name in names]


def op_to_irdl(op: type[IRDLOperation]) -> OperationOp:
    """The ``irdl.operation`` of an op: its operands, results and required properties."""
    op_def = op.get_irdl_definition()
    builder = Builder(InsertPoint.at_end(block := Block()))
    _value_definitions(builder, _operand_definitions(op), OperandsOp)
    _value_definitions(builder, op_def.results, ResultsOp)
    required = {name: constraint_to_irdl(builder, prop.constr) for name, prop in op_def.properties.items()
                if isinstance(prop, PropertyDef) and not isinstance(prop, OptionalDef)}
    if required:
        builder.insert(AttributesOp.get(required))
    return OperationOp(Dialect.split_name(op_def.name)[1], Region([block]))


def attribute_to_irdl(attr: type[ParametrizedAttribute]) -> AttributeOp | TypeOp:
    """The ``irdl.attribute`` (``irdl.type`` for a type) of one of our attributes, with its parameters."""
    attr_def = attr.get_irdl_definition()
    builder = Builder(InsertPoint.at_end(block := Block()))
    params = [constraint_to_irdl(builder, p.constr) for _, p in attr_def.parameters]
    builder.insert(ParametersOp(params, ArrayAttr(StringAttr(name) for name, _ in attr_def.parameters)))
    definition = TypeOp if issubclass(attr, TypeAttribute) else AttributeOp
    return definition(Dialect.split_name(attr_def.name)[1], Region([block]))


def dialect_to_irdl(dialect: Dialect) -> DialectOp:
    """The ``irdl.dialect`` of one of our dialects."""
    body = [*(attribute_to_irdl(a) for a in dialect.attributes), *(op_to_irdl(o) for o in dialect.operations)]
    return DialectOp(dialect.name, Region([Block(body)]))


def irdl_module() -> ModuleOp:
    """One module holding the IRDL of every dialect in :data:`DIALECTS`."""
    return ModuleOp([dialect_to_irdl(d) for d in DIALECTS])


class UpstreamPrinter(Printer):
    """Generic op form, properties as attributes, our attributes in IRDL parameter form."""

    def __init__(self, stream: IO[str]):
        super().__init__(stream=stream, print_generic_format=True, print_properties_as_attributes=True)

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, IntAttr):
            self.print_int(attribute.data)
        elif isinstance(attribute, FloatData):
            self.print_string(f"{attribute.data!r} : f64")
        elif isinstance(attribute, ParametrizedAttribute) and _our_attribute(type(attribute)):
            self.print_string(("!" if isinstance(attribute, TypeAttribute) else "#") + attribute.name)
            self.print_paramattr_parameters(attribute.parameters)
        else:
            super().print_attribute(attribute)


@dataclass(frozen=True)
class UpstreamMLIRTarget(Target):
    """``spyre-opt -t upstream-mlir``: the module as ``mlir-opt --irdl-file`` of :func:`irdl_module` reads it."""

    name = "upstream-mlir"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        UpstreamPrinter(output).print_op(module)
        output.write("\n")
