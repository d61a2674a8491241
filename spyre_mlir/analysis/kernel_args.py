# Kernel-argument numbering (DESIGN §10, §14): the order of @sdsc_bundle's
# arguments as the manifest lists them.  Read by spyre-plan-memory (which places
# outputs in their argument) and spyre-lower-to-bundle (which lists them).
# Reads a func.func's arguments and returned values; writes nothing.
"""Kernel arguments: the function's arguments, then its results, then constants and the pool.

The first two groups are fixed by the function's signature; :func:`output_arguments`
numbers the results.  ``constant`` arguments (fills) and the HBM pool follow, in
the order spyre-lower-to-bundle lists them.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, StringAttr, TensorType
from xdsl.ir import SSAValue

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.manifest import ARGUMENT_ROLES


def output_arguments(body: func.FuncOp) -> dict[SSAValue, int]:
    """Each value ``body`` returns -> its kernel argument: the function's arguments come first,
    then one per returned value in order (a value returned twice keeps its first)."""
    ret = body.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    outputs: dict[SSAValue, int] = {}
    for j, value in enumerate(ret.arguments):
        outputs.setdefault(value, len(body.body.block.args) + j)
    return outputs


def argument_types(body: func.FuncOp) -> list[TensorType]:
    """The types of ``body``'s arguments, each a kernel argument: a tensor (else one error)."""
    types = []
    for i, arg in enumerate(body.body.block.args):
        if not isinstance(arg.type, TensorType):
            raise SpyreError(f"argument #{i} of @{body.sym_name.data} is not a tensor", op=body)
        types.append(arg.type)
    return types


def _string_attr(attrs: ArrayAttr | None, index: int, key: str) -> str | None:
    if attrs is None or index >= len(attrs.data):
        return None
    value = attrs.data[index].data.get(key)
    return value.data if isinstance(value, StringAttr) else None


def check_kernel_names(body: func.FuncOp) -> None:
    """Refuse what the manifest could not describe: an argument whose ``spyre.role`` is not one of
    :data:`~spyre_mlir.manifest.ARGUMENT_ROLES`, a ``spyre.role`` or ``spyre.name`` that is not a
    string, and two arguments or results of one name (the manifest names each input and output
    once; ``spyre-run --inputs`` and the outputs are keyed by name)."""
    owners: dict[str, str] = {}

    def claim(attrs: ArrayAttr | None, index: int, what: str, keys: tuple[str, ...], name: str) -> None:
        entry = attrs.data[index].data if attrs is not None and index < len(attrs.data) else {}
        for key in keys:
            if key in entry and not isinstance(entry[key], StringAttr):
                raise SpyreError(f"{what} has {key} = {entry[key]}, expected a string", op=body)
        if name in owners:
            raise SpyreError(f"{what} is named '{name}' like {owners[name]}: the manifest names every argument "
                             "and result once (spyre.name)", op=body)
        owners[name] = what

    for i in range(len(body.body.block.args)):
        role, name = argument_role_and_name(body, i)
        claim(body.arg_attrs, i, f"argument #{i}", ("spyre.role", "spyre.name"), name)
        if role not in ARGUMENT_ROLES:
            raise SpyreError(f"argument #{i} has spyre.role = \"{role}\", expected one of "
                             f"{', '.join(ARGUMENT_ROLES)}", op=body)
    for j in range(len(body.function_type.outputs.data)):
        claim(body.res_attrs, j, f"result #{j}", ("spyre.name",), result_name(body, j))


def argument_role_and_name(body: func.FuncOp, index: int) -> tuple[str, str]:
    """The manifest role and name of function argument ``index`` (``spyre.role``, default
    ``input``; ``spyre.name``, default ``arg<index>``)."""
    return (_string_attr(body.arg_attrs, index, "spyre.role") or "input",
            _string_attr(body.arg_attrs, index, "spyre.name") or f"arg{index}")


def result_name(body: func.FuncOp, index: int) -> str:
    """The manifest name of result ``index`` (``spyre.name``, default ``output<index>``)."""
    return _string_attr(body.res_attrs, index, "spyre.name") or f"output{index}"


def constant_name(index: int) -> str:
    """The manifest name of the constant kernel argument ``index``."""
    return f"fill_{index}"
