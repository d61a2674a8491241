"""Programs the differential fuzzer (fuzz_programs.py, bench/fuzz.py) found broken, pinned.

Each test compiles one small fixed program on a few core counts, runs it on the
interpreter and compares with eager (e2e_support.compile_and_check).  The
docstring says what went wrong before the fix and where it was fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import torch

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.interpreter.compare import OutputMismatch

from e2e_support import ImportedPrograms, Program, compile_and_check


def _inputs(dims: dict[str, int], *named: Sequence[str]) -> tuple[torch.Tensor, ...]:
    """Declare ``dims``; one uniform [-1, 1) fp16 input per name list, named by it."""
    for name, size in dims.items():
        declare_tensor_dim(name, size)
    tensors = []
    for names in named:
        t = (torch.rand([dims[n] for n in names]) * 2 - 1).to(torch.float16)
        tensors.append(name_tensor_dims(t, list(names)))
    return tuple(tensors)


def _tiled(tiles: dict[str, int], fn: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(*args: Any) -> Any:
        with spyre_hint(tiles=tiles):
            return fn(*args)
    return kernel


def _nested(outer: dict[str, int], inner: dict[str, int], fn: Callable[..., Any],
            after: Callable[[Any], Any]) -> Callable[..., Any]:
    def kernel(*args: Any) -> Any:
        with spyre_hint(tiles=outer):
            with spyre_hint(tiles=inner):
                value = fn(*args)
        return after(value)
    return kernel


def _sliced_matmul(then: Callable[[Any], Any]) -> Callable[..., Any]:
    """A float32 matmul of 8 columns tiled over its rows, of which ``then`` reads the first 3: the
    matmul computes all 8, into the padding of its result of 3."""
    def kernel(x: torch.Tensor, w: torch.Tensor) -> Any:
        w = w.float()
        with spyre_hint(tiles={"D": 4}):
            product = x.float() @ w
        return then(product[..., :3])
    return kernel


def _transposed_softmaxes(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    first = torch.softmax(x.t(), dim=-1)
    return first, torch.softmax(first.t(), dim=-1)


def _k_tiled_matmul(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with spyre_hint(tiles={"E": 2}):
        s = torch.softmax(x, dim=-1)
        with spyre_hint(tiles={"R": 2}):
            p = (y * s) @ w
    return torch.nn.functional.silu(p.flatten())


def _view_copy_in_group(x: torch.Tensor, b: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with spyre_hint(tiles={"D": 3}):
        with spyre_hint(tiles={"N": 2}):
            p = (x - b) @ w
    return p.amax(-1, keepdim=True)


def _k_tiled_then_short_reduction(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with spyre_hint(tiles={"K": 2}):
        p = x @ w
    return p.amax(1)


def _softmax_then_matmul_in_group(x: torch.Tensor, w: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with spyre_hint(tiles={"C": 2}):
        return torch.softmax(x @ w, dim=-1) @ y


def _product_of_a_tiled_column_slice(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with spyre_hint(tiles={"C": 2}):
        p = x @ y
    with spyre_hint(tiles={"C": 2, "B": 2}):
        return p[..., :38] @ w


def _sliced_weight_in_group(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with spyre_hint(tiles={"seq": 4}):
        return torch.exp(x)[..., :69] @ w[:69]


def _bfloat16_sum_then_matmul() -> Program:
    """The fuzzer's program, its inputs drawn as it drew them."""
    torch.manual_seed(35528)
    x = ((torch.rand([256, 192]) * 2 - 1) * 0.25).to(torch.bfloat16)
    w = ((torch.rand([192, 256]) * 2 - 1) * 0.25).to(torch.bfloat16)
    def kernel(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        v = -x.sum(-2, keepdim=True)
        with spyre_hint(tiles={"H": 2}):
            return torch.abs(v) @ w

    return kernel, (name_tensor_dims(x, ["H", "rows"]), name_tensor_dims(w, ["rows", "H"]))


PROGRAMS: dict[str, Callable[[], Program]] = {
    "sum_over_stick_into_short_result": lambda: (
        lambda x: x.sum(-1), _inputs({"R": 2, "C": 192}, "RC")),
    "returned_value_read_padded": lambda: (
        lambda x: (lambda s: (s, s.amin(1)))(torch.softmax(x, dim=-1)), _inputs({"R": 4, "C": 192}, "RC")),
    "nested_tiles_then_reduction_into_short_stick": lambda: (
        _nested({"K": 8}, {"M": 4, "K": 2}, lambda x: x * x, lambda v: v.amin(2)),
        _inputs({"K": 32, "R": 4, "M": 256}, "KRM")),
    "tiled_sum_of_flattened_tensor": lambda: (
        lambda x: (lambda v: (v, _tiled({"M": 2}, lambda f: f.sum(0, keepdim=True))(v.flatten())))(x * 2.0),
        _inputs({"M": 32, "H": 192}, "MH")),
    "transpose_inside_hinted_group": lambda: (
        _tiled({"B": 2}, lambda x, y: torch.exp(x).t() @ y), _inputs({"A": 128, "B": 128, "C": 64}, "AB", "AC")),
    "broadcast_over_flattened_dims": lambda: (
        lambda x: (lambda v: v - v.amax(-1, keepdim=True))(x.flatten()), _inputs({"M": 4, "H": 128}, "MH")),
    "transposed_softmaxes": lambda: (_transposed_softmaxes, _inputs({"N": 64, "L": 128}, "NL")),
    "rank0_reductions_and_scalar_arithmetic": lambda: (
        lambda x, y: (y - x.amin(), x.sum() * 2.0, torch.exp(x.mean())), _inputs({"M": 96, "H": 128}, "MH", "MH")),
    "squeezed_stick_reduction_added_to_dense_one": lambda: (
        lambda x: x.sum(-1, keepdim=True).squeeze(-1) + x.sum(-1), _inputs({"M": 96, "H": 128}, "MH")),
    "returned_flatten_of_stick_reduction": lambda: (
        lambda x: torch.relu(x.sum(-1, keepdim=True)).flatten(), _inputs({"M": 96, "H": 160}, "MH")),
    "returned_transpose_of_flatten": lambda: (
        lambda x, y: (x + y).flatten(0, 1).t(), _inputs({"B": 2, "C": 2, "D": 64}, "BCD", "BCD")),
    "batched_matmul_of_keepdim_reduction": lambda: (
        lambda x, w: x.amax(1, keepdim=True) @ w,
        _inputs({"D": 32, "K": 16, "R": 64, "A": 128}, "DKR", "DRA")),
    "k_tiled_matmul_into_fresh_buffer": lambda: (
        _k_tiled_matmul, _inputs({"E": 2, "R": 128, "M": 64}, "ER", "ER", "RM")),
    "nested_tiles_of_full_reduction": lambda: (
        _nested({"S": 2}, {"S": 2}, lambda x: (lambda v: (v, v.amin()))(x.mean(0, keepdim=True) * 3.0),
                lambda r: (r[1], r[0].amin(-1))),
        _inputs({"C": 2, "S": 256}, "CS")),
    "reduction_tiled_at_two_levels_around_an_output_level": lambda: (
        _nested({"B": 4, "C": 4}, {"B": 2}, lambda x: x.sum(0), lambda v: v), _inputs({"B": 160, "C": 256}, "BC")),
    "transposed_copy_needing_a_padded_copy": lambda: (
        _tiled({"C": 3}, lambda x, y: y + x.t()), _inputs({"R": 96, "C": 192}, "RC", "R")),
    "argument_padded_and_transposed": lambda: (
        lambda x: x.t() + x.amax(1), _inputs({"R": 2, "C": 192}, "RC")),
    "view_copy_inside_hinted_group": lambda: (
        _view_copy_in_group, _inputs({"N": 2, "M": 4, "D": 192, "A": 128}, "NMD", "D", "DA")),
    "nested_tiles_of_flattened_mean": lambda: (
        _nested({"A": 2}, {"A": 4}, lambda x: x.flatten().mean(0, keepdim=True), lambda v: v),
        _inputs({"A": 128, "B": 256}, "AB")),
    "k_tiled_matmul_then_short_reduction": lambda: (
        _k_tiled_then_short_reduction, _inputs({"R": 96, "K": 128, "A": 64}, "RK", "KA")),
    "bfloat16_sum_then_matmul": _bfloat16_sum_then_matmul,
    "select_of_a_transposed_copy": lambda: (
        lambda x: torch.sigmoid(x.t().unsqueeze(0).reshape(100, -1))[0].to(torch.bfloat16),
        _inputs({"T": 192, "R": 100}, "TR")),
    "mean_of_a_repeated_column": lambda: (
        lambda x: x.amax(1, keepdim=True)[:, None].expand(4, 2, 1).reshape(8, 1).mean(-2, keepdim=True),
        _inputs({"Q": 4, "L": 96}, "QL")),
    "repeated_rows_sliced_at_an_offset": lambda: (
        lambda x: (lambda v: ((v + 0.5)[100:201], v + 3.0))(x[:, None].expand(128, 3, 77).reshape(384, 77)[:, :67]),
        _inputs({"E": 128, "C": 77}, "EC")),
    "repeated_rows_cut_inside_a_block": lambda: (
        lambda x: (lambda v: (v + 0.5, (v + 3.0)[:2]))(x[:, None].expand(128, 3, 77).reshape(384, 77)[:67]),
        _inputs({"E": 128, "C": 77}, "EC")),
    "bias_slice_inside_a_stick": lambda: (
        lambda x, b: x + b[16:32, None], _inputs({"R": 16, "C": 100, "B": 64}, "RC", "B")),
    "bias_slice_across_sticks": lambda: (
        lambda x, b: x * b[5:70, None], _inputs({"R": 65, "C": 64, "B": 128}, "RC", "B")),
    "bias_row_sliced_inside_a_stick": lambda: (
        lambda x, b: x + b[10:74], _inputs({"R": 8, "C": 64, "B": 128}, "RC", "B")),
    "one_channel_padded_by_concatenation": lambda: (
        lambda x: torch.cat([torch.zeros(1, 1, 1, dtype=x.dtype), x[:, 0:1], torch.zeros(1, 1, 1, dtype=x.dtype)],
                            2) * 2.0, _inputs({"A": 1, "B": 2, "T": 33}, "ABT")),
    "repeated_rows_concatenated": lambda: (
        lambda x, y: torch.cat([torch.zeros(2, 64, dtype=x.dtype), x[:, None].expand(8, 2, 64).reshape(16, 64), y]) * 2.0,
        _inputs({"R": 8, "C": 64, "S": 4}, "RC", "SC")),
    "returned_column_of_a_computed_value": lambda: (
        lambda x, y: (y - x).t()[121], _inputs({"A": 4, "G": 256}, "AG", "AG")),
    "returned_column_and_repeated_transpose": lambda: (
        lambda x, y: (lambda v: (v.t()[121], v.t()[:, None].expand(256, 2, 4).reshape(512, 4)))(
            (y - x).to(torch.bfloat16)), _inputs({"A": 4, "G": 256}, "AG", "AG")),
    "returned_unsqueeze_of_a_reduction_over_the_stick": lambda: (
        lambda x: x.t().to(torch.float16).amax(0).unsqueeze(-1),
        (name_tensor_dims(torch.rand(32, 160) * 0.5 - 0.25, ["N", "rows"]),)),
    "rows_of_a_transpose_repeated": lambda: (
        lambda x: torch.tanh(x.t()[:, None].expand(96, 4, 96).reshape(384, 96)), _inputs({"R": 96, "C": 96}, "RC")),
    "sum_of_flattened_rows": lambda: (
        lambda x: x.view(308, 160).sum(-1), _inputs({"A": 4, "B": 77, "C": 160}, "ABC")),
    "row_of_a_cast_cast_back": lambda: (
        lambda x: x.float()[3].half(), _inputs({"R": 77, "C": 77}, "RC")),
    "tiled_matmul_read_as_a_column_slice": lambda: (
        _sliced_matmul(lambda y: y.to(torch.bfloat16)), _inputs({"D": 256, "U": 77, "K": 8}, "DU", "UK")),
    "flattened_rows_sliced_across_a_boundary": lambda: (
        lambda x, y: torch.maximum(y, x.flatten(1, 2)[:, 505:774]), _inputs({"A": 1, "B": 6, "C": 160, "D": 64},
                                                                            "ABCD", "D")),
    "matmul_result_with_a_unit_dim_appended": lambda: (
        lambda x, w: (x @ w).unsqueeze(2), _inputs({"R": 100, "V": 160, "E": 16}, "RV", "VE")),
    "product_of_a_tiled_column_slice": lambda: (
        _product_of_a_tiled_column_slice, _inputs({"C": 4, "R": 77, "U": 100, "A": 38, "B": 128}, "CR", "RU", "AB")),
    "mask_of_an_operand_outside_the_group": lambda: (
        _sliced_weight_in_group, _inputs({"seq": 256, "E": 96, "N": 160}, ("seq", "E"), ("E", "N"))),
    "batched_product_row_slice_returned": lambda: (
        lambda x, y: (x @ y)[:, :7], _inputs({"H": 8, "R": 8, "S": 160, "A": 160}, "HRS", "HSA")),
    "masked_contraction_inside_hinted_group": lambda: (
        _softmax_then_matmul_in_group, _inputs({"C": 160, "Q": 64, "Dv": 100, "A": 3}, ("C", "Q"), ("Q", "Dv"),
                                               ("Dv", "A"))),
}
"""Each regression program: ``(kernel, example inputs)``."""


@pytest.fixture(scope="module")
def imported() -> ImportedPrograms:
    """Per program: its (fn, inputs) and its imported module, exported once."""
    return ImportedPrograms(PROGRAMS)


def _check(name: str, imported: ImportedPrograms, out: Path, cores: Sequence[int] = (1, 7)) -> None:
    for n in cores:
        compile_and_check(name, n, out / f"cores{n}", imported)


def test_sum_over_the_stick_into_a_short_result_pads_the_input_rows(imported, tmp_path):
    """[2, 192].sum(-1) -> [2]: the result's stick pads the 2 rows to 64 (SDSC ``N_``), so the
    interpreter read 62 rows past the input.  spyre-stickify now reads it through a padded copy."""
    _check("sum_over_stick_into_short_result", imported, tmp_path)


def test_a_returned_value_read_with_padded_rows_goes_through_a_padded_copy(imported, tmp_path):
    """A returned softmax read by a reduction into a 4-row result: padding the kernel output in
    place broke the manifest; spyre-stickify now restickifies it into a padded copy."""
    _check("returned_value_read_padded", imported, tmp_path)


def test_a_tile_of_a_padded_tensor_keeps_its_padding(imported, tmp_path):
    """K tiled at two levels, then amin into a [32, 4] result sticked on its 4 rows: the loop's
    accumulator type lost the padded rows (spyre-coarse-tile ``tile_type``)."""
    _check("nested_tiles_then_reduction_into_short_stick", imported, tmp_path, (1, 31))


def test_a_reduced_stick_pads_no_iteration_dim(imported, tmp_path):
    """A tiled sum of a flattened [32 * 192] tensor: the rank-1 result's reduced stick padded the
    16-row tile to 64 (codegen ``padded_sizes``), reading past the pool buffer."""
    _check("tiled_sum_of_flattened_tensor", imported, tmp_path, (1, 11))


def test_a_restickify_inside_a_hinted_group_is_tiled_with_it(imported, tmp_path):
    """``exp(x).t() @ y`` under one hint: the restickify of ``exp(x)`` had no hints and could move
    neither before nor after the group; it now shares its producer's and reader's hints."""
    _check("transpose_inside_hinted_group", imported, tmp_path, (1, 4))


def test_a_broadcast_operand_over_flattened_iteration_dims(imported, tmp_path):
    """``v - v.amax(-1, keepdim=True)`` of a flattened tensor: the [1] operand got no stick label
    because the result's coordinate is ``d1 * 128 + d0`` (codegen ``constant_terms``)."""
    _check("broadcast_over_flattened_dims", imported, tmp_path)


def test_a_reduction_of_a_transposed_operand_keeps_its_reduced_stick(imported, tmp_path):
    """softmax(x.t()).t() then softmax: a keepdim max whose operand map is permuted had no label
    for its sparse stick (codegen ``kept_dims``)."""
    _check("transposed_softmaxes", imported, tmp_path, (1, 3))


def test_full_reductions_to_rank0_and_their_scalar_arithmetic(imported, tmp_path):
    """``x.amin()``, ``x.sum() * 2``, ``exp(x.mean())``: rank-0 tensors had no stick label and
    rank-0 pointwise ops no iteration dim (codegen ``constant_stick``)."""
    _check("rank0_reductions_and_scalar_arithmetic", imported, tmp_path)


def test_a_squeezed_stick_reduction_added_to_a_dense_one(imported, tmp_path):
    """``x.sum(-1, keepdim=True).squeeze(-1) + x.sum(-1)``: spyre-stickify took the sparse [M, 1]
    sum for a broadcast (its rows step with the result's stick: ``fits``), so the add had no label
    for its stick.  Restickifying it with its 1-element stick padded to 64 then wrote over its
    neighbours (wrong numbers); a 1-element stick now reads with ``scale_`` -2 (codegen)."""
    _check("squeezed_stick_reduction_added_to_dense_one", imported, tmp_path)


def test_a_returned_flatten_of_a_stick_reduction(imported, tmp_path):
    """``relu(x.sum(-1, keepdim=True)).flatten()``: the copy of the returned view had no label
    for the sparse stick (spyre-fold-views ``materialise_view`` now gives it a 1-element dim)."""
    _check("returned_flatten_of_stick_reduction", imported, tmp_path)


def test_a_returned_transpose_of_a_flatten_keeps_the_stick_of_its_storage(imported, tmp_path):
    """``(x + y).flatten(0, 1).t()`` with 2 x 2 rows.  Found against a first version of the
    returned-view copies of spyre-stickify (test above), which sticked every copy on its innermost
    dim: two iteration dims on one stick.  Copies keep their storage's stick, as spyre-fold-views
    sticks them."""
    _check("returned_transpose_of_flatten", imported, tmp_path)


def test_a_batched_matmul_of_a_keepdim_reduction(imported, tmp_path):
    """``x.amax(1, keepdim=True) @ w``: the importer's identity reshape read the size-1 M dim as
    the constant 0, so A had no M label and the interpreter crashed contracting it."""
    _check("batched_matmul_of_keepdim_reduction", imported, tmp_path, (1, 28))


def test_a_k_tiled_matmul_accumulates_into_a_fresh_buffer(imported, tmp_path):
    """A matmul tiled on K inside a loop over M whose result a later op reads: the accumulator
    left its loop into a pool buffer, "needs a copy; not lowered yet".  spyre-lower-to-bundle now
    makes that buffer a constant argument the runtime fills with the identity."""
    _check("k_tiled_matmul_into_fresh_buffer", imported, tmp_path, (1, 6))


def test_nested_tiles_of_a_full_reduction_stack_rank0_accumulators(imported, tmp_path):
    """``amin()`` to rank 0 tiled twice on the same dim: the inner accumulator (one stick) could
    not be stacked per outer iteration (spyre-lower-to-bundle ``_stacked_layout``)."""
    _check("nested_tiles_of_full_reduction", imported, tmp_path, (1, 3))


def test_a_padded_copy_and_a_transposed_copy_of_one_argument(imported, tmp_path):
    """``x.t() + x.amax(1)`` of a [2, 192] argument: the amax read 62 rows past x.  With x's rows
    padded through a copy, the transposed read's restickify, inserted at the start of the
    function, then read that copy before its definition (``_after_argument_copies``)."""
    _check("argument_padded_and_transposed", imported, tmp_path)


def test_a_transposed_copy_that_needs_a_padded_copy_comes_after_it(imported, tmp_path):
    """``y + x.t()`` of a [96, 192] argument: the transposing restickify iterates 128 padded rows,
    so it reads a padded copy of x, created while settling it; inserted first, it read that copy
    before its definition.  A restickify is now settled before it is inserted."""
    _check("transposed_copy_needing_a_padded_copy", imported, tmp_path)


def test_a_view_copy_inside_a_hinted_group_is_tiled_with_it(imported, tmp_path):
    """A [2, 4, 192] difference flattened into a matmul, under two hints: the copy spyre-fold-views
    makes of the flattening view (a matmul's M is never split) had no hints and split the
    group; it now shares its producer's and reader's hints (``shared_hints``)."""
    _check("view_copy_inside_hinted_group", imported, tmp_path, (1, 22))


def test_nested_tiles_of_a_flattened_mean_stack_one_stick_accumulators(imported, tmp_path):
    """A flattened [128 * 256] mean, its rows tiled by 2 then by 4: the inner [1] accumulator (one
    stick, sticked on its only dim) could not be stacked per outer iteration."""
    _check("nested_tiles_of_flattened_mean", imported, tmp_path)


def test_a_k_tiled_matmul_accumulator_with_padded_rows(imported, tmp_path):
    """A K-tiled [96, 64] matmul whose rows a reduction into [96] pads: the reduction read past
    the fill accumulator; padded, the accumulator (a constant argument) had a layout the
    manifest cannot describe (``_filled_layout``)."""
    _check("k_tiled_matmul_then_short_reduction", imported, tmp_path)


def test_a_reduction_tiled_at_two_levels_around_an_output_level(imported, tmp_path):
    """``x.sum(0)`` with B in 4 and C in 4 tiles around B in 2: the buffer the C loop assembles
    (inside the outer B loop) became one constant argument filled once, so the second outer
    iteration accumulated onto the first one's partial sums (wrong numbers).  It is now a fresh
    buffer per outer iteration (spyre-lower-to-bundle ``filled_buffer``)."""
    _check("reduction_tiled_at_two_levels_around_an_output_level", imported, tmp_path)


def test_a_bfloat16_sum_then_matmul_is_compared_at_bfloat16_precision(imported, tmp_path):
    """A bf16 [256, 192] sum over 256 rows, then a matmul over 192: eager rounds every partial sum
    to 8 bits, the device then held bf16 as SEN169_FP16, and the two differed by 0.02 on 0.22, past
    the float16 tolerance the check applied to bf16 (``compare.TOLERANCES``)."""
    declare_tensor_dim("H", 256)
    declare_tensor_dim("rows", 192)
    _check("bfloat16_sum_then_matmul", imported, tmp_path, (30,))


def test_a_copy_that_selects_one_element_of_each_stick_is_never_an_internal_error(imported, tmp_path):
    """``sigmoid(x.t())[0]`` of an x [192, 100]: the restickify copying row 0 of a storage sticked on
    its rows iterates that row padded to a whole stick (64 elements) while its result has no such
    dim, and the interpreter crashed broadcasting 64 values into one (``ValueError``).  The lowering
    now refuses such a result (``check_result_keeps``), and the interpreter refuses an SDSC file whose
    pointwise or data-movement output drops a label: a located error, or a match once the copy
    can be expressed."""
    try:
        _check("select_of_a_transposed_copy", imported, tmp_path, (1, 27))
    except SpyreError as e:
        assert not isinstance(e, OutputMismatch)
        assert "the result is not indexed by iteration dim" in e.msg and e.location()


def test_a_reduction_of_a_repeated_column_is_never_an_output_the_device_rejects(imported, tmp_path):
    """``x.amax(1, keepdim=True)`` [4, 1] repeated to [8, 1] (``d0 floordiv 2``), then its mean over
    the 8 rows: reading it at the constant stick coordinate 0 was routed through a copy, and the
    mean of that copy lowered to a ``meannonstick`` whose output carried ``scale_`` -2, an SDSC file
    the interpreter's checks (and the device) refuse.  Only a matmul's read is copied for that now
    (``analysis.views.broadcasts_stick``); the reduction is a located error until its read can be
    labelled, or a match."""
    try:
        _check("mean_of_a_repeated_column", imported, tmp_path, (1, 22))
    except SpyreError as e:
        assert not isinstance(e, OutputMismatch)
        assert "the stick dim of operand #0 is not indexed by any iteration dim" in e.msg and e.location()


@pytest.mark.parametrize("name", ["repeated_rows_sliced_at_an_offset", "repeated_rows_cut_inside_a_block",
                                  "flattened_rows_sliced_across_a_boundary"])
def test_a_copy_reading_rows_through_a_division_at_an_offset_is_widened(name, imported, tmp_path):
    """Rows read as ``(r + 1) floordiv 3`` (a row-repeated tensor sliced at row 1) or ``(r + 25)
    floordiv 160`` (flattened rows sliced across a boundary), or ``r floordiv 3`` over 67 rows: no
    split of ``r`` divides it, so the copy spyre-fold-views made kept the division and the lowering
    refused it ("not a sum of scaled dims").  The copy now covers whole blocks and its readers read
    their rows as a slice of it (spyre-fold-views rule 5, ``widen_divisions``)."""
    _check(name, imported, tmp_path, (1, 7, 18))


@pytest.mark.parametrize("name", ["bias_slice_inside_a_stick", "bias_slice_across_sticks"])
def test_a_column_copied_from_inside_a_stick_is_widened_to_the_sticks_start(name, imported, tmp_path):
    """``x + b[16:32, None]``: the copy of the sliced bias into a column read ``b`` from element
    16 of a stick, and its cores started there ("core start ... is not 128-byte aligned").  The
    copy now starts at the stick and its reader reads rows 16 on (spyre-fold-views rule 5)."""
    _check(name, imported, tmp_path, (1, 4, 32))


def test_a_bias_row_sliced_inside_a_stick_is_broadcast_from_one_element_per_stick(imported, tmp_path):
    """``x + b[10:74]`` of a [128] bias: read mid-stick, the add is driven by the rows, which the
    bias does not have ("no dim of its storage [128] follows it").  It is now read from a copy
    with one element per stick, broadcast (``Copier.broadcast_through_unit_stick``)."""
    _check("bias_row_sliced_inside_a_stick", imported, tmp_path, (1, 4, 32))


def test_one_channel_padded_by_concatenation_is_copied_into_its_own_sticks(imported, tmp_path):
    """``cat([0, x[:, 0:1], 0], 2)`` of a [1, 2, 33] x (a grouped convolution's zero padding of
    one channel): the buffer is sticked on its channel dim of one element; its piece read x
    restickified onto the two channels, iterating a whole stick of them, and wrote one element
    per stick: an SDSC file the interpreter refused (the output dropped a label).  The lowering
    now refuses such a result (``check_result_keeps``) and spyre-stickify copies the one channel
    instead (``Copier.fix_operand``)."""
    _check("one_channel_padded_by_concatenation", imported, tmp_path, (1, 4))


def test_a_repeating_view_concatenated_is_copied_whole(imported, tmp_path):
    """``cat([0, x[:, None].expand(8, 2, 64).reshape(16, 64), y])`` (a convolution's zero padding
    of a nearest-upsampled input): the copy of the repeated piece was computed on the view's
    source and read through the view, so the piece inserted was a view ("a piece inserted into a
    full buffer must be the result of a compute op").  A piece's copy now copies every element
    (``NodeEmitter.copy``)."""
    _check("repeated_rows_concatenated", imported, tmp_path, (1, 4))


@pytest.mark.parametrize("name", ["returned_column_of_a_computed_value", "returned_column_and_repeated_transpose"])
def test_a_returned_column_of_a_value_sticked_on_its_columns_matches_eager(name, imported, tmp_path):
    """``(y - x).t()[121]`` of [4, 256] values, returned: its copy read column 121 of a storage
    sticked on its columns, a stick coordinate no iteration dim labels, and the lowering refused it
    (``the stick dim of operand #0 is not indexed by any iteration dim``; bench/fuzz.py, 5 of 300
    programs at seed 52903).  spyre-stickify now copies such a returned view from its storage
    restickified onto the rows the copy iterates, as it does for a compute op reading it
    (``Copier.reads_inside_a_stick``)."""
    _check(name, imported, tmp_path, (1, 4, 31))


def test_a_returned_view_of_a_sparse_reduction_result_is_padded_as_its_copy_reads_it(imported, tmp_path):
    """``x.t().half().amax(0).unsqueeze(-1)`` of an x [32, 160]: the amax over the stick is sparse,
    [1, 32] sticked on its dim of one element, and the returned [32, 1] is sticked on its 32
    entries.  spyre-stickify chose the copy of that view on the fallback of the whole chain (the
    innermost dim, of one element), found no padding missing and left the copy to
    spyre-fold-views, which sticks it as the view (on its 32 entries, padded to a stick of 64): it
    then read the amax result past its 32 entries and the lowering refused it (``bench/fuzz.py
    --seed 61117``).  Both now stick it alike (``view_stick``), so spyre-stickify pads the amax
    result for it."""
    declare_tensor_dim("N", 32)
    declare_tensor_dim("rows", 160)
    _check("returned_unsqueeze_of_a_reduction_over_the_stick", imported, tmp_path, (1, 4, 25))


def test_a_row_of_an_fp32_value_cast_to_fp16_is_copied_with_the_padding_the_cast_reads(imported, tmp_path):
    """``x.float()[3].half()`` of an x [77, 77]: the cast to fp16 iterates 128 elements (two fp16
    sticks), which the fp32 value reaches (its own cast from fp16 padded it so), but the copy of
    row 3, made by spyre-fold-views in the layout of the view (96 elements), did not: the lowering
    refused it (``bench/fuzz.py --seed 31337``, 2 of 300).  spyre-stickify now makes that copy
    itself, so it is the tensor padded for the cast (``Copier.copy_padded_views``)."""
    _check("row_of_a_cast_cast_back", imported, tmp_path, (1, 4))


def test_a_tiled_matmul_read_as_a_slice_of_its_columns_keeps_its_padding(imported, tmp_path):
    """``(x.float() @ w)[..., :3]`` cast to bfloat16, the matmul tiled over its rows: the matmul
    computes its 8 columns into the padding of a result of 3, and the loop's buffer of the 8 had
    them unpadded, so the cast, iterating a bfloat16 stick of 64, read 64 fp32 elements of 32:
    the lowering refused it (``bench/fuzz.py --seed 80417``, 5 of 300).  spyre-coarse-tile now
    keeps the padding of a region written past the result (``tile_type``)."""
    _check("tiled_matmul_read_as_a_column_slice", imported, tmp_path, (1, 4, 17))


def test_a_tiled_matmul_returning_a_slice_of_its_columns_is_refused(tmp_path):
    """The same matmul whose slice is returned: the loop's buffer of all 8 columns replaced the
    returned slice of 3, and the program compiled to an output of the wrong shape.  spyre-coarse-tile
    now refuses to tile it, with a located error."""
    from spyre_mlir.pipeline import compile

    inputs = _inputs({"D": 256, "U": 77, "K": 8}, "DU", "UK")
    with pytest.raises(SpyreError, match=r"cannot tile it: it computes \[256, 8\] and its result is the slice "
                                         r"\[256, 3\] of that .* which 'func.return' reads"):
        compile(_sliced_matmul(lambda y: y), inputs, cores=4, out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_copy_repeating_rows_of_a_padded_dim_pads_its_result_rows(imported, tmp_path):
    """``tanh(x.t()[:, None].expand(96, 4, 96).reshape(384, 96))``: the returned copy writes row
    ``4 * c + r`` for column ``c`` of the transpose, which it iterates padded to a stick (128), so
    it reaches row 511 of a result of 384 rows, and the lowering refused it (``bench/fuzz.py --seed
    31337``, 3 of 300).  spyre-stickify now pads a tensor indexed by a nest of dims as far as the
    nest reaches over their padded extents (``missing_padding``)."""
    _check("rows_of_a_transpose_repeated", imported, tmp_path, (1, 4, 32))


def test_a_reduction_over_flattened_rows_pads_them_to_whole_rows_of_the_nest(imported, tmp_path):
    """``x.view(308, 160).sum(-1)`` of an x [4, 77, 160], no hints: spyre-fold-views splits the 308
    rows into 4 x 77 to read x in place, so the reduction writes row ``77 * d1 + d0`` of a result
    its returned copy had padded to 320 rows, no whole number of 77-row blocks, and the lowering
    refused it (``bench/fuzz.py --seed 90001``, 5 of 300).  The split now pads the rows to 385
    (``_pad_nested_rows``)."""
    _check("sum_of_flattened_rows", imported, tmp_path, (1, 4, 32))


def test_a_contraction_mask_inside_a_hinted_group_is_tiled_with_it(imported, tmp_path):
    """``softmax(x @ w) @ y`` under one hint, K of the second matmul 100 float16 elements:
    spyre-mask-contractions masks the probabilities past K (``exp`` may leave the finite numbers
    there), and the mask had no hints, so it could move neither before nor after the group
    (``bench/fuzz.py --seed 20261201``, 8 of 300).  It now joins the matmul's groups."""
    _check("masked_contraction_inside_hinted_group", imported, tmp_path, (1, 9))


def test_a_matmul_result_viewed_with_a_unit_dim_after_its_columns_stays_a_view(imported, tmp_path):
    """``(x @ w).unsqueeze(2)``: the importer wrote the view's shape [R, E, 1] into the matmul (as it
    does for unit dims before the rows: a batched matmul's ``[1, H, S, S]``), so its innermost
    result dim was no longer N and spyre-stickify refused it ("matmul needs one reduction dim (K)
    and an innermost result dim (N)"; ``test_fuzz.py``'s budget once the fuzzer drew sliced
    products).  Only unit dims before the last are written by the matmul now."""
    _check("matmul_result_with_a_unit_dim_appended", imported, tmp_path)


def test_a_tiled_matmul_computing_past_its_result_keeps_its_result_shape(imported, tmp_path):
    """``(x @ y)[..., :38] @ w`` with the first product tiled: the importer folds the slice into it
    (it computes all 100 columns into the padding of its [4, 38] result), and coarse tiling gave
    its tiles and its loop's result the shape of that region, [4, 100], so the second matmul
    contracted over 100 (``bench/fuzz.py --seed 20261203``, 1 of 400: "reads elements [0, 100) of
    dim 0 of a tile of 38"; untiled hints, auto-tile's tiling on 1 core: "addressed up to element
    127 ... past its storage extent 64").  A tile keeps the result's extent, padded to the region
    (``tile_type``)."""
    _check("product_of_a_tiled_column_slice", imported, tmp_path, (1, 11))


def test_a_contraction_mask_follows_the_operand_it_reads(imported, tmp_path):
    """``exp(x)[..., :69] @ w[:69]`` under a hint tiling the rows: the smaller operand, the weight's
    slice, is masked, and its mask took the matmul's hints though it iterates no row, so coarse
    tiling found the group's ops "not contiguous" (``bench/fuzz.py --seed 20261205``, 1 of 400).
    A mask now joins the groups of the op that writes its operand, none for an argument."""
    _check("mask_of_an_operand_outside_the_group", imported, tmp_path, (1, 9))


def test_a_matmul_computing_rows_past_its_result_pads_them(imported, tmp_path):
    """``(x @ y)[:, :7]`` of [8, 8, 160] @ [8, 160, 160], returned: the importer folds the row slice
    into the matmul, which computes 8 rows into a result of 7, and the result's layout lacked the
    eighth row, so the lowering refused it (``bench/fuzz.py --seed 20261206``, 2 of 500).
    spyre-stickify now pads a tensor as far as its op steps past its extent
    (``missing_padding``)."""
    _check("batched_product_row_slice_returned", imported, tmp_path, (1, 4, 32))
