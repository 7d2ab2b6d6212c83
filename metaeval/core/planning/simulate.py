"""Simulated preference studies: the assignment and stopping code of :mod:`~metaeval.core.planning.adaptive` and
:mod:`~metaeval.core.planning.confseq` run on judgments drawn from a Bradley-Terry truth (conventions sec. 27.5).

Truth: an Elo rating per system. A judgment of the pair (i, j) is a tie with probability ``tie_rate``, else a win
for i with probability sigma_ij = 1 / (1 + 10^((R_j - R_i) / 400)); i's true mean score is mu_ij = 1/2 + (1 -
tie_rate) (sigma_ij - 1/2). Every repetition is one study, run in sets of ``batch`` judgments until its stopping
rule holds or ``max_judgments`` are spent; all repetitions run at once (numpy arrays, one row per study) from one
``numpy.random.default_rng(seed)``, so the same settings and seed give the same figures.

- ``uniform``: the pairs in turn (judgment t goes to pair perm[t mod P], perm a seeded permutation per study), as
  the uniform design gives every pair the same number of cases;
- ``adaptive``: each set's pair counts are multinomial(batch, P) with P = :func:`~.adaptive.arena_probabilities`
  of the judgments so far.

After every set: each pair's confidence sequence at alpha / P (:func:`~.confseq.pair_intervals`), the ranking by
the Bradley-Terry fit, and the stopping rule. At the end of each study: judgments used, ranking errors (pairs of
systems the fitted ranking orders against the truth; whether it is exactly right), false separations (a pair whose
interval excludes 1/2 on the wrong side: a wrong "A beats B"), coverage of the reported intervals (of each pair's
mu_ij; all pairs at once) and each system's rank range (:mod:`~.ranks`, from the separated pairs).
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from metaeval.core.io.corpus import DataError
from metaeval.core.io.fileio import listed
from metaeval.core.pairwise.bradley_terry import REGULARISER, fit_bt_many
from metaeval.core.planning.adaptive import (
    DEFAULT_FLOOR,
    adjacent_pairs,
    arena_weights,
    bt_fit_variance,
    pairs_of,
    win_matrices,
)
from metaeval.core.planning.confseq import (
    DEFAULT_T_OPT,
    VARIANCE_PER_OUTCOME,
    StopRule,
    pair_intervals,
    stop_reached,
)
from metaeval.core.planning.ranks import rank_ranges

__all__ = ["FOCUS", "INTERVALS", "POLICIES", "Settings", "Simulation", "Truth", "read_truth", "simulate"]

POLICIES = ("uniform", "adaptive")
#: where the adaptive policy puts Chatbot Arena's weights: every pair, or the pairs adjacent in the current ranking
FOCUS = ("all", "adjacent")
#: ``sequence``: the anytime-valid confidence sequences; ``fixed``: ordinary fixed-n Wald intervals re-checked after
#: every set (what not to do; for comparison only)
INTERVALS = ("sequence", "fixed")


@dataclass(frozen=True)
class Truth:
    """Systems and their true Elo ratings."""

    systems: tuple[str, ...]
    elo: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.systems) < 2 or len(self.systems) != len(self.elo):
            raise ValueError("a truth needs at least two systems, each with one rating")
        if len(set(self.systems)) != len(self.systems):
            raise ValueError("a system is named twice")
        if not all(math.isfinite(value) for value in self.elo):
            raise ValueError("every rating must be a finite number")


def read_truth(path: str | Path) -> Truth:
    """A CSV with the columns ``system,elo`` (others ignored); otherwise a DataError naming every bad line, in
    order."""
    path = Path(path)
    text = path.read_text(encoding="utf-8-sig")
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    if "system" not in header or "elo" not in header:
        raise DataError(f"{path.name}:1: the header must name the columns system and elo")
    reader.fieldnames = header
    systems: list[str] = []
    elo: list[float] = []
    problems: list[str] = []
    for row in reader:
        line = reader.line_num
        name = (row.get("system") or "").strip()
        try:
            value = float(row.get("elo") or "")
        except ValueError:
            value = math.nan
        if not name:
            problems.append(f"{path.name}:{line}: the system name is empty")
        if not math.isfinite(value):
            problems.append(f"{path.name}:{line}: elo {row.get('elo')!r} is not a finite number")
        if name and name in systems:
            problems.append(f"{path.name}:{line}: system {name!r} is listed twice")
        systems.append(name)
        elo.append(value)
    if problems:
        raise DataError(listed(problems))
    if len(systems) < 2:
        raise DataError(f"{path.name}: a truth needs at least two systems")
    return Truth(tuple(systems), tuple(elo))


@dataclass(frozen=True)
class Settings:
    """One simulated design (module docstring)."""

    policy: str
    rule: StopRule
    repetitions: int
    seed: int
    alpha: float = 0.05
    tie_rate: float = 0.0
    batch: int = 50
    max_judgments: int = 100_000
    floor: float = DEFAULT_FLOOR
    t_opt: float = DEFAULT_T_OPT
    focus: str = "all"
    intervals: str = "sequence"
    #: record the ranking's accuracy after every set (for "judgments needed for a given accuracy")
    curve: bool = False

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {self.policy!r}")
        if self.focus not in FOCUS:
            raise ValueError(f"focus must be one of {', '.join(FOCUS)}, not {self.focus!r}")
        if self.intervals not in INTERVALS:
            raise ValueError(f"intervals must be one of {', '.join(INTERVALS)}, not {self.intervals!r}")
        if self.repetitions < 1 or self.batch < 1 or self.max_judgments < 1:
            raise ValueError("repetitions, batch and max_judgments must be at least 1")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie strictly between 0 and 1, not {self.alpha!r}")
        if not 0 <= self.tie_rate < 1:
            raise ValueError(f"the tie rate must be at least 0 and below 1, not {self.tie_rate!r}")
        if not 0 <= self.floor <= 1:
            raise ValueError(f"the floor must lie between 0 and 1, not {self.floor!r}")
        if not self.t_opt > 0:
            raise ValueError(f"t_opt must be positive, not {self.t_opt!r}")


@dataclass
class Simulation:
    """Per study (first axis: repetitions) what it ended with; ``curve`` rows when asked for."""

    truth: Truth
    settings: Settings
    judgments: np.ndarray
    stopped: np.ndarray
    discordant: np.ndarray
    exact: np.ndarray
    false_separation: np.ndarray
    covered_all: np.ndarray
    covered_share: np.ndarray
    rank_best: np.ndarray
    rank_worst: np.ndarray
    #: judgments per pair (:func:`~.adaptive.pairs_of` order) and the sum of the first system's scores
    pair_counts: np.ndarray
    pair_scores: np.ndarray
    curve: list[dict[str, float]] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        """One row: the design, then the figures over the repetitions."""
        s = self.settings
        used = self.judgments
        return {
            "policy": s.policy, "focus": s.focus if s.policy == "adaptive" else "", "stop": str(s.rule),
            "intervals": s.intervals, "repetitions": s.repetitions, "seed": s.seed, "alpha": s.alpha,
            "tie_rate": s.tie_rate, "batch": s.batch, "max_judgments": s.max_judgments,
            "judgments_mean": float(used.mean()), "judgments_median": float(np.median(used)),
            "judgments_p90": float(np.percentile(used, 90)), "stopped": float(self.stopped.mean()),
            "ranking_exact": float(self.exact.mean()), "discordant_pairs_mean": float(self.discordant.mean()),
            "false_separation_rate": float(self.false_separation.mean()),
            "coverage_all_pairs": float(self.covered_all.mean()),
            "coverage_per_pair": float(self.covered_share.mean()),
        }

    def system_rows(self) -> list[dict[str, object]]:
        """Per system (truth order): its true rank and rating, and its rank range over the repetitions."""
        truth_rank = _true_ranks(np.array(self.truth.elo))
        rows: list[dict[str, object]] = []
        for i in np.argsort(truth_rank, kind="stable"):
            inside = (self.rank_best[:, i] <= truth_rank[i]) & (truth_rank[i] <= self.rank_worst[:, i])
            rows.append({"system": self.truth.systems[i], "elo": self.truth.elo[i], "true_rank": int(truth_rank[i]),
                         "rank_best_mean": float(self.rank_best[:, i].mean()),
                         "rank_worst_mean": float(self.rank_worst[:, i].mean()),
                         "range_covers_true_rank": float(inside.mean())})
        return rows


def _true_ranks(elo: np.ndarray) -> np.ndarray:
    return 1 + (elo[None, :] > elo[:, None]).sum(axis=1)


def _order(theta: np.ndarray) -> np.ndarray:
    """Systems best first per study (stable on equal ratings)."""
    return np.argsort(-theta, axis=-1, kind="stable")


def _full(low: np.ndarray, high: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(..., n, n)`` intervals of mu_ij from the pairs' ``(..., P)`` (mu_ji = 1 - mu_ij); diagonal [0.5, 0.5]."""
    first, second = np.array(pairs_of(n), dtype=np.intp).T
    full_low = np.full((*low.shape[:-1], n, n), 0.5)
    full_high = np.full((*low.shape[:-1], n, n), 0.5)
    full_low[..., first, second], full_high[..., first, second] = low, high
    full_low[..., second, first], full_high[..., second, first] = 1.0 - high, 1.0 - low
    return full_low, full_high


def simulate(truth: Truth, settings: Settings) -> Simulation:
    """Run ``settings.repetitions`` studies (module docstring)."""
    s = settings
    n = len(truth.systems)
    pairs = n * (n - 1) // 2
    alpha_pair = s.alpha / pairs
    elo = np.array(truth.elo)
    first, second = np.array(pairs_of(n), dtype=np.intp).T
    sigma = 1.0 / (1.0 + 10.0 ** ((elo[second] - elo[first]) / 400.0))
    mu = 0.5 + (1.0 - s.tie_rate) * (sigma - 0.5)
    rng = np.random.default_rng(s.seed)
    reps = s.repetitions
    count = np.zeros((reps, pairs))
    score = np.zeros((reps, pairs))
    used = np.zeros(reps, dtype=np.int64)
    active = np.ones(reps, dtype=bool)
    theta = np.zeros((reps, n))
    variance = np.ones((reps, pairs))  # of the BT differences, for the adaptive policy (unused before a judgment)
    perm = rng.permuted(np.tile(np.arange(pairs), (reps, 1)), axis=1) if s.policy == "uniform" else None
    curve: list[dict[str, float]] = []
    true_order = np.argsort(-elo, kind="stable")
    needs_fit = s.policy != "uniform" or s.rule.kind == "separated" or s.curve
    while active.any():
        rows = np.flatnonzero(active)
        step = int(min(s.batch, s.max_judgments - used[rows[0]]))
        if perm is not None:
            positions = np.bincount(np.arange(used[rows[0]], used[rows[0]] + step) % pairs, minlength=pairs)
            add = np.zeros((len(rows), pairs))
            add[np.arange(len(rows))[:, None], perm[rows]] = positions[None, :]
        else:
            focus = adjacent_pairs(theta[rows]) if s.focus == "adjacent" else None
            probabilities = arena_weights(count[rows], variance[rows], floor=s.floor, focus=focus)
            add = rng.multinomial(step, probabilities).astype(np.float64)
        ties = rng.binomial(add.astype(np.int64), s.tie_rate) if s.tie_rate > 0 else np.zeros_like(add)
        wins = rng.binomial((add - ties).astype(np.int64), np.broadcast_to(sigma, add.shape))
        count[rows] += add
        score[rows] += wins + 0.5 * ties
        used[rows] += step
        if s.policy != "uniform":
            theta[rows], variance[rows] = bt_fit_variance(win_matrices(count[rows], score[rows], n),
                                                          regulariser=REGULARISER)
        elif needs_fit:
            theta[rows] = _fit(count[rows], score[rows], n)
        low, high = _intervals(s, count[rows], score[rows], alpha_pair)
        full_low, full_high = _full(low, high, n)
        done = stop_reached(s.rule, _order(theta[rows]), full_low, full_high) | (used[rows] >= s.max_judgments)
        if s.curve:
            exact, discordant = _ranking_errors(theta[rows], true_order, elo)
            curve.append({"judgments": float(used[rows[0]]), "ranking_exact": float(exact.mean()),
                          "discordant_pairs_mean": float(discordant.mean()), "studies": float(len(rows))})
        active[rows[done]] = False
    if not needs_fit:
        theta = _fit(count, score, n)
    low, high = _intervals(s, count, score, alpha_pair)
    exact, discordant = _ranking_errors(theta, true_order, elo)
    # an interval that excludes 1/2 on a side the truth is not on: a wrong "A beats B"
    wrong = ((mu <= 0.5) & (low > 0.5)) | ((mu >= 0.5) & (high < 0.5))
    covered = (low <= mu) & (mu <= high)
    full_low, full_high = _full(low, high, n)
    best, worst = rank_ranges(full_low > 0.5)
    stopped = stop_reached(s.rule, _order(theta), full_low, full_high)
    return Simulation(truth=truth, settings=s, judgments=used, stopped=stopped, discordant=discordant, exact=exact,
                      false_separation=wrong.any(axis=1), covered_all=covered.all(axis=1),
                      covered_share=covered.mean(axis=1), rank_best=best, rank_worst=worst, pair_counts=count,
                      pair_scores=score, curve=curve)


def _intervals(s: Settings, count: np.ndarray, score: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The pairs' reported intervals: the confidence sequences, or (``fixed``) the fixed-n normal interval with the
    same variance bound, mean +- z_(1 - alpha/2) sqrt(1/4 / t), as if t had been fixed in advance ([0, 1] before a
    judgment)."""
    if s.intervals == "sequence":
        return pair_intervals(count, score, alpha, t_opt=s.t_opt)
    from scipy.stats import norm

    seen = count > 0
    safe = np.where(seen, count, 1.0)
    mean = score / safe
    radius = float(norm.isf(alpha / 2.0)) * np.sqrt(VARIANCE_PER_OUTCOME / safe)
    return np.where(seen, np.clip(mean - radius, 0, 1), 0.0), np.where(seen, np.clip(mean + radius, 0, 1), 1.0)


def _fit(count: np.ndarray, score: np.ndarray, n: int) -> np.ndarray:
    """The Bradley-Terry fit (natural-log units) of each study's judgments."""
    return fit_bt_many(win_matrices(count, score, n), scale=1.0, base=math.e, init=0.0,
                       regulariser=REGULARISER).ratings


def _ranking_errors(theta: np.ndarray, true_order: np.ndarray, elo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per study: whether the fitted ranking is the true one, and the number of system pairs it orders against
    the truth (a fitted tie counts half)."""
    higher = elo[:, None] > elo[None, :]  # truth: i above j
    fitted_below = theta[:, :, None] < theta[:, None, :]
    fitted_tie = theta[:, :, None] == theta[:, None, :]
    discordant = ((fitted_below + 0.5 * fitted_tie) * higher[None]).sum(axis=(1, 2))
    exact = (_order(theta) == true_order[None, :]).all(axis=1) & (discordant == 0)
    return exact, discordant
