"""Consistency / sensitivity (AuPEL sec. 5.2): exact binomial p-values and golden curves."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from metaeval.core.pairwise.consistency import (
    binomial_p_values,
    consistency_curve,
    outcome_counts,
    verdicts,
)


def test_p_value_table_equals_binomtest_exactly() -> None:
    table = binomial_p_values(400)
    for n in range(0, 41):
        for k in range(n + 1):
            expected = 1.0 if n == 0 else binomtest(k, n).pvalue
            assert table[n, k] == expected, (k, n)
    rng = np.random.default_rng(7)
    for n in rng.integers(41, 401, size=60):
        for k in rng.integers(0, n + 1, size=4):
            assert table[n, k] == binomtest(int(k), int(n)).pvalue, (k, n)


def test_check_values() -> None:
    table = binomial_p_values(100)
    assert round(table[100, 60], 4) == 0.0569
    assert round(table[100, 61], 4) == 0.0352
    assert table[100, 40] == table[100, 60]
    assert table[5, 5] == 0.0625
    assert table[6, 6] == 0.03125


def test_verdicts_ties_dropped_and_empty_is_inconclusive() -> None:
    table = binomial_p_values(100)
    wins, losses = np.array([61, 39, 60, 0, 6, 0]), np.array([39, 61, 40, 0, 0, 6])
    assert verdicts(wins, losses, table, 0.05).tolist() == [1, -1, 0, 0, 1, -1]


def test_all_wins_pool() -> None:
    outcomes = ["a"] * 10
    five, six = consistency_curve(outcomes, [5, 6], repetitions=200, seed=3)
    assert (five.sensitivity, five.consistency) == (0.0, 0.0)
    assert (six.sensitivity, six.consistency) == (1.0, 1.0)
    assert not six.with_replacement
    # ties are dropped: the whole pool of 6 wins and 2 ties gives W = 6, L = 0
    (mixed,) = consistency_curve(["a"] * 6 + ["tie"] * 2, [8], repetitions=50)
    assert mixed.sensitivity == 1.0


def test_three_valued_counts_agreeing_inconclusive_draws() -> None:
    (point,) = consistency_curve(["a"] * 10, [5], repetitions=100, three_valued=True)
    assert point.consistency == 1.0 and point.sensitivity == 0.0


def test_balanced_pool_hand_worked() -> None:
    # a pool of 2 wins and 2 losses, samples of 4 = the whole pool: W = L = 2, p = 1, never conclusive
    (point,) = consistency_curve(["a", "a", "b", "b"], [4], repetitions=30)
    assert point.sensitivity == 0.0 and point.consistency == 0.0


def test_with_replacement_when_n_exceeds_pool_matches_binomial_probability() -> None:
    # pool 3 a : 1 b; N = 20 > 4 draws with replacement, W ~ Binomial(20, 0.75) on every draw (no ties)
    from scipy.stats import binom

    table = binomial_p_values(20)
    p_conclusive = sum(binom.pmf(k, 20, 0.75) for k in range(21) if table[20, k] < 0.05)
    p_a = sum(binom.pmf(k, 20, 0.75) for k in range(11, 21) if table[20, k] < 0.05)
    (point,) = consistency_curve(["a", "a", "a", "b"], [20], repetitions=20000, seed=1)
    assert point.with_replacement
    assert point.sensitivity == pytest.approx(p_conclusive, abs=0.015)
    p_b = p_conclusive - p_a
    assert point.consistency == pytest.approx(p_a**2 + p_b**2, abs=0.015)


def test_without_replacement_matches_hypergeometric_probability() -> None:
    from scipy.stats import hypergeom

    # pool of 30: 20 a, 10 b; N = 12 without replacement: W ~ Hypergeom(30, 20, 12), L = 12 - W
    table = binomial_p_values(12)
    p_a = sum(hypergeom.pmf(w, 30, 20, 12) for w in range(13) if table[12, w] < 0.05 and w > 6)
    (point,) = consistency_curve(["a"] * 20 + ["b"] * 10, [12], repetitions=20000, seed=2)
    assert point.sensitivity == pytest.approx(p_a, abs=0.015)
    assert point.consistency == pytest.approx(p_a**2, abs=0.015)


def test_seeded_and_order_free() -> None:
    outcomes = ["a", "b", "tie", "a", "a"] * 20
    first = consistency_curve(outcomes, [10, 50, 200], repetitions=500, seed=11)
    again = consistency_curve(outcomes, [10, 50, 200], repetitions=500, seed=11)
    shuffled = consistency_curve(sorted(outcomes), [10, 50, 200], repetitions=500, seed=11)
    assert first == again == shuffled
    assert [p.with_replacement for p in first] == [False, False, True]


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="outcome 1"):
        outcome_counts(["a", "A"])
    with pytest.raises(ValueError, match="empty"):
        consistency_curve([], [5])
    with pytest.raises(ValueError, match="at least 1"):
        consistency_curve(["a"], [0])
