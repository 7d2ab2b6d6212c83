"""Every figure of a PerSEval report as a plotly figure, keyed by the report page's element id: one definition for
the report page, the self-contained HTML report and a notebook (issue 30 item 3). A pure function of the report
document (``report.json``); no Django.

A figure the page switches between options gets one figure per option: ``fig-heatmap@kendall`` and ``fig-beta@kendall``
per correlation coefficient, ``fig-pairwise-forest@overall`` (and ``-heatmap``, ``-consistency``) per judging
criterion; the plain id (``fig-heatmap``) is the option the page shows first. ``fig-heatmap@<method>@narrow``: the
heatmap transposed for a phone, when the automatic measures outnumber the human-judgment ones.

:func:`figures_json` is what the page embeds: compact JSON (no spaces, each number its shortest round-trip form),
without the plain ids that duplicate an option's figure.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from metaeval.core.display.figures import pairwise as pairwise_figures
from metaeval.core.display.figures import perseval as perseval_figures
from metaeval.core.display.figures import sections
from metaeval.core.display.figures.pairs import close_pairs_figure, pair_accuracy_figure

__all__ = ["FIGURES_VERSION", "METHODS", "figures_json", "report_figures"]

#: bump when a figure's definition changes: the page's cache of built figures is keyed by it
FIGURES_VERSION = 1
#: the correlation coefficients the page can switch between
METHODS = ("pearson", "spearman", "kendall")


def report_figures(report: Mapping[str, Any]) -> dict[str, go.Figure]:
    """The report's figures by the page's element id (see the module's docstring for the ``@`` options); the
    leaderboard, heatmap, β, stability and rater figures always (a figure without data says so in
    ``layout.meta.empty``), the others when the report has their section."""
    words = perseval_figures.Words(report)
    out: dict[str, go.Figure] = {"fig-leaderboard": perseval_figures.leaderboard(report, words)}
    methods = [m for m in METHODS if any(c.get("method") == m for c in report.get("correlations") or [])]
    chosen = str(words.texts.get("method") or "pearson")
    for method in methods or [chosen]:
        out[f"fig-heatmap@{method}"] = perseval_figures.heatmap(report, words, method)
        cells = [c for c in report.get("correlations") or [] if c.get("method") == method]
        if len({c["auto_measure"] for c in cells}) > len({c["hj_measure"] for c in cells}):
            out[f"fig-heatmap@{method}@narrow"] = perseval_figures.heatmap(report, words, method, transposed=True)
        out[f"fig-beta@{method}"] = perseval_figures.beta(report, words, method)
    first = chosen if chosen in (methods or [chosen]) else (methods or [chosen])[0]
    out["fig-heatmap"], out["fig-beta"] = out[f"fig-heatmap@{first}"], out[f"fig-beta@{first}"]
    out["fig-stability"] = perseval_figures.stability(report, words)
    out["fig-raters"] = perseval_figures.raters(report)
    section = report.get("pairwise")
    if section:
        criteria = pairwise_figures.criteria(section)
        for criterion in criteria:
            out[f"fig-pairwise-forest@{criterion}"] = pairwise_figures.forest(section, criterion)
            out[f"fig-pairwise-heatmap@{criterion}"] = pairwise_figures.win_fraction(section, criterion)
            out[f"fig-pairwise-consistency@{criterion}"] = pairwise_figures.consistency(section, criterion)
        criterion = str((words.texts.get("pairwise") or {}).get("criterion") or "overall")
        if criteria:
            criterion = criterion if criterion in criteria else criteria[-1]
            for name in ("forest", "heatmap", "consistency"):
                out[f"fig-pairwise-{name}"] = out[f"fig-pairwise-{name}@{criterion}"]
    if report.get("edins"):
        out["fig-edins-gamma"] = sections.edins_gamma(report["edins"])
    if report.get("probes"):
        out["fig-probes-grid"] = sections.probes_grid(report["probes"])
    for key, built in (("fig-pair-accuracy", pair_accuracy_figure(report)), ("fig-close-pairs",
                                                                            close_pairs_figure(report))):
        if built is not None:
            out[key] = built
    return out


def figures_json(report: Mapping[str, Any]) -> str:
    """The page's figures as one compact JSON object ``{key: {"data": [...], "layout": {...}}}``: each figure's
    plotly JSON without spaces, the plain ids that repeat an option's figure left out (the page asks for
    ``id@option``)."""
    figures = report_figures(report)
    switched = {key.split("@", 1)[0] for key in figures if "@" in key}
    parts = [f"{json.dumps(key)}:{figure.to_json(pretty=False, validate=False)}" for key, figure in figures.items()
             if key not in switched]
    # plotly writes < > & as \u003c ...; the keys (criteria from the data) likewise: safe inside <script>
    return "{" + ",".join(parts).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") + "}"
