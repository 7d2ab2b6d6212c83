"""Accuracy against an assumed truth ranking with a cluster bootstrap over cases (AuPEL sec. 5.1)."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.core.pairwise.accuracy import judgment_scores, truth_accuracy

TRUTH = ["gold", "xxl", "xl"]
JUDGMENTS = [
    ("c1", "gold", "xl", "model_a"),  # agrees
    ("c1", "xl", "xxl", "model_a"),  # disagrees (xl over xxl)
    ("c2", "xxl", "gold", "model_b"),  # agrees
    ("c2", "xl", "gold", "tie"),  # tie
    ("c3", "xxl", "xl", "model_a"),  # agrees
    ("c3", "xxl", "base", "model_a"),  # skipped: base is not ranked
    ("c3", "xl", "xl", "tie"),  # skipped: a system against itself
]


def test_hand_worked_scores_and_tie_credit() -> None:
    cases, scores, skipped = judgment_scores(JUDGMENTS, TRUTH)
    assert cases == ["c1", "c1", "c2", "c2", "c3"]
    assert scores == [1.0, 0.0, 1.0, 0.0, 1.0]
    assert skipped == 2
    assert truth_accuracy(JUDGMENTS, TRUTH).accuracy == pytest.approx(3 / 5)
    assert truth_accuracy(JUDGMENTS, TRUTH, tie_credit=0.5).accuracy == pytest.approx(3.5 / 5)


def test_cluster_bootstrap_equals_a_loop_over_resampled_case_ids() -> None:
    result = truth_accuracy(JUDGMENTS, TRUTH, n_boot=400, seed=5)
    assert (result.judgments, result.cases, result.skipped) == (5, 3, 2)
    per_case = {"c1": (1.0, 2), "c2": (1.0, 2), "c3": (1.0, 1)}
    ids = sorted(per_case)
    rng = np.random.default_rng(5)
    rounds = []
    for draw in rng.multinomial(3, [1 / 3] * 3, size=400):
        total = sum(k * per_case[c][0] for k, c in zip(draw, ids, strict=True))
        count = sum(k * per_case[c][1] for k, c in zip(draw, ids, strict=True))
        rounds.append(total / count)
    assert (result.low, result.high) == pytest.approx(tuple(np.percentile(rounds, [2.5, 97.5])))
    assert 0.0 <= result.low <= result.accuracy <= result.high <= 1.0


def test_all_agreeing_interval_is_degenerate() -> None:
    judgments = [(f"c{i}", "gold", "xl", "model_a") for i in range(10)]
    result = truth_accuracy(judgments, TRUTH, seed=1)
    assert (result.accuracy, result.low, result.high) == (1.0, 1.0, 1.0)


def test_seeded() -> None:
    judgments = [(f"c{i % 7}", "xl", "xxl", "model_a" if i % 3 else "model_b") for i in range(40)]
    assert truth_accuracy(judgments, TRUTH, seed=9) == truth_accuracy(judgments, TRUTH, seed=9)
    assert truth_accuracy(judgments, TRUTH, seed=9) != truth_accuracy(judgments, TRUTH, seed=10)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="winner"):
        truth_accuracy([("c", "gold", "xl", "a")], TRUTH)
    with pytest.raises(ValueError, match="no judgment"):
        truth_accuracy([("c", "base", "xl", "tie")], TRUTH)
    with pytest.raises(ValueError, match="twice"):
        truth_accuracy(JUDGMENTS, ["gold", "gold"])
