# Benchmark and long-run driver of the differential fuzzer: draws N random
# programs (test/python/fuzz_programs.py), compiles each in process, runs it on
# the interpreter and compares with eager.  Reads nothing; writes a scratch
# directory per program (deleted), optionally a JSON report and one reproducer
# file per distinct failure; prints a table of outcomes.
"""Long differential-fuzzing runs.

    python bench/fuzz.py --n 2000 [--seed S] [--json FILE] [--keep DIR] [--budget SECONDS]

Outcomes: ``passed``; ``rejected`` (a clean SpyreError from the importer or the
compiler); ``wrong`` (numbers differ from eager); ``invalid-output`` (the
interpreter rejects the compiled directory); ``crash`` (any other exception).
Failures are grouped by kind, place and message; the first program of each
group is printed with its reproducer (and saved under ``--keep``, headed by the
outcome and the spyre-compile/spyre-run commands that reproduce it).  The run is
reproducible from ``--seed``; ``--budget`` stops drawing new programs after
that many seconds.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "python"))
from fuzz_programs import KINDS, FuzzProgram, Outcome, check, describe, programs  # noqa: E402


def signature(outcome: Outcome) -> tuple[str, str, str]:
    """What makes two failures the same: kind, place, message without numbers and names."""
    message = re.sub(r"\d+", "N", outcome.message)
    message = re.sub(r"'[^']*'", "'_'", message)
    return outcome.kind, outcome.where, message[:160]


class Run:
    """Outcomes of the programs checked so far."""

    def __init__(self, budget: float | None):
        self.start = time.perf_counter()
        self.budget = budget
        self.counts: Counter[str] = Counter()
        self.tiled = 0
        self.groups: dict[tuple[str, str, str], list[tuple[FuzzProgram, Outcome]]] = {}

    def over_budget(self) -> bool:
        return self.budget is not None and time.perf_counter() - self.start > self.budget

    def record(self, program: FuzzProgram, outcome: Outcome) -> None:
        self.counts[outcome.kind] += 1
        self.tiled += program.levels > 0
        if outcome.kind != "passed":
            self.groups.setdefault(signature(outcome), []).append((program, outcome))
        total = sum(self.counts.values())
        if total % 50 == 0:
            print(f"  {total} programs, {self.counts['passed']} passed, "
                  f"{time.perf_counter() - self.start:.0f} s", flush=True)


def fuzz(n: int, seed_value: int, run: Run, max_steps: int) -> None:
    """Check ``n`` programs drawn from ``seed_value`` (no shrinking: every outcome is recorded)."""

    @seed(seed_value)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs(max_steps=max_steps))
    def one(program: FuzzProgram) -> None:
        if run.over_budget():
            return
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run.record(program, check(program, Path(tmp) / "out"))

    one()


def reproducer(program: FuzzProgram, outcome: Outcome, filename: str) -> str:
    """The program's source headed by its outcome and the commands that reproduce it."""
    header = [f"# {outcome.kind}: {outcome.message}"]
    if outcome.where:
        header.append(f"#   at {outcome.where}")
    header.append(f"# spyre-compile {filename}:build -o out --cores {program.cores} && "
                  f"spyre-run out --check {filename}:build")
    return "\n".join(header) + "\n" + program.source


def report(run: Run, args: argparse.Namespace) -> dict:
    """Print the table and the first reproducer of each failure group; the JSON record."""
    seconds = time.perf_counter() - run.start
    total = sum(run.counts.values())
    print()
    print(f"{'programs':>9} {'with hints':>10} " + " ".join(f"{k:>14}" for k in KINDS)
          + f" {'time (s)':>9} {'s/program':>10}")
    print(f"{total:>9} {run.tiled:>10} " + " ".join(f"{run.counts[k]:>14}" for k in KINDS)
          + f" {seconds:>9.1f} {seconds / max(total, 1):>10.2f}")
    failures = []
    for sig, items in sorted(run.groups.items(), key=lambda kv: (KINDS.index(kv[0][0]), -len(kv[1]))):
        program, outcome = items[0]
        print(f"\n[{len(items)}x] ", end="")
        print(describe(program, outcome), end="")
        failures.append({"kind": outcome.kind, "where": outcome.where, "message": outcome.message,
                         "count": len(items), "cores": program.cores, "summary": program.summary,
                         "source": program.source})
        if args.keep:
            keep = Path(args.keep)
            keep.mkdir(parents=True, exist_ok=True)
            path = keep / f"{outcome.kind}_{len(failures)}.py"
            path.write_text(reproducer(program, outcome, path.name))
    return {"n": args.n, "seed": args.seed, "programs": total, "with_hints": run.tiled, "seconds": round(seconds, 2),
            "counts": {k: run.counts[k] for k in KINDS}, "failures": failures}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="programs to draw (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--json", metavar="FILE", help="write the counts and failures as JSON")
    parser.add_argument("--keep", metavar="DIR", help="save the first program of each failure group here")
    parser.add_argument("--budget", type=float, metavar="SECONDS", help="stop drawing after this long")
    parser.add_argument("--max-steps", type=int, default=6, help="longest op chain (default 6)")
    args = parser.parse_args()
    run = Run(args.budget)
    fuzz(args.n, args.seed, run, args.max_steps)
    record = report(run, args)
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
