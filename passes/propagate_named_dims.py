# spyre-propagate-named-dims: names every iteration dim of every compute op and
# every dim of every view and fill.  Reads the `spyre.dims` argument attributes
# of each func.func, the ComputeOp indexing maps, the view maps and the pieces of
# assemblies (tensor.empty filled by tensor.insert_slice, spyre_mlir.analysis.assembly); writes only
# the `dims` property of compute ops (per iteration dim), `spyre.view` and
# `spyre.fill` (per result dim).  Warns, and goes on, where names conflict.
"""Named-dimension propagation (seed 002, "propagate_named_dims"; DESIGN §4 stage 1).

Before::

    func.func @f(%x: tensor<16384xf16> {spyre.dims = [["M", "K"]]},
                 %y: tensor<256x128xf16> {spyre.dims = [["K"], ["N"]]}) {
      %0 = spyre.view %x affine_map<(d0, d1) -> (((d0 * 256) + d1))> : ... -> tensor<64x256xf16>
      %1 = spyre.matmul (%0, %y) : ...

After::

      %0 = spyre.view %x affine_map<...> {dims = [["M"], ["K"]]} : ...
      %1 = spyre.matmul (%0, %y) {dims = [["M"], ["N"], ["K"]]} : ...

Rules, in the order the analysis applies them:

1. Arguments carry the names of their ``spyre.dims`` attribute, one list per dim
   (a flattened dim carries several).
2. A compute op's iteration dim ``i`` takes the names of operand dim ``j``
   wherever that operand's indexing map result ``j`` is exactly ``d_i``
   (broadcast and constant results give nothing).  Operands that disagree are
   warned about and the first operand's names are kept; for a contracted
   (reduction) dim this is the matmul rule ``x_names[-n:] == y_names[:n]``.
   The result's dims take the names of the iteration dims its map reads.
3. A view's map (result -> source coordinates) links source and result dims;
   each connected group of them is a split, a merge, a one-to-one (permute,
   slice) or a new/dropped dim (expand, select).  The group's names, outermost
   first, are distributed over its result dims by :func:`distribute_names`.
4. An assembly (``torch.cat``: a ``tensor.empty`` filled piece by piece) takes,
   along each dim its pieces span whole, the names of its first piece that has
   user-derived ones (:func:`assembled_dim_names`); the dims pieces are laid
   side by side along keep generated names.
5. Dims no name reaches get a generated name (below), except value dims of
   extent 1, which may stay unnamed (as the importer leaves them).
6. Two iteration dims of one op never share names: the names an earlier dim of
   the op took are no candidates for a later one, which takes another operand's
   or, with none, a generated name.  Attention's
   scores ``q @ k^T`` read the query rows and the key rows both from the
   sequence dim of the input ids; the key rows get a name of their own, so that
   a loop can divide the query rows alone (one loop for both would visit only
   the tiles where they are equal).

Generated names start with ``%`` and derived names contain ``/`` or ``%``, so
neither can equal a user name (``declare_tensor_dim`` takes identifiers):

* ``%<arg>.<d>``: dim ``d`` of the function argument ``<arg>`` (its
  ``spyre.name``, else its SSA name, else ``arg<i>``) when it has no names;
* ``%<k>.<d>``: dim ``d`` of the ``k``-th op of the function (walk order, from
  0): a result dim of a view or fill that no name reaches, or an iteration dim
  of a compute op that no operand names (but as an earlier dim of the op);
* ``<name>/<s>``, ``<name>/<s>%<e>``, ``<name>%<e>``: the part
  ``(name floordiv s) mod e`` of a name split over several dims by a view
  (``D`` of extent 128 viewed as ``[2, 64]`` gives ``D/64`` and ``D%64``).

A generated name (one starting with ``%``) is a placeholder: a user-derived
name for the same dim wins over it, and placeholders never cause warnings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass

from spyre_mlir.analysis.assembly import assembly_of
from spyre_mlir.analysis.names import DimNames, Names, dims_attr, result_dim_names
from spyre_mlir.diagnostics import emit_warning
from spyre_mlir.dialects.spyre import ComputeOp, FillOp, ViewOp

ARG_DIMS_ATTR = "spyre.dims"
ARG_NAME_ATTR = "spyre.name"
GENERATED_PREFIX = "%"


def is_placeholder(names: Names) -> bool:
    """True for a non-empty list of generated names only."""
    return bool(names) and all(n.startswith(GENERATED_PREFIX) for n in names)


def format_names(names: Names) -> str:
    """``names`` as in the IR: ``["C", "D"]``."""
    return "[" + ", ".join(f'"{n}"' for n in names) + "]"


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


# --------------------------------------------------------------------------
# Distributing a group's names over the dims of a view
# --------------------------------------------------------------------------


def name_extents(names: Names, total: int, known: Mapping[str, int]) -> list[int] | None:
    """The extent of each name when ``known`` determines them all, else None.

    One unknown extent is inferred from ``total``, the product of all of them.
    Extents that cannot multiply to ``total`` also give None.
    """
    unknown = [i for i, n in enumerate(names) if n not in known]
    sizes = [known.get(n, 1) for n in names]
    rest, remainder = divmod(total, math.prod(sizes))
    if len(unknown) > 1 or remainder or (not unknown and rest != 1):
        return None
    if unknown:
        sizes[unknown[0]] = rest
    return sizes


def part_name(name: str, stride: int, extent: int, total: int) -> str:
    """The name of the part ``(name floordiv stride) mod extent`` of a name of extent ``total``."""
    if stride == 1:
        return f"{name}%{extent}"
    if stride * extent == total:
        return f"{name}/{stride}"
    return f"{name}/{stride}%{extent}"


def _runs(sizes: Sequence[int], extents: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Pair runs of names and of dims whose extents multiply to the same value.

    Extent-1 names and dims are left out; the two products must be equal.
    """
    names = [i for i, s in enumerate(sizes) if s != 1]
    dims = [d for d, e in enumerate(extents) if e != 1]
    runs: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(names) and j < len(dims):
        run_names, run_dims = [names[i]], [dims[j]]
        product_names, product_dims = sizes[names[i]], extents[dims[j]]
        i, j = i + 1, j + 1
        while product_names != product_dims:
            if product_names < product_dims:
                run_names.append(names[i])
                product_names *= sizes[names[i]]
                i += 1
            else:
                run_dims.append(dims[j])
                product_dims *= extents[dims[j]]
                j += 1
        runs.append((run_names, run_dims))
    assert i == len(names) and j == len(dims), (sizes, extents)
    return runs


def _distribute_by_extent(names: Names, sizes: Sequence[int],
                          extents: Sequence[int]) -> list[Names] | None:
    """Names per dim when every name's extent is known; None if names and dims interleave."""
    out: list[Names] = [()] * len(extents)
    for run_names, run_dims in _runs(sizes, extents):
        if len(run_dims) == 1:
            out[run_dims[0]] = tuple(names[i] for i in run_names)
        elif len(run_names) == 1:
            (i,) = run_names
            stride = sizes[i]
            for d in run_dims:
                stride //= extents[d]
                out[d] = (part_name(names[i], stride, extents[d], sizes[i]),)
        else:
            return None
    return out


def distribute_names(names: Names, extents: Sequence[int], known: Mapping[str, int]) -> list[Names] | None:
    """Distribute a view group's names (outermost first) over its result dims.

    - one result dim takes all the names (a merge, a permute, a slice);
    - when the names' extents are known (``known``, or one inferred from the
      product of ``extents``), runs of names and dims with equal products pair
      up: one name per dim, several names on one merged dim, or one name split
      into parts named by :func:`part_name`;
    - otherwise, as many names as dims of extent > 1 go one each, in order.

    Extent-1 dims take no name.  Returns None when the names cannot be
    distributed (interleaved extents, or too few or too many names).

    >>> distribute_names(("M", "K"), [64, 256], {})
    [('M',), ('K',)]
    >>> distribute_names(("D",), [2, 64], {})
    [('D/64',), ('D%64',)]
    """
    if len(extents) == 1:
        return [names]
    if not names:
        return [()] * len(extents)
    sizes = name_extents(names, math.prod(extents), known)
    if sizes is not None:
        return _distribute_by_extent(names, sizes, extents)
    big = [d for d, e in enumerate(extents) if e != 1]
    if len(names) != len(big):
        return None
    out: list[Names] = [()] * len(extents)
    for name, d in zip(names, big):
        out[d] = (name,)
    return out


def view_groups(view_map: AffineMap, result_shape: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Groups of (source dims, result dims) that the view map links, in source order.

    Source dim ``s`` and result dim ``r`` are linked when ``r`` (of extent > 1)
    occurs in the map's result ``s``.  A source dim read at a constant forms a
    group with no result dims (dropped); a result dim no source reads forms one
    with no source dims (new).
    """
    parent = list(range(len(view_map.results) + len(result_shape)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    offset = len(view_map.results)
    for s, expr in enumerate(view_map.results):
        for r in expr.used_dims():
            if result_shape[r] != 1:
                parent[find(offset + r)] = find(s)
    groups: dict[int, tuple[list[int], list[int]]] = {}
    for node in range(len(parent)):
        sources, results = groups.setdefault(find(node), ([], []))
        (sources if node < offset else results).append(node if node < offset else node - offset)
    return list(groups.values())


def view_dim_names(view_map: AffineMap, source_shape: Sequence[int], result_shape: Sequence[int],
                   source_names: DimNames, known: Mapping[str, int]) -> tuple[list[Names], list[str]]:
    """Names per result dim of a view, and a message per group whose names could not be distributed.

    Dims that no name reaches (new dims, groups in the messages) get ``()``.

    >>> from spyre_mlir.importer.views import reshape_map
    >>> view_dim_names(reshape_map([16384], [64, 256]), [16384], [64, 256], (("M", "K"),), {})
    ([('M',), ('K',)], [])
    """
    out: list[Names] = [()] * len(result_shape)
    problems: list[str] = []
    for sources, results in view_groups(view_map, result_shape):
        names = tuple(n for s in sources for n in source_names[s])
        if not results or not names:
            continue
        extents = [result_shape[r] for r in results]
        reshaped = math.prod(source_shape[s] for s in sources) == math.prod(extents)
        parts = distribute_names(names, extents, known) if reshaped or len(results) == 1 else None
        if parts is None:
            problems.append(f"cannot distribute the names {format_names(names)} of source dims {sources} "
                            f"(extents {[source_shape[s] for s in sources]}) over result dims "
                            f"{results} (extents {extents})")
            continue
        for r, part in zip(results, parts):
            out[r] = part
    return out, problems


# --------------------------------------------------------------------------
# Compute ops: names per iteration dim from the operands
# --------------------------------------------------------------------------


def _operand_candidates(op: ComputeOp, operand_names: Sequence[DimNames]) -> list[list[tuple[int, Names]]]:
    """Per iteration dim, the (operand, names) pairs whose map reads it as a plain ``d_i``."""
    maps = op.get_indexing_maps()
    found: list[list[tuple[int, Names]]] = [[] for _ in op.get_iteration_space()]
    for j, (m, names) in enumerate(zip(maps, operand_names)):
        for expr, dim_names in zip(m.results, names):
            if isinstance(expr, AffineDimExpr) and dim_names:
                found[expr.position].append((j, dim_names))
    return found


def _choose(op: ComputeOp, dim: int, candidates: list[tuple[int, Names]]) -> Names:
    """The names of one iteration dim: the first user-derived candidate, else the first placeholder.

    User-derived candidates that disagree with the chosen one are warned about.
    """
    if not candidates:
        return ()
    user = [c for c in candidates if not is_placeholder(c[1])]
    if not user:
        return candidates[0][1]
    first, chosen = user[0]
    for j, names in user[1:]:
        if names != chosen:
            what, rule = (("contracted iteration dim", "; contracted dims must carry the same names "
                           "(x_names[-n:] == y_names[:n])") if dim in op.reduction_dims()
                          else ("iteration dim", ""))
            emit_warning(f"{what} {dim}: operand #{first} names it {format_names(chosen)} but operand "
                         f"#{j} names it {format_names(names)}{rule}; keeping {format_names(chosen)}", op=op)
    return chosen


def compute_dim_names(op: ComputeOp, operand_names: Sequence[DimNames]) -> list[Names]:
    """Names per iteration dim of ``op`` (``()`` where no operand names it other than as an
    earlier iteration dim of ``op``: rule 6); warns on conflicts."""
    chosen: list[Names] = []
    for i, candidates in enumerate(_operand_candidates(op, operand_names)):
        chosen.append(_choose(op, i, [c for c in candidates if c[1] not in chosen]))
    return chosen


# --------------------------------------------------------------------------
# The analysis
# --------------------------------------------------------------------------


@dataclass
class NamedDims:
    """What :func:`propagate_named_dims` found for one function."""

    values: dict[SSAValue, DimNames] = field(default_factory=dict)
    """Names per dim of every argument and every spyre op result."""
    ops: dict[Operation, DimNames] = field(default_factory=dict)
    """The ``dims`` to write: per iteration dim of a compute op, per result dim of a view or fill."""
    extents: dict[str, int] = field(default_factory=dict)
    """The extent of each name seen alone on a dim (or inferred on a merged one)."""

    def of(self, value: SSAValue) -> DimNames:
        """Names per dim of ``value``; values this pass does not name count as unnamed."""
        return self.values.get(value, ((),) * len(_shape(value)))

    def record(self, value: SSAValue, names: DimNames) -> None:
        """Record ``value``'s names and learn the extents they determine."""
        self.values[value] = names
        for dim_names, extent in zip(names, _shape(value)):
            sizes = name_extents(dim_names, extent, self.extents) if dim_names else None
            for name, size in zip(dim_names, sizes or ()):
                self.extents.setdefault(name, size)


def _fill_generated(names: Sequence[Names], label: str, shape: Sequence[int] | None) -> DimNames:
    """``names`` with ``%<label>.<d>`` for each unnamed dim (of extent > 1 when ``shape`` is given)."""
    return tuple(n or ((f"{GENERATED_PREFIX}{label}.{d}",) if shape is None or shape[d] != 1 else ())
                 for d, n in enumerate(names))


def _attr_names(attr: Attribute) -> DimNames | None:
    """The names of a ``spyre.dims`` attribute, None if it is not a list of lists of strings."""
    if not isinstance(attr, ArrayAttr):
        return None
    names = []
    for dim in attr.data:
        if not isinstance(dim, ArrayAttr) or not all(isinstance(n, StringAttr) for n in dim.data):
            return None
        names.append(tuple(n.data for n in dim.data))
    return tuple(names)


def argument_dim_names(func_op: FuncOp, index: int) -> DimNames:
    """The names of argument ``index`` from its ``spyre.dims``, generated where it names nothing."""
    arg = func_op.args[index]
    shape = _shape(arg)
    attrs = func_op.arg_attrs.data[index].data if func_op.arg_attrs is not None else {}
    label_attr = attrs.get(ARG_NAME_ATTR)
    label = label_attr.data if isinstance(label_attr, StringAttr) else arg.name_hint or f"arg{index}"
    names: DimNames = ((),) * len(shape)
    if ARG_DIMS_ATTR in attrs:
        given = _attr_names(attrs[ARG_DIMS_ATTR])
        if given is not None and len(given) == len(shape):
            names = given
        else:
            emit_warning(f"argument %{label}: {ARG_DIMS_ATTR} must be a list of name lists, one per dim "
                         f"of its rank-{len(shape)} type, got {attrs[ARG_DIMS_ATTR]}; generating names",
                         op=func_op)
    return _fill_generated(names, label, shape)


def propagate_named_dims(func_op: FuncOp) -> NamedDims:
    """Name every dim of ``func_op``'s spyre values and ops; the IR is not changed.

    Warnings (:func:`emit_warning`) report conflicting or undistributable names.
    """
    named = NamedDims()
    # 1. Arguments: their spyre.dims, generated names for the rest.
    for i, arg in enumerate(func_op.args):
        if isinstance(arg.type, TensorType):
            named.record(arg, argument_dim_names(func_op, i))
    # 2. Ops in program order: compute ops from their operands, views from their source.
    for k, op in enumerate(func_op.body.walk()):
        if isinstance(op, ComputeOp):
            iteration = _fill_generated(compute_dim_names(op, [named.of(v) for v in op.inputs]), str(k), None)
            named.ops[op] = iteration
            named.record(op.result, result_dim_names(op, iteration))
        elif isinstance(op, ViewOp):
            result_shape = _shape(op.result)
            names, problems = view_dim_names(op.map.data, _shape(op.source), result_shape,
                                             named.of(op.source), named.extents)
            for problem in problems:
                emit_warning(f"{problem}; generating names", op=op)
            named.ops[op] = _fill_generated(names, str(k), result_shape)
            named.record(op.result, named.ops[op])
        elif isinstance(op, FillOp):
            result_shape = _shape(op.result)
            named.ops[op] = _fill_generated([()] * len(result_shape), str(k), result_shape)
            named.record(op.result, named.ops[op])
        elif isinstance(op, tensor.EmptyOp) and assembly_of(op) is not None:
            shape = _shape(op.tensor)
            named.record(op.tensor, _fill_generated([()] * len(shape), str(k), shape))
        elif isinstance(op, tensor.InsertSliceOp) and op.dest in named.values:
            named.record(op.result, assembled_dim_names(named.of(op.dest), named.of(op.source),
                                                        _shape(op.dest), _shape(op.source)))
    return named


def assembled_dim_names(full: DimNames, piece: DimNames, full_shape: Sequence[int],
                        piece_shape: Sequence[int]) -> DimNames:
    """The names of an assembly (spyre_mlir.analysis.assembly) after one more piece: along each dim the
    piece spans whole, the piece's names unless the buffer has user-derived ones already; along
    the dims pieces are laid side by side, the buffer's."""
    return tuple(p if n == m and p and (not f or is_placeholder(f)) else f
                 for f, p, n, m in zip(full, piece, full_shape, piece_shape))


def write_named_dims(named: NamedDims) -> None:
    """Set the ``dims`` property of every op :func:`propagate_named_dims` named (replacing old ones)."""
    for op, names in named.ops.items():
        op.properties["dims"] = dims_attr(names)


@dataclass(frozen=True)
class PropagateNamedDimsPass(ModulePass):
    """Propagate dimension names from function arguments to every compute op, view and fill.

    Writes ``dims`` only; re-running recomputes them.  No upstream counterpart.
    """

    name = "spyre-propagate-named-dims"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func_op in op.walk():
            if isinstance(func_op, FuncOp) and func_op.body.blocks:
                write_named_dims(propagate_named_dims(func_op))
