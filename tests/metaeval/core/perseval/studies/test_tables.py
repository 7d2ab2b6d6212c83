"""metaeval.core.perseval.studies: the benchmark tables (Tables 1, 7, 8) and the per-document matrix."""
from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval.core.perseval import studies
from metaeval.core.perseval.studies import benchmark_tables, document_matrix, score
from tests.metaeval.core.perseval.studies.hand_case import Y, fake, hand_value, proportion, tiny_data


def test_benchmark_tables_rank_each_column_in_its_direction():
    scores = {
        "m": {"A": fake(egises=0.2, perseval=0.3, p_acc=0.1), "B": fake(egises=0.1, perseval=0.3, p_acc=0.4),
              "C": fake(egises=0.9, perseval=0.5, p_acc=float("nan"))},
        "n": {"B": fake(egises=0.5, perseval=0.1)},
        "hj:m": {"A": fake()},
    }
    tables = benchmark_tables(scores)
    assert set(tables) == {"perseval", "egises", "p_acc"}
    perseval = {row["system"]: row for row in tables["perseval"]}
    assert [row["system"] for row in tables["perseval"]] == ["A", "B", "C"]
    assert "hj:m" not in perseval["A"]
    assert (perseval["C"]["m_rank"], perseval["A"]["m_rank"], perseval["B"]["m_rank"]) == (1, 2, 2)  # tie shares 2
    assert perseval["A"]["n_rank"] is None and math.isnan(perseval["A"]["n"]) and perseval["B"]["n_rank"] == 1
    egises = {row["system"]: row for row in tables["egises"]}
    assert (egises["B"]["m_rank"], egises["A"]["m_rank"], egises["C"]["m_rank"]) == (1, 2, 3)  # lower is better
    assert egises["B"]["m"] == 0.1
    p_acc = {row["system"]: row for row in tables["p_acc"]}
    assert (p_acc["B"]["m_rank"], p_acc["A"]["m_rank"], p_acc["C"]["m_rank"]) == (1, 2, None)
    assert "hj:m_rank" in benchmark_tables(scores, include_hj=True)["perseval"][0]


def test_document_matrix_on_the_hand_case():
    data = tiny_data(drop_s2_d2=True)
    scores = score(data)
    systems, doc_ids, values, weights = document_matrix(scores, "m")
    assert systems == ["S1", "S2", "S3"] and doc_ids == ["d1", "d2"] and weights is None
    for row, system in enumerate(systems):
        assert values[row, 0] == pytest.approx(hand_value(system, 0), abs=1e-15)
    assert math.isnan(values[1, 1])  # S2 has no d2
    assert scores["m"]["S2"].perseval == values[1, 0]
    _, order, reordered, _ = document_matrix(scores, "m", "egises", doc_ids=["d2", "d1"])
    assert order == ["d2", "d1"]
    assert reordered[0, 0] == pytest.approx(1 - proportion(Y["S1"][1], 0.5), abs=1e-15)
    with pytest.raises(ValueError):
        document_matrix(scores, "m", "p_acc")


@pytest.mark.parametrize("label", ["rouge_l", "hj:rouge_l"])
def test_document_matrix_means_reproduce_the_system_values(demo_data, label):
    scores = score(demo_data)
    for column in studies.DOCUMENT_COLUMNS:
        systems, doc_ids, values, weights = document_matrix(scores, label, column)
        if label == "rouge_l":
            assert doc_ids == demo_data.doc_ids  # every demo document has 3-4 readers
        assert (weights is None) == (column != "accuracy")
        w = np.ones_like(values) if weights is None else weights
        for row, system in enumerate(systems):
            finite = ~np.isnan(values[row])
            mean = np.sum(w[row][finite] * values[row][finite]) / np.sum(w[row][finite])
            assert mean == pytest.approx(getattr(scores[label][system], column), abs=1e-12), (column, system)
