"""Consistency and sensitivity of a pairwise comparison by case resampling (AuPEL, sec. 5.2; docs/conventions.md
sec. 18).

Input: the per-case outcomes of one model pair on one criterion, one game per case, each ``"a"``, ``"b"`` or
``"tie"``. For each sample size N, every repetition draws two independent samples of N cases: without replacement
from the pool, or with replacement when N exceeds the pool. A sample is *conclusive* when the two-sided binomial
test of W wins out of W + L decisive games at 0.5 gives p < alpha (ties dropped; W + L = 0 is inconclusive); its
verdict is the winner (a or b) or *inconclusive*.

* sensitivity(N) = share of the first samples that are conclusive;
* consistency(N) = share of repetitions whose two samples are both conclusive with the same winner;
  ``three_valued=True``: share whose two verdicts are equal among a / b / inconclusive.

Only the counts (W, L, T) of a sample matter, so a sample is drawn as counts: multivariate hypergeometric without
replacement, multinomial with replacement (both from one seeded :func:`numpy.random.default_rng`), all repetitions
at once. p-values come from a table per (W, W + L) that equals ``scipy.stats.binomtest(W, W + L).pvalue`` bit for
bit (:func:`binomial_p_values`).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy.stats import binom

__all__ = [
    "OUTCOMES",
    "ConsistencyPoint",
    "binomial_p_values",
    "consistency_curve",
    "outcome_counts",
    "verdicts",
]

OUTCOMES = ("a", "b", "tie")


@dataclass(frozen=True)
class ConsistencyPoint:
    """One sample size of the curve; ``with_replacement`` says whether N exceeded the pool."""

    n: int
    sensitivity: float
    consistency: float
    repetitions: int
    with_replacement: bool

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def outcome_counts(outcomes: Iterable[str]) -> tuple[int, int, int]:
    """(wins of a, wins of b, ties); anything but ``a`` / ``b`` / ``tie`` is a ValueError."""
    counts = dict.fromkeys(OUTCOMES, 0)
    for position, outcome in enumerate(outcomes):
        if outcome not in counts:
            raise ValueError(f"outcome {position}: {outcome!r} is not one of a, b, tie")
        counts[outcome] += 1
    return counts["a"], counts["b"], counts["tie"]


def binomial_p_values(max_games: int) -> np.ndarray:
    """``table[n, k]`` = two-sided binomial test p-value of k successes in n trials at 0.5, for n <= max_games
    (k > n is NaN; n = 0 is 1).

    scipy's ``binomtest`` sums the probabilities no larger than P(X = k) (relative tolerance 1e-7) on both sides.
    At p = 0.5 the pmf is symmetric, so the other tail starts at n - k, and its result is
    ``min(1, cdf(k) + sf(n - k - 1))`` for k < n / 2, ``min(1, cdf(n - k) + sf(k - 1))`` for k > n / 2 and 1 for
    k = n / 2, computed here with the same scipy functions, hence equal to binomtest's value exactly.
    """
    n, k = np.tril_indices(max_games + 1)  # every (n, k) with k <= n, in one vectorised call per function
    low = 2 * k < n
    tail = np.where(low, k, n - k)  # the smaller count: P(X <= tail) on its side
    other = np.where(low, n - k - 1, k - 1)  # P(X > other) on the far side
    with np.errstate(invalid="ignore"):
        value = np.minimum(1.0, binom.cdf(tail, n, 0.5) + binom.sf(other, n, 0.5))
    value[2 * k == n] = 1.0
    table = np.full((max_games + 1, max_games + 1), np.nan)
    table[n, k] = value
    return table


def verdicts(wins: np.ndarray, losses: np.ndarray, table: np.ndarray, alpha: float) -> np.ndarray:
    """Per sample: +1 (a conclusively better), -1 (b), 0 (inconclusive, including W + L = 0)."""
    p = table[wins + losses, wins]
    conclusive = p < alpha
    return np.where(conclusive, np.sign(wins - losses), 0).astype(np.int8)


def _draw_counts(
    rng: np.random.Generator, pool: tuple[int, int, int], n: int, size: int
) -> tuple[np.ndarray, np.ndarray, bool]:
    """(W, L) of ``size`` samples of ``n`` cases, and whether they were drawn with replacement."""
    total = sum(pool)
    if n <= total:
        counts = rng.multivariate_hypergeometric(np.array(pool), n, size=size)
        replace = False
    else:
        counts = rng.multinomial(n, np.array(pool) / total, size=size)
        replace = True
    return counts[:, 0], counts[:, 1], replace


def consistency_curve(
    outcomes: Sequence[str],
    sizes: Iterable[int],
    *,
    repetitions: int = 5000,
    seed: int = 0,
    alpha: float = 0.05,
    three_valued: bool = False,
) -> list[ConsistencyPoint]:
    """Sensitivity and consistency at each sample size in ``sizes`` (module docstring; AuPEL sec. 5.2).

    One generator seeded with ``seed`` serves every size in turn, so a curve is reproducible for the same
    outcomes, sizes (in the same order), repetitions and seed.
    """
    pool = outcome_counts(outcomes)
    sizes = [int(size) for size in sizes]
    if sum(pool) == 0:
        raise ValueError("no outcomes: the pool of cases is empty")
    if any(size < 1 for size in sizes):
        raise ValueError("every sample size must be at least 1")
    if repetitions < 1:
        raise ValueError("repetitions must be at least 1")
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie strictly between 0 and 1")
    table = binomial_p_values(max(sizes, default=0))
    rng = np.random.default_rng(seed)
    points: list[ConsistencyPoint] = []
    for size in sizes:
        wins, losses, replace = _draw_counts(rng, pool, size, 2 * repetitions)
        verdict = verdicts(wins, losses, table, alpha)
        first, second = verdict[:repetitions], verdict[repetitions:]
        same = first == second
        agree = same if three_valued else same & (first != 0)
        points.append(
            ConsistencyPoint(
                n=size,
                sensitivity=float(np.mean(first != 0)),
                consistency=float(np.mean(agree)),
                repetitions=repetitions,
                with_replacement=replace,
            )
        )
    return points
