"""Differential fuzzing in CI: random small programs with random hints match eager.

Programs come from :func:`fuzz_programs.programs` (torch.export -> importer ->
the whole in-process pipeline -> the interpreter, compared with eager under the
fp16 tolerance).  The strategy draws only programs the compiler should accept,
so any outcome but ``passed`` fails, with the reproducer in the message.  The
budget is small and derandomized so CI is fast and reproducible; long runs are
``python bench/fuzz.py --n N``.  Set ``SPYRE_FUZZ_PROFILE=explore`` for a
random (non-derandomized) run of 100 programs.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

from fuzz_programs import FuzzProgram, check, describe, programs

# No shrinking: an example costs about a second and the first failure's source is already a
# standalone reproducer (bench/fuzz.py --keep saves them; test_fuzz_regressions.py pins them).
_COMMON = dict(deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("fuzz-ci", max_examples=20, derandomize=True, **_COMMON)
settings.register_profile("fuzz-explore", max_examples=100, **_COMMON)
PROFILE = settings.get_profile(f"fuzz-{os.environ.get('SPYRE_FUZZ_PROFILE', 'ci')}")


@PROFILE
@given(program=programs())
def test_random_program_matches_eager(program: FuzzProgram):
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # restickify copies and skipped work_div splits warn by design
        outcome = check(program, Path(tmp) / "out")
    assert outcome.kind == "passed", describe(program, outcome)
