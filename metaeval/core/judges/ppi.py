"""Prediction-powered estimates of a system's score from many judge games and a few human ones (conventions
sec. 28; Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, Science 2023; PPI++: Angelopoulos, Duchi and Zrnic
2023). The formulas are those of the ``ppi-python`` package's mean estimators (``ppi_py``), which the tests use as
the reference.

n labelled items carry a human outcome Y_i and a judge outcome Yhat_i, N unlabelled items a judge outcome only.
With z = Phi^-1(1 - alpha / 2) and sd the standard deviation with divisor n (numpy's default):

- human only (``classical_mean_ci``): mean(Y) +- z sd(Y) / sqrt(n);
- PPI with weight lambda (``ppi_mean_pointestimate`` / ``ppi_mean_ci`` with ``lam``):
  theta = mean(lambda Yhat_unlabelled) + mean(Y - lambda Yhat),
  interval theta +- z sqrt(sd(lambda Yhat_unlabelled)^2 / N + sd(Y - lambda Yhat)^2 / n); lambda = 1 is PPI;
- PPI++ (``lam=None``): lambda = clip(cov(Y, Yhat) / ((1 + n / N) var(Yhat_all)), 0, 1), where cov has divisor n
  and var is the variance of all n + N judge outcomes with divisor n + N - 1 (``_calc_lam_glm`` for a mean).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metaeval.core.judges.items import ItemSet, score_of
from metaeval.core.pairwise.judgments import OVERALL

__all__ = ["COLUMNS", "Interval", "classical_mean", "ppi_lambda", "ppi_mean", "ppi_rows"]

COLUMNS = ("criterion", "system", "labeled", "unlabeled", "human", "human_low", "human_high", "ppi", "ppi_low",
           "ppi_high", "ppi_plus", "ppi_plus_low", "ppi_plus_high", "lambda", "judge_only")


@dataclass(frozen=True)
class Interval:
    """A point estimate and its two-sided CLT interval at level 1 - alpha (None: not defined)."""

    estimate: float | None
    low: float | None
    high: float | None


def _z(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, not {alpha!r}")
    from scipy.stats import norm

    return float(norm.ppf(1.0 - alpha / 2.0))


def classical_mean(y: np.ndarray, alpha: float) -> Interval:
    """The human-only estimate: mean(y) +- z sd(y) / sqrt(n); no interval for n < 2, nothing for n = 0."""
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    if n == 0:
        return Interval(None, None, None)
    mean = float(y.mean())
    if n < 2:
        return Interval(mean, None, None)
    half = _z(alpha) * float(y.std()) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half)


def ppi_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> float:
    """PPI++'s power-tuning weight (module docstring), clipped to [0, 1]; 0 when the judge's outcomes do not vary
    (then every lambda gives the same estimate and interval; ``ppi_py`` returns NaN there)."""
    y, yhat, unlabeled = (np.asarray(v, dtype=np.float64) for v in (y, yhat, yhat_unlabeled))
    n, big_n = len(y), len(unlabeled)
    covariance = float(((y - y.mean()) * (yhat - yhat.mean())).sum()) * 2.0 / n
    variance = float(np.var(np.concatenate([yhat, unlabeled]), ddof=1))
    denominator = 2.0 * (1.0 + n / big_n) * variance
    if denominator == 0.0:
        return 0.0
    return float(np.clip(covariance / denominator, 0.0, 1.0))


def ppi_mean(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, alpha: float,
             lam: float | None = 1.0) -> tuple[Interval, float | None]:
    """The prediction-powered estimate with weight ``lam`` (None: PPI++'s :func:`ppi_lambda`) and the weight used;
    nothing without unlabelled items or labelled ones, no interval for n < 2."""
    y, yhat, unlabeled = (np.asarray(v, dtype=np.float64) for v in (y, yhat, yhat_unlabeled))
    n, big_n = len(y), len(unlabeled)
    if n == 0 or big_n == 0:
        return Interval(None, None, None), None
    weight = ppi_lambda(y, yhat, unlabeled) if lam is None else float(lam)
    imputed = weight * unlabeled
    rectifier = y - weight * yhat
    estimate = float(imputed.mean() + rectifier.mean())
    if n < 2:
        return Interval(estimate, None, None), weight
    half = _z(alpha) * math.sqrt(float(imputed.std()) ** 2 / big_n + float(rectifier.std()) ** 2 / n)
    return Interval(estimate, estimate - half, estimate + half), weight


def _systems(items: ItemSet) -> list[str]:
    return list(dict.fromkeys(name for item in items.items if item.judge_outcome is not None
                              for name in (item.model_a, item.model_b)))


def ppi_rows(items: ItemSet, alpha: float = 0.05) -> list[dict[str, Any]]:
    """Per criterion (sorted, then ``overall``) and system (order of first appearance among the judge's items):
    the system's score (1 win, 0.5 draw, 0 loss) on the items it plays that have a judge game, estimated from the
    people's games on the labelled ones (those the people played too) and the judge's on all, as :data:`COLUMNS`."""
    _z(alpha)  # refuse a bad alpha before any work
    order = _systems(items)
    rows: list[dict[str, Any]] = []
    for criterion in [*items.criteria(), OVERALL]:
        scores: dict[str, tuple[list[float], list[float], list[float]]] = {}
        for item in items.items:
            if item.judge_outcome is None or criterion not in (OVERALL, item.criterion):
                continue
            for system, side in ((item.model_a, "a"), (item.model_b, "b")):
                y, yhat, unlabeled = scores.setdefault(system, ([], [], []))
                if item.human_outcome is None:
                    unlabeled.append(score_of(item.judge_outcome, side))
                else:
                    y.append(score_of(item.human_outcome, side))
                    yhat.append(score_of(item.judge_outcome, side))
        for system in (name for name in order if name in scores):
            labelled, predicted, unlabelled = (np.array(values) for values in scores[system])
            human = classical_mean(labelled, alpha)
            ppi, _ = ppi_mean(labelled, predicted, unlabelled, alpha, lam=1.0)
            plus, weight = ppi_mean(labelled, predicted, unlabelled, alpha, lam=None)
            rows.append({
                "criterion": criterion, "system": system, "labeled": len(labelled), "unlabeled": len(unlabelled),
                "human": human.estimate, "human_low": human.low, "human_high": human.high,
                "ppi": ppi.estimate, "ppi_low": ppi.low, "ppi_high": ppi.high,
                "ppi_plus": plus.estimate, "ppi_plus_low": plus.low, "ppi_plus_high": plus.high,
                "lambda": weight, "judge_only": float(np.concatenate([predicted, unlabelled]).mean()),
            })
    return rows


def interval_widths(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Mean width of the human-only, PPI and PPI++ intervals over the rows that have all three (for a summary)."""
    complete = [row for row in rows if None not in (row["human_low"], row["ppi_low"], row["ppi_plus_low"])]
    if not complete:
        return {"human": None, "ppi": None, "ppi_plus": None}
    return {name: sum(row[f"{name}_high"] - row[f"{name}_low"] for row in complete) / len(complete)
            for name in ("human", "ppi", "ppi_plus")}
