"""How a report's numbers and names are shown to a person: one number format, one p-value format, human names for
measures and table columns, table captions, and the warnings a correlation needs (few systems, degenerate).

Display only: nothing here changes a number. ``report.json``, the tables' CSV and JSON and the command line's CSV
keep full precision; the report page, its figures and the command line's summary show these strings.
``static/metaeval/report.js`` mirrors :func:`fmt_number` and :func:`fmt_p` for the figures (the browser test
compares the two). No Django: the command line and the pages share it.

Numbers: 4 decimals, rounded half away from zero on the exact binary value (as JavaScript's ``toFixed``), so
``0.54745...`` shows as ``0.5475``; a value that would show as 0.0000 without being 0 shows as ``< 0.0001`` (or
``> -0.0001``), never as ``2.963e-12``. p-values: 3 decimals, below 0.001 as ``< 0.001``. Missing (None, NaN) as
``–``. Integers as they are, booleans as yes / no.
"""
from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

__all__ = [
    "DECIMALS", "FEW_SYSTEMS", "MISSING", "P_DECIMALS", "SATURATED", "ascii_text", "caption", "cell_flags", "cells_of",
    "column_heading", "correlation_warnings", "fmt_cell", "fmt_number", "fmt_p", "is_p_column", "measure_name",
    "method_name", "correlation_view", "criterion_name", "figure_texts", "pairwise_view", "table_view",
]

#: decimals of every number shown (not of p-values)
DECIMALS = 4
#: decimals of a p-value; smaller ones show as "< 0.001"
P_DECIMALS = 3
#: what a missing value (None, NaN) shows as
MISSING = "–"
#: a correlation over fewer systems than this gets the "few systems" warning
FEW_SYSTEMS = 8
#: a correlation with |r| at least this is "±1" (degenerate when every cell of a grid is)
SATURATED = 0.99


def _real(value: object) -> float | None:
    """``value`` as a float when it is a real number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def _fixed(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` decimals, ties away from zero on the exact binary value (``Number.toFixed``)."""
    if abs(value) >= 1e15:  # beyond Decimal's default 28 digits with the decimals; no tie can occur there
        return f"{value:.{decimals}f}"
    text = str(Decimal(value).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))
    return text[1:] if text.startswith("-") and not any(c in "123456789" for c in text) else text


def fmt_number(value: object, *, decimals: int = DECIMALS, missing: str = MISSING) -> str:
    """One number for a person: ``0.5475``, ``< 0.0001`` for a tiny positive value (``> -0.0001`` negative), ``0.0000``
    for zero, integers unchanged, ``missing`` for None and NaN, ``inf`` / ``-inf``, yes / no for booleans; any other
    value as ``str``."""
    if value is None:
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    number = _real(value)
    if number is None:
        return str(value)
    if math.isnan(number):
        return missing
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    smallest = 10.0 ** -decimals
    if number != 0 and abs(number) < smallest / 2:
        return f"< {_fixed(smallest, decimals)}" if number > 0 else f"> -{_fixed(smallest, decimals)}"
    return _fixed(number, decimals)


def fmt_p(value: object, *, missing: str = MISSING) -> str:
    """A p-value: ``< 0.001`` below 0.001, otherwise 3 decimals (``0.042``); ``missing`` for None and NaN."""
    number = _real(value)
    if number is None:
        return missing if value is None else str(value)
    if math.isnan(number):
        return missing
    smallest = 10.0 ** -P_DECIMALS
    if number < smallest:
        return f"< {_fixed(smallest, P_DECIMALS)}"
    return _fixed(number, P_DECIMALS)


def is_p_column(column: str) -> bool:
    """Whether a table column holds p-values (``pearson_p``, ``p_value``, ``p``)."""
    return column in ("p", "p_value") or column.endswith("_p")


#: columns that hold a setting as the researcher typed it (shown in the shortest form: beta 1.1, not 1.1000)
SETTING_COLUMNS = frozenset({"beta", "confidence", "level"})


#: columns whose values are measure names (shown as :func:`measure_name` writes them)
MEASURE_COLUMNS = frozenset({"measure", "auto_measure", "hj_measure", "measure_a", "measure_b", "perseval_measure",
                             "accuracy_measure"})


def fmt_cell(column: str, value: object, *, missing: str = MISSING) -> str:
    """A table cell: measure names in words, p-values with :func:`fmt_p`, settings as typed, lists (``a;b``, as the
    CSV joins them) item by item with ``"; "`` between them, other numbers with :func:`fmt_number`."""
    if column in MEASURE_COLUMNS and isinstance(value, str):
        return measure_name(value)
    if isinstance(value, str):
        return "; ".join(_list_item(item, missing) for item in value.split(";"))
    if is_p_column(column):
        return fmt_p(value, missing=missing)
    number = _real(value)
    if column in SETTING_COLUMNS and number is not None and math.isfinite(number):
        return f"{number:g}"
    return fmt_number(value, missing=missing)


#: a float as Python writes it (``repr``), the way a report's lists are joined (``0.5;2.9e-13;nan``)
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+(?=e))(e[-+]?\d+)?|[-+]?(nan|inf)", re.IGNORECASE)


def _list_item(text: str, missing: str) -> str:
    """One item of a joined list (or a one-item list): a float formatted, anything else (an integer, a word)
    unchanged."""
    return fmt_number(float(text), missing=missing) if _FLOAT.fullmatch(text.strip()) else text


# ---------------------------------------------------------------------------------------------------- names
#: the measures' names as the paper writes them
MEASURE_NAMES = {
    "rouge_l": "ROUGE-L", "rouge_su4": "ROUGE-SU4", "bleu1": "BLEU-1", "bleu4": "BLEU-4", "jsd": "JSD",
    "meteor": "METEOR", "bertscore": "BERTScore", "infolm": "InfoLM",
}
HJ_PREFIX = "hj:"  # as metaeval.core.perseval.pipeline.HJ_PREFIX (not imported: this module stays light)
FEEDBACK_HJ_PREFIX = "hj-openai:"  # as metaeval.core.perseval.pipeline.FEEDBACK_HJ_PREFIX

METHOD_NAMES = {"pearson": "Pearson r", "spearman": "Spearman ρ", "kendall": "Kendall τ"}


def measure_name(name: str) -> str:
    """``rouge_l`` -> ``ROUGE-L``; ``hj:rouge_l`` -> ``HJ (ROUGE-L)``; ``hj-openai:rouge_l`` -> ``HJ-OpenAI
    (ROUGE-L)``; an unknown name unchanged."""
    if name.startswith(FEEDBACK_HJ_PREFIX):
        return f"HJ-OpenAI ({measure_name(name[len(FEEDBACK_HJ_PREFIX):])})"
    if name.startswith(HJ_PREFIX):
        return f"HJ ({measure_name(name[len(HJ_PREFIX):])})"
    return MEASURE_NAMES.get(name, name)


def method_name(method: str) -> str:
    """``pearson`` -> ``Pearson r`` (ρ and τ for Spearman and Kendall)."""
    return METHOD_NAMES.get(method, method.capitalize())


def _is_measure(name: str) -> bool:
    return name.removeprefix(FEEDBACK_HJ_PREFIX).removeprefix(HJ_PREFIX) in MEASURE_NAMES


#: table columns in words (the CSV keeps the names on the right-hand side of this table)
HEADINGS = {
    "system": "System", "measure": "Measure", "perseval": "PerSEval", "egises": "EGISES", "degress": "DEGRESS",
    "accuracy": "Accuracy distance", "p_acc": "P-Acc", "egises_accuracy": "EGISES accuracy",
    "documents": "Documents", "readers": "Readers", "rows": "Pair rows",
    "auto_measure": "Automatic measure", "hj_measure": "Human-judgment measure", "systems": "Systems",
    "n": "n (systems)", "resample": "Resampled", "n_boot": "Bootstrap samples", "confidence": "Confidence",
    "dropped": "Left out (no score)", "note": "Note", "missing_system": "Bootstrap: drawn system without documents",
    "n_incomplete": "Samples missing a system", "n_discarded": "Samples discarded",
    "measure_a": "Measure A", "measure_b": "Measure B", "delta": "Δ = r(A) − r(B)", "p_value": "p-value",
    "n_permutations": "Permutations", "n_valid": "Valid permutations", "method": "Coefficient",
    "r_a": "r(A, HJ)", "r_b": "r(B, HJ)", "n_systems": "n (systems)", "standardized": "z-scored",
    "alternative": "Alternative", "significant_0.05": "Significant at 0.05",
    "beta": "β", "perseval_measure": "PerSEval measure", "accuracy_measure": "Accuracy measure",
    "aggregate": "Aggregate", "ranking": "Ranking", "hj_ranking": "Human-judgment ranking",
    "borda_sums": "Borda sums", "egises_ranking": "EGISES ranking", "perseval_ranking": "PerSEval ranking",
    "definition": "Definition", "level": "Level (% kept)", "samples": "Draws", "seed": "Seed",
    "draw_seeds": "Seeds of the draws", "set_size": "Documents per draw", "full": "PerSEval, all data",
    "value": "PerSEval, mean of the draws", "level_bias": "Level bias", "level_variance": "Level variance",
    "bias": "δ-bias", "variance": "δ-variance", "scores": "PerSEval per draw", "sample_rows": "Rows per draw",
    "perseval_samples": "PerSEval per draw", "egises_full": "EGISES, all data",
    "egises_bias": "EGISES bias", "egises_variance": "EGISES variance", "egises_samples": "EGISES per draw",
    "epsilon_spearman": "ε-stability (Spearman)", "epsilon_kendall": "ε-stability (Kendall)",
    "delta_bias": "δ-bias", "delta_variance": "δ-variance",
    "rater": "Rater", "studies": "Studies", "n_ratings": "Ratings", "n_questionnaires": "Questionnaires",
    "mean_rating": "Mean rating", "median_seconds": "Median seconds per set", "n_timed": "Timed sets",
    "straightlined_share": "Share straight-lined", "n_straightlined": "Sets straight-lined",
    "longest_run": "Longest run of one rating", "n_shared_items": "Items shared with others",
    "spearman_with_others": "Spearman with the others", "mad_from_others": "Mean abs. deviation from the others",
    "alpha_without": "α without this rater", "alpha_change": "α change without this rater",
    "scope": "Scope", "texts": "Texts", "units": "Units", "quote": "Quote this one", "alpha": "Krippendorff's α",
    "low": "Lower bound", "high": "Upper bound", "n_items": "Rated pairs", "n_pairable_items": "Pairs rated twice+",
    "n_pairable_ratings": "Ratings of those pairs", "n_raters": "Raters", "n_anonymous_ratings": "Anonymous ratings",
    "duplicate_ratings": "Duplicate ratings",
    # pairwise judgments (conventions sec. 17-18)
    "criterion": "Criterion", "elo": "Elo (file order)", "elo_median": "Elo, bootstrap median",
    "elo_ci_low": "Elo, 2.5th percentile", "elo_ci_high": "Elo, 97.5th percentile", "bt": "Bradley-Terry",
    "bt_ci_low": "Bradley-Terry, 2.5th percentile", "bt_ci_high": "Bradley-Terry, 97.5th percentile",
    "wins": "Wins", "ties": "Ties", "losses": "Losses", "games": "Games",
    "model_a": "System A", "model_b": "System B", "win": "A wins (% of games)", "tie": "Ties (% of games)",
    "loss": "B wins (% of games)", "cases": "Games (cases)", "opponent": "Opponent",
    "win_fraction": "Win fraction (a tie counts half)", "sensitivity": "Sensitivity", "consistency": "Consistency",
    "repetitions": "Repetitions", "pool": "Games of the pair", "wins_a": "Games A won", "wins_b": "Games B won",
}
#: headings that read differently in one table (the same CSV column name, another meaning)
TABLE_HEADINGS: dict[str, dict[str, str]] = {
    "pairwise_wtl": {"wins": "Games A won", "ties": "Games tied", "losses": "Games B won"},
    "pairwise_consistency": {"n": "Sample size (games)", "ties": "Games tied"},
}
#: column suffixes and how they read after the heading of what they qualify
_SUFFIXES = (
    ("_n_valid", "{}: valid samples"), ("_rank", "{} rank"), ("_p", "{} p-value"), ("_label", "{} strength"),
    ("_size", "{} strength (size only)"), ("_low", "{}, lower bound"), ("_high", "{}, upper bound"),
    ("_min", "{}, worst draw"), ("_max", "{}, best draw"), ("_samples", "{} per draw"),
)


def column_heading(column: str, table: str | None = None) -> str:
    """A table column in words: ``perseval_low`` -> ``PerSEval, lower bound``, ``pearson_p`` -> ``Pearson r
    p-value``, ``hj:rouge_l_rank`` -> ``HJ (ROUGE-L) rank``; an unknown name with its underscores as spaces.
    ``table`` picks a heading that differs in that table (``n`` of ``pairwise_consistency`` is a sample size)."""
    if table is not None and column in TABLE_HEADINGS.get(table, {}):
        return TABLE_HEADINGS[table][column]
    if column in HEADINGS:
        return HEADINGS[column]
    if column in METHOD_NAMES:
        return METHOD_NAMES[column]
    if _is_measure(column):
        return measure_name(column)
    for suffix, pattern in _SUFFIXES:
        base = column[: -len(suffix)]
        if not column.endswith(suffix) or not base:
            continue
        if base in METHOD_NAMES and suffix not in ("_low", "_high"):  # "Pearson p-value", not "Pearson r p-value"
            return pattern.format(base.capitalize())
        if base in HEADINGS or base in METHOD_NAMES or _is_measure(base):
            return pattern.format(column_heading(base))
    words = column.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


#: each report table's title and what it shows (the page's table captions)
TABLES: dict[str, tuple[str, str]] = {
    "scores": ("Scores per system and measure",
               "PerSEval with its bootstrap interval over documents, EGISES, DEGRESS, accuracy distance and P-Acc; "
               "HJ rows score the human ratings."),
    "table_perseval": ("Table 1 · PerSEval per system",
                       "One column per measure and its rank (1 = highest PerSEval)."),
    "table_egises": ("Table 7 · EGISES per system",
                     "One column per measure and its rank (1 = lowest EGISES: the least divergent, most responsive)."),
    "table_p_acc": ("Table 8 · P-Acc per system", "One column per measure and its rank (1 = highest P-Acc)."),
    "correlations": ("Table 2 · Correlation with human judgment",
                     "Every automatic PerSEval-X against every PerSEval-HJ-Y: Pearson, Spearman and Kendall τ-b with "
                     "two-sided p-values, strength labels (significance at p < 0.01) and bootstrap intervals."),
    "permutation_tests": ("Permutation tests: does A correlate with human judgment better than B?",
                          "Δ = r(A, HJ) − r(B, HJ) on z-scored scores; the p-value counts permutations with a Δ at "
                          "least as large (SacreROUGE's test)."),
    "beta_ablation": ("Figure 3 · β ablation",
                      "The HJ correlation of PerSEval at each EDP β, rescored from the same distances."),
    "borda_kendall": ("Table 5 · Borda-Kendall consensus against human judgment",
                      "Rankings combined by Borda count, correlated with the human-judgment ranking."),
    "rank_agreement": ("Table 3 · EGISES–PerSEval rank agreement",
                       "How far ranking the systems by EGISES and by PerSEval agree, per measure."),
    "stability": ("Tables 4/6 · Stability per system and level",
                  "PerSEval on shares of the data: the paper's definition (documents with replacement) and the "
                  "authors' code's (pair rows without replacement)."),
    "stability_summary": ("Tables 4/6 · Stability per measure",
                          "δ-bias and δ-variance (the largest over the systems) and ε-rank stability (1 = every "
                          "draw ranks the systems as all the data does)."),
    "raters": ("Rater quality",
               "Per rater: ratings, time on task, straight-lining, agreement with the other raters and "
               "Krippendorff's α without the rater."),
    "rater_agreement": ("Krippendorff's α (ordinal)",
                        "Over all rated pairs, pairs of two different texts (the one to quote) and pairs of a text "
                        "with itself; overall and per study."),
    "pairwise_ratings": ("Pairwise judgments · Elo and Bradley-Terry per criterion and system",
                         "Online Elo in file order, its bootstrap median and 2.5th-97.5th percentiles, Bradley-Terry "
                         "with the same percentiles, and each system's games won, tied and lost."),
    "pairwise_wtl": ("Pairwise judgments · win/tie/loss per criterion and system pair",
                     "Per pair of systems, the share of their games that A won, tied and B won (percent of the "
                     "pair's games, unrounded) and the counts."),
    "pairwise_win_fraction": ("Pairwise judgments · win fraction per criterion and ordered pair",
                              "The share of its games against the opponent that the system won, a tie counting "
                              "half: (wins + ties / 2) / games."),
    "pairwise_consistency": ("Pairwise judgments · consistency and sensitivity of adjacent systems",
                             "For each pair of systems next to each other in the criterion's Bradley-Terry ranking: "
                             "how often a sample of n games gives a significant verdict (sensitivity) and how often "
                             "two independent samples give the same significant winner (consistency)."),
    "edins": ("e-DINS per system",
              "DINS (deviation), PF (insensitivity) and e-DINS = DINS + PF (gamma = 1); lower is better. With "
              "ratings, the _hj columns: e-DINS-HJ, the rated pairs' distances in place of the summaries' JSDs."),
    "edins_gamma": ("e-DINS against gamma", "e-DINS = DINS + gamma x PF at gamma = 0, 0.1, ..., 1, per system."),
    "probe_grid": ("Prompt probes · EGISES per model and prompt style",
                   "iCOPERNICUS: each MODEL:STYLE system's EGISES (lower is more personalised)."),
    "probe_rows": ("Prompt probes · each model's probes",
                   "A < B: style B should personalise more; paradox when EGISES(B) >= EGISES(A); delta_pp = "
                   "(EGISES(A) - EGISES(B)) x 100."),
    "probe_summary": ("Prompt probes · per probe",
                      "Models with both styles, the paradox models and their mean drop, the passing models and their "
                      "mean boost (percentage points)."),
    "probe_adversarial": ("Prompt probes · adversarial worsening per model",
                          "Each contrastive style against its adversarial variant (a wrong partner in the prompt): "
                          "worsening_pp = (EGISES(adversarial) - EGISES(style)) x 100, worsened when positive; "
                          "gap_pp / gap_adversarial_pp = the probe's EGISES(B) - EGISES(A) before / after."),
    "probe_adversarial_summary": ("Prompt probes · adversarial worsening per probe",
                                  "Per contrastive style: models, those that worsened, mean worsening in "
                                  "percentage points and relative to EGISES(style) in %."),
    "probe_hj_agreement": ("Prompt probes · human judgment agreement",
                           "Each model's and probe's paradox flag from EGISES-HJ beside the automatic one."),
}


def caption(table: str) -> tuple[str, str]:
    """A report table's (title, what it shows); an unknown table's name in words and no description."""
    return TABLES.get(table, (column_heading(table), ""))


# ------------------------------------------------------------------------------------------------- warnings
def _r(cell: Mapping[str, Any]) -> float | None:
    number = _real(cell.get("r"))
    return None if number is None or math.isnan(number) else number


def cell_flags(cell: Mapping[str, Any]) -> list[str]:
    """Short warnings for one correlation ``{"r", "n", "note"?}``: ``few systems (n = 5)``, ``±1``, ``undefined``."""
    flags = []
    r, n = _r(cell), cell.get("n")
    if r is None:
        flags.append("undefined")
    if isinstance(n, int) and n < FEW_SYSTEMS:
        flags.append(f"few systems (n = {n})")
    if r is not None and abs(r) >= SATURATED:
        flags.append("±1")
    return flags


def correlation_warnings(cells: Iterable[Mapping[str, Any]], method: str) -> list[str]:
    """What a reader of a correlation grid must know, one sentence each: few systems behind the correlations,
    coefficients of ±1 (every cell: the grid is degenerate), undefined cells and why. ``cells`` are
    ``{"r", "n", "note"?}`` for one ``method``; an empty list when nothing is wrong."""
    cells = list(cells)
    if not cells:
        return []
    name = method_name(method)
    warnings: list[str] = []
    total = len(cells)
    small = [cell["n"] for cell in cells if isinstance(cell.get("n"), int) and cell["n"] < FEW_SYSTEMS]
    if small:
        which = "every correlation rests" if len(small) == total else f"{len(small)} of {total} correlations rest"
        warnings.append(
            f"Few systems: {which} on fewer than {FEW_SYSTEMS} systems (n = {min(small)}"
            f"{'' if min(small) == max(small) else f' to {max(small)}'}), so intervals are wide and a p-value "
            f"says little."
        )
    defined = [r for r in (_r(cell) for cell in cells) if r is not None]
    saturated = [r for r in defined if abs(r) >= SATURATED]
    if saturated:
        if len(saturated) == total:
            which = "the only" if total == 1 else "every"
            warnings.append(
                f"Degenerate: {which} {name} is ±1 (|r| ≥ {SATURATED}), so the grid cannot tell the measures apart. "
                f"Usually one system scores far from the others and decides the correlation alone (an outlier), or "
                f"the systems are too few; compare the rank coefficients (Spearman, Kendall)."
            )
        else:
            warnings.append(
                f"{len(saturated)} of {total} {name} values are ±1 (|r| ≥ {SATURATED}): one outlying system can "
                f"decide such a correlation alone."
            )
    undefined = [cell for cell in cells if _r(cell) is None]
    if undefined:
        notes = sorted({str(cell.get("note") or "").strip() for cell in undefined} - {""})
        why = "; ".join(notes) if notes else "a constant score or too few systems"
        which = ("no correlation could" if len(undefined) == total
                 else f"{len(undefined)} of {total} correlations could not")
        warnings.append(f"Undefined: {which} be computed ({why}).")
    return warnings


_ASCII = str.maketrans({"±": "+-", "≥": ">=", "≤": "<=", "−": "-", "–": "-", "ρ": "rho", "τ": "tau", "⚠": "!",
                        "Δ": "delta", "δ": "delta", "ε": "epsilon", "α": "alpha", "β": "beta", "·": "-"})


def ascii_text(text: str) -> str:
    """``text`` with the symbols above in ASCII (``±`` -> ``+-``), for a terminal."""
    return text.translate(_ASCII)


def cells_of(rows: Sequence[Mapping[str, Any]], method: str) -> list[dict[str, Any]]:
    """``{"r", "n", "note"}`` of ``method`` from flat correlation rows (``pearson``, ``pearson_p``, ``n``, ...:
    the correlations table and the command line's grid)."""
    return [{"r": row.get(method), "p": row.get(f"{method}_p"), "n": row.get("n"), "note": row.get("note")}
            for row in rows]


# ------------------------------------------------------------------------------------------------- the page
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
    """What ``report.js`` needs beside the report document to draw the figures in words: measure and coefficient
    names, the selected coefficient, per coefficient the grid's warnings and each cell's flags, and the β
    ablation's warnings (``report-display`` on the page)."""
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


# ------------------------------------------------------------------------------------------ pairwise judgments
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
    ``wins``, ``ties``, ``losses``), ``selected`` (``overall`` when present), ``settings`` (Elo, bootstrap,
    consistency and seed, in words) and ``regularised`` (one sentence per criterion whose Bradley-Terry fit was
    regularised)."""
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
        shown.append({"criterion": criterion, "name": criterion_name(criterion), "selected": criterion == selected,
                      "rows": rows})
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
