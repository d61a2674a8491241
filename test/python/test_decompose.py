"""Node-by-node decomposition (spyre_mlir.importer.decompose) against torch's run_decompositions.

Each program decomposed node by node must be the graph ``run_decompositions`` makes of it: the
same nodes, arguments, names and output signature, values of the same shapes and dtypes, the
same hints; a program it declines goes to ``run_decompositions``.
"""

from __future__ import annotations

import warnings

import pytest
import torch

import spyre_mlir
from spyre_mlir.importer import export_model, import_program, repair
from spyre_mlir.importer.core import decomposition_table
from spyre_mlir.importer.decompose import decompose_by_node
from spyre_mlir.interpreter import compare, tolerance_for
from spyre_mlir.timing import timed


def _graph(program: torch.export.ExportedProgram) -> list[str]:
    return [node.format_node() for node in program.graph.nodes]


def _values(program: torch.export.ExportedProgram) -> list[object]:
    return [(tuple(v.shape), v.dtype) if isinstance(v := node.meta.get("val"), torch.Tensor) else type(v)
            for node in program.graph.nodes]


def _hints(program: torch.export.ExportedProgram) -> list[list[str]]:
    return [sorted(k for k in (node.meta.get("custom") or {}) if k.startswith("spyre")) for node in program.graph.nodes]


def _same_as_run_decompositions(program: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """``program`` decomposed node by node (after the importer's repairs), checked against
    ``run_decompositions``."""
    repair.rebind_buffer_aliases(program)
    repair.drop_empty_concatenands(program)
    table = decomposition_table()
    mine = decompose_by_node(program, table)
    assert mine is not None, "the program was declined"
    theirs = program.run_decompositions(table)
    assert _graph(mine) == _graph(theirs)
    assert mine.graph_signature == theirs.graph_signature
    assert _values(mine) == _values(theirs)
    assert _hints(mine) == _hints(theirs)
    return mine


class _Constants(torch.nn.Module):
    def forward(self, x):
        return x * torch.tensor([1.0, 2.0, 3.0, 4.0]) + torch.tensor(2.0)


class _Outputs(torch.nn.Module):
    """Ops of several results, composite ops the table decomposes and ones it keeps."""

    def forward(self, x):
        values, _ = x.max(-1)
        mean = torch.var_mean(x, -1)[1]
        return (values, mean, x.softmax(-1), torch.nn.functional.gelu(x), torch.nn.functional.silu(x),
                x.t().contiguous(), x[:, 1:3].reshape(-1, 1), torch.nn.functional.layer_norm(x, (4,)))


class _SignedZeros(torch.nn.Module):
    """Two nodes equal but for the sign of a zero constant: one trace must not stand for both."""

    def forward(self, x):
        return torch.rsub(x, 0.0), torch.rsub(x, -0.0)


class _GradRegion(torch.nn.Module):
    def forward(self, x):
        with torch.no_grad():
            y = x.float().exp()
        return (y.to(torch.float16) * 2).reshape(-1)


class _Dropouts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = torch.nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(torch.nn.functional.dropout(x, 0.2, training=False))


class _AttentionReshaped(torch.nn.Module):
    """Whisper's attention: sdpa's decomposition lays its result out permuted, where export
    recorded it contiguous, so the reshapes after it are views of the decomposition's layout
    (a node-by-node decomposition reading export's layouts made the last one a copy)."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(128, 128) for _ in range(3))

    def forward(self, x):
        q, k, v = (p(x).view(1, 32, -1, 64).transpose(1, 2).contiguous() for p in (self.q, self.k, self.v))
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=1.0)
        return out.reshape(1, -1, 32, 64).transpose(1, 2).contiguous().reshape(1, 32, -1)


@pytest.mark.parametrize("module, inputs", [
    (_Constants(), (torch.randn(3, 4),)),
    (_Outputs(), (torch.randn(3, 4),)),
    (_SignedZeros(), (torch.randn(3, 4),)),
    (_GradRegion(), (torch.randn(3, 4, dtype=torch.float16),)),
    (_Dropouts().eval(), (torch.randn(3, 4),)),
], ids=["constants", "outputs", "signed_zeros", "grad_region", "dropouts"])
def test_a_module_decomposes_node_by_node_as_run_decompositions_does(module, inputs):
    _same_as_run_decompositions(export_model(module, inputs))


def test_regression_a_value_after_a_decomposition_is_laid_out_as_the_decomposition_lays_it_out():
    module = _AttentionReshaped().half().eval()
    _same_as_run_decompositions(export_model(module, (torch.randn(1, 32, 128, dtype=torch.float16),)))


class _AttentionFlattened(torch.nn.Module):
    """GPT-2's attention output at batch 2: sdpa's heads merged by a reshape, then flattened by a
    ``view`` (its ``Conv1D``), which export's strides allow and sdpa's decomposition's do not."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(128, 128)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        merged = torch.nn.functional.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(2, 37, 128)
        return torch.addmm(self.proj.bias, merged.view(-1, 128), self.proj.weight.t())


def test_regression_a_view_of_a_value_a_decomposition_strides_otherwise_is_a_reshape():
    """The decomposition of sdpa lays out the heads it merges [2, 37, 128] with strides (128, 256, 1),
    and the ``view`` export recorded on it failed to propagate (a raw ``ValueError`` from torch, both
    node by node and in ``run_decompositions``: GPT-2 with sdpa at batch 2).  Node by node, the
    view's value is now the reshape's: the same elements in the same order, which it imports as."""
    torch.manual_seed(0)
    module, inputs = _AttentionFlattened().eval(), tuple(torch.randn(2, 2, 37, 64) for _ in range(3))
    with torch.no_grad():
        want = module(*inputs)
        got = spyre_mlir.compile(module, inputs, cores=4).run(*inputs)
    compare("out", got.numpy(), want.numpy(), tolerance_for("float32"))


def _granite(layers: int) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, ids):
            return self.inner(ids).last_hidden_state

    torch.manual_seed(0)
    config = transformers.GraniteConfig(num_hidden_layers=layers, hidden_size=256, intermediate_size=512,
                                        num_attention_heads=4, num_key_value_heads=2, vocab_size=64,
                                        max_position_embeddings=128)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LastHiddenState(transformers.GraniteModel(config).eval()).half()
    return model, (torch.randint(0, 64, (1, 32), generator=torch.Generator().manual_seed(0)),)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
def test_a_transformers_model_decomposes_as_run_decompositions_does():
    _same_as_run_decompositions(export_model(*_granite(2)))


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
def test_every_layer_after_the_first_is_decomposed_from_the_first_layers_traces():
    counts = {}
    for layers in (1, 3):
        with timed() as timings:
            import_program(export_model(*_granite(layers)))
        counts[layers] = timings.phases["decompose"].counts
    assert counts[1]["ops traced"] == counts[3]["ops traced"] > 0
    assert counts[3]["taken from an op traced alike"] > counts[1]["taken from an op traced alike"]


class _InPlace(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        y.add_(1)
        return y


class _MutatedBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(4))

    def forward(self, x):
        self.count.add_(1)
        return x + self.count


class _Autocast(torch.nn.Module):
    def forward(self, x):
        with torch.autocast("cpu", enabled=False):
            y = x.float().exp()
        return y * 2


@pytest.mark.parametrize("module", [_InPlace(), _MutatedBuffer(), _Autocast()],
                         ids=["in_place", "mutated_buffer", "autocast"])
def test_a_program_the_node_by_node_form_cannot_take_goes_to_run_decompositions(module):
    program = export_model(module, (torch.randn(3, 4),))
    table = decomposition_table()
    assert decompose_by_node(program, table) is None
    assert _graph(repair.decompose(program, table)) == _graph(program.run_decompositions(table))


def test_a_program_of_dynamic_shapes_is_declined():
    x = torch.randn(3, 4)
    program = torch.export.export(_Constants(), (x,), dynamic_shapes=({0: torch.export.Dim("rows")},))
    assert decompose_by_node(program, decomposition_table()) is None
