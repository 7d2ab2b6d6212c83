"""The figures of Table 2's pairwise-accuracy view (conventions sec. 26 item 11), built with plotly in Python from
a report document, so the page, the offline HTML and a notebook draw one definition: the page gets
``figure_json(...)`` and draws it with ``Plotly.newPlot``. No Django.

Readability rules as the report's other figures (``static/metaeval/report.js``): every axis titled, the Okabe & Ito
palette, names as text (``&``, ``<``, ``>`` escaped, never in a hover template: they reach the hover through
``customdata``), numbers in the report's format (:func:`metaeval.core.display.fmt_number`).
"""
from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from metaeval.core.display import fmt_number, measure_name
from metaeval.core.display.pairs import bucket_name

__all__ = ["PALETTE", "close_pairs_figure", "figure_json", "pair_accuracy_figure", "pair_figures"]

#: Okabe & Ito (2008), as report.js: distinguishable with every common colour-vision deficiency
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
#: the statistics of the overview, their names and marker symbols
STATISTICS = (("accuracy", "Pairwise accuracy", "circle"), ("acc_eq", "acc<sub>eq</sub> (tie-calibrated)", "square"),
              ("spa", "Soft pairwise accuracy", "diamond"))
FONT = {"family": "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif", "size": 13, "color": "#1d2433"}


def _esc(text: object) -> str:
    """A name as plotly text: plotly draws ``&``, ``<`` and ``>`` instead of reading tags."""
    return html.escape(str(text), quote=False)


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _layout(title: str, height: int, xaxis: dict[str, Any], yaxis: dict[str, Any],
            legend: str) -> dict[str, Any]:
    axis_style = {"automargin": True, "gridcolor": "#e6e9ef", "linecolor": "#8a93a6", "showline": True}
    return {
        "template": "none", "font": FONT, "paper_bgcolor": "#ffffff", "plot_bgcolor": "#ffffff", "height": height,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10, "pad": 4}, "hoverlabel": {"font": {"family": FONT["family"],
                                                                                          "size": 12}},
        "title": {"text": title, "x": 0, "xanchor": "left", "xref": "container", "pad": {"l": 4}},
        "xaxis": {**axis_style, **xaxis, "title": {**xaxis["title"], "standoff": 10}},
        "yaxis": {**axis_style, **yaxis, "title": {**yaxis["title"], "standoff": 10}},
        "legend": {"title": {"text": legend}, "traceorder": "normal"},
    }


def _colour(report: Mapping[str, Any], measure: str) -> str:
    measures = list((report.get("parameters") or {}).get("measures") or [])
    index = measures.index(measure) if measure in measures else 0
    return PALETTE[index % len(PALETTE)]


def pair_accuracy_figure(report: Mapping[str, Any]) -> go.Figure | None:
    """One row per automatic and human measure; accuracy, acc_eq and soft pairwise accuracy at system level,
    whiskers the bootstrap intervals; None without the view."""
    rows = [row for row in (report.get("tables") or {}).get("pair_accuracy") or [] if row.get("level") == "system"]
    if not rows:
        return None
    labels = [f"{_esc(measure_name(str(row['metric'])))} · {_esc(measure_name(str(row['human'])))}" for row in rows]
    traces: list[go.Scatter] = []
    lowest = 1.0
    for key, name, symbol in STATISTICS:
        values = [_num(row.get(key)) for row in rows]
        if all(value is None for value in values):
            continue
        lows, highs = [_num(row.get(f"{key}_low")) for row in rows], [_num(row.get(f"{key}_high")) for row in rows]
        lowest = min([lowest, *(v for v in values + lows if v is not None)])
        colour = PALETTE[len(traces)]
        trace = go.Scatter(
            x=values, y=labels, mode="markers", name=name, orientation="h",
            marker={"color": colour, "symbol": symbol, "size": 10, "line": {"color": "#ffffff", "width": 1}},
            customdata=[[label, fmt_number(value), fmt_number(low), fmt_number(high)]
                        for label, value, low, high in zip(labels, values, lows, highs, strict=True)],
            hovertemplate=f"<b>%{{customdata[0]}}</b><br>{name}: %{{customdata[1]}}<br>interval "
                          "%{customdata[2]} to %{customdata[3]}<extra></extra>",
        )
        if any(low is not None for low in lows):
            trace.error_x = {"type": "data", "symmetric": False, "color": colour, "thickness": 1.6, "width": 4,
                             "array": [None if v is None or h is None else h - v for v, h in zip(values, highs,
                                                                                                  strict=True)],
                             "arrayminus": [None if v is None or lo is None else v - lo for v, lo in zip(values, lows,
                                                                                                         strict=True)]}
        traces.append(trace)
    left = max(0.0, math.floor((lowest - 0.05) * 10) / 10)
    layout = _layout(
        "Pairwise accuracy, acc<sub>eq</sub> and soft pairwise accuracy (system level)", max(320, 150 + 42 * len(rows)),
        {"title": {"text": "Share of pairs ordered as people order them (1 = all)"},
         "range": [left, 1.02]},
        {"title": {"text": "Automatic · HJ measure"}, "type": "category", "autorange": "reversed",
         "categoryorder": "array", "categoryarray": labels}, "Statistic")
    figure = go.Figure(data=traces, layout=layout)
    figure.update_layout(scattermode="group", scattergap=0.4)
    return figure


def close_pairs_figure(report: Mapping[str, Any]) -> go.Figure | None:
    """Accuracy per close-pair bucket (x: how far apart people put the two systems), one line per automatic and
    human measure; None without buckets."""
    rows = list((report.get("tables") or {}).get("close_pairs") or [])
    if not rows:
        return None
    buckets = list(dict.fromkeys(bucket_name(row.get("bucket_low"), row.get("bucket_high")) for row in rows))
    humans = list(dict.fromkeys(str(row["human"]) for row in rows))
    traces: list[go.Scatter] = []
    for metric, human in dict.fromkeys((str(row["metric"]), str(row["human"])) for row in rows):
        mine = {bucket_name(row.get("bucket_low"), row.get("bucket_high")): row for row in rows
                if row["metric"] == metric and row["human"] == human}
        label = f"{_esc(measure_name(metric))} · {_esc(measure_name(human))}"
        cells = [mine.get(bucket, {}) for bucket in buckets]
        traces.append(go.Scatter(
            x=buckets, y=[_num(cell.get("accuracy")) for cell in cells], mode="lines+markers", name=label,
            line={"color": _colour(report, metric), "dash": DASHES[humans.index(human) % len(DASHES)], "width": 2},
            marker={"size": 9, "color": _colour(report, metric)},
            customdata=[[label, bucket, fmt_number(cell.get("accuracy")), fmt_number(cell.get("pairs")),
                         fmt_number(cell.get("kendall"))] for bucket, cell in zip(buckets, cells, strict=True)],
            hovertemplate="<b>%{customdata[0]}</b><br>|human difference| %{customdata[1]}<br>pairwise accuracy "
                          "%{customdata[2]} over %{customdata[3]} pairs<br>Kendall τ %{customdata[4]}<extra></extra>",
        ))
    layout = _layout(
        "Pairwise accuracy on close and distant pairs of systems", 420,
        {"title": {"text": "|Δ human| between the two systems"},
         "type": "category", "categoryorder": "array", "categoryarray": buckets},
        {"title": {"text": "Pairwise accuracy"}, "range": [-0.02, 1.05]}, "Automatic · HJ measure")
    return go.Figure(data=traces, layout=layout)


def figure_json(figure: go.Figure) -> dict[str, Any]:
    """A figure as plain JSON data (``data`` and ``layout``) for ``Plotly.newPlot``."""
    return json.loads(figure.to_json())  # type: ignore[no-any-return]


def pair_figures(report: Mapping[str, Any], ids: Sequence[str] = ("fig-pair-accuracy", "fig-close-pairs"),
                 ) -> dict[str, dict[str, Any]]:
    """The view's figures as JSON by the page's element id (those the report has)."""
    built = dict(zip(ids, (pair_accuracy_figure(report), close_pairs_figure(report)), strict=True))
    return {name: figure_json(figure) for name, figure in built.items() if figure is not None}
