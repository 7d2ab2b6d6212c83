"""Anytime-valid confidence sequences for the outcomes of a system pair, and the stopping rules built on them
(conventions sec. 27.3).

An outcome of the pair (i, j) is i's score x in {1, 0.5, 0} (win, tie, loss); mu_ij = E[x]. After t outcomes with
sum s, the increments x - mu lie in an interval of length 1, so they are 1/2-sub-Gaussian (Hoeffding's lemma) and
S_t = s - t mu is a sub-Gaussian process with variance process V_t = t / 4 (Howard, Ramdas, McAuliffe, Sekhon,
Ann. Statist. 2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences", Definition 1 and Table 1,
bounded increments). The two-sided normal-mixture boundary (ibid. eq. (14); ``confseq``'s ``normal_mixture_bound``
with ``is_one_sided=False``)

    u(v) = sqrt((v + rho) * (log(1 + v / rho) + 2 log(1 / alpha))),
    rho  = v_opt / (2 log(1 / alpha) + log(1 + 2 log(1 / alpha)))          (the boundary is tightest near v_opt)

gives P(exists t: |S_t| >= u(V_t)) <= alpha, so ``s / t +- u(t / 4) / t`` (clipped to [0, 1]) covers mu at every
t at once with probability >= 1 - alpha: the study may look after every judgment and stop whenever it likes.

Several pairs: each pair's sequence is built at alpha / (number of pairs) (Bonferroni), so that all of them
cover at once with probability >= 1 - alpha; the stopping rules may then look at any pair, chosen from the data
(the adjacent pairs of the current ranking), without losing the guarantee. The sequences stay valid when the
pairs are sampled adaptively (each pair's outcomes are a martingale in its own count; the choice of the next pair
depends only on the past).

Rules: ``separated`` (every adjacent pair of the ranking has an interval that excludes 1/2 on the ranking's
side) and ``width:W`` (every pair's interval is narrower than W). Under Bradley-Terry with a tie as half a win,
mu_ij = 1 / (1 + 10^((R_j - R_i) / 400)), so the interval maps to one for the Elo difference R_i - R_j
(:func:`elo_interval`; monotone, so it keeps the coverage).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["DEFAULT_T_OPT", "StopRule", "boundary", "elo_interval", "pair_intervals", "parse_rule", "rho",
           "separated_adjacent", "stop_reached"]

#: judgments per pair at which the boundary is tightest (v_opt = DEFAULT_T_OPT / 4)
DEFAULT_T_OPT = 500.0
#: the variance process per outcome: an outcome in [0, 1] is 1/2-sub-Gaussian
VARIANCE_PER_OUTCOME = 0.25


def rho(v_opt: float, alpha: float) -> float:
    """The mixture's rho that makes the two-sided boundary tightest at ``v_opt`` (confseq's ``best_rho``)."""
    if not v_opt > 0:
        raise ValueError(f"v_opt must be positive, not {v_opt!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, not {alpha!r}")
    log_inverse = math.log(1.0 / alpha)
    return v_opt / (2.0 * log_inverse + math.log(1.0 + 2.0 * log_inverse))


def boundary(v: np.ndarray | float, alpha: float, v_opt: float) -> np.ndarray:
    """The two-sided normal-mixture boundary u(v) (module docstring), vectorised over v."""
    r = rho(v_opt, alpha)
    v = np.asarray(v, dtype=np.float64)
    return np.sqrt((v + r) * (np.log1p(v / r) + 2.0 * math.log(1.0 / alpha)))


def pair_intervals(count: np.ndarray, total: np.ndarray, alpha: float, *,
                   t_opt: float = DEFAULT_T_OPT) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of the confidence sequence of each pair's mean score, at level ``alpha`` per pair.

    ``count``: outcomes so far; ``total``: their sum (any shape, the same). A pair without outcomes gets [0, 1]."""
    count = np.asarray(count, dtype=np.float64)
    total = np.asarray(total, dtype=np.float64)
    if count.shape != total.shape:
        raise ValueError("count and total differ in shape")
    seen = count > 0
    safe = np.where(seen, count, 1.0)
    radius = boundary(VARIANCE_PER_OUTCOME * count, alpha, VARIANCE_PER_OUTCOME * t_opt) / safe
    mean = total / safe
    low = np.where(seen, np.clip(mean - radius, 0.0, 1.0), 0.0)
    high = np.where(seen, np.clip(mean + radius, 0.0, 1.0), 1.0)
    return low, high


def elo_interval(low: np.ndarray | float, high: np.ndarray | float, *, scale: float = 400.0,
                 base: float = 10.0) -> tuple[np.ndarray, np.ndarray]:
    """The interval of the Elo difference R_i - R_j from that of mu_ij (Bradley-Terry, a tie half a win):
    d = scale * log_base(mu / (1 - mu)); 0 and 1 map to -inf and +inf."""
    def to_elo(mu: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return scale * (np.log(mu) - np.log1p(-mu)) / math.log(base)

    return to_elo(np.asarray(low, dtype=np.float64)), to_elo(np.asarray(high, dtype=np.float64))


@dataclass(frozen=True)
class StopRule:
    """``kind``: ``"separated"``, ``"width"`` (every interval narrower than ``width``) or ``"none"`` (the budget)."""

    kind: str
    width: float = math.nan

    def __str__(self) -> str:
        return f"width:{self.width:g}" if self.kind == "width" else self.kind


def parse_rule(text: str) -> StopRule:
    """``separated``, ``width:W`` (0 < W <= 1, on the mean-score scale) or ``none``; ValueError otherwise."""
    name, _, value = text.strip().partition(":")
    if name in ("separated", "none") and not value:
        return StopRule(name)
    if name == "width":
        try:
            width = float(value)
        except ValueError:
            width = math.nan
        if 0 < width <= 1:
            return StopRule("width", width)
    raise ValueError(f"{text!r} is not a stopping rule: write separated, width:W (0 < W <= 1) or none")


def separated_adjacent(order: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Whether every adjacent pair of each ranking is separated: ``order[..., r]`` is the system at rank r (best
    first), ``low[..., i, j]`` the lower end of the interval of mu_ij (i's score against j). True where each
    system's interval against the next one lies above 1/2."""
    n = low.shape[-1]
    cells = order[..., :-1] * n + order[..., 1:]  # (i, j) of each adjacent pair, as a flat index
    pairs = np.take_along_axis(low.reshape(*low.shape[:-2], n * n), cells, axis=-1)
    return np.asarray((pairs > 0.5).all(axis=-1))


def stop_reached(rule: StopRule, order: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Whether ``rule`` holds for each study: ``order`` as in :func:`separated_adjacent`, ``low``/``high`` the
    ``(..., n, n)`` intervals of mu_ij (the diagonal is ignored)."""
    if rule.kind == "none":
        return np.zeros(order.shape[:-1], dtype=bool)
    if rule.kind == "separated":
        return separated_adjacent(order, low)
    n = low.shape[-1]
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    return np.asarray(((high - low) < rule.width)[..., upper].all(axis=-1))
