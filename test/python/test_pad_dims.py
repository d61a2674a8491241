"""spyre-pad-dims end to end: a dim no split fills the cores with is padded, its padding holds zeros,
and the program computes eager's numbers on 1, 4 and 32 cores.

An intermediate of 50 sticks splits at best 2 ways on 4 cores; padded to 52 sticks, SwiGLU's silu,
mul and down projection take all 4.  The models are torch.nn's and transformers' own MLPs and a
one-layer Granite model, at small sizes with random weights, over 256 tokens: over 64, each core
holds the gate's and the up projection's whole results, and computing them on every core
(spyre-work-division's replicas) beats the padding.
"""

from __future__ import annotations

import io
import math

import pytest
import torch
import transformers
from torch import nn

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint
from spyre_mlir.analysis.cost import SPYRE_FACTS, cost_report
from spyre_mlir.dialects.spyre import ComputeOp
from spyre_mlir.opfuncs import lookup
from spyre_mlir.mlir_text import make_context, parse_module
from spyre_mlir.passes.pad_dims import PadGroup, pad_groups
from spyre_mlir.pipeline import CompileOptions, compile_module, compile_stages

from e2e_support import ImportedPrograms, compile_and_check

HIDDEN, INTERMEDIATE, TOKENS = 256, 3200, 256


class SwiGLU(nn.Module):
    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate = nn.Linear(hidden, intermediate, bias=False)
        self.up = nn.Linear(hidden, intermediate, bias=False)
        self.down = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(nn.functional.silu(self.gate(x)) * self.up(x))


def swiglu(intermediate: int = INTERMEDIATE):
    def factory():
        torch.manual_seed(0)
        return SwiGLU(HIDDEN, intermediate).half().eval(), (torch.randn(TOKENS, HIDDEN, dtype=torch.float16),)
    return factory


class TiledSwiGLU(SwiGLU):
    """The MLP in a loop over two tiles of its tokens (``spyre_hint``): its ops are a loop body's."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with spyre_hint(tiles={"L": 2}):
            return super().forward(x)


def tiled_swiglu():
    declare_tensor_dim("L", TOKENS)
    declare_tensor_dim("E", HIDDEN)
    torch.manual_seed(0)
    x = torch.randn(TOKENS, HIDDEN, dtype=torch.float16)
    name_tensor_dims(x, ["L", "E"])
    return TiledSwiGLU(HIDDEN, INTERMEDIATE).half().eval(), (x,)


class GatedBy(SwiGLU):
    """A gated MLP with another activation: padded only where it maps zero to zero."""

    def __init__(self, activation):
        super().__init__(HIDDEN, INTERMEDIATE)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.activation(self.gate(x)) * self.up(x))


ACTIVATIONS = {"gelu": (nn.functional.gelu, True), "relu": (torch.relu, True), "tanh": (torch.tanh, True),
               "neg": (torch.neg, True), "scaled": (lambda g: g * 0.5, True), "sigmoid": (torch.sigmoid, False),
               "exp": (torch.exp, False), "shifted": (lambda g: g + 1.0, False)}


def gated_by(activation):
    def factory():
        torch.manual_seed(0)
        x = torch.randn(TOKENS, HIDDEN, dtype=torch.float16) * 0.1
        return GatedBy(activation).half().eval(), (x,)
    return factory


def llama_mlp():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=HIDDEN, intermediate_size=INTERMEDIATE, hidden_act="silu")
    mlp = transformers.models.llama.modeling_llama.LlamaMLP(config).half().eval()
    return mlp, (torch.randn(1, TOKENS, HIDDEN, dtype=torch.float16),)


class _Hidden(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids).last_hidden_state


def granite_layer():
    torch.manual_seed(0)
    config = transformers.GraniteConfig(hidden_size=HIDDEN, intermediate_size=INTERMEDIATE, num_hidden_layers=1,
                                        num_attention_heads=2, num_key_value_heads=1, vocab_size=100,
                                        use_cache=False)
    model = transformers.GraniteModel(config).half().eval()
    return _Hidden(model), (torch.randint(0, 100, (1, TOKENS)),)


PROGRAMS = {
    "swiglu": swiglu(),
    "swiglu_even": swiglu(3072),
    "tiled_swiglu": tiled_swiglu,
    "llama_mlp": llama_mlp,
    "granite_layer": granite_layer,
    **{f"gated_by_{name}": gated_by(fn) for name, (fn, _) in ACTIVATIONS.items()},
}

imported = ImportedPrograms(PROGRAMS)


def _planned(name: str, cores: int, out):
    """The cost report of ``name`` compiled for ``cores`` into ``out``, and its planned compute ops."""
    _, module = imported(name)
    reports, ops = [], []

    def keep(planned):
        reports.append(cost_report(planned))
        ops.extend(op for op in planned.walk() if isinstance(op, ComputeOp))

    compile_module(module.clone(), out, CompileOptions(cores=cores), log=io.StringIO(), planned=keep)
    return reports[0], ops


@pytest.mark.parametrize("name", ["swiglu", "tiled_swiglu", "llama_mlp", "granite_layer"])
def test_padding_fills_the_cores_on_four(name, tmp_path):
    """On 4 cores silu, mul and the down projection iterate 52 sticks split 4 ways; the gate and
    up projections iterate the 50 valid ones."""
    _, ops = _planned(name, 4, tmp_path / "out")
    padded = [op for op in ops if op.get_iteration_space() != op.valid_iteration_space()]
    assert sorted(op.op_func().name for op in padded) == ["batchmatmul", "mul", "silu"]
    for op in padded:
        assert 52 * 64 in op.get_iteration_space() and INTERMEDIATE in op.valid_iteration_space()
        assert math.prod(op.get_core_splits()) == 4
    gate, up = [op for op in ops if op.op_func().name == "batchmatmul" and INTERMEDIATE in
                op.get_iteration_space()][-2:]
    assert gate not in padded and up not in padded


def test_the_bound_counts_valid_work_only(tmp_path):
    """Regression: the roofline bound counted the padded K of the down projection as MACs, so
    padding raised the bound it is measured against."""
    report, _ = _planned("swiglu", 4, tmp_path / "out")
    macs = 3 * TOKENS * HIDDEN * INTERMEDIATE
    moved = 2 * (TOKENS * HIDDEN * 2 + 3 * HIDDEN * INTERMEDIATE)
    expected = max(moved / SPYRE_FACTS.hbm_bytes_per_ns, macs / (4 * SPYRE_FACTS.macs_per_ns_per_core))
    assert report.lower_bound_ns == pytest.approx(expected)


def test_a_divisible_dim_is_not_padded(tmp_path):
    _, ops = _planned("swiglu_even", 4, tmp_path / "out")
    assert all(op.get_iteration_space() == op.valid_iteration_space() for op in ops)


@pytest.mark.parametrize("name, cores", [
    ("swiglu", 1), ("swiglu", 4), ("swiglu", 32), ("tiled_swiglu", 4),
    ("llama_mlp", 4), ("granite_layer", 4), ("granite_layer", 32),
])
def test_padded_programs_match_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_a_gate_is_padded_only_where_it_keeps_zeros(activation, tmp_path):
    """The gate's padding holds zeros (a zeroed buffer); an activation that maps 0 elsewhere
    (sigmoid, exp, a shift) would put non-zeros in the down projection's padded K, so its group
    stays unpadded.  Every variant matches eager on 4 cores."""
    name = f"gated_by_{activation}"
    _, ops = _planned(name, 4, tmp_path / "planned")
    padded = any(op.get_iteration_space() != op.valid_iteration_space() for op in ops)
    assert padded == ACTIVATIONS[activation][1]
    compile_and_check(name, 4, tmp_path / "out", imported)


def test_op_funcs_that_keep_zeros():
    assert lookup("silu").keeps_zeros({})
    assert lookup("mul").keeps_zeros({})
    assert lookup("mul").keeps_zeros({"y": 3.0})
    assert lookup("sum").keeps_zeros({})
    assert lookup("batchmatmul").keeps_zeros({})
    assert not lookup("exp").keeps_zeros({})
    assert not lookup("add").keeps_zeros({"y": 1.0})
    assert not lookup("log").keeps_zeros({})
    assert not lookup("reciprocal").keeps_zeros({})


def _groups(text: str, cores: int) -> list[PadGroup]:
    """spyre-pad-dims' groups of the program ``text`` after its stick dims are chosen."""
    module = parse_module(make_context(), text, "program.mlir")
    for stage in compile_stages(cores=cores):
        if stage.name == "spyre-pad-dims":
            return pad_groups(module)
        stage.apply(make_context(), module)
    raise AssertionError("no spyre-pad-dims stage")


def _names(group: PadGroup) -> set[str]:
    return {v.name_hint for v in group.values}


def test_regression_a_buffer_updated_in_place_is_not_padded():
    """A buffer a row store updates in place was padded with the group that reads it (the store
    addresses its rows through an index, so no map linked it): the store's result kept the plain
    layout and was written into the padded buffer's bytes, misplacing every row after the first
    stick (the state was wrong from the second run on)."""
    program = """
func.func @main(%x: tensor<50x256xf16> {spyre.role = "input", spyre.name = "x"},
                %wg: tensor<256x192xf16> {spyre.role = "parameter", spyre.name = "wg"},
                %c: tensor<50x192xf16> {spyre.role = "buffer", spyre.name = "c"},
                %wd: tensor<192x256xf16> {spyre.role = "parameter", spyre.name = "wd"},
                %pos: tensor<1xi32> {spyre.role = "input", spyre.name = "pos"},
                %rows: tensor<1x192xf16> {spyre.role = "input", spyre.name = "rows"})
    -> (tensor<50x256xf16> {spyre.name = "y"}, tensor<50x192xf16> {spyre.updates = "c"}) {
  %g = spyre.matmul (%x, %wg) : (tensor<50x256xf16>, tensor<256x192xf16>) -> tensor<50x192xf16>
  %m = spyre.pointwise "mul" (%g, %c) : (tensor<50x192xf16>, tensor<50x192xf16>) -> tensor<50x192xf16>
  %y = spyre.matmul (%m, %wd) : (tensor<50x192xf16>, tensor<192x256xf16>) -> tensor<50x256xf16>
  %k = spyre.pointwise "identity" (%pos, %rows, %c) {scatter_dim = 0 : i64} : (tensor<1xi32>, tensor<1x192xf16>, tensor<50x192xf16>) -> tensor<50x192xf16>
  func.return %y, %k : tensor<50x256xf16>, tensor<50x192xf16>
}"""
    groups = _groups(program, 4)
    assert not any("c" in _names(g) for g in groups)
    without_the_update = program.replace(' {spyre.updates = "c"}', "").replace('"buffer"', '"parameter"')
    without_the_update = without_the_update.replace(
        '  %k = spyre.pointwise "identity" (%pos, %rows, %c) {scatter_dim = 0 : i64} : (tensor<1xi32>, '
        'tensor<1x192xf16>, tensor<50x192xf16>) -> tensor<50x192xf16>\n', "")
    without_the_update = without_the_update.replace("func.return %y, %k : tensor<50x256xf16>, tensor<50x192xf16>",
                                                    "func.return %y, %c : tensor<50x256xf16>, tensor<50x192xf16>")
    assert not any("c" in _names(g) for g in _groups(without_the_update, 4))


def test_a_tensor_with_two_dims_in_one_group_is_not_padded():
    """``p @ p``: K is the left operand's dim 1 and the right one's dim 0, one group holding two
    dims of ``p``; padding one of them would leave K reading past the other."""
    program = """
func.func @main(%p: tensor<320x320xf16> {spyre.role = "parameter", spyre.name = "p"})
    -> (tensor<320x320xf16> {spyre.name = "y"}) {
  %y = spyre.matmul (%p, %p) : (tensor<320x320xf16>, tensor<320x320xf16>) -> tensor<320x320xf16>
  func.return %y : tensor<320x320xf16>
}"""
    assert not any("p" in _names(g) for g in _groups(program, 4))


def test_a_parameter_read_in_place_with_the_group_is_padded():
    """The counterpart of the two refusals above: a parameter the group's mul reads is padded."""
    program = """
func.func @main(%x: tensor<64x256xf16> {spyre.role = "input", spyre.name = "x"},
                %wg: tensor<256x3200xf16> {spyre.role = "parameter", spyre.name = "wg"},
                %c: tensor<64x3200xf16> {spyre.role = "parameter", spyre.name = "c"},
                %wd: tensor<3200x256xf16> {spyre.role = "parameter", spyre.name = "wd"})
    -> (tensor<64x256xf16> {spyre.name = "y"}) {
  %g = spyre.matmul (%x, %wg) : (tensor<64x256xf16>, tensor<256x3200xf16>) -> tensor<64x3200xf16>
  %m = spyre.pointwise "mul" (%g, %c) : (tensor<64x3200xf16>, tensor<64x3200xf16>) -> tensor<64x3200xf16>
  %y = spyre.matmul (%m, %wd) : (tensor<64x3200xf16>, tensor<3200x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}"""
    (group,) = [g for g in _groups(program, 4) if g.extent == 3200]
    assert _names(group) == {"c", "g", "m", "wd"} and group.padded_extent(4) == 52 * 64


@pytest.mark.parametrize("sticks, cores, padded", [(200, 32, 224), (50, 4, 52), (48, 4, None), (200, 4, None),
                                                   (50, 1, None), (7, 32, None)])
def test_the_padded_extent(sticks, cores, padded):
    group = PadGroup(sticks * 64, 64)
    assert group.padded_extent(cores) == (None if padded is None else padded * 64)
