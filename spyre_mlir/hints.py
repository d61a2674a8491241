# The user-facing hint API: named tensor dimensions and `spyre_hint` scopes.
# Reads the user's calls; writes `torch.fx.traceback.annotate` metadata (hints)
# and a weak registry of dim names per tensor that the importer reads.
"""Named dimensions and ``spyre_hint`` (DESIGN §7)::

    declare_tensor_dim("A", 1024); declare_tensor_dim("B", 4096)
    name_tensor_dims(a, ["A", "B"])            # on example inputs, before export
    with spyre_hint(tiles={"A": 2}):           # aliases: slices=, num_tiles_per_dim=
        with spyre_hint(tiles={"B": 4}):       # inner scope -> inner loop
            y = a + b; z = y * c

``spyre_hint`` opens ``torch.fx.traceback.annotate({"_spyre_hint_<id>": {"tiles": ...,
"work_div": ...}})`` with a process-wide increasing id, so an inner scope always
has a larger id than the scope around it.  The importer reads the annotations
from ``node.meta["custom"]``.  They survive ``torch.export.export(strict=True)``
and non-strict export inside ``torch.fx.traceback.preserve_node_meta()``; a
non-strict export without it loses them, and ``spyre_hint`` warns.

Every misuse raises :class:`HintError` (a :class:`SpyreError` and a
``ValueError``) located at the caller's line, naming the offending value.
"""

from __future__ import annotations

import itertools
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.optional import require

torch = require("torch", "spyre_hint and named tensor dims")

import torch.fx.traceback as fx_traceback  # noqa: E402
from torch.utils.weak import WeakIdKeyDictionary  # noqa: E402

HINT_KEY_PREFIX = "_spyre_hint_"
"""Prefix of the ``node.meta["custom"]`` keys written by :func:`spyre_hint`."""

_TILE_ALIASES = ("tiles", "slices", "num_tiles_per_dim")
_KEYWORDS = (*_TILE_ALIASES, "work_div")

_declared: dict[str, int] = {}
_tensor_dims: WeakIdKeyDictionary = WeakIdKeyDictionary()
_next_id = itertools.count(1)


class HintError(SpyreError, ValueError):
    """A misuse of the hint API, located at the user's call."""


def _caller_loc() -> str | None:
    """``file:line`` of the first frame outside this module and torch."""
    here = os.path.abspath(__file__)
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if path != here and not path.startswith(torch_dir) and "contextlib" not in path:
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def _error(msg: str) -> HintError:
    return HintError(msg, loc=_caller_loc())


def _check_count(api: str, what: str, name: Any, count: Any) -> int:
    if isinstance(count, bool) or not isinstance(count, int):
        raise _error(f"{api}: {what} for '{name}' must be a positive integer, got {count!r}")
    if count <= 0:
        raise _error(f"{api}: {what} for '{name}' must be a positive integer, got {count}")
    return count


def _check_declared(api: str, name: Any) -> str:
    if not isinstance(name, str):
        raise _error(f"{api}: dimension names must be strings, got {name!r}")
    if name not in _declared:
        raise _error(f"{api}: undeclared dimension name '{name}'; "
                     f"call declare_tensor_dim('{name}', size) first")
    return name


def declare_tensor_dim(name: str, size: int) -> None:
    """Declare the dimension ``name`` of extent ``size``.

    Declaring a name again replaces its size (tensors named earlier keep the
    grouping they were checked against).
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise _error(f"declare_tensor_dim: dimension name must be an identifier string, got {name!r}")
    _declared[name] = _check_count("declare_tensor_dim", "size", name, size)


def declared_dims() -> dict[str, int]:
    """A copy of the declared dimension sizes."""
    return dict(_declared)


def group_dim_names(shape: Sequence[int], names: Sequence[str], sizes: Mapping[str, int],
                    api: str = "name_tensor_dims") -> list[list[str]]:
    """Assign ``names`` (outermost first) to the dims of ``shape``.

    Each dim takes consecutive names whose sizes multiply to its extent, so a
    flat ``[M*K]`` tensor named ``["M", "K"]`` gets ``[["M", "K"]]``.  A size-1
    dim with no size-1 name left gets no name.
    """
    groups: list[list[str]] = []
    i = 0
    for d, extent in enumerate(shape):
        group: list[str] = []
        product = 1
        while i < len(names) and product < extent:
            group.append(names[i])
            product *= sizes[names[i]]
            i += 1
        if extent == 1 and i < len(names) and sizes[names[i]] == 1:
            group.append(names[i])
            i += 1
        if product != extent:
            got = " * ".join(f"{n}={sizes[n]}" for n in group) or "no names"
            raise _error(f"{api}: size mismatch: dim {d} of shape {list(shape)} has extent {extent}, "
                         f"but the names {list(names)} give {got} = {product}")
        groups.append(group)
    if i != len(names):
        rest = names[i:]
        raise _error(f"{api}: size mismatch: names {list(rest)} are left over after naming every "
                     f"dim of shape {list(shape)} with {list(names)}")
    return groups


def name_tensor_dims(tensor: torch.Tensor, names: Sequence[str]) -> torch.Tensor:
    """Record the dimension names of ``tensor`` (an example input or parameter).

    ``len(names)`` may differ from the rank when extents multiply out.  Returns
    the tensor, so the call can be chained.
    """
    if not isinstance(tensor, torch.Tensor):
        raise _error(f"name_tensor_dims: expected a tensor, got {type(tensor).__name__}")
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise _error(f"name_tensor_dims: names must be a list of strings, got {names!r}")
    for name in names:
        _check_declared("name_tensor_dims", name)
    if len(set(names)) != len(names):
        raise _error(f"name_tensor_dims: duplicate dimension name in {list(names)}")
    shape = tuple(int(s) for s in tensor.shape)
    _tensor_dims[tensor] = group_dim_names(shape, list(names), _declared)
    return tensor


def tensor_dim_names(tensor: Any) -> list[list[str]] | None:
    """The names recorded for ``tensor`` by :func:`name_tensor_dims`, one list per dim."""
    if not isinstance(tensor, torch.Tensor):
        return None
    found = _tensor_dims.get(tensor)
    return None if found is None else [list(g) for g in found]


def _counts(api: str, key: str, value: Any) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise _error(f"{api}: {key}= must be a dict of dimension name to count, got {value!r}")
    return {_check_declared(api, name): _check_count(api, f"{key} count", name, count)
            for name, count in value.items()}


def hint_payload(**kw: Any) -> dict[str, dict[str, int]]:
    """Validate ``spyre_hint`` keywords; returns ``{"tiles": {...}, "work_div": {...}}``."""
    api = "spyre_hint"
    unknown = [k for k in kw if k not in _KEYWORDS]
    if unknown:
        raise _error(f"{api}: unknown keyword '{unknown[0]}'; expected one of {', '.join(_KEYWORDS)}")
    aliases = [k for k in _TILE_ALIASES if k in kw]
    if len(aliases) > 1:
        raise _error(f"{api}: {' and '.join(aliases)} are aliases; give only one of them")
    tiles = _counts(api, aliases[0], kw[aliases[0]]) if aliases else {}
    work_div = _counts(api, "work_div", kw["work_div"]) if "work_div" in kw else {}
    if not tiles and not work_div:
        raise _error(f"{api}: a hint needs a non-empty tiles= (or slices=, num_tiles_per_dim=) "
                     "or work_div=")
    return {"tiles": tiles, "work_div": work_div}


def spyre_hint(**kw: Any):
    """A context manager marking the ops traced inside it with a tiling / work-division hint.

    Keywords: ``tiles`` (aliases ``slices``, ``num_tiles_per_dim``): dimension
    name -> number of tiles; ``work_div``: dimension name -> cores.  The returned
    context manager has a ``hint_id`` attribute.
    """
    payload = hint_payload(**kw)
    hint_id = next(_next_id)
    if (not torch.compiler.is_dynamo_compiling() and torch.compiler.is_exporting()
            and not fx_traceback.should_preserve_node_meta):
        warnings.warn(
            f"spyre_hint {hint_id} ({payload}) is lost: non-strict torch.export.export only keeps "
            "hints inside torch.fx.traceback.preserve_node_meta(); use that or strict=True",
            stacklevel=2)
    cm = fx_traceback.annotate({f"{HINT_KEY_PREFIX}{hint_id}": payload})
    return cm
