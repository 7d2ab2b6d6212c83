"""The report page's views: tables as rows of shown cells, the correlation grid, the figures' texts, the pairwise
section."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from metaeval.core.display.names import caption, column_heading, measure_name, method_name
from metaeval.core.display.numbers import (
    DECIMALS,
    FEW_SYSTEMS,
    MISSING,
    P_DECIMALS,
    SATURATED,
    _real,
    fmt_cell,
    fmt_number,
    fmt_p,
)
from metaeval.core.display.ranks import ranked_rows
from metaeval.core.display.warnings import cell_flags, correlation_warnings


def _interval(low: object, high: object) -> str:
    if _real(low) is None and _real(high) is None:
        return MISSING
    return f"{fmt_number(low)} to {fmt_number(high)}"


def table_view(name: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One report table for the page: ``name`` (the CSV's), ``title`` and ``caption`` (:func:`caption`),
    ``columns`` (``key``, ``heading``) and ``rows`` of cells (``text``; ``numeric``: right-aligned; ``list``: a joined
    list, wrapped)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    title, text = caption(name)
    shown = []
    for row in rows:
        cells = []
        for column in columns:
            value = row.get(column)
            cells.append({"text": fmt_cell(column, value), "numeric": _real(value) is not None and not isinstance(
                value, bool), "list": isinstance(value, str) and ";" in value})
        shown.append(cells)
    return {"name": name, "title": title, "caption": text,
            "columns": [{"key": column, "heading": column_heading(column, name)} for column in columns], "rows": shown}


def _key(auto: object, hj: object) -> str:
    return f"{auto} | {hj}"


def correlation_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The correlation section for the page, one entry per coefficient (``methods``: ``method``, ``name``,
    ``selected``, ``warnings``, and the grid's ``rows`` as text); None without correlations."""
    cells = list(report.get("correlations") or [])
    if not cells:
        return None
    notes = {_key(row.get("auto_measure"), row.get("hj_measure")): row.get("note") or ""
             for row in (report.get("tables") or {}).get("correlations") or []}
    selected = report.get("heatmap_method") or cells[0]["method"]
    methods = []
    for method in dict.fromkeys(cell["method"] for cell in cells):
        mine = [{**cell, "note": notes.get(_key(cell["auto_measure"], cell["hj_measure"]), "")}
                for cell in cells if cell["method"] == method]
        rows = [{
            "auto": measure_name(str(cell["auto_measure"])), "hj": measure_name(str(cell["hj_measure"])),
            "r": fmt_number(cell.get("r")), "interval": _interval(cell.get("low"), cell.get("high")),
            "p": fmt_p(cell.get("p")), "n": fmt_number(cell.get("n")), "strength": cell.get("strength") or MISSING,
            "flags": ", ".join(cell_flags(cell)), "note": cell["note"],
        } for cell in mine]
        methods.append({"method": method, "name": method_name(method), "selected": method == selected,
                        "warnings": correlation_warnings(mine, method), "rows": rows,
                        "flags": {_key(cell["auto_measure"], cell["hj_measure"]): cell_flags(cell) for cell in mine}})
    return {"methods": methods, "selected": selected}


def figure_texts(report: Mapping[str, Any]) -> dict[str, Any]:
    """What the figures (:mod:`metaeval.core.display.figures`) and the page write beside the report's numbers:
    measure and coefficient names, the selected coefficient, per coefficient the grid's warnings and each cell's
    flags, and the β ablation's warnings."""
    parameters = report.get("parameters") or {}
    measures = [*parameters.get("measures", []), *parameters.get("hj_measures", [])]
    for row in report.get("leaderboard") or []:
        measures.append(row["measure"])
    for row in report.get("correlations") or []:
        measures += [row["auto_measure"], row["hj_measure"]]
    correlations = correlation_view(report)
    beta = report.get("beta_ablation") or []
    beta_n = {(row.get("auto_measure"), row.get("hj_measure"), row.get("beta")): row.get("n")
              for row in (report.get("tables") or {}).get("beta_ablation") or []}
    beta_warnings = {
        method: correlation_warnings(
            [{"r": row.get(method), "n": beta_n.get((row.get("auto_measure"), row.get("hj_measure"), row.get("beta")))}
             for row in beta], method)
        for method in ("pearson", "spearman", "kendall")
    } if beta else {}
    return {
        "measures": {name: measure_name(str(name)) for name in dict.fromkeys(measures)},
        "methods": {method: method_name(method) for method in ("pearson", "spearman", "kendall")},
        "method": correlations["selected"] if correlations else report.get("heatmap_method") or "pearson",
        "warnings": {m["method"]: m["warnings"] for m in correlations["methods"]} if correlations else {},
        "flags": {m["method"]: m["flags"] for m in correlations["methods"]} if correlations else {},
        "beta_warnings": beta_warnings,
        "pairwise": _pairwise_texts(report),
        "few_systems": FEW_SYSTEMS, "saturated": SATURATED, "decimals": DECIMALS, "p_decimals": P_DECIMALS,
    }


#: the criterion the pairwise section shows first (all criteria pooled, conventions sec. 17 item 4)
OVERALL = "overall"


def criterion_name(criterion: str) -> str:
    """A judging criterion in words: ``overall`` -> ``Overall (all criteria)``, ``personal_fit`` -> ``Personal
    fit``."""
    if criterion == OVERALL:
        return "Overall (all criteria)"
    words = str(criterion).replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def _pairwise_criteria(section: Mapping[str, Any]) -> list[str]:
    listed = (section.get("judgments") or {}).get("criteria")
    if listed:
        return [str(c) for c in listed]
    return [str(c) for c in dict.fromkeys(row["criterion"] for row in section.get("ratings") or [])]


def _pairwise_selected(criteria: Sequence[str]) -> str:
    return OVERALL if OVERALL in criteria else (criteria[-1] if criteria else OVERALL)


def _setting(value: object) -> str:
    """A setting as typed: 4, 400, 0.05, 2.5 (not 4.0000)."""
    number = _real(value)
    if number is None or not math.isfinite(number):
        return fmt_number(value)
    return str(int(number)) if number == int(number) else f"{number:g}"


def _percentile(value: object) -> str:
    text = _setting(value)
    return f"{text}th"


def _regularised_notes(section: Mapping[str, Any], n_boot: object) -> list[str]:
    notes = []
    for criterion, entry in (section.get("regularised") or {}).items():
        point = bool(entry.get("point"))
        rounds = int(entry.get("bootstrap_rounds") or 0)
        if not point and not rounds:
            continue
        where = [*(["the point fit"] if point else []),
                 *([f"{rounds} of {_setting(n_boot)} bootstrap rounds"] if rounds else [])]
        notes.append(f"{criterion_name(criterion)}: Bradley-Terry was regularised in {' and '.join(where)} (one "
                     f"virtual draw added between every pair of systems, because some system never lost, or never "
                     f"won, against the rest; its ratings are pulled towards the mean).")
    return notes


def pairwise_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pairwise section for the page (conventions sec. 17 item 11), or None when the report has none:
    ``judgments`` (read, invalid, games, systems: formatted), ``criteria`` (``criterion``, ``name``, ``selected``
    and its win/tie/loss ``rows`` as text: ``model_a``, ``model_b``, ``win``, ``tie``, ``loss``, ``cases``,
    ``wins``, ``ties``, ``losses``; ``ranking``: the Bradley-Terry leaderboard with rank ranges,
    :func:`~metaeval.core.display.ranks.ranked_rows`), ``selected`` (``overall`` when present), ``settings``
    (Elo, bootstrap, consistency and seed, in words) and ``regularised`` (one sentence per criterion whose
    Bradley-Terry fit was regularised)."""
    section = report.get("pairwise")
    if not section:
        return None
    judgments = section.get("judgments") or {}
    parameters = section.get("parameters") or {}
    criteria = _pairwise_criteria(section)
    selected = _pairwise_selected(criteria)
    wtl = section.get("wtl") or []
    shown = []
    for criterion in criteria:
        rows = [{
            "model_a": str(row.get("model_a")), "model_b": str(row.get("model_b")),
            **{key: fmt_number(row.get(key)) for key in ("win", "tie", "loss", "cases", "wins", "ties", "losses")},
        } for row in wtl if row.get("criterion") == criterion]
        ratings = [row for row in section.get("ratings") or [] if row.get("criterion") == criterion]
        ranking = (ranked_rows(ratings, value="bt", low="bt_ci_low", high="bt_ci_high")
                   if ratings and all("rank_best" in row for row in ratings) else [])
        shown.append({"criterion": criterion, "name": criterion_name(criterion), "selected": criterion == selected,
                      "rows": rows, "ranking": ranking})
    percentiles = parameters.get("percentiles") or []
    low, high = (percentiles[0], percentiles[-1]) if percentiles else (None, None)
    sizes = ", ".join(_setting(size) for size in parameters.get("consistency_sizes") or [])
    settings = {
        "elo": (f"K = {_setting(parameters.get('k'))}, scale {_setting(parameters.get('scale'))}, base "
                f"{_setting(parameters.get('base'))}, initial rating {_setting(parameters.get('init'))}"),
        "bootstrap": (f"{_setting(parameters.get('n_boot'))} bootstrap rounds of the games, intervals from the "
                      f"{_percentile(low)} to the {_percentile(high)} percentile"),
        "consistency": (f"{_setting(parameters.get('consistency_repetitions'))} repetitions at n = {sizes} (up to "
                        f"the pair's games), binomial test at α = {_setting(parameters.get('consistency_alpha'))}"),
        "seed": (f"{_setting(parameters.get('seed'))} (bootstrap), {_setting(parameters.get('consistency_seed'))} "
                 f"(consistency curves)"),
    }
    return {
        "judgments": {key: fmt_number(judgments.get(key)) for key in ("read", "invalid", "games")}
        | {"source": str(judgments.get("source") or ""), "systems": [str(s) for s in judgments.get("systems") or []]},
        "criteria": shown, "selected": selected, "settings": settings,
        "regularised": _regularised_notes(section, parameters.get("n_boot")),
    }


def _pairwise_texts(report: Mapping[str, Any]) -> dict[str, Any]:
    """What the pairwise figures need in words: each criterion's name and the one shown first."""
    section = report.get("pairwise")
    if not section:
        return {}
    criteria = _pairwise_criteria(section)
    return {"criteria": {criterion: criterion_name(criterion) for criterion in criteria},
            "criterion": _pairwise_selected(criteria)}


def probes_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The prompt-probes section for the page (conventions sec. 23 item 11), or None when the report has none:
    ``measure``, ``probes`` (names in order), ``matrix`` (per model: ``model`` and per probe a cell with ``delta``
    in percentage points and ``paradox`` yes / no / None when the model lacks a style), ``summary`` (per probe in
    words), ``adversarial`` / ``adversarial_summary`` (the adversarial worsening per model and per probe, when the
    run has ``-adversarial`` styles) and ``agreement`` (HJ vs automatic flags, when the run had ratings)."""
    section = report.get("probes")
    if not section:
        return None
    rows = section.get("rows") or []
    probes = list(dict.fromkeys(str(row.get("probe")) for row in section.get("summary") or []))
    by_cell = {(row.get("model"), row.get("probe")): row for row in rows}
    matrix = []
    for model in section.get("models") or []:
        cells = []
        for probe in probes:
            row = by_cell.get((model, probe))
            cells.append({"delta": fmt_number(row.get("delta_pp"), decimals=2) if row else "",
                          "paradox": bool(row.get("paradox")) if row else None})
        matrix.append({"model": str(model), "cells": cells})
    summary = [{
        "probe": str(item.get("probe")), "pair": f"{item.get('a')} < {item.get('b')}",
        "models": fmt_number(item.get("models")), "paradox_models": fmt_number(item.get("paradox_models")),
        "mean_drop": fmt_number(item.get("mean_drop_pp"), decimals=3),
        "pass_models": fmt_number(item.get("pass_models")),
        "mean_boost": fmt_number(item.get("mean_boost_pp"), decimals=3),
    } for item in section.get("summary") or []]
    adversarial = [{
        "model": str(row.get("model")), "probe": str(row.get("probe")), "style": str(row.get("style")),
        "worsening": fmt_number(row.get("worsening_pp"), decimals=2),
        "relative": fmt_number(row.get("worsening_pct"), decimals=2), "worsened": bool(row.get("worsened")),
        "gap": fmt_number(row.get("gap_pp"), decimals=2),
        "gap_adversarial": fmt_number(row.get("gap_adversarial_pp"), decimals=2),
    } for row in section.get("adversarial") or []]
    adversarial_summary = [{
        "probe": str(item.get("probe")), "style": str(item.get("style")), "models": fmt_number(item.get("models")),
        "worsened_models": fmt_number(item.get("worsened_models")),
        "mean_worsening": fmt_number(item.get("mean_worsening_pp"), decimals=3),
        "mean_relative": fmt_number(item.get("mean_worsening_pct"), decimals=3),
    } for item in section.get("adversarial_summary") or []]
    agreement = [{
        "model": str(row.get("model")), "probe": str(row.get("probe")), "paradox": fmt_number(row.get("paradox")),
        "paradox_hj": fmt_number(row.get("paradox_hj")), "agree": fmt_number(row.get("agree")),
    } for row in section.get("agreement") or []]
    return {"measure": str(section.get("measure")), "hj_measure": section.get("hj_measure"), "probes": probes,
            "matrix": matrix, "summary": summary, "agreement": agreement, "adversarial": adversarial,
            "adversarial_summary": adversarial_summary,
            "agreeing": sum(1 for row in section.get("agreement") or [] if row.get("agree"))}


def edins_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The e-DINS section for the page (conventions sec. 22 item 15), or None: per system ``dins``, ``pf``,
    ``edins`` (formatted), ``documents`` (and the ``_hj`` ones with ratings), best (lowest e-DINS) first, NaN last;
    ``human`` and the Pearson / Kendall correlation of e-DINS with e-DINS-HJ over the systems."""
    section = report.get("edins")
    if not section:
        return None
    def order(row: Mapping[str, Any]) -> tuple[bool, float]:
        value = _real(row.get("edins"))
        return (value is None or math.isnan(value), 0.0 if value is None or math.isnan(value) else value)

    rows = sorted(section.get("rows") or [], key=order)
    keys = ("dins", "pf", "edins", "documents", "dins_hj", "pf_hj", "edins_hj", "documents_hj")
    human = section.get("human")
    correlation = (human or {}).get("correlation") or {}
    return {"rows": [{"system": str(row.get("system")), **{key: fmt_number(row.get(key)) for key in keys}}
                     for row in rows],
            "settings": section.get("settings") or {}, "human": bool(human),
            "pearson": fmt_number(correlation.get("pearson"), decimals=3),
            "kendall": fmt_number(correlation.get("kendall"), decimals=3),
            "kendall_p": fmt_number(correlation.get("kendall_p"), decimals=3),
            "n": fmt_number(correlation.get("n")), "note": correlation.get("note") or ""}
