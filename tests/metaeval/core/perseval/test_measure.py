"""metaeval.core.perseval.measure: the conventions' edge rules, one at a time, computed by hand."""
from __future__ import annotations

import math

import pytest

from metaeval.core.perseval.measure import (
    DocPairs,
    Params,
    document_rows,
    p_acc,
    proportion,
    score_system,
    shifted_sigmoid,
    weighted_softmax,
)

NAN = float("nan")


def test_proportion_uses_python_min_max_with_y_first():
    # (min + 1e-5) / (max + 1e-5)
    assert proportion(0.2, 0.4) == pytest.approx((0.2 + 1e-5) / (0.4 + 1e-5), abs=0)
    assert proportion(0.4, 0.2) == proportion(0.2, 0.4)
    # NaN X with a finite Y: min(Y, NaN) = Y and max(Y, NaN) = Y, so p = 1 (conventions sec. 4.4)
    assert proportion(0.3, NAN) == 1.0
    # NaN Y: min(NaN, X) = NaN, so p is NaN
    assert math.isnan(proportion(NAN, 0.3))
    # identical zero distances: (0 + eps) / (0 + eps) = 1
    assert proportion(0.0, 0.0) == 1.0


def test_weighted_softmax_by_hand():
    # readers a, b, c; sigma(u_a, d) = 0.5 so w_ab = 0.2/0.5 = 0.4 and w_ac = 0.6/0.5 = 1.2
    pairs = {("a", "b"): 0.2, ("a", "c"): 0.6}
    x = weighted_softmax(pairs, {"a": 0.5})
    total = math.exp(0.4) + math.exp(1.2)
    assert x[("a", "b")] == pytest.approx(math.exp(0.4) / total * 0.2, rel=1e-15)
    assert x[("a", "c")] == pytest.approx(math.exp(1.2) / total * 0.6, rel=1e-15)


def test_zero_document_distance_gives_zero_weight():
    # sigma(u_a, d) = 0: ZeroDivisionError in the reference -> w = 0, so both exp(w) = 1 and the softmax is 1/2
    x = weighted_softmax({("a", "b"): 0.2, ("a", "c"): 0.6}, {"a": 0.0})
    assert x[("a", "b")] == 0.5 * 0.2
    assert x[("a", "c")] == 0.5 * 0.6


def test_overflowing_exponent_gives_nan_like_numpy():
    # w = 1/1e-300 overflows exp to inf; inf / inf = NaN for that pair, 0 * ... for the other
    x = weighted_softmax({("a", "b"): 1.0, ("a", "c"): 0.5}, {"a": 1e-300})
    assert math.isnan(x[("a", "b")]) and math.isnan(x[("a", "c")])


def test_pairs_without_document_distance_are_dropped():
    doc = DocPairs(
        "d", user_doc={"a": 0.5}, system_doc={"a": 0.5, "b": 0.5},
        user_pairs={("a", "b"): 0.2, ("b", "a"): 0.2}, system_pairs={("a", "b"): 0.3, ("b", "a"): 0.3},
        accuracy={"a": 0.1, "b": 0.1},
    )
    rows = document_rows(doc)
    assert [(row.j, row.k) for row in rows] == [("a", "b")]


def test_floor_values_of_the_penalty():
    # ADP = ACP = S_{4,1}(0) = 1/(1 + 10^4); EDP = 1 - S_{3,beta}(2/(1+10^4)) + 1e-7 (conventions sec. 6)
    floor = 1 / (1 + 10**4)
    assert shifted_sigmoid(0.0, 4, 1) == floor
    best_beta1 = 1 - 1 / (1 + 10**3 * math.exp(-10 * 2 * floor)) + 1e-7
    best_beta17 = 1 - 1 / (1 + 10**3 * math.exp(-(10**1.7) * 2 * floor)) + 1e-7
    assert round(best_beta1, 6) == 0.998999
    assert round(best_beta17, 6) == 0.998991
    # a perfect system (every accuracy distance 0, identical proportions) gets exactly that EDP
    doc = DocPairs(
        "d", user_doc={"a": 0.5, "b": 0.5}, system_doc={"a": 0.5, "b": 0.5},
        user_pairs={("a", "b"): 0.2, ("b", "a"): 0.2}, system_pairs={("a", "b"): 0.2, ("b", "a"): 0.2},
        accuracy={"a": 0.0, "b": 0.0},
    )
    score = score_system([doc], Params(beta=1.7))
    assert score.degress == 1.0
    assert score.perseval == pytest.approx(best_beta17, abs=1e-15)
    assert score.egises == 0.0


def test_nan_accuracy_is_the_maximum_distance():
    doc = DocPairs(
        "d", user_doc={"a": 0.5, "b": 0.5}, system_doc={"a": 0.5, "b": 0.5},
        user_pairs={("a", "b"): 0.2, ("b", "a"): 0.2}, system_pairs={("a", "b"): 0.2, ("b", "a"): 0.2},
        accuracy={"a": NAN, "b": 0.0},
    )
    score = score_system([doc])
    assert score.accuracy == 0.5  # (1.0 + 0.0) / 2
    reader = {detail.reader: detail for detail in score.per_reader}
    assert reader["a"].accuracy == 1.0


def test_p_acc_is_negative_in_the_papers_example():
    # Sec. 4: alpha = 0.5, beta = 1, EGISES >= 0.9 and Score_Acc <= 0.35 gives P-Acc < 0
    value = p_acc(1 - 0.35, 0.9, alpha=0.5, beta=1.0)
    assert value == pytest.approx(0.35 - 0.5 / (1 + math.exp(-0.9)), abs=1e-15)
    assert value < 0
    # Score_Acc * (1 - alpha * f_sig / Score_Acc), the form of eq. 3, is the same number
    score_acc = 0.8
    f_sig = 1 / (1 + math.exp(-0.3))
    assert p_acc(0.2, 0.3) == pytest.approx(score_acc * (1 - 0.5 * f_sig / score_acc), abs=1e-15)


def test_hand_worked_three_reader_example():
    """The example worked out step by step in tests/metaeval/core/hand_example.py, through the fast path."""
    import numpy as np

    from metaeval.core.measures.base import Measure
    from metaeval.core.measures.distances import compute, corpus_doc_pairs, plan_corpus
    from tests.metaeval.core import hand_example as hand

    class Table(Measure):
        name = "hand_table"

        def distances(self, pairs):
            return np.array([hand.table_distance(a, b) for a, b in pairs])

    plan = plan_corpus(hand.build_corpus())
    distance, _ = compute(Table(), plan.text_pairs())
    score = score_system(corpus_doc_pairs(plan, hand.SYSTEM, distance))
    for key in ("egises", "degress", "perseval", "accuracy", "egises_accuracy"):
        assert getattr(score, key) == pytest.approx(hand.EXPECTED[key], abs=1e-12), key
    # the single-reader document d3 is absent everywhere
    assert [d.doc_id for d in score.per_document] == ["d1", "d2"]
    # properties: PerSEval <= DEGRESS, EGISES = 1 - DEGRESS
    assert score.perseval <= score.degress + 1e-12
    assert score.egises == 1 - score.degress


def test_icopernicus_rounding_by_hand():
    """egises_decimals = 4 (compat icopernicus): X and Y rounded to 4 decimals before each proportion, the system
    EGISES rounded to 4 decimals; DEGRESS keeps the unrounded EGISES's complement."""
    doc = DocPairs(
        "d", user_doc={"a": 0.5, "b": 0.7}, system_doc={"a": 0.45, "b": 0.65},
        user_pairs={("a", "b"): 0.123456, ("b", "a"): 0.123456},
        system_pairs={("a", "b"): 0.130007, ("b", "a"): 0.130007},
        accuracy={"a": 0.1, "b": 0.2},
    )
    # one pair per origin: the softmax is 1, so X = sigma_u and Y = sigma_s
    exact = {(r.j, r.k): (r.x, r.y, r.p) for r in document_rows(doc)}
    rounded = {(r.j, r.k): (r.x, r.y, r.p) for r in document_rows(doc, decimals=4)}
    assert exact[("a", "b")][:2] == (0.123456, 0.130007)
    assert rounded[("a", "b")][:2] == (0.1235, 0.13)
    p = (0.1235 + 1e-5) / (0.13 + 1e-5)
    assert rounded[("a", "b")][2] == p and rounded[("b", "a")][2] == p
    score = score_system([doc], Params(egises_decimals=4))
    assert score.degress == p and score.egises == round(1 - p, 4) == 0.05
    plain = score_system([doc])
    assert plain.egises == 1 - (0.123456 + 1e-5) / (0.130007 + 1e-5)
    with pytest.raises(ValueError, match="egises_decimals"):
        Params(egises_decimals=-1)
