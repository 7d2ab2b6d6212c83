"""Power and sample size of one system pair: the exact two-sided binomial test (conventions sec. 27.1).

n decisive judgments (ties removed), k of them won by the first system, true win rate p among decisive judgments.
The test rejects p = 0.5 at level alpha when ``scipy.stats.binomtest(k, n, 0.5).pvalue <= alpha``. For p0 = 0.5
that p-value is symmetric, so the rejection region is ``{k <= c} U {k >= n - c}`` with ``c`` the largest k < n/2
whose p-value ``F(k) + P(K >= n - k)`` (binomtest's own two terms, K ~ Bin(n, 1/2)) is <= alpha (``c = -1``: no k
rejects). The exact power is

    power(n) = F(c; n, p) + 1 - F(n - c - 1; n, p)

It is a saw-tooth in n (a larger n may have a lower power), so "the n" is the smallest n with power >= target,
found by scanning n upwards in vectorised blocks (up to :data:`MAX_DECISIVE`) from the first n at which the most
powerful level-alpha test (Neyman-Pearson) reaches the target: its power bounds ours and never falls with n, so no
smaller n can reach the target. ``judgments = ceil(n / (1 - tie_rate))``. An Elo gap G
gives p = 1 / (1 + 10^(-G / 400)).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["MAX_DECISIVE", "PowerRow", "elo_win_rate", "exact_power", "most_powerful", "rejection_bound",
           "sample_size", "with_ties"]

#: the scan stops here: a pair whose win rate is this close to 1/2 is not worth a study
MAX_DECISIVE = 10_000_000
_FIRST_BLOCK = 1024
_LARGEST_BLOCK = 1 << 20


def elo_win_rate(gap: float, *, scale: float = 400.0, base: float = 10.0) -> float:
    """P(the stronger wins) for an Elo gap: 1 / (1 + base^(-gap / scale))."""
    return 1.0 / (1.0 + base ** (-gap / scale))


def _pvalue(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """binomtest's two-sided p-value at p0 = 1/2 for k < n/2: ``binom.cdf(k) + binom.sf(n - k - 1)``."""
    from scipy.stats import binom

    return np.minimum(1.0, binom.cdf(k, n, 0.5) + binom.sf(n - k - 1, n, 0.5))


def rejection_bound(n: np.ndarray | int, alpha: float) -> np.ndarray:
    """``c(n)``: the largest k < n/2 with binomtest p-value <= alpha (-1 where none), per n (vectorised).

    Starts from the normal approximation and moves each c up while c + 1 rejects and down while c does not."""
    from scipy.stats import norm

    n = np.atleast_1d(np.asarray(n, dtype=np.int64))
    if (n < 1).any():
        raise ValueError("n must be at least 1")
    z = float(norm.isf(alpha / 2.0))
    c = np.floor(n / 2.0 - z * np.sqrt(n) / 2.0).astype(np.int64)
    c = np.clip(c, -1, (n - 1) // 2)  # k < n/2
    while True:
        up = np.flatnonzero(c + 1 <= (n - 1) // 2)
        up = up[_pvalue(c[up] + 1, n[up]) <= alpha]
        down = np.flatnonzero(c >= 0)
        down = down[_pvalue(c[down], n[down]) > alpha]
        if not len(up) and not len(down):
            return c
        c[up] += 1
        c[down] -= 1


def exact_power(n: np.ndarray | int, p: float, alpha: float) -> np.ndarray:
    """The exact power at each n (vectorised): P(K <= c) + P(K >= n - c), K ~ Bin(n, p); 0 where c = -1."""
    from scipy.stats import binom

    n = np.atleast_1d(np.asarray(n, dtype=np.int64))
    c = rejection_bound(n, alpha)
    power = binom.cdf(c, n, p) + binom.sf(n - c - 1, n, p)
    return np.where(c >= 0, power, 0.0)


@dataclass(frozen=True)
class PowerRow:
    """One answer: ``decisive`` judgments give ``achieved_power`` >= ``power``; ``judgments`` with ties."""

    win_rate: float
    alpha: float
    power: float
    decisive: int
    achieved_power: float
    judgments: int
    tie_rate: float

    def as_row(self) -> dict[str, object]:
        return {"win_rate": self.win_rate, "alpha": self.alpha, "power": self.power, "decisive": self.decisive,
                "achieved_power": self.achieved_power, "judgments": self.judgments, "tie_rate": self.tie_rate}


def with_ties(decisive: int, tie_rate: float) -> int:
    """``ceil(decisive / (1 - tie_rate))`` in exact decimal arithmetic (1 - 0.1 is nine tenths, so 90 decisive
    judgments need 100, not 101)."""
    return math.ceil(Fraction(decisive) / (1 - Fraction(repr(float(tie_rate)))))


def _check(p: float, alpha: float, power: float, tie_rate: float) -> None:
    if not 0.0 < p < 1.0:
        raise ValueError(f"the win rate must lie strictly between 0 and 1, not {p!r}")
    if p == 0.5:
        raise ValueError("a win rate of 0.5 is no difference: no sample size detects it")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, not {alpha!r}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"the target power must lie strictly between 0 and 1, not {power!r}")
    if not 0.0 <= tie_rate < 1.0:
        raise ValueError(f"the tie rate must be at least 0 and below 1, not {tie_rate!r}")


def most_powerful(n: int, p: float, alpha: float) -> float:
    """Power at p (> 1/2) of the most powerful level-alpha test of p = 1/2 with n judgments (Neyman-Pearson: the
    one-sided randomised test). It bounds the power of every level-alpha test, ours included, and never falls
    as n grows (a test may ignore a judgment)."""
    from scipy.stats import binom

    k = int(binom.isf(alpha, n, 0.5))  # smallest k with P0(K > k) <= alpha, up to isf's rounding: fixed below
    while k > 0 and binom.sf(k - 1, n, 0.5) <= alpha:
        k -= 1
    while binom.sf(k, n, 0.5) > alpha:
        k += 1
    gamma = (alpha - binom.sf(k, n, 0.5)) / binom.pmf(k, n, 0.5)
    return float(binom.sf(k, n, p) + gamma * binom.pmf(k, n, p))


def _first_possible(p: float, alpha: float, power: float, max_decisive: int) -> int:
    """The smallest n whose most powerful test reaches ``power`` (no smaller n can): doubling, then bisection."""
    high = 1
    while most_powerful(high, p, alpha) < power:
        if high >= max_decisive:
            raise ValueError(f"win rate {p!r}: more than {max_decisive} decisive judgments would be needed")
        high = min(2 * high, max_decisive)
    low = high // 2  # most_powerful(low) < power, or low = 0
    while high - low > 1:
        middle = (low + high) // 2
        if most_powerful(middle, p, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


def sample_size(p: float, *, alpha: float = 0.05, power: float = 0.8, tie_rate: float = 0.0,
                max_decisive: int = MAX_DECISIVE) -> PowerRow:
    """The smallest n with exact power >= ``power`` (module docstring). The scan starts where the most powerful
    level-alpha test first reaches the target (:func:`most_powerful`: below it no n can) and goes up in vectorised
    blocks. ValueError for a bad argument or when no n up to ``max_decisive`` is enough."""
    _check(p, alpha, power, tie_rate)
    stronger = max(p, 1.0 - p)  # the test is symmetric: power(n, p) = power(n, 1 - p)
    start, size = _first_possible(stronger, alpha, power, max_decisive), _FIRST_BLOCK
    while start <= max_decisive:
        n = np.arange(start, min(start + size, max_decisive + 1), dtype=np.int64)
        achieved = exact_power(n, p, alpha)
        hit = np.flatnonzero(achieved >= power)
        if len(hit):
            decisive = int(n[hit[0]])
            return PowerRow(win_rate=p, alpha=alpha, power=power, decisive=decisive,
                            achieved_power=float(achieved[hit[0]]),
                            judgments=with_ties(decisive, tie_rate), tie_rate=tie_rate)
        start += size
        size = min(2 * size, _LARGEST_BLOCK)
    raise ValueError(f"win rate {p!r}: more than {max_decisive} decisive judgments would be needed")
