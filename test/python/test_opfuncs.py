"""Tests of the op-func table: DESIGN §5 names, kinds, identities and combines, and numpy semantics checked against torch."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from spyre_mlir import opfuncs
from spyre_mlir.opfuncs import OP_FUNCS, OpKind

DESIGN_NAMES = (
    "add", "sub", "mul", "realdiv", "maximum", "minimum", "neg", "exp", "log", "sqrt", "rsqrt",
    "reciprocal", "abs", "tanh", "sigmoid", "relufwd", "gelufwd", "silu", "softplus", "clip",
    "equal", "notequal", "greaterequal", "lesserequal", "where3", "identity", "sum", "max", "min",
    "mean", "batchmatmul",
)
BINARY = ("add", "sub", "mul", "realdiv", "maximum", "minimum",
          "equal", "notequal", "greaterequal", "lesserequal")
REDUCTIONS = ("sum", "max", "min", "mean")

# Relative tolerance against torch; values below ATOL in magnitude are compared absolutely
# (in the far negative tail of gelu, 1 + erf(x) cancels in float32, in torch as here).
RTOL, ATOL = 1e-5, 1e-6


def test_design_names_are_all_in_the_table():
    missing = [n for n in DESIGN_NAMES if n not in OP_FUNCS]
    assert not missing, f"op funcs of DESIGN §5 missing from the table: {missing}"
    assert all(opfuncs.lookup(n) is OP_FUNCS[n] for n in DESIGN_NAMES)
    assert opfuncs.lookup("nosuch") is None


def test_kinds_and_arities():
    for name in DESIGN_NAMES:
        func = OP_FUNCS[name]
        assert func.name == name
        if name in REDUCTIONS:
            assert func.kind is OpKind.REDUCTION and func.arity == 1
        elif name == "batchmatmul":
            assert func.kind is OpKind.MATMUL and func.arity == 2
        else:
            assert func.kind is OpKind.POINTWISE, name
            expected = 2 if name in BINARY else 3 if name == "where3" else 1
            assert func.arity == expected, name
    for kind in OpKind:
        assert opfuncs.names_of_kind(kind) == tuple(n for n, f in OP_FUNCS.items() if f.kind is kind)


def test_ex_unit_is_pt_only_for_matmul():
    for func in OP_FUNCS.values():
        assert (func.ex_unit == "pt") == (func.kind is OpKind.MATMUL), func.name
        assert func.ex_unit in ("pt", "sfp")


@pytest.mark.parametrize("name", [f.name for f in OP_FUNCS.values()
                                  if f.kind in (OpKind.REDUCTION, OpKind.MATMUL)])
def test_accumulating_op_funcs_have_a_neutral_pointwise_combine(name):
    func = OP_FUNCS[name]
    assert func.identity is not None, f"{name} has no identity"
    assert func.combine is not None, f"{name} has no combine"
    combine = opfuncs.lookup(func.combine)
    assert combine is not None and combine.kind is OpKind.POINTWISE and combine.arity == 2, func.combine
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    init = np.full_like(x, func.identity)
    np.testing.assert_array_equal(combine.compute(x, init), x)
    np.testing.assert_array_equal(combine.compute(init, x), x)


@pytest.mark.parametrize("name", ["sum", "max", "min"])
def test_combine_merges_partial_reductions(name):
    func = OP_FUNCS[name]
    combine = OP_FUNCS[func.combine]
    x = np.random.default_rng(1).standard_normal((4, 10)).astype(np.float32)
    acc = np.full((4, 1), func.identity, dtype=np.float32)
    for start in range(0, 10, 3):                      # uneven tiles of the reduced dim
        acc = combine.compute(acc, func.compute(x[:, start:start + 3], axis=(1,)))
    np.testing.assert_allclose(acc, func.compute(x, axis=(1,)), rtol=RTOL)


def test_combine_merges_partial_matmuls():
    func = OP_FUNCS["batchmatmul"]
    combine = OP_FUNCS[func.combine]
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 8)).astype(np.float32)
    b = rng.standard_normal((8, 5)).astype(np.float32)
    acc = np.full((2, 3, 5), func.identity, dtype=np.float32)
    for k in range(0, 8, 4):                            # K split in two
        acc = combine.compute(acc, func.compute(a[..., k:k + 4], b[k:k + 4]))
    np.testing.assert_allclose(acc, func.compute(a, b), rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------
# numpy semantics vs torch
# --------------------------------------------------------------------------


def _positive(x):
    return np.abs(x) + 0.1


def _away_from_zero(x):
    return np.where(x < 0, x - 0.5, x + 0.5).astype(x.dtype)


def _torch_reference(torch):
    """op func -> (torch function of tensors and params, input transform, params to try)."""
    F = torch.nn.functional
    same = None
    return {
        "add": (torch.add, same, [{}]),
        "sub": (torch.sub, same, [{}]),
        "mul": (torch.mul, same, [{}]),
        "realdiv": (lambda x, y: torch.div(x, y), (None, _away_from_zero), [{}]),
        "maximum": (torch.maximum, same, [{}]),
        "minimum": (torch.minimum, same, [{}]),
        "neg": (torch.neg, same, [{}]),
        "exp": (torch.exp, same, [{}]),
        "log": (torch.log, (_positive,), [{}]),
        "sqrt": (torch.sqrt, (_positive,), [{}]),
        "rsqrt": (torch.rsqrt, (_positive,), [{}]),
        "reciprocal": (torch.reciprocal, (_away_from_zero,), [{}]),
        "abs": (torch.abs, same, [{}]),
        "tanh": (torch.tanh, same, [{}]),
        "sigmoid": (torch.sigmoid, same, [{}]),
        "relufwd": (torch.relu, same, [{}]),
        "gelufwd": (F.gelu, same, [{}]),
        "silu": (F.silu, same, [{}]),
        "softplus": (lambda x, beta=1.0, threshold=20.0: F.softplus(x, beta=beta, threshold=threshold),
                     same, [{}, {"beta": 2.0, "threshold": 3.0}]),
        "clip": (lambda x, min=None, max=None: torch.clamp(x, min=min, max=max),
                 same, [{"min": -0.5, "max": 0.7}, {"min": -1.0}, {"max": 0.0}]),
        "equal": (lambda x, y: torch.eq(x, y).float(), same, [{}]),
        "notequal": (lambda x, y: torch.ne(x, y).float(), same, [{}]),
        "greaterequal": (lambda x, y: torch.ge(x, y).float(), same, [{}]),
        "lesserequal": (lambda x, y: torch.le(x, y).float(), same, [{}]),
        "where3": (lambda c, x, y: torch.where(c.bool(), x, y), same, [{}]),
        "identity": (lambda x: x.clone(), same, [{}]),
    }


def _inputs(name: str, arity: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Random float32 inputs that broadcast together; comparisons get ties, where3 a 0/1/other cond."""
    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 3).astype(np.float32)

    if name == "where3":
        cond = rng.choice(np.array([0.0, 1.0, -2.5], dtype=np.float32), size=(3, 1, 5))
        return [cond, rand(5), rand(4, 5)]
    if arity == 1:
        return [rand(3, 4, 5)]
    x, y = rand(3, 1, 5), rand(4, 5)
    if name in ("equal", "notequal", "greaterequal", "lesserequal"):
        y = np.where(rng.random(y.shape) < 0.5, x[0, 0, :], y).astype(np.float32)
    return [x, y]


@pytest.mark.parametrize("name", [f.name for f in OP_FUNCS.values() if f.kind is OpKind.POINTWISE])
def test_pointwise_semantics_match_torch(name):
    torch = pytest.importorskip("torch")
    reference = _torch_reference(torch)
    assert name in reference, f"add a torch reference for the new pointwise op func '{name}'"
    torch_fn, transforms, param_sets = reference[name]
    func = OP_FUNCS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    xs = _inputs(name, func.arity, rng)
    if transforms is not None:
        xs = [t(x) if t is not None else x for t, x in zip(transforms, xs)] + xs[len(transforms):]
    for params in param_sets:
        assert set(params) <= set(func.params), f"{name} has no parameters {set(params) - set(func.params)}"
        got = func.compute(*xs, **{**func.params, **params})
        expected = torch_fn(*(torch.from_numpy(x) for x in xs), **params).numpy()
        assert got.shape == expected.shape, name
        assert got.dtype == np.float32, f"{name} computes in {got.dtype}, not the inputs' float32"
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL, err_msg=f"{name} {params}")


def test_comparisons_are_one_and_zero():
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    y = np.array([2.0, 2.0, 2.0], dtype=np.float32)
    expected = {"equal": [0, 1, 0], "notequal": [1, 0, 1], "greaterequal": [0, 1, 1], "lesserequal": [1, 1, 0]}
    for name, values in expected.items():
        np.testing.assert_array_equal(OP_FUNCS[name].compute(x, y), np.array(values, dtype=np.float32))


def test_clip_defaults_are_unbounded():
    func = OP_FUNCS["clip"]
    assert func.params == {"min": -math.inf, "max": math.inf}
    x = np.array([-1e30, 0.0, 1e30], dtype=np.float32)
    np.testing.assert_array_equal(func.compute(x, **func.params), x)


@pytest.mark.parametrize("name, torch_name", [("sum", "sum"), ("max", "amax"), ("min", "amin"), ("mean", "mean")])
def test_reduction_semantics_match_torch(name, torch_name):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(np.float32)
    for axis in ((0,), (2,), (0, 2)):
        got = OP_FUNCS[name].compute(x, axis=axis)
        expected = getattr(torch, torch_name)(torch.from_numpy(x), dim=axis, keepdim=True).numpy()
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_batchmatmul_semantics_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 1, 3, 8)).astype(np.float32)
    b = rng.standard_normal((4, 8, 5)).astype(np.float32)
    got = OP_FUNCS["batchmatmul"].compute(a, b)
    expected = torch.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert got.shape == (2, 4, 3, 5)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
