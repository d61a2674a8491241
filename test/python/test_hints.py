"""The hint API: named dims, spyre_hint validation, ids and nesting."""

import pytest
import torch

from spyre_mlir import declare_tensor_dim, hints, name_tensor_dims, spyre_hint
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hints import HINT_KEY_PREFIX, HintError, hint_payload, tensor_dim_names


@pytest.fixture(autouse=True)
def dims(monkeypatch):
    """M, K and N declared in a registry of these tests' own: declarations are process-wide, and
    other tests (the fuzzer's programs) declare names such as 'Q' that these expect undeclared."""
    monkeypatch.setattr(hints, "_declared", {})
    declare_tensor_dim("M", 64)
    declare_tensor_dim("K", 256)
    declare_tensor_dim("N", 128)


def test_name_tensor_dims_one_per_dim():
    x = torch.randn(64, 256)
    assert name_tensor_dims(x, ["M", "K"]) is x
    assert tensor_dim_names(x) == [["M"], ["K"]]


def test_name_tensor_dims_flattened():
    x_1d = torch.randn(64 * 256)
    name_tensor_dims(x_1d, ["M", "K"])
    assert tensor_dim_names(x_1d) == [["M", "K"]]


def test_names_are_per_tensor_and_weak():
    x, y = torch.randn(64, 256), torch.randn(64, 256)
    name_tensor_dims(x, ["M", "K"])
    assert tensor_dim_names(y) is None


@pytest.mark.parametrize("names, message", [
    (["M", "Q"], "undeclared dimension name 'Q'"),
    (["K", "M"], "size mismatch: dim 0 of shape [64, 256] has extent 64"),
    (["M"], "size mismatch"),
    (["M", "K", "N"], "names ['N'] are left over"),
    (["M", "M"], "duplicate dimension name"),
])
def test_name_tensor_dims_errors(names, message):
    with pytest.raises(HintError) as err:
        name_tensor_dims(torch.randn(64, 256), names)
    assert message in str(err.value)
    assert err.value.location().startswith(f"{__file__}:")


@pytest.mark.parametrize("kw, message", [
    ({"tiles": {"M": 0}}, "tiles count for 'M' must be a positive integer, got 0"),
    ({"tiles": {"M": -2}}, "got -2"),
    ({"tiles": {"M": 2.5}}, "got 2.5"),
    ({"tiles": {"M": True}}, "got True"),
    ({"tiles": {"Z": 2}}, "undeclared dimension name 'Z'"),
    ({"tile": {"M": 2}}, "unknown keyword 'tile'"),
    ({"tiles": {"M": 2}, "slices": {"K": 2}}, "aliases"),
    ({}, "needs a non-empty tiles="),
    ({"work_div": {"M": 0}}, "work_div count for 'M'"),
])
def test_spyre_hint_errors(kw, message):
    with pytest.raises(HintError) as err:
        spyre_hint(**kw)
    assert message in str(err.value)
    assert isinstance(err.value, SpyreError) and isinstance(err.value, ValueError)


def test_declare_errors():
    with pytest.raises(HintError, match="size for 'X' must be a positive integer, got 0"):
        declare_tensor_dim("X", 0)
    with pytest.raises(HintError, match="identifier"):
        declare_tensor_dim("not a name", 4)


def test_aliases_and_work_div():
    for alias in ("tiles", "slices", "num_tiles_per_dim"):
        assert hint_payload(**{alias: {"M": 8}}) == {"tiles": {"M": 8}, "work_div": {}}
    assert hint_payload(work_div={"N": 4}) == {"tiles": {}, "work_div": {"N": 4}}


def _custom_hints(ep):
    out = {}
    for node in ep.graph.nodes:
        if node.op == "call_function":
            out[node.name] = sorted(int(k[len(HINT_KEY_PREFIX):]) for k in (node.meta.get("custom") or {})
                                    if k.startswith(HINT_KEY_PREFIX))
    return out


class Nested(torch.nn.Module):
    def forward(self, x, y, z):
        with spyre_hint(tiles={"M": 8}):
            with spyre_hint(tiles={"K": 4}):
                p = x @ y
            return p + z


@pytest.mark.parametrize("strict", [True, False])
def test_ids_increase_with_nesting(strict):
    import torch.fx.traceback as fxt

    args = (torch.randn(64, 256), torch.randn(256, 128), torch.randn(64, 128))
    with fxt.preserve_node_meta():
        ep = torch.export.export(Nested(), args, strict=strict)
    hints = _custom_hints(ep)
    (outer, inner), = [h for h in hints.values() if len(h) == 2]
    assert outer < inner
    assert [outer] in hints.values()


def test_ids_are_process_wide():
    a = spyre_hint(tiles={"M": 2})
    b = spyre_hint(tiles={"M": 2})
    key = lambda cm: next(iter(cm.args[0]))  # noqa: E731 - the annotate() payload
    ia, ib = (int(key(cm)[len(HINT_KEY_PREFIX):]) for cm in (a, b))
    assert ib > ia
