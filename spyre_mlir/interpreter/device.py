# The simulated Spyre device: HBM as one sparse allocation per kernel argument
# at 16 GiB-aligned bases, and each core's 2 MiB LX scratchpad, all numpy byte
# buffers, whose elements are held as the run's numerics mode says; host
# tensors are staged in and read back with the manifest's layouts.  Reads host
# arrays and the manifest; writes device buffers.
"""Device memory of the reference interpreter.

HBM the program itself must write (the pool, outputs) starts as :data:`POISON`
bytes (nan), so a program that relies on memory being zero fails its comparison.
LX needs no poison: reading LX bytes that no write reached is an error
(:meth:`Device.lx_read_check`).
LX and its ownership map are anonymous memory mappings: zero, and costing a
page fault only where a run writes (a few hundred KiB of the 64 MiB of LX;
numpy's zeroed arrays of that size are backed by huge pages, each zeroed
whole on first touch).  HBM allocations, written whole by staging or by the
program, are numpy arrays.  Fresh pages cost a fault each on first touch,
more than the arithmetic of a run, so a finished run's device is
:meth:`Device.reset` and reused by the next run of the same directory.

Device memory is bytes; the run's numerics mode (``hardware.NUMERICS``) says how
SEN169_FP16 words are read and written: IEEE float16 or DLFloat16.  Staging
converts the host's float16 into it (DLFloat16 rounds), reading back converts
it to the host's float16 (past 65504 infinity).  The poison bytes are NaN in
either.
"""

from __future__ import annotations

import math
import mmap
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import NUMERICS_IEEE, SpyreConfig
from spyre_mlir.interpreter.casts import BFLOAT16_BITS, element_dtypes, host_form, staged, store
from spyre_mlir.layout import StickLayout, from_device, stick_layout, to_device
from spyre_mlir.limits import ALIGNMENT
from spyre_mlir.manifest import KernelArg

POISON = 0xFF
"""The byte HBM the program itself must write starts as (the pool, outputs without a ``fill``):
a float16 or float32 word of such bytes is nan, an int8 one -1, so a read of bytes nothing
wrote (padding a layout promises as zeros, a pool block another value left behind) shows
in the result instead of reading as the zeros of a fresh simulated device."""

SEGMENT_BYTES = 16 << 30
"""HBM allocations start at multiples of 16 GiB, one after another from 16 GiB, each taking the
segments it needs with at least one byte to spare (argument i at (i + 1) x 16 GiB while the
arguments before it are below 16 GiB each)."""

LX_GRANULE = ALIGNMENT
"""LX occupancy is tracked in granules of the alignment every LX offset has (128 bytes)."""


@dataclass
class Allocation:
    """One HBM allocation: a kernel argument or the pool."""

    arg: KernelArg
    base: int
    data: np.ndarray
    """uint8 buffer of ``arg.nbytes`` bytes."""


def _alike(a: KernelArg, b: KernelArg) -> bool:
    """``a`` and ``b`` are laid out alike: one allocation can serve both."""
    return (a.shape, a.dtype, a.layout, a.nbytes) == (b.shape, b.dtype, b.layout, b.nbytes)


def _unpadded(layout: StickLayout) -> bool:
    """Every device element of ``layout`` is a host element (no stick or dim padding)."""
    return math.prod(layout.device_size) == math.prod(layout.host_shape)


def _device_form(host: np.ndarray, layout: StickLayout) -> np.ndarray:
    """The C-contiguous ``host`` array seen in the device order of an unpadded ``layout`` (a view)."""
    strides = [max(stride, 0) * host.itemsize for stride in layout.stride_map]
    return as_strided(host, layout.device_size, strides)


def _poisoned(arg: KernelArg) -> bool:
    """True for an allocation only the program writes: the pool, an output without a ``fill``."""
    return arg.role == "pool" or (arg.role == "output" and arg.fill is None)


def _initial(arg: KernelArg) -> np.ndarray:
    """The bytes of ``arg``'s allocation on a new device: :data:`POISON` where only the program
    writes (:func:`_poisoned`), else zeros (staging or the runtime's fill overwrites them)."""
    if _poisoned(arg):
        return np.full(arg.nbytes, POISON, np.uint8)
    return np.zeros(arg.nbytes, np.uint8)


def _zeros(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """A zero array of ``shape`` in an anonymous memory mapping."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    return np.frombuffer(mmap.mmap(-1, max(nbytes, 1)), dtype, count=math.prod(shape)).reshape(shape)


def _segments(nbytes: int) -> int:
    """The 16 GiB segments an allocation of ``nbytes`` takes: with at least one byte to spare, so
    that the bytes just past it belong to no allocation."""
    return nbytes // SEGMENT_BYTES + 1


def hbm_bases(args: Sequence[KernelArg]) -> list[int]:
    """The base address of each of ``args`` (in order): the first at 16 GiB, each next one past the
    segments the one before takes."""
    bases, base = [], SEGMENT_BYTES
    for arg in args:
        bases.append(base)
        base += _segments(arg.nbytes) * SEGMENT_BYTES
    return bases


class Device:
    """HBM allocations plus per-core LX, with LX ownership tracking.

    LX liveness (a simple, exact-on-use scheme): every LX write on a core
    records, per 128-byte granule, which value (write) owns it.  A value is
    live from its write until its last read; an overwrite only matters if
    the old value is read again, so the check runs at each read: all granules
    read must have been written, and by one single value.  A read that finds
    bytes of another value means two live values overlapped in LX.
    """

    def __init__(self, args: tuple[KernelArg, ...], config: SpyreConfig, numerics: str = NUMERICS_IEEE):
        self.config = config
        self.numerics = numerics
        """The numerics mode the memory's float16 elements are held in (``hardware.NUMERICS``)."""
        self.element_dtypes = element_dtypes(numerics)
        """The numpy dtype that holds each data format's elements (by the numerics mode)."""
        ordered = sorted(args, key=lambda a: a.index)
        self.allocations = [Allocation(a, base, _initial(a)) for a, base in zip(ordered, hbm_bases(ordered))]
        self.segments: list[Allocation | None] = [None]
        """The allocation each 16 GiB segment of the address space belongs to."""
        for alloc in self.allocations:
            self.segments += [alloc] * _segments(alloc.arg.nbytes)
        self.lx = _zeros((config.cores, config.lx_bytes), np.uint8)
        self.lx_owner = _zeros((config.cores, config.lx_bytes // LX_GRANULE), np.int64)
        self.lx_values: dict[int, str] = {}
        """Value id -> description of the write that produced it."""
        self.lx_used = 0
        """One past the highest LX byte written on any core."""
        self.shared: set[str] = set()
        """The arguments whose allocation is another device's (:meth:`share`): they hold their values,
        and the runs of this device neither stage nor clear them."""

    def share(self, other: Device, names: Collection[str]) -> list[str]:
        """Hold ``other``'s allocation for each argument of ``names`` that both devices have under that
        name, with the same shape and layout: from now on the two devices read and write the same HBM
        bytes for it (a weight staged once, a KV cache one program writes and the other reads).
        Returns the names shared; refuses devices in different numerics (their bytes differ)."""
        if other.numerics != self.numerics:
            raise SpyreError(f"a device in {self.numerics} numerics cannot share the memory of one in "
                             f"{other.numerics} numerics")
        theirs = {alloc.arg.name: alloc for alloc in other.allocations}
        shared = []
        for alloc in self.allocations:
            source = theirs.get(alloc.arg.name)
            if alloc.arg.name in names and source is not None and _alike(alloc.arg, source.arg):
                alloc.data = source.data
                shared.append(alloc.arg.name)
        self.shared.update(shared)
        return shared

    def reset(self, rewritten: Collection[int] = (), numerics: str = NUMERICS_IEEE) -> None:
        """Return to the state of a new device in ``numerics``, keeping the memory (its pages are
        already mapped, which saves a page fault per 4 KiB a run touches).  The allocations of the
        arguments numbered ``rewritten`` keep their bytes: the caller overwrites them whole; so do the
        shared ones (:meth:`share`)."""
        self.numerics = numerics
        self.element_dtypes = element_dtypes(numerics)
        for alloc in self.allocations:
            if alloc.arg.index not in rewritten and alloc.arg.name not in self.shared:
                alloc.data.fill(POISON if _poisoned(alloc.arg) else 0)
        self.lx[:, :self.lx_used] = 0
        self.lx_owner[:, :-(-self.lx_used // LX_GRANULE)] = 0
        self.lx_values.clear()
        self.lx_used = 0

    @property
    def arguments(self) -> list[int]:
        """The base address of each bundle argument, in argument order."""
        return [a.base for a in self.allocations]

    def locate(self, address: int) -> Allocation | None:
        """The allocation whose segments hold ``address``, or None."""
        index = address // SEGMENT_BYTES
        return self.segments[index] if 0 <= index < len(self.segments) else None

    def stage(self, arg: KernelArg, host: Any) -> None:
        """Write ``host`` (of ``arg``'s shape, checked by :func:`~spyre_mlir.interpreter.runner.host_inputs`)
        into ``arg``'s allocation in the manifest's layout."""
        layout = self.layout_of(arg)
        device, host = self._device_view(arg, layout), np.asarray(host)
        if host.shape == layout.host_shape and _unpadded(layout):  # else to_device refuses a wrong shape
            values = _device_form(np.ascontiguousarray(host), layout)
        else:
            values = to_device(host, layout)
        store(device, staged(values, device.dtype))

    def fill(self, arg: KernelArg) -> None:
        """Initialise a ``constant`` argument: every device element, padding included, is its fill value."""
        assert arg.fill is not None
        device = self._device_view(arg, self.layout_of(arg))
        store(device, staged(np.array(arg.fill, dtype=np.float32), device.dtype))

    def read_back(self, arg: KernelArg) -> np.ndarray:
        """The host form of ``arg``'s allocation (bfloat16 as its float32 values, DLFloat16 as float16)."""
        layout = self.layout_of(arg)
        device = host_form(self._device_view(arg, layout))
        if not _unpadded(layout):
            return from_device(device, layout)
        host = np.empty(layout.host_shape, np.float32 if device.dtype == BFLOAT16_BITS else device.dtype)
        store(_device_form(host, layout), device)
        return host

    def _device_view(self, arg: KernelArg, layout: StickLayout) -> np.ndarray:
        """``arg``'s allocation as its device array (shape ``device_size``)."""
        dtype = self.element_dtypes[layout.data_format]
        return self.allocations[arg.index].data.view(dtype).reshape(layout.device_size)

    @staticmethod
    def layout_of(arg: KernelArg) -> StickLayout:
        """The stick layout of ``arg``, checked against the manifest's description."""
        assert arg.layout is not None and arg.shape is not None
        layout = stick_layout(arg.shape, arg.dtype, arg.layout.dim_order, padded_shape=arg.layout.padded_shape)
        checks = (("device_size", list(arg.layout.device_size), layout.device_size),
                  ("data_format", arg.layout.data_format, layout.data_format),
                  ("nbytes", arg.nbytes, layout.nbytes))
        for field, stated, derived in checks:
            if stated != derived:
                raise SpyreError(f"argument '{arg.name}': {field} {stated} does not match the stick layout of "
                                 f"{list(arg.shape)} {arg.dtype} dim order {list(arg.layout.dim_order)} "
                                 f"({derived})", loc="manifest.json")
        return layout

    def new_lx_value(self, description: str) -> int:
        """A fresh LX value id."""
        value = len(self.lx_values) + 1
        self.lx_values[value] = description
        return value

    def lx_write(self, core: int, start: int, end: int, value: int) -> None:
        """Record that ``value`` now owns LX bytes [start, end) of ``core``."""
        self.lx_owner[core, start // LX_GRANULE: -(-end // LX_GRANULE)] = value
        self.lx_used = max(self.lx_used, end)

    def lx_write_all(self, cores: Sequence[int], starts: Sequence[int], size: int, value: int) -> None:
        """:meth:`lx_write` of ``size`` bytes from ``starts[i]`` on each core ``cores[i]``."""
        if len(set(starts)) == 1:
            self.lx_owner[list(cores), starts[0] // LX_GRANULE: -(-(starts[0] + size) // LX_GRANULE)] = value
            self.lx_used = max(self.lx_used, starts[0] + size)
            return
        for core, start in zip(cores, starts):
            self.lx_write(core, start, start + size, value)

    def lx_reads_ok(self, cores: Sequence[int], starts: Sequence[int], size: int) -> bool:
        """True if :meth:`lx_read_check` finds no problem in ``size`` bytes from ``starts[i]`` on each
        core ``cores[i]``."""
        if len(set(starts)) > 1:
            return all(self.lx_read_check(c, s, s + size) is None for c, s in zip(cores, starts))
        owners = self.lx_owner[list(cores), starts[0] // LX_GRANULE: -(-(starts[0] + size) // LX_GRANULE)]
        return bool((owners[:, :1] != 0).all() and (owners == owners[:, :1]).all())

    def lx_read_check(self, core: int, start: int, end: int) -> str | None:
        """None if LX bytes [start, end) of ``core`` hold one written value, else the problem."""
        owners = self.lx_owner[core, start // LX_GRANULE: -(-end // LX_GRANULE)]
        if (owners == 0).any():
            first = start + int(np.argmax(owners == 0)) * LX_GRANULE
            return f"reads LX bytes [{start}, {end}) but byte {first} was never written"
        if (owners != owners[0]).any():
            other = int(owners[np.argmax(owners != owners[0])])
            return (f"reads LX bytes [{start}, {end}) holding two values: {self.lx_values[int(owners[0])]} "
                    f"and {self.lx_values[other]} (live LX values overlap)")
        return None
