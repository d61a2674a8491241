# Stick drivers of spyre-stickify: which iteration dim steps a storage's stick
# coordinate, and when a read of it fits an op's rule.  Reads coordinates in the
# normal form of spyre_mlir.analysis.views; writes no IR.
"""Stick drivers: the iteration dim that drives a stick coordinate, and what fits.

A read of a storage sticked on a dim fits an op that needs its stick driven by
an iteration dim when that dim drives the read's stick coordinate (and splits no
stick it shares with another dim), or when the coordinate is a constant (a
broadcast).
"""

from __future__ import annotations

from collections.abc import Sequence

from spyre_mlir.analysis.linear import Linear
from spyre_mlir.analysis.views import Dim, Mod, atoms

BROADCAST = -1
"""The driver of a constant stick coordinate: any stick fits."""


def stick_driver(coord: Linear) -> int | None:
    """The iteration dim that drives ``coord`` (:data:`BROADCAST` for a constant, None if none).

    The driver is the one term with coefficient 1 that is a dim or ``dim mod c``
    (co-simplification turns the latter into a dim of its own).
    """
    if not coord.terms:
        return BROADCAST
    units = []
    for atom, k in coord.terms:
        if k != 1:
            continue
        if isinstance(atom, Dim):
            units.append(atom.pos)
        elif isinstance(atom, Mod) and len(atom.arg.terms) == 1 and atom.arg.terms[0][1] == 1 \
                and isinstance(atom.arg.terms[0][0], Dim) and not atom.arg.const:
            units.append(atom.arg.terms[0][0].pos)
    return units[0] if len(units) == 1 else None


def dims_driven_by(coords: Sequence[Linear], driver: int) -> list[int]:
    """The tensor dims whose coordinate ``driver`` drives."""
    return [j for j, c in enumerate(coords) if stick_driver(c) == driver]


def splits_stick(coord: Linear, elems_per_stick: int) -> bool:
    """True when ``coord``'s driver steps inside sticks it shares with another dim: a term whose
    coefficient is not a whole number of sticks (``h * 32 + d`` over sticks of 64, a head of 32
    elements in half a stick), or a driver ``k mod c`` that a reader splits into ``k = c * h + d``
    with ``c`` not a whole number of sticks (heads merged back into one dim).  No layout label
    describes such a stick coordinate."""
    return stick_driver(coord) not in (None, BROADCAST) and any(
        k % elems_per_stick if k != 1 else isinstance(atom, Mod) and atom.divisor % elems_per_stick
        for atom, k in coord.terms)


def nested_dims(coords: Sequence[Linear]) -> set[int]:
    """The iteration dims that share a coordinate of ``coords`` with another term (``h`` and ``d``
    of ``h * 32 + d``)."""
    return {atom.pos for coord in coords if len(coord.terms) > 1
            for atom in atoms(coord) if isinstance(atom, Dim)}


def fits(coords: Sequence[Linear], stick: int | None, required: int, elems_per_stick: int) -> bool:
    """True when a read of a storage sticked on ``stick`` (``elems_per_stick`` to a stick) at
    ``coords`` serves an op that needs its stick driven by ``required``.

    A stick coordinate that :func:`splits_stick` fits no op.  A constant one is a broadcast,
    which fits, unless ``required`` drives another coordinate of the read: then the read walks
    ``required`` over sticks that hold one element each (a stick reduction's sparse result read
    densely), which no layout label describes.
    """
    driver = BROADCAST if stick is None else stick_driver(coords[stick])
    if driver == required:
        return not splits_stick(coords[stick], elems_per_stick)
    return driver == BROADCAST and not any(
        isinstance(atom, Dim) and atom.pos == required
        for j, coord in enumerate(coords) if j != stick for atom in atoms(coord))


def dim_order(rank: int, stick: int | None) -> tuple[int, ...]:
    """The dim order that sticks ``stick``: the other dims in order, then ``stick``."""
    if stick is None:
        return ()
    return (*(d for d in range(rank) if d != stick), stick)


def driven_stick(coords: Sequence[Linear], source_stick: int | None, rank: int) -> int:
    """The dim of a view of ``rank`` dims that drives its source's stick coordinate
    ``coords[source_stick]``; the innermost dim when none does."""
    driver = BROADCAST if source_stick is None else stick_driver(coords[source_stick])
    return rank - 1 if driver in (None, BROADCAST) else driver
