"""Prediction-powered estimates: worked by hand, and equal to the ppi-python package (ppi_py) to 1e-9."""
from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest
from scipy.stats import norm

from metaeval.core.judges.items import build_items
from metaeval.core.judges.ppi import COLUMNS, classical_mean, ppi_lambda, ppi_mean, ppi_rows
from tests.metaeval.core.judges.hand_items import table

Z = norm.ppf(0.975)


def test_columns_start_with_the_contract():
    assert COLUMNS[:13] == ("criterion", "system", "labeled", "unlabeled", "human", "human_low", "human_high", "ppi",
                            "ppi_low", "ppi_high", "ppi_plus", "ppi_plus_low", "ppi_plus_high")


def test_by_hand():
    y, yhat, unlabeled = np.array([1.0, 0.0, 0.5]), np.array([1.0, 1.0, 0.5]), np.array([1.0, 0.0, 1.0, 1.0])
    human = classical_mean(y, 0.05)
    # mean 1/2; variance with divisor n: (1 + 0 + 1/4) / 3 - 1/4 = 1/6, over n = 3 -> 1/18
    assert human.estimate == 0.5
    assert (human.low, human.high) == (pytest.approx(0.5 - Z * math.sqrt(1 / 18)), pytest.approx(0.5 + Z / 18**0.5))
    ppi, weight = ppi_mean(y, yhat, unlabeled, 0.05, lam=1.0)
    # 3/4 + mean(0, -1, 0) = 5/12; variances 3/16 over N = 4 and 2/9 over n = 3
    half = Z * math.sqrt(3 / 64 + 2 / 27)
    assert weight == 1.0
    assert ppi.estimate == pytest.approx(5 / 12, abs=1e-15)
    assert (ppi.low, ppi.high) == (pytest.approx(5 / 12 - half, abs=1e-15), pytest.approx(5 / 12 + half, abs=1e-15))
    # cov(Y, Yhat) = (1/2)(1/6) + (-1/2)(1/6) + 0 = 0, so PPI++ puts no weight on the judge: the human estimate
    plus, weight = ppi_mean(y, yhat, unlabeled, 0.05, lam=None)
    assert weight == 0.0
    assert (plus.estimate, plus.low, plus.high) == (human.estimate, pytest.approx(human.low), pytest.approx(human.high))


def test_lambda_by_hand():
    # Y = Yhat on the labelled items: cov = var0(Y) = 2/9; all judge outcomes 1, 0, 0, 1, 1, 1: var1 = 4/15;
    # lambda = (2/9) / ((1 + 3/3) * 4/15) = 5/12
    y = np.array([1.0, 0.0, 0.0])
    assert ppi_lambda(y, y, np.array([1.0, 1.0, 1.0])) == pytest.approx(5 / 12, abs=1e-15)
    # a judge whose outcomes never vary: every lambda gives the same estimate; we use 0 (ppi_py gives NaN)
    assert ppi_lambda(y, np.ones(3), np.ones(5)) == 0.0


def test_undefined_cases():
    assert classical_mean(np.array([]), 0.05).estimate is None
    one = classical_mean(np.array([1.0]), 0.05)
    assert (one.estimate, one.low, one.high) == (1.0, None, None)
    interval, weight = ppi_mean(np.array([1.0, 0.0]), np.array([1.0, 0.0]), np.array([]), 0.05)
    assert (interval.estimate, weight) == (None, None)
    with pytest.raises(ValueError, match="alpha"):
        classical_mean(np.array([1.0, 0.0]), 1.0)


def random_case(rng, n, big_n):
    outcomes = np.array([0.0, 0.5, 1.0])
    y = rng.choice(outcomes, n, p=rng.dirichlet(np.ones(3)))
    noisy = rng.random(n) < rng.uniform(0.1, 0.6)
    yhat = np.where(noisy, rng.choice(outcomes, n), y)
    unlabeled = rng.choice(outcomes, big_n, p=rng.dirichlet(np.ones(3)))
    return y, yhat, unlabeled


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
def test_equal_to_ppi_py(alpha):
    rng = np.random.default_rng(int(alpha * 1000))
    compared = 0
    for _ in range(150):
        n, big_n = int(rng.integers(2, 60)), int(rng.integers(1, 400))
        y, yhat, unlabeled = random_case(rng, n, big_n)
        human = classical_mean(y, alpha)
        low, high = ppi_py.classical_mean_ci(y, alpha=alpha)
        assert (human.low, human.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
        ppi, _ = ppi_mean(y, yhat, unlabeled, alpha, lam=1.0)
        assert ppi.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled, lam=1)[0]),
                                             abs=1e-9)
        low, high = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=alpha, lam=1)
        assert (ppi.low, ppi.high) == (pytest.approx(float(low[0]), abs=1e-9), pytest.approx(float(high[0]), abs=1e-9))
        if np.var(np.concatenate([yhat, unlabeled])) == 0:
            continue  # ppi_py's lambda is 0/0 there
        plus, _ = ppi_mean(y, yhat, unlabeled, alpha, lam=None)
        assert plus.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled, lam=None)[0]),
                                              abs=1e-9)
        low, high = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=alpha, lam=None)
        assert (plus.low, plus.high) == (pytest.approx(float(low[0]), abs=1e-9),
                                         pytest.approx(float(high[0]), abs=1e-9))
        compared += 1
    assert compared > 100


def test_rows_by_hand_and_against_ppi_py():
    rows = {(r["criterion"], r["system"]): r for r in ppi_rows(build_items(table(), "gpt"), alpha=0.05)}
    # quality items with a judge game: c1 A-B (labelled: people a, judge a), c2 B-C (b, b), c3 A-C (judge tie
    # only), c5 B-C (people tie, judge a); c4 has no judge game and is left out
    assert list(rows) == [("quality", "A"), ("quality", "B"), ("quality", "C"), ("relevance", "A"),
                          ("relevance", "B"), ("overall", "A"), ("overall", "B"), ("overall", "C")]
    b = rows[("quality", "B")]
    # B: c1 (people 0, judge 0), c2 (0, 0), c5 (0.5, 1): labelled 3, unlabelled 0 -> no PPI
    assert (b["labeled"], b["unlabeled"], b["human"], b["ppi"], b["judge_only"]) == (3, 0, pytest.approx(1 / 6),
                                                                                    None, pytest.approx(1 / 3))
    a = rows[("overall", "A")]
    # A: quality c1 (1, 1), relevance c1 (0, 1) labelled; quality c3 (judge 0.5) unlabelled
    y, yhat, unlabeled = np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([0.5])
    assert (a["labeled"], a["unlabeled"]) == (2, 1)
    assert a["ppi"] == pytest.approx(0.5 + (0.0 - 0.5))
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=0.05, lam=1)
    assert (a["ppi_low"], a["ppi_high"]) == (pytest.approx(low[0], abs=1e-12), pytest.approx(high[0], abs=1e-12))
    # the judge's outcomes for A vary (1, 1, 0.5) but cov(Y, Yhat) = 0: lambda 0, PPI++ = human
    assert a["lambda"] == 0.0 and a["ppi_plus"] == a["human"] == 0.5
