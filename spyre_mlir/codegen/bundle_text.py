# bundle.mlir text: the lowered @sdsc_bundle in the Spyre back end's spelling
# (test/data/reference/bundle_add_mul_nested/bundle.mlir), and the "mixed" form for
# upstream mlir-opt (our ops generic, upstream ops custom).  Reads a module
# holding func.func @sdsc_bundle; writes text.
"""Printing the bundle.

:func:`print_bundle` writes the back end's spelling: tab indentation, affine
maps as ``#map_<k>`` aliases at module level (deduplicated, in first-use order),
``sdsc_filename="..."``, ``"symbol_ids"=[...]``, bare ``return``, and value names
derived from each value's role (``%arg_0_base_addr``, ``%arg_0``, ``%c0``,
``%loop_bound_0``, ``%arg_0_core_offset_2048``, ``%arg_0_core_2048``, ``%i_0``,
``%addr_0``).  Attributes other than ``sdsc_filename`` / ``symbol_ids`` are not
printed.  :func:`print_mixed` prints any module for upstream ``mlir-opt``.
"""

from __future__ import annotations

import io

from xdsl.dialects import affine, arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap, AffineSymExpr
from xdsl.printer import Printer

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.sdscbundle import InputArgExtractOp, SdscExecuteOp


def _expr(e: AffineExpr) -> str:
    """An affine expression as the back end spells it (``s0 + 65536*d0``)."""
    if isinstance(e, AffineDimExpr):
        return f"d{e.position}"
    if isinstance(e, AffineSymExpr):
        return f"s{e.position}"
    if isinstance(e, AffineConstantExpr):
        return str(e.value)
    assert isinstance(e, AffineBinaryOpExpr)
    if e.kind is AffineBinaryOpKind.Add:
        return f"{_expr(e.lhs)} + {_expr(e.rhs)}"
    if e.kind is AffineBinaryOpKind.Mul:
        if isinstance(e.rhs, AffineConstantExpr):
            return f"{e.rhs.value}*{_atom(e.lhs)}"
        return f"{_atom(e.lhs)}*{_atom(e.rhs)}"
    op = {AffineBinaryOpKind.FloorDiv: "floordiv", AffineBinaryOpKind.CeilDiv: "ceildiv",
          AffineBinaryOpKind.Mod: "mod"}[e.kind]
    return f"{_atom(e.lhs)} {op} {_atom(e.rhs)}"


def _atom(e: AffineExpr) -> str:
    text = _expr(e)
    return text if isinstance(e, (AffineDimExpr, AffineSymExpr, AffineConstantExpr)) else f"({text})"


def map_text(m: AffineMap) -> str:
    """``affine_map<(d0, d1)[s0] -> (s0 + 65536*d0 + 2097152*d1)>``."""
    dims = ", ".join(f"d{i}" for i in range(m.num_dims))
    syms = f"[{', '.join(f's{i}' for i in range(m.num_symbols))}]" if m.num_symbols else ""
    return f"affine_map<({dims}){syms} -> ({', '.join(_expr(r) for r in m.results)})>"


class _Names:
    """Role-derived value names, unique within the function."""

    def __init__(self) -> None:
        self.names: dict[SSAValue, str] = {}
        self.taken: set[str] = set()
        self.counters: dict[str, int] = {}

    def add(self, value: SSAValue, name: str) -> None:
        base, n = name, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        self.names[value] = name

    def counted(self, value: SSAValue, prefix: str) -> None:
        n = self.counters.get(prefix, 0)
        self.counters[prefix] = n + 1
        self.add(value, f"{prefix}_{n}")

    def __getitem__(self, value: SSAValue) -> str:
        return "%" + self.names[value]


def _name_values(bundle: func.FuncOp) -> _Names:
    names = _Names()
    for i, arg in enumerate(bundle.body.block.args):
        names.add(arg, f"arg_{i}_base_addr")
    for op in bundle.walk():
        if isinstance(op, InputArgExtractOp):
            assert isinstance(op.arg, BlockArgument)
            names.add(op.result, f"arg_{op.arg.index}")
        elif isinstance(op, arith.AddiOp) and op.lhs in names.names and isinstance(op.rhs.owner, arith.ConstantOp):
            const = op.rhs.owner
            value = const.value.value.data if isinstance(const.value, IntegerAttr) else 0
            base = names.names[op.lhs]
            names.add(const.result, f"{base}_core_offset_{value}")
            names.add(op.result, f"{base}_core_{value}")
        elif isinstance(op, scf.ForOp):
            names.counted(op.body.block.args[0], "i")
            if op.ub not in names.names and isinstance(op.ub.owner, arith.ConstantOp):
                names.counted(op.ub, "loop_bound")
        elif isinstance(op, affine.ApplyOp):
            names.counted(op.result, "addr")
    for op in bundle.walk():
        if isinstance(op, arith.ConstantOp) and op.result not in names.names:
            value = op.value.value.data if isinstance(op.value, IntegerAttr) else "st"
            names.add(op.result, f"c{value}")
    return names


class _BundlePrinter:
    def __init__(self, bundle: func.FuncOp):
        self.bundle = bundle
        self.names = _name_values(bundle)
        self.maps: dict[AffineMap, str] = {}
        self.out = io.StringIO()

    def line(self, depth: int, text: str) -> None:
        self.out.write("\t" * depth + text + "\n")

    def block(self, block: Block, depth: int) -> None:
        for op in block.ops:
            self.op(op, depth)

    def op(self, op: Operation, depth: int) -> None:
        n = self.names
        if isinstance(op, InputArgExtractOp):
            self.line(depth, f"{n[op.result]} = sdscbundle.input_arg_extract value from {n[op.arg]} : "
                             "!sdscbundle.input_arg<index> -> index")
        elif isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            self.line(depth, f"{n[op.result]} = arith.constant {op.value.value.data} : index")
        elif isinstance(op, arith.AddiOp):
            self.line(depth, f"{n[op.result]} = arith.addi {n[op.lhs]}, {n[op.rhs]} : index")
        elif isinstance(op, affine.ApplyOp):
            m = op.map.data
            alias = self.maps.setdefault(m, f"#map_{len(self.maps)}")
            dims = ", ".join(n[v] for v in op.mapOperands[:m.num_dims])
            syms = ", ".join(n[v] for v in op.mapOperands[m.num_dims:])
            self.line(depth, f"{n[op.result]} = affine.apply {alias}({dims})" + (f"[{syms}]" if syms else ""))
        elif isinstance(op, scf.ForOp) and not op.iter_args:
            iv = op.body.block.args[0]
            self.line(depth, f"scf.for {n[iv]} = {n[op.lb]} to {n[op.ub]} step {n[op.step]} {{")
            for inner in op.body.block.ops:
                if not isinstance(inner, scf.YieldOp):
                    self.op(inner, depth + 1)
            self.line(depth, "}")
        elif isinstance(op, SdscExecuteOp):
            args = ", ".join(n[v] for v in op.args)
            ids = ", ".join(str(i) for i in op.get_symbol_ids())
            self.line(depth, f"sdscbundle.sdsc_execute ({args}) {{sdsc_filename=\"{op.sdsc_filename.data}\", "
                             f"\"symbol_ids\"=[{ids}]}}")
        elif isinstance(op, func.ReturnOp) and not op.arguments:
            self.line(depth, "return")
        else:
            raise SpyreError(f"'{op.name}' has no bundle.mlir spelling", op=op)

    def text(self) -> str:
        args = ", ".join(f"{self.names[a]}: !sdscbundle.input_arg<index>" for a in self.bundle.body.block.args)
        self.line(1, f"func.func @{self.bundle.sym_name.data}({args}) {{")
        self.block(self.bundle.body.block, 2)
        self.line(1, "}")
        body = self.out.getvalue()
        aliases = "".join(f"{alias} = {map_text(m)}\n" for m, alias in self.maps.items())
        return f"{aliases}module {{\n{body}}}\n"


def bundle_func(module: ModuleOp) -> func.FuncOp:
    """The module's ``func.func @sdsc_bundle``."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "sdsc_bundle":
            return op
    raise SpyreError("no func.func @sdsc_bundle: run spyre-lower-to-bundle first", op=module)


def print_bundle(module: ModuleOp) -> str:
    """``bundle.mlir`` text of the module's ``@sdsc_bundle``, in the back end's spelling."""
    return _BundlePrinter(bundle_func(module)).text()


class MixedPrinter(Printer):
    """Prints ``spyre`` / ``sdscbundle`` ops generically and upstream ops in custom form."""

    def print_op(self, op: Operation) -> None:
        if op.dialect_name() in ("spyre", "sdscbundle") and not self.print_generic_format:
            self.print_generic_format = True
            try:
                super().print_op(op)
            finally:
                self.print_generic_format = False
        else:
            super().print_op(op)


def print_mixed(module: Operation) -> str:
    """``module`` as text upstream ``mlir-opt`` parses."""
    out = io.StringIO()
    MixedPrinter(stream=out).print_op(module)
    out.write("\n")
    return out.getvalue()
