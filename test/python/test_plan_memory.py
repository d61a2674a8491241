"""spyre-plan-memory: the LX solvers of DESIGN §9 (no IR), then the pass end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.passes.plan_memory import (SOLVERS, Buffer, interference, placement_order, placement_score, solve,
                                          value_score)

from seed_program import seed_program

KIB = 1024


def buf(name, size, start, end, uses=2, **kw):
    return Buffer(name, size, uses, start=start, end=end, **kw)


# -- every solver ------------------------------------------------------------


@pytest.mark.parametrize("solver", SOLVERS)
def test_simple_packing(solver):
    buffers = [buf("a", 256, 0, 3), buf("b", 128, 1, 3), buf("c", 512, 2, 4)]
    placed = solve(buffers, 1024, solver=solver)
    assert list(placed) == ["a", "b", "c"] and None not in placed.values()
    spans = sorted((placed[b.name], placed[b.name] + b.size) for b in buffers)
    assert all(hi <= lo for (_, hi), (lo, _) in zip(spans, spans[1:])) and spans[-1][1] <= 1024


@pytest.mark.parametrize("solver", SOLVERS)
def test_alignment_padding_and_eviction(solver):
    # 100 bytes take a 128-byte slot, 200 bytes two; the three no longer fit in 384 bytes.  The
    # solvers that order by lifetime and uses keep the two small ones (input order breaks the tie);
    # value fit keeps the larger one first, then one small one.
    buffers = [buf("a", 100, 0, 4), buf("b", 100, 0, 4), buf("c", 200, 0, 4)]
    placed = solve(buffers, 384, solver=solver)
    if solver == "valuefit":
        assert placed == {"a": 256, "b": None, "c": 0}
    else:
        assert {placed["a"], placed["b"]} == {0, 128} and placed["c"] is None


@pytest.mark.parametrize("solver", SOLVERS)
def test_reuse_after_lifetime_ends(solver):
    placed = solve([buf("a", 1024, 0, 2), buf("b", 1024, 2, 4)], 1024, solver=solver)
    assert placed == {"a": 0, "b": 0}


@pytest.mark.parametrize("solver", SOLVERS)
def test_buffer_larger_than_limit_is_evicted(solver):
    placed = solve([buf("big", 4 * 1024 * KIB, 0, 2), buf("small", 256, 0, 2)], 1_625_344, solver=solver)
    assert placed == {"big": None, "small": 0}


def test_greedy_reuses_a_gap_between_live_blocks():
    # a, b, c stacked; b ends; d does not fit above c nor at 0, only in b's hole.
    buffers = [buf("a", 256, 0, 9), buf("b", 256, 0, 2), buf("c", 256, 0, 9), buf("d", 200, 3, 5)]
    placed = solve(buffers, 768, solver="greedy")
    assert placed == {"a": 0, "b": 256, "c": 512, "d": 256}


def test_greedy_goes_at_zero_when_the_bottom_is_free_else_above_the_top():
    buffers = [buf("a", 256, 0, 2), buf("b", 256, 0, 9), buf("c", 256, 2, 9), buf("d", 384, 2, 9)]
    placed = solve(buffers, 4096, solver="greedy")
    # at 2: a is freed, the lowest live block (b at 256) starts at c's size -> c at 0;
    # d (384 bytes) does not fit below b -> just above the top.
    assert placed == {"a": 0, "b": 256, "c": 0, "d": 512}


@pytest.mark.parametrize("solver", SOLVERS)
def test_in_place_child_takes_its_parent_block(solver):
    # x dies at 2, the op that writes y: y may overwrite x.
    buffers = [buf("w", 512, 0, 5), buf("x", 256, 1, 3), buf("y", 256, 2, 4, in_place_parents=("x",))]
    placed = solve(buffers, 1024, solver=solver)
    assert placed["y"] == placed["x"] and placed["w"] != placed["x"]


@pytest.mark.parametrize("solver", SOLVERS)
def test_in_place_child_of_an_evicted_parent_is_placed_normally(solver):
    buffers = [buf("x", 2048, 0, 2), buf("y", 256, 1, 3, in_place_parents=("x",))]
    assert solve(buffers, 1024, solver=solver) == {"x": None, "y": 0}


@pytest.mark.parametrize("solver", SOLVERS)
def test_two_children_cannot_share_one_parent_block(solver):
    buffers = [buf("x", 256, 0, 2), buf("y", 256, 1, 3, in_place_parents=("x",)),
               buf("z", 256, 1, 3, in_place_parents=("x",))]
    placed = solve(buffers, 1024, solver=solver)
    assert placed["y"] != placed["z"] and placed["x"] in (placed["y"], placed["z"])


def test_firstfit_and_bestfit_choose_different_gaps():
    # Uses order the placement a, b, c, d, e, f; b and d end before f starts, leaving
    # f a 384-byte hole at 128 and an exact 128-byte hole at 768.
    buffers = [buf("a", 128, 0, 10, uses=39), buf("b", 384, 0, 4, uses=14), buf("c", 256, 0, 10, uses=34),
               buf("d", 128, 0, 4, uses=12), buf("e", 128, 0, 10, uses=29), buf("f", 128, 5, 7, uses=1)]
    assert [b.name for b in placement_order(buffers)] == list("abcdef")
    first = solve(buffers, 1024, solver="firstfit")
    best = solve(buffers, 1024, solver="bestfit")
    assert [first[n] for n in "abcde"] == [0, 128, 512, 768, 896]
    assert first["f"] == 128  # the lowest gap, [128, 512)
    assert best["f"] == 768   # the exact fit, [768, 896)


def test_valuefit_keeps_the_buffer_that_saves_most_where_firstfit_keeps_the_short_one():
    # A short-lived small buffer scores first for first fit and takes the memory a long,
    # large one needs; value fit places by bytes times uses and keeps the large one.
    big, small = buf("big", 1024, 0, 4, uses=2), buf("small", 128, 0, 2, uses=2)
    assert solve([big, small], 1024, solver="firstfit") == {"big": None, "small": 0}
    assert solve([big, small], 1024, solver="valuefit") == {"big": 0, "small": None}
    assert value_score(big, set()) == -2048
    assert [b.name for b in placement_order([small, big], value_score)] == ["big", "small"]


def test_ordering_score_more_uses_first():
    many, few = buf("many", 128, 0, 4, uses=5), buf("few", 128, 0, 4, uses=1)
    assert placement_score(many, set()) < placement_score(few, set())
    assert [b.name for b in placement_order([few, many])] == ["many", "few"]


def test_ordering_score_writer_before_reader():
    write = buf("w", 128, 0, 4)
    read = buf("r", 128, 0, 4, first_use_is_read=True)
    assert placement_score(write, set()) == pytest.approx(4 / 2.5)
    assert placement_score(read, set()) == pytest.approx(4 / 2)
    assert [b.name for b in placement_order([read, write])] == ["w", "r"]


def test_ordering_score_in_place_discount_and_parents_first():
    parent = buf("p", 128, 0, 5)
    child = buf("c", 128, 4, 6, in_place_parents=("p",))
    parents = {"p"}
    assert placement_score(parent, parents) == pytest.approx((5 - 0.25) / 2.5)
    assert placement_score(child, parents) == pytest.approx((2 - 0.25) / 2.5)
    # The child scores lower but its parent is kept before it.
    assert [b.name for b in placement_order([parent, child])] == ["p", "c"]


def test_score_decides_who_gets_the_space_in_firstfit():
    # Only one of the two fits; the one with more uses is placed first.
    buffers = [buf("rare", 768, 0, 4, uses=1), buf("hot", 768, 0, 4, uses=6)]
    assert solve(buffers, 1024, solver="firstfit") == {"rare": None, "hot": 0}
    assert solve(buffers, 1024, solver="greedy") == {"rare": 0, "hot": None}  # input order


# -- errors ----------------------------------------------------------------------


def test_unknown_solver():
    with pytest.raises(SpyreError,
                       match="unknown LX solver 'worstfit'; expected one of greedy, firstfit, bestfit, valuefit"):
        solve([], 1024, solver="worstfit")


def test_in_place_child_must_start_at_its_parents_last_use():
    with pytest.raises(SpyreError, match="must start at the last use of its parent 'x'.*at 2"):
        solve([buf("x", 256, 0, 3), buf("y", 256, 1, 4, in_place_parents=("x",))], 1024)


def test_in_place_child_must_start_after_its_parent():
    with pytest.raises(SpyreError, match="after the parent starts"):
        solve([buf("x", 256, 1, 2), buf("y", 256, 1, 4, in_place_parents=("x",))], 1024)


def test_in_place_child_must_be_no_larger():
    with pytest.raises(SpyreError, match="'y' \\(512 bytes\\) is larger than its parent 'x' \\(256 bytes\\)"):
        solve([buf("x", 256, 0, 2), buf("y", 512, 1, 4, in_place_parents=("x",))], 1024, solver="bestfit")


def test_unknown_parent_and_duplicate_names():
    with pytest.raises(SpyreError, match="unknown in-place parent 'nope'"):
        solve([buf("y", 256, 1, 4, in_place_parents=("nope",))], 1024)
    with pytest.raises(SpyreError, match="duplicate buffer name 'a'"):
        solve([buf("a", 256, 0, 1), buf("a", 256, 1, 2)], 1024)


def test_empty_lifetime_and_bad_size():
    with pytest.raises(SpyreError, match="lifetime \\[3, 3\\) is empty"):
        buf("a", 256, 3, 3)
    with pytest.raises(SpyreError, match="size and uses must be positive"):
        buf("a", 0, 0, 1)


# -- property: no overlap, aligned, within the limit ---------------------------------


@st.composite
def problems(draw):
    n = draw(st.integers(0, 12))
    buffers = []
    for i in range(n):
        start = draw(st.integers(0, 10))
        end = draw(st.integers(start + 1, 12))
        size = draw(st.integers(1, 700))
        parents: tuple[str, ...] = ()
        dying = [b for b in buffers if b.end - 1 == start and b.start < start and b.size >= size]
        if dying and draw(st.booleans()):
            parents = (draw(st.sampled_from(dying)).name,)
        buffers.append(Buffer(f"b{i}", size, draw(st.integers(1, 4)), draw(st.booleans()), parents,
                              start=start, end=end))
    return buffers, draw(st.integers(0, 2048)), draw(st.sampled_from([1, 64, 128]))


@pytest.mark.parametrize("solver", SOLVERS)
@settings(max_examples=200, deadline=None)
@given(problem=problems())
def test_placements_never_overlap(solver, problem):
    buffers, limit, alignment = problem
    placed = solve(buffers, limit, alignment, solver)
    assert list(placed) == [b.name for b in buffers]
    live = [(b, placed[b.name]) for b in buffers if placed[b.name] is not None]
    for b, off in live:
        assert off % alignment == 0 and 0 <= off and off + b.size <= limit
    for i, (b, ob) in enumerate(live):
        for c, oc in live[i + 1:]:
            in_place = ob == oc and (b.name in c.in_place_parents or c.name in b.in_place_parents)
            if b.overlaps(c) and not in_place:
                sb, sc = -(-b.size // alignment) * alignment, -(-c.size // alignment) * alignment
                assert ob + sb <= oc or oc + sc <= ob, (b, ob, c, oc)


@settings(max_examples=200, deadline=None)
@given(problem=problems())
def test_interference_is_every_pair_of_overlapping_lifetimes(problem):
    buffers, _, _ = problem
    found = interference(buffers)
    assert found == {b.name: [c.name for c in buffers if c is not b and b.overlaps(c)] for b in buffers}


@settings(max_examples=100, deadline=None)
@given(problem=problems())
def test_everything_fits_in_an_unbounded_memory(problem):
    buffers, _, alignment = problem
    limit = sum(-(-b.size // alignment) * alignment for b in buffers)
    for solver in SOLVERS:
        assert None not in solve(buffers, limit, alignment, solver).values()


# -- the pass in the pipeline -------------------------------------------------------


def _compile(tmp_path, text: str, **options):
    from spyre_mlir.mlir_text import make_context, parse_module
    from spyre_mlir.pipeline import CompileOptions, compile_module

    module = parse_module(make_context(), text, "seed.mlir")
    return compile_module(module, tmp_path / "out", CompileOptions(**options))


def _inputs(shape: tuple[int, int]) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(np.float16) for _ in range(3)]


def _check_close(got: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float32), expected, rtol=1e-2, atol=1e-2)


def test_seed_example_untiled_keeps_y_in_lx(tmp_path):
    from spyre_mlir.interpreter import run

    out = _compile(tmp_path, seed_program(1024, 4096), cores=32)
    a, b, c = _inputs((1024, 4096))
    outputs, stats = run(out, [a, b, c])
    totals = stats.as_dict()
    eight_mib = 8 * 1024 * KIB
    assert totals["hbm_bytes_read"] + totals["hbm_bytes_written"] == 4 * eight_mib  # a, b, c in; z out
    assert totals["lx_peak_bytes"] == 256 * KIB  # y: 8 MiB over 32 cores
    assert totals["lx_bytes_written"] == totals["lx_bytes_read"] == eight_mib
    _check_close(outputs["z"], (a.astype(np.float32) + b.astype(np.float32)) * c.astype(np.float32))


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_copy_out_end_to_end(tmp_path, cores):
    """y is returned and read by the mul in a loop: it stays in LX for the mul and an identity
    copies each tile out, so y crosses HBM once (written), not twice."""
    from spyre_mlir.interpreter import run

    out = _compile(tmp_path, seed_program(256, 512, "#spyre.hint<0, tiles = {A = 2}>", returns_y=True),
                   cores=cores)
    op_funcs = [next(iter(json.loads(p.read_text()))) for p in sorted(out.glob("sdsc_*.json"))]
    assert op_funcs == ["0_add", "1_identity", "2_mul"]
    a, b, c = _inputs((256, 512))
    outputs, stats = run(out, [a, b, c])
    tile_bytes = 128 * 512 * 2
    assert [(op.hbm_bytes_read, op.hbm_bytes_written) for op in stats.ops] == \
        [(2 * 2 * tile_bytes, 0), (0, 2 * tile_bytes), (2 * tile_bytes, 2 * tile_bytes)]  # two iterations each
    y = a.astype(np.float32) + b.astype(np.float32)
    _check_close(outputs["y"], y)
    _check_close(outputs["z"], y * c.astype(np.float32))


# -- LX options through the pipeline, spyre-compile and spyre_mlir.compile ------------------


def test_compile_stages_pass_the_lx_options_to_plan_memory_and_the_target():
    from spyre_mlir.pipeline import compile_stages

    stages = {s.name: s for s in compile_stages(4, lx_solver="bestfit", lx_fraction=0.5)}
    assert stages["spyre-plan-memory"].lx_solver == "bestfit"
    assert (stages["spyre-attach-target"].cores, stages["spyre-attach-target"].lx_fraction) == (4, 0.5)


def test_lx_fraction_reaches_the_plan(tmp_path):
    """The back end keeping 90% of LX leaves 198,784 bytes: y's 256 KiB per core goes to the pool
    (of the untiled program: spyre-auto-tile would tile it to fit)."""
    from spyre_mlir.manifest import read_manifest

    def pooled(**options) -> bool:
        out = _compile(tmp_path / str(len(list(tmp_path.iterdir()))), seed_program(1024, 4096), cores=32,
                       auto_tile=False, **options)
        return any(arg.role == "pool" for arg in read_manifest(out).args)

    assert not pooled(lx_solver="firstfit")
    assert pooled(lx_solver="firstfit", lx_fraction=0.9)


def test_the_interpreter_enforces_the_lx_the_compile_planned_with(tmp_path):
    """y's 1,835,008 bytes on one core fit LX only when the back end keeps none of it (the
    program untiled).

    The manifest records the compile's fraction, so the interpreter runs the
    program; the same directory claiming the default fraction is rejected.
    """
    from spyre_mlir.diagnostics import SpyreError
    from spyre_mlir.interpreter import run
    from spyre_mlir.manifest import read_manifest

    text = seed_program(1024, 896)
    default = _compile(tmp_path / "default", text, cores=1, auto_tile=False)
    assert any(arg.role == "pool" for arg in read_manifest(default).args)
    out = _compile(tmp_path / "all", text, cores=1, lx_fraction=0.0, auto_tile=False)
    assert read_manifest(out).backend_lx_fraction == 0.0
    assert not any(arg.role == "pool" for arg in read_manifest(out).args)
    a, b, c = _inputs((1024, 896))
    outputs, _ = run(out, [a, b, c])
    y = a.astype(np.float32) + b.astype(np.float32)
    _check_close(outputs["z"], y * c.astype(np.float32))

    manifest = out / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"backend_lx_fraction": 0.0', '"backend_lx_fraction": 0.2'))
    with pytest.raises(SpyreError, match="exceeds the usable LX of 1625344 bytes"):
        run(out, [a, b, c])


@pytest.mark.parametrize("flag, value, message", [
    ("--lx-solver", "worstfit", "argument --lx-solver: invalid choice: 'worstfit' (choose from auto, greedy, "
                                "firstfit, bestfit, valuefit)"),
    ("--lx-fraction", "1.5", "argument --lx-fraction: backend_lx_fraction must satisfy 0 <= fraction < 1, "
                             "got 1.5"),
])
def test_spyre_compile_rejects_bad_lx_options(tmp_path, capsys, flag, value, message):
    from spyre_mlir.tools.spyre_compile import main

    source = tmp_path / "seed.mlir"
    source.write_text(seed_program(64, 128))
    assert main([str(source), "-o", str(tmp_path / "out"), flag, value]) == 1
    assert capsys.readouterr().err.splitlines() == [f"spyre-compile: error: {message}"]
    assert not (tmp_path / "out").exists()


def test_spyre_compile_lx_options(tmp_path):
    from spyre_mlir.manifest import read_manifest
    from spyre_mlir.tools.spyre_compile import main

    source = tmp_path / "seed.mlir"
    source.write_text(seed_program(1024, 4096))
    out = tmp_path / "out"
    assert main([str(source), "-o", str(out), "--cores", "32", "--lx-solver", "bestfit", "--lx-fraction", "0.9",
                 "--no-auto-tile"]) == 0
    assert [arg.role for arg in read_manifest(out).args] == ["input", "input", "input", "output", "pool"]


def test_compile_api_takes_an_lx_solver(tmp_path):
    torch = pytest.importorskip("torch")
    import spyre_mlir

    x = torch.randn(64, 128, dtype=torch.float16)
    program = spyre_mlir.compile(lambda t: t.exp() * t + t, (x,), cores=4, lx_solver="bestfit",
                                 out_dir=tmp_path / "api")
    got = program.run(x).numpy()
    expected = (x.float().exp() * x.float() + x.float()).numpy()
    _check_close(got, expected)
    with pytest.raises(SpyreError, match="unknown lx-solver 'nope'"):
        spyre_mlir.compile(lambda t: t + t, (x,), lx_solver="nope", out_dir=tmp_path / "bad")
    assert not (tmp_path / "bad").exists()
