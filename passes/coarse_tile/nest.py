# IR building of spyre-coarse-tile: a group's shared index constants, tile
# offsets and loops.  Reads nothing of the program; writes `arith.constant`
# indices (`%c0`, `%c1`, `%loop_bound_<k>`), `affine.apply` offsets of the
# induction variables (`%i_<k>`) and `scf.for` / `scf.yield`, and records every
# loop in the group's TilingResult.
"""The emitter of a tiled group and its loop-nest builder.

:class:`Emitter` builds each constant once per group and each offset (and
slice) once per loop body; :func:`build_loop_nest` builds one ``scf.for`` and
fills its body through a callback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import affine, arith, scf
from xdsl.dialects.builtin import AffineMapAttr, IndexType, IntegerAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.rewriter import InsertPoint

from spyre_mlir.analysis.linear import Linear, affine_sum
from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.passes.coarse_tile.schedule import LoopNode


@dataclass
class TilingResult:
    """What :func:`tile_group` created."""

    loops: list[scf.ForOp] = field(default_factory=list)
    """Every loop, in creation order (an outer loop after its inner loops)."""

    tiled_ops: dict[Operation, ComputeOp] = field(default_factory=dict)
    """Original compute op -> its per-tile op."""

    replacements: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """Original result used after the group -> the full value that replaces it."""


@dataclass
class Emitter:
    """Builds a group's IR: loop constants, offsets (one ``affine.apply`` per body and offset), slices."""

    builder: Builder
    result: TilingResult
    ivs: dict[LoopNode, SSAValue] = field(default_factory=dict)
    offsets: dict[tuple[Block | None, Linear], SSAValue] = field(default_factory=dict)
    constants: dict[str, SSAValue] = field(default_factory=dict)
    slices: dict[tuple[Block | None, SSAValue, tuple[Linear, ...], tuple[int, ...]], SSAValue] = field(
        default_factory=dict)
    """One ``tensor.extract_slice`` per body, source and region."""
    paths: dict[ComputeOp, tuple[LoopNode, ...]] = field(default_factory=dict)
    """Each op's enclosing loops (outermost first)."""

    def index(self, value: int, hint: str) -> SSAValue:
        """An ``arith.constant`` index named ``hint``, built once per group."""
        if hint not in self.constants:
            op = self.builder.insert(arith.ConstantOp(IntegerAttr(value, IndexType())))
            op.result.name_hint = hint
            self.constants[hint] = op.result
        return self.constants[hint]

    def offset(self, linear: Linear) -> SSAValue | int:
        """``linear`` as a static int, or an ``affine.apply`` of the induction variables."""
        if linear.is_const():
            return linear.const
        key = (self.builder.insertion_point.block, linear)
        if key not in self.offsets:
            nodes = [n for n, _ in linear.terms]
            expr = affine_sum([c for _, c in linear.terms], linear.const)
            apply = self.builder.insert(affine.ApplyOp(
                [self.ivs[n] for n in nodes], AffineMapAttr(AffineMap(len(nodes), 0, (expr,)))))
            self.offsets[key] = apply.result
        return self.offsets[key]


def build_loop_nest(emitter: Emitter, node: LoopNode, inits: Sequence[SSAValue],
                    body: Callable[[Builder, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]]) -> scf.ForOp:
    """One ``scf.for`` of ``node``'s level: ``0 .. count`` step 1 carrying ``inits``.

    ``body(builder, iv, accumulators)`` fills the body and returns the values to yield.
    """
    c0 = emitter.index(0, "c0")
    c1 = emitter.index(1, "c1")
    bound = emitter.constants.get(f"loop_bound_{node.index}")
    assert bound is not None, "loop bounds are built before the nest"
    block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
    block.args[0].name_hint = "i" if node.index == 0 else f"i_{node.index}"
    outer = emitter.builder
    emitter.builder = Builder(InsertPoint.at_end(block))
    emitter.ivs[node] = block.args[0]
    yielded = body(emitter.builder, block.args[0], block.args[1:])
    emitter.builder.insert(scf.YieldOp(*yielded))
    emitter.builder = outer
    loop = outer.insert(scf.ForOp(c0, bound, c1, list(inits), Region(block)))
    emitter.result.loops.append(loop)
    return loop
