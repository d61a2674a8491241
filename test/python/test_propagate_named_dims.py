"""spyre-propagate-named-dims: name distribution over views, compute ops, and every example."""

from __future__ import annotations

import math
import os
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func

from spyre_mlir.diagnostics import SpyreWarning
from spyre_mlir.dialects.spyre import ComputeOp, FillOp, ViewOp
from spyre_mlir.importer import import_program, load_model
from spyre_mlir.importer.views import expand_map, permute_map, reshape_map, select_map, slice_map
from spyre_mlir.mlir_text import make_context, parse_module
from spyre_mlir.passes.propagate_named_dims import (
    PropagateNamedDimsPass,
    distribute_names,
    name_extents,
    part_name,
    propagate_named_dims,
    view_dim_names,
    view_groups,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = ["add_mul_nested.py:build", "wsr_matmul.py:build", "wsr_matmul.py:build_view",
            "softmax.py:build", "rope.py:build", "transformer_block.py:build"]


def reshape_names(src, out, names, known=None):
    """Result names of ``view(src -> out)`` with ``names`` per source dim (lists of strings)."""
    result, problems = view_dim_names(reshape_map(src, out), src, out, tuple(tuple(n) for n in names),
                                      known or {})
    assert not problems, problems
    return [list(n) for n in result]


# --------------------------------------------------------------------------
# distribute_names and its helpers
# --------------------------------------------------------------------------


@pytest.mark.parametrize("names, total, known, expected", [
    (("M", "K"), 16384, {"M": 64, "K": 256}, [64, 256]),
    (("M", "K"), 16384, {"K": 256}, [64, 256]),
    (("M", "K"), 16384, {}, None),
    (("D",), 128, {}, [128]),
    (("M", "K"), 16384, {"M": 64, "K": 128}, None),
    (("M", "K"), 16384, {"K": 300}, None),
])
def test_name_extents(names, total, known, expected):
    assert name_extents(names, total, known) == expected


@pytest.mark.parametrize("stride, extent, total, expected", [
    (64, 2, 128, "D/64"),
    (1, 64, 128, "D%64"),
    (16, 4, 128, "D/16%4"),
])
def test_part_name(stride, extent, total, expected):
    assert part_name("D", stride, extent, total) == expected


@pytest.mark.parametrize("names, extents, known, expected", [
    # one result dim takes everything
    (("C", "D"), [500], {}, [("C", "D")]),
    (("A",), [7], {}, [("A",)]),
    # as many names as dims: one each, with or without extents
    (("M", "K"), [64, 256], {}, [("M",), ("K",)]),
    (("M", "K"), [64, 256], {"M": 64, "K": 256}, [("M",), ("K",)]),
    (("A", "B", "C"), [2, 3, 4], {}, [("A",), ("B",), ("C",)]),
    # extent-1 dims take no name
    (("M", "K"), [1, 64, 1, 256], {}, [(), ("M",), (), ("K",)]),
    # known extents pair runs: merges and one-each in one group
    (("A", "B", "C"), [6, 4], {"A": 2, "B": 3, "C": 4}, [("A", "B"), ("C",)]),
    (("A", "B", "C"), [2, 12], {"A": 2, "B": 3}, [("A",), ("B", "C")]),
    # a single name split into parts
    (("D",), [2, 64], {}, [("D/64",), ("D%64",)]),
    (("D",), [2, 4, 16], {}, [("D/64",), ("D/16%4",), ("D%16",)]),
    (("H", "D"), [32, 2, 64], {"H": 32}, [("H",), ("D/64",), ("D%64",)]),
    # extents that contradict the names, interleaved runs, unknown counts
    (("M", "K"), [256, 64], {"M": 64, "K": 256}, None),
    (("A", "B"), [4, 6], {"A": 6, "B": 4}, None),
    (("A", "B", "C"), [6, 4], {}, None),
    (("A", "B"), [2, 3, 4], {}, None),
])
def test_distribute_names(names, extents, known, expected):
    assert distribute_names(names, extents, known) == expected


# --------------------------------------------------------------------------
# view_groups / view_dim_names on the importer's view maps
# --------------------------------------------------------------------------


@pytest.mark.parametrize("view_map, result_shape, expected", [
    (reshape_map([16384], [64, 256]), [64, 256], [([0], [0, 1])]),
    (reshape_map([50, 10, 200], [500, 200]), [500, 200], [([0, 1], [0]), ([2], [1])]),
    (permute_map([2, 3, 4], [2, 0, 1]), [4, 2, 3], [([0], [1]), ([1], [2]), ([2], [0])]),
    (select_map([3, 4], 0, 1), [4], [([0], []), ([1], [0])]),
    (expand_map([1, 4], [3, 4]), [3, 4], [([0], []), ([1], [1]), ([], [0])]),
])
def test_view_groups(view_map, result_shape, expected):
    assert view_groups(view_map, result_shape) == expected


@pytest.mark.parametrize("src, out, names, known, expected", [
    # the seed's x_1d.view(M, K)
    ([16384], [64, 256], [["M", "K"]], {}, [["M"], ["K"]]),
    # flatten merges, and keeps the names in order
    ([50, 10, 200], [500, 200], [["C"], ["D"], ["E"]], {}, [["C", "D"], ["E"]]),
    ([50, 10, 200], [100000], [["C"], ["D"], ["E"]], {}, [["C", "D", "E"]]),
    # merge of a flattened dim with a plain one
    ([500, 200], [100000], [["C", "D"], ["E"]], {}, [["C", "D", "E"]]),
    # split a flattened dim then keep the rest
    ([2, 256, 4096], [2, 256, 32, 128], [["B"], ["L"], ["H", "D"]], {}, [["B"], ["L"], ["H"], ["D"]]),
    # split with one known extent among the flattened names
    ([4096], [32, 2, 64], [["H", "D"]], {"H": 32}, [["H"], ["D/64"], ["D%64"]]),
    # split and merge across a group boundary: [A*B, C] -> [A, B*C]
    ([6, 4], [2, 12], [["A", "B"], ["C"]], {"A": 2, "B": 3, "C": 4}, [["A"], ["B", "C"]]),
    # a single name split (RoPE's D -> 2 x D/2)
    ([2, 256, 32, 128], [2, 256, 32, 2, 64], [["B"], ["L"], ["H"], ["D"]], {},
     [["B"], ["L"], ["H"], ["D/64"], ["D%64"]]),
    # size-1 dims: dropped on the source side, unnamed on the result side
    ([1, 128, 256], [128, 256], [["B"], ["L"], ["E"]], {}, [["L"], ["E"]]),
    ([128, 256], [1, 128, 256], [["L"], ["E"]], {}, [[], ["L"], ["E"]]),
    ([2, 1, 64], [128], [["X"], [], ["Y"]], {}, [["X", "Y"]]),
    # identity reshape
    ([3, 5], [3, 5], [["A"], ["B"]], {}, [["A"], ["B"]]),
])
def test_reshape_names(src, out, names, known, expected):
    assert reshape_names(src, out, names, known) == expected


def test_permute_slice_select_expand_names():
    names = (("A",), ("B",), ("C", "D"))
    result, _ = view_dim_names(permute_map([2, 3, 20], [2, 0, 1]), [2, 3, 20], [20, 2, 3], names, {})
    assert result == [("C", "D"), ("A",), ("B",)]
    result, _ = view_dim_names(slice_map([2, 3, 20], 2, 1, 2), [2, 3, 20], [2, 3, 10], names, {})
    assert result == [("A",), ("B",), ("C", "D")]
    result, _ = view_dim_names(select_map([2, 3, 20], 1, 0), [2, 3, 20], [2, 20], names, {})
    assert result == [("A",), ("C", "D")]
    result, _ = view_dim_names(expand_map([3, 1], [5, 3, 7]), [3, 1], [5, 3, 7], (("B",), ()), {})
    assert result == [(), ("B",), ()]


def test_undistributable_names_are_reported():
    result, problems = view_dim_names(reshape_map([6], [2, 3]), [6], [2, 3], (("A", "B", "C"),), {})
    assert result == [(), ()]
    assert problems == ['cannot distribute the names ["A", "B", "C"] of source dims [0] (extents [6]) '
                        'over result dims [0, 1] (extents [2, 3])']


@st.composite
def regroupings(draw):
    """Names with extents, and two groupings of them into source and result dims."""
    extents = draw(st.lists(st.integers(2, 5), min_size=1, max_size=6))
    names = [f"N{i}" for i in range(len(extents))]

    def grouping():
        cuts = sorted(draw(st.sets(st.integers(1, len(names) - 1), max_size=len(names) - 1))) \
            if len(names) > 1 else []
        bounds = [0, *cuts, len(names)]
        return [list(range(a, b)) for a, b in zip(bounds, bounds[1:])]

    return names, extents, grouping(), grouping()


@settings(max_examples=200, deadline=None)
@given(regroupings())
def test_reshape_regroups_names(case):
    """Any reshape between two groupings of named atoms carries each atom's name to its result dim."""
    names, extents, src_groups, out_groups = case
    src = [math.prod(extents[i] for i in g) for g in src_groups]
    out = [math.prod(extents[i] for i in g) for g in out_groups]
    known = dict(zip(names, extents))
    expected = [[names[i] for i in g] for g in out_groups]
    assert reshape_names(src, out, [[names[i] for i in g] for g in src_groups], known) == expected


# --------------------------------------------------------------------------
# The analysis on IR
# --------------------------------------------------------------------------


def parse(text):
    return parse_module(make_context(), text, "test.mlir")


def only_func(module):
    (f,) = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    return f


def test_analysis_records_values_and_does_not_change_the_ir():
    module = parse("""
    func.func @f(%x: tensor<16384xf16> {spyre.dims = [["M", "K"]]}, %y: tensor<256x128xf16>) -> tensor<64x128xf16> {
      %0 = spyre.view %x affine_map<(d0, d1) -> (d0 * 256 + d1)> : tensor<16384xf16> -> tensor<64x256xf16>
      %1 = spyre.matmul (%0, %y) : (tensor<64x256xf16>, tensor<256x128xf16>) -> tensor<64x128xf16>
      func.return %1 : tensor<64x128xf16>
    }""")
    before = str(module)
    f = only_func(module)
    named = propagate_named_dims(f)
    assert str(module) == before
    view, matmul = list(f.body.block.ops)[:2]
    assert named.values[f.args[1]] == (("%y.0",), ("%y.1",))
    assert named.ops[view] == (("M",), ("K",))
    assert named.ops[matmul] == (("M",), ("%y.1",), ("K",))
    assert named.values[matmul.result] == (("M",), ("%y.1",))
    assert named.extents["K"] == 256


def test_conflicting_user_names_warn_and_keep_operand_0():
    module = parse("""
    func.func @f(%a: tensor<4x8xf16> {spyre.dims = [["A"], ["B"]]}, %b: tensor<4x8xf16> {spyre.dims = [["A"], ["C"]]}) -> tensor<4x8xf16> {
      %0 = spyre.pointwise "add" (%a, %b) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
      func.return %0 : tensor<4x8xf16>
    }""")
    f = only_func(module)
    with pytest.warns(SpyreWarning, match=r'test.mlir:3:\d+: warning: iteration dim 1: operand #0 names it \["B"\] '
                                          r'but operand #1 names it \["C"\]; keeping \["B"\]'):
        named = propagate_named_dims(f)
    assert named.ops[next(iter(f.body.block.ops))] == (("A",), ("B",))


def test_fill_dims_are_generated():
    module = parse("""
    func.func @f() -> tensor<1x64xf16> {
      %0 = spyre.fill 0.0 : tensor<1x64xf16>
      func.return %0 : tensor<1x64xf16>
    }""")
    f = only_func(module)
    assert propagate_named_dims(f).ops[next(iter(f.body.block.ops))] == ((), ("%0.1",))


# --------------------------------------------------------------------------
# Every example: no warnings, every compute op fully named, idempotent
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def imported():
    """The imported module of each example, by spec (imported once)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {spec: str(import_program(load_model(os.path.join(ROOT, "examples", spec)).program))
                for spec in EXAMPLES}


@pytest.mark.parametrize("spec", EXAMPLES)
def test_examples_are_fully_named_without_warnings(imported, spec):
    module = parse(imported[spec])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        PropagateNamedDimsPass().apply(make_context(), module)
    assert [str(w.message) for w in caught if issubclass(w.category, SpyreWarning)] == []
    module.verify()
    for op in module.walk():
        if isinstance(op, ComputeOp):
            names = op.get_dim_names()
            assert names is not None and len(names) == len(op.get_iteration_space())
            assert all(names), f"{op.name} has an unnamed iteration dim: {names}"
        if isinstance(op, ViewOp | FillOp):
            shape = op.result.type.get_shape()
            assert op.dims is not None and len(op.dims.data) == len(shape)
            assert all(dim.data or size == 1 for dim, size in zip(op.dims.data, shape))
    once = str(module)
    PropagateNamedDimsPass().apply(make_context(), module)
    assert str(module) == once
    assert str(parse(once)) == once
