# The timeline picture of an interpreter run: per core, which LX value holds
# which bytes over the executions, the usable LX line, and the HBM bytes of
# every execution.  Reads RunStats.events (recorded with
# ``execute(..., record_events=True)``); writes an SVG file (no dependency) or
# a PNG file (needs matplotlib).
"""Timeline of LX occupancy and HBM traffic.

The picture, top to bottom::

    title, run summary     executions, cores, LX peak, HBM totals
    loop iterations        (0, 0)   (0, 1)   ...   (shaded bands, one per iteration)
    lane "cores 0-31"      LX offset (0 at the bottom) x execution; one rectangle per
                           value, from the execution that writes it to the last that
                           reads it; dashed line at the usable LX
    HBM bar chart          bytes read (bottom) and written (top) per execution
    execution axis         index and op of every execution
    legend                 colour per LX value, HBM read and written

Cores whose LX occupancy is identical share one lane.  When the program uses
less than half of the usable LX, the LX axis is zoomed onto what it uses and
broken below the usable LX line (see :class:`LxAxis`).  The layout is built once
as a list of shapes; the SVG writer and the matplotlib writer only draw them.
Every shape a reader (or a test) looks for carries a ``class`` and ``data-*``
attributes in the SVG: ``column`` (one per execution), ``lane``, ``lx`` (a value's
live range), ``usable-lx``, ``hbm-read`` and ``hbm-written`` (bars, ``data-bytes``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from xml.etree import ElementTree

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.interpreter.stats import ExecutionEvent, RunStats
from spyre_mlir.optional import require

FORMATS = ("svg", "png")
"""File formats the timeline is written in, by file suffix."""

_VALUE_COLOURS = ("#e15759", "#59a14f", "#af7aa1", "#f28e2b", "#76b7b2", "#edc948", "#ff9da7", "#9c755f",
                  "#4e79a7", "#8cd17d", "#d37295", "#b6992d", "#499894", "#fabfd2", "#79706e", "#f1ce63",
                  "#a0cbe8", "#ffbe7d", "#d4a6c8", "#86bcb6")
"""Colours of LX values, in order of first appearance (repeating after 20 values)."""
_HBM_READ, _HBM_WRITTEN = "#3b5b7a", "#9fb7cc"
_USABLE_LX = "#c0392b"
_FONT = 11
_LEFT, _RIGHT, _TOP = 150, 20, 48
_LANE_HEIGHT, _LANE_GAP, _CHART_HEIGHT = 120, 16, 130
_AXIS_BREAK = 26
"""Pixels at the top of a lane above a broken LX axis, for the usable LX line."""


@dataclass(frozen=True)
class Rect:
    """A filled rectangle; ``y`` is its top edge (pixels, y grows downwards)."""

    x: float
    y: float
    w: float
    h: float
    fill: str
    cls: str = ""
    title: str = ""
    data: dict[str, str] = field(default_factory=dict)
    stroke: str = "none"


@dataclass(frozen=True)
class Line:
    """A straight line, dashed when ``dashed``."""

    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    cls: str = ""
    dashed: bool = False


@dataclass(frozen=True)
class Text:
    """Text whose baseline starts (``anchor`` start), centres or ends at (x, y); ``vertical``
    turns it to read bottom to top."""

    x: float
    y: float
    text: str
    anchor: str = "start"
    size: float = _FONT
    vertical: bool = False
    cls: str = ""


@dataclass
class Scene:
    """A picture as shapes in drawing order."""

    width: float
    height: float
    shapes: list[Rect | Line | Text] = field(default_factory=list)


@dataclass(frozen=True)
class LiveRange:
    """LX bytes [offset, offset + size) of one core holding ``value`` from execution
    ``first`` (its write) to ``last`` (its last read)."""

    value: str
    offset: int
    size: int
    first: int
    last: int


def timeline_format(path: str | Path) -> str:
    """The format of a timeline file from its suffix (``svg`` or ``png``), checked to be writable here."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise SpyreError(f"the timeline is written as .svg or .png, not '{Path(path).name}'", loc=str(path))
    if suffix == "png":
        require("matplotlib", "a .png timeline")
    return suffix


def write_timeline(stats: RunStats, path: str | Path, usable_lx: int, title: str) -> None:
    """Draw ``stats.events`` into ``path`` (format from its suffix, see :func:`timeline_format`).

    The run must have recorded its events (``execute(..., record_events=True)``).
    ``usable_lx`` is the LX bytes per core available to the program, drawn as a line.
    """
    fmt = timeline_format(path)
    scene = layout(stats.events, stats.cores, usable_lx, title)
    if fmt == "svg":
        Path(path).write_text(to_svg(scene))
    else:
        _write_png(scene, Path(path))


def live_ranges(events: Sequence[ExecutionEvent]) -> dict[int, list[LiveRange]]:
    """Per core, every LX value's bytes and the executions from its write to its last read."""
    spans: dict[tuple[int, int, int, int, str], int] = {}
    for event in events:
        for b in event.lx:
            key = (b.core, b.written_at, b.offset, b.size, b.value)
            spans[key] = max(spans.get(key, event.index), event.index)
    out: dict[int, list[LiveRange]] = {}
    for (core, first, offset, size, value), last in sorted(spans.items()):
        out.setdefault(core, []).append(LiveRange(value, offset, size, first, last))
    return out


def fold_cores(ranges: dict[int, list[LiveRange]], cores: int) -> list[tuple[list[int], list[LiveRange]]]:
    """Lanes: the cores with identical live ranges together, in order of their first core."""
    lanes: dict[tuple[LiveRange, ...], list[int]] = {}
    for core in range(cores):
        lanes.setdefault(tuple(ranges.get(core, ())), []).append(core)
    return sorted(((members, list(key)) for key, members in lanes.items()), key=lambda lane: lane[0][0])


def core_label(cores: Sequence[int]) -> str:
    """``core 3``, ``cores 0-31`` or ``cores 0-3, 8``."""
    runs = [[c for _, c in run] for _, run in groupby(enumerate(cores), key=lambda ic: ic[1] - ic[0])]
    text = ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)
    return f"core {text}" if len(cores) == 1 else f"cores {text}"


def human_bytes(n: int) -> str:
    """``512 B``, ``32 KiB``, ``1.5 MiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} B"


@dataclass(frozen=True)
class LxAxis:
    """Maps LX offsets to heights above a lane's bottom edge.

    Linear up to ``top`` bytes.  When the program uses less than half of the
    usable LX, ``top`` is a little above its peak (so its blocks stay readable)
    and the axis breaks: the usable LX line is drawn at the lane's top edge.
    """

    top: int
    usable: int
    plot_height: float
    """Pixels of the linear part."""

    @staticmethod
    def for_peak(peak: int, usable: int) -> LxAxis:
        """The axis of lanes whose highest LX byte is ``peak``."""
        top = next(n for k in range(64) for n in (1 << k, 3 << k >> 1) if n >= peak * 1.1)
        if top > usable // 2:
            return LxAxis(max(usable, peak), usable, _LANE_HEIGHT)
        return LxAxis(top, usable, _LANE_HEIGHT - _AXIS_BREAK)

    @property
    def broken(self) -> bool:
        return self.top < self.usable

    def height(self, offset: int) -> float:
        return offset * self.plot_height / self.top

    def usable_height(self) -> float:
        return _LANE_HEIGHT - 4 if self.broken else self.height(self.usable)


class _Layout:
    """Places the parts of the picture one below the other."""

    def __init__(self, events: Sequence[ExecutionEvent], cores: int, usable_lx: int):
        self.events, self.cores, self.usable_lx = events, cores, usable_lx
        self.column = min(48.0, max(12.0, 960 / max(1, len(events))))
        self.end = _LEFT + self.column * len(events)
        self.scene = Scene(self.end + _RIGHT, 0)
        self.colours: dict[str, str] = {}

    def x(self, index: int) -> float:
        return _LEFT + index * self.column

    def add(self, *shapes: Rect | Line | Text) -> None:
        self.scene.shapes.extend(shapes)

    def label(self, x: float, y: float, text: str, room: float, cls: str, below: bool) -> None:
        """``text`` centred on ``x`` next to the edge at ``y`` (below or above it): horizontal if it
        fits in ``room`` pixels, else vertical, hanging down from or rising up from the edge."""
        if _text_width(text) <= room:
            self.add(Text(x, y + _FONT if below else y, text, "middle", cls=cls))
        else:
            self.add(Text(x + _FONT * 0.35, y, text, "end" if below else "start", vertical=True, cls=cls))

    def side(self, top: float, bottom: float, name: str, detail: str, ticks: Iterable[tuple[float, str]]) -> None:
        """Left of a lane or chart: its name and detail at the top, tick labels by the axis."""
        self.add(Text(8, top + 44, name, cls="lane-label"), Text(8, top + 58, detail, size=_FONT - 1),
                 Text(_LEFT - 4, bottom, "0", "end", size=_FONT - 1))
        for y, text in ticks:
            self.add(Line(_LEFT - 3, y, _LEFT, y, "#555555"), Text(_LEFT - 6, y + 4, text, "end", size=_FONT - 1))

    def colour(self, value: str) -> str:
        if value not in self.colours:
            self.colours[value] = _VALUE_COLOURS[len(self.colours) % len(_VALUE_COLOURS)]
        return self.colours[value]

    def iterations(self) -> list[tuple[str, list[ExecutionEvent]]]:
        """Runs of consecutive executions in one loop iteration, with the iteration's label."""
        return [(f"({', '.join(map(str, it))})" if it else "", list(group))
                for it, group in groupby(self.events, key=lambda e: e.iteration)]

    def iteration_room(self) -> float:
        """Height above the lanes the iteration labels need."""
        return max([18.0] + [_text_width(text) + 10 for text, group in self.iterations()
                             if _text_width(text) > len(group) * self.column])

    # 1. Columns (one per execution, shaded by loop iteration) and the iteration labels above.
    def columns(self, top: float, bottom: float) -> None:
        shade = False
        for text, group in self.iterations():
            shade = not shade if text else False
            for e in group:
                where = f", loop iteration {text}" if text else ""
                self.add(Rect(self.x(e.index), top, self.column, bottom - top, "#f2f2f2" if shade else "#ffffff",
                              cls="column", title=f"execution {e.index}: {e.op} ({e.filename}){where}",
                              data={"index": str(e.index), "op": e.op, "sdsc-file": e.filename,
                                    "iteration": text}))
            if text:
                centre = (self.x(group[0].index) + self.x(group[-1].index) + self.column) / 2
                self.label(centre, top - 6, text, len(group) * self.column, "iteration", below=False)

    # 2. One lane per group of cores with the same LX occupancy.
    def lane(self, top: float, cores: list[int], ranges: list[LiveRange], axis: LxAxis) -> None:
        bottom = top + _LANE_HEIGHT
        peak = max((r.offset + r.size for r in ranges), default=0)
        usable_y = bottom - axis.usable_height()
        ticks = [(usable_y, f"usable {human_bytes(axis.usable)}")]
        if axis.broken:
            ticks.append((bottom - axis.plot_height, human_bytes(axis.top)))
        self.side(top, bottom, core_label(cores), f"peak {human_bytes(peak)} ({peak / axis.usable:.0%})", ticks)
        self.add(Rect(_LEFT, top, self.end - _LEFT, _LANE_HEIGHT, "none", cls="lane",
                      data={"cores": ",".join(map(str, cores))}, stroke="#555555"))
        for r in ranges:
            height = max(1.0, axis.height(r.size))
            self.add(Rect(self.x(r.first), bottom - axis.height(r.offset) - height,
                          self.column * (r.last - r.first + 1), height, self.colour(r.value), cls="lx",
                          stroke="#ffffff", title=f"{r.value}: LX bytes [{r.offset}, {r.offset + r.size}) "
                          f"({human_bytes(r.size)}), executions {r.first}-{r.last}",
                          data={"value": r.value, "offset": str(r.offset), "size": str(r.size),
                                "first": str(r.first), "last": str(r.last)}))
        if axis.broken:
            gap = bottom - axis.plot_height - 6
            self.add(Line(_LEFT, gap, self.end, gap, "#aaaaaa", dashed=True))
        self.add(Line(_LEFT, usable_y, self.end, usable_y, _USABLE_LX, cls="usable-lx", dashed=True))

    # 3. HBM bytes read and written per execution.
    def hbm_chart(self, top: float) -> None:
        bottom = top + _CHART_HEIGHT
        most = max((e.hbm_bytes_read + e.hbm_bytes_written for e in self.events), default=0)
        scale = _CHART_HEIGHT / most if most else 0.0
        self.side(top, bottom, "HBM bytes", "per execution", [(top, human_bytes(most))] if most else [])
        self.add(Line(_LEFT, bottom, self.end, bottom, "#555555"))
        inset = self.column * 0.15
        for e in self.events:
            y = bottom
            for cls, n, fill in (("hbm-read", e.hbm_bytes_read, _HBM_READ),
                                 ("hbm-written", e.hbm_bytes_written, _HBM_WRITTEN)):
                if n:
                    self.add(Rect(self.x(e.index) + inset, y - n * scale, self.column - 2 * inset, n * scale, fill,
                                  cls=cls, title=f"execution {e.index} ({e.op}): {human_bytes(n)} "
                                  f"{cls.removeprefix('hbm-')}", data={"index": str(e.index), "bytes": str(n)}))
                    y -= n * scale

    # 4. The execution axis: every index that fits, and the op of every execution.
    def axis(self, top: float) -> float:
        step = max(1, round(28 / self.column))
        for e in self.events:
            centre = self.x(e.index) + self.column / 2
            if e.index % step == 0:
                self.add(Text(centre, top + _FONT + 2, str(e.index), "middle", size=_FONT - 1))
            self.label(centre, top + _FONT + 8, e.op, self.column, "op-label", below=True)
        longest = max((_text_width(e.op) for e in self.events), default=0)
        return top + _FONT + 8 + (longest if longest > self.column else _FONT)

    # 5. Legend: a swatch per LX value and the HBM colours, in as many columns as fit.
    def legend(self, top: float) -> float:
        entries = [(_HBM_READ, "HBM read"), (_HBM_WRITTEN, "HBM written")]
        entries += [(colour, value) for value, colour in self.colours.items()]
        width = max(_text_width(text) for _, text in entries) + _FONT + 24
        per_row = max(1, int((self.end - _LEFT) // width))
        row_height = _FONT + 7
        for i, (colour, text) in enumerate(entries):
            x, y = _LEFT + (i % per_row) * width, top + (i // per_row) * row_height
            self.add(Rect(x, y - _FONT + 1, _FONT, _FONT, colour, cls="legend"), Text(x + _FONT + 6, y, text))
        return top + -(-len(entries) // per_row) * row_height


def _text_width(text: str, size: float = _FONT) -> float:
    """Estimated width in pixels of ``text`` at font size ``size``."""
    return len(text) * size * 0.6


def _right_edge(t: Text) -> float:
    if t.vertical:
        return t.x
    return t.x + {"start": 1.0, "middle": 0.5, "end": 0.0}[t.anchor] * _text_width(t.text, t.size)


def layout(events: Sequence[ExecutionEvent], cores: int, usable_lx: int, title: str) -> Scene:
    """The timeline of ``events`` on ``cores`` cores as shapes."""
    lay = _Layout(events, cores, usable_lx)
    lanes = fold_cores(live_ranges(events), cores)
    peak = max((r.offset + r.size for _, ranges in lanes for r in ranges), default=0)
    read = sum(e.hbm_bytes_read for e in events)
    written = sum(e.hbm_bytes_written for e in events)
    lay.add(Text(8, 20, title, size=_FONT + 3, cls="title"),
            Text(8, 38, f"{len(events)} executions on {cores} cores; LX peak {human_bytes(peak)} of "
                        f"{human_bytes(usable_lx)} usable per core; HBM read {human_bytes(read)}, "
                        f"written {human_bytes(written)}"))
    lanes_top = _TOP + lay.iteration_room()
    chart_top = lanes_top + len(lanes) * (_LANE_HEIGHT + _LANE_GAP)
    axis_top = chart_top + _CHART_HEIGHT
    lay.columns(lanes_top, axis_top)
    axis = LxAxis.for_peak(peak, usable_lx)
    for i, (members, ranges) in enumerate(lanes):
        lay.lane(lanes_top + i * (_LANE_HEIGHT + _LANE_GAP), members, ranges, axis)
    lay.hbm_chart(chart_top)
    legend_top = lay.axis(axis_top) + 24
    lay.scene.height = lay.legend(legend_top) + 10
    lay.scene.width = max([lay.scene.width] + [_right_edge(t) + _RIGHT for t in lay.scene.shapes
                                                if isinstance(t, Text)])
    return lay.scene


def to_svg(scene: Scene) -> str:
    """The scene as an SVG document."""
    svg = ElementTree.Element("svg", xmlns="http://www.w3.org/2000/svg", width=_num(scene.width),
                              height=_num(scene.height), viewBox=f"0 0 {_num(scene.width)} {_num(scene.height)}",
                              attrib={"font-family": "sans-serif", "font-size": str(_FONT)})
    ElementTree.SubElement(svg, "rect", width="100%", height="100%", fill="#ffffff")
    for shape in scene.shapes:
        if isinstance(shape, Rect):
            attrs = {"x": _num(shape.x), "y": _num(shape.y), "width": _num(shape.w), "height": _num(shape.h),
                     "fill": shape.fill, "stroke": shape.stroke,
                     **({"class": shape.cls} if shape.cls else {}),
                     **{f"data-{k}": v for k, v in shape.data.items()}}
            rect = ElementTree.SubElement(svg, "rect", attrs)
            if shape.title:
                ElementTree.SubElement(rect, "title").text = shape.title
        elif isinstance(shape, Line):
            attrs = {"x1": _num(shape.x1), "y1": _num(shape.y1), "x2": _num(shape.x2), "y2": _num(shape.y2),
                     "stroke": shape.stroke, **({"class": shape.cls} if shape.cls else {}),
                     **({"stroke-dasharray": "6 4"} if shape.dashed else {})}
            ElementTree.SubElement(svg, "line", attrs)
        else:
            attrs = {"x": _num(shape.x), "y": _num(shape.y), "text-anchor": shape.anchor,
                     "font-size": _num(shape.size), **({"class": shape.cls} if shape.cls else {}),
                     **({"transform": f"rotate(-90 {_num(shape.x)} {_num(shape.y)})"} if shape.vertical else {})}
            ElementTree.SubElement(svg, "text", attrs).text = shape.text
    ElementTree.indent(svg)
    return ElementTree.tostring(svg, encoding="unicode") + "\n"


def _num(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _write_png(scene: Scene, path: Path) -> None:
    """Draw the scene with matplotlib (Agg), one pixel per scene unit."""
    matplotlib = require("matplotlib", "a .png timeline")
    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.patches import Rectangle

    dpi = 100
    fig = pyplot.figure(figsize=(scene.width / dpi, scene.height / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, scene.width)
    ax.set_ylim(scene.height, 0)
    ax.axis("off")
    points = 72 / dpi
    for shape in scene.shapes:
        if isinstance(shape, Rect):
            ax.add_patch(Rectangle((shape.x, shape.y), shape.w, shape.h, linewidth=0.5,
                                   facecolor=shape.fill, edgecolor=shape.stroke))
        elif isinstance(shape, Line):
            ax.plot([shape.x1, shape.x2], [shape.y1, shape.y2], color=shape.stroke, linewidth=1,
                    linestyle="--" if shape.dashed else "-")
        else:
            ax.text(shape.x, shape.y, shape.text, fontsize=shape.size * points, va="baseline",
                    ha={"start": "left", "middle": "center", "end": "right"}[shape.anchor],
                    rotation=90 if shape.vertical else 0, rotation_mode="anchor")
    fig.savefig(path, dpi=dpi)
    pyplot.close(fig)
