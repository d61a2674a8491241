"""spyre-coarse-tile: the tiled IR computes what the untiled IR and eager torch compute.

The tiled programs run on the numpy evaluator of ``tiled_eval`` (no bundle
lowering): compute ops through the ComputeOp interface and the op-func table,
loops, offsets and slices as written.  Tensors that a loop never writes stay
NaN, so a missed tile fails the comparison.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.importer import import_program, load_factory, load_program
from spyre_mlir.mlir_text import make_context, parse_module, verify_located
from spyre_mlir.passes.coarse_tile import CoarseTilePass
from spyre_mlir.passes.fold_views import FoldViewsPass
from spyre_mlir.passes.propagate_named_dims import PropagateNamedDimsPass
from spyre_mlir.passes.stickify import StickifyPass
from spyre_mlir.passes.work_division import WorkDivisionPass
from tiled_eval import evaluate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PREPARE = (PropagateNamedDimsPass(), StickifyPass(), FoldViewsPass())


def _prepare(module: ModuleOp) -> ModuleOp:
    ctx = make_context()
    for p in PREPARE:
        p.apply(ctx, module)
    return module


def _tiled(module: ModuleOp, **options) -> ModuleOp:
    tiled = module.clone()
    CoarseTilePass(**options).apply(make_context(), tiled)
    verify_located(tiled)
    return tiled


def _main(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.walk() if isinstance(op, func.FuncOp))


def _loops(module: ModuleOp) -> list[scf.ForOp]:
    return [op for op in module.walk() if isinstance(op, scf.ForOp)]


def _check(module: ModuleOp, args: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    tiled = _tiled(module)
    assert _loops(tiled), "expected the pass to tile"
    want = evaluate(_main(module), args)
    got = evaluate(_main(tiled), args)
    for w, g in zip(want, got, strict=True):
        assert not np.isnan(g).any(), "the tiled program leaves elements unwritten"
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9)
    return want, got


@pytest.mark.parametrize("source, loops", [
    ("add_mul_nested.py:build", 2),
    ("wsr_matmul.py:build", 2),
    ("wsr_matmul.py:build_view", 2),
    ("softmax.py:build", 1),
])
def test_examples_match_untiled_and_eager(source, loops):
    module = _prepare(import_program(load_program(str(EXAMPLES / source))))
    model, inputs = load_factory(str(EXAMPLES / source))()
    args = [t.to(torch.float64).numpy() for t in inputs]
    _, got = _check(module, args)
    assert len(_loops(_tiled(module))) == loops
    eager = model(*inputs)
    np.testing.assert_allclose(got[0], eager.to(torch.float64).numpy(), rtol=2e-2, atol=2e-2)


def test_evaluator_catches_a_wrong_offset():
    """The check can fail: a tile written at a wrong offset leaves NaN / wrong values."""
    module = _prepare(import_program(load_program(str(EXAMPLES / "add_mul_nested.py:build"))))
    tiled = _tiled(module)
    from xdsl.dialects import affine
    from xdsl.dialects.builtin import AffineMapAttr
    from xdsl.ir.affine import AffineMap
    apply = next(op for op in tiled.walk() if isinstance(op, affine.ApplyOp))
    apply.properties["map"] = AffineMapAttr(AffineMap.from_callable(lambda d0: (d0 * 0,)))
    args = [np.random.default_rng(0).standard_normal((1024, 4096)) for _ in range(3)]
    got = evaluate(_main(tiled), args)[0]
    want = evaluate(_main(module), args)[0]
    assert np.isnan(got).any() or not np.allclose(got, want)


def test_tiling_is_idempotent_and_consumes_tiles():
    module = _prepare(import_program(load_program(str(EXAMPLES / "wsr_matmul.py:build"))))
    once = _tiled(module)
    twice = _tiled(once)
    assert str(once) == str(twice)
    assert all(not h.tiles.data for op in once.walk() if isinstance(op, ComputeOp) for h in op.get_hints())


# --------------------------------------------------------------------------
# Hand-written programs
# --------------------------------------------------------------------------

def _module(body: str, args: str, result: str) -> ModuleOp:
    text = f"func.func @main({args}) -> {result} {{\n{body}\n}}"
    return _prepare(parse_module(make_context(), text, "test.mlir"))


def _arg(name: str, shape: tuple[int, ...], names: list[str]) -> str:
    dims = ", ".join(f'["{n}"]' for n in names)
    return f"%{name}: tensor<{'x'.join(map(str, shape))}xf16> {{spyre.dims = [{dims}]}}"


def _hints(tiles: list[dict[str, int]]) -> str:
    parts = [f"#spyre.hint<{i + 1}, tiles = {{{', '.join(f'{k} = {v}' for k, v in t.items())}}}>"
             for i, t in enumerate(tiles)]
    return f"{{hints = [{', '.join(parts)}]}}"


@pytest.mark.parametrize("reducer", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("dim, tiles", [(1, {"C": 4}), (0, {"R": 4}), (1, {"R": 2, "C": 2})])
def test_tiled_reductions(reducer, dim, tiles):
    out = "tensor<64x1xf16>" if dim == 1 else "tensor<1x256xf16>"
    module = _module(
        f'%r = spyre.reduce "{reducer}" (%x) dims [{dim}] {_hints([tiles])} : (tensor<64x256xf16>) -> {out}\n'
        f"func.return %r : {out}",
        _arg("x", (64, 256), ["R", "C"]), out)
    x = np.random.default_rng(1).standard_normal((64, 256))
    _check(module, [x])


@pytest.mark.parametrize("tiles", [[{"M": 4}], [{"N": 2}], [{"K": 2}], [{"M": 2}, {"K": 4}], [{"K": 2}, {"N": 2}]])
def test_tiled_matmul(tiles):
    module = _module(
        f"%p = spyre.matmul (%x, %y) {_hints(tiles)} : (tensor<32x256xf16>, tensor<256x128xf16>) -> tensor<32x128xf16>\n"
        "func.return %p : tensor<32x128xf16>",
        f'{_arg("x", (32, 256), ["M", "K"])}, {_arg("y", (256, 128), ["K", "N"])}', "tensor<32x128xf16>")
    rng = np.random.default_rng(2)
    _check(module, [rng.standard_normal((32, 256)), rng.standard_normal((256, 128))])


def test_non_divisible_count_is_an_error():
    module = _module(
        f'%r = spyre.pointwise "neg" (%x) {_hints([{"R": 3}])} : (tensor<64x64xf16>) -> tensor<64x64xf16>\n'
        "func.return %r : tensor<64x64xf16>", _arg("x", (64, 64), ["R", "C"]), "tensor<64x64xf16>")
    with pytest.raises(SpyreError, match="dim 'R' of extent 64 is not divisible by the tile count 3"):
        _tiled(module)


def test_partial_reduction_read_inside_its_loop_is_an_error():
    module = _module(
        f'%m = spyre.reduce "max" (%x) dims [1] {_hints([{"C": 2}])} : (tensor<64x128xf16>) -> tensor<64x1xf16>\n'
        f'%s = spyre.pointwise "sub" (%x, %m) {_hints([{"C": 2}])} : (tensor<64x128xf16>, tensor<64x1xf16>) -> tensor<64x128xf16>\n'
        "func.return %s : tensor<64x128xf16>", _arg("x", (64, 128), ["R", "C"]), "tensor<64x128xf16>")
    with pytest.raises(SpyreError, match="partial reduction"):
        _tiled(module)


def test_reduction_without_identity_is_an_error(monkeypatch):
    import dataclasses

    from spyre_mlir import opfuncs
    table = dict(opfuncs.OP_FUNCS)
    table["max"] = dataclasses.replace(table["max"], identity=None)
    monkeypatch.setattr(opfuncs, "OP_FUNCS", table)
    module = _module(
        f'%m = spyre.reduce "max" (%x) dims [1] {_hints([{"C": 2}])} : (tensor<64x128xf16>) -> tensor<64x1xf16>\n'
        "func.return %m : tensor<64x1xf16>", _arg("x", (64, 128), ["R", "C"]), "tensor<64x1xf16>")
    with pytest.raises(SpyreError, match="op func 'max' has no identity"):
        _tiled(module)


def test_span_overflow_gets_a_loop_that_fits():
    shape = (65536, 131072)
    module = _module(
        '%r = spyre.pointwise "neg" (%x) : (tensor<65536x131072xf16>) -> tensor<65536x131072xf16>\n'
        "func.return %r : tensor<65536x131072xf16>", _arg("x", shape, ["R", "C"]), "tensor<65536x131072xf16>")
    tiled = _tiled(module)
    (loop,) = _loops(tiled)
    # 2 tiles leave 32 stick columns x 65536 rows x 128 B = 2^28 B per core, over 65535 x 4096.
    assert loop.ub.owner.value.value.data == 4
    WorkDivisionPass().apply(make_context(), tiled)
    with pytest.raises(SpyreError, match="per-core span"):
        WorkDivisionPass().apply(make_context(), module.clone())
    assert not _loops(_tiled(module, span_tiling=False))


# --------------------------------------------------------------------------
# Random programs with random valid hints
# --------------------------------------------------------------------------

UNARY = ["neg", "abs", "tanh", "exp"]
BINARY = ["add", "sub", "mul", "maximum"]


@st.composite
def programs(draw):
    rows = draw(st.sampled_from([8, 16, 32]))
    cols = draw(st.sampled_from([64, 128, 256]))
    t = f"tensor<{rows}x{cols}xf16>"
    names = ["%x", "%y"]
    lines = []
    for i in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            op = draw(st.sampled_from(UNARY))
            lines.append(f'%v{i} = spyre.pointwise "{op}" ({draw(st.sampled_from(names))}) HINTS : ({t}) -> {t}')
        else:
            op = draw(st.sampled_from(BINARY))
            a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
            lines.append(f'%v{i} = spyre.pointwise "{op}" ({a}, {b}) HINTS : ({t}, {t}) -> {t}')
        names.append(f"%v{i}")
    result, result_t = names[-1], t
    reduce_dim = draw(st.sampled_from([None, 0, 1]))
    if reduce_dim is not None:
        out = f"tensor<{rows}x1xf16>" if reduce_dim == 1 else f"tensor<1x{cols}xf16>"
        reducer = draw(st.sampled_from(["sum", "max", "min", "mean"]))
        lines.append(f'%red = spyre.reduce "{reducer}" ({result}) dims [{reduce_dim}] HINTS : ({t}) -> {out}')
        result, result_t = "%red", out
    r_count = draw(st.sampled_from([d for d in (1, 2, 4, 8) if rows % d == 0]))
    c_count = draw(st.sampled_from([d for d in (1, 2, 4) if (cols // d) % 64 == 0]))
    tiles = [h for h in ([{"R": r_count}] if r_count > 1 else []) + ([{"C": c_count}] if c_count > 1 else [])]
    if draw(st.booleans()):
        tiles.reverse()
    if not tiles:
        tiles = [{"R": 2}]
    body = "\n".join(line.replace("HINTS", _hints(tiles)) for line in lines)
    body += f"\nfunc.return {result} : {result_t}"
    args = f'{_arg("x", (rows, cols), ["R", "C"])}, {_arg("y", (rows, cols), ["R", "C"])}'
    seed = draw(st.integers(0, 2**16))
    return body, args, result_t, (rows, cols), seed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_tile_correctly(program):
    body, args, result_t, shape, seed = program
    module = _module(body, args, result_t)
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    tiled = _tiled(module)
    want = evaluate(_main(module), [x, y])[0]
    got = evaluate(_main(tiled), [x, y])[0]
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert math.prod(got.shape) == math.prod(want.shape)
