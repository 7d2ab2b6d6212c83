"""The report's pairwise-accuracy view of Table 2 (issue 33; conventions sec. 26 item 11): every automatic measure
against every human-judgment measure by system pairs, from the per-document values the report already has (no
second scoring). No Django.

For each human measure H and automatic measure A (the report's order: H outer, A inner) the rows are
:func:`metaeval.core.stats.meta_accuracy.meta_accuracy_rows` of A's and H's PerSEval with tie calibration, the
report's close-pair buckets, ``n_boot``, ``n_permutations``, ``confidence`` and the report's own ``seed``: exactly
what ``python -m metaeval meta-accuracy scores.csv --human H --documents documents.csv --tie-calibration
--buckets ... --seed SEED`` writes on the report folder's files (:func:`command`). The system and document rows
form the ``pair_accuracy`` table, the bucket rows the ``close_pairs`` table; both keep the command's columns in
its order, less those that never apply to them.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from metaeval.core.perseval import studies
from metaeval.core.stats.meta_accuracy import COLUMNS, DocumentValues, meta_accuracy_rows

__all__ = ["BUCKET_COLUMNS", "PAIR_COLUMNS", "TABLES", "bucket_edges", "command", "pairs_section"]

#: the report tables this view adds (report["tables"] names)
TABLES = ("pair_accuracy", "close_pairs")
#: the ``pair_accuracy`` table's columns: the command's, less the bucket edges
PAIR_COLUMNS = tuple(column for column in COLUMNS if column not in ("bucket_low", "bucket_high"))
#: the ``close_pairs`` table's columns: the command's, less SPA, the intervals and the document count (a bucket
#: has none of them)
BUCKET_COLUMNS = tuple(column for column in COLUMNS if column not in (
    "level", "documents", "spa", "accuracy_low", "accuracy_high", "acc_eq_low", "acc_eq_high", "spa_low",
    "spa_high", "n_valid"))


def bucket_edges(close_pairs: Sequence[float]) -> list[float]:
    """The buckets' edges from the ``close_pairs`` setting (lower edges): those and infinity."""
    return [float(edge) for edge in close_pairs] + [math.inf]


def _edge_text(edge: float) -> str:
    return "inf" if math.isinf(edge) else repr(float(edge))


def command(human: str, *, close_pairs: Sequence[float], n_boot: int, n_permutations: int, confidence: float,
            seed: int) -> str:
    """The ``meta-accuracy`` command that writes the view's rows of ``human`` from a report folder."""
    edges = ",".join(_edge_text(edge) for edge in bucket_edges(close_pairs))
    return (f"python -m metaeval meta-accuracy scores.csv --human {human} --documents documents.csv "
            f"--tie-calibration --buckets {edges} --n-boot {n_boot} --n-permutations {n_permutations} "
            f"--confidence {confidence!r} --seed {seed}")


def _documents(scores: studies.Scores, label: str) -> DocumentValues:
    systems, doc_ids, values, _ = studies.document_matrix(scores, label, "perseval")
    return DocumentValues(tuple(systems), tuple(doc_ids), values)


def _cell(scores: studies.Scores, auto: str, human: str, **settings: Any) -> list[dict[str, object]]:
    """The command's rows of one pair of measures; without the per-document part (and a note saying why) where
    the per-document values do not average to the system values."""
    values = {label: {system: score.perseval for system, score in scores[label].items()} for label in (auto, human)}
    try:
        return meta_accuracy_rows(auto, human, values[auto], values[human], metric_documents=_documents(scores, auto),
                                  human_documents=_documents(scores, human), **settings)
    except ValueError as exc:  # the per-document part only: the system rows need no documents
        rows = meta_accuracy_rows(auto, human, values[auto], values[human], **settings)
        for row in rows:
            row["note"] = "; ".join(filter(None, [str(row["note"] or ""), f"no document level: {exc}"]))
        return rows


def pairs_section(
    scores: studies.Scores, auto: Sequence[str], human: Sequence[str], *, close_pairs: Sequence[float], n_boot: int,
    n_permutations: int, confidence: float, seed: int,
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """``(section, tables)``: the view's settings and the command per human measure, and the two tables of
    :data:`TABLES` (module docstring)."""
    settings = {"tie_calibration": True, "buckets": bucket_edges(close_pairs), "n_boot": n_boot,
                "n_permutations": n_permutations, "confidence": confidence, "seed": seed}
    pairs: list[dict[str, Any]] = []
    buckets: list[dict[str, Any]] = []
    for h in human:
        for a in auto:
            for row in _cell(scores, a, h, **settings):
                if row["bucket_low"] is None:
                    pairs.append({column: row[column] for column in PAIR_COLUMNS})
                else:
                    buckets.append({column: row[column] for column in BUCKET_COLUMNS})
    section = {
        "tie_calibration": True, "close_pairs": bucket_edges(close_pairs), "n_boot": n_boot,
        "n_permutations": n_permutations, "confidence": confidence, "seed": seed,
        "commands": {h: command(h, close_pairs=close_pairs, n_boot=n_boot, n_permutations=n_permutations,
                                confidence=confidence, seed=seed) for h in human},
    }
    return section, {"pair_accuracy": pairs, "close_pairs": buckets}


def rows_of(tables: Mapping[str, Sequence[Mapping[str, Any]]], human: str) -> list[Mapping[str, Any]]:
    """The view's rows of ``human`` in the command's order (per automatic measure: the system row, its buckets,
    the document row), for comparing with the command's output."""
    out: list[Mapping[str, Any]] = []
    pairs = [row for row in tables.get("pair_accuracy", []) if row["human"] == human]
    for metric in dict.fromkeys(row["metric"] for row in pairs):
        mine = [row for row in pairs if row["metric"] == metric]
        out += [row for row in mine if row["level"] == "system"]
        out += [row for row in tables.get("close_pairs", []) if row["human"] == human and row["metric"] == metric]
        out += [row for row in mine if row["level"] == "document"]
    return out
