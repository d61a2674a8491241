"""``torch.cat`` and ``torch.stack`` end to end: each piece's ``identity`` copy writes its window of
one buffer in place (DESIGN §15), on 1, 4 and 32 cores.

transformers' Llama ``rotate_half`` is ``cat(-x[..., h:], x[..., :h])``.  With a head dim of 64 in
fp16 its halves are 32 elements, half a stick: the importer makes it ``x @ R``, a matmul by a
signed permutation (``spyre_mlir.importer.rotation``); halves of whole sticks stay a
concatenation, but ``q * cos + rotate_half(q) * sin`` of them is computed on the halves, each
written into its window of the result, and matches eager bit for bit.  Other pieces of half a
stick (the halves swapped without the negation) can be addressed on the head dim's sticks
neither as the second half nor at the offset of the second piece; the pieces and the buffer are
then sticked on another dim.  GPT-2's cache update concatenates an empty past.
"""

from __future__ import annotations

import pytest
import torch

from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint
from spyre_mlir.analysis.assembly import Assembly, assemblies
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.dialects.spyre import target_config, tensor_layout
from spyre_mlir.importer.table import lookup
from spyre_mlir.interpreter.compare import Tolerance
from spyre_mlir.mlir_text import make_context
from spyre_mlir.passes.plan_memory import PlannedValue, plan_memory
from spyre_mlir.pipeline import compile_stages

from e2e_support import ImportedPrograms, compile_and_check

f16, f32 = torch.float16, torch.float32


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def scaled_pieces(dim: int, shapes, dtype=f16):
    """``cat`` of computed pieces (``x * (i + 1)``) along ``dim``."""
    def factory():
        def fn(*xs):
            return torch.cat([x * (i + 1) for i, x in enumerate(xs)], dim=dim)
        return fn, tuple(torch.randn(*s, dtype=dtype) for s in shapes)
    return factory


def rotate_half_of(head_dim: int, dtype: torch.dtype):
    return lambda: (rotate_half, (torch.randn(2, 4, 16, head_dim, dtype=dtype),))


def halves(negated: str | None):
    """``cat`` of the two halves of 64 fp16 columns that is no ``rotate_half``: the halves swapped
    (``negated`` None), or in place with the ``"low"`` or swapped with the ``"low"`` one negated."""
    def fn(x):
        low, high = x[..., :32], x[..., 32:]
        if negated is None:
            return torch.cat((high, low), dim=-1)
        return torch.cat((-low, high), dim=-1) if negated == "low" else torch.cat((high, -low), dim=-1)
    return lambda: (fn, (torch.randn(2, 4, 16, 64, dtype=f16),))


def rotary(head_dim: int, dtype: torch.dtype):
    """Llama's ``q * cos + rotate_half(q) * sin``."""
    def factory():
        def fn(q, cos, sin):
            return q * cos + rotate_half(q) * sin
        angles = torch.randn(16, head_dim)
        return fn, (torch.randn(1, 4, 16, head_dim, dtype=dtype), angles.cos().to(dtype), angles.sin().to(dtype))
    return factory


class ProjectedRotary(torch.nn.Module):
    """Llama's rotary embedding of heads split from an ``nn.Linear`` projection: ``rotate_half``
    reads its halves from the projection's hidden dim."""

    def __init__(self, dtype: torch.dtype, head_dim: int):
        super().__init__()
        self.head_dim = head_dim
        self.q = torch.nn.Linear(4 * head_dim, 4 * head_dim, bias=False, dtype=dtype)

    def forward(self, x, cos, sin):
        b, length, _ = x.shape
        q = self.q(x).view(b, length, 4, self.head_dim).transpose(1, 2)
        return q * cos + rotate_half(q) * sin


def projected_rotary(batch: int, length: int, dtype: torch.dtype, head_dim: int = 32):
    """Four heads of ``head_dim``."""
    def factory():
        angles = torch.randn(length, head_dim)
        return ProjectedRotary(dtype, head_dim), (torch.randn(batch, length, 4 * head_dim, dtype=dtype),
                                                  angles.cos().to(dtype), angles.sin().to(dtype))
    return factory


def hinted_rotary(cat_in_scope: bool, head_dim: int = 128):
    """Llama's rotary embedding with its elementwise ops tiled on L; ``rotate_half`` inside the hint's
    scope or before it (a concatenation of whole sticks at the default ``head_dim``)."""
    def factory():
        for name, size in (("B", 1), ("H", 4), ("L", 128), ("D", head_dim)):
            declare_tensor_dim(name, size)
        q = torch.randn(1, 4, 128, head_dim, dtype=f16)
        angles = torch.randn(128, head_dim)
        cos, sin = angles.cos().to(f16), angles.sin().to(f16)
        name_tensor_dims(q, ["B", "H", "L", "D"])
        for t in (cos, sin):
            name_tensor_dims(t, ["L", "D"])

        def fn(q, cos, sin):
            rotated = None if cat_in_scope else rotate_half(q)
            with spyre_hint(tiles={"L": 2}):
                return q * cos + (rotate_half(q) if cat_in_scope else rotated) * sin
        return fn, (q, cos, sin)
    return factory


def cat_then_matmul(along_k: bool):
    """A cat that is a matmul operand: stacked rows of A, or B's K (100 rows: padded to whole sticks)."""
    def factory():
        if along_k:
            return (lambda a, b, w: a @ torch.cat([w, b + 1], dim=0)), \
                (torch.randn(8, 100, dtype=f16), torch.randn(40, 64, dtype=f16), torch.randn(60, 64, dtype=f16))
        return (lambda a, b, w: torch.cat([a, b * 2], dim=0) @ w), \
            (torch.randn(8, 64, dtype=f16), torch.randn(24, 64, dtype=f16), torch.randn(64, 128, dtype=f16))
    return factory


def returned_and_read():
    """The cat is an output and is read by a later op (which also reads a value live across it)."""
    def factory():
        def fn(a, b):
            e = torch.exp(a)
            c = torch.cat([a * 2, b - 1], dim=0)
            return c, c.sum(0, keepdim=True) + e.sum(0, keepdim=True)
        return fn, (torch.randn(64, 64, dtype=f16), torch.randn(64, 64, dtype=f16))
    return factory


def stacked():
    return lambda: ((lambda a, b, c: torch.stack([a + 1, b * 2, c], dim=1)),
                    tuple(torch.randn(8, 64, dtype=f16) for _ in range(3)))


def with_an_empty_past(middle: bool):
    """GPT-2's cache update: ``cat(past, k)`` with nothing in the past (first or between pieces)."""
    def factory():
        if middle:
            return (lambda a, k: torch.cat([a + 1, k[:, :0], k * 2], dim=1) * 3), \
                (torch.randn(2, 3, 64, dtype=f16), torch.randn(2, 5, 64, dtype=f16))
        return (lambda k: torch.cat([torch.zeros(2, 0, 64, dtype=f16), k * 2], dim=1)), \
            (torch.randn(2, 5, 64, dtype=f16),)
    return factory


def nested_and_promoted():
    """A cat of cats, and a cat of an fp16 and an fp32 piece (promoted to fp32)."""
    def factory():
        def fn(a, b, c):
            return torch.cat([torch.cat([a, b], 0), torch.cat([a * 3, b], 0)], 1), torch.cat([a, c], 0) * 2
        return fn, (torch.randn(8, 64, dtype=f16), torch.randn(8, 64, dtype=f16), torch.randn(8, 64, dtype=f32))
    return factory


def rank_one(first: int):
    return lambda: ((lambda a, b: torch.cat([a, b]) + 1), (torch.randn(first, dtype=f16), torch.randn(100, dtype=f16)))


def cat_in_the_pool():
    """An intermediate cat larger than LX, read while another large value is live."""
    def factory():
        def fn(a, b):
            e = torch.exp(a)
            c = torch.cat([a * 2, b - 1], dim=0)
            return (c[:512] + c[512:]) * e
        return fn, (torch.randn(512, 1024, dtype=f16) * 0.5, torch.randn(512, 1024, dtype=f16))
    return factory


def misaligned_slice():
    """``-x[..., 32:]`` of 64 fp16 columns: the slice starts mid-stick."""
    return lambda: ((lambda x: -x[..., 32:] * 2), (torch.randn(2, 16, 64, dtype=f16),))


PROGRAMS = {
    "rows_three_pieces": scaled_pieces(0, [(8, 64), (16, 64), (4, 64)]),
    "middle_two_pieces": scaled_pieces(1, [(2, 3, 64), (2, 5, 64)]),
    "columns_two_pieces": scaled_pieces(-1, [(8, 64), (8, 128)]),
    "columns_three_pieces_fp32": scaled_pieces(-1, [(8, 32), (8, 64), (8, 40)], f32),
    "rotate_half_64_fp16": rotate_half_of(64, f16),
    "rotate_half_64_fp32": rotate_half_of(64, f32),
    "rotate_half_128_fp16": rotate_half_of(128, f16),
    "rotate_half_128_fp32": rotate_half_of(128, f32),
    "rotate_half_vector": lambda: (rotate_half, (torch.randn(64, dtype=f16),)),
    "rotary_64_fp16": rotary(64, f16),
    "rotary_128_fp16": rotary(128, f16),
    "rotary_128_bf16": rotary(128, torch.bfloat16),
    "rotary_64_fp32": rotary(64, f32),
    "projected_rotary_128_fp16": projected_rotary(2, 64, f16, head_dim=128),
    "projected_rotary_1x1_fp32": projected_rotary(1, 1, f32),
    "projected_rotary_2x100_fp32": projected_rotary(2, 100, f32),
    "projected_rotary_2x96_fp16": projected_rotary(2, 96, f16),
    "cat_rows_then_matmul": cat_then_matmul(along_k=False),
    "cat_k_then_matmul": cat_then_matmul(along_k=True),
    "returned_and_read": returned_and_read(),
    "stack": stacked(),
    "empty_past": with_an_empty_past(middle=False),
    "empty_middle": with_an_empty_past(middle=True),
    "nested_and_promoted": nested_and_promoted(),
    "rank_one_whole_stick": rank_one(64),
    "rank_one_mid_stick": rank_one(30),
    "cat_in_the_pool": cat_in_the_pool(),
    "hinted_rotary_cat_before": hinted_rotary(cat_in_scope=False),
    "hinted_rotary_cat_inside": hinted_rotary(cat_in_scope=True),
    "hinted_rotary_64_inside": hinted_rotary(cat_in_scope=True, head_dim=64),
    "swapped_halves": halves(negated=None),
    "negated_low_half": halves(negated="low"),
    "swapped_negated_low_half": halves(negated="high"),
    "misaligned_slice": misaligned_slice(),
}

imported = ImportedPrograms(PROGRAMS)


def test_cat_and_stack_have_emitters():
    assert lookup(torch.ops.aten.cat.default) is not None
    assert lookup(torch.ops.aten.stack.default) is not None


@pytest.mark.parametrize("name, cores", [
    ("rows_three_pieces", 1), ("rows_three_pieces", 32),
    ("middle_two_pieces", 4),
    ("columns_two_pieces", 1), ("columns_two_pieces", 4), ("columns_two_pieces", 32),
    ("columns_three_pieces_fp32", 4),
])
def test_a_cat_of_computed_pieces_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("name, cores", [("nested_and_promoted", 4), ("rank_one_whole_stick", 1)])
def test_nested_promoted_and_rank_one_cats_match_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


def test_a_rank_one_cat_whose_second_piece_starts_mid_stick_is_one_located_error(tmp_path):
    with pytest.raises(SpyreError, match=r"the pieces of a tensor of shape \[130\] start at offsets \[\[0\], \[30\]\]: "
                                         r"no dim has them all at whole sticks of 64 elements") as error:
        compile_and_check("rank_one_mid_stick", 1, tmp_path / "out", imported)
    assert error.value.location().startswith(f"{__file__}:")


@pytest.mark.parametrize("name, cores", [
    ("rotate_half_64_fp16", 1), ("rotate_half_64_fp16", 4), ("rotate_half_64_fp16", 32),
    ("rotate_half_64_fp32", 4), ("rotate_half_128_fp16", 32), ("rotate_half_128_fp32", 1),
    ("rotary_64_fp16", 4),
])
def test_rotate_half_of_sliced_halves_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("name, cores", [
    ("projected_rotary_1x1_fp32", 1), ("projected_rotary_1x1_fp32", 32), ("projected_rotary_2x100_fp32", 4),
    ("projected_rotary_2x96_fp16", 32),
])
def test_regression_rotate_half_of_projected_heads_of_one_token_or_two_batches(name, cores, tmp_path):
    """Heads of 32 split from a projection: rotate_half's halves (half a float32 stick, and the
    heads themselves in float16) cannot be read on the projection's hidden dim, and there is no
    sequence dim of more than one element to read them from (one token) or only rows ``b * L +
    l`` with ``l`` not a whole number of sticks (two batches of 100, or of 96 in float16).  Their
    copies read the projection sticked on its single row, or unflattened into ``[B, L]``; the
    lowering refused them before ("shares a stick with another dim")."""
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("name, cores", [
    ("cat_rows_then_matmul", 4), ("cat_k_then_matmul", 1), ("cat_k_then_matmul", 32),
])
def test_a_cat_feeding_a_matmul_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("cores", [1, 32])
def test_a_cat_returned_as_an_output_and_read_matches_eager(cores, tmp_path):
    compile_and_check("returned_and_read", cores, tmp_path / "out", imported)


@pytest.mark.parametrize("cores", [1, 4])
def test_stack_matches_eager(cores, tmp_path):
    compile_and_check("stack", cores, tmp_path / "out", imported)


@pytest.mark.parametrize("name, cores", [("empty_past", 4), ("empty_middle", 32)])
def test_an_empty_piece_contributes_nothing(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


@pytest.mark.parametrize("cores", [1, 4])
def test_a_slice_that_starts_mid_stick_is_read_off_the_stick_and_matches_eager(cores, tmp_path):
    compile_and_check("misaligned_slice", cores, tmp_path / "out", imported)


def test_a_tiled_group_after_a_cat_matches_eager(tmp_path):
    compile_and_check("hinted_rotary_cat_before", 4, tmp_path / "out", imported)


def test_a_half_stick_rotation_inside_a_tiled_group_is_a_matmul_and_matches_eager(tmp_path):
    compile_and_check("hinted_rotary_64_inside", 4, tmp_path / "out", imported)


def test_a_cat_a_tiled_group_both_feeds_and_reads_is_one_located_error(tmp_path):
    with pytest.raises(SpyreError, match=r"a concatenation \(torch.cat, torch.stack\) inside the group of hints "
                                         r"\[1\] .* concatenations are not tiled") as error:
        compile_and_check("hinted_rotary_cat_inside", 4, tmp_path / "out", imported)
    assert error.value.location().startswith(f"{__file__}:")


def _rotation_matmuls(module) -> list:
    """The matmuls of ``module`` by a function argument (``rotate_half`` made ``x @ R``: the
    programs' only input is ``x``, R a constant)."""
    return [op for op in module.walk() if op.name == "spyre.matmul" and isinstance(op.operands[1], BlockArgument)]


def test_rotate_half_of_half_stick_halves_is_a_matmul_by_a_signed_permutation():
    _, module = imported("rotate_half_64_fp16")
    (matmul,) = _rotation_matmuls(module)
    assert [op for op in module.walk() if op.name in ("tensor.empty", "tensor.insert_slice")] == []
    assert [op.name for op in module.walk() if op.name.startswith("spyre.")] == ["spyre.matmul"]
    assert tensor_layout(matmul.operands[1].type).host_shape == (64, 64)


def _on_halves(module) -> bool:
    """Whether ``module`` computes a rotary embedding on halves: its sums are two pieces of one
    assembly, and nothing is negated."""
    (assembly,) = assemblies(next(op for op in module.walk() if isinstance(op, FuncOp)))
    return [op.op_func_name.data for op in assembly.copies] == ["sub", "add"] and \
        not [op for op in module.walk() if getattr(op, "op_func_name", None) and op.op_func_name.data == "neg"]


@pytest.mark.parametrize("name, cores", [
    ("rotary_128_fp16", 1), ("rotary_128_fp16", 4), ("rotary_128_fp16", 32), ("rotary_128_bf16", 4),
    ("rotary_64_fp32", 32),
])
def test_a_rotary_embedding_of_whole_stick_halves_is_computed_on_the_halves_bit_for_bit(name, cores, tmp_path):
    """``q * cos + rotate_half(q) * sin`` of halves of whole sticks: ``q1 * cos1 - q2 * sin1`` and
    ``q2 * cos2 + q1 * sin2`` written into the halves of the result, with no copy of a half
    (``rotated_on_halves``); it rounds as eager does, so the outputs are equal."""
    assert _on_halves(imported(name)[1])
    compile_and_check(name, cores, tmp_path / "out", imported, tolerance=Tolerance(rtol=0.0, atol=0.0))


@pytest.mark.parametrize("cores", [4, 32])
def test_a_rotary_embedding_of_projected_heads_is_computed_on_the_halves(cores, tmp_path):
    """Heads of 128 split from a projection (two batches): the halves are read from the
    projection's result in place, and the output matches eager."""
    assert _on_halves(imported("projected_rotary_128_fp16")[1])
    compile_and_check("projected_rotary_128_fp16", cores, tmp_path / "out", imported)


@pytest.mark.parametrize("name", ["rotate_half_128_fp16", "rotate_half_64_fp32", "rotate_half_vector",
                                  "swapped_halves", "negated_low_half", "swapped_negated_low_half"])
def test_whole_stick_halves_and_other_concatenations_of_halves_stay_concatenations(name):
    _, module = imported(name)
    assert not _rotation_matmuls(module)
    assert len([op for op in module.walk() if op.name == "tensor.insert_slice"]) == 2


@pytest.mark.parametrize("name, cores", [("swapped_halves", 1), ("swapped_halves", 32),
                                         ("negated_low_half", 4), ("swapped_negated_low_half", 4)])
def test_half_stick_halves_concatenated_otherwise_match_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)


def test_a_single_non_empty_piece_is_the_result_itself():
    _, module = imported("empty_past")
    assert not [op for op in module.walk() if op.name in ("tensor.empty", "tensor.insert_slice")]
    assert [op.op_func_name.data for op in module.walk() if op.name == "spyre.pointwise"] == ["mul"]


def planned_values(name: str, cores: int) -> tuple[Assembly, list[PlannedValue]]:
    """The assembly of ``name`` and every value memory planning placed, on ``cores``."""
    module = imported(name)[1].clone()
    stages = compile_stages(cores)
    assert [stage.name for stage in stages[-2:]] == ["spyre-plan-memory", "spyre-lower-to-bundle"]
    for stage in stages[:-2]:
        stage.apply(make_context(), module)
    body = next(op for op in module.walk() if isinstance(op, FuncOp))
    (assembly,) = assemblies(body)
    return assembly, plan_memory(body, target_config(module).usable_lx_bytes)


def test_the_pieces_of_an_intermediate_cat_share_one_pool_buffer_that_no_live_value_overlaps():
    assembly, planned = planned_values("cat_in_the_pool", 1)
    placements = {copy.placement for copy in assembly.copies}
    assert len(placements) == 1 and next(iter(placements)).kind.data == "pool"
    (buffer,) = {p.buffer for p in planned if p.value.owner in assembly.copies}
    assert buffer.size == tensor_layout(assembly.value.type).nbytes
    offset = next(iter(placements)).value.data
    live = [other for other in planned if other.value.owner not in assembly.copies
            and other.placement.kind.data == "pool" and other.buffer.overlaps(buffer)]
    assert live  # the pieces' sources and the reader's result
    for other in live:
        start = other.placement.value.data
        assert start + other.buffer.size <= offset or offset + buffer.size <= start


@pytest.mark.parametrize("cores", [1, 4])
def test_an_intermediate_cat_in_the_pool_matches_eager(cores, tmp_path):
    compile_and_check("cat_in_the_pool", cores, tmp_path / "out", imported)
