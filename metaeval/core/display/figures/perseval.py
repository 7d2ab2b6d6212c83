"""The PerSEval report's own figures: the leaderboard (Table 1), the correlation heatmap (Table 2) and the β
ablation (Figure 3) per coefficient, rank stability and rater agreement. Pure functions of the report document."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from metaeval.core.display.figures.style import (
    DASHES,
    DIVERGING,
    GREY,
    PALETTE,
    SYMBOLS,
    colour,
    esc,
    figure,
    interval_bars,
    num,
    unique,
    with_p,
    wrap,
)
from metaeval.core.display.numbers import MISSING, fmt_number
from metaeval.core.display.page import figure_texts

AUTHORS = "authors' code"


class Words:
    """The names the figures write (:func:`metaeval.core.display.figure_texts`): measures, coefficients, flags."""

    def __init__(self, report: Mapping[str, Any]) -> None:
        self.texts = figure_texts(report)
        self.measure_names: dict[str, str] = self.texts["measures"]
        self.measures = list(self.measure_names)

    def label(self, measure: str) -> str:
        return esc(self.measure_names.get(measure, measure))

    def colour(self, measure: str) -> str:
        return colour(self.measures, measure)

    def method(self, method: str) -> str:
        return str(self.texts["methods"].get(method, method))


def leaderboard(report: Mapping[str, Any], words: Words) -> go.Figure:
    """PerSEval per system (rows, best first by the first measure) and measure (markers), bootstrap whiskers."""
    board = list(report.get("leaderboard") or [])
    measures = unique(r["measure"] for r in board)
    systems = unique(r["system"] for r in board)
    first = {r["system"]: num(r.get("value")) for r in board if measures and r["measure"] == measures[0]}
    systems.sort(key=lambda s: math.inf if first.get(s) is None else -first[s])  # type: ignore[operator]
    lo = hi = 0.0
    for r in board:
        for value in (num(r.get("value")), num(r.get("low")), num(r.get("high"))):
            if value is not None:
                lo, hi = min(lo, value), max(hi, value)
    hi = max(hi, lo + 0.05)
    pad = 0.03 * (hi - lo)
    names = [wrap(s) for s in systems]
    cell = {(r["system"], r["measure"]): r for r in board}
    traces = []
    for i, measure in enumerate(measures):
        rows = [cell.get((s, measure), {}) for s in systems]
        has_ci = any(r.get("low") is not None for r in rows)
        values = [num(r.get("value")) for r in rows]
        trace: dict[str, Any] = {
            "type": "scatter", "mode": "markers", "orientation": "h", "name": words.label(measure), "y": names,
            "x": values,
            "marker": {"color": words.colour(measure), "symbol": SYMBOLS[i % len(SYMBOLS)], "size": 10,
                       "line": {"color": "#ffffff", "width": 1}},
            "customdata": [[esc(s), fmt_number(r.get("value")), fmt_number(r.get("low")), fmt_number(r.get("high"))]
                           for s, r in zip(systems, rows, strict=True)],
            "hovertemplate": f"<b>%{{customdata[0]}}</b><br>{words.label(measure)}: %{{customdata[1]}}"
                             + ("<br>interval %{customdata[2]} to %{customdata[3]}" if has_ci else "")
                             + "<extra></extra>",
        }
        if has_ci:
            trace["error_x"] = interval_bars(words.colour(measure), values, [num(r.get("low")) for r in rows],
                                             [num(r.get("high")) for r in rows])
        traces.append(trace)
    name = report.get("leaderboard_label") or "PerSEval"
    return figure(traces, {
        "title": {"text": f"{name} per system"}, "scattermode": "group", "scattergap": 0.35,
        "height": max(360, 150 + len(systems) * max(30, 12 * len(measures))),
        "xaxis": {"title": {"text": f"{name} (0 = not personalised; higher is better)"}, "range": [lo - pad, hi + pad],
                  "zeroline": True, "zerolinecolor": GREY, "zerolinewidth": 1.5},
        "yaxis": {"title": {"text": "System"}, "type": "category", "autorange": "reversed", "categoryorder": "array",
                  "categoryarray": names, "showgrid": True},
        "legend": {"title": {"text": "Measure"}, "traceorder": "normal"},
    }, narrow={"layout": {"xaxis": {"title": {"text": name}}}})


def _flip(matrix: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return [list(column) for column in zip(*matrix, strict=True)]


def heatmap(report: Mapping[str, Any], words: Words, method: str, *, transposed: bool = False) -> go.Figure:
    """Each automatic measure (across) against each HJ measure (down) for one coefficient, the coefficient, its
    interval and p-value written in each cell (only the coefficient in narrow cells: ``meta.cells``); ``transposed``:
    the automatic measures down (a phone, when they outnumber the HJ measures)."""
    cells = [c for c in report.get("correlations") or [] if c.get("method") == method]
    if not cells:
        return figure([], {})
    autos = unique(c["auto_measure"] for c in cells)
    humans = unique(c["hj_measure"] for c in cells)
    flags = (words.texts.get("flags") or {}).get(method) or {}
    found = {(c["auto_measure"], c["hj_measure"]): c for c in cells}
    z, text, short, custom = [], [], [], []
    for h in humans:
        zr, tr, sr, cr = [], [], [], []
        for a in autos:
            c = found.get((a, h))
            r = num(c.get("r")) if c else None
            zr.append(r)
            if not c:
                tr.append("")
                sr.append("")
                cr.append(["", "", "", "", "", "", words.label(a), words.label(h)])
                continue
            warn = flags.get(f"{a} | {h}") or []
            head = ("undefined" if r is None else f"<b>{fmt_number(r)}</b>") + (" ⚠" if warn else "")
            ci = f"[{fmt_number(c.get('low'))}, {fmt_number(c.get('high'))}]" if c.get("low") is not None else ""
            tr.append(head + (f"<br>{ci}" if ci else "") + "<br>" + with_p(c.get("p")))
            sr.append(head)
            cr.append([fmt_number(r), ci or MISSING, with_p(c.get("p")), str(c.get("n")), c.get("strength") or MISSING,
                       f"<br>⚠ {', '.join(warn)}" if warn else "", words.label(a), words.label(h)])
        z.append(zr)
        text.append(tr)
        short.append(sr)
        custom.append(cr)
    name = words.method(method)
    x_title, y_title, xs, ys = "Automatic measure (PerSEval-X)", "Human judgment (HJ-Y)", autos, humans
    if transposed:
        z, text, short, custom = _flip(z), _flip(text), _flip(short), _flip(custom)
        x_title, y_title, xs, ys = "Human judgment (HJ-Y)", "Automatic measure (X)", humans, autos
    trace = {
        "type": "heatmap", "x": [words.label(m) for m in xs], "y": [words.label(m) for m in ys], "z": z, "text": text,
        "texttemplate": "%{text}", "textfont": {"size": 12}, "customdata": custom, "zmin": -1, "zmax": 1,
        "colorscale": DIVERGING, "xgap": 3, "ygap": 3,
        "colorbar": {"title": {"text": name}, "tickvals": [-1, -0.5, 0, 0.5, 1],
                     "ticktext": ["-1", "-0.5", "0", "0.5", "1"], "outlinewidth": 0, "thickness": 14},
        "hovertemplate": f"<b>%{{customdata[6]}}</b> vs <b>%{{customdata[7]}}</b><br>{name} = %{{customdata[0]}} "
                         "%{customdata[1]}<br>%{customdata[2]}, n = %{customdata[3]} systems<br>strength: "
                         "%{customdata[4]}%{customdata[5]}<extra></extra>",
    }
    # the cells' width decides what they show: below 95 px the coefficient alone (interval and p in the hover and
    # the grid table), below 130 px a smaller font
    compact = {"below": 95, "data": [{"text": short, "textfont": {"size": 10}}],
               "layout": {"height": max(300, 170 + 60 * len(ys))}}
    return figure([trace], {
        "title": {"text": f"Correlation with human judgment · {name}"}, "height": max(300, 170 + 95 * len(ys)),
        "xaxis": {"title": {"text": x_title}, "type": "category", "showgrid": False},
        "yaxis": {"title": {"text": y_title}, "type": "category", "autorange": "reversed", "showgrid": False},
    }, cells={"across": len(xs), "reserve": 260,
              "steps": [compact, {"below": 130, "data": [{"textfont": {"size": 11}}]}]})


def beta(report: Mapping[str, Any], words: Words, method: str) -> go.Figure:
    """The coefficient against β, one line per (automatic, HJ) pair; the widest line and largest marker first, so
    lines on top of each other show as nested stripes."""
    rows_all = list(report.get("beta_ablation") or [])
    pairs = unique((r["auto_measure"], r["hj_measure"]) for r in rows_all)
    humans = unique(r["hj_measure"] for r in rows_all)
    name = words.method(method)
    traces = []
    for i, (auto, human) in enumerate(pairs):
        rows = [r for r in rows_all if r["auto_measure"] == auto and r["hj_measure"] == human]
        pair = f"{words.label(auto)} vs {words.label(human)}"
        traces.append({
            "type": "scatter", "mode": "lines+markers", "name": pair, "x": [num(r.get("beta")) for r in rows],
            "y": [num(r.get(method)) for r in rows],
            "line": {"color": words.colour(auto), "dash": DASHES[(i + humans.index(human)) % len(DASHES)],
                     "width": max(5 - 0.7 * i, 1.5)},
            "marker": {"symbol": SYMBOLS[i % len(SYMBOLS)], "size": max(12 - 1.5 * i, 6), "color": words.colour(auto),
                       "line": {"color": "#ffffff", "width": 1}},
            "customdata": [fmt_number(r.get(method)) for r in rows],
            "hovertemplate": f"{pair}<br>β = %{{x}}: {name} = %{{customdata}}<extra></extra>",
        })
    return figure(traces, {
        "title": {"text": f"β ablation · {name}"},
        "xaxis": {"title": {"text": "β (exponent of the EDP penalty)"}, "dtick": 0.1},
        "yaxis": {"title": {"text": f"{name} with HJ"}}, "legend": {"title": {"text": "Automatic vs HJ measure"}},
    })


def stability(report: Mapping[str, Any], words: Words) -> go.Figure:
    """ε-rank stability per share of the data, one line per measure and definition: the paper's a wide pale band,
    the authors' code's a thin dashed line in full colour on top of it."""
    stab = list(report.get("stability") or [])
    traces = []
    for measure, definition in unique((r["measure"], r["definition"]) for r in stab):
        paper = definition == "paper"
        rows = [r for r in stab if r["measure"] == measure and r["definition"] == definition
                and r.get("stability") is not None]
        if not rows:
            continue
        index = words.measures.index(measure) if measure in words.measures else 0
        symbol = SYMBOLS[index % len(SYMBOLS)]
        tone = words.colour(measure)
        traces.append({
            "type": "scatter", "mode": "lines+markers",
            "name": f"{words.label(measure)} ({'paper' if paper else AUTHORS})",
            "x": [num(r.get("level")) for r in rows], "y": [num(r.get("stability")) for r in rows],
            "opacity": 0.45 if paper else 1,
            "line": {"color": tone, "dash": "solid" if paper else "dash", "width": 6 if paper else 2},
            "marker": {"symbol": symbol, "size": 13, "color": tone} if paper
            else {"symbol": f"{symbol}-open", "size": 9, "color": tone, "line": {"width": 2}},
            "customdata": [[fmt_number(r.get("stability")), f"{words.label(measure)} ({esc(definition)})"]
                           for r in rows],
            "hovertemplate": "%{customdata[1]}<br>%{x} % of the data: %{customdata[0]}<extra></extra>",
        })
    return figure(traces, {
        "title": {"text": report.get("stability_label") or "Rank stability per sampling level"},
        "xaxis": {"title": {"text": "Share of the data scored (%)"}, "autorange": "reversed"},
        "yaxis": {"title": {"text": f"ε-rank stability ({report.get('stability_axis') or 'Spearman'})"}},
        "legend": {"title": {"text": "Measure (definition)"}},
    })


def raters(report: Mapping[str, Any]) -> go.Figure:
    """Each rater's Spearman ρ with the others' mean (bars) and Krippendorff's α without that rater (diamonds),
    the dotted line α with everyone."""
    section = report.get("raters") or {}
    rows = list(section.get("per_rater") or [])
    alpha = num(section.get("alpha")) if section else None
    ids = [esc(r.get("rater")) for r in rows]
    layout: dict[str, Any] = {
        "title": {"text": "Rater agreement" + ("" if alpha is None
                                               else f" (Krippendorff's α, ordinal: {fmt_number(alpha)})")},
        "xaxis": {"title": {"text": "Rater"}, "type": "category", "tickangle": -45 if len(ids) > 16 else 0},
        "yaxis": {"title": {"text": "Agreement (ρ or α)"}},
        "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
    }
    if alpha is not None:
        layout["shapes"] = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": alpha, "y1": alpha,
                             "line": {"color": PALETTE[3], "width": 1.5, "dash": "dot"}}]
    traces = [
        {"type": "bar", "name": "Spearman ρ with the others' mean", "x": ids, "marker": {"color": PALETTE[0]},
         "y": [num(r.get("agreement")) for r in rows], "customdata": [fmt_number(r.get("agreement")) for r in rows],
         "hovertemplate": "%{x}: ρ = %{customdata}<extra></extra>"},
        {"type": "scatter", "mode": "markers", "name": "α without this rater (dotted: α with everyone)", "x": ids,
         "y": [num(r.get("alpha_without")) for r in rows],
         "customdata": [fmt_number(r.get("alpha_without")) for r in rows],
         "hovertemplate": "%{x}: α without = %{customdata}<extra></extra>",
         "marker": {"size": 11, "symbol": "diamond", "color": PALETTE[3], "line": {"color": "#ffffff", "width": 1}}},
    ] if rows else []
    return figure(traces, layout)
