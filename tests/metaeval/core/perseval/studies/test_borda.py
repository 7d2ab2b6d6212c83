"""metaeval.core.perseval.studies: App. B.2 and Table 5, the Borda-Kendall consensus."""
from __future__ import annotations

import math

import pytest

from metaeval.core.perseval.studies import borda_kendall, borda_vs_hj
from tests.metaeval.core.perseval.studies.hand_case import fake


def test_borda_kendall_three_systems():
    # sums: A 1+3 = 4, B 2+1 = 3, C 3+2 = 5
    assert borda_kendall([["A", "B", "C"], ["B", "C", "A"]]) == ["B", "A", "C"]
    # sums: A 3, B 3, C 6: the tie keeps the first ranking's order
    assert borda_kendall([["A", "B", "C"], ["B", "A", "C"]]) == ["A", "B", "C"]
    assert borda_kendall([["B", "A", "C"], ["A", "B", "C"]]) == ["B", "A", "C"]
    assert borda_kendall([["C", "A", "B"]]) == ["C", "A", "B"]
    with pytest.raises(ValueError):
        borda_kendall([["A", "B"], ["A", "C"]])
    with pytest.raises(ValueError):
        borda_kendall([])


def test_borda_vs_hj_by_hand():
    scores = {
        "m": {"A": fake(perseval=0.4, accuracy=0.9), "B": fake(perseval=0.3, accuracy=0.1),
              "C": fake(perseval=0.2, accuracy=0.2), "D": fake(perseval=0.1, accuracy=0.3)},
        "hj:x": {"A": fake(perseval=0.8), "B": fake(perseval=0.9), "C": fake(perseval=0.1), "D": fake(perseval=0.5)},
    }
    rows = borda_vs_hj(scores, "hj:x")
    assert [(r["perseval_measure"], r["accuracy_measure"]) for r in rows] == [("m", None), ("m", "m")]
    alone, combined = rows
    assert alone["ranking"] == ["A", "B", "C", "D"] and alone["hj_ranking"] == ["B", "A", "D", "C"]
    assert alone["spearman"] == pytest.approx(0.6) and alone["kendall"] == pytest.approx(1 / 3)
    # PSE ranking A B C D, accuracy ranking (lower distance first) B C D A: sums A 5, B 3, C 5, D 7; A and C
    # tie and stay tied. -sums vs HJ (A .8, B .9, C .1, D .5): ranks x = (2.5, 1, 2.5, 4), y = (2, 1, 4, 3),
    # rho = 3 / sqrt(4.5 * 5); pairs: AB, AD, BC, BD concordant, CD discordant, AC tied in x:
    # tau-b = (4 - 1) / sqrt((6 - 1) * 6)
    assert combined["aggregate"] == "BK(PSE-m, m)"
    assert combined["ranking"] == ["B", "A", "C", "D"] and combined["borda_sums"] == [3.0, 5.0, 5.0, 7.0]
    assert combined["spearman"] == pytest.approx(3 / math.sqrt(22.5))
    assert combined["kendall"] == pytest.approx(3 / math.sqrt(30))


def test_borda_vs_hj_keeps_tied_perseval_values_tied():
    """Tied PerSEval values are one rank (average), not broken by input order: the alone row correlates values."""
    scores = {
        "m": {"A": fake(perseval=0.5, accuracy=0.1), "B": fake(perseval=0.5, accuracy=0.2),
              "C": fake(perseval=0.1, accuracy=0.3)},
        "hj:x": {"A": fake(perseval=0.2), "B": fake(perseval=0.9), "C": fake(perseval=0.1)},
    }
    alone, combined = borda_vs_hj(scores, "hj:x")
    # values (.5, .5, .1) vs (.2, .9, .1): AB tied in x, AC and BC concordant: tau-b = 2 / sqrt(2 * 3)
    assert alone["kendall"] == pytest.approx(2 / math.sqrt(6))
    # PSE average ranks A 1.5, B 1.5, C 3; accuracy ranks A 1, B 2, C 3: sums A 2.5, B 3.5, C 6
    assert combined["borda_sums"] == [2.5, 3.5, 6.0] and combined["ranking"] == ["A", "B", "C"]
