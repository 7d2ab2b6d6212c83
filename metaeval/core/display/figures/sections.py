"""The figures of the report's optional sections: e-DINS against γ (conventions sec. 22) and the prompt probes'
EGISES grid (sec. 23)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from metaeval.core.display.figures.style import PALETTE, SYMBOLS, esc, figure, num, unique, wrap
from metaeval.core.display.numbers import fmt_number

#: plotly.js's own "Blues" (dark = low), as the page drew it; plotly.py's named "Blues" runs the other way
BLUES = [[0, "rgb(5,10,172)"], [0.35, "rgb(40,60,190)"], [0.5, "rgb(70,100,245)"], [0.6, "rgb(90,120,245)"],
         [0.7, "rgb(106,137,247)"], [1, "rgb(220,220,220)"]]


def edins_gamma(section: Mapping[str, Any]) -> go.Figure:
    """e-DINS = DINS + γ·PF against γ, one line per system (e-DINS is linear in γ; lower is better)."""
    curve = list(section.get("curve") or [])
    traces = []
    for i, name in enumerate(unique(r["system"] for r in curve)):
        mine = [r for r in curve if r["system"] == name]
        traces.append({
            "type": "scatter", "mode": "lines+markers", "name": esc(name), "x": [num(r.get("gamma")) for r in mine],
            "y": [num(r.get("edins")) for r in mine], "line": {"color": PALETTE[i % len(PALETTE)]},
            "marker": {"symbol": SYMBOLS[i % len(SYMBOLS)]}, "customdata": [esc(name) for _ in mine],
            "hovertemplate": "<b>%{customdata}</b><br>γ %{x}: e-DINS %{y:.4f}<extra></extra>",
        })
    return figure(traces, {
        "title": {"text": "e-DINS = DINS + γ · PF against γ (lower is better)"},
        "xaxis": {"title": {"text": "γ"}, "range": [-0.02, 1.02]}, "yaxis": {"title": {"text": "e-DINS"}},
    })


def probes_grid(section: Mapping[str, Any]) -> go.Figure:
    """EGISES per model (rows) and prompt style (columns); darker (Blues) = lower = more personalised."""
    styles, models = list(section.get("styles") or []), list(section.get("models") or [])
    grid = {(c.get("model"), c.get("style")): c for c in section.get("grid") or []}
    z = [[num(grid[(m, s)].get("egises")) if (m, s) in grid else None for s in styles] for m in models]
    text = [[fmt_number(grid[(m, s)].get("egises"), decimals=4) if (m, s) in grid else "" for s in styles]
            for m in models]
    traces = [{
        "type": "heatmap", "x": [esc(s) for s in styles], "y": [wrap(m) for m in models], "z": z, "text": text,
        "texttemplate": "%{text}", "colorscale": BLUES, "xgap": 3, "ygap": 3, "hoverongaps": False,
        "colorbar": {"title": {"text": "EGISES"}, "outlinewidth": 0, "thickness": 14},
        "hovertemplate": "<b>%{y}</b> · %{x}<br>EGISES %{text}<extra></extra>",
    }] if models else []
    return figure(traces, {
        "title": {"text": f"EGISES per model and prompt style · {esc(section.get('measure'))} (darker: more "
                          "personalised)"},
        "height": max(320, 190 + 44 * len(models)),
        "xaxis": {"title": {"text": "Prompt style"}, "type": "category", "showgrid": False},
        "yaxis": {"title": {"text": "Model"}, "type": "category", "autorange": "reversed", "showgrid": False},
    })
