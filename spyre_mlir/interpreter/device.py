# The simulated Spyre device: HBM as one sparse allocation per kernel argument
# at 16 GiB-aligned bases, and each core's 2 MiB LX scratchpad, all numpy byte
# buffers; host tensors are staged in and read back with the manifest's
# layouts.  Reads host arrays and the manifest; writes device buffers.
"""Device memory of the reference interpreter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import SpyreConfig, device_numpy_dtype
from spyre_mlir.layout import StickLayout, from_device, stick_layout, to_device
from spyre_mlir.manifest import KernelArg

SEGMENT_BYTES = 16 << 30
"""HBM allocations start at multiples of 16 GiB (argument i at (i + 1) x 16 GiB)."""

LX_GRANULE = 128
"""LX occupancy is tracked in 128-byte granules."""


@dataclass
class Allocation:
    """One HBM allocation: a kernel argument or the pool."""

    arg: KernelArg
    base: int
    data: np.ndarray
    """uint8 buffer of ``arg.nbytes`` bytes."""


class Device:
    """HBM allocations plus per-core LX, with LX ownership tracking.

    LX liveness (a simple, exact-on-use scheme): every LX write on a core
    records, per 128-byte granule, which value (write) owns it.  A value is
    live from its write until its last read; an overwrite only matters if
    the old value is read again, so the check runs at each read: all granules
    read must have been written, and by one single value.  A read that finds
    bytes of another value means two live values overlapped in LX.
    """

    def __init__(self, args: tuple[KernelArg, ...], config: SpyreConfig):
        self.config = config
        self.allocations = [Allocation(a, (a.index + 1) * SEGMENT_BYTES, np.zeros(a.nbytes, np.uint8))
                            for a in sorted(args, key=lambda a: a.index)]
        self.lx = np.zeros((config.cores, config.lx_bytes), np.uint8)
        self.lx_owner = np.zeros((config.cores, config.lx_bytes // LX_GRANULE), np.int64)
        self.lx_values: dict[int, str] = {}
        """Value id -> description of the write that produced it."""

    @property
    def arguments(self) -> list[int]:
        """The base address of each bundle argument, in argument order."""
        return [a.base for a in self.allocations]

    def locate(self, address: int) -> Allocation | None:
        """The allocation whose segment holds ``address``, or None."""
        index = address // SEGMENT_BYTES - 1
        return self.allocations[index] if 0 <= index < len(self.allocations) else None

    def stage(self, arg: KernelArg, host: Any) -> None:
        """Write ``host`` into ``arg``'s allocation in the manifest's layout."""
        layout = self.layout_of(arg)
        try:
            device = to_device(host, layout)
        except SpyreError as e:
            raise SpyreError(f"input '{arg.name}': {e.msg}") from None
        self.allocations[arg.index].data[:] = device.reshape(-1).view(np.uint8)

    def fill(self, arg: KernelArg) -> None:
        """Initialise a ``constant`` argument: every device element, padding included, is its fill value."""
        assert arg.fill is not None
        layout = self.layout_of(arg)
        values = np.full(layout.device_size, arg.fill, device_numpy_dtype(arg.dtype))
        self.allocations[arg.index].data[:] = values.reshape(-1).view(np.uint8)

    def read_back(self, arg: KernelArg) -> np.ndarray:
        """The host form of ``arg``'s allocation."""
        layout = self.layout_of(arg)
        device = self.allocations[arg.index].data.view(device_numpy_dtype(arg.dtype)).reshape(layout.device_size)
        return from_device(device, layout)

    @staticmethod
    def layout_of(arg: KernelArg) -> StickLayout:
        """The stick layout of ``arg``, checked against the manifest's description."""
        assert arg.layout is not None and arg.shape is not None
        layout = stick_layout(arg.shape, arg.dtype, arg.layout.dim_order)
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
