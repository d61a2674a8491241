# pytest set-up of the Python suite: the hypothesis profile every property test runs under.
# Reads SPYRE_HYPOTHESIS_PROFILE; writes hypothesis's default settings.
"""Hypothesis profiles for the property tests.

``ci`` (the default) derandomizes them: each test draws the same examples on every run,
seeded by the test itself, so that a red run is one a change made and any run reproduces it.
``explore`` draws fresh examples each run, the longer search a change to a pass deserves
before it lands::

    SPYRE_HYPOTHESIS_PROFILE=explore python -m pytest test/python -k "folded_maps or regroup"

Each test keeps its own example budget (``@settings(max_examples=...)``); the fuzzer of whole
programs has profiles of its own (``test_fuzz.py``, ``bench/fuzz.py``).
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("SPYRE_HYPOTHESIS_PROFILE", "ci"))
