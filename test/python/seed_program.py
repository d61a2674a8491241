# The seed program of the tests on memory planning, as spyre IR text (no torch):
# `y = a + b; z = y * c` on fp16 inputs with named dims A, B.  Writes nothing.
"""The seed program ``y = a + b; z = y * c`` as spyre IR text, at any shape and with any hints."""

from __future__ import annotations


def seed_program(rows: int, cols: int, hints: str = "", returns_y: bool = False) -> str:
    """``@main(a, b, c)`` on ``tensor<rows x cols x f16>``, returning ``z`` (``y, z`` when ``returns_y``).

    ``hints`` is the text of a ``#spyre.hint`` list put on both ops (e.g.
    ``#spyre.hint<0, tiles = {A = 8}>``), as ``spyre-import`` writes it.
    """
    t = f"tensor<{rows}x{cols}xf16>"
    attrs = f" {{hints = [{hints}]}}" if hints else ""
    args = ", ".join(f'%{n}: {t} {{spyre.dims = [["A"], ["B"]], spyre.name = "{n}", spyre.role = "input"}}'
                     for n in "abc")
    results = ["y", "z"] if returns_y else ["z"]
    result_types = ", ".join(f'{t} {{spyre.name = "{v}"}}' for v in results)
    return (f"func.func @main({args}) -> ({result_types}) {{\n"
            f'  %y = spyre.pointwise "add" (%a, %b){attrs} : ({t}, {t}) -> {t}\n'
            f'  %z = spyre.pointwise "mul" (%y, %c){attrs} : ({t}, {t}) -> {t}\n'
            f"  func.return {', '.join('%' + v for v in results)} : {', '.join(t for _ in results)}\n"
            "}\n")
