"""Exact binomial power and sample size (conventions sec. 27.1), against scipy.stats.binomtest and by hand."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, binomtest

from metaeval.core.planning.power import (
    elo_win_rate,
    exact_power,
    most_powerful,
    rejection_bound,
    sample_size,
    with_ties,
)


def test_known_values_of_the_issue_and_the_design_notes() -> None:
    row = sample_size(0.6, alpha=0.05, power=0.8)
    assert (row.decisive, row.judgments) == (199, 199)
    assert row.achieved_power == pytest.approx(0.80371, abs=5e-6)
    row = sample_size(0.55)
    assert row.decisive == 786
    assert row.achieved_power == pytest.approx(0.80132, abs=5e-6)


@pytest.mark.parametrize("alpha", [0.1, 0.05, 0.01, 0.001])
def test_rejection_region_matches_binomtest(alpha: float) -> None:
    ns = [*range(1, 301), 999, 1000, 4097, 20001]
    bounds = rejection_bound(np.array(ns), alpha)
    for n, c in zip(ns, bounds.tolist(), strict=True):
        if c >= 0:
            assert binomtest(c, n, 0.5).pvalue <= alpha, (n, c)
            assert binomtest(n - c, n, 0.5).pvalue <= alpha, (n, c)
        else:
            assert binomtest(0, n, 0.5).pvalue > alpha, n
        if c + 1 < n / 2:
            assert binomtest(c + 1, n, 0.5).pvalue > alpha, (n, c)
            assert binomtest(n - c - 1, n, 0.5).pvalue > alpha, (n, c)


def test_exact_power_is_the_probability_that_binomtest_rejects() -> None:
    for p in (0.7, 0.35):
        ns = np.arange(1, 41)
        power = exact_power(ns, p, 0.05)
        for n, value in zip(ns.tolist(), power.tolist(), strict=True):
            rejecting = [k for k in range(n + 1) if binomtest(k, n, 0.5).pvalue <= 0.05]
            assert value == pytest.approx(sum(binom.pmf(k, n, p) for k in rejecting), abs=1e-12), n


def test_small_n_by_hand() -> None:
    # n = 5: even k = 0 has p-value 2/32 = 0.0625 > 0.05, so nothing rejects; n = 6: k = 0 has 2/64 = 0.03125
    assert rejection_bound(5, 0.05).tolist() == [-1] and exact_power(5, 0.9, 0.05).tolist() == [0.0]
    assert rejection_bound(6, 0.05).tolist() == [0]
    assert exact_power(6, 0.9, 0.05)[0] == pytest.approx(0.9**6 + 0.1**6, abs=1e-15)
    row = sample_size(0.99)
    assert row.decisive == 6 and row.achieved_power == pytest.approx(0.99**6 + 0.01**6, abs=1e-15)


def test_smallest_n_from_below_on_a_saw_tooth() -> None:
    ns = np.arange(1, 901)
    for p, target in ((0.6, 0.8), (0.55, 0.8), (0.65, 0.9), (0.42, 0.7)):
        power = exact_power(ns, p, 0.05)
        smallest = int(ns[np.argmax(power >= target)])
        assert sample_size(p, power=target).decisive == smallest
    power = exact_power(ns, 0.6, 0.05)
    assert power[198] >= 0.8 and (power[199:260] < 0.8).any()  # a larger n may have less power


def test_most_powerful_test_bounds_ours_and_grows() -> None:
    ns = np.arange(1, 300)
    ours = exact_power(ns, 0.6, 0.05)
    bound = np.array([most_powerful(int(n), 0.6, 0.05) for n in ns])
    assert (ours <= bound + 1e-12).all()
    assert (np.diff(bound) >= -1e-12).all()


def test_symmetry_ties_and_elo() -> None:
    assert sample_size(0.4).decisive == sample_size(0.6).decisive
    assert sample_size(0.6, tie_rate=0.1).judgments == 222  # ceil(199 / 0.9)
    assert sample_size(0.6, tie_rate=0.5).judgments == 398
    assert with_ties(90, 0.1) == 100  # 90 / (1 - 0.1) in floating point is 100.00000000000001
    assert elo_win_rate(0) == 0.5
    assert elo_win_rate(400) == pytest.approx(10 / 11, abs=1e-15)
    assert elo_win_rate(-72) == pytest.approx(1 - elo_win_rate(72), abs=1e-15)
    assert sample_size(elo_win_rate(72)).decisive == sample_size(1 / (1 + 10 ** (-72 / 400))).decisive


@pytest.mark.parametrize("kwargs", [{"p": 0.5}, {"p": 0.0}, {"p": 1.0}, {"p": 0.6, "alpha": 1.0},
                                    {"p": 0.6, "power": 0.0}, {"p": 0.6, "tie_rate": 1.0}])
def test_bad_arguments(kwargs: dict[str, float]) -> None:
    p = kwargs.pop("p")
    with pytest.raises(ValueError):
        sample_size(p, **kwargs)
