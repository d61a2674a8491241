# Random small torch programs for differential fuzzing of the whole toolchain.
# Reads nothing; `programs()` draws a program (named dims, float16/bfloat16/float32 inputs, a
# chain of pointwise, reduction, softmax, matmul, cast and view ops and attention blocks, valid
# `tiles=` hints, a core count) and renders it as a standalone model file with a `build()`
# factory, like examples/*.py; `check()` exports it, compiles it in process, runs it on the
# interpreter and compares with eager through e2e_support, writing only a scratch output directory.
"""Differential fuzzing: random programs with random hints, compiled and compared with eager.

A drawn :class:`FuzzProgram` is Python source::

    def kernel(x0, x1, x2):
        with spyre_hint(tiles={"M": 2}):
            v0 = x0 + x1
            v1 = v0.sum(-1, keepdim=True)
        v2 = x2[:, :, None].expand(1, 2, 2, 96, 64).reshape(1, 4, 96, 64)
        ...
        return v1, v5

    def build():
        declare_tensor_dim("M", 64); declare_tensor_dim("N", 96)
        ...
        return kernel, (x0, x1, x2)

so a failure is reproduced by saving :attr:`FuzzProgram.source` and running
``spyre-compile repro.py:build -o out --cores C && spyre-run out --check repro.py:build``.

Each construct is one strategy in :data:`STEP_KINDS` (a function ``(draw, draft) -> bool``) that
draws its parameters and calls a builder (:func:`matmul`, :func:`transpose`, :func:`repeat_kv`,
:func:`masked_softmax`, :func:`cast`, ...), so a test can build one exact program the same way.
Extents include ones that are not whole sticks (:data:`RAGGED_SIZES`) on stick and non-stick
dims; tensors have rank 0 to 4 and any of :data:`DTYPES`.

What a drawn program guarantees:

- It runs in eager: shapes broadcast, matmul operands share a dtype, ``.view`` only reshapes
  values whose strides are row-major, masks are example inputs only ``softmax`` reads.
- Eager gives no nan or inf: magnitudes are bounded (:attr:`Value.bound` at most
  :data:`BOUND_LIMIT`), ``exp`` only of small values, a mask leaves column 0 of every row open.
- Every output is compared under the tolerance of the dtype it is returned in
  (:func:`spyre_mlir.interpreter.tolerance_for`, as ``spyre-run --check``): a float32 value that
  some step rounded to 16 bits is returned cast back to that dtype (:meth:`Draft.finish`).
- Hints are valid by the rules of DESIGN §7 as the strategy models them: each tile count divides
  its dim (times the counts of enclosing levels on the same dim), tiles of a dim that is ever a
  stick dim are whole sticks, the ops a level divides are contiguous in their loop, no op reads a
  partial reduction inside the loop that produces it, and a name that is an inner part of a
  flattened dim, or that a slice or an expand renames (:attr:`Draft.frozen`), is never tiled.

A :class:`~spyre_mlir.diagnostics.SpyreError` from the compiler is therefore a finding too
(kind ``rejected``), reported apart from crashes and wrong numbers.

Not drawn: ``torch.cat`` (``test_concatenation.py`` covers it), slices that start inside a stick
of the storage they slice (spyre-lower-to-bundle rejects a core start that is not 128-byte
aligned), slices of a flattened dim that end inside a row of a storage sticked on it (no stick
dim can serve the coordinate ``d floordiv 64, d mod 64`` over a partial row: a clear error).
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

import spyre_mlir
from spyre_mlir import dialects, interpreter, passes, tools
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.interpreter.compare import OutputMismatch

from e2e_support import ImportedPrograms, compile_and_check

Group = tuple[str, ...]
"""The dim names of one tensor dim, outermost first (several after a flatten; none for size 1)."""

STICK = 64
"""float16 elements per 128-byte stick (32 float32): a tile of a stick dim is a multiple of it, so
it is whole sticks in every dtype."""

NAMES = ("A", "B", "C", "D", "M", "N", "K", "L", "R", "H", "E", "Dk", "seq", "rows", "cols",
         "G", "S", "T", "P", "Q", "U", "V", "W", "Lk", "Dv")
SMALL_SIZES = (2, 4, 8, 16, 32)
RAGGED_SIZES = (77, 96, 100, 160)
"""Extents that are not whole float16 sticks: padded wherever they are the stick dim (96 and 160
are whole float32 sticks, 77 and 100 are not)."""
STICK_SIZES = (64, 128, 192, 256)
LAST_SIZES = STICK_SIZES + RAGGED_SIZES
"""Extents of the first input's stick dim and of new matmul result dims."""
SEQUENCE_SIZES = (64, 128) + RAGGED_SIZES
"""Sequence lengths of attention: [heads, L, L] scores stay under MAX_ELEMENTS."""
OTHER_SIZES = SMALL_SIZES + RAGGED_SIZES + STICK_SIZES
MAX_RANK = 4
MAX_ELEMENTS = 1 << 16
"""Largest tensor drawn (elements): keeps a program around a second."""
INPUT_SCALE = 0.25
"""Inputs are uniform in [-INPUT_SCALE, INPUT_SCALE): small enough that the fp16 rounding of the
partial sums of a tiled reduction (eager sums in float32) stays inside the tolerance after the
ops that follow scale it up, large enough that a misplaced element is far outside it."""
BOUND_LIMIT = 1e4
"""Largest magnitude a value may reach; fp16 holds 65504."""

DTYPES = ("float16", "bfloat16", "float32")
INPUT_DTYPES = ("float16", "float16", "float16", "bfloat16", "float32")
"""The first input's dtype, weighted towards the device's native one."""
TORCH_DTYPES = {"float16": "torch.float16", "bfloat16": "torch.bfloat16", "float32": "torch.float32"}
CASTS = {"float16": "{}.half()", "bfloat16": "{}.to(torch.bfloat16)", "float32": "{}.float()"}
"""Source of a cast to each dtype."""
COARSENESS = {"float32": 0, "float16": 1, "bfloat16": 2}
"""Rounding error of a dtype, in order."""

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

MASK_FILLS = {"-inf": 'float("-inf")', "min": "torch.finfo({dtype}).min"}
"""What a mask adds where it masks: -inf, or the dtype's most negative number."""
MASK_SHAPES = ("causal", "padding")
"""Causal masks close the columns right of the diagonal; padding masks the last few columns."""


# --------------------------------------------------------------------------
# The program model
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A tensor of the program: its variable, dim groups, a bound on its magnitude, its dtype."""

    var: str
    dims: tuple[Group, ...]
    bound: float
    dtype: str = "float16"
    rounded: str | None = None
    """The coarsest dtype a compute step of its history rounded to (None for an input: eager and
    the device hold it exactly)."""
    contiguous: bool = True
    """Its strides are row-major, so eager's ``.view`` reshapes it."""
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


def _coarsest(*dtypes: str | None) -> str | None:
    """The dtype of ``dtypes`` with the largest rounding error (None if all are None)."""
    return max((t for t in dtypes if t is not None), key=COARSENESS.__getitem__, default=None)


@dataclass
class Draft:
    """The program being drawn (or built by hand from the same constructs)."""

    sizes: dict[str, int]
    inputs: list[Value] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    host: dict[str, str] = field(default_factory=dict)
    """Source of the inputs that are not random (masks), by variable; no op but softmax reads them."""
    frozen: set[str] = field(default_factory=set)
    """Names never tiled: the compiler names the dims a slice or an expand makes differently."""
    slices: dict[tuple[Group, int, int], str] = field(default_factory=dict)
    """The name of each slice's dim by the group it slices and its bounds: a slice alike of another
    value takes the same name, so that a matmul may contract the two (``x[:, :32] @ y[:32]``)."""

    def size(self, group: Group) -> int:
        return math.prod(self.sizes[n] for n in group)

    def shape(self, value: Value) -> list[int]:
        return [self.size(g) for g in value.dims]

    def fits(self, dims: tuple[Group, ...]) -> bool:
        """A tensor of ``dims`` is small enough (:data:`MAX_ELEMENTS`) and of rank <= :data:`MAX_RANK`."""
        return len(dims) <= MAX_RANK and math.prod(self.size(g) for g in dims) <= MAX_ELEMENTS

    def tensors(self) -> list[Value]:
        """Every input (masks included) and step result."""
        return [*self.inputs, *(s.out for s in self.steps)]

    def values(self) -> list[Value]:
        """The values an op may read: every input but the masks, every step result."""
        return [v for v in self.tensors() if v.var not in self.host]

    def fresh(self, size: int) -> str | None:
        """A new dim name of ``size`` (None when :data:`NAMES` are all taken)."""
        name = next((n for n in NAMES if n not in self.sizes), None)
        if name is not None:
            self.sizes[name] = size
        return name

    def new_input(self, dims: tuple[Group, ...], dtype: str = "float16", host: str | None = None) -> Value:
        """A new example input, random in [-INPUT_SCALE, INPUT_SCALE) unless ``host`` gives its source."""
        value = Value(f"x{len(self.inputs)}", dims, INPUT_SCALE, dtype)
        self.inputs.append(value)
        if host is not None:
            self.host[value.var] = host
        return value

    def add(self, code: str, dims: tuple[Group, ...], bound: float, operands: Sequence[Value], *,
            reduces: Sequence[str] = (), compute: bool = True, untileable: Sequence[str] = (),
            dtype: str | None = None, contiguous: bool | None = None) -> Value:
        """Append ``v<i> = code``; dtype defaults to the first operand's, contiguity to the
        operands' (a view must say)."""
        var = f"v{len(self.steps)}"
        dtype = dtype or operands[0].dtype
        rounded = _coarsest(*(v.rounded for v in operands), dtype if compute else None)
        if contiguous is None:
            assert compute, "a view says whether its result is contiguous"
            contiguous = all(v.contiguous for v in operands)
        reads = frozenset(p for v in operands for p in v.producers)
        names = {n for v in operands for g in v.dims for n in g} | {n for g in dims for n in g}
        out = Value(var, dims, bound, dtype, rounded, contiguous, frozenset({var}) if compute else reads)
        self.steps.append(Step(code, out, frozenset(names) if compute else frozenset(), frozenset(reduces),
                               tuple(v.var for v in operands), reads, frozenset(untileable), compute))
        return out

    def pick(self, draw: Any, keep: Callable[[Value], bool]) -> Value | None:
        """:meth:`operand` among the values ``keep`` accepts; None when there is none."""
        candidates = [v for v in self.values() if keep(v)]
        return self.operand(draw, candidates) if candidates else None

    def operand(self, draw: Any, candidates: Sequence[Value] | None = None) -> Value:
        """Mostly the newest candidate (programs are chains), sometimes any."""
        pool = list(self.values() if candidates is None else candidates)
        if draw(st.integers(0, 2)):
            return pool[-1]
        return draw(st.sampled_from(pool))

    def finish(self, outputs: Sequence[Value]) -> list[Value]:
        """The values to return for ``outputs`` (a float32 value some step rounded to 16 bits cast
        back to that dtype, so it is compared under its tolerance); drops every step and input
        no returned value depends on (torch.export would drop them)."""
        returned = [cast(self, v, v.rounded) if v.dtype == "float32" and v.rounded not in (None, "float32")
                    else v for v in outputs]
        live = {v.var for v in returned}
        for step in reversed(self.steps):
            if step.out.var in live:
                live.update(step.operands)
        self.steps = [s for s in self.steps if s.out.var in live]
        self.inputs = [v for v in self.inputs if v.var in live]
        return returned


def _shape_source(shape: Sequence[int]) -> str:
    return ", ".join(str(s) for s in shape)


# --------------------------------------------------------------------------
# Builders: one construct each, with explicit parameters
# --------------------------------------------------------------------------


def matmul(d: Draft, x: Value, w: Value) -> Value:
    """``x @ w``: x is [..., M, K], w is [K, N] or has x's batch dims; both of one dtype."""
    assert x.dtype == w.dtype and x.dims[-1] == w.dims[-2]
    dims = (*x.dims[:-1], w.dims[-1])
    bound = d.size(x.dims[-1]) * x.bound * w.bound
    # aten.matmul reaches the importer decomposed: x [..., M, K] times a 2-d w is one mm over x's
    # rows flattened, times a batched w one bmm over the batch dims flattened.  The inner parts
    # of a flattened iteration dim cannot be tiled.
    flattened = x.dims[1:-1] if len(w.dims) == 2 else x.dims[1:-2]
    return d.add(f"{x.var} @ {w.var}", dims, bound, [x, w], reduces=x.dims[-1],
                 untileable=[n for g in flattened for n in g], contiguous=True)


def transpose(d: Draft, x: Value, i: int, j: int) -> Value:
    """``x.transpose(i, j)`` (negative indices count from the end)."""
    dims = list(x.dims)
    a, b = i % len(dims), j % len(dims)
    dims[a], dims[b] = dims[b], dims[a]
    return d.add(f"{x.var}.transpose({i}, {j})", tuple(dims), x.bound, [x], compute=False, contiguous=False)


def slice_dim(d: Draft, x: Value, axis: int, start: int, stop: int) -> Value | None:
    """``x[:, start:stop]`` along ``axis``; its dim takes the name of an earlier slice alike of that
    dim group (:attr:`Draft.slices`), else a new one (both names and the group's frozen).  None when
    the slice is the whole dim or no name is left."""
    group = x.dims[axis]
    size, rank = d.size(group), len(x.dims)
    if (start, stop) == (0, size):
        return None
    name = d.slices.get((group, start, stop)) or d.fresh(stop - start)
    if name is None:
        return None
    d.slices[group, start, stop] = name
    d.frozen.update({name, *group})
    bounds = f"{start or ''}:{stop if stop < size else ''}"
    index = f"..., {bounds}" if axis in (-1, rank - 1) and rank > 1 else ", ".join([":"] * (axis % rank) + [bounds])
    dims = tuple((name,) if i == axis % rank else g for i, g in enumerate(x.dims))
    return d.add(f"{x.var}[{index}]", dims, x.bound, [x], compute=False, contiguous=x.contiguous and axis == 0)


def repeat_kv(d: Draft, x: Value, axis: int, name: str) -> Value:
    """transformers' grouped-query ``repeat_kv``: each element of dim ``axis`` repeated
    ``sizes[name]`` times in a row, ``x[:, :, None].expand(b, kv, g, L, d).reshape(b, kv * g, L, d)``
    for ``axis`` 1; the dim becomes the group ``x.dims[axis] + (name,)``."""
    shape = d.shape(x)
    groups = d.sizes[name]
    index = ", ".join([":"] * (axis + 1) + ["None"])
    expanded = [*shape[:axis + 1], groups, *shape[axis + 1:]]
    merged = [*shape[:axis], shape[axis] * groups, *shape[axis + 1:]]
    dims = (*x.dims[:axis], x.dims[axis] + (name,), *x.dims[axis + 1:])
    code = f"{x.var}[{index}].expand({_shape_source(expanded)}).reshape({_shape_source(merged)})"
    # Not contiguous in general: with one element along ``axis`` the reshape keeps the expand's
    # zero stride (a view), and a later .view() of it fails in eager.
    return d.add(code, dims, x.bound, [x], compute=False, contiguous=False)


def mask_source(shape: Sequence[int], kind: str, fill: str, dtype: str, open_columns: int = 1) -> str:
    """Host source of a mask of ``shape`` and ``dtype`` that adds ``MASK_FILLS[fill]`` where it masks:
    ``causal`` right of the diagonal, ``padding`` the last columns but ``open_columns``."""
    value = MASK_FILLS[fill].format(dtype=TORCH_DTYPES[dtype])
    if kind == "causal":
        mask = f"torch.full([{_shape_source(shape)}], {value}).triu(1)"
    else:
        mask = (f"torch.zeros([{_shape_source(shape)}]).masked_fill("
                f"torch.arange({shape[-1]}) >= {open_columns}, {value})")
    return f"{mask}.to({TORCH_DTYPES[dtype]})"


def masked_softmax(d: Draft, x: Value, mask: tuple[str, str] | None = None, open_columns: int = 1) -> Value:
    """``torch.softmax(x + m, dim=-1)`` with ``m`` a new ``(shape, fill)`` mask input over x's last
    two dims (``mask_source``), or a plain softmax; a causal mask needs rank 2."""
    if mask is None:
        return d.add(f"torch.softmax({x.var}, dim=-1)", x.dims, 1.0, [x], untileable=x.dims[-1])
    kind, fill = mask
    dims = x.dims[-2:] if kind == "causal" else x.dims[-1:]
    shape = [d.size(g) for g in dims]
    m = d.new_input(dims, x.dtype, mask_source(shape, kind, fill, x.dtype, open_columns))
    return d.add(f"torch.softmax({x.var} + {m.var}, dim=-1)", x.dims, 1.0, [x, m], untileable=x.dims[-1])


def cast(d: Draft, x: Value, dtype: str) -> Value:
    """``x.float()``, ``x.half()`` or ``x.to(torch.bfloat16)``."""
    return d.add(CASTS[dtype].format(x.var), x.dims, x.bound, [x], dtype=dtype)


# --------------------------------------------------------------------------
# Strategies: one construct each, drawing its parameters
# --------------------------------------------------------------------------


def _broadcast(a: tuple[Group, ...], b: tuple[Group, ...]) -> tuple[Group, ...] | None:
    """The dims of ``a op b`` under torch broadcasting (right-aligned; () broadcasts), None if invalid
    or if a name would name two dims."""
    rank = max(len(a), len(b))
    pa, pb = ((),) * (rank - len(a)) + a, ((),) * (rank - len(b)) + b
    out = []
    for x, y in zip(pa, pb):
        if x and y and x != y:
            return None
        out.append(x or y)
    names = [n for g in out for n in g]
    return tuple(out) if len(names) == len(set(names)) else None


def _promote(x: Value, y: Value) -> str:
    """torch's result dtype of ``x op y``: float32 for two different dtypes, but a 0-dim tensor
    does not promote a dimensioned one."""
    if x.dtype == y.dtype:
        return x.dtype
    if bool(x.dims) != bool(y.dims):
        return x.dtype if x.dims else y.dtype
    return "float32"


def _input_dtype(draw: Any, like: str) -> str:
    """Mostly ``like``, sometimes any dtype (the op then promotes)."""
    return like if draw(st.integers(0, 3)) else draw(st.sampled_from(DTYPES))


def _unary(draw: Any, d: Draft) -> bool:
    x = d.operand(draw)
    name = draw(st.sampled_from(sorted(UNARY)))
    template, bound = UNARY[name]
    if name == "exp" and x.bound > 4:
        return False
    d.add(template.format(x.var), x.dims, bound(x.bound), [x])
    return True


def _scalar(draw: Any, d: Draft) -> bool:
    x = d.operand(draw)
    name = draw(st.sampled_from(sorted(SCALAR)))
    c = draw(st.sampled_from(SCALARS))
    template, bound = SCALAR[name]
    d.add(template.format(x.var, c), x.dims, bound(x.bound, c), [x])
    return True


def _binary(draw: Any, d: Draft) -> bool:
    """``x op y``, y an existing value that broadcasts with x (a new input when none does), or a
    new input of x's dims or its last dim, mostly of x's dtype."""
    x = d.operand(draw)
    partners = [v for v in d.values() if (dims := _broadcast(x.dims, v.dims)) is not None and d.fits(dims)]
    kind = draw(st.sampled_from(["new", "new_row", "existing", "existing"]))
    if kind == "existing" and partners:
        y = draw(st.sampled_from(partners))
    elif kind == "new_row" and len(x.dims) > 1 and x.dims[-1]:
        y = d.new_input(x.dims[-1:], _input_dtype(draw, x.dtype))
    else:
        y = d.new_input(x.dims, _input_dtype(draw, x.dtype))
    dims = _broadcast(x.dims, y.dims)
    assert dims is not None
    name = draw(st.sampled_from(sorted(BINARY)))
    template, bound = BINARY[name]
    first, second = (x, y) if draw(st.booleans()) else (y, x)
    d.add(template.format(first.var, second.var), dims, bound(x.bound, y.bound), [x, y], dtype=_promote(x, y))
    return True


def _reduce(draw: Any, d: Draft) -> bool:
    x = d.pick(draw, lambda v: any(v.dims))
    if x is None:
        return False
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


def _reduce_all(draw: Any, d: Draft, x: Value) -> bool:
    name = draw(st.sampled_from(sorted(REDUCE)))
    new_bound = REDUCE[name][1](x.bound, math.prod(d.shape(x)))
    if new_bound > BOUND_LIMIT:
        return False
    d.add(f"{x.var}.{name}()", (), new_bound, [x], reduces=[n for g in x.dims for n in g])
    return True


def _mask(draw: Any, d: Draft, x: Value) -> tuple[str, str] | None:
    """No mask (half the time), or a mask kind x allows (causal needs two dims) and a fill."""
    kinds = [k for k in MASK_SHAPES if k == "padding" or len(x.dims) >= 2]
    if draw(st.booleans()):
        return None
    return draw(st.sampled_from(kinds)), draw(st.sampled_from(sorted(MASK_FILLS)))


def _softmax(draw: Any, d: Draft) -> bool:
    """``softmax(x [+ mask], dim=-1)``."""
    x = d.pick(draw, lambda v: v.dims and v.dims[-1])
    if x is None:
        return False
    mask = _mask(draw, d, x)
    columns = d.size(x.dims[-1])
    masked_softmax(d, x, mask, draw(st.integers(1, max(1, columns - 1))))
    return True


def _matmul(draw: Any, d: Draft) -> bool:
    """``x @ w``: x an existing value whose last dim is one name K; w an existing [K, N] value (or
    one with x's batch dims) of x's dtype, the transpose of an existing [N, K] one, or a new input,
    sometimes made [N, K] and transposed."""
    x = d.pick(draw, lambda v: len(v.dims) >= 2 and len(v.dims[-1]) == 1)
    if x is None:
        return False
    k, batch = x.dims[-1], x.dims[:-2]
    used = {n for g in x.dims for n in g}

    def fits_x(v: Value, n: Group) -> bool:
        return v.dtype == x.dtype and bool(n) and not set(n) & used and v.dims[:-2] in ((), batch) \
            and d.fits((*x.dims[:-1], n)) and d.size(k) * x.bound * v.bound <= BOUND_LIMIT

    plain = [v for v in d.values() if len(v.dims) >= 2 and v.dims[-2] == k and fits_x(v, v.dims[-1])]
    swapped = [v for v in d.values() if len(v.dims) >= 2 and v.dims[-1] == k and fits_x(v, v.dims[-2])]
    source = draw(st.sampled_from(["new", "new", "new_swapped", "plain", "swapped", "sliced_alike"]))
    sliced = _sliced_from(d, k)
    if source == "plain" and plain:
        w = draw(st.sampled_from(plain))
    elif source == "swapped" and swapped:
        w = transpose(d, draw(st.sampled_from(swapped)), -1, -2)
    elif source == "sliced_alike" and sliced is not None:
        w = _sliced_alike(draw, d, x, sliced)
        if w is None:
            return False
    else:
        if d.size(k) * x.bound * INPUT_SCALE > BOUND_LIMIT:
            return False
        names = [m for m in d.sizes if m not in used]
        n = draw(st.sampled_from(names + [""]))
        if not n:
            n = d.fresh(draw(st.sampled_from(LAST_SIZES)))
        if n is None or not d.fits((*x.dims[:-1], (n,))):
            return False
        w_batch = batch if batch and draw(st.booleans()) else ()
        if source == "new_swapped":
            w = transpose(d, d.new_input((*w_batch, (n,), k), x.dtype), -1, -2)
        else:
            w = d.new_input((*w_batch, k, (n,)), x.dtype)
    matmul(d, x, w)
    return True


def _sliced_alike(draw: Any, d: Draft, x: Value, sliced: tuple[Group, int, int]) -> Value | None:
    """A right-hand side [K, N] for ``x``, whose K is the slice ``sliced`` (group, start, stop): a
    new input's slice alike, [group, N] sliced along its rows or [N, group] sliced along its stick
    and transposed; both operands then read wider storage past K.  None when it does not fit."""
    group, start, stop = sliced
    k = x.dims[-1]
    if d.size(k) * x.bound * INPUT_SCALE > BOUND_LIMIT:
        return None
    n = d.fresh(draw(st.sampled_from(LAST_SIZES)))
    if n is None or not d.fits((*x.dims[:-1], (n,))):
        return None
    if start % STICK == 0 and draw(st.booleans()):
        wide = slice_dim(d, d.new_input(((n,), group), x.dtype), -1, start, stop)
        return None if wide is None else transpose(d, wide, -1, -2)
    return slice_dim(d, d.new_input((group, (n,)), x.dtype), 0, start, stop)


def _sliced_matmul(draw: Any, d: Draft) -> bool:
    """``x[..., a:b] @ w[a:b]``: the product of two slices alike of one dim group
    (:func:`_sliced_alike`), x an existing value whose last dim is one name."""
    x = d.pick(draw, lambda v: len(v.dims) >= 2 and len(v.dims[-1]) == 1 and d.size(v.dims[-1]) >= 3)
    if x is None:
        return False
    group = x.dims[-1]
    start = draw(st.sampled_from(_slice_starts(d, group)))
    stop = draw(st.sampled_from(_slice_stops(d, group, start)))
    sliced = slice_dim(d, x, -1, start, stop)
    if sliced is None:
        return False
    w = _sliced_alike(draw, d, sliced, (group, start, stop))
    if w is None:
        return False
    matmul(d, sliced, w)
    return True


def _sliced_from(d: Draft, k: Group) -> tuple[Group, int, int] | None:
    """The group and bounds of the slice whose name is ``k``, when a slice alike may still be taken."""
    return next(((g, start, stop) for (g, start, stop), name in d.slices.items()
                 if (name,) == k and (start, stop) in _alike_slices(d, g)), None)


def _transpose(draw: Any, d: Draft) -> bool:
    x = d.pick(draw, lambda v: len(v.dims) >= 2)
    if x is None:
        return False
    i, j = sorted(draw(st.lists(st.integers(0, len(x.dims) - 1), min_size=2, max_size=2, unique=True)))
    if draw(st.booleans()):
        i, j = j - len(x.dims), i - len(x.dims)  # .transpose(-1, -2)
    transpose(d, x, i, j)
    return True


def _flatten(draw: Any, d: Draft) -> bool:
    x = d.pick(draw, lambda v: len(v.dims) >= 2)
    if x is None:
        return False
    i = draw(st.integers(0, len(x.dims) - 2))
    if not _mergeable(d, x, i):
        return False
    dims = (*x.dims[:i], x.dims[i] + x.dims[i + 1], *x.dims[i + 2:])
    d.add(f"{x.var}.flatten({i}, {i + 1})", dims, x.bound, [x], compute=False, contiguous=x.contiguous)
    return True


def _mergeable(d: Draft, x: Value, i: int) -> bool:
    """Dims i and i + 1 of x may merge: not the stick dim unless it is whole sticks (the merged
    stick would hold parts of several rows: no SDSC layout label does)."""
    return i + 2 < len(x.dims) or d.size(x.dims[-1]) % STICK == 0


def _reshape(draw: Any, d: Draft) -> bool:
    """``.view(...)`` (``.reshape(...)`` when x is not contiguous) that merges two adjacent dims,
    splits a flattened dim between two of its names, or drops a size-1 dim."""
    x = d.pick(draw, lambda v: v.dims)
    if x is None:
        return False
    rank = len(x.dims)
    options: list[tuple[Group, ...]] = []
    options += [(*x.dims[:i], x.dims[i] + x.dims[i + 1], *x.dims[i + 2:])
                for i in range(rank - 1) if _mergeable(d, x, i)]
    if rank < MAX_RANK:
        options += [(*x.dims[:i], g[:j], g[j:], *x.dims[i + 1:])
                    for i, g in enumerate(x.dims) for j in range(1, len(g))]
    if rank > 1:
        options += [(*x.dims[:i], *x.dims[i + 1:]) for i, g in enumerate(x.dims) if not g]
    if not options:
        return False
    dims = draw(st.sampled_from(options))
    shape: list[Any] = [d.size(g) for g in dims]
    if draw(st.booleans()):
        shape[draw(st.integers(0, len(shape) - 1))] = -1
    method = "view" if x.contiguous else "reshape"
    d.add(f"{x.var}.{method}({_shape_source(shape)})", dims, x.bound, [x], compute=False,
          contiguous=x.contiguous)
    return True


def _unsqueeze(draw: Any, d: Draft) -> bool:
    x = d.pick(draw, lambda v: len(v.dims) < MAX_RANK)
    if x is None:
        return False
    at = draw(st.integers(0, len(x.dims)))
    index = at - len(x.dims) - 1 if draw(st.booleans()) else at
    dims = (*x.dims[:at], (), *x.dims[at:])
    d.add(f"{x.var}.unsqueeze({index})", dims, x.bound, [x], compute=False, contiguous=x.contiguous)
    return True


def _slice_starts(d: Draft, group: Group) -> range:
    """Where a slice of a dim of ``group`` may start: anywhere unless a name of it is ever a stick
    dim (the storage it slices may hold it on the stick), then at a whole stick of a one-name dim."""
    size = d.size(group)
    if not set(group) & {n for v in d.tensors() if v.dims for n in v.dims[-1]}:
        return range(size - 1)
    return range(0, size - 1, STICK) if len(group) == 1 else range(1)


def _slice_stops(d: Draft, group: Group, start: int) -> list[int]:
    """Where a slice of a dim of ``group`` from ``start`` may stop: anywhere past ``start + 1``, but
    on a whole row of a flattened dim (a multiple of its inner names' extent) when a name of it is
    ever a stick dim: a partial row mixes the storage's rows and sticks in one coordinate."""
    size = d.size(group)
    ever_stick = set(group) & {n for v in d.tensors() if v.dims for n in v.dims[-1]}
    row = d.size(group[1:]) if len(group) > 1 and ever_stick else 1
    return [stop for stop in range(start + 2, size + 1) if stop % row == 0] or [size]


def _slice(draw: Any, d: Draft) -> bool:
    """``x[:, a:b]``-style slice of one dim (:func:`slice_dim`), starting where
    :func:`_slice_starts` allows; often with the bounds of an earlier slice of the same dim group."""
    x = d.pick(draw, lambda v: any(d.size(g) >= 3 for g in v.dims))
    if x is None:
        return False
    axis = draw(st.sampled_from([i for i, g in enumerate(x.dims) if d.size(g) >= 3]))
    group = x.dims[axis]
    alike = _alike_slices(d, group)
    if alike and draw(st.booleans()):
        start, stop = draw(st.sampled_from(alike))
    else:
        start = draw(st.sampled_from(_slice_starts(d, group)))
        stop = draw(st.sampled_from(_slice_stops(d, group, start)))
    return slice_dim(d, x, axis, start, stop) is not None


def _alike_slices(d: Draft, group: Group) -> list[tuple[int, int]]:
    """The bounds of the earlier slices of ``group`` that a slice may still take."""
    return sorted((start, stop) for g, start, stop in d.slices if g == group
                  and start in _slice_starts(d, group) and stop in _slice_stops(d, group, start))


def _select(draw: Any, d: Draft) -> bool:
    """``x[:, i]``-style select of one index of a dim that is not the last (its names frozen): the
    dim is gone, and on the device it may lie inside a dim the readers step along."""
    x = d.pick(draw, lambda v: len(v.dims) >= 2 and any(d.size(g) >= 2 for g in v.dims[:-1]))
    if x is None:
        return False
    axis = draw(st.sampled_from([i for i, g in enumerate(x.dims[:-1]) if d.size(g) >= 2]))
    index = draw(st.integers(0, d.size(x.dims[axis]) - 1))
    d.frozen.update(x.dims[axis])
    dims = (*x.dims[:axis], *x.dims[axis + 1:])
    d.add(f"{x.var}[{', '.join([':'] * axis + [str(index)])}]", dims, x.bound, [x], compute=False,
          contiguous=x.contiguous and axis == 0)
    return True


def _repeat_kv(draw: Any, d: Draft) -> bool:
    """:func:`repeat_kv` of a non-stick dim by a new (frozen) name of 2 to 4."""
    x = d.pick(draw, lambda v: len(v.dims) >= 2)
    if x is None:
        return False
    axis = draw(st.integers(0, len(x.dims) - 2))
    groups = draw(st.integers(2, 4))
    if not d.fits(x.dims) or math.prod(d.shape(x)) * groups > MAX_ELEMENTS:
        return False
    name = d.fresh(groups)
    if name is None:
        return False
    d.frozen.add(name)
    repeat_kv(d, x, axis, name)
    return True


def _cast(draw: Any, d: Draft) -> bool:
    x = d.operand(draw)
    cast(d, x, draw(st.sampled_from([t for t in DTYPES if t != x.dtype])))
    return True


def _attention(draw: Any, d: Draft) -> bool:
    """``softmax(q @ k.transpose(-1, -2) [* scale] [+ mask]) @ v``: q an existing [..., L, Dk]
    value or a new input (:func:`_query`); k and v new inputs over a new key length, each
    sometimes :func:`repeat_kv`'d to q's heads from all but the heads' inner name (then frozen)."""
    candidates = [v for v in d.values() if len(v.dims) >= 2 and len(v.dims[-1]) == 1 and v.dims[-2]]
    q = d.operand(draw, candidates) if candidates and not draw(st.integers(0, 2)) else _query(draw, d)
    if q is None:
        return False
    batch, rows, depth = q.dims[:-2], q.dims[-2], q.dims[-1]
    used = {n for g in q.dims for n in g}
    length = draw(st.sampled_from([d.size(rows), *SEQUENCE_SIZES]))
    lk = d.fresh(length)
    widths = [n for n, s in d.sizes.items() if s % STICK == 0 and n not in used and n != lk]
    dv = draw(st.sampled_from([*widths, ""])) or d.fresh(draw(st.sampled_from(STICK_SIZES)))
    if lk is None or dv is None:
        return False
    if not all(d.fits((*batch, a, b)) for a, b in ((rows, (lk,)), (rows, (dv,)), ((lk,), depth), ((lk,), (dv,)))):
        return False
    if d.size(depth) * q.bound * INPUT_SCALE > BOUND_LIMIT:
        return False
    groupable = bool(batch) and bool(batch[-1])

    def key_or_value(last: Group) -> Value:
        if not (groupable and draw(st.integers(0, 2))):
            return d.new_input((*batch, (lk,), last), q.dtype)
        d.frozen.add(batch[-1][-1])
        x = d.new_input((*batch[:-1], batch[-1][:-1], (lk,), last), q.dtype)
        return repeat_kv(d, x, len(batch) - 1, batch[-1][-1])

    scores = matmul(d, q, transpose(d, key_or_value(depth), -1, -2))
    if draw(st.booleans()):
        scale = 1 / math.sqrt(d.size(depth))
        scores = d.add(f"{scores.var} * {scale}", scores.dims, scores.bound * scale, [scores])
    p = masked_softmax(d, scores, _mask(draw, d, scores), draw(st.integers(1, max(1, length - 1))))
    matmul(d, p, key_or_value((dv,)))
    return True


def _query(draw: Any, d: Draft) -> Value | None:
    """A new query input [(B,) (heads,) L, Dk]: B of size 1 or left out, the heads one or two
    new names (H or (H, G)) or left out."""
    leading: tuple[Group, ...] = ((),) if draw(st.booleans()) else ()
    heads = [d.fresh(draw(st.sampled_from((2, 3)))) for _ in range(draw(st.sampled_from((0, 1, 2, 2))))]
    length = d.fresh(draw(st.sampled_from(SEQUENCE_SIZES)))
    depth = d.fresh(draw(st.sampled_from((64, 64, 128))))
    if None in heads or length is None or depth is None:
        return None
    dims = (*leading, *((tuple(heads),) if heads else ()), (length,), (depth,))
    if not d.fits(dims):
        return None
    return d.new_input(dims, draw(st.sampled_from(INPUT_DTYPES)))


STEP_KINDS: dict[str, Callable[[Any, Draft], bool]] = {
    "unary": _unary,
    "scalar": _scalar,
    "binary": _binary,
    "reduce": _reduce,
    "softmax": _softmax,
    "matmul": _matmul,
    "sliced_matmul": _sliced_matmul,
    "transpose": _transpose,
    "flatten": _flatten,
    "reshape": _reshape,
    "unsqueeze": _unsqueeze,
    "slice": _slice,
    "select": _select,
    "repeat_kv": _repeat_kv,
    "cast": _cast,
    "attention": _attention,
}
"""Step generators by kind; each returns False (and adds nothing it needs) when the draft does not allow it."""

WEIGHTS = ("binary", "binary", "unary", "scalar", "reduce", "reduce", "matmul", "matmul", "sliced_matmul",
           "transpose", "flatten", "softmax", "softmax", "reshape", "unsqueeze", "slice", "select", "repeat_kv",
           "repeat_kv", "cast", "cast", "attention", "attention")


# --------------------------------------------------------------------------
# Hints
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Level:
    name: str
    count: int
    hint: Hint


def _untiled_names(d: Draft) -> set[str]:
    """Names never tiled: those that are ever an inner part of a flattened dim, and the frozen ones."""
    return {n for v in d.tensors() for g in v.dims for n in g[1:]} | d.frozen


def _tile_ok(d: Draft, name: str, total: int) -> bool:
    """``total`` tiles of ``name`` divide it, and are whole sticks wherever it is part of a stick dim."""
    size = d.sizes[name]
    if size % total:
        return False
    tile = size // total
    for v in d.tensors():
        if v.dims and name in v.dims[-1]:
            group = v.dims[-1]
            if (tile * d.size(group[1:])) % STICK:
                return False
    return True


def _hint_ids(hints: Sequence[Hint], index: int) -> set[int]:
    return {h.order for h in hints if h.start <= index < h.stop}


def _divides(step: Step, index: int, level: _Level) -> bool:
    return level.hint.start <= index < level.hint.stop and level.name in step.iterates


def _schedulable(d: Draft, ops: list[int], levels: Sequence[_Level]) -> bool:
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


def _valid(d: Draft, hints: Sequence[Hint]) -> bool:
    """Every level tiles something, in whole sticks, and every group of the hints schedules."""
    untiled = _untiled_names(d)
    compute = [i for i, s in enumerate(d.steps) if s.is_compute]
    for h in hints:
        for name, count in h.tiles:
            if name in untiled:
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


def _tile_choices(d: Draft, start: int, stop: int) -> list[tuple[str, int]]:
    names = {n for s in d.steps[start:stop] for n in s.iterates} - _untiled_names(d)
    return [(n, c) for n in sorted(names) for c in TILE_COUNTS if d.sizes[n] % c == 0]


def _scope(draw: Any, d: Draft, spans: Sequence[tuple[int, int]], order: int,
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
def _hints(draw: Any, d: Draft) -> list[Hint]:
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


def _input_source(d: Draft, v: Value) -> str:
    if v.var in d.host:
        return d.host[v.var]
    return f"((torch.rand([{_shape_source(d.shape(v))}]) * 2 - 1) * {INPUT_SCALE}).to({TORCH_DTYPES[v.dtype]})"


def render(d: Draft, outputs: Sequence[Value], hints: Sequence[Hint] = (), cores: int = 1,
           seed: int = 0) -> FuzzProgram:
    """The program of ``d`` returning ``outputs`` (from :meth:`Draft.finish`) under ``hints``."""
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
        lines.append(f"    {v.var} = {_input_source(d, v)}")
        flat = [n for g in v.dims for n in g]
        lines.append(f"    name_tensor_dims({v.var}, {flat!r})")
    lines.append(f"    return kernel, ({', '.join(names)},)")
    source = "\n".join(lines) + "\n"
    return FuzzProgram(source, cores, _summary(d, hints, cores), sum(len(h.tiles) for h in hints))


def _summary(d: Draft, hints: Sequence[Hint], cores: int) -> str:
    inputs = ", ".join(f"{v.var}: {v.dtype}{d.shape(v)}" for v in d.inputs)
    ops = "; ".join(f"{s.out.var} = {s.code}" for s in d.steps)
    tiles = ", ".join(f"[{h.start}:{h.stop}] {dict(h.tiles)}" for h in hints) or "no hints"
    return f"{inputs} | {ops} | {tiles} | {cores} cores"


@st.composite
def programs(draw: Any, max_steps: int = 6) -> FuzzProgram:
    """A random small program: dims, a first input, a chain of constructs, valid hints, a core count."""
    count = draw(st.integers(2, 5))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=count, max_size=count, unique=True))
    choices = [SMALL_SIZES + RAGGED_SIZES] * (count - 2) + [OTHER_SIZES, LAST_SIZES]
    sizes = {n: draw(st.sampled_from(c)) for n, c in zip(names, choices)}
    rank = min(count, draw(st.sampled_from((1, 2, 3, 3, 4, 4))))
    d = Draft(sizes)
    base = tuple((n,) for n in names[count - rank:])
    while not d.fits(base):
        base = base[1:]
    d.new_input(base, draw(st.sampled_from(INPUT_DTYPES)))
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
    outputs = d.finish(outputs)
    hints = draw(_hints(d))
    return render(d, outputs, hints, draw(st.integers(1, 32)), draw(st.integers(0, 2**16)))


# --------------------------------------------------------------------------
# Checking a program
# --------------------------------------------------------------------------

KINDS = ("passed", "rejected", "wrong", "invalid-output", "crash")
"""Outcomes: matched eager; a SpyreError from export/import/compile; numbers differ from
eager; the interpreter rejected the compiled directory; any other exception (a bug)."""

_PACKAGES = tuple(str(Path(m.__file__).resolve().parent) for m in (spyre_mlir, passes, dialects, tools))
"""Where the installed toolchain's modules are: a frame there is the project's, whichever tree the
fuzz scripts run from."""
_INTERPRETER = str(Path(interpreter.__file__).resolve().parent)


@dataclass(frozen=True)
class Outcome:
    """The result of checking one program."""

    kind: str
    message: str = ""
    where: str = ""
    """The innermost project frame of a failure (``passes/coarse_tile/emit.py:123``)."""


def _innermost(exc: BaseException) -> tuple[str, list[str]]:
    frames = [(str(Path(f.filename).resolve()), f.lineno) for f in traceback.extract_tb(exc.__traceback__)]
    frames = [(name, line) for name, line in frames if name.startswith(_PACKAGES)]
    files = [name for name, _ in frames]
    if not frames:
        return "", files
    name, line = frames[-1]
    package = max((p for p in _PACKAGES if name.startswith(p)), key=len)
    return f"{Path(package).name}/{Path(name).relative_to(package)}:{line}", files


def classify(exc: BaseException) -> Outcome:
    """The outcome of a check that raised ``exc``: an :class:`OutputMismatch` is a wrong number
    wherever it is raised; another :class:`SpyreError` is the interpreter rejecting the output
    when raised in the installed interpreter, else the toolchain rejecting the program."""
    where, files = _innermost(exc)
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, OutputMismatch):
        return Outcome("wrong", message, where)
    if isinstance(exc, SpyreError):
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


