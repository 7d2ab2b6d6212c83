"""The benchmark tables (Tables 1, 7, 8) and the per-document values behind each system value (no Django)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from metaeval.core.perseval.pipeline import HUMAN_PREFIXES
from metaeval.core.perseval.studies.data import Scores
from metaeval.core.perseval.studies.rankings import ranks

NAN = float("nan")

#: the columns :func:`document_matrix` can split into per-document values
DOCUMENT_COLUMNS = ("perseval", "egises", "degress", "accuracy")


#: column -> (table of the paper, higher is better)
TABLE_COLUMNS: dict[str, tuple[str, bool]] = {
    "perseval": ("Table 1", True),
    "egises": ("Table 7", False),
    "p_acc": ("Table 8", True),
}


def benchmark_tables(scores: Scores, *, include_hj: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The benchmark tables: ``"perseval"`` (Table 1), ``"egises"`` (Table 7) and ``"p_acc"`` (Table 8).

    Each table has one row per system, with the systems in first-seen order over ``scores``. A row holds
    ``"system"``, then for every measure ``m`` the value ``row[m]`` (NaN where the system has no score)
    and its rank ``row[f"{m}_rank"]`` among the systems of that measure. PerSEval and P-Acc rank higher
    values first. EGISES ranks lower values first: it is a divergence, and Table 7 lists the least divergent
    (most responsive) model first. Human labels (``hj:``, ``hj-openai:``) are left out unless ``include_hj`` is set.
    """
    measures = [m for m in scores if include_hj or not m.startswith(HUMAN_PREFIXES)]
    systems = list(dict.fromkeys(system for m in measures for system in scores[m]))
    tables: dict[str, list[dict[str, Any]]] = {}
    for column, (_, higher) in TABLE_COLUMNS.items():
        values = {m: {s: float(getattr(v, column)) for s, v in scores[m].items()} for m in measures}
        ranked = {m: ranks(values[m], higher_is_better=higher) for m in measures}
        rows = []
        for system in systems:
            row: dict[str, Any] = {"system": system}
            for m in measures:
                row[m] = values[m].get(system, NAN)
                row[f"{m}_rank"] = ranked[m].get(system)
            rows.append(row)
        tables[column] = rows
    return tables


def document_matrix(
    scores: Scores,
    measure: str,
    column: str = "perseval",
    *,
    doc_ids: Sequence[str] | None = None,
) -> tuple[list[str], list[str], np.ndarray, np.ndarray | None]:
    """Per-document values of one measure: ``(systems, doc_ids, values, weights)``.

    ``systems`` is the order of ``scores[measure]``. ``doc_ids`` is the given order, or by default each
    document in the order first seen over the systems' ``per_document`` lists. ``values`` is a float array of
    shape ``[S, D]``. ``values[s, d]`` is NaN where system ``s`` has no value for document ``d``: it has no row
    there, or the document's value is NaN.

    **Contract.** For every system ``s``, ``scores[measure][s].<column>`` is the weighted mean of the finite
    entries of ``values[s]``::

        finite = ~isnan(values[s])
        system_value = sum(w[finite] * values[s][finite]) / sum(w[finite])   # NaN if nothing is finite

    Here ``w = weights[s]``, or all ones when ``weights`` is ``None``. The equality holds to floating-point
    summation order, about 1e-15. A bootstrap over documents may therefore resample the columns, with
    multiplicity, and take this mean per system. Per-document values do not depend on other documents, so
    resampling documents does not change them.

    Columns:

    * ``"perseval"``: the document PerSEval, the mean over its readers of DEGRESS_j * EDP_j (eq. 7; sec. 6).
      ``weights`` is ``None``: the system value is the NaN-skipping mean over documents.
    * ``"degress"``: the document DEGRESS. ``"egises"`` is 1 - the document DEGRESS (eq. 2; sec. 5).
      ``weights`` is ``None``. The row weighting of conventions sec. 5 happens inside a document, where each
      reader weighs as many rows as it has. Across documents the system value is the plain NaN-skipping mean
      of the document values, so no weight is needed.
    * ``"accuracy"``: the mean accuracy distance a_j over the document's PerSEval readers. ``weights`` is the
      number of those readers. The system accuracy is the mean pooled over readers, so each document weighs
      as much as its reader count (sec. 6).
    """
    if column not in DOCUMENT_COLUMNS:
        raise ValueError(f"document_matrix has no column {column!r}; choose from {', '.join(DOCUMENT_COLUMNS)}")
    by_system = scores[measure]
    systems = list(by_system)
    if doc_ids is None:
        doc_ids = list(dict.fromkeys(d.doc_id for s in systems for d in by_system[s].per_document))
    else:
        doc_ids = list(doc_ids)
    index = {doc_id: position for position, doc_id in enumerate(doc_ids)}
    values = np.full((len(systems), len(doc_ids)), np.nan)
    weights = np.zeros((len(systems), len(doc_ids))) if column == "accuracy" else None
    for row, system in enumerate(systems):
        detail = by_system[system]
        if column == "accuracy":
            pooled: dict[str, list[float]] = {}
            for reader in detail.per_reader:
                pooled.setdefault(reader.doc_id, []).append(reader.accuracy)
            for doc_id, items in pooled.items():
                if doc_id in index:
                    values[row, index[doc_id]] = sum(items) / len(items)
                    weights[row, index[doc_id]] = len(items)  # type: ignore[index]
            continue
        for document in detail.per_document:
            if document.doc_id not in index:
                continue
            if column == "perseval":
                value = document.perseval
            elif column == "degress":
                value = document.degress
            else:
                value = 1.0 - document.degress
            values[row, index[document.doc_id]] = value
    return systems, doc_ids, values, weights
