"""The pairwise section's figures, one per criterion (conventions sec. 17-18): Elo and Bradley-Terry per system
with bootstrap whiskers (a forest plot), the win fraction of each system against each opponent (diverging scale
centred at 0.5) and the consistency and sensitivity curves of neighbouring systems."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from metaeval.core.display.figures.style import (
    DIVERGING,
    GREY,
    PALETTE,
    SYMBOLS,
    esc,
    figure,
    interval_bars,
    num,
    unique,
    wrap,
)
from metaeval.core.display.numbers import fmt_number
from metaeval.core.display.page import criterion_name

RATING_KEYS = ("elo_median", "elo_ci_low", "elo_ci_high", "bt", "bt_ci_low", "bt_ci_high")
SERIES = (("Elo (bootstrap median)", "elo_median", "elo_ci_low", "elo_ci_high", "circle", PALETTE[0]),
          ("Bradley-Terry", "bt", "bt_ci_low", "bt_ci_high", "diamond", PALETTE[3]))


def criteria(section: Mapping[str, Any]) -> list[str]:
    """The section's criteria in the page's order."""
    listed = (section.get("judgments") or {}).get("criteria")
    return [str(c) for c in listed] if listed else unique(str(r["criterion"]) for r in section.get("ratings") or [])


def board(section: Mapping[str, Any], criterion: str) -> list[Mapping[str, Any]]:
    """The criterion's systems, best Bradley-Terry rating first (a missing rating last)."""
    rows = [r for r in section.get("ratings") or [] if r.get("criterion") == criterion]

    def rank(row: Mapping[str, Any]) -> float:
        value = num(row.get("bt"))
        return float("inf") if value is None else -value

    return sorted(rows, key=rank)


def forest(section: Mapping[str, Any], criterion: str) -> go.Figure:
    """Elo (bootstrap median) and Bradley-Terry per system, whiskers the bootstrap percentiles; the dotted line the
    initial rating."""
    rows = board(section, criterion)
    names = [wrap(r.get("system")) for r in rows]
    traces = []
    for name, value, low, high, symbol, tone in SERIES if rows else ():
        values = [num(r.get(value)) for r in rows]
        traces.append({
            "type": "scatter", "mode": "markers", "orientation": "h", "name": name, "y": names, "x": values,
            "marker": {"color": tone, "symbol": symbol, "size": 11, "line": {"color": "#ffffff", "width": 1}},
            "error_x": interval_bars(tone, values, [num(r.get(low)) for r in rows], [num(r.get(high)) for r in rows]),
            "customdata": [[esc(r.get("system")), fmt_number(r.get(value)), fmt_number(r.get(low)),
                            fmt_number(r.get(high)), r.get("wins"), r.get("ties"), r.get("losses"), r.get("games")]
                           for r in rows],
            "hovertemplate": f"<b>%{{customdata[0]}}</b><br>{name}: %{{customdata[1]}}<br>2.5th to 97.5th percentile: "
                             "%{customdata[2]} to %{customdata[3]}<br>games: %{customdata[7]} (won %{customdata[4]}, "
                             "tied %{customdata[5]}, lost %{customdata[6]})<extra></extra>",
        })
    init = num((section.get("parameters") or {}).get("init"))
    seen = [v for r in rows for v in (num(r.get(key)) for key in RATING_KEYS) if v is not None]
    seen += [init] if init is not None else []
    xaxis: dict[str, Any] = {"title": {"text": "Rating (Elo scale)"}, "zeroline": False}
    if seen:
        pad = max(5.0, 0.06 * (max(seen) - min(seen)))
        xaxis["range"] = [min(seen) - pad, max(seen) + pad]
    return figure(traces, {
        "title": {"text": f"Ratings per system · {esc(criterion_name(criterion))}"}, "scattermode": "group",
        "scattergap": 0.45, "height": max(320, 160 + len(rows) * 46), "xaxis": xaxis,
        "yaxis": {"title": {"text": "System"}, "type": "category", "autorange": "reversed", "categoryorder": "array",
                  "categoryarray": names, "showgrid": True},
        "shapes": [] if init is None else [{"type": "line", "xref": "x", "yref": "paper", "x0": init, "x1": init,
                                            "y0": 0, "y1": 1, "line": {"color": GREY, "width": 1, "dash": "dot"}}],
        "legend": {"title": {"text": "Whiskers: 2.5th to 97.5th percentile ·"}, "orientation": "h", "x": 0,
                   "xanchor": "left", "y": 1.0, "yanchor": "bottom", "traceorder": "normal"},
    })


#: opponents' names across, wrapped to the cells' width (report.js measures the drawn labels and turns them upright
#: when two still overlap): (cell width below, characters per line, font size)
OPPONENT_WRAP = ((60, 6, 10), (96, 8, 13), (160, 12, 13))
WIDE_WRAP = 20


def win_fraction(section: Mapping[str, Any], criterion: str) -> go.Figure:
    """The share of its games each system (row) won against each opponent (column), a tie counting half."""
    systems = [str(r.get("system")) for r in board(section, criterion)]
    cells = {(str(c.get("system")), str(c.get("opponent"))): c for c in section.get("win_fraction") or []
             if c.get("criterion") == criterion}
    z, text, custom = [], [], []
    for s in systems:
        z.append([num(cells[(s, o)].get("win_fraction")) if (s, o) in cells else None for o in systems])
        text.append([fmt_number(cells[(s, o)].get("win_fraction"), decimals=2) if (s, o) in cells else ""
                     for o in systems])
        custom.append([[esc(s), esc(o), fmt_number(cells[(s, o)].get("win_fraction")), str(cells[(s, o)].get("games"))]
                       if (s, o) in cells else [esc(s), esc(o), "", ""] for o in systems])
    colorbar = {"title": {"text": "Win fraction"}, "tickvals": [0, 0.25, 0.5, 0.75, 1],
                "ticktext": ["0", "0.25", "0.5 (even)", "0.75", "1"], "outlinewidth": 0, "thickness": 14}
    traces = [{
        "type": "heatmap", "x": systems, "y": [wrap(s) for s in systems], "z": z, "text": text,
        "texttemplate": "%{text}", "customdata": custom, "textfont": {"size": 13}, "zmin": 0, "zmax": 1, "zmid": 0.5,
        "colorscale": DIVERGING, "xgap": 3, "ygap": 3, "hoverongaps": False, "colorbar": colorbar,
        "hovertemplate": "<b>%{customdata[0]}</b> against <b>%{customdata[1]}</b><br>win fraction %{customdata[2]} "
                         "(ties half) over %{customdata[3]} games<extra></extra>",
    }] if cells else []
    height = max(320, 190 + 52 * len(systems))
    narrow = {"layout": {"height": height + 90, "margin": {"b": 90}},
              "data": [{"colorbar": {"title": {"text": "Win fraction", "side": "bottom"},
                                     "ticktext": ["0", "0.25", "0.5", "0.75", "1"], "orientation": "h", "x": 0.5,
                                     "xanchor": "center", "y": 0, "yanchor": "bottom", "yref": "container"}}]}
    steps = [{"below": below, "data": [{"textfont": {"size": size}}],
              "layout": {"xaxis": {"ticktext": [wrap(s, width) for s in systems]}}}
             for below, width, size in OPPONENT_WRAP]
    return figure(traces, {
        "title": {"text": f"Win fraction of each system against each opponent · {esc(criterion_name(criterion))}"},
        "height": height,
        "xaxis": {"title": {"text": "Opponent"}, "type": "category", "showgrid": False, "tickmode": "array",
                  "tickvals": systems, "ticktext": [wrap(s, WIDE_WRAP) for s in systems], "tickangle": 0},
        "yaxis": {"title": {"text": "System"}, "type": "category", "autorange": "reversed", "showgrid": False},
    }, narrow=narrow, cells={"across": len(systems), "reserve": 280, "reserve_narrow": 180, "steps": steps,
                             "upright": [esc(s) for s in systems]})


def consistency(section: Mapping[str, Any], criterion: str) -> go.Figure:
    """For each pair of neighbouring systems, consistency (solid) and sensitivity (dashed) against the games per
    sample, one legend entry per pair."""
    rows = [r for r in section.get("consistency") or [] if r.get("criterion") == criterion]
    traces = []
    for i, (model_a, model_b) in enumerate(unique((r["model_a"], r["model_b"]) for r in rows)):
        mine = sorted((r for r in rows if r["model_a"] == model_a and r["model_b"] == model_b),
                      key=lambda r: num(r.get("n")) or 0.0)
        tone, a, b = PALETTE[i % len(PALETTE)], esc(model_a), esc(model_b)
        for kind, dash, symbol in (("consistency", "solid", SYMBOLS[0]), ("sensitivity", "dash", f"{SYMBOLS[0]}-open")):
            traces.append({
                "type": "scatter", "mode": "lines+markers", "name": f"{a} vs {b}", "legendgroup": f"{a}\0{b}",
                "showlegend": dash == "solid", "x": [num(r.get("n")) for r in mine],
                "y": [num(r.get(kind)) for r in mine],
                "line": {"color": tone, "dash": dash, "width": 3 if dash == "solid" else 2},
                "marker": {"color": tone, "symbol": symbol, "size": 8, "line": {"color": tone, "width": 1.5}},
                "customdata": [[fmt_number(r.get(kind)), r.get("pool"), r.get("wins_a"), r.get("wins_b"),
                                r.get("ties"), a, b] for r in mine],
                "hovertemplate": f"%{{customdata[5]}} vs %{{customdata[6]}}<br>n = %{{x}} games: {kind} "
                                 "%{customdata[0]}<br>pool: %{customdata[1]} games (%{customdata[5]} won "
                                 "%{customdata[2]}, %{customdata[6]} won %{customdata[3]}, tied %{customdata[4]})"
                                 "<extra></extra>",
            })
    sizes = sorted(unique(v for v in (num(r.get("n")) for r in rows) if v is not None))
    return figure(traces, {
        "title": {"text": f"Consistency and sensitivity of neighbouring systems · {esc(criterion_name(criterion))}"},
        "xaxis": {"title": {"text": "Games per sample (n, log scale)"}, "type": "log", "tickmode": "array",
                  "tickvals": sizes, "ticktext": [f"{s:g}" for s in sizes]},
        "yaxis": {"title": {"text": "Share of repetitions"}, "range": [0, 1.04]},
        "legend": {"title": {"text": "Pair of neighbours<br>solid: consistency<br>dashed: sensitivity"},
                   "traceorder": "normal"},
    })
