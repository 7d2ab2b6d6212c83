"""The pairwise-accuracy views for the page (conventions sec. 26 item 11): Table 2's view (``pair_accuracy`` and
``close_pairs`` of a report) and the pairwise section's judges against people (``pairwise_judge_accuracy``), as
rows of text in the report's one number format."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from metaeval.core.display.names import measure_name
from metaeval.core.display.numbers import MISSING, _real, fmt_number
from metaeval.core.display.page import criterion_name

__all__ = ["bucket_name", "judge_accuracy_view", "judges_vs_people_view", "pair_accuracy_view"]


def _interval(row: Mapping[str, Any], name: str) -> str:
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    if _real(low) is None and _real(high) is None:
        return MISSING
    return f"{fmt_number(low)} to {fmt_number(high)}"


def _edge(value: object) -> str:
    number = _real(value)
    return MISSING if number is None else f"{number:g}"


def bucket_name(low: object, high: object) -> str:
    """A close-pair bucket in words: ``below 0.05``, ``0.05 to 0.1``, ``0.1 and more`` (``high`` None or inf: no
    upper edge)."""
    top = _real(high)
    if top is None or math.isinf(top):
        return f"{_edge(low)} and more"
    if _real(low) == 0:
        return f"below {_edge(high)}"
    return f"{_edge(low)} to {_edge(high)}"


def _statistics(row: Mapping[str, Any], names: Sequence[str]) -> dict[str, str]:
    out = {}
    for name in names:
        out[name] = fmt_number(row.get(name))
        out[f"{name}_interval"] = _interval(row, name)
    return out


def _common(row: Mapping[str, Any]) -> dict[str, str]:
    return {"pairs": fmt_number(row.get("pairs")), "systems": fmt_number(row.get("systems")),
            "epsilon": fmt_number(row.get("epsilon")), "note": str(row.get("note") or ""),
            "dropped": str(row.get("dropped") or "").replace(";", ", ")}


def pair_accuracy_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """Table 2's pairwise-accuracy view, or None when the report has none: ``systems`` (system level: accuracy,
    acc_eq, SPA with intervals, epsilon), ``documents`` (group-by-item: accuracy, acc_eq with intervals), ``buckets``
    (close pairs: accuracy, acc_eq and the three correlations), each row with ``auto`` and ``hj`` in words;
    ``commands`` (the command that writes the rows, per human measure); the settings in words."""
    tables = report.get("tables") or {}
    rows = tables.get("pair_accuracy") or []
    section = report.get("pair_accuracy") or {}
    if not rows:
        return None

    def names(row: Mapping[str, Any]) -> dict[str, str]:
        return {"auto": measure_name(str(row.get("metric"))), "hj": measure_name(str(row.get("human")))}

    systems = [{**names(row), **_common(row), **_statistics(row, ("accuracy", "acc_eq", "spa"))}
               for row in rows if row.get("level") == "system"]
    documents = [{**names(row), **_common(row), "documents": fmt_number(row.get("documents")),
                  **_statistics(row, ("accuracy", "acc_eq"))} for row in rows if row.get("level") == "document"]
    buckets = [{**names(row), **_common(row), "bucket": bucket_name(row.get("bucket_low"), row.get("bucket_high")),
                **{key: fmt_number(row.get(key)) for key in ("accuracy", "acc_eq", "pearson", "spearman", "kendall")}}
               for row in tables.get("close_pairs") or []]
    return {
        "systems": systems, "documents": documents, "buckets": buckets,
        "calibrated": any((_real(row.get("epsilon")) or 0) > 0 for row in rows),
        "commands": [{"hj": measure_name(str(h)), "command": str(text)}
                     for h, text in (section.get("commands") or {}).items()],
        "n_boot": fmt_number(section.get("n_boot")), "n_permutations": fmt_number(section.get("n_permutations")),
        "seed": str(section.get("seed", MISSING)),
        "edges": ", ".join(_edge(edge) for edge in section.get("close_pairs") or [] if edge is not None),
    }


def judge_accuracy_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pairwise section's judges against people (conventions sec. 26 item 12), or None when the report has
    none: per judge and criterion a row (accuracy, acc_eq, SPA with intervals; the Bradley-Terry leaderboards'
    accuracy and acc_eq) as text; ``note`` when the section says why there are none."""
    section = (report.get("pairwise") or {}).get("judge_accuracy")
    if not section:
        return None
    rows = (report.get("tables") or {}).get("pairwise_judge_accuracy") or []
    systems = [{"judge": str(row.get("judge")), "criterion": criterion_name(str(row.get("criterion"))),
                "items": fmt_number(row.get("items")), "cases": fmt_number(row.get("documents")), **_common(row),
                **_statistics(row, ("accuracy", "acc_eq", "spa")),
                **{key: fmt_number(row.get(key)) for key in ("bt_accuracy", "bt_acc_eq", "bt_epsilon")}}
               for row in rows]
    return {"systems": systems, "note": str(section.get("note") or ""),
            "human_kind": str(section.get("human_kind") or ""), "n_boot": fmt_number(section.get("n_boot")),
            "n_permutations": fmt_number(section.get("n_permutations")), "seed": str(section.get("seed", MISSING))}


def judges_vs_people_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pairwise section's judges against people item by item (conventions sec. 28-29; the same tables as the
    study's judges-vs-people page, :func:`metaeval.core.judges.versus_view.versus_view`), one entry per criterion
    and ``overall``; None when the report has no such part, ``note`` alone when it says why there is nothing."""
    from metaeval.core.judges.versus_view import versus_view
    from metaeval.core.pairwise.report import VERSUS_TABLES

    section = (report.get("pairwise") or {}).get("judges_vs_people")
    if not section:
        return None
    if not section.get("judges"):
        return {"note": str(section.get("note") or ""), "criteria": []}
    tables = report.get("tables") or {}
    result = {**section, "tables": {name: tables.get(table, []) for name, table in VERSUS_TABLES.items()}}
    criteria = [*section.get("criteria", []), "overall"]
    return {"note": "", "judges": section["judges"], "epsilon": section.get("epsilon"),
            "alpha": section.get("alpha"), "n_boot": section.get("n_boot"),
            "criteria": [{"name": criterion, "label": criterion_name(criterion), "view": versus_view(result, criterion)}
                         for criterion in criteria]}
