"""Tests of spyre-work-division: the pure functions, the span limit on the DESIGN §8 matmul
(spans recomputed independently from the layouts), hints, the pass, and random ops (hypothesis)."""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Sequence

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import (ArrayAttr, DenseArrayBase, Float16Type, Float32Type, StringAttr, TensorType, f16,
                                  f32, i64)
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.utils.test_value import create_ssa_value

from spyre_mlir.diagnostics import SpyreError, SpyreWarning
from spyre_mlir.dialects.spyre import ComputeOp, HintAttr, MatmulOp, Memory, PointwiseOp, ReduceOp, attach_target
from spyre_mlir.hardware import SpyreConfig
from spyre_mlir.layout import stick_layout
from spyre_mlir.mlir_text import make_context, parse_module
from spyre_mlir.analysis.work import (DeviceDim, WorkTensor, core_to_slice, per_core_span, slice_order, stick_pieces,
                                     work_problem)
from spyre_mlir.passes.work_division import (DivisionPlan, WorkDivisionPass, core_split, divide_work, plan_work,
                                            split_iteration_space)

LIMIT = 268_431_360
CORES32 = SpyreConfig(cores=32)


# --------------------------------------------------------------------------
# Independent reference: stick adjustment and per-core spans from the layouts
# --------------------------------------------------------------------------


def dtype_of(t: TensorType) -> str:
    return {Float16Type: "float16", Float32Type: "float32"}[type(t.get_element_type())]


def tensors_of(op: ComputeOp) -> list[tuple[TensorType, AffineMap]]:
    types = [v.type for v in (*op.inputs, op.result)]
    return list(zip(types, op.get_indexing_maps(), strict=True))


def elems_per_stick_of_dims(op: ComputeOp) -> list[int]:
    """Per iteration dim: the largest elems_per_stick of the tensors whose last (stick) host dim it indexes."""
    per = [1] * len(op.get_iteration_space())
    for t, m in tensors_of(op):
        if m.results and isinstance(m.results[-1], AffineDimExpr):
            d = m.results[-1].position
            per[d] = max(per[d], stick_layout(t.get_shape(), dtype_of(t)).elems_per_stick)
    return per


def reference_span(t: TensorType, m: AffineMap, per_core: Sequence[int]) -> int:
    """Bytes from one core's first byte in ``t`` (default layout) to one past its last, when it
    iterates ``per_core`` elements of each dim: each device dim adds (positions covered - 1) x its
    stride, the within-stick position one stick."""
    layout = stick_layout(t.get_shape(), dtype_of(t))
    size, host_of = layout.device_size, layout.device_dims
    elem_bytes = {"float16": 2, "float32": 4}[layout.dtype]
    host_extent = [per_core[e.position] if isinstance(e, AffineDimExpr) else 1 for e in m.results]
    span = 128
    for j in range(len(size) - 1):
        h = host_of[j]
        if h == -1:
            continue
        covered = host_extent[h]
        if h == layout.stick_dim:
            covered = math.ceil(covered / layout.elems_per_stick)
        span += (covered - 1) * elem_bytes * math.prod(size[j + 1:])
    return span


def check_division(op: ComputeOp, splits: Sequence[int], cores: int) -> None:
    """Splits are positive, use at most ``cores``, divide the stick-adjusted sizes and keep spans in the limit."""
    sizes = op.get_iteration_space()
    per = elems_per_stick_of_dims(op)
    pieces = [math.ceil(s / p) for s, p in zip(sizes, per)]
    assert len(splits) == len(sizes) and all(s >= 1 for s in splits)
    assert math.prod(splits) <= cores
    assert all(p % s == 0 for p, s in zip(pieces, splits)), (pieces, splits)
    per_core = [n // s * p for n, s, p in zip(pieces, splits, per)]  # a padded last stick whole
    for t, m in tensors_of(op):
        assert reference_span(t, m, per_core) <= LIMIT, (t, splits)


# --------------------------------------------------------------------------
# Pure functions
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "cores", "expected"), [
    (32, 32, 32), (64, 32, 32), (16, 32, 16), (7, 32, 7), (12, 32, 12), (100, 32, 25), (7, 4, 1),
    (1, 32, 1), (150, 8, 6),
])
def test_core_split(size: int, cores: int, expected: int) -> None:
    assert core_split(size, cores) == expected


def test_rows_and_sticks_use_12_cores() -> None:
    assert split_iteration_space({"rows": 6, "sticks": 2}, 32, ["rows", "sticks"], [], {}) == {"rows": 6, "sticks": 2}


def test_output_then_one_reduction() -> None:
    assert split_iteration_space({"o0": 4, "r0": 8}, 32, ["o0"], ["r0"], {}) == {"o0": 4, "r0": 8}


def test_outputs_by_decreasing_size() -> None:
    assert split_iteration_space({"a": 7, "b": 8, "c": 6}, 32, ["a", "b", "c"], [], {}) == {"a": 1, "b": 8, "c": 3}


def test_reduction_with_largest_core_split_wins() -> None:
    sizes = {"o": 2, "r0": 5, "r1": 2}
    assert split_iteration_space(sizes, 32, ["o"], ["r0", "r1"], {}) == {"o": 2, "r0": 5, "r1": 1}


def test_committed_minimum_grows_but_reduction_split_stays() -> None:
    sizes = {"m": 64, "k": 64}
    assert split_iteration_space(sizes, 32, ["m"], ["k"], {"m": 2}) == {"m": 32, "k": 1}
    assert split_iteration_space(sizes, 32, ["m"], ["k"], {"k": 4}) == {"m": 8, "k": 4}


def test_fixed_dims_keep_their_split() -> None:
    sizes = {"m": 256, "n": 16, "k": 8}
    splits = split_iteration_space(sizes, 32, ["m", "n"], ["k"], {"m": 2, "k": 4}, fixed={"m", "k"})
    assert splits == {"m": 2, "n": 4, "k": 4}


def test_core_to_slice_first_dim_fastest_and_repeats() -> None:
    cycle = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
    assert core_to_slice([2, 3], [0, 1], 12) == cycle + cycle


def test_core_to_slice_k_first() -> None:
    k_split = core_to_slice([2, 1, 2], [2, 0, 1], 4)
    assert k_split == [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 0, 1)]
    assert core_to_slice([2, 1, 1], [2, 0, 1], 2) == [(0, 0, 0), (1, 0, 0)]


def test_slice_order_puts_a_matmuls_k_first_then_the_innermost_dims() -> None:
    assert slice_order(matmul(64, 128, 64)) == (2, 1, 0)
    add = PointwiseOp("add", [value(f16, [64, 128]), value(f16, [64, 128])], TensorType(f16, [64, 128]))
    assert slice_order(add) == (1, 0)


def d(i: int) -> AffineExpr:
    return AffineExpr.dimension(i)


def span_of(*dims: DeviceDim) -> WorkTensor:
    """An fp16 tensor of ``dims`` (outer -> inner), as work division sees it."""
    return WorkTensor("t", dims, None, 64, 128, 2, AffineMap.identity(2))


def test_per_core_span_runs_from_the_first_byte_to_the_last() -> None:
    # [1024, 4096] fp16 = [64 stick columns, 1024 rows, 64]; iteration (rows, columns).
    t = span_of(DeviceDim(d(1), 1024 * 128, 64), DeviceDim(d(0), 128))
    assert per_core_span(t, [32, 4096]) == 63 * 1024 * 128 + 32 * 128   # rows split: 32 rows of every column
    assert per_core_span(t, [1024, 64]) == 1024 * 128                    # one stick column: all its rows
    assert per_core_span(t, [1, 64]) == 128                              # one stick
    assert per_core_span(span_of(DeviceDim(AffineExpr.constant(0), 128)), [4]) == 128


def test_touched_positions_skip_what_a_compound_coordinate_steps_over() -> None:
    # Columns 64 * d1 + d3 + 32 with d3 < 32: the second half of each of two 64-column blocks.
    dim = DeviceDim(d(1) * 64 + d(3) + 32, 128)
    assert dim.touched([1, 2, 64, 32]) == 64
    assert dim.positions([1, 2, 64, 32]) == 96                     # the hull [32, 127]
    sticks = DeviceDim(d(1) * 64 + d(3) + 32, 128, elems_per_position=64)
    assert sticks.touched([1, 2, 64, 32]) == sticks.positions([1, 2, 64, 32]) == 2


def test_per_core_span_compound_coordinate() -> None:
    # A host dim flattening (d0, d1) as 8 * d0 + d1 along 64 rows of 128 bytes.
    t = span_of(DeviceDim(d(0) * 8 + d(1), 128))
    assert per_core_span(t, [2, 8]) == 16 * 128
    assert per_core_span(t, [2, 4]) == 12 * 128   # rows 0..3 and 8..11: the hull


def test_stick_pieces_from_coefficients() -> None:
    op = PointwiseOp("exp", [create_ssa_value(TensorType(f16, [6, 128]))], TensorType(f16, [6, 128]))
    assert stick_pieces((6, 128), work_problem(op).tensors) == (1, 64)
    # A stick coordinate 32 * d0 + d1 (fp16): d0 goes in steps of 2, d1 of 64.
    flat = work_problem(op).tensors[0]
    flat = dataclasses.replace(flat, stick_coord=d(0) * 32 + d(1))
    assert stick_pieces((4, 32), [flat]) == (2, 64)


# --------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------


def value(element, shape: Sequence[int]):
    return create_ssa_value(TensorType(element, list(shape)))


def matmul(m: int, k: int, n: int, element=f16) -> MatmulOp:
    return MatmulOp(value(element, [m, k]), value(element, [k, n]), TensorType(element, [m, n]))


def test_big_matmul_meets_the_span_limit() -> None:
    """DESIGN §8's worked example: A (512 MiB) needs K split 4 (K split 2 leaves it 4 KiB over the
    limit); W, 4 KiB over whole, fits once K is split at all.  The cost model then splits K on every
    core: an M or N split would re-read a slice of A or W on several cores."""
    op = matmul(8192, 32768, 4096)
    division = divide_work(op, CORES32)
    assert op.get_core_splits() == division.splits == (1, 1, 32)
    assert division.span_minimums == {2: 4}
    assert slice_order(op) == (2, 1, 0)  # K first: its cohorts sit on adjacent cores
    check_division(op, division.splits, 32)
    per_core = [8192, 4096, 32768 // 32]
    spans = [reference_span(t, m, per_core) for t, m in tensors_of(op)]
    assert spans == list(division.spans) == [16 * 2**20, 63 * 4 * 2**20 + 1024 * 128, 64 * 2**20]


def test_big_matmul_unsplit_exceeds_the_limit() -> None:
    op = matmul(8192, 32768, 4096)
    full = list(op.get_iteration_space())
    assert [reference_span(t, m, full) for t, m in tensors_of(op)] == [2**29, 2**28, 2**26]


def test_big_matmul_needs_four_cores() -> None:
    """On 2 cores, K split 2 leaves A's per-core span 256 MiB, 4 KiB over the limit."""
    with pytest.raises(SpyreError, match=r"operand #0 .* is 268435456 bytes, .* no split on 2 cores meets it"):
        divide_work(matmul(8192, 32768, 4096), SpyreConfig(cores=2))
    assert divide_work(matmul(8192, 32768, 4096), SpyreConfig(cores=4)).splits == (1, 1, 4)


def test_two_reduction_dims_for_the_span_is_an_error() -> None:
    op = ReduceOp("sum", value(f16, [4194304, 2, 64]), [0, 1], TensorType(f16, [64]))
    with pytest.raises(SpyreError, match="would split more than one reduction dim") as err:
        divide_work(op, CORES32)
    assert "'spyre.reduce' op" in err.value.msg and "tensor<4194304x2x64xf16>" in err.value.msg


def hinted(op: ComputeOp, names: Sequence[str], *work_divs: dict[str, int]) -> ComputeOp:
    """``op`` with one name per iteration dim and one work_div hint per dict, in order."""
    op.dims = ArrayAttr([ArrayAttr([StringAttr(n)]) for n in names])
    op.hints = ArrayAttr([HintAttr(i, work_div=w) for i, w in enumerate(work_divs)])
    return op


def test_work_div_hint_is_exact() -> None:
    op = matmul(256, 512, 1024)
    division = divide_work(hinted(op, "MNK", {"M": 2, "K": 4}), CORES32)
    assert division.splits == (2, 4, 4) and division.hinted == {0: 2, 2: 4}


def test_work_problem_is_built_once_per_op_signature() -> None:
    """Ops of one signature (types, value names, properties) share one problem, whatever their
    plan decisions; any other property makes another."""
    first, second = matmul(256, 512, 1024), matmul(256, 512, 1024)
    problem = work_problem(first)
    assert work_problem(second) is problem
    second.core_splits = DenseArrayBase.from_list(i64, [1, 2, 16])
    assert work_problem(second) is problem
    named = work_problem(hinted(second, "MNK"))
    assert named is not problem and named.dim_names == (("M",), ("N",), ("K",))
    assert work_problem(matmul(256, 512, 2048)).sizes == (256, 2048, 512)

@pytest.mark.parametrize("split", [0, -2, 2.5, True, "4"])
def test_work_div_not_a_positive_integer(split: object) -> None:
    problem = work_problem(hinted(matmul(256, 512, 1024), "MNK"))
    with pytest.raises(SpyreError, match="work_div split for dim 'M' must be a positive integer"):
        plan_work(problem, CORES32, [("M", split)])


def test_work_div_non_divisor() -> None:
    problem = work_problem(hinted(matmul(256, 512, 1024), "MNK"))
    with pytest.raises(SpyreError, match="work_div split 3 for dim 'N' does not divide its size 1024"):
        plan_work(problem, CORES32, [("N", 3)])


def test_work_div_exceeding_cores_is_skipped_with_a_warning() -> None:
    problem = work_problem(hinted(matmul(256, 512, 1024), "MNK"))
    with pytest.warns(SpyreWarning, match="split 16 for dim 'N' skipped: it would use 64 cores"):
        division = plan_work(problem, CORES32, [("M", 4), ("N", 16)])
    # The 8 cores left go to K: an N split would re-read the left-hand input on every core.
    assert division.hinted == {0: 4} and division.splits == (4, 1, 8)


def test_pass_divides_over_the_module_target_not_sencores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENCORES", "1")
    text = textwrap.dedent("""\
        func.func @f(%a: tensor<1024x4096xf16>) -> tensor<1024x4096xf16> {
          %y = spyre.pointwise "add" (%a, %a) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
          func.return %y : tensor<1024x4096xf16>
        }
    """)
    ctx = make_context()
    default, targeted = (parse_module(ctx, text, "f.mlir") for _ in range(2))
    attach_target(targeted, SpyreConfig(cores=4))
    for module in (default, targeted):
        WorkDivisionPass().apply(ctx, module)
    assert [op.get_core_splits() for m in (default, targeted) for op in m.walk() if isinstance(op, ComputeOp)] == [
        (32, 1), (4, 1)]


def test_pass_is_idempotent() -> None:
    text = textwrap.dedent("""\
        func.func @f(%a: tensor<1024x4096xf16>, %w: tensor<4096x64xf16>) -> tensor<1024x64xf16> {
          %y = spyre.pointwise "add" (%a, %a) {core_splits = array<i64: 1, 1>} : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
          %c = spyre.matmul (%y, %w) : (tensor<1024x4096xf16>, tensor<4096x64xf16>) -> tensor<1024x64xf16>
          func.return %c : tensor<1024x64xf16>
        }
    """)
    ctx = make_context()
    module = parse_module(ctx, text, "f.mlir")
    WorkDivisionPass().apply(ctx, module)
    once = str(module)
    WorkDivisionPass().apply(ctx, module)
    assert str(module) == once
    splits = [op.get_core_splits() for op in module.walk() if isinstance(op, ComputeOp)]
    # The matmul splits K: split on M it would read all of %w on every core.  The add then splits
    # its columns the same way (step 5), so that each core leaves in LX the slice of %y it reads.
    assert splits == [(1, 32), (1, 1, 32)]


def test_a_split_is_priced_by_the_time_of_every_execution_of_its_neighbours() -> None:
    """A value written before a loop of 8 iterations and read whole in each: a split of its writer
    changes the reader's time in every iteration, and its price counts each of them."""
    text = textwrap.dedent("""\
        func.func @f(%a: tensor<1024x512xf16>, %c: tensor<128x512xf16>) -> tensor<1024x512xf16> {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c8 = arith.constant 8 : index
          %k = spyre.pointwise "exp" (%c) : (tensor<128x512xf16>) -> tensor<128x512xf16>
          %init = tensor.empty() : tensor<1024x512xf16>
          %out = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (tensor<1024x512xf16>) {
            %r = affine.apply affine_map<(d0) -> (d0 * 128)> (%i)
            %at = tensor.extract_slice %a[%r, 0] [128, 512] [1, 1] : tensor<1024x512xf16> to tensor<128x512xf16>
            %p = spyre.pointwise "mul" (%at, %k) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
            %next = tensor.insert_slice %p into %acc[%r, 0] [128, 512] [1, 1] : tensor<128x512xf16> into tensor<1024x512xf16>
            scf.yield %next : tensor<1024x512xf16>
          }
          func.return %out : tensor<1024x512xf16>
        }
    """)
    module = parse_module(make_context(), text, "f.mlir")
    writer, reader = (op for op in module.walk() if isinstance(op, ComputeOp))
    plan = DivisionPlan(SpyreConfig(cores=4), {writer: (4, 1), reader: (4, 1)})
    aligned, across = plan.local_price(writer)((4, 1)), plan.local_price(writer)((1, 4))
    assert plan.memory(writer.result, {}) is Memory.LX and plan.memory(writer.result, {writer: (1, 4)}) is Memory.HBM
    per_execution = plan.price(reader, {writer: (1, 4)}) - plan.price(reader, {})
    assert per_execution > 0
    assert plan.time(reader, {}) == 8 * plan.price(reader, {})
    assert across - aligned == pytest.approx(8 * per_execution + plan.price(writer, {writer: (1, 4)})
                                             - plan.price(writer, {}))


# --------------------------------------------------------------------------
# Random ops
# --------------------------------------------------------------------------

SIZES = st.sampled_from([1, 2, 3, 5, 6, 7, 12, 64, 100, 150, 192, 1024, 4096, 32768, 1 << 20, 1 << 22])
ELEMENTS = st.sampled_from([f16, f32])


@st.composite
def compute_ops(draw: st.DrawFn) -> ComputeOp:
    element = draw(ELEMENTS)
    kind = draw(st.sampled_from(["pointwise", "reduce", "matmul"]))
    if kind == "matmul":
        batch = draw(st.lists(SIZES, max_size=1))
        m, k, n = draw(SIZES), draw(SIZES), draw(SIZES)
        return MatmulOp(value(element, [*batch, m, k]), value(element, [*batch, k, n]),
                        TensorType(element, [*batch, m, n]))
    shape = draw(st.lists(SIZES, min_size=1, max_size=3))
    if kind == "pointwise":
        other = [1 if draw(st.booleans()) else s for s in shape]
        return PointwiseOp("add", [value(element, shape), value(element, other)], TensorType(element, shape))
    dims = sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    keep = draw(st.booleans())
    out = [1 if i in dims else s for i, s in enumerate(shape)] if keep else \
        [s for i, s in enumerate(shape) if i not in dims]
    return ReduceOp("sum", value(element, shape), dims, TensorType(element, out))


@settings(max_examples=300, deadline=None)
@given(compute_ops(), st.integers(1, 32))
def test_random_ops(op: ComputeOp, cores: int) -> None:
    op.verify()
    total_bytes = sum(stick_layout(t.get_shape(), dtype_of(t)).nbytes for t, _ in tensors_of(op))
    assume(total_bytes <= 1 << 33)
    try:
        division = divide_work(op, SpyreConfig(cores=cores))
    except SpyreError as e:
        assert "per-core span" in e.msg
        padded = [math.ceil(s / p) * p for s, p in zip(op.get_iteration_space(), elems_per_stick_of_dims(op))]
        assert any(reference_span(t, m, padded) > LIMIT for t, m in tensors_of(op))
        return
    check_division(op, division.splits, cores)
    assert len([d for d in op.reduction_dims() if division.splits[d] > 1]) <= 1
