"""Confidence sequences and stopping rules (conventions sec. 27.3).

The reference is the ``confseq`` package (Howard et al.'s code). Its PyPI release 0.0.11 does not install here (a
C++ extension that needs the Boost headers and pins pybind11 2.6.2, which does not build on Python 3.11), so it is
not a test dependency. Instead: (1) values of its own boundary code, ``normal_mixture_bound(v, alpha, v_opt,
alpha_opt=alpha, is_one_sided=False)`` from ``src/confseq/uniform_boundaries.h`` of confseq 0.0.11, compiled once
with g++ and Boost 1.74 by a ten-line driver (printf ``%.17g``), recorded below; (2) an independent
re-implementation from the paper: the boundary as the root of the normal-mixture supermartingale, the mixture
integral computed numerically (Howard et al. 2021, sec. 3.2, eq. (14) and Proposition 5)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from metaeval.core.planning.confseq import (
    boundary,
    elo_interval,
    pair_intervals,
    parse_rule,
    rho,
    separated_adjacent,
    stop_reached,
)

# (v, alpha, v_opt, confseq 0.0.11 normal_mixture_bound(v, alpha, v_opt, alpha, False))
CONFSEQ = [
    (0.25, 0.05, 125, 9.8040607779106264), (2.5, 0.05, 125, 10.584757786116715),
    (25, 0.05, 125, 16.819438628913908), (125, 0.05, 125, 33.93466814199904),
    (250, 0.05, 125, 48.40620508169426), (2500, 0.05, 125, 166.84287668932996),
    (0.25, 0.05, 10, 3.0529909059917113), (2.5, 0.05, 10, 5.161301002981177),
    (25, 0.05, 10, 15.39757024452911), (125, 0.05, 10, 36.581230144535454),
    (250, 0.05, 10, 53.253367912952932), (2500, 0.05, 10, 184.33465005705472),
    (0.25, 0.05 / 45, 125, 10.395923650800375), (2.5, 0.05 / 45, 125, 11.887008237968992),
    (25, 0.05 / 45, 125, 22.178225500327954), (125, 0.05 / 45, 125, 46.723982227943488),
    (250, 0.05 / 45, 125, 66.415442802346192), (2500, 0.05 / 45, 125, 220.53028534000825),
    (0.25, 0.05 / 45, 10, 3.4712994160740247), (2.5, 0.05 / 45, 10, 6.8863365334225666),
    (25, 0.05 / 45, 10, 21.072159143097853), (125, 0.05 / 45, 10, 48.757946488286869),
    (250, 0.05 / 45, 10, 70.115284091976335), (2500, 0.05 / 45, 10, 234.10570977083805),
    (0.25, 0.001, 125, 10.406729433349938), (2.5, 0.001, 125, 11.916562306861529),
    (25, 0.001, 125, 22.304814829739733), (125, 0.001, 125, 47.021902807855561),
    (250, 0.001, 125, 66.835065616882446), (2500, 0.001, 125, 221.79784536153147),
    (0.25, 0.001, 10, 3.4809366364127716), (2.5, 0.001, 10, 6.9269670498670175),
    (25, 0.001, 10, 21.204468700332217), (125, 0.001, 10, 49.044491112033981),
    (250, 0.001, 10, 70.514024363264213), (2500, 0.001, 10, 235.30095457045735),
]


@pytest.mark.parametrize(("v", "alpha", "v_opt", "expected"), CONFSEQ)
def test_boundary_equals_confseq(v: float, alpha: float, v_opt: float, expected: float) -> None:
    assert float(boundary(v, alpha, v_opt)) == pytest.approx(expected, rel=1e-13)


def _mixture(s: float, v: float, r: float) -> float:
    """The two-sided normal mixture of exp(lambda s - lambda^2 v / 2) over lambda ~ N(0, 1 / r), by quadrature."""
    sd = 1.0 / math.sqrt(r)
    value, _ = integrate.quad(lambda lam: math.exp(lam * s - lam * lam * v / 2.0) * stats.norm.pdf(lam, scale=sd),
                              -np.inf, np.inf, epsabs=0, epsrel=1e-12, limit=200)
    return value


@pytest.mark.parametrize(("v", "alpha", "v_opt"), [(2.5, 0.05, 125), (125, 0.05, 125), (250, 0.001, 10),
                                                   (40, 0.05 / 45, 125)])
def test_boundary_is_where_the_mixture_supermartingale_reaches_one_over_alpha(v: float, alpha: float,
                                                                               v_opt: float) -> None:
    r = v_opt / (2 * math.log(1 / alpha) + math.log(1 + 2 * math.log(1 / alpha)))  # the paper's tuning of rho
    assert rho(v_opt, alpha) == pytest.approx(r, rel=1e-15)
    high = 1.0
    while _mixture(high, v, r) < 1.0 / alpha:  # bracket the crossing by doubling
        high *= 2
    root = optimize.brentq(lambda s: _mixture(s, v, r) - 1.0 / alpha, 0.0, high, xtol=1e-12)
    assert float(boundary(v, alpha, v_opt)) == pytest.approx(root, rel=1e-7)


def test_intervals_cover_at_every_time_at_once() -> None:
    rng = np.random.default_rng(11)
    studies, steps, alpha = 2000, 1500, 0.1
    for mean_win, tie in ((0.5, 0.0), (0.7, 0.3)):
        outcome = rng.choice([1.0, 0.5, 0.0], size=(studies, steps),
                             p=[(1 - tie) * mean_win, tie, (1 - tie) * (1 - mean_win)])
        mu = (1 - tie) * mean_win + tie / 2
        count = np.broadcast_to(np.arange(1, steps + 1), (studies, steps))
        low, high = pair_intervals(count, np.cumsum(outcome, axis=1), alpha, t_opt=300)
        ever_missed = ((low > mu) | (high < mu)).any(axis=1).mean()
        assert ever_missed <= alpha
        # an ordinary fixed-n interval checked after every outcome misses far more often
        radius = stats.norm.isf(alpha / 2) * 0.5 / np.sqrt(count)
        mean = np.cumsum(outcome, axis=1) / count
        assert ((mean - radius > mu) | (mean + radius < mu)).any(axis=1).mean() > 2 * alpha


def test_interval_details() -> None:
    low, high = pair_intervals(np.array([0, 10, 1000]), np.array([0, 10, 500]), 0.05)
    assert (low[0], high[0]) == (0.0, 1.0)  # no outcome yet
    assert high[1] == 1.0 and low[1] < 1.0  # clipped to [0, 1]
    assert low[2] < 0.5 < high[2]
    assert high[2] - 0.5 == pytest.approx(float(boundary(250.0, 0.05, 125.0)) / 1000, rel=1e-14)
    with pytest.raises(ValueError):
        pair_intervals(np.array([1, 2]), np.array([1]), 0.05)


def test_elo_interval() -> None:
    low, high = elo_interval(np.array([0.5, 0.0]), np.array([10 / 11, 1.0]))
    assert low[0] == 0.0 and high[0] == pytest.approx(400.0, abs=1e-9)
    assert low[1] == -np.inf and high[1] == np.inf


def test_rules() -> None:
    assert str(parse_rule("separated")) == "separated" and str(parse_rule("width:0.2")) == "width:0.2"
    assert parse_rule(" none ").kind == "none"
    for bad in ("width", "width:0", "width:1.5", "widths:0.1", "separated:1", ""):
        with pytest.raises(ValueError, match="not a stopping rule"):
            parse_rule(bad)
    # three systems ranked 2, 0, 1: 2 beats 0 clearly, 0 against 1 not yet
    low = np.full((3, 3), 0.3)
    high = np.full((3, 3), 0.7)
    low[2, 0], high[0, 2] = 0.6, 0.4
    order = np.array([2, 0, 1])
    assert not separated_adjacent(order, low)
    low[0, 1], high[1, 0] = 0.55, 0.45
    assert separated_adjacent(order, low)
    assert not separated_adjacent(np.array([0, 2, 1]), low)  # the same intervals, another ranking
    assert stop_reached(parse_rule("separated"), order[None], low[None], high[None]).tolist() == [True]
    assert stop_reached(parse_rule("width:0.41"), order, low, high) == np.True_
    assert stop_reached(parse_rule("width:0.39"), order, low, high) == np.False_
    assert stop_reached(parse_rule("none"), order, low, high) == np.False_
