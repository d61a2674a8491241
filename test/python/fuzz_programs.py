# Random small torch programs for differential fuzzing of the whole toolchain.
# Reads nothing; `programs()` draws a program (named dims, a chain of pointwise,
# reduction, matmul and view ops, valid `tiles=` hints, a core count) and renders
# it as a standalone model file with a `build()` factory, like examples/*.py;
# `check()` exports it, compiles it in process, runs it on the interpreter and
# compares with eager through e2e_support, writing only a scratch output directory.
"""Differential fuzzing: random programs with random hints, compiled and compared with eager.

A drawn :class:`FuzzProgram` is Python source::

    def kernel(x0, x1):
        with spyre_hint(tiles={"M": 2}):
            v0 = x0 + x1
            v1 = v0.sum(-1, keepdim=True)
        return v1

    def build():
        declare_tensor_dim("M", 64); declare_tensor_dim("N", 128)
        ...
        return kernel, (x0, x1)

so a failure is reproduced by saving :attr:`FuzzProgram.source` and running
``spyre-compile repro.py:build -o out --cores C && spyre-run out --check repro.py:build``.

Hints are valid by the rules of DESIGN §7 as the strategy models them: each tile
count divides its dim (times the counts of enclosing levels on the same dim),
tiles of a dim that is ever a stick dim are whole sticks, the ops a level divides
are contiguous in their loop, no op reads a partial reduction inside the loop that
produces it, and a name that is an inner part of a flattened dim is never tiled.
A :class:`~spyre_mlir.diagnostics.SpyreError` from the compiler is therefore a
finding too (kind ``rejected``), reported apart from crashes and wrong numbers.
"""

from __future__ import annotations

import io
import linecache
import math
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from spyre_mlir.diagnostics import SpyreError

from e2e_support import ImportedPrograms, compile_and_check

Group = tuple[str, ...]
"""The dim names of one tensor dim, outermost first (several after a flatten; none for size 1)."""

STICK = 64
"""fp16 elements per 128-byte stick."""

NAMES = ("A", "B", "C", "D", "M", "N", "K", "L", "R", "H", "E", "Dk", "seq", "rows", "cols")
SMALL_SIZES = (2, 4, 8, 16, 32, 96, 160)
"""Extents of non-stick dims; 96 and 160 are padded sticks wherever they end up on the stick."""
STICK_SIZES = (64, 128, 192, 256)
MAX_ELEMENTS = 1 << 15
"""Largest tensor drawn (elements): keeps a program well under a second."""
INPUT_SCALE = 0.25
"""Inputs are uniform in [-INPUT_SCALE, INPUT_SCALE): small enough that the fp16 rounding of the
partial sums of a tiled reduction (eager sums in float32) stays inside the tolerance after the
ops that follow scale it up, large enough that a misplaced element is far outside it."""
BOUND_LIMIT = 1e4
"""Largest magnitude a value may reach; fp16 holds 65504."""

UNARY = {
    "relu": ("torch.relu({})", lambda b: b),
    "neg": ("-{}", lambda b: b),
    "abs": ("torch.abs({})", lambda b: b),
    "tanh": ("torch.tanh({})", lambda b: min(b, 1.0)),
    "sigmoid": ("torch.sigmoid({})", lambda b: 1.0),
    "silu": ("torch.nn.functional.silu({})", lambda b: b),
    "exp": ("torch.exp({})", lambda b: math.exp(b)),
}
"""Unary ops: source template and the bound of the result given the operand's."""

SCALAR = {
    "mul": ("{} * {}", lambda b, c: b * abs(c)),
    "add": ("{} + {}", lambda b, c: b + abs(c)),
    "sub": ("{} - {}", lambda b, c: b + abs(c)),
    "div": ("{} / {}", lambda b, c: b / abs(c)),
}
SCALARS = (0.5, 2.0, -1.5, 0.25, 3.0)

BINARY = {
    "add": ("{} + {}", lambda a, b: a + b),
    "sub": ("{} - {}", lambda a, b: a + b),
    "mul": ("{} * {}", lambda a, b: a * b),
    "maximum": ("torch.maximum({}, {})", max),
    "minimum": ("torch.minimum({}, {})", max),
}

REDUCE = {
    "sum": ("{}.sum({}, keepdim={})", lambda b, n: b * n),
    "mean": ("{}.mean({}, keepdim={})", lambda b, n: b),
    "amax": ("{}.amax({}, keepdim={})", lambda b, n: b),
    "amin": ("{}.amin({}, keepdim={})", lambda b, n: b),
}


# --------------------------------------------------------------------------
# The program model
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A tensor of the program: its variable, dim groups, a bound on its magnitude, its producers."""

    var: str
    dims: tuple[Group, ...]
    bound: float
    producers: frozenset[str] = frozenset()
    """Variables of the compute steps whose result this value is (through views); empty for inputs."""


@dataclass(frozen=True)
class Step:
    """One line of the kernel: ``out.var = code``."""

    code: str
    out: Value
    iterates: frozenset[str] = frozenset()
    """Dim names the step's compute ops iterate (empty for a view)."""
    reduces: frozenset[str] = frozenset()
    """Dim names it reduces: tiled, its result is partial inside the loop."""
    operands: tuple[str, ...] = ()
    """Variables it reads."""
    reads: frozenset[str] = frozenset()
    """Variables of the compute steps whose results it reads."""
    untileable: frozenset[str] = frozenset()
    """Names it may not be tiled on: a decomposition reads its own partial reduction there, or the
    importer flattens them into an inner part of an iteration dim."""
    is_compute: bool = True
    """False for a view (no compute op)."""


@dataclass(frozen=True)
class Hint:
    """``with spyre_hint(tiles=...)`` around steps ``[start, stop)``; ``order`` is its id order."""

    start: int
    stop: int
    tiles: tuple[tuple[str, int], ...]
    order: int


@dataclass
class FuzzProgram:
    """A drawn program: its model source (with ``build()``), its core count and a summary."""

    source: str
    cores: int
    summary: str
    levels: int = 0
    """Tiling levels its hints ask for (0: untiled)."""
    filename: str = "fuzz_program.py"

    def factory(self) -> Callable[[], Any]:
        """The ``build`` function of :attr:`source` (registered with linecache for locations)."""
        lines = self.source.splitlines(keepends=True)
        linecache.cache[self.filename] = (len(self.source), None, lines, self.filename)
        scope: dict[str, Any] = {"__name__": "fuzz_program"}
        exec(compile(self.source, self.filename, "exec"), scope)
        return scope["build"]


@dataclass
class _Draft:
    """The program being drawn."""

    sizes: dict[str, int]
    inputs: list[Value] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)

    def size(self, group: Group) -> int:
        return math.prod(self.sizes[n] for n in group)

    def shape(self, value: Value) -> list[int]:
        return [self.size(g) for g in value.dims]

    def values(self) -> list[Value]:
        return [*self.inputs, *(s.out for s in self.steps)]

    def new_input(self, dims: tuple[Group, ...]) -> Value:
        value = Value(f"x{len(self.inputs)}", dims, INPUT_SCALE)
        self.inputs.append(value)
        return value

    def add(self, code: str, dims: tuple[Group, ...], bound: float, operands: Sequence[Value],
            reduces: Sequence[str] = (), compute: bool = True, untileable: Sequence[str] = ()) -> Value:
        var = f"v{len(self.steps)}"
        reads = frozenset(p for v in operands for p in v.producers)
        names = {n for v in operands for g in v.dims for n in g} | {n for g in dims for n in g}
        out = Value(var, dims, bound, frozenset({var}) if compute else reads)
        self.steps.append(Step(code, out, frozenset(names) if compute else frozenset(), frozenset(reduces),
                               tuple(v.var for v in operands), reads, frozenset(untileable), compute))
        return out

    def operand(self, draw: Any, candidates: Sequence[Value] | None = None) -> Value:
        """Mostly the newest candidate (programs are chains), sometimes any."""
        pool = list(self.values() if candidates is None else candidates)
        if draw(st.integers(0, 2)):
            return pool[-1]
        return draw(st.sampled_from(pool))

    def prune(self, outputs: Sequence[Value]) -> None:
        """Drop the steps and inputs no output depends on (torch.export would drop them)."""
        live = {v.var for v in outputs}
        for step in reversed(self.steps):
            if step.out.var in live:
                live.update(step.operands)
        self.steps = [s for s in self.steps if s.out.var in live]
        self.inputs = [v for v in self.inputs if v.var in live]


def _elements(draft: _Draft, dims: tuple[Group, ...]) -> int:
    return math.prod(draft.size(g) for g in dims)


# --------------------------------------------------------------------------
# Drawing steps
# --------------------------------------------------------------------------


def _broadcast(a: tuple[Group, ...], b: tuple[Group, ...]) -> tuple[Group, ...] | None:
    """The dims of ``a op b`` under torch broadcasting (right-aligned; () broadcasts), None if invalid."""
    rank = max(len(a), len(b))
    pa, pb = ((),) * (rank - len(a)) + a, ((),) * (rank - len(b)) + b
    out = []
    for x, y in zip(pa, pb):
        if x and y and x != y:
            return None
        out.append(x or y)
    return tuple(out)


def _unary(draw: Any, d: _Draft) -> bool:
    x = d.operand(draw)
    name = draw(st.sampled_from(sorted(UNARY)))
    template, bound = UNARY[name]
    if name == "exp" and x.bound > 4:
        return False
    d.add(template.format(x.var), x.dims, bound(x.bound), [x])
    return True


def _scalar(draw: Any, d: _Draft) -> bool:
    x = d.operand(draw)
    name = draw(st.sampled_from(sorted(SCALAR)))
    c = draw(st.sampled_from(SCALARS))
    template, bound = SCALAR[name]
    d.add(template.format(x.var, c), x.dims, bound(x.bound, c), [x])
    return True


def _binary(draw: Any, d: _Draft) -> bool:
    x = d.operand(draw)
    partners = [v for v in d.values() if _broadcast(x.dims, v.dims) is not None]
    kind = draw(st.sampled_from(["new", "new_row", "existing", "existing"]))
    if kind == "existing":
        y = draw(st.sampled_from(partners))
    elif kind == "new_row" and len(x.dims) > 1 and x.dims[-1]:
        y = d.new_input(x.dims[-1:])
    else:
        y = d.new_input(x.dims)
    dims = _broadcast(x.dims, y.dims)
    assert dims is not None
    name = draw(st.sampled_from(sorted(BINARY)))
    template, bound = BINARY[name]
    first, second = (x, y) if draw(st.booleans()) else (y, x)
    d.add(template.format(first.var, second.var), dims, bound(x.bound, y.bound), [x, y])
    return True


def _reduce(draw: Any, d: _Draft) -> bool:
    candidates = [v for v in d.values() if any(v.dims)]
    if not candidates:
        return False
    x = d.operand(draw, candidates)
    if draw(st.integers(0, 5)) == 0:
        return _reduce_all(draw, d, x)
    axis = draw(st.sampled_from([i for i, g in enumerate(x.dims) if g]))
    keepdim = draw(st.booleans()) or len(x.dims) == 1
    name = draw(st.sampled_from(sorted(REDUCE)))
    template, bound = REDUCE[name]
    dims = tuple(() if i == axis else g for i, g in enumerate(x.dims)) if keepdim else \
        tuple(g for i, g in enumerate(x.dims) if i != axis)
    new_bound = bound(x.bound, d.size(x.dims[axis]))
    if new_bound > BOUND_LIMIT:
        return False
    index = axis - len(x.dims) if draw(st.booleans()) else axis
    d.add(template.format(x.var, index, keepdim), dims, new_bound, [x], reduces=x.dims[axis])
    return True


def _reduce_all(draw: Any, d: _Draft, x: Value) -> bool:
    name = draw(st.sampled_from(sorted(REDUCE)))
    new_bound = REDUCE[name][1](x.bound, _elements(d, x.dims))
    if new_bound > BOUND_LIMIT:
        return False
    d.add(f"{x.var}.{name}()", (), new_bound, [x], reduces=[n for g in x.dims for n in g])
    return True


def _softmax(draw: Any, d: _Draft) -> bool:
    candidates = [v for v in d.values() if v.dims and v.dims[-1]]
    if not candidates:
        return False
    x = d.operand(draw, candidates)
    d.add(f"torch.softmax({x.var}, dim=-1)", x.dims, 1.0, [x], untileable=x.dims[-1])
    return True


def _matmul(draw: Any, d: _Draft) -> bool:
    candidates = [v for v in d.values() if len(v.dims) >= 2 and len(v.dims[-1]) == 1
                  and d.size(v.dims[-1]) % STICK == 0]
    if not candidates:
        return False
    x = d.operand(draw, candidates)
    k = x.dims[-1]
    used = {n for g in x.dims for n in g}
    existing = [v for v in d.values() if len(v.dims) == 2 and v.dims[0] == k and v.dims[1]
                and not set(v.dims[1]) & used]
    batched = False
    if existing and draw(st.booleans()):
        w = draw(st.sampled_from(existing))
    else:
        fresh = [n for n in NAMES if n not in d.sizes]
        stick_names = [n for n, s in d.sizes.items() if s % STICK == 0 and n not in used]
        n = draw(st.sampled_from(stick_names + fresh[:1]))
        if n not in d.sizes:
            d.sizes[n] = draw(st.sampled_from(STICK_SIZES))
        batched = len(x.dims) == 3 and x.dims[0] and draw(st.booleans())
        w = d.new_input((x.dims[0], k, (n,)) if batched else (k, (n,)))
    dims = (*x.dims[:-1], w.dims[-1])
    bound = d.size(k) * x.bound * w.bound
    if bound > BOUND_LIMIT or _elements(d, dims) > MAX_ELEMENTS:
        return False
    # A 3-d x times a 2-d w is imported as one mm over x's rows flattened: their inner part is
    # an inner part of a flattened iteration dim, which no tile can cut.
    flattened = x.dims[1] if len(x.dims) == 3 and not batched else ()
    d.add(f"{x.var} @ {w.var}", dims, bound, [x, w], reduces=k, untileable=flattened)
    return True


def _transpose(draw: Any, d: _Draft) -> bool:
    candidates = [v for v in d.values() if len(v.dims) >= 2]
    if not candidates:
        return False
    x = d.operand(draw, candidates)
    i, j = sorted(draw(st.lists(st.integers(0, len(x.dims) - 1), min_size=2, max_size=2, unique=True)))
    dims = list(x.dims)
    dims[i], dims[j] = dims[j], dims[i]
    d.add(f"{x.var}.transpose({i}, {j})", tuple(dims), x.bound, [x], compute=False)
    return True


def _flatten(draw: Any, d: _Draft) -> bool:
    candidates = [v for v in d.values() if len(v.dims) >= 2]
    if not candidates:
        return False
    x = d.operand(draw, candidates)
    i = draw(st.integers(0, len(x.dims) - 2))
    if i + 2 == len(x.dims) and d.size(x.dims[-1]) % STICK:
        return False  # the merged stick would hold parts of several rows: no SDSC layout label does
    dims = (*x.dims[:i], x.dims[i] + x.dims[i + 1], *x.dims[i + 2:])
    d.add(f"{x.var}.flatten({i}, {i + 1})", dims, x.bound, [x], compute=False)
    return True


STEP_KINDS: dict[str, Callable[[Any, _Draft], bool]] = {
    "unary": _unary,
    "scalar": _scalar,
    "binary": _binary,
    "reduce": _reduce,
    "softmax": _softmax,
    "matmul": _matmul,
    "transpose": _transpose,
    "flatten": _flatten,
}
"""Step generators by kind; each returns False (and adds nothing) when the draft does not allow it."""

WEIGHTS = ("binary", "binary", "unary", "scalar", "reduce", "reduce", "matmul", "matmul", "transpose",
           "flatten", "softmax")


# --------------------------------------------------------------------------
# Hints
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Level:
    name: str
    count: int
    hint: Hint


def _inner_names(d: _Draft) -> set[str]:
    """Names that are ever an inner part of a flattened dim (never tiled)."""
    return {n for v in d.values() for g in v.dims for n in g[1:]}


def _tile_ok(d: _Draft, name: str, total: int) -> bool:
    """``total`` tiles of ``name`` divide it, and are whole sticks wherever it is part of a stick dim."""
    size = d.sizes[name]
    if size % total:
        return False
    tile = size // total
    for v in d.values():
        if v.dims and name in v.dims[-1]:
            group = v.dims[-1]
            if (tile * d.size(group[1:])) % STICK:
                return False
    return True


def _hint_ids(hints: Sequence[Hint], index: int) -> set[int]:
    return {h.order for h in hints if h.start <= index < h.stop}


def _divides(step: Step, index: int, level: _Level) -> bool:
    return level.hint.start <= index < level.hint.stop and level.name in step.iterates


def _schedulable(d: _Draft, ops: list[int], levels: Sequence[_Level]) -> bool:
    """Mirror of spyre-coarse-tile's schedule: each level's ops are contiguous, none reads a partial."""
    if not levels:
        return True
    level, rest = levels[0], levels[1:]
    runs: list[tuple[bool, list[int]]] = []
    for i in ops:
        inside = _divides(d.steps[i], i, level)
        if inside and level.name in d.steps[i].untileable:
            return False
        if runs and runs[-1][0] == inside:
            runs[-1][1].append(i)
        else:
            runs.append((inside, [i]))
    if sum(inside for inside, _ in runs) > 1:
        return False
    for inside, part in runs:
        if inside:
            partial = {d.steps[i].out.var for i in part if level.name in d.steps[i].reduces}
            if any(d.steps[j].reads & partial for j in part):
                return False
        if not _schedulable(d, part, rest):
            return False
    return True


def _valid(d: _Draft, hints: Sequence[Hint]) -> bool:
    """Every level tiles something, in whole sticks, and every group of the hints schedules."""
    inner = _inner_names(d)
    compute = [i for i, s in enumerate(d.steps) if s.is_compute]
    for h in hints:
        for name, count in h.tiles:
            if name in inner:
                return False
            total = count * math.prod(c for o in hints for n, c in o.tiles
                                      if n == name and o.start <= h.start and h.stop <= o.stop and o is not h)
            if not _tile_ok(d, name, total):
                return False
            if not any(_divides(d.steps[i], i, _Level(name, count, h)) for i in compute):
                return False
    # Groups: maximal runs of compute steps whose hint sets overlap.
    groups: list[list[int]] = []
    previous: set[int] = set()
    for i in compute:
        ids = _hint_ids(hints, i)
        if ids and groups and ids & previous:
            groups[-1].append(i)
        elif ids:
            groups.append([i])
        previous = ids
    for group in groups:
        ids = set().union(*(_hint_ids(hints, i) for i in group))
        levels = [_Level(n, c, h) for h in sorted(hints, key=lambda h: h.order) if h.order in ids
                  for n, c in h.tiles]
        if not _schedulable(d, group, levels):
            return False
    return True


TILE_COUNTS = (2, 3, 4, 8)
"""Tile counts a hint may ask for (3 divides the 192-element stick dims into whole sticks)."""


def _tile_choices(d: _Draft, start: int, stop: int) -> list[tuple[str, int]]:
    names = {n for s in d.steps[start:stop] for n in s.iterates}
    return [(n, c) for n in sorted(names) for c in TILE_COUNTS if d.sizes[n] % c == 0]


def _scope(draw: Any, d: _Draft, spans: Sequence[tuple[int, int]], order: int,
           outer: list[Hint]) -> Hint | None:
    """A valid hint (with ``outer``) over one of ``spans``, tiling one name, sometimes two."""
    options = [(a, b, t) for a, b in spans for t in _tile_choices(d, a, b)
               if _valid(d, [*outer, Hint(a, b, (t,), order)])]
    if not options:
        return None
    a, b, first = draw(st.sampled_from(options))
    tiles = [first]
    extra = [t for x, y, t in options if (x, y) == (a, b) and t[0] != first[0]]
    if extra and draw(st.integers(0, 3)) == 0:
        second = draw(st.sampled_from(extra))
        if _valid(d, [*outer, Hint(a, b, (first, second), order)]):
            tiles.append(second)
    return Hint(a, b, tuple(tiles), order)


@st.composite
def _hints(draw: Any, d: _Draft) -> list[Hint]:
    """Zero, one, two nested or two sibling hint scopes, valid for ``d``."""
    n = len(d.steps)
    shape = draw(st.sampled_from(["one", "nested", "one", "nested", "siblings", "none"]))
    spans = [(a, b) for a in range(n) for b in range(a + 1, n + 1)]
    first = None if shape == "none" else _scope(draw, d, spans, 0, [])
    if first is None:
        return []
    hints = [first]
    if shape == "nested":
        inner = _scope(draw, d, [(x, y) for x, y in spans if first.start <= x and y <= first.stop], 1, hints)
        hints += [inner] if inner is not None else []
    elif shape == "siblings":
        sibling = _scope(draw, d, [(x, y) for x, y in spans if x >= first.stop], 1, hints)
        hints += [sibling] if sibling is not None else []
    return hints


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------


def _render(d: _Draft, hints: Sequence[Hint], outputs: Sequence[Value], seed: int) -> str:
    names = [v.var for v in d.inputs]
    lines = ["import torch", "", "from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint", "",
             "", f"def kernel({', '.join(names)}):"]
    depth = 1
    for i, step in enumerate(d.steps):
        for h in sorted((h for h in hints if h.start == i), key=lambda h: -h.stop):
            tiles = ", ".join(f'"{n}": {c}' for n, c in h.tiles)
            lines.append("    " * depth + f"with spyre_hint(tiles={{{tiles}}}):")
            depth += 1
        lines.append("    " * depth + f"{step.out.var} = {step.code}")
        depth -= sum(1 for h in hints if h.stop == i + 1)
    lines.append(f"    return {', '.join(v.var for v in outputs)}")
    lines += ["", "", "def build():"]
    for name, size in d.sizes.items():
        lines.append(f'    declare_tensor_dim("{name}", {size})')
    lines.append(f"    torch.manual_seed({seed})")
    for v in d.inputs:
        shape = ", ".join(str(s) for s in d.shape(v))
        lines.append(f"    {v.var} = ((torch.rand([{shape}]) * 2 - 1) * {INPUT_SCALE}).to(torch.float16)")
        flat = [n for g in v.dims for n in g]
        lines.append(f"    name_tensor_dims({v.var}, {flat!r})")
    lines.append(f"    return kernel, ({', '.join(names)},)")
    return "\n".join(lines) + "\n"


def _summary(d: _Draft, hints: Sequence[Hint], cores: int) -> str:
    ops = "; ".join(f"{s.out.var} = {s.code}" for s in d.steps)
    tiles = ", ".join(f"[{h.start}:{h.stop}] {dict(h.tiles)}" for h in hints) or "no hints"
    return f"{ops} | {tiles} | {cores} cores"


@st.composite
def programs(draw: Any, max_steps: int = 6) -> FuzzProgram:
    """A random small program: dims, a chain of ops, valid hints, a core count."""
    count = draw(st.integers(2, 4))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=count, max_size=count, unique=True))
    sizes = {n: draw(st.sampled_from(STICK_SIZES if i == count - 1 else SMALL_SIZES + STICK_SIZES))
             for i, n in enumerate(names)}
    rank = draw(st.integers(1, min(3, count)))
    d = _Draft(sizes)
    base = tuple((n,) for n in names[count - rank:])
    if _elements(d, base) > MAX_ELEMENTS:
        base = base[-2:]
    d.new_input(base)
    target = draw(st.integers(1, max_steps))
    attempts = 0
    while len(d.steps) < target and attempts < 4 * max_steps:
        attempts += 1
        kind = draw(st.sampled_from(WEIGHTS))
        STEP_KINDS[kind](draw, d)
    if not any(s.is_compute for s in d.steps):
        _binary(draw, d)
    consumed = {var for s in d.steps for var in s.operands}
    outputs = [s.out for s in d.steps if s.out.var not in consumed and s.out.producers][-3:]
    inner = [s.out for s in d.steps if s.out.var in consumed and s.out.producers and s.is_compute]
    if inner and len(outputs) < 3 and draw(st.integers(0, 3)) == 0:
        outputs.insert(0, draw(st.sampled_from(inner)))
    d.prune(outputs)
    hints = draw(_hints(d))
    cores = draw(st.integers(1, 32))
    seed = draw(st.integers(0, 2**16))
    return FuzzProgram(_render(d, hints, outputs, seed), cores, _summary(d, hints, cores),
                       sum(len(h.tiles) for h in hints))


# --------------------------------------------------------------------------
# Checking a program
# --------------------------------------------------------------------------

KINDS = ("passed", "rejected", "wrong", "invalid-output", "crash")
"""Outcomes: matched eager; a SpyreError from export/import/compile; numbers differ from
eager; the interpreter rejected the compiled directory; any other exception (a bug)."""

ROOT = Path(__file__).resolve().parents[2]
_INTERPRETER = str(ROOT / "spyre_mlir" / "interpreter")
_PROJECT = tuple(str(ROOT / d) for d in ("spyre_mlir", "passes", "dialects", "tools"))


@dataclass(frozen=True)
class Outcome:
    """The result of checking one program."""

    kind: str
    message: str = ""
    where: str = ""
    """The innermost project frame of a failure (``passes/coarse_tile.py:123``)."""


def _innermost(exc: BaseException) -> tuple[str, list[str]]:
    frames = [(str(Path(f.filename).resolve()), f.lineno) for f in traceback.extract_tb(exc.__traceback__)]
    frames = [(name, line) for name, line in frames if name.startswith(_PROJECT)]
    files = [name for name, _ in frames]
    if not frames:
        return "", files
    name, line = frames[-1]
    return f"{Path(name).relative_to(ROOT)}:{line}", files


def classify(exc: BaseException) -> Outcome:
    """The outcome of a check that raised ``exc``."""
    where, files = _innermost(exc)
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, SpyreError):
        if any(f.endswith("interpreter/compare.py") for f in files):
            return Outcome("wrong", message, where)
        if any(f.startswith(_INTERPRETER) for f in files):
            return Outcome("invalid-output", message, where)
        return Outcome("rejected", message, where)
    return Outcome("crash", f"{type(exc).__name__}: {message}", where)


def check(program: FuzzProgram, out: Path) -> Outcome:
    """Export, compile on ``program.cores``, interpret and compare with eager."""
    imported = ImportedPrograms({"fuzz": program.factory()})
    try:
        compile_and_check("fuzz", program.cores, out, imported)
    except Exception as exc:  # noqa: BLE001 - every failure is an outcome to report
        return classify(exc)
    return Outcome("passed")


def describe(program: FuzzProgram, outcome: Outcome) -> str:
    """A failure report: the outcome, the summary and the reproducer source."""
    buf = io.StringIO()
    buf.write(f"{outcome.kind}: {outcome.message}\n")
    if outcome.where:
        buf.write(f"  at {outcome.where}\n")
    buf.write(f"  program: {program.summary}\n")
    buf.write(f"  reproduce: save the source below as repro.py, then\n"
              f"    spyre-compile repro.py:build -o out --cores {program.cores} && "
              f"spyre-run out --check repro.py:build\n")
    buf.write("---- repro.py ----\n" + program.source + "------------------\n")
    return buf.getvalue()


