"""Differential fuzzing in CI: random small programs with random hints match eager.

Programs come from :func:`fuzz_programs.programs` (torch.export -> importer ->
the whole in-process pipeline -> the interpreter, compared with eager under the
tolerance of each output's dtype).  The strategy draws only programs the compiler should accept,
so any outcome but ``passed`` fails, with the reproducer in the message.  The
budget is small and derandomized so CI is fast and reproducible; long runs are
``python bench/fuzz.py --n N``.  Set ``SPYRE_FUZZ_PROFILE=explore`` for a
random (non-derandomized) run of 100 programs.

A few programs are pinned, built from the fuzzer's own constructs: bugs that sat one view and one
dtype outside the space the fuzzer drew before it had ragged extents, dtypes, casts, masks and
repeat_kv views, and a bfloat16 output (which the comparison with eager could not read).
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fuzz_programs import (STEP_KINDS, Draft, FuzzProgram, cast, check, describe, masked_softmax, matmul,
                           programs, render, repeat_kv, transpose)

# No shrinking: an example costs about a second and the first failure's source is already a
# standalone reproducer (bench/fuzz.py --keep saves them; test_fuzz_regressions.py pins them).
_COMMON = dict(deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("fuzz-ci", max_examples=26, derandomize=True, **_COMMON)
settings.register_profile("fuzz-explore", max_examples=100, **_COMMON)
PROFILE = settings.get_profile(f"fuzz-{os.environ.get('SPYRE_FUZZ_PROFILE', 'ci')}")


def _check_passes(program: FuzzProgram) -> None:
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # restickify copies and skipped work_div splits warn by design
        outcome = check(program, Path(tmp) / "out")
    assert outcome.kind == "passed", describe(program, outcome)


@PROFILE
@given(program=programs())
def test_random_program_matches_eager(program: FuzzProgram):
    _check_passes(program)


def _attention_with_repeat_kv(length: int) -> FuzzProgram:
    """``softmax(q @ k.transpose(-1, -2) + causal -inf mask) @ repeat_kv(v)`` with q and k
    [1, 4, L, 64] and v [1, 2, L, 64] repeated to 4 heads, unhinted."""
    d = Draft({"H": 2, "G": 2, "L": length, "Lk": length, "Dk": 64, "Dv": 64})
    q = d.new_input(((), ("H", "G"), ("L",), ("Dk",)))
    k = d.new_input(((), ("H", "G"), ("Lk",), ("Dk",)))
    v = repeat_kv(d, d.new_input(((), ("H",), ("Lk",), ("Dv",))), 1, "G")
    p = masked_softmax(d, matmul(d, q, transpose(d, k, -1, -2)), ("causal", "-inf"))
    return render(d, d.finish([matmul(d, p, v)]), cores=4)


@pytest.mark.parametrize("length", [96, 100, 160])
def test_attention_with_repeat_kv_at_length_off_whole_sticks(length: int):
    """The second matmul's B operand, repeat_kv(v), is a view copy whose K = L is padded to whole
    sticks; the copy lost the zero padding of K, so the padded products made wrong numbers."""
    _check_passes(_attention_with_repeat_kv(length))


def test_fp16_to_fp32_cast_of_rows_off_whole_fp16_sticks():
    """``x.float()`` on fp16 [64, 96]: 96 is whole float32 sticks (3) but not whole fp16 sticks,
    and the cast wrote an SDSC whose HBM accesses ran past its input's allocation."""
    d = Draft({"M": 64, "N": 96})
    x = d.new_input((("M",), ("N",)))
    _check_passes(render(d, d.finish([cast(d, x, "float32")]), cores=4))


def test_bfloat16_output_is_compared_with_eager():
    """numpy has no bfloat16: the eager reference of a bfloat16 output is read as float32 (a
    tensor's ``.numpy()`` raised, so every program returning bfloat16 was a crash)."""
    d = Draft({"M": 64, "N": 128})
    x = d.new_input((("M",), ("N",)))
    _check_passes(render(d, d.finish([cast(d, x, "bfloat16")]), cores=2))


@settings(max_examples=20, derandomize=True, deadline=None, database=None)
@given(data=st.data())
def test_a_binary_step_with_no_value_to_pair_with_draws_a_new_input(data):
    """The only value (512 x 256) is too large for a partner of its dims to fit, so no existing
    value may be its second operand: the step reads a new input instead (drawing from the empty
    list of partners raised, which stopped ``bench/fuzz.py --max-steps 8``)."""
    d = Draft({"A": 512, "B": 256})
    x = d.new_input((("A",), ("B",)))
    assert STEP_KINDS["binary"](data.draw, d)
    (step,) = d.steps
    assert x.var in step.operands and len(d.inputs) == 2


def test_a_mismatch_counts_as_wrong_wherever_the_fuzz_scripts_run_from(tmp_path):
    """The fuzz scripts copied to another tree classify a mismatch from the installed toolchain as
    ``wrong`` (they once judged by frames under their own tree, and called every error there a
    rejection) and a compile error as ``rejected``."""
    import shutil
    import subprocess
    import sys

    here = Path(__file__).resolve().parent
    for name in ("fuzz_programs.py", "e2e_support.py"):
        shutil.copy(here / name, tmp_path / name)
    script = (
        "import numpy as np\n"
        "from fuzz_programs import classify\n"
        "from spyre_mlir.interpreter import compare, tolerance_for\n"
        "from spyre_mlir.pipeline import load_source\n"
        "outcomes = []\n"
        "for attempt in (lambda: compare('y', np.ones(3), np.zeros(3), tolerance_for('float32')),\n"
        "                lambda: load_source('missing.mlir')):\n"
        "    try:\n"
        "        attempt()\n"
        "    except Exception as e:\n"
        "        outcomes.append(classify(e).kind)\n"
        "print(*outcomes)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["wrong", "rejected"]
