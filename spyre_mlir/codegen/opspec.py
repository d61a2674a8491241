# The OpSpec: everything the SDSC JSON of one compute op says, as a plain
# record that spyre-lower-to-bundle builds from the IR and stores on its
# `sdscbundle.sdsc_execute` as the `op_spec` dictionary attribute, and that the
# writer turns into JSON.  Reads and writes builtin attributes only.
"""OpSpec: one compute op as the SDSC back end sees it.

Printed on ``sdscbundle.sdsc_execute`` as ``op_spec = {...}``::

    op_spec = {op_func = "add", sdsc_op = "add", ex_unit = "sfp",
               labels = ["mb", "out"], sizes = array<i64: 512, 1024>,
               valid_sizes = array<i64: 512, 1024>, splits = array<i64: 32, 1>,
               slice_order = ["mb", "out"],
               args = [{name = "Tensor0", role = "input", ds_type = "OUTPUT",
                        data_format = "SEN169_FP16", word_length = 2 : i64,
                        device_size = array<i64: 64, 1024, 64>,
                        layout_labels = ["mb", "out"], stick_label = "out", stick_size = 64 : i64,
                        scale = array<i64: 1, 1>, memory = "hbm",
                        placement = #spyre.placement<hbm, arg 0>,
                        core_offsets = array<i64: 0, 2048, ...>, symbols = array<i64: -1, -2, ...>,
                        back_gap = {mb = 512 : i64, out = 3072 : i64}}, ...]}

``sizes`` are the iteration sizes with stick dims padded to whole sticks (SDSC
``N_``), ``valid_sizes`` the unpadded ones.  Per argument, ``core_offsets[c]``
is core ``c``'s start, in bytes from the argument's base (HBM: the tensor's
window base; LX: the LX offset itself); ``symbols[c]`` is the negative symbol id
that carries core ``c``'s HBM start address (cores sharing an address share an
id), empty for LX.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute

from spyre_mlir.dialects.sdscbundle import i64_attr

OP_SPEC_ATTR = "op_spec"
"""Name of the attribute that carries the OpSpec on ``sdscbundle.sdsc_execute``."""


@dataclass(frozen=True)
class ArgSpec:
    """One tensor argument of an SDSC op (an operand, or the output)."""

    name: str
    """``Tensor<i>``, the labeled data structure's name."""
    role: str
    """``input`` or ``output``."""
    ds_type: str
    """Layout label: OUTPUT, KERNEL, INPUT or KERNEL_IDX (``dsType_``)."""
    data_format: str
    word_length: int
    device_size: tuple[int, ...]
    """Device sizes of the whole storage tensor (not just the window read)."""
    layout_labels: tuple[str, ...]
    """Iteration label of each device dim but the within-stick one, innermost first."""
    stick_label: str
    stick_size: int
    scale: tuple[int, ...]
    """Per layout label (``scale_``): 1 the tensor advances with the label; -1 it has extent 1
    there (a reduction's kept size-1 dim, or a size-1 input dim broadcast along the label);
    -2 one element per stick on the stick dim (reduced, or broadcast, along the stick)."""
    memory: str
    """``hbm`` or ``lx``."""
    placement: Attribute
    core_offsets: tuple[int, ...]
    symbols: tuple[int, ...]
    back_gap: Mapping[str, int] = field(default_factory=dict)
    """Per layout label, storage extent minus window extent, in (padded) elements."""


@dataclass(frozen=True)
class OpSpec:
    """One compute op: op func, iteration space, work division and arguments."""

    op_func: str
    sdsc_op: str
    """``opFuncName``: the op func, with ``nonstick`` for a reduction off the stick."""
    ex_unit: str
    kind: str
    """The op func kind (pointwise, reduction, matmul, data_movement)."""
    labels: tuple[str, ...]
    sizes: tuple[int, ...]
    valid_sizes: tuple[int, ...]
    splits: tuple[int, ...]
    slice_order: tuple[str, ...]
    """Labels in the order cores step through them, fastest first (``coreIdToWkSlice_``'s values)."""
    args: tuple[ArgSpec, ...]
    replicas: int = 1
    """Consecutive cores computing each slice (``core_replicas``), each into its own LX."""
    consts: Mapping[str, float] = field(default_factory=dict)
    """Scalar inputs and parameters of the op func, by name (a mean's ``scaling_factor``)."""
    mask: Mapping[str, Any] = field(default_factory=dict)
    """For a reduction over a padded stick: label, valid, pad, value."""
    indirect: Mapping[str, Any] = field(default_factory=dict)
    """For a table read through an index: ``index`` and ``table`` (argument positions) and
    ``label`` (the table's gathered label, ``scale_`` -1: one row per iteration point)."""

    @property
    def num_cores(self) -> int:
        n = self.replicas
        for s in self.splits:
            n *= s
        return n

    def to_attr(self) -> DictionaryAttr:
        """The ``op_spec`` dictionary attribute (remembered as this spec's, for :meth:`from_attr`)."""
        attr = _to_attr(self)
        _BUILT.remember(attr, self)
        return attr

    @classmethod
    def from_attr(cls, attr: Attribute) -> OpSpec:
        """Read an ``op_spec`` attribute back: the spec it was built from, while that attribute
        lives (the writer of a compile), else its contents."""
        built = _BUILT.get(attr)
        if built is not None:
            return built
        data = _from_attr(attr)
        args = tuple(ArgSpec(**_typed(ArgSpec, a)) for a in data.pop("args"))
        return cls(args=args, **_typed(cls, data))


class _BuiltSpecs:
    """The OpSpec each live ``op_spec`` attribute was built from, by the attribute's identity:
    attributes are immutable, so the spec is what reading the attribute back gives, and
    hashing a whole spec's attribute would cost what reading it does."""

    def __init__(self) -> None:
        self._specs: dict[int, tuple[weakref.ref[Attribute], OpSpec]] = {}

    def remember(self, attr: Attribute, spec: OpSpec) -> None:
        key = id(attr)
        self._specs[key] = (weakref.ref(attr, lambda _: self._specs.pop(key, None)), spec)

    def get(self, attr: Attribute) -> OpSpec | None:
        found = self._specs.get(id(attr))
        return found[1] if found is not None and found[0]() is attr else None


_BUILT = _BuiltSpecs()


def _typed(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with lists turned into the tuples the dataclass fields hold."""
    names = {f.name for f in fields(cls)}
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names}


def _to_attr(value: Any) -> Attribute:
    """The attribute of an OpSpec value: records and mappings become dictionaries, tuples arrays.

    Concrete types are tested first, in the order a spec holds them most; the abstract
    ``Attribute`` and ``Mapping`` last, their tests being the slow ones.
    """
    if isinstance(value, bool):
        raise TypeError("booleans are not OpSpec values")
    if isinstance(value, int):
        return i64_attr(value)
    if isinstance(value, str):
        return _string_attr(value) if type(value) is str else StringAttr(value)
    if isinstance(value, (tuple, list)):
        if value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return DenseArrayBase(i64, BytesAttr(i64.pack(value)))  # from_list, without its per-value checks
        if any(isinstance(v, int) for v in value):
            raise TypeError(f"mixed list {value}")
        return ArrayAttr(_to_attr(v) for v in value)
    if isinstance(value, (OpSpec, ArgSpec)):  # a field at its plain default (one replica) is left out
        return DictionaryAttr({f.name: _to_attr(getattr(value, f.name)) for f in fields(value)
                               if f.default is MISSING or getattr(value, f.name) != f.default})
    if isinstance(value, float):
        return FloatAttr(value, f64)
    if isinstance(value, Attribute):
        return value
    if isinstance(value, Mapping):
        return DictionaryAttr({k: _to_attr(v) for k, v in value.items()})
    raise TypeError(f"not an OpSpec value: {value!r}")


@functools.lru_cache(maxsize=4096)
def _string_attr(value: str) -> StringAttr:
    """``StringAttr(value)`` of a plain string, shared: OpSpecs repeat the same labels and names."""
    return StringAttr(value)


def _from_attr(attr: Attribute) -> Any:
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return [int(v) for v in attr.get_values()]
    if isinstance(attr, ArrayAttr):
        return [_from_attr(a) for a in attr.data]
    if isinstance(attr, DictionaryAttr):
        return {k: _from_attr(v) for k, v in attr.data.items()}
    return attr
