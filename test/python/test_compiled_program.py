"""``spyre_mlir.compile(...).run``: a compiled program is called as its model is called and returns
what the model returns (its output structure, torch tensors of its dtypes); an input of another
dtype or shape is one error naming it, never a silent conversion."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch.utils._pytree import tree_leaves, tree_structure

import spyre_mlir
from spyre_mlir.diagnostics import SpyreError

_SEED = torch.Generator().manual_seed(0)
X = torch.randn(64, 128, generator=_SEED).to(torch.float16)
Y = torch.randn(64, 128, generator=_SEED).to(torch.float16)


class ReturnsTensor(torch.nn.Module):
    def forward(self, x, y):
        return (x + y).exp()


class ReturnsTuple(torch.nn.Module):
    """A tuple holding a flag: bool in the model, 0/1 in float16 on the device."""

    def forward(self, x, y):
        return x * y, x > y


class ReturnsDict(torch.nn.Module):
    """A dict holding a list, one of whose tensors is float32."""

    def forward(self, x, y):
        return {"sum": x + y, "parts": [x - y, (x * y).float()]}


@pytest.fixture(scope="module")
def tensor_program(tmp_path_factory):
    return spyre_mlir.compile(ReturnsTensor(), (X, Y), cores=4, out_dir=tmp_path_factory.mktemp("api") / "out")


def _assert_like_eager(got, expected) -> None:
    """``got`` has the structure, dtypes and shapes of ``expected`` and its values within float16's tolerance."""
    assert tree_structure(got) == tree_structure(expected)
    for g, e in zip(tree_leaves(got), tree_leaves(expected), strict=True):
        assert isinstance(g, torch.Tensor) and (g.dtype, g.shape) == (e.dtype, e.shape)
        torch.testing.assert_close(g, e, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("model", [ReturnsTensor(), ReturnsTuple(), ReturnsDict()], ids=lambda m: type(m).__name__)
def test_run_returns_what_the_model_returns(model, tmp_path):
    program = spyre_mlir.compile(model, (X, Y), cores=4, out_dir=tmp_path / "out")
    with torch.no_grad():
        expected = model(X, Y)
    _assert_like_eager(program.run(X, Y), expected)
    _assert_like_eager(program.run(X, y=Y), expected)  # as the model takes them: by position or by name
    _assert_like_eager(program.run(y=Y.numpy(), x=X.numpy()), expected)  # numpy arrays too


def test_run_returns_a_0d_result_0d():
    """Regression: ``x.sum()`` came back of shape [1] (numpy's ``ascontiguousarray`` makes a 0-d
    array 1-d), where the model returns a 0-d tensor."""
    class Totals(torch.nn.Module):
        def forward(self, x):
            return x.sum(), x.amax()

    x = torch.randn(4, 64)
    got = spyre_mlir.compile(Totals(), (x,), cores=1).run(x)
    assert [t.shape for t in got] == [torch.Size([]), torch.Size([])]
    torch.testing.assert_close(got[0], x.sum(), rtol=1e-4, atol=1e-4)


def test_run_returns_a_transformers_model_output(tmp_path):
    """LlamaModel returns BaseModelOutputWithPast; it is called with ``input_ids=`` (int64 token
    ids, staged as int32: int32 ids give the same result)."""
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    config = transformers.LlamaConfig(vocab_size=100, hidden_size=128, intermediate_size=256, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
                                      use_cache=False)
    torch.manual_seed(0)
    net = transformers.LlamaModel(config).to(torch.float16).eval()
    ids = torch.randint(0, 100, (1, 64), generator=torch.Generator().manual_seed(1))
    program = spyre_mlir.compile(net, (ids,), cores=4, out_dir=tmp_path / "out")
    got = program.run(input_ids=ids)
    with torch.no_grad():
        expected = net(input_ids=ids)
    assert type(got) is type(expected) is transformers.modeling_outputs.BaseModelOutputWithPast
    assert list(got.keys()) == list(expected.keys()) == ["last_hidden_state"]
    _assert_like_eager(got, expected)
    assert torch.equal(program.run(ids.to(torch.int32)).last_hidden_state, got.last_hidden_state)


def test_run_by_name_gives_the_raw_outputs_and_statistics(tensor_program):
    outputs, stats = tensor_program.run_by_name(X, Y)
    assert list(outputs) == ["exp"] and outputs["exp"].dtype == np.float16
    assert stats.total("executions") == 2
    np.testing.assert_array_equal(outputs["exp"], tensor_program.run(X, Y).numpy())


@pytest.mark.parametrize("x, message", [
    (X.double(), "input 'x' expects float16 [64, 128], given float64 [64, 128]: float64 does not convert to float16 "
                 "exactly; convert it to float16 first"),
    (X.float().numpy(), "input 'x' expects float16 [64, 128], given float32 [64, 128]: float32 does not convert to "
                        "float16 exactly; convert it to float16 first"),
    (X.to(torch.complex64), "input 'x' expects float16 [64, 128], given complex64 [64, 128]: complex64 does not "
                            "convert to float16 exactly; convert it to float16 first"),
    (X > 0, "input 'x' expects float16 [64, 128], given bool [64, 128]: bool does not convert to float16 exactly; "
            "convert it to float16 first"),
    (X.to(torch.bfloat16), "input 'x' expects float16 [64, 128], given bfloat16 [64, 128]: bfloat16 does not "
                           "convert to float16 exactly; convert it to float16 first"),
    (X[:32], "input 'x' expects float16 [64, 128], given float16 [32, 128]: the program was compiled for static "
             "shapes; compile it for [32, 128] to run those"),
], ids=["float64", "float32-numpy", "complex64", "bool", "bfloat16", "shape"])
def test_run_refuses_an_input_of_another_dtype_or_shape(tensor_program, x, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning would mean a silent conversion
        with pytest.raises(SpyreError) as info:
            tensor_program.run(x, Y)
    assert str(info.value) == message


@pytest.mark.parametrize("args, kwargs, message", [
    ((X,), {}, "run() is missing input(s) 'y'"),
    ((X, Y, X), {}, "run() takes 2 positional input(s) (x, y), given 3"),
    ((X,), {"z": Y}, "run() got an unknown input 'z' (the program's inputs: x, y)"),
    ((X, Y), {"x": X}, "run() got input 'x' twice, by position and by name"),
    (((X,), Y), {}, "run(): input 'x' is not structured as the example input the program was exported with "
                    "(a tensor, or the same tuples, lists and dicts of tensors)"),
], ids=["missing", "too-many", "unknown", "twice", "structure"])
def test_run_names_a_call_that_does_not_fit_the_model(tensor_program, args, kwargs, message):
    with pytest.raises(SpyreError) as info:
        tensor_program.run(*args, **kwargs)
    assert str(info.value) == message
