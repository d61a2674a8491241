"""The importer: strict/non-strict/.pt2 agreement, examples, op coverage, view maps, errors."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.fx.traceback as fxt
import torch.nn.functional as F
from xdsl.dialects import func

import spyre_mlir
from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import ComputeOp, FillOp, MatmulOp, PointwiseOp, ViewOp
from spyre_mlir.importer import export_model, import_program, load_model
from spyre_mlir.importer.views import eval_map
from spyre_mlir.interpreter import compare, tolerance_for
from spyre_mlir.mlir_text import make_context, parse_module, verify_located

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = ["add_mul_nested.py:build", "wsr_matmul.py:build", "wsr_matmul.py:build_view",
            "softmax.py:build", "rope.py:build", "transformer_block.py:build"]

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")


def text(module):
    return str(module)


class Tiled(torch.nn.Module):
    def forward(self, a, b, c):
        with spyre_hint(tiles={"A": 2}):
            with spyre_hint(tiles={"B": 4}):
                y = a + b
                z = y * c
            return torch.softmax(z, -1) + F.gelu(z).sum(-1, keepdim=True)


def tiled_inputs():
    declare_tensor_dim("A", 64)
    declare_tensor_dim("B", 128)
    xs = tuple(torch.randn(64, 128, dtype=torch.float16) for _ in range(3))
    for x in xs:
        name_tensor_dims(x, ["A", "B"])
    return xs


def compute_ops(module):
    return [op for op in module.walk() if isinstance(op, ComputeOp)]


# --------------------------------------------------------------------------
# strict / non-strict / .pt2
# --------------------------------------------------------------------------


def test_strict_and_non_strict_agree():
    xs = tiled_inputs()
    strict = import_program(torch.export.export(Tiled(), xs, strict=True))
    with fxt.preserve_node_meta():
        loose = import_program(torch.export.export(Tiled(), xs, strict=False))
    assert text(strict) == text(loose)
    assert 'spyre.dims = [["A"], ["B"]]' in text(strict)
    hints = [[h.hint_id.data for h in op.get_hints()] for op in compute_ops(strict)]
    assert [1, 2] in hints and [1] in hints  # outer id < inner id, outer alone after the inner scope
    assert all(h == sorted(h) for h in hints)


def test_non_strict_without_preserve_warns():
    xs = tiled_inputs()
    with pytest.warns(UserWarning, match="lost"):
        ep = torch.export.export(Tiled(), xs, strict=False)
    assert "spyre.hint" not in text(import_program(ep))


def test_pt2_round_trip(tmp_path):
    xs = tiled_inputs()
    ep = export_model(Tiled(), xs)
    path = tmp_path / "tiled.pt2"
    torch.export.save(ep, str(path))
    names = {"a": ["A", "B"], "b": ["A", "B"], 2: [["A"], ["B"]]}
    direct = import_program(ep, named_dims=names)
    loaded = import_program(torch.export.load(str(path)), named_dims=names)
    assert text(direct) == text(loaded)
    assert text(direct).count('spyre.dims = [["A"], ["B"]]') == 3
    # the CLI reads .pt2 too
    out = subprocess.run(["spyre-import", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "#spyre.hint<2, tiles = {B = 4}>" in out.stdout


def test_import_spyre_mlir_does_not_import_torch():
    code = "import sys, spyre_mlir, spyre_mlir.mlir_text; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------
# examples: verify, round trip through spyre-opt
# --------------------------------------------------------------------------


@pytest.mark.parametrize("spec", EXAMPLES)
def test_example_verifies_and_round_trips(spec):
    module = import_program(load_model(os.path.join(ROOT, "examples", spec)).program)
    verify_located(module)
    printed = text(module)
    assert text(parse_module(make_context(), printed, "in.mlir")) == printed
    out = subprocess.run(["spyre-opt"], input=printed, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == printed.strip()


def test_transformer_layers_stack():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import transformer_block
    finally:
        sys.path.pop(0)
    model, inputs = transformer_block.build_layers(2)
    module = import_program(export_model(model, inputs))
    verify_located(module)
    assert sum(isinstance(op, MatmulOp) for op in module.walk()) == 2 * 9


# --------------------------------------------------------------------------
# op coverage
# --------------------------------------------------------------------------

X = (torch.randn(4, 64),)
XX = (torch.randn(4, 64), torch.randn(4, 64))
COVERAGE = [
    ("add", lambda x, y: x + y, XX, ["add"]),
    ("add_scalar_alpha", lambda x, y: torch.add(x, y, alpha=2) + 3, XX, ["mul", "add"]),
    ("sub", lambda x, y: x - y, XX, ["sub"]),
    ("rsub", lambda x: 2 - x, X, ["sub"]),
    ("mul", lambda x, y: x * y * 0.5, XX, ["mul"]),
    ("div", lambda x, y: x / y / 4, XX, ["realdiv"]),
    ("neg", lambda x: -x, X, ["neg"]),
    ("exp", torch.exp, X, ["exp"]),
    ("log", torch.log, X, ["log"]),
    ("sqrt", torch.sqrt, X, ["sqrt"]),
    ("rsqrt", torch.rsqrt, X, ["rsqrt"]),
    ("reciprocal", torch.reciprocal, X, ["reciprocal"]),
    ("abs", torch.abs, X, ["abs"]),
    ("tanh", torch.tanh, X, ["tanh"]),
    ("sigmoid", torch.sigmoid, X, ["sigmoid"]),
    ("relu", torch.relu, X, ["relufwd"]),
    ("gelu", F.gelu, X, ["gelufwd"]),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), X, ["tanh", "mul", "add"]),
    ("silu", F.silu, X, ["silu"]),
    ("softplus", F.softplus, X, ["softplus"]),
    ("clamp", lambda x: torch.clamp(x, -1, 1), X, ["clip"]),
    ("clamp_tensor", lambda x, y: torch.clamp(x, y, y + 1), XX, ["maximum", "minimum"]),
    ("relu6", F.relu6, X, ["clip"]),
    ("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.25), X, ["clip"]),
    ("maximum", torch.maximum, XX, ["maximum"]),
    ("minimum", torch.minimum, XX, ["minimum"]),
    ("where_gt", lambda x, y: torch.where(x > 0.5, x, y), XX, ["lesserequal", "sub", "where3"]),
    ("where_lt_scalar", lambda x: torch.where(x < 0, x, 0.0), X, ["greaterequal", "where3"]),
    ("eq_ne", lambda x, y: (x == y).to(x.dtype) + (x != 1).to(x.dtype), XX, ["equal", "notequal"]),
    ("ge_le", lambda x, y: torch.where(x >= y, x, y) + torch.where(x <= y, x, y), XX,
     ["greaterequal", "lesserequal"]),
    ("pow2", lambda x: x.pow(2), X, ["mul"]),
    ("pow3", lambda x: x.pow(3), X, ["mul", "mul"]),
    ("pow_half", lambda x: x.pow(0.5) + x.pow(-1) + x.pow(-0.5), X, ["sqrt", "reciprocal", "rsqrt"]),
    ("log1p", torch.log1p, X, ["add", "log"]),
    ("sum", lambda x: x.sum(-1), X, ["sum"]),
    ("sum_keepdim", lambda x: x.sum(0, keepdim=True), X, ["sum"]),
    ("sum_all", lambda x: x.sum(), X, ["sum"]),
    ("amax", lambda x: x.amax(1), X, ["max"]),
    ("amin", lambda x: x.amin(0, keepdim=True), X, ["min"]),
    ("max_dim", lambda x: x.max(1).values, X, ["max"]),
    ("mean", lambda x: x.mean(-1, keepdim=True), X, ["mean"]),
    ("mean_all", lambda x: x.mean(), X, ["mean"]),
    ("mm", lambda x, y: x @ y.t(), XX, ["batchmatmul"]),
    ("bmm", lambda x, y: torch.bmm(x.view(2, 2, 64), y.view(2, 2, 64).transpose(1, 2)), XX, ["batchmatmul"]),
    ("matmul3d", lambda x, y: x.view(2, 2, 64) @ y.t(), XX, ["batchmatmul"]),
    ("softmax", lambda x: torch.softmax(x, -1), X, ["max", "sub", "exp", "sum", "realdiv"]),
    ("log_softmax", lambda x: F.log_softmax(x, 0), X, ["max", "sub", "exp", "sum", "log"]),
    ("layer_norm", lambda x, y: F.layer_norm(x, (64,), y[0], y[1]), XX, ["mean", "sub", "mul", "rsqrt", "add"]),
    ("rms_norm", lambda x: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6), X, ["mul", "mean", "rsqrt"]),
    ("to_fp16", lambda x: x.to(torch.float16), X, ["identity"]),
    ("to_bf16", lambda x: x.to(torch.bfloat16) * 2, X, ["identity", "mul"]),
    ("full", lambda x: x + torch.full((64,), 2.0) + torch.zeros(4, 64) + torch.ones(64), X, ["add"]),
    ("scalar_where", lambda x: torch.where(x > 0, x, torch.tensor(0.0)), X, ["where3"]),
    ("views", lambda x: x.reshape(16, 16).t().unsqueeze(0).squeeze(0).flatten().view(4, 64) * 1, X, ["mul"]),
    ("slice_select", lambda x: x[1:3, ::2][0] * 1, X, ["mul"]),
    ("expand", lambda x: x[:1].expand(4, 64).contiguous().clone() * 1, X, ["mul"]),
]


class Wrap(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


@pytest.mark.parametrize("name, fn, inputs, op_funcs", COVERAGE, ids=[c[0] for c in COVERAGE])
def test_op_coverage(name, fn, inputs, op_funcs):
    module = import_program(torch.export.export(Wrap(fn), inputs))
    verify_located(module)
    found = {op.op_func().name for op in compute_ops(module)}
    assert set(op_funcs) <= found, found


class _InvertedResidual(torch.nn.Module):
    """MobileNetV2's expansion: a pointwise convolution as a Linear, then ReLU6 (``hardtanh(0, 6)``)."""

    def __init__(self) -> None:
        super().__init__()
        self.expand = torch.nn.Linear(64, 128)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(F.relu6(self.expand(x) * 4), -2.0, 5.0)


@pytest.mark.parametrize("cores", [1, 4, 32])
def test_relu6_and_hardtanh_clip_as_eager_does(cores):
    """``aten.hardtanh`` (MobileNetV2's ReLU6) is a clip to its bounds; it was an unsupported op."""
    torch.manual_seed(0)
    module, x = _InvertedResidual().half().eval(), torch.randn(32, 64, dtype=torch.float16)
    with torch.no_grad():
        want = module(x)
        got = spyre_mlir.compile(module, (x,), cores=cores).run(x)
    assert float(want.max()) == 5.0 and float(want.min()) == 0.0  # both bounds are reached
    compare("relu6", got.numpy(), want.numpy(), tolerance_for("float16"))


class _Twice(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x.exp()
        return y, y


class _InputBack(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x, x + 1


class _ParameterBack(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 128, dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x + self.w, self.w


@pytest.mark.parametrize("module, names", [(_Twice, ["exp", "exp_1"]), (_InputBack, ["x_1", "add"]),
                                           (_ParameterBack, ["add", "p_w_1"])])
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_an_output_returned_twice_or_an_argument_returned_is_a_copy_of_its_own(module, names, cores):
    """``return y, y``, ``return x, x + 1`` and ``return x + w, w`` are valid PyTorch: the repeated
    or returned tensor is copied into a result of its own, named apart (the manifest names every
    argument and result once; this was an error naming that rule).  Each matches eager."""
    torch.manual_seed(0)
    model, x = module().eval(), torch.randn(8, 128, dtype=torch.float16)
    (function,) = import_program(export_model(model, (x,))).ops
    assert [a.data["spyre.name"].data for a in function.res_attrs.data] == names
    with torch.no_grad():
        want = model(x)
        got = spyre_mlir.compile(model, (x,), cores=cores).run(x)
    for g, w in zip(got, want, strict=True):
        compare("output", g.numpy(), w.detach().numpy(), tolerance_for("float16"))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_dtypes(dtype):
    x = torch.randn(4, 64, dtype=dtype)
    module = import_program(torch.export.export(Wrap(lambda x: torch.softmax(x * 2, -1)), (x,)))
    verify_located(module)
    assert {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[
        str(module.body.block.first_op.function_type.inputs.data[0].element_type)] == dtype


def test_fill_ops():
    module = import_program(torch.export.export(Wrap(lambda x: x + torch.full((64,), 2.0)), X))
    fills = [op for op in module.walk() if isinstance(op, FillOp)]
    assert [f.fill_value() for f in fills] == [2.0]


def test_parameters_and_buffers_are_marked():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 64)
            self.register_buffer("scale", torch.ones(64))

        def forward(self, x):
            return self.lin(x) * self.scale

    f = next(op for op in import_program(torch.export.export(M(), X)).walk() if isinstance(op, func.FuncOp))
    roles = [(a.data["spyre.role"].data, a.data["spyre.name"].data) for a in f.arg_attrs.data]
    assert roles == [("parameter", "p_lin_weight"), ("parameter", "p_lin_bias"), ("buffer", "b_scale"),
                     ("input", "x")]
    assert [op.op_func().name for op in compute_ops(f)] == ["batchmatmul", "add", "mul"]


def test_hints_on_every_op_of_a_decomposition():
    declare_tensor_dim("R", 4)

    def fn(x):
        with spyre_hint(tiles={"R": 2}):
            return F.layer_norm(x, (64,))

    module = import_program(export_model(fn, X))
    ops = compute_ops(module)
    assert len(ops) >= 6
    assert all([h.tile_counts() for h in op.get_hints()] == [{"R": 2}] for op in ops)
    assert all(not isinstance(op, ComputeOp) or op.hints is not None for op in ops)
    views = [op for op in module.walk() if isinstance(op, ViewOp)]
    assert all("hints" not in op.properties for op in views)


# --------------------------------------------------------------------------
# view maps, checked numerically against torch
# --------------------------------------------------------------------------


def _source_coords(value, coords):
    """Follow spyre.view ops from ``value`` back to a block argument."""
    while isinstance(value.owner, ViewOp):
        view = value.owner
        coords = eval_map(view.map.data, coords)
        value = view.source
    return value, coords


VIEWS = [
    ("reshape_split", lambda x: x.reshape(2, 3, 4, 5), (6, 20)),
    ("reshape_merge", lambda x: x.reshape(24, 5), (2, 3, 4, 5)),
    ("reshape_mixed", lambda x: x.reshape(4, 6), (6, 4)),
    ("reshape_ones", lambda x: x.reshape(1, 12, 1, 2), (4, 6)),
    ("flatten", lambda x: x.flatten(1), (3, 4, 5)),
    ("permute", lambda x: x.permute(2, 0, 1), (3, 4, 5)),
    ("transpose", lambda x: x.transpose(0, 2), (3, 4, 5)),
    ("t", lambda x: x.t(), (3, 5)),
    ("unsqueeze_squeeze", lambda x: x.unsqueeze(1).unsqueeze(-1).squeeze(-1), (3, 5)),
    ("slice_step", lambda x: x[1:7:3, 2:], (8, 6)),
    ("slice_negative", lambda x: x[:, -3:], (4, 6)),
    ("select", lambda x: x[:, 2], (4, 6, 3)),
    ("select_negative", lambda x: x[-1], (4, 6)),
    ("expand", lambda x: x.expand(3, 4, 5), (4, 1)),
    ("expand_rank", lambda x: x[None].expand(2, 4, 5), (1, 5)),
    ("permute_reshape", lambda x: x.permute(1, 0).reshape(5, 2, 3), (6, 5)),
]


@pytest.mark.parametrize("name, fn, shape", VIEWS, ids=[v[0] for v in VIEWS])
def test_view_maps_match_torch(name, fn, shape):
    x = torch.arange(int(np.prod(shape)), dtype=torch.float32).reshape(shape)
    expected = fn(x).contiguous().numpy()
    # A product of two tensors reads the view (one of a scalar would compute on an expand's source).
    module = import_program(torch.export.export(Wrap(lambda x: fn(x) * fn(x)), (x,)))
    mul = next(op for op in module.walk() if isinstance(op, PointwiseOp))
    source = x.numpy()
    assert any(isinstance(op, ViewOp) for op in module.walk())
    for coords in np.ndindex(*expected.shape):
        arg, src = _source_coords(mul.inputs[0], coords)
        assert source[src] == expected[coords], (coords, src)


def test_an_elementwise_op_of_an_expanding_view_computes_on_its_source():
    # repeat_kv's expand of 2 K/V heads to 4, cast and scaled: both run on the 2 heads, and the
    # result is read through the expand; the product of two tensors still reads the expand.
    def fn(k):
        k4 = k[:, :, None].expand(1, 2, 2, 8, 64).reshape(1, 4, 8, 64).float()
        return k4 * 0.5, k4 * k4

    k = torch.randn(1, 2, 8, 64).half()
    module = import_program(torch.export.export(Wrap(fn), (k,)))
    shapes = {(op.op_func().name, tuple(op.result.type.get_shape())) for op in module.walk()
              if isinstance(op, PointwiseOp)}
    assert shapes == {("identity", (1, 2, 8, 64)), ("mul", (1, 2, 8, 64)), ("mul", (1, 4, 8, 64))}


def test_view_map_check_can_fail():
    # The checker above compares distinct values, so a wrong map is caught: a
    # permutation read the wrong way round ([3, 4, 5] -> [5, 3, 4]).
    from spyre_mlir.importer.views import permute_map

    x = np.arange(60).reshape(3, 4, 5)
    expected = x.transpose(2, 0, 1)
    right, wrong = permute_map((3, 4, 5), (2, 0, 1)), permute_map((3, 4, 5), (1, 2, 0))
    assert all(x[eval_map(right, c)] == expected[c] for c in np.ndindex(*expected.shape))
    with pytest.raises((AssertionError, IndexError)):
        for c in np.ndindex(*expected.shape):
            assert x[eval_map(wrong, c)] == expected[c]


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------


def test_unsupported_op_names_op_and_line():
    def fn(x):
        y = x + 1
        return torch.cumprod(y, 0)  # the line of the error

    line = fn.__code__.co_firstlineno + 2
    with pytest.raises(SpyreError) as err:
        import_program(export_model(fn, X))
    assert err.value.msg == "unsupported ATen op 'aten.cumprod.default'"
    assert err.value.location() == f"{__file__}:{line}"


def test_every_unsupported_op_is_in_one_error():
    """One run names every op the importer lacks, with its count and first model line."""
    def fn(x):
        y = torch.cumprod(x, 0)  # first cumprod
        z = torch.cumprod(y, 1)
        return torch.sort(z, 0).values  # the sort

    first = fn.__code__.co_firstlineno + 1
    with pytest.raises(SpyreError) as err:
        import_program(export_model(fn, X))
    assert err.value.msg == (f"unsupported ATen ops: 'aten.cumprod.default' (2 times, first at {__file__}:{first}), "
                             f"'aten.sort.default' (once, first at {__file__}:{first + 2})")
    assert err.value.location() == f"{__file__}:{first}"


DATA_DEPENDENT = ("the program has a data-dependent output shape: the size of what '{op}' returns depends on the "
                  "values of its input, and Spyre compiles static shapes only; keep the shape static with a mask, "
                  "e.g. torch.where(mask, x, 0) instead of x[mask] or torch.nonzero")


@pytest.mark.parametrize("select, op", [
    (lambda x: x[x > 0], "aten.index.Tensor"),
    (torch.nonzero, "aten.nonzero.default"),
])
def test_data_dependent_shape_is_named_at_its_line(select, op):
    """A boolean mask index or torch.nonzero is one error saying what is wrong and what to do, not
    the list of ops torch adds to check the size it cannot know."""
    def fn(x):
        y = x * 2
        return select(y) + 1  # the line of the error

    line = fn.__code__.co_firstlineno + 2
    with pytest.raises(SpyreError) as err:
        import_program(export_model(fn, X))
    assert err.value.msg == DATA_DEPENDENT.format(op=op)
    assert err.value.location() == f"{__file__}:{line}"


def test_a_tensor_read_into_python_is_named_at_its_line():
    def fn(x):
        return x * 2 + x.sum().item()  # the line of the error

    with pytest.raises(SpyreError) as err:
        import_program(export_model(fn, X))
    assert err.value.msg.startswith("the program reads a tensor's value into Python "
                                    "('aten._local_scalar_dense.default', as .item()")
    assert err.value.location() == f"{__file__}:{fn.__code__.co_firstlineno + 1}"


def test_example_inputs_that_are_not_a_tuple_are_one_error():
    with pytest.raises(SpyreError, match=r"^the example inputs must be a tuple of the model's inputs, got Tensor: "
                                         r"pass \(x,\) for one input x$"):
        export_model(lambda x: x + 1, X[0])


def test_unsupported_form_is_one_error():
    with pytest.raises(SpyreError, match=r"unsupported ATen op 'aten.pow.Tensor_Scalar': exponent 2.5"):
        import_program(torch.export.export(Wrap(lambda x: x.pow(2.5)), X))


def test_dynamic_shapes_rejected():
    class AddOne(torch.nn.Module):
        def forward(self, x):
            return x + 1

    batch = torch.export.Dim("batch", min=2, max=64)
    ep = torch.export.export(AddOne(), (torch.randn(4, 64),), dynamic_shapes=({0: batch},))
    with pytest.raises(SpyreError, match=r"dynamic shape \[s\d+, 64\] of .* is unsupported: .*static KV cache "
                                         r"\(transformers' TorchExportableModuleWithStaticCache"):
        import_program(ep)


def test_cli_error_is_one_line_located_at_the_model_as_named():
    out = subprocess.run(["spyre-import", "test/Import/Inputs/unsupported_sort.py:build"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.strip() == ("test/Import/Inputs/unsupported_sort.py:6: error: unsupported ATen op "
                                  "'aten.sort.default'")


@pytest.mark.parametrize("fn, x, message", [
    (lambda x: x + 1, torch.zeros(0, 64), r"<node x>: error: graph input 'x' has the empty shape \[0, 64\]"),
    (lambda x: x[:, 64:] * 2, torch.zeros(4, 64), r"test_import.py:\d+: error: unsupported ATen op 'aten.mul.Tensor': "
                                                   r"it computes on a tensor of shape \[4, 0\]"),
    (lambda x: (x * 2, x[:, 64:]), torch.zeros(4, 64), r"graph output 'slice_1' has the empty shape \[4, 0\]"),
    (lambda x: x.view(2, 2, 64)[..., 64:] @ x.view(2, 2, 64)[..., 64:].transpose(-1, -2), torch.zeros(4, 64),
     r"test_import.py:\d+: error: unsupported ATen op 'aten.view.default': it reshapes a tensor of shape \[2, 2, 0\]"),
])
def test_an_empty_tensor_is_one_located_error(fn, x, message):
    """A tensor with a 0-size dim once ended in ``internal error: ZeroDivisionError`` (naming dims)
    or in an error without a line (stick layouts); an empty piece of a cat is still dropped."""
    with pytest.raises(SpyreError) as e:
        import_program(export_model(fn, (x.half(),)))
    assert re.search(message, e.value.format("model.py")), e.value.format("model.py")


def test_cli_output_dash_is_stdout(tmp_path):
    """``-o -`` prints the module on stdout, as mlir-opt does, instead of writing a file named ``-``."""
    spyre_import = os.path.join(os.path.dirname(sys.executable), "spyre-import")
    out = subprocess.run([spyre_import, os.path.join(ROOT, "examples", "add_mul_nested.py:build"), "-o", "-"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert 'spyre.pointwise "add"' in out.stdout
    assert not (tmp_path / "-").exists()
