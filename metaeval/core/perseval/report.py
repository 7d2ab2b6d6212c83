"""The researcher report: every study of the paper (sec. 7-8) and the statistics reviewers ask for, as one
JSON-ready document (no Django).

:func:`build_report` rescores a :class:`~metaeval.core.perseval.studies.StudyData` (no distance is recomputed) and adds:
the benchmark tables (Tables 1, 7, 8) with bootstrap intervals of each system's PerSEval; the HJ correlation
grid (Table 2) with p-values, strength labels and bootstrap intervals (systems, documents or both); permutation
tests of "A correlates with human judgment better than B"; Table 2's pairwise-accuracy view (accuracy, acc_eq with
tie calibration, soft pairwise accuracy, close pairs: :mod:`.report_pairs`); the beta ablation (Figure 3); stability
in both definitions (Tables 4/6); EGISES-PerSEval rank agreement (Table 3); Borda-Kendall consensus vs HJ (Table 5); and
rater agreement (Krippendorff's alpha with a bootstrap interval, per-rater quality). Every random step takes
its seed from ``seed``, and the document records all settings, so a report can be regenerated exactly.

Layout: ``parameters``; figure data (``leaderboard``, ``correlations``, ``beta_ablation``, ``stability``,
``raters``) in the shape ``metaeval/static/metaeval/report.js`` draws; and ``tables``: name -> list of flat rows, each
downloadable as CSV. NaN and infinities become ``None``.
"""
from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from metaeval.core.edins.report import edins_section
from metaeval.core.icopernicus.report import probes_section
from metaeval.core.io.corpus import Corpus
from metaeval.core.io.records import json_safe
from metaeval.core.options import check_all
from metaeval.core.perseval import studies
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import HUMAN_PREFIXES, Progress, ProgressEvent
from metaeval.core.perseval.report_options import REPORT_OPTIONS
from metaeval.core.perseval.report_pairs import pairs_section
from metaeval.core.planning.ranks import with_rank_columns
from metaeval.core.stats import raters as rater_stats
from metaeval.core.stats import resampling

METHODS = resampling.METHODS
#: seed offsets, so each study draws its own stream from the report's seed (the pairwise-accuracy view takes the seed
#: itself, so that ``meta-accuracy --seed SEED`` gives its numbers)
_SEEDS = {"pairs": 0, "leaderboard": 1, "correlations": 2, "permutations": 3, "stability_paper": 4,
          "stability_authors": 5, "raters": 6}


_DEFAULT = {option.name: option.default for option in REPORT_OPTIONS}


def check_settings(settings: Mapping[str, object]) -> dict[str, Any]:
    """``settings`` checked against :data:`REPORT_OPTIONS` (:class:`~metaeval.core.options.OptionError` names an
    unknown setting or a bad value); the converted values of those given."""
    return check_all(REPORT_OPTIONS, settings, what="report setting")


def build_report(
    data: studies.StudyData,
    *,
    params: Params,
    seed: int,
    rating_rows: Sequence[Mapping[str, Any]] | None = None,
    n_boot: int = _DEFAULT["n_boot"],
    resample: str = _DEFAULT["resample"],
    confidence: float = _DEFAULT["confidence"],
    betas: Sequence[float] = _DEFAULT["betas"],
    stability_samples: int = _DEFAULT["stability_samples"],
    stability_levels: Sequence[int] = _DEFAULT["stability_levels"],
    n_permutations: int = _DEFAULT["n_permutations"],
    excluded_raters: Sequence[str] = (),
    missing_system: str = _DEFAULT["missing_system"],
    permutation_alternative: str = _DEFAULT["permutation_alternative"],
    close_pairs: Sequence[float] = _DEFAULT["close_pairs"],
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Everything the report page shows, for the measures and HJ labels in ``data``.

    ``missing_system`` is the bootstrap's rule for a sample in which a drawn system has no drawn document
    (``"discard-sample"``, SacreROUGE's, or ``"drop-system"``); ``permutation_alternative`` is ``"greater"``
    (one row per ordered pair A, B: H1 r(A, HJ) > r(B, HJ)) or ``"two-sided"`` (one row per unordered pair).
    ``close_pairs``: the lower edges of the pairwise-accuracy view's buckets (:mod:`.report_pairs`).
    """
    check_settings({
        "n_boot": n_boot, "resample": resample, "confidence": confidence, "betas": betas,
        "stability_samples": stability_samples, "stability_levels": stability_levels,
        "n_permutations": n_permutations, "missing_system": missing_system,
        "permutation_alternative": permutation_alternative, "close_pairs": close_pairs,
    })
    started = time.perf_counter()
    auto = [label for label in data.labels if not label.startswith(HUMAN_PREFIXES)]
    human = [label for label in data.labels if label.startswith(HUMAN_PREFIXES)]
    sections = _sections(auto=bool(auto), human=bool(human), raters=bool(rating_rows))

    def say(section: str) -> None:
        """One progress event as a section starts (``part`` of ``parts``: how far the report is)."""
        if progress is not None:
            progress(ProgressEvent("info", "report", f"report: {sections[section]}",
                                   {"part": list(sections).index(section), "parts": len(sections)}))

    scores = studies.score(data, params)
    tables: dict[str, list[dict[str, Any]]] = {}
    say("scores")
    leaderboard, tables["scores"] = _leaderboard(scores, n_boot, confidence, seed + _SEEDS["leaderboard"])
    for name, rows in studies.benchmark_tables(scores, include_hj=True).items():
        tables[f"table_{name}"] = rows
    report: dict[str, Any] = {
        "parameters": {
            **params.as_dict(), "seed": seed, "n_boot": n_boot, "resample": resample, "confidence": confidence,
            "betas": list(betas), "stability_samples": stability_samples, "stability_levels": list(stability_levels),
            "n_permutations": n_permutations, "excluded_raters": list(excluded_raters),
            "missing_system": missing_system, "permutation_alternative": permutation_alternative,
            "measures": auto, "hj_measures": human, "documents": len(data.doc_ids),
            "close_pairs": list(close_pairs),
        },
        "leaderboard": leaderboard,
        "leaderboard_label": "PerSEval",
    }
    systems = list(next(iter(scores.values()), {}))
    if systems and data.corpus is not None:  # e-DINS beside PerSEval (conventions sec. 22, item 15)
        report["edins"], edins_tables = edins_section(data.corpus, systems, data.ratings if data.hj else None)
        tables.update(edins_tables)
    probes = probes_section(scores, data.labels)
    if probes is not None:  # systems named MODEL:STYLE: the iCOPERNICUS probes (conventions sec. 23, item 11)
        report["probes"], probe_tables = probes
        tables.update(probe_tables)
    if auto and human:
        say("correlations")
        report["correlations"], tables["correlations"] = _correlations(
            scores, auto, human, resample=resample, n_boot=n_boot, confidence=confidence,
            seed=seed + _SEEDS["correlations"], missing_system=missing_system,
        )
        report["bootstrap_discarded"] = _discarded(tables["correlations"], missing_system, n_boot)
        say("permutations")
        tables["permutation_tests"] = _permutation_tests(
            scores, auto, human, resample=resample, n=n_permutations, seed=seed + _SEEDS["permutations"],
            alternative=permutation_alternative,
        )
        say("pairs")
        report["pair_accuracy"], pair_tables = pairs_section(
            scores, auto, human, close_pairs=close_pairs, n_boot=n_boot, n_permutations=n_permutations,
            confidence=confidence, seed=seed + _SEEDS["pairs"],
        )
        tables.update(pair_tables)
        say("beta")
        ablation = studies.beta_ablation(data, betas=np.asarray(betas, dtype=float), params=params)
        tables["beta_ablation"] = [_flat(row) for row in ablation]
        report["beta_ablation"] = [
            {"beta": row["beta"], "auto_measure": row["auto_measure"], "hj_measure": row["hj_measure"],
             **{method: row[method] for method in METHODS}}
            for row in ablation
        ]
        tables["borda_kendall"] = [
            _flat(row) for label in human for row in studies.borda_vs_hj(scores, label, perseval_measures=auto)
        ]
        report["heatmap_method"] = "pearson"
        report["beta_method"] = "pearson"
    if auto:
        tables["rank_agreement"] = [_flat(studies.rank_agreement(scores, measure)) for measure in auto]
        say("stability")
        stability_rows: list[dict[str, Any]] = []
        summary: list[dict[str, Any]] = []
        for definition in ("paper", "authors"):
            drawn = studies.stability(
                data, definition=definition, levels=tuple(stability_levels), samples=stability_samples,
                seed=seed + _SEEDS[f"stability_{definition}"], params=params, measures=auto,
            )
            stability_rows.extend(_flat(row.as_dict()) for row in drawn)
            summary.extend(studies.stability_summary(drawn))
        tables["stability"] = stability_rows
        tables["stability_summary"] = [_flat({k: v for k, v in row.items() if k != "levels"}) for row in summary]
        report["stability"] = [
            {"measure": row["measure"], "definition": row["definition"], "level": level,
             "stability": values["spearman"], "kendall": values["kendall"]}
            for row in summary for level, values in sorted(row["levels"].items(), reverse=True)
        ]
        report["stability_label"] = "epsilon-rank stability (mean Spearman with the full-data ranking)"
        report["stability_axis"] = "Spearman"
    if rating_rows:
        say("raters")
        report["raters"], tables["raters"], tables["rater_agreement"] = _raters(
            rating_rows, corpus=data.corpus, n_boot=n_boot, confidence=confidence, seed=seed + _SEEDS["raters"]
        )
    report["tables"] = tables
    if progress is not None:
        seconds = time.perf_counter() - started
        progress(ProgressEvent("finished", "report", f"report: {len(tables)} tables in {seconds:.1f} s",
                               {"seconds": seconds, "part": len(sections), "parts": len(sections)}))
    return json_safe(report)


#: the report's sections in the order build_report runs them, as its progress events name them
SECTIONS = {
    "scores": "scores and benchmark tables",
    "correlations": "correlation grid with bootstrap intervals",
    "permutations": "permutation tests",
    "pairs": "pairwise accuracy, tie calibration, soft pairwise accuracy",
    "beta": "beta ablation",
    "stability": "stability (paper and authors' definitions)",
    "raters": "rater agreement",
}


def _sections(*, auto: bool, human: bool, raters: bool) -> dict[str, str]:
    """The sections a report with these parts runs, in order (its progress counts them)."""
    wanted = {"scores": True, "correlations": auto and human, "permutations": auto and human,
              "pairs": auto and human, "beta": auto and human, "stability": auto, "raters": raters}
    return {name: text for name, text in SECTIONS.items() if wanted[name]}


def _leaderboard(
    scores: studies.Scores, n_boot: int, confidence: float, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    board: list[dict[str, Any]] = []
    table: list[dict[str, Any]] = []
    for index, (label, by_system) in enumerate(scores.items()):
        systems, _, values, weights = studies.document_matrix(scores, label, "perseval")
        value, low, high = resampling.system_score_intervals(
            values, weights, n_boot=n_boot, confidence=confidence, seed=seed + index
        )
        interval = {system: (value[i], low[i], high[i]) for i, system in enumerate(systems)}
        for system, score in by_system.items():
            _, lo, hi = interval.get(system, (math.nan, math.nan, math.nan))
            board.append({"system": system, "measure": label, "value": score.perseval, "low": lo, "high": hi})
            table.append({
                "system": system, "measure": label, "perseval": score.perseval, "perseval_low": lo,
                "perseval_high": hi, "egises": score.egises, "degress": score.degress, "accuracy": score.accuracy,
                "p_acc": score.p_acc, "documents": score.documents, "readers": score.readers,
            })
    # rank ranges per measure from the bootstrap intervals (conventions sec. 27.4), at the end of each row
    board = with_rank_columns(board, group="measure", value="value", low="low", high="high")
    table = with_rank_columns(table, group="measure", value="perseval", low="perseval_low", high="perseval_high")
    return board, table


def _matrices(scores: studies.Scores, labels: Sequence[str]) -> tuple[list[str], list[np.ndarray], list[Any]]:
    systems, _, values, weights = resampling.align(*(studies.document_matrix(scores, label) for label in labels))
    return [str(system) for system in systems], values, weights


def _correlations(
    scores: studies.Scores, auto: Sequence[str], human: Sequence[str], *, resample: str, n_boot: int,
    confidence: float, seed: int, missing_system: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    figure: list[dict[str, Any]] = []
    table: list[dict[str, Any]] = []
    for index, (a, h) in enumerate(itertools.product(auto, human)):
        systems, values, weights = _matrices(scores, [a, h])
        cell = resampling.correlation_with_ci(
            values[0], values[1], resample=cast(resampling.Resample, resample), n_boot=n_boot,
            confidence=confidence, seed=seed + index,
            auto_weights=weights[0], human_weights=weights[1],
            missing_system=cast(resampling.MissingSystem, missing_system),
        )
        table.append(_flat({"auto_measure": a, "hj_measure": h, "systems": systems, **cell}))
        for method in METHODS:
            figure.append({
                "auto_measure": a, "hj_measure": h, "method": method, "r": cell[method], "p": cell[f"{method}_p"],
                "low": cell[f"{method}_low"], "high": cell[f"{method}_high"], "strength": cell[f"{method}_label"],
                "n": cell["n"],
            })
    return figure, table


def _discarded(rows: Sequence[Mapping[str, Any]], rule: str, n_boot: int) -> dict[str, Any]:
    """How many bootstrap samples of the correlation cells were discarded for a drawn system without a drawn
    document (the least and most over the cells, and their sum), under ``rule``."""
    counts = [int(row["n_discarded"]) for row in rows]
    incomplete = [int(row["n_incomplete"]) for row in rows]
    return {"rule": rule, "n_boot": n_boot, "cells": len(counts), "min": min(counts, default=0),
            "max": max(counts, default=0), "total": sum(counts), "incomplete_max": max(incomplete, default=0)}


def _permutation_tests(
    scores: studies.Scores, auto: Sequence[str], human: Sequence[str], *, resample: str, n: int, seed: int,
    alternative: str,
) -> list[dict[str, Any]]:
    """For every HJ label and every ordered pair (A, B) of automatic measures, H0 r(A, HJ) <= r(B, HJ)
    (``alternative="greater"``); or every unordered pair, H0 r(A, HJ) = r(B, HJ) (``"two-sided"``)."""
    pairs = list(itertools.permutations(auto, 2) if alternative == "greater" else itertools.combinations(auto, 2))
    rows: list[dict[str, Any]] = []
    index = 0
    for h in human:
        for a, b in pairs:
            systems, values, weights = _matrices(scores, [a, b, h])
            for method in METHODS:
                result = resampling.permutation_test(
                    values[0], values[1], values[2], method=method, resample=cast(resampling.Resample, resample),
                    n_permutations=n,
                    seed=seed + index, a_weights=weights[0], b_weights=weights[1], human_weights=weights[2],
                    alternative=cast(resampling.Alternative, alternative),
                )
                index += 1
                rows.append(_flat({"hj_measure": h, "measure_a": a, "measure_b": b, **result.as_dict(),
                                   "significant_0.05": result.significant(0.05)}))
    return rows


def _raters(
    rows: Sequence[Mapping[str, Any]], *, corpus: Corpus | None, n_boot: int, confidence: float, seed: int
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    overall = rater_stats.overall_report(rows, n_boot=n_boot, seed=seed, confidence=confidence, identical=corpus)
    per_rater = rater_stats.rater_report(rows)
    figure = {
        "alpha": overall.get("alpha"), "low": overall.get("low"), "high": overall.get("high"),
        "alphas": _alpha_rows(overall),
        "per_rater": [
            {"rater": row.rater, "agreement": row.spearman_with_others, "alpha_without": row.alpha_without}
            for row in per_rater
        ],
    }
    agreement: list[dict[str, Any]] = []
    for scope, summary in [("all", overall), *((f"study:{study}", values)
                                               for study, values in cast(dict, overall.get("studies") or {}).items())]:
        agreement.extend(_flat({"scope": scope, **row}) for row in _alpha_rows(summary))
    return figure, [_flat(row.as_dict()) for row in per_rater], agreement


#: which units each alpha row covers, in the words of the report
ALPHA_UNITS = {"all": "all units", "different": "units comparing two different texts",
               "identical": "units comparing a text with itself"}


#: keys of an overall_report summary that are settings (in the report's parameters) or nested groups
_NOT_ALPHA_COLUMNS = ("studies", "texts", "level", "values", "n_boot", "confidence", "seed")


def _alpha_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Alpha over all units and, when known, over the two text groups, one row each: ``texts`` (all, different,
    identical), ``quote`` (True on the one to report), alpha, interval and counts."""
    texts = summary.get("texts")
    quote = texts["quote"] if isinstance(texts, Mapping) else "all"
    groups: list[tuple[str, Mapping[str, Any]]] = [("all", summary)]
    if isinstance(texts, Mapping):
        groups += [(name, texts[name]) for name in rater_stats.TEXT_GROUPS]
    out = []
    for name, values in groups:
        row = {"texts": name, "units": ALPHA_UNITS[name], "quote": name == quote}
        row.update({k: v for k, v in values.items() if k not in _NOT_ALPHA_COLUMNS})
        out.append(row)
    return out


def _flat(row: Mapping[str, Any]) -> dict[str, Any]:
    """One CSV-ready row: lists joined with ";", nested mappings as ``key.sub``, numpy scalars as Python."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, Mapping):
            for sub, item in _flat(value).items():
                out[f"{key}.{sub}"] = item
        elif isinstance(value, (list, tuple)):
            out[key] = ";".join(_text(item) for item in value)
        else:
            out[key] = _plain(value)
    return out


def _text(value: Any) -> str:
    value = _plain(value)
    return repr(value) if isinstance(value, float) else str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value
