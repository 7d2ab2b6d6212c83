"""Adaptive assignment (conventions sec. 27.2): the Bradley-Terry covariance, Chatbot Arena's probabilities and the
balanced, seeded draw."""
from __future__ import annotations

import itertools
from collections import Counter

import choix
import numpy as np
import pytest

from metaeval.core.planning.adaptive import (
    Assignment,
    adjacent_pairs,
    arena_probabilities,
    arena_weights,
    bt_fit_variance,
    next_assignments,
    pair_index,
    pairs_of,
    uniform_probabilities,
    win_matrices,
)


def _fisher_covariance(theta: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Independent: the information sum_{i<j} N_ij s (1 - s) (e_i - e_j)(e_i - e_j)^T, pseudo-inverted."""
    n = len(theta)
    info = np.zeros((n, n))
    for i, j in itertools.combinations(range(n), 2):
        s = 1 / (1 + np.exp(theta[j] - theta[i]))
        e = np.zeros(n)
        e[i], e[j] = 1, -1
        info += totals[i, j] * s * (1 - s) * np.outer(e, e)
    return np.linalg.pinv(info)


def test_bt_fit_and_its_variance_against_choix_and_the_information() -> None:
    # integer wins, strongly connected: the MLE exists; choix's optimiser is the oracle for theta
    wins = np.array([[0, 7, 9, 4], [3, 0, 6, 5], [2, 4, 0, 6], [5, 2, 3, 0]], dtype=float)
    data = [(i, j) for i in range(4) for j in range(4) for _ in range(int(wins[i, j]))]
    reference = choix.opt_pairwise(4, data, alpha=0.0)
    theta, variance = bt_fit_variance(wins)
    assert theta == pytest.approx(reference - reference.mean(), abs=1e-6)
    cov = _fisher_covariance(theta, wins + wins.T)
    expected = [cov[i, i] + cov[j, j] - 2 * cov[i, j] for i, j in pairs_of(4)]
    assert variance == pytest.approx(expected, rel=1e-9)
    # many studies at once give the same as one at a time
    stack = np.stack([wins, wins.T])
    thetas, variances = bt_fit_variance(stack)
    assert variances[0] == pytest.approx(variance, rel=1e-12)
    assert thetas[1] == pytest.approx(-theta, abs=1e-9)


def test_arena_probabilities_follow_the_rule() -> None:
    count = np.array([10.0, 4.0, 30.0])
    score = np.array([6.0, 1.5, 20.0])
    floor = 0.2
    probabilities = arena_probabilities(count, score, 3, floor=floor)
    _, variance = bt_fit_variance(win_matrices(count, score, 3))
    s = count * variance  # S_aa, so that S_aa / n_a is the pair's variance
    weight = np.sqrt(s / count) - np.sqrt(s / (count + 1))
    assert probabilities == pytest.approx(floor / 3 + (1 - floor) * weight / weight.sum(), rel=1e-12)
    assert probabilities.sum() == pytest.approx(1.0, abs=1e-15)
    assert probabilities.min() >= floor / 3


def test_unjudged_pairs_come_first_and_the_floor_keeps_the_others() -> None:
    count = np.array([[0.0, 5.0, 0.0], [0.0, 0.0, 0.0]])
    score = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    probabilities = arena_probabilities(count, score, 3, floor=0.1)
    assert probabilities[0] == pytest.approx([0.1 / 3 + 0.45, 0.1 / 3, 0.1 / 3 + 0.45])
    assert probabilities[1] == pytest.approx(uniform_probabilities(3))
    with pytest.raises(ValueError):
        arena_probabilities(np.array([1.0, 2.0]), np.array([1.0, 1.0]), 3)
    with pytest.raises(ValueError):
        arena_probabilities(np.array([1.0, 2.0, 3.0]), np.array([2.0, 1.0, 1.0]), 3)  # score above count


def test_adjacent_focus() -> None:
    theta = np.array([0.1, 2.0, -1.0, 0.5])  # ranking 1, 3, 0, 2
    adjacent = adjacent_pairs(theta)
    index = pair_index(4)
    assert sorted(np.flatnonzero(adjacent).tolist()) == sorted([index[1, 3], index[3, 0], index[0, 2]])
    count = np.full(6, 10.0)
    probabilities = arena_weights(count, np.ones(6), floor=0.3, focus=adjacent)
    assert probabilities[~adjacent] == pytest.approx(np.full(3, 0.3 / 6))
    assert probabilities[adjacent] == pytest.approx(np.full(3, 0.3 / 6 + 0.7 / 3))


SYSTEMS = ["A", "B", "C", "D"]
CASES = [(f"d{d}", f"u{u}") for d in range(5) for u in range(3)]


def test_draw_is_seeded_and_follows_the_probabilities() -> None:
    p = np.array([0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    first = next_assignments(p, SYSTEMS, CASES, [], k=3000, seed=5)
    assert first == next_assignments(p, SYSTEMS, CASES, [], k=3000, seed=5)
    assert first != next_assignments(p, SYSTEMS, CASES, [], k=3000, seed=6)
    pairs = Counter(frozenset((item.model_a, item.model_b)) for item in first)
    for probability, (i, j) in zip(p, pairs_of(4), strict=True):
        expected = 3000 * probability
        assert abs(pairs[frozenset((SYSTEMS[i], SYSTEMS[j]))] - expected) < 4 * np.sqrt(expected)


def test_sides_cases_and_readers_are_balanced() -> None:
    p = np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.05])
    history: list[Assignment] = []
    for batch in range(6):  # six sets, each balanced against everything before it
        history += next_assignments(p, SYSTEMS, CASES, history, k=25, seed=batch)
    by_pair: dict[frozenset[str], list[Assignment]] = {}
    for item in history:
        by_pair.setdefault(frozenset((item.model_a, item.model_b)), []).append(item)
    for items in by_pair.values():
        a, b = sorted({items[0].model_a, items[0].model_b})
        assert abs(sum(i.model_a == a for i in items) - sum(i.model_a == b for i in items)) <= 1
        cases = Counter(i.case_id for i in items)  # a pair repeats a case only once it has seen them all
        assert max(cases.values()) - min(cases.get(f"{d}/{u}", 0) for d, u in CASES) <= 1
    uses = Counter(item.case_id for item in history)
    assert max(uses.values()) - min(uses.get(f"{d}/{u}", 0) for d, u in CASES) <= 1
    readers = Counter(item.reader_id for item in history)
    assert max(readers.values()) - min(readers.values()) <= 1
    assert all(item.model_a != item.model_b for item in history)


def test_draw_refuses_what_it_cannot_use() -> None:
    p = uniform_probabilities(4)
    with pytest.raises(ValueError, match="probabilities"):
        next_assignments(p[:5], SYSTEMS, CASES, [], k=1, seed=0)
    with pytest.raises(ValueError, match="outside the study"):
        next_assignments(p, SYSTEMS, CASES, [Assignment("d0", "u0", "A", "Z")], k=1, seed=0)
    with pytest.raises(ValueError, match="case outside"):
        next_assignments(p, SYSTEMS, CASES, [Assignment("d9", "u0", "A", "B")], k=1, seed=0)
    with pytest.raises(ValueError):
        next_assignments(p, ["A", "A", "B", "C"], CASES, [], k=1, seed=0)
    assert next_assignments(p, SYSTEMS, CASES, [], k=0, seed=0) == []


def test_only_candidate_pairs_are_drawn() -> None:
    count = np.array([4.0, 0.0, 9.0, 2.0, 5.0, 7.0])
    score = np.array([1.0, 0.0, 4.0, 1.5, 2.0, 3.0])
    candidates = np.array([True, False, True, True, False, True])
    probabilities = arena_probabilities(count, score, 4, floor=0.2, candidates=candidates)
    assert probabilities[~candidates].tolist() == [0.0, 0.0]  # the unjudged pair 1 is not a candidate
    assert probabilities.sum() == pytest.approx(1.0, abs=1e-15) and probabilities[candidates].min() >= 0.2 / 4
    _, variance = bt_fit_variance(win_matrices(count, score, 4))
    weight = np.sqrt(variance) * (1 - np.sqrt(count / (count + 1)))
    share = np.where(candidates, weight, 0) / weight[candidates].sum()
    assert probabilities == pytest.approx(np.where(candidates, 0.2 / 4, 0) + 0.8 * share, rel=1e-12)
    with pytest.raises(ValueError, match="no candidate"):
        arena_probabilities(count, score, 4, candidates=np.zeros(6, dtype=bool))
