# Kernel-argument numbering (DESIGN §10, §14, §17): the order of @sdsc_bundle's
# arguments as the manifest lists them.  Read by spyre-plan-memory (which places
# outputs in their argument) and spyre-lower-to-bundle (which lists them).
# Reads a func.func's arguments, returned values and result attributes
# (`spyre.name`, `spyre.updates`); writes nothing.
"""Kernel arguments: the function's arguments, then its outputs, then constants and the pool.

The first two groups are fixed by the function's signature; :func:`output_arguments`
numbers the results.  A result with ``spyre.updates = "<argument name>"`` is the new
value of that argument (a buffer the program mutates, written in place): it has no
kernel argument of its own but the argument's.  ``constant`` arguments (fills) and the
HBM pool follow, in the order spyre-lower-to-bundle lists them.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, IntegerType, StringAttr, TensorType
from xdsl.ir import SSAValue

from spyre_mlir.diagnostics import SpyreError, describe_argument
from spyre_mlir.dialects.spyre import HOST_DTYPE_ATTR, RANGE_ATTR
from spyre_mlir.manifest import ARGUMENT_ROLES


UPDATES_ATTR = "spyre.updates"
"""Result attribute: the name of the argument whose new value the result is (written in place)."""


def updated_arguments(body: func.FuncOp) -> dict[int, int]:
    """Result index -> the argument it updates in place (``spyre.updates``), checked: it names one
    argument of role ``buffer``, which no other result updates."""
    names = {argument_role_and_name(body, i)[1]: i for i in range(len(body.body.block.args))}
    updates: dict[int, int] = {}
    for j in range(len(body.function_type.outputs.data)):
        entry = body.res_attrs.data[j].data if body.res_attrs is not None and j < len(body.res_attrs.data) else {}
        if UPDATES_ATTR not in entry:
            continue
        name = entry[UPDATES_ATTR]
        if not isinstance(name, StringAttr) or name.data not in names:
            raise SpyreError(f"result #{j} has {UPDATES_ATTR} = {name}, which names no argument", op=body)
        i = names[name.data]
        if argument_role_and_name(body, i)[0] != "buffer":
            raise SpyreError(f"result #{j} updates argument #{i} '{name.data}', whose role is not 'buffer': "
                             "only a buffer is state a program writes in place", op=body)
        if i in updates.values():
            raise SpyreError(f"result #{j} updates argument '{name.data}' a second time", op=body)
        updates[j] = i
    return updates


def output_results(body: func.FuncOp) -> list[int]:
    """The results that are kernel arguments of their own (outputs), in order: all but updates."""
    updates = updated_arguments(body)
    return [j for j in range(len(body.function_type.outputs.data)) if j not in updates]


def fixed_argument_count(body: func.FuncOp) -> int:
    """How many kernel arguments the signature fixes: the arguments and the outputs."""
    return len(body.body.block.args) + len(output_results(body))


def output_arguments(body: func.FuncOp) -> dict[SSAValue, int]:
    """Each value ``body`` returns -> its kernel argument: the function's arguments come first,
    then one per output in order (a value returned twice keeps its first); an update's is the
    argument it updates."""
    ret = body.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    updates = updated_arguments(body)
    outputs: dict[SSAValue, int] = {}
    position = len(body.body.block.args)
    for j, value in enumerate(ret.arguments):
        if j in updates:
            outputs.setdefault(value, updates[j])
            continue
        outputs.setdefault(value, position)
        position += 1
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
    for j in output_results(body):
        claim(body.res_attrs, j, f"result #{j}", ("spyre.name",), result_name(body, j))


def argument_role_and_name(body: func.FuncOp, index: int) -> tuple[str, str]:
    """The manifest role and name of function argument ``index`` (``spyre.role``, default
    ``input``; ``spyre.name``, default ``arg<index>``)."""
    return (_string_attr(body.arg_attrs, index, "spyre.role") or "input",
            _string_attr(body.arg_attrs, index, "spyre.name") or f"arg{index}")


def argument_host_dtype(body: func.FuncOp, index: int) -> str | None:
    """The host dtype of input argument ``index`` held as flags (its ``spyre.host_dtype``), None
    when it has none; one on an argument that is not a float input is an error."""
    value = _string_attr(body.arg_attrs, index, HOST_DTYPE_ATTR)
    if value is None:
        return None
    arg = body.body.block.args[index]
    role, _ = argument_role_and_name(body, index)
    float_input = isinstance(arg.type, TensorType) and not isinstance(arg.type.get_element_type(), IntegerType)
    if role != "input" or not float_input:
        raise SpyreError(f"{describe_argument(arg)} has {HOST_DTYPE_ATTR} = \"{value}\": expected on a float input "
                         "(an integer or bool host tensor held as flags)", op=body)
    return value


def argument_range(body: func.FuncOp, index: int) -> tuple[int, int] | None:
    """The values ``[lo, hi)`` input argument ``index`` takes (its ``spyre.range``), None when it has
    none; a ``spyre.range`` that is not ``array<i64: lo, hi>`` with ``lo < hi`` on an integer
    input (or a float one with a ``spyre.host_dtype``) is an error."""
    attrs = body.arg_attrs
    value = attrs.data[index].data.get(RANGE_ATTR) if attrs is not None and index < len(attrs.data) else None
    if value is None:
        return None
    arg = body.body.block.args[index]
    values = value.get_values() if isinstance(value, DenseArrayBase) else ()
    role, _ = argument_role_and_name(body, index)
    integer = isinstance(arg.type, TensorType) and isinstance(arg.type.get_element_type(), IntegerType) \
        or argument_host_dtype(body, index) is not None
    if len(values) != 2 or not all(isinstance(v, int) for v in values) or values[0] >= values[1] \
            or role != "input" or not integer:
        raise SpyreError(f"{describe_argument(arg)} has {RANGE_ATTR} = {value}: expected array<i64: lo, hi> "
                         "with lo < hi on an integer input (or one held as flags)", op=body)
    return int(values[0]), int(values[1])


def result_name(body: func.FuncOp, index: int) -> str:
    """The manifest name of result ``index`` (``spyre.name``, default ``output<index>``)."""
    return _string_attr(body.res_attrs, index, "spyre.name") or f"output{index}"


def constant_name(index: int) -> str:
    """The manifest name of the constant kernel argument ``index``."""
    return f"fill_{index}"
