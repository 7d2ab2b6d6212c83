"""What the judges-vs-people page and the report's sub-section draw of one criterion of
:func:`metaeval.core.judges.versus.judges_vs_people`: numbers formatted, judges (and prompt versions) as columns.
No Django."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from metaeval.core.judges.versus import PEOPLE

__all__ = ["AGREEMENT_METRICS", "fmt", "interval", "versus_view"]

#: the agreement table's rows: (key of the agreement row, label, the people's own value's key or None)
AGREEMENT_METRICS = (
    ("items", "Items both judged", None),
    ("accuracy", "Accuracy (same outcome as the people)", None),
    ("cohen_kappa", "Cohen's kappa", None),
    ("decisive_accuracy", "Accuracy where neither says tie", None),
    ("ceiling_items", "Items with two or more people", None),
    ("human_human", "People with each other (the ceiling)", None),
    ("judge_human", "Judge with each person, same items", None),
    ("position_consistency", "Position consistency (same verdict in both orders)", None),
    ("judge_first_shown", "Prefers the text shown first", "people_first_shown"),
    ("self_consistency", "Self-consistency over runs", None),
    ("judge_longer", "The longer text's mean score with the judge", "human_longer"),
)


def fmt(value: Any, digits: int = 3) -> str:
    """A number as the page shows it: counts as they are, other numbers to ``digits`` decimals, None as a dash."""
    if value is None:
        return "—"
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def interval(row: Mapping[str, Any], name: str) -> str:
    """``estimate [low, high]`` of the columns ``name``, ``name_low``, ``name_high``."""
    if row.get(name) is None:
        return "—"
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    return fmt(row[name]) + ("" if low is None else f" [{fmt(low)}, {fmt(high)}]")


def _of(rows: Sequence[Mapping[str, Any]], criterion: str) -> list[Mapping[str, Any]]:
    return [row for row in rows if row.get("criterion") == criterion]


def _bias(judge: str, row: Mapping[str, Any]) -> list[str]:
    lines = []
    if row.get("judge_first_shown") is not None and row.get("people_first_shown") is not None:
        lines.append(f"{judge} prefers the text shown first in {100 * row['judge_first_shown']:.0f} % of its "
                     f"decisive judgments; the people in {100 * row['people_first_shown']:.0f} %.")
    if row.get("judge_longer") is not None and row.get("human_longer") is not None:
        lines.append(f"{judge} and the longer text: its mean score (a win 1, a tie 0.5) is "
                     f"{100 * row['judge_longer']:.0f} % with the judge, {100 * row['human_longer']:.0f} % with the "
                     f"people ({row['length_items']} items whose texts' lengths differ; 50 % is no preference).")
    return lines


def versus_view(result: Mapping[str, Any], criterion: str) -> dict[str, Any]:
    """The page's tables of ``criterion`` (module docstring); ``judges`` the columns in order."""
    tables = result.get("tables") or {}
    judges = list(result.get("judges") or [])
    agreement = {row["judge"]: row for row in _of(tables.get("agreement", []), criterion)}
    metrics = []
    for key, label, people_key in AGREEMENT_METRICS:
        people = "—"
        if people_key is not None and agreement:
            first = next(iter(agreement.values()))
            people = fmt(first.get(people_key)) if people_key == "people_first_shown" else "—"
        metrics.append({"key": key, "label": label, "people": people,
                        "cells": [fmt(agreement.get(judge, {}).get(key)) for judge in judges]})
        if people_key == "human_longer":
            metrics.append({"key": "human_longer", "label": "The longer text's mean score with the people",
                            "people": "", "cells": [fmt(agreement.get(judge, {}).get(people_key))
                                                    for judge in judges]})
    sources = [PEOPLE, *judges]
    cells = {(row["source"], row["other"]): row for row in _of(tables.get("matrix", []), criterion)}
    matrix = [{"source": source, "cells": [{"value": fmt(cells.get((source, other), {}).get("agreement")),
                                            "items": cells.get((source, other), {}).get("items", 0)}
                                           for other in sources]} for source in sources]
    alt = [{**row, "omega_text": fmt(row.get("omega")), "rho_text": fmt(row.get("rho"))}
           for row in _of(tables.get("alt_test", []), criterion)]
    ppi = [{**row, "human_text": interval(row, "human"), "ppi_text": interval(row, "ppi"),
            "ppi_plus_text": interval(row, "ppi_plus"), "lambda_text": fmt(row.get("lambda"))}
           for row in _of(tables.get("ppi", []), criterion)]
    notes = []
    if ppi and not any(row.get("unlabeled") for row in ppi):
        notes.append("PPI and PPI++ need items a judge judged and no person did; every judged item here has "
                     "people's judgments too, so only the people-only estimates are given.")
    if alt and not any(row.get("items") for row in alt):
        notes.append("The alternative annotator test needs items judged by at least three people; there are none "
                     "here, so it is untested.")
    style: list[dict[str, Any]] = []
    for source in sources:
        rows = sorted((row for row in _of(tables.get("style", []), criterion) if row["source"] == source),
                      key=lambda row: (row["rank_nostyle"] is None, row["rank_nostyle"] or 0))
        if rows:
            style.append({"source": source, "changed": any(r["rank_nostyle"] != r["rank_style"] for r in rows),
                          "rows": [{**row, "bt_nostyle_text": fmt(row["bt_nostyle"], 1),
                                    "bt_style_text": fmt(row["bt_style"], 1)} for row in rows]})
    warnings = [line for line in result.get("warnings", []) if f" in {criterion}:" in line or "no style" in line]
    bias = [line for judge in judges if judge in agreement for line in _bias(judge, agreement[judge])]
    return {"judges": judges, "sources": sources, "metrics": metrics, "matrix": matrix, "alt_test": alt,
            "ppi": ppi, "style": style, "warnings": warnings, "bias": bias, "notes": notes}
