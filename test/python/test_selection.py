"""Selections by value on data (``argmax``, ``argmin``, ``max.dim``, ``topk``), ``repeat``, and a
table read at a computed position beside counted ones (CLIP's pooled token), compiled and
compared with eager; and the reads they brought up: one column of a narrow tensor broadcast
along the op's stick, and a reduction over a one-token router's stick."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch

import spyre_mlir
from e2e_support import base_model_matches_eager
from spyre_mlir.interpreter import compare, tolerance_for


class _Apply(torch.nn.Module):
    def __init__(self, fn: Callable[[torch.Tensor], Any]):
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> Any:
        return self.fn(x)


def _check(fn: Callable[[torch.Tensor], Any], x: torch.Tensor, cores: int = 4) -> None:
    """``fn(x)`` compiled equals eager's: integer outputs exactly, float ones within tolerance."""
    with torch.no_grad():
        want = fn(x)
        got = spyre_mlir.compile(_Apply(fn), (x,), cores=cores).run(x)
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.is_floating_point():
            compare("values", g.float().numpy(), w.float().numpy(), tolerance_for(str(w.dtype).removeprefix("torch.")))
        else:
            assert torch.equal(g, w), (g, w)


SELECTIONS = {
    "argmax": lambda x: x.argmax(-1),
    "argmin_dim0": lambda x: x.argmin(0),
    "argmax_keepdim": lambda x: x.argmax(1, keepdim=True),
    "argmax_of_all": lambda x: x.argmax(),
    "argmin_of_all_keepdim": lambda x: x.argmin(keepdim=True),
    "max_dim": lambda x: torch.max(x, 1),
    "min_dim": lambda x: torch.min(x, -1, keepdim=True),
    "topk": lambda x: torch.topk(x, 3),
    "topk_smallest_dim0": lambda x: torch.topk(x, 2, dim=0, largest=False),
    "topk_softmax": lambda x: torch.softmax(torch.topk(x.float(), 2).values, -1),
    "pooled_row": lambda x: x[torch.arange(x.shape[0]), x.argmax(-1)],
    "scatter_value": lambda x: torch.scatter(x, -1, x.argmax(-1, keepdim=True), float("-inf")).amax(-1),
    "scatter_value_dim0": lambda x: torch.scatter(x, 0, torch.topk(x, 2, dim=0).indices, 0.5),
}


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selections_on_data_match_eager(name, dtype):
    torch.manual_seed(0)
    _check(SELECTIONS[name], torch.randn(8, 96).to(dtype))


def test_positions_past_2048_are_exact_in_float16():
    """The positions are counted in float32: float16 holds every integer only up to 2048."""
    x = torch.randn(2, 4096, dtype=torch.float16)
    x[0, 3001], x[1, 4095], x[1, 2049] = 50, 60, 55
    _check(lambda t: (t.argmax(-1), torch.topk(t, 2).indices), x)


def test_topk_past_infinite_elements_takes_each_position_once():
    """Masked scores are -inf, as a chosen position is masked: each round still takes a new one.
    Ties may come in any order (torch's own order among them is its kernel's), so the positions
    are checked to be distinct and to hold the values returned."""
    x = torch.full((2, 64), -math.inf)
    x[0, 5], x[1, 60] = 1.0, 2.0
    fn = _Apply(lambda t: torch.topk(t, 3))
    values, indices = spyre_mlir.compile(fn, (x,), cores=4).run(x)
    assert torch.equal(values, fn(x).values)
    assert indices[:, 0].tolist() == [5, 60]
    for row in range(2):
        assert len(set(indices[row].tolist())) == 3
        assert torch.equal(x[row, indices[row]], values[row])


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_repeat_matches_eager(dtype):
    """Regression (float16): the repeated [8, 96] rows merge into 288, which no stick of 64 holds
    one row of: copied through a tensor of one element per stick, then sticked on the 288."""
    _check(lambda t: t.repeat(2, 1, 3), torch.randn(8, 96).to(dtype))
    _check(lambda t: t.repeat(2, 1, 3) * 2, torch.randn(8, 96).to(dtype))


@pytest.mark.parametrize("returned", [True, False])
def test_a_flatten_whose_rows_fill_part_of_a_stick_matches_eager(returned):
    """Regression: [8, 96] float16 flattened into 768: each stick of the result holds parts of
    two rows; copied through a tensor of one element per stick (returned, or read by an op)."""
    fn = (lambda t: (t * 2).reshape(-1)) if returned else (lambda t: (t * 2).reshape(-1) * 3)
    _check(fn, torch.randn(8, 96, dtype=torch.float16))


@pytest.mark.parametrize("cores", [1, 4])
def test_top_k_of_one_token_reduces_over_its_stick(cores):
    """Regression: a one-token router's scores [1, 4], and the [1, 2] of its top two, are read by
    their reductions over the stick; the result of a reduction over its operand's stick must be
    sticked on the kept dim of one element, not on the token dim, which has one element too."""
    linear = torch.nn.Linear(128, 4, bias=False)
    _check(lambda t: torch.softmax(torch.topk(linear(t), 2).values, -1), torch.randn(1, 128), cores)


@pytest.mark.parametrize("column", [0, 1])
def test_one_column_of_a_narrow_tensor_broadcast_along_the_stick(column):
    """Regression: column 1 of a [16, 2] tensor sticked on its 2 columns starts inside a stick
    (copied from the tensor sticked on its rows), and a [16, 2, 1] view of it compared with 4
    experts broadcasts along the op's stick, which it reads nowhere (copied sticked on its dim of
    one element)."""
    x = torch.randint(0, 4, (16, 2)).float()
    experts = torch.arange(4)
    _check(lambda t: (t[:, column, None] == experts).float() * t[:, column, None], x)
    _check(lambda t: (t[:, :, None] == experts).float().sum(1), x)


@pytest.mark.parametrize("rows", [32, 33, 70])
def test_a_column_of_a_tensor_sticked_on_its_rows_is_read_in_every_stick(rows):
    """Regression: the top two of each row, ``[rows, 2]`` sticked on its rows (two sticks of 32
    float32 rows from 33 on, each holding both columns), copied at column 1: the column the copy
    reads at a constant takes a dim of its own in the SDSC, else the second stick of rows was
    addressed as if the tensor had one column (row 32 read the wrong element)."""
    def fn(t: torch.Tensor) -> torch.Tensor:
        top = torch.cat([t.amax(-1, keepdim=True), t.amin(-1, keepdim=True)], -1)
        return top[:, 1, None] * t

    torch.manual_seed(0)
    _check(fn, torch.randn(rows, 4), cores=1)


def test_one_row_read_at_a_computed_position_reads_the_row_itself():
    """Regression: ``x[arange(1), idx]`` reads row ``idx`` of ``x``'s [1, 16, 32] viewed as [16, 32]
    rows; folded into the read, the index addressed the storage's dim of one row."""
    _check(lambda t: t[torch.arange(1), t.sum(-1).argmax(-1)], torch.randn(1, 16, 32))


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("dtype,cores,batch", [(torch.float16, 1, 2), (torch.float16, 4, 2), (torch.float16, 32, 2),
                                               (torch.float32, 4, 2), (torch.float16, 4, 1)])
def test_clip_text_model_pools_its_end_token(dtype, cores, batch):
    """CLIP's text model pools the hidden state at each row's largest token id (``eos_token_id``
    2: ``hidden[arange(B), ids.argmax(-1)]``), its ids read both as the embedding's index and,
    through a view, as data."""
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")
    torch.manual_seed(0)
    model = transformers.CLIPTextModel(transformers.CLIPTextConfig(
        vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=1, num_attention_heads=2,
        bos_token_id=0, eos_token_id=2, pad_token_id=1)).to(dtype).eval()
    ids = torch.randint(3, 250, (batch, 16))
    ids[0, 5], ids[-1, 11] = 255, 254
    want = base_model_matches_eager(model, (ids,), cores, dtype)
    assert torch.equal(want.pooler_output[0], want.last_hidden_state[0, 5])
