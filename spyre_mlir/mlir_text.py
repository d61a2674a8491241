# MLIR text in and out: the context with every dialect the toolchain uses, a
# parser that records op locations and names undefined values where they are
# used, located verification, and printing.  Reads .mlir text; writes text.
"""Parsing, verifying and printing MLIR text with located diagnostics."""

from __future__ import annotations

import bisect
import re
from typing import Any

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import AnyFloat, FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.mlir_lexer import MLIRTokenKind
from xdsl.utils.exceptions import ParseError, VerifyException

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.sdscbundle import SdscBundle
from spyre_mlir.dialects.spyre import Spyre

UPSTREAM_DIALECTS = ("builtin", "func", "arith", "scf", "affine", "tensor", "memref", "cf")


def make_context() -> Context:
    """A context with the upstream dialects we use plus ``spyre`` and ``sdscbundle``."""
    ctx = Context()
    upstream = get_all_dialects()
    for name in UPSTREAM_DIALECTS:
        ctx.register_dialect(name, upstream[name])
    ctx.register_dialect("spyre", lambda: Spyre)
    ctx.register_dialect("sdscbundle", lambda: SdscBundle)
    return ctx


class _BitsElement(Parser._TensorLiteralElement):
    """A hexadecimal element of a dense literal: in a float dense, the bits of the float (as MLIR
    reads it, and as xDSL prints inf and nan), not the integer they spell."""

    def to_type(self, parser: Parser, type: Any) -> Any:
        if isinstance(type, AnyFloat) and isinstance(self.value, int):
            return next(type.iter_unpack(self.value.to_bytes(type.compile_time_size, "little")))
        return super().to_type(parser, type)


class LocatingParser(Parser):
    """A parser that gives every parsed op a ``file:line:col`` location.

    Explicit ``loc(...)`` annotations win.  ``line_offset`` shifts line numbers
    for chunks of a ``--split-input-file`` input.  A hexadecimal element of a float
    dense literal is the float's bits (xDSL 0.74 reads it as an integer, so a -inf
    it printed as ``0xff800000`` came back as 4286578688).
    """

    def __init__(self, ctx: Context, text: str | bytes, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        newline = b"\n" if isinstance(text, bytes) else "\n"
        self._newlines = [m.start() for m in re.finditer(re.escape(newline), text)]
        self._file = StringAttr(name)
        self._line_offset = line_offset

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])  # an empty input is an empty module, as in mlir-opt
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as e:
            undefined = self._first_undefined_use()
            if e.msg.startswith("values used but not defined") and undefined is not None:
                name, op = undefined
                raise SpyreError(f"use of undefined value '%{name}'", op=op) from None
            if e.msg == "Could not parse entire input!":
                self.raise_error(f"expected an operation, found '{self._current_token.text}'")
            raise

    def _first_undefined_use(self) -> tuple[str, Operation] | None:
        for name, refs in self.forward_ssa_references.items():
            for value in refs.values():
                for use in value.uses:
                    return name, use.operation
        return None

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        bits = self._current_token.text[:2] in ("0x", "0X")
        element = super()._parse_tensor_literal_element()
        return _BitsElement(element.is_negative, element.value, element.span) if bits else element

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        try:
            op = super().parse_operation()
        except VerifyException as e:
            self.raise_error(str(e), start, self.pos)
        except NotImplementedError as e:  # xDSL's semi-affine expressions, for one
            self.raise_error(f"unsupported syntax: {e}", start, self.pos)
        if isinstance(op.location, UnknownLoc):
            line = bisect.bisect_right(self._newlines, start - 1)
            column = start - (self._newlines[line - 1] + 1 if line else 0) + 1
            op.location = FileLineColLoc(self._file, IntAttr(line + 1 + self._line_offset), IntAttr(column))
        return op


def parse_module(ctx: Context, text: str | bytes, name: str, line_offset: int = 0) -> ModuleOp:
    """Parse and verify one module; failures (text that is not UTF-8 included) are one located :class:`SpyreError`."""
    if isinstance(text, bytes):
        try:
            text = text.decode()
        except UnicodeDecodeError as e:
            raise SpyreError(f"not UTF-8 text: {e.reason} at byte {e.start}", loc=name) from None
    try:
        module = LocatingParser(ctx, text, name, line_offset).parse_module()
    except ParseError as e:
        loc = e.span.get_location()
        message = e.msg.replace("{first_char}", e.span.text[:1])  # xDSL 0.74's lexer leaves it uninterpolated
        raise SpyreError(message, loc=f"{loc.file}:{loc.line + line_offset}:{loc.col}") from None
    verify_located(module)
    return module


def verify_located(module: Operation) -> None:
    """Verify ``module``; raise a :class:`SpyreError` at the innermost failing op."""
    try:
        module.verify()
        return
    except VerifyException as top:
        for op in module.walk(region_first=True):
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as e:
                raise SpyreError(f"'{op.name}' op {e}", op=op) from None
        raise SpyreError(str(top), op=module) from None
