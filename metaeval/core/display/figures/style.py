"""The report figures' shared look (issue 13's readability rules): one colour-blind-safe palette (Okabe & Ito 2008),
dashes and marker symbols so that no line hides another, a diverging orange-white-blue scale centred at 0, every axis
titled, names as text, numbers in the report's one format (:mod:`metaeval.core.display.numbers`).

Names are text, never markup: plotly.js reads ``<a href>``, ``<b>``, ``<br>`` in the strings it draws, so every name
from the data goes through :func:`esc` (or :func:`wrap`, which escapes) before it reaches a label, a legend, a title
or a hover, and never into a hover template itself (a ``%{...}`` in a name would be read as a placeholder): names
reach the hover through ``customdata``.

Narrow screens: a figure's ``layout.meta.narrow`` holds the layout (and per-trace) changes for a figure narrower than
:data:`NARROW` pixels (legend in rows under the plot, title over lines), ``layout.meta.cells`` the changes by the
width of a heatmap's cells; ``metaeval/static/metaeval/report.js`` applies them when it draws. No Django.
"""
from __future__ import annotations

import copy
import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from metaeval.core.display.numbers import fmt_p

#: Okabe & Ito (2008): distinguishable with every common colour-vision deficiency; yellow last (weak on white)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "star", "cross", "x")
#: orange (negative) - white (0) - blue (positive), from the same palette
DIVERGING = [[0, "#D55E00"], [0.25, "#EBAE80"], [0.5, "#F7F7F7"], [0.75, "#7FB8D8"], [1, "#0072B2"]]
FONT = {"family": "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif", "size": 13, "color": "#1d2433"}
#: a figure narrower than this many pixels (a phone) gets its legend in rows under the plot
NARROW = 640
#: the hover's grey for reference lines and axis lines
GREY = "#8a93a6"
EMPTY = "No data for this figure."


def esc(text: object) -> str:
    """A name as plotly text: ``&``, ``<`` and ``>`` as entities, so that plotly draws them instead of reading tags."""
    return html.escape(str(text), quote=False)


_BREAKS = re.compile(r"(?<=[\s_\-/.])|(?<=[a-z0-9])(?=[A-Z])")


def lines(text: str, width: int) -> list[str]:
    """``text`` over lines of at most ``width`` characters, broken after spaces, ``_ - / .`` or between camel-case
    words (a part longer than ``width`` stays whole)."""
    if len(text) <= width:
        return [text]
    out: list[str] = []
    line = ""
    for part in (p for p in _BREAKS.split(text) if p):
        if line and len(line + part) > width:
            out.append(line)
            line = part
        else:
            line += part
    if line:
        out.append(line)
    return [item.strip() for item in out]


def wrap(name: object, width: int = 24) -> str:
    """A name as plotly text (escaped), a long one over lines of at most ``width`` characters."""
    return "<br>".join(esc(line) for line in lines(str(name), width))


def num(value: object) -> float | None:
    """A finite number as float, else None (plotly's gap)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def unique(values: Iterable[Any]) -> list[Any]:
    """The values in first-seen order, once each."""
    return list(dict.fromkeys(values))


def with_p(p: object) -> str:
    """A p-value after its coefficient: ``p = 0.042``, ``p < 0.001``."""
    text = fmt_p(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def colour(measures: Sequence[str], measure: str) -> str:
    """A measure's colour: its place among the report's measures in the palette."""
    index = measures.index(measure) if measure in measures else 0
    return PALETTE[index % len(PALETTE)]


def interval_bars(colour_: str, values: Sequence[float | None], lows: Sequence[float | None],
                  highs: Sequence[float | None]) -> dict[str, Any]:
    """Asymmetric whiskers from each value to its interval's ends (None where one is missing)."""
    return {"type": "data", "symmetric": False, "color": colour_, "thickness": 1.6, "width": 4,
            "array": [None if v is None or h is None else _short(h - v) for v, h in zip(values, highs, strict=True)],
            "arrayminus": [None if v is None or lo is None else _short(v - lo)
                           for v, lo in zip(values, lows, strict=True)]}


def _short(length: float) -> float:
    """A whisker's length to 12 significant digits (a difference of two floats carries digits no one can see)."""
    return float(f"{length:.12g}")


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def figure(traces: Sequence[Mapping[str, Any]], layout: Mapping[str, Any], *,
           narrow: Mapping[str, Any] | None = None, cells: Mapping[str, Any] | None = None) -> go.Figure:
    """A report figure: the traces and the layout with the report's look (font, white background, left title, axes
    with automatic margins, grid and line colours, title standoff); ``layout.meta.narrow`` as for a phone (legend in
    rows under the plot, taller by a row per named trace, title over lines of 34 characters), merged with ``narrow``
    (``layout`` and ``data``: changes of its own); ``cells``: changes by a heatmap's cell width (see report.js)."""
    full: dict[str, Any] = {
        "template": "none", "font": FONT, "paper_bgcolor": "#ffffff", "plot_bgcolor": "#ffffff",
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10, "pad": 4}, "height": 460,
        "hoverlabel": {"font": {"family": FONT["family"], "size": 12}},
    }
    _merge(full, layout)
    if isinstance(full.get("title"), dict):
        full["title"].update({"x": 0, "xanchor": "left", "xref": "container", "pad": {"l": 4}})
    for axis in ("xaxis", "yaxis"):
        if axis in full:
            full[axis] = {"gridcolor": "#e6e9ef", **full[axis], "automargin": True, "linecolor": GREY,
                          "showline": True, "title": {**full[axis].get("title", {}), "standoff": 10}}
    named = sum(1 for t in traces if t.get("showlegend", True) is not False and t.get("type") != "heatmap")
    title = (full.get("legend") or {}).get("title")
    heading = "<br>".join(lines(str((full.get("title") or {}).get("text") or ""), 34))
    small: dict[str, Any] = {
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "xref": "container", "y": 0, "yanchor": "bottom",
                   "yref": "container", **({"title": {"text": title["text"], "side": "top"}} if title else {})},
        "height": max(int(full.get("height") or 0), 460) + 22 * named,
        "title": {"text": heading}, "margin": {"t": 40 + 22 * len(heading.split("<br>"))},
    }
    meta: dict[str, Any] = {"narrow": {"layout": _merge(small, (narrow or {}).get("layout", {})),
                                       **({"data": narrow["data"]} if narrow and "data" in narrow else {})}}
    if cells:
        meta["cells"] = dict(cells)
    if not traces:
        meta["empty"] = EMPTY
    full["meta"] = meta
    return go.Figure(data=list(traces), layout=full)
