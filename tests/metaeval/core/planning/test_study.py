"""A live study's state, stopping and next adaptive set (conventions sec. 27.8)."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.core.planning.adaptive import (
    Assignment,
    adjacent_pairs,
    arena_weights,
    bt_fit_variance,
    next_assignments,
    win_matrices,
)
from metaeval.core.planning.confseq import StopRule, pair_intervals
from metaeval.core.planning.study import next_set, set_probabilities, study_state

SYSTEMS = ("a", "b", "c")  # pairs (a,b), (a,c), (b,c)


def test_state_intervals_ranks_and_rule():
    # a beats b 90 of 100, b beats c 90 of 100, a beats c 100 of 100: clearly a > b > c
    count, score = [100, 100, 100], [90, 100, 90]
    state = study_state(SYSTEMS, count, score, rule=StopRule("separated"), alpha=0.05)
    low, high = pair_intervals(np.array(count, float), np.array(score, float), 0.05 / 3)
    assert np.allclose(state.low, low) and np.allclose(state.high, high)  # Bonferroni over the 3 pairs
    assert [row["system"] for row in state.ranking()] == ["a", "b", "c"]
    assert [(row["rank_best"], row["rank_worst"]) for row in state.ranking()] == [(1, 1), (2, 2), (3, 3)]
    assert state.stopped and state.judged == 300
    assert [(r["better"], r["worse"], r["separated"]) for r in state.adjacent()] == [("a", "b", True),
                                                                                     ("b", "c", True)]
    # 10 judgments each at the same rates: nothing separated, every system could hold every rank
    few = study_state(SYSTEMS, [10, 10, 10], [9, 10, 9], rule=StopRule("separated"), alpha=0.05)
    assert not few.stopped and {(r["rank_best"], r["rank_worst"]) for r in few.ranking()} == {(1, 3)}
    # the width rule: every interval narrower than W
    assert study_state(SYSTEMS, count, score, rule=StopRule("width", 0.9), alpha=0.05).stopped
    assert not study_state(SYSTEMS, count, score, rule=StopRule("width", 0.1), alpha=0.05).stopped
    assert not study_state(SYSTEMS, count, score, rule=StopRule("none"), alpha=0.05).stopped
    with pytest.raises(ValueError, match="3 pairs"):
        study_state(SYSTEMS, [1, 2], [1, 1], rule=StopRule("none"), alpha=0.05)


def test_probabilities_are_the_simulators_adjacent_policy():
    count, score = np.array([30.0, 5.0, 12.0]), np.array([20.0, 4.0, 6.5])
    state = study_state(SYSTEMS, count, score, rule=StopRule("none"), alpha=0.05)
    theta, variance = bt_fit_variance(win_matrices(count, score, 3))
    expected = arena_weights(count, variance, floor=0.1, focus=adjacent_pairs(theta))
    assert np.allclose(set_probabilities(state), expected) and np.isclose(expected.sum(), 1.0)


def test_next_set_distinct_pairs_one_case_balanced_sides():
    cases = [("d1", "r1"), ("d1", "r2"), ("d2", "r1")]
    history = [Assignment("d1", "r1", "a", "b"), Assignment("d1", "r1", "a", "c"), Assignment("d1", "r2", "b", "c")]
    p = np.array([0.5, 0.3, 0.2])
    items = next_set(p, SYSTEMS, cases, history, k=3, seed=7)
    assert len(items) == 3 and len({frozenset((i.model_a, i.model_b)) for i in items}) == 3
    # the case these pairs used least: d2/r1 (never used)
    assert {(i.doc_id, i.reader_id) for i in items} == {("d2", "r1")}
    # sides: the rule of next_assignments (one case, so its case choice does not interfere)
    one_case = [Assignment("d2", "r1", h.model_a, h.model_b) for h in history]
    for position, item in enumerate(items):
        pair = sorted((item.model_a, item.model_b))
        onehot = np.array([float(pair == ["a", "b"]), float(pair == ["a", "c"]), float(pair == ["b", "c"])])
        theirs = next_assignments(onehot, SYSTEMS, [("d2", "r1")], [*one_case, *items[:position]], k=1, seed=0)[0]
        assert (theirs.model_a, theirs.model_b) == (item.model_a, item.model_b)
    assert next_set(p, SYSTEMS, cases, history, k=3, seed=7) == items  # deterministic in the seed
    # a pair of probability 0 is never drawn, and k is capped at the drawable pairs
    only = next_set(np.array([0.0, 1.0, 0.0]), SYSTEMS, cases, history, k=3, seed=1)
    assert [sorted((i.model_a, i.model_b)) for i in only] == [["a", "c"]]
    with pytest.raises(ValueError, match="probabilities"):
        next_set(np.array([0.5, 0.5]), SYSTEMS, cases, history, k=1, seed=1)
