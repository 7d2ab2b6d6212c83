"""The figures of Table 2's pairwise-accuracy view (conventions sec. 26 item 11): the three statistics with their
whiskers per automatic and human measure, and accuracy per close-pair bucket."""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from metaeval.core.display import fmt_number, measure_name
from metaeval.core.display.figures.style import DASHES, PALETTE, colour, esc, figure, interval_bars, num
from metaeval.core.display.pairs import bucket_name

__all__ = ["close_pairs_figure", "pair_accuracy_figure"]

#: the statistics of the overview, their names and marker symbols
STATISTICS = (("accuracy", "Pairwise accuracy", "circle"), ("acc_eq", "acc<sub>eq</sub> (tie-calibrated)", "square"),
              ("spa", "Soft pairwise accuracy", "diamond"))


def _colour(report: Mapping[str, Any], measure: str) -> str:
    return colour(list((report.get("parameters") or {}).get("measures") or []), measure)


def pair_accuracy_figure(report: Mapping[str, Any]) -> go.Figure | None:
    """One row per automatic and human measure; accuracy, acc_eq and soft pairwise accuracy at system level,
    whiskers the bootstrap intervals; None without the view."""
    rows = [row for row in (report.get("tables") or {}).get("pair_accuracy") or [] if row.get("level") == "system"]
    if not rows:
        return None
    labels = [f"{esc(measure_name(str(row['metric'])))} · {esc(measure_name(str(row['human'])))}" for row in rows]
    traces: list[dict[str, Any]] = []
    lowest = 1.0
    for key, name, symbol in STATISTICS:
        values = [num(row.get(key)) for row in rows]
        if all(value is None for value in values):
            continue
        lows, highs = [num(row.get(f"{key}_low")) for row in rows], [num(row.get(f"{key}_high")) for row in rows]
        lowest = min([lowest, *(v for v in values + lows if v is not None)])
        tone = PALETTE[len(traces)]
        trace: dict[str, Any] = {
            "type": "scatter", "x": values, "y": labels, "mode": "markers", "name": name, "orientation": "h",
            "marker": {"color": tone, "symbol": symbol, "size": 10, "line": {"color": "#ffffff", "width": 1}},
            "customdata": [[label, fmt_number(value), fmt_number(low), fmt_number(high)]
                           for label, value, low, high in zip(labels, values, lows, highs, strict=True)],
            "hovertemplate": f"<b>%{{customdata[0]}}</b><br>{name}: %{{customdata[1]}}<br>interval "
                             "%{customdata[2]} to %{customdata[3]}<extra></extra>",
        }
        if any(low is not None for low in lows):
            trace["error_x"] = interval_bars(tone, values, lows, highs)
        traces.append(trace)
    left = max(0.0, math.floor((lowest - 0.05) * 10) / 10)
    return figure(traces, {
        "title": {"text": "Pairwise accuracy, acc<sub>eq</sub> and soft pairwise accuracy (system level)"},
        "height": max(320, 150 + 42 * len(rows)), "scattermode": "group", "scattergap": 0.4,
        "xaxis": {"title": {"text": "Share of pairs ordered as people order them (1 = all)"}, "range": [left, 1.02]},
        "yaxis": {"title": {"text": "Automatic · HJ measure"}, "type": "category", "autorange": "reversed",
                  "categoryorder": "array", "categoryarray": labels},
        "legend": {"title": {"text": "Statistic"}, "traceorder": "normal"},
    })


def close_pairs_figure(report: Mapping[str, Any]) -> go.Figure | None:
    """Accuracy per close-pair bucket (x: how far apart people put the two systems), one line per automatic and
    human measure; None without buckets."""
    rows = list((report.get("tables") or {}).get("close_pairs") or [])
    if not rows:
        return None
    buckets = list(dict.fromkeys(bucket_name(row.get("bucket_low"), row.get("bucket_high")) for row in rows))
    humans = list(dict.fromkeys(str(row["human"]) for row in rows))
    traces: list[dict[str, Any]] = []
    for metric, human in dict.fromkeys((str(row["metric"]), str(row["human"])) for row in rows):
        mine = {bucket_name(row.get("bucket_low"), row.get("bucket_high")): row for row in rows
                if row["metric"] == metric and row["human"] == human}
        label = f"{esc(measure_name(metric))} · {esc(measure_name(human))}"
        cells = [mine.get(bucket, {}) for bucket in buckets]
        traces.append({
            "type": "scatter", "x": buckets, "y": [num(cell.get("accuracy")) for cell in cells],
            "mode": "lines+markers", "name": label,
            "line": {"color": _colour(report, metric), "dash": DASHES[humans.index(human) % len(DASHES)], "width": 2},
            "marker": {"size": 9, "color": _colour(report, metric)},
            "customdata": [[label, bucket, fmt_number(cell.get("accuracy")), fmt_number(cell.get("pairs")),
                            fmt_number(cell.get("kendall"))] for bucket, cell in zip(buckets, cells, strict=True)],
            "hovertemplate": "<b>%{customdata[0]}</b><br>|human difference| %{customdata[1]}<br>pairwise accuracy "
                             "%{customdata[2]} over %{customdata[3]} pairs<br>Kendall τ %{customdata[4]}"
                             "<extra></extra>",
        })
    return figure(traces, {
        "title": {"text": "Pairwise accuracy on close and distant pairs of systems"}, "height": 420,
        "xaxis": {"title": {"text": "|Δ human| between the two systems"}, "type": "category", "categoryorder": "array",
                  "categoryarray": buckets},
        "yaxis": {"title": {"text": "Pairwise accuracy"}, "range": [-0.02, 1.05]},
        "legend": {"title": {"text": "Automatic · HJ measure"}, "traceorder": "normal"},
    })
