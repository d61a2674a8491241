# Step 2 of spyre-stickify: the stick dim of a value, chosen among those an op's
# rule allows by the bytes of restickify copies it costs its operands and its
# readers.  Reads the plan, each compute op's reads of storage and the known
# readers of each value; writes no IR.
"""Choosing stick dims (step 2 of :mod:`spyre_mlir.passes.stickify`).

A :class:`Chooser` prices a candidate stick dim of a value by the bytes its
operands' restickifies would copy (:meth:`Chooser.operand_bytes`) plus those its
known readers would need (:meth:`Chooser.reader_demands`, two readers deep), and
keeps an op off a driver that would read an operand mid-stick
(:meth:`Chooser.aligned`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from spyre_mlir.analysis.assembly import assembled_by, assembly_filled_by
from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.views import Read, op_reads
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.opfuncs import OpKind
from spyre_mlir.passes.stickify.drivers import BROADCAST, dims_driven_by, fits, splits_stick, stick_driver
from spyre_mlir.passes.stickify.plan import (
    Plan,
    followers,
    host_bytes,
    value_layout,
    value_shape,
    whole_stick_dims,
)
from spyre_mlir.passes.stickify.rules import OpRule, matmul_dims, op_rule


@dataclass
class Chooser:
    """Prices and chooses stick dims against ``plan`` and the known ``readers`` of each value."""

    plan: Plan
    readers: dict[SSAValue, list[tuple[ComputeOp, int]]]
    """The compute ops reading each storage, with the operand index."""

    def reader_demands(self, value: SSAValue, through_index: bool = True) -> list[tuple[tuple[Linear, ...], int]]:
        """How each known reader of ``value`` that needs a driver reads it, and that driver
        (:meth:`reader_requirement`); without ``through_index``, leaving out the indirect accesses
        that address ``value`` as their table (they follow its layout)."""
        demands = []
        for reader, index in self.readers.get(value, []):
            indirect = reader.indirect_access()
            if not through_index and indirect is not None and index == indirect.table:
                continue
            _, reads, result = op_reads(reader)
            if index >= len(reads) or reads[index].storage is not value:
                continue
            required = self.reader_requirement(reader, index, reads, result)
            if required is not None:
                demands.append((reads[index].coords, required))
        return demands

    def demand_bytes(self, value: SSAValue, stick: int, demands: list[tuple[tuple[Linear, ...], int]]) -> int:
        """Bytes of ``value`` that restickifies for its readers' ``demands`` (:meth:`reader_demands`)
        would copy if it were sticked on ``stick``."""
        eps = value_layout(value, stick).elems_per_stick
        return sum(not fits(coords, stick, required, eps) for coords, required in demands) * host_bytes(value)

    def reader_requirement(self, op: ComputeOp, index: int, reads: Sequence[Read],
                           result: Sequence[Linear], depth: int = 2) -> int | None:
        """The driver a reader needs for operand ``index``, as far as it is known yet: a pointwise
        reader whose result and other operands are undecided follows what its own readers need
        of its result (:meth:`result_demand`, ``depth`` readers on)."""
        kind = op.op_func().kind
        if kind is OpKind.MATMUL:
            k, n = matmul_dims(op, result)
            return {0: k, 1: n}.get(index)
        if kind is not OpKind.POINTWISE:
            return None
        indirect = op.indirect_access()
        if indirect is not None and index == indirect.index:
            return None  # the index keeps a stick driver of its own (_indirect_rule)
        if op.result in self.plan.layouts:
            return self.plan.driver(Read(op.result, tuple(result), ()))
        insert = assembled_by(op)
        assembly = None if insert is None else assembly_filled_by(insert)
        if assembly is not None and (dims := whole_stick_dims(assembly)):
            return stick_driver(result[dims[-1]])  # the buffer's likely stick: ties go to the innermost
        for j, read in enumerate(reads):
            if j != index and read.storage in self.plan.layouts:
                driver = self.plan.driver(read)
                if driver not in (None, BROADCAST):
                    return driver
        return self.result_demand(op, result, depth) if depth else None

    def result_demand(self, op: ComputeOp, result: Sequence[Linear], depth: int) -> int | None:
        """The iteration dim of ``op`` that drives the result dim its first reader with a known need
        (:meth:`reader_requirement`, ``depth`` - 1 readers on) wants the stick on: a scaling whose
        result is a matmul's B makes its operand follow B's N (a key transposed, then scaled)."""
        for reader, index in self.readers.get(op.result, []):
            _, reads, reader_result = op_reads(reader)
            if index >= len(reads) or reads[index].storage is not op.result:
                continue
            required = self.reader_requirement(reader, index, reads, reader_result, depth - 1)
            dims = [] if required is None else dims_driven_by(reads[index].coords, required)
            if dims and (driver := stick_driver(result[dims[0]])) not in (None, BROADCAST):
                return driver
        return None

    def operand_misses(self, rule: OpRule, reads: Sequence[Read], result_driver: int | None) -> list[tuple[int, int]]:
        """``(operand, required driver)`` for each operand that does not fit."""
        misses = []
        for i, read in enumerate(reads):
            required = rule.required(i, result_driver)
            layout = self.plan.layouts[read.storage]
            if required is not None and not fits(read.coords, layout.stick_dim, required, layout.elems_per_stick):
                misses.append((i, required))
        return misses

    def operand_bytes(self, op: ComputeOp, rule: OpRule, reads: Sequence[Read], result_driver: int | None) -> float:
        """Bytes the restickifies of :meth:`operand_misses` would copy (each its storage); infinite
        when an operand cannot follow its required driver at all (:func:`followers`)."""
        total = 0.0
        for index, required in self.operand_misses(rule, reads, result_driver):
            storage_dims, view_dims = followers(self.plan, op, index, reads[index], required)
            if not storage_dims and not (reads[index].views and view_dims):
                return math.inf
            total += host_bytes(reads[index].storage)
        return total

    def choose(self, op: Operation, value: SSAValue, candidates: Sequence[int],
               cost: Callable[[int], float]) -> int | None:
        """The best stick dim of ``value`` among ``candidates`` (fixed values keep theirs)."""
        rank = len(value_shape(value))
        if not rank:
            return None
        if value in self.plan.fixed:
            stick = self.plan.stick(value)
            if stick not in candidates:
                raise SpyreError(f"result layout {list(self.plan.layouts[value].dim_order)} sticks dim {stick}, "
                                 f"but '{op.name}' needs its result sticked on one of {list(candidates)}", op=op)
            return stick
        if not candidates:
            raise SpyreError(f"no result dim of '{op.name}' can carry the stick", op=op)
        demands = self.reader_demands(value)
        return min(candidates, key=lambda s: (cost(s) + self.demand_bytes(value, s, demands), s != rank - 1, s))

    def misaligned(self, reads: Sequence[Read], driver: int | None) -> bool:
        """True when ``driver`` drives some read's storage stick coordinate at an offset that is not
        a whole number of sticks (``x[..., 32:]`` of 64 fp16 columns) or inside sticks it shares with
        another dim (:func:`splits_stick`, a head of 32): no op reads that in place and a copy of it
        would start mid-stick, so the op must be driven otherwise (its operand restickified)."""
        for read in reads:
            stick = self.plan.stick(read.storage)
            if stick is None or driver in (None, BROADCAST):
                continue
            coord, eps = read.coords[stick], self.plan.layouts[read.storage].elems_per_stick
            if stick_driver(coord) == driver and (coord.const % eps or splits_stick(coord, eps)):
                return True
        return False

    def aligned(self, dims: Sequence[int], reads: Sequence[Read], result: Sequence[Linear],
                space: Sequence[int]) -> tuple[int, ...]:
        """The result dims among ``dims`` whose driver reads no operand mid-stick (:meth:`misaligned`),
        preferring, when some were left out, those whose driver spans more than one element and
        drives a coordinate of every operand that is no broadcast (a restickify of the storage
        serves it, not a copy of the view); all of ``dims`` when every one reads mid-stick (the
        lowering then reports the misaligned read)."""
        kept = tuple(d for d in dims if not self.misaligned(reads, stick_driver(result[d])))
        if len(kept) == len(dims):
            return kept
        dense = [read for read in reads if self.plan.driver(read) != BROADCAST]
        served = tuple(d for d in kept if (driver := stick_driver(result[d])) not in (None, BROADCAST)
                       and space[driver] > 1 and all(dims_driven_by(read.coords, driver) for read in dense))
        return served or kept or tuple(dims)

    def copy_bytes(self, copy: ComputeOp, stick: int) -> float:
        """Bytes the restickifies of the operands of ``copy`` would copy if its result were sticked
        on ``stick``."""
        _, reads, result = op_reads(copy)
        rule = op_rule(copy, reads, result, self.plan)
        return self.operand_bytes(copy, rule, reads, stick_driver(result[stick]))
