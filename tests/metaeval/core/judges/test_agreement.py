"""Judge-people agreement: every column worked by hand, Cohen's kappa against scikit-learn."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from metaeval.core.judges.agreement import COLUMNS, agreement_rows, cohen_kappa, confusion_rows, pair_agreement
from metaeval.core.judges.items import build_items
from tests.metaeval.core.judges.hand_items import LENGTHS, table


def rows_by_criterion(style=LENGTHS):
    return {row["criterion"]: row for row in agreement_rows(build_items(table(), "gpt"), style)}


def test_columns_start_with_the_contract():
    assert COLUMNS[:5] == ("criterion", "judge", "items", "accuracy", "cohen_kappa")
    assert all(set(row) == set(COLUMNS) for row in rows_by_criterion().values())


def test_quality_by_hand():
    row = rows_by_criterion()["quality"]
    # items with both games: c1 (a, a), c2 (b, b), c5 (judge a, people tie); c3 and c4 have one source only
    assert (row["judge"], row["items"], row["accuracy"]) == ("gpt", 3, pytest.approx(2 / 3))
    # judge a 2/3, b 1/3; people a, b, tie 1/3 each: p_e = 2/9 + 1/9 = 1/3, p_o = 2/3 -> kappa 1/2
    assert row["cohen_kappa"] == pytest.approx(0.5, abs=1e-15)
    assert (row["decisive_items"], row["decisive_accuracy"]) == (2, 1.0)
    # ceiling: c1 votes a, a, b (1 of 3 pairs agree), c2 b, tie (0), c5 a, b (0); the judge matches 2/3, 1/2, 1/2
    assert row["ceiling_items"] == 3
    assert row["human_human"] == pytest.approx(1 / 9)
    assert row["judge_human"] == pytest.approx(5 / 9)
    # the judge alone, on every item it judged (c3 too): position: c1 A-first runs a, a -> a, B-first runs b, a ->
    # tie: inconsistent; c2 b / b: consistent; c3 a / b: inconsistent; c5 has one order only
    assert (row["position_items"], row["position_consistency"]) == (3, pytest.approx(1 / 3))
    # chose the text shown first: c1 3 of 4, c2 1 of 2, c3 2 of 2, c5 1 of 1
    assert (row["first_shown_judgments"], row["judge_first_shown"]) == (9, pytest.approx(7 / 9))
    # runs agreeing in pairs: c1 a, b, a, a -> 3 of 6; c2 -> 1 of 1; c3 a, b -> 0 of 1
    assert (row["self_items"], row["self_consistency"]) == (3, pytest.approx(0.5))
    # longer text: c1 A (a): judge a -> 1, people a -> 1; c2 B (a): judge b -> 0, people b -> 0; c5 equal lengths
    assert (row["length_items"], row["judge_longer"], row["human_longer"]) == (2, 0.5, 0.5)


def test_relevance_and_overall_by_hand():
    rows = rows_by_criterion()
    relevance = rows["relevance"]
    assert (relevance["items"], relevance["accuracy"], relevance["cohen_kappa"]) == (1, 0.0, 0.0)
    assert (relevance["ceiling_items"], relevance["human_human"], relevance["position_items"]) == (0, None, 0)
    # one run, B shown first, A chosen
    assert (relevance["first_shown_judgments"], relevance["judge_first_shown"]) == (1, 0.0)
    # lengths belong to (case, system): c1's A is longer under relevance too; judge a -> 1, people b -> 0
    assert (relevance["length_items"], relevance["judge_longer"], relevance["human_longer"]) == (1, 1.0, 0.0)
    overall = rows["overall"]
    # judge a, b, a, a against people a, b, tie, b: p_o = 1/2, p_e = 3/4 * 1/4 + 1/4 * 2/4 = 5/16 -> 3/11
    assert (overall["items"], overall["accuracy"]) == (4, 0.5)
    assert overall["cohen_kappa"] == pytest.approx(3 / 11, abs=1e-15)
    assert overall["length_items"] == 3
    assert (overall["position_items"], overall["first_shown_judgments"], overall["judge_first_shown"]) == (3, 10, 0.7)
    assert (overall["self_items"], overall["self_consistency"]) == (3, pytest.approx(0.5))
    assert (overall["judge_longer"], overall["human_longer"]) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert [r["criterion"] for r in agreement_rows(build_items(table(), "gpt"))] == ["quality", "relevance",
                                                                                      "overall"]


def test_without_lengths_the_length_columns_are_empty():
    row = rows_by_criterion(style=None)["overall"]
    assert (row["length_items"], row["judge_longer"], row["human_longer"]) == (0, None, None)


def test_confusion_counts():
    quality = confusion_rows(build_items(table(), "gpt"))[0]
    assert quality["labels"] == ["a", "tie", "b"]
    assert quality["counts"] == [[1, 1, 0], [0, 0, 0], [0, 0, 1]]  # judge rows, people columns


def test_kappa_equals_scikit_learn_on_random_outcomes():
    rng = np.random.default_rng(3)
    labels = np.array(["a", "tie", "b"])
    for trial in range(200):
        n = int(rng.integers(1, 60))
        p = rng.dirichlet(np.ones(3))
        first = list(rng.choice(labels, n, p=p))
        second = [x if rng.random() < 0.6 else str(rng.choice(labels)) for x in first]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn warns where kappa is undefined
            theirs = cohen_kappa_score(first, second)
        ours = cohen_kappa(first, second)
        if math.isnan(theirs):
            assert math.isnan(ours), trial
        else:
            assert ours == pytest.approx(theirs, abs=1e-12), trial


def test_kappa_by_hand_and_degenerate():
    # perfect agreement on two labels: 1; both raters constant and equal: undefined (NaN), as scikit-learn
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns that kappa is undefined
        assert math.isnan(cohen_kappa_score(["a", "a"], ["a", "a"]))
    assert math.isnan(cohen_kappa(["a", "a"], ["a", "a"]))
    # systematic disagreement: p_o = 0, p_e = 1/2 -> -1
    assert cohen_kappa(["a", "b"], ["b", "a"]) == -1.0


def test_pair_agreement():
    assert pair_agreement(["a", "a", "b"]) == pytest.approx(1 / 3)
    assert pair_agreement(["a", "a", "a", "tie"]) == 0.5
    assert pair_agreement(["a"]) is None
