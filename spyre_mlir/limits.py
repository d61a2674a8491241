# The device's limits (DESIGN §6, §11): the one definition of every bound the
# Spyre hardware (and its reference interpreter) puts on a program, how a
# tensor's per-core span is measured, and the wording of each violation.
# Imported by the hardware model (SpyreConfig's values), the compiler (work
# division, coarse tiling, memory planning, the lowering's last check of every
# OpSpec) and the interpreter (its address checks).  Reads nothing; writes
# nothing.
"""Hardware limits and how a program is measured against them.

The quantities (:data:`MAX_CORES`, :data:`STICK_BYTES`, :data:`LX_BYTES`,
:data:`LX_RESERVED_BYTES`, :data:`SPAN_LIMIT_BYTES`, :data:`ALIGNMENT`,
:data:`HBM_BYTES`) are what :class:`spyre_mlir.hardware.SpyreConfig`
plans against.  The measures are shared so that the compiler predicts exactly
what the interpreter checks:

* :func:`tensor_box`: one core's box of a tensor in device memory (extent and
  byte stride of each device dim, the within-stick position last) from the
  extents of its layout labels, innermost first, as an SDSC file describes it;
* :func:`span_bytes`: the bytes from a core's first byte of a tensor to one
  past its last, the quantity :data:`SPAN_LIMIT_BYTES` bounds.

Each ``*_problem`` function returns None when a value is within its limit,
else the message that states the rule and the value found; the interpreter
prefixes it with the file, tensor and core, the compiler with the op.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

MAX_CORES = 32
"""Cores on one Spyre card: a program runs on 1..32 of them."""

STICK_BYTES = 128
"""Bytes in one stick, the unit of device memory layout (64 fp16, 32 fp32, 128 int8 elements)."""

LX_BYTES = 2 * 1024 * 1024
"""Size of each core's LX scratchpad."""

LX_RESERVED_BYTES = 64 * 1024
"""LX bytes reserved by the runtime and never planned."""

SPAN_LIMIT_BYTES = 65535 * 4096
"""The largest per-core span (:func:`span_bytes`) of one tensor: 268,431,360 bytes."""

ALIGNMENT = 128
"""Alignment in bytes of every device address and LX offset a core starts a tensor at."""

HBM_BYTES = 128 << 30
"""Device memory of one card (128 GB of LPDDR5, "HBM" here): every kernel argument and the HBM pool
of a program together.  Offsets are 64-bit everywhere (bundle ``index`` values, SDSC start
addresses, OpSpec offsets), so an allocation or a pool offset past 4 GiB is fine."""


def span_bytes(shape: Sequence[int], strides: Sequence[int], word_bytes: int) -> int:
    """Bytes from one core's first byte of a tensor to one past its last: ``sum((n - 1) x stride)
    + word_bytes`` over the dims of its per-core box (``shape`` elements or positions per dim,
    ``strides`` their byte strides, the within-stick position included with stride ``word_bytes``)."""
    return sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + word_bytes


def tensor_box(order: Sequence[str], stick_label: str, stick_elems: int, word_bytes: int,
               core: Mapping[str, int], full: Mapping[str, int]) -> tuple[tuple[int, ...], tuple[int, ...],
                                                                          dict[str, int]]:
    """One core's box of a tensor: its per-core shape and byte strides, outermost device dim first
    and the within-stick position last, and the byte stride of each label.

    ``order`` lists the tensor's labels innermost first (``layoutDimOrder_``); ``core`` and
    ``full`` give each label's extent in elements on one core and in the whole storage (the stick
    label's in whole sticks of ``stick_elems``).  The innermost label steps by one stick; each next
    label by the previous one's stride times its full extent (sticks for the stick label).
    """
    def units(label: str, extents: Mapping[str, int]) -> int:
        return extents[label] // stick_elems if label == stick_label else extents[label]

    stride: dict[str, int] = {}
    step = stick_elems * word_bytes
    for label in order:
        stride[label] = step
        step *= units(label, full)
    outer_first = tuple(reversed(order))
    shape = tuple(units(label, core) for label in outer_first) + (stick_elems,)
    strides = tuple(stride[label] for label in outer_first) + (word_bytes,)
    return shape, strides, stride


def cores_problem(cores: object) -> str | None:
    """A core count outside 1..:data:`MAX_CORES` (or not an integer)."""
    if isinstance(cores, bool) or not isinstance(cores, int) or not 1 <= cores <= MAX_CORES:
        return f"cores must be an integer between 1 and {MAX_CORES}, got {cores!r}"
    return None


def core_problem(core: int, cores: int) -> str | None:
    """A core id that the target's ``cores`` do not have."""
    return None if 0 <= core < cores else f"core {core} does not exist ({cores} cores)"


def stick_problem(stick_elems: int, word_bytes: int) -> str | None:
    """A stick of ``stick_elems`` elements of ``word_bytes`` that is not :data:`STICK_BYTES` bytes."""
    if stick_elems < 1 or stick_elems * word_bytes != STICK_BYTES:
        return f"{stick_elems} elements of {word_bytes} bytes is not a {STICK_BYTES}-byte stick"
    return None


def whole_sticks_problem(label: str, core: int, full: int, stick_elems: int) -> str | None:
    """A stick dim whose extent per core (``core``) or in all (``full``) is not whole sticks."""
    if core % stick_elems or full % stick_elems:
        return (f"stick dim '{label}' extent {core} per core / {full} in all is not a whole number of "
                f"{stick_elems}-element sticks")
    return None


def span_problem(span: int, limit: int = SPAN_LIMIT_BYTES) -> str | None:
    """A per-core span (:func:`span_bytes`) over ``limit``."""
    return None if span <= limit else f"per-core span {span} bytes exceeds the limit of {limit}"


def alignment_problem(address: int, alignment: int = ALIGNMENT) -> str | None:
    """A start address (or LX offset) that is not ``alignment``-byte aligned."""
    return None if address % alignment == 0 else f"start address {address} is not {alignment}-byte aligned"


def lx_problem(offset: int, span: int, usable: int) -> str | None:
    """An LX slice of ``span`` bytes at ``offset`` outside the ``usable`` LX bytes of a core."""
    if offset < 0 or offset + span > usable:
        return f"LX offset {offset} + {span} bytes exceeds the usable LX of {usable} bytes"
    return None


def allocation_problem(offset: int, span: int, nbytes: int) -> str | None:
    """``span`` bytes at ``offset`` in an HBM allocation of ``nbytes`` that fall outside it."""
    if offset < 0 or offset + span > nbytes:
        return f"bytes [{offset}, {offset + span}) fall outside their allocation of {nbytes} bytes"
    return None


def hbm_problem(nbytes: int, limit: int = HBM_BYTES) -> str | None:
    """A program whose HBM allocations (kernel arguments and pool) take more than ``limit`` bytes."""
    if nbytes > limit:
        return f"the HBM allocations take {nbytes} bytes, more than the {limit} bytes of device memory"
    return None
