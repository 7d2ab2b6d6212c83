"""A live preference study's state, its stopping rule and its next adaptive set (conventions sec. 27.8): the
simulator's assignment and stopping code (:mod:`.adaptive`, :mod:`.confseq`) applied to one study's stored
judgments. Plain data in and out; the survey's claims and progress page call it.

State: the systems in study order and, per unordered pair in :func:`~.adaptive.pairs_of` order, ``count`` outcomes
and ``score`` = the first system's summed scores (an outcome is one judged item: the mean of its criteria's
scores, a win 1, a tie 1/2, a loss 0, so it lies in [0, 1] as the confidence sequences need).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from metaeval.core.planning.adaptive import (
    DEFAULT_FLOOR,
    Assignment,
    adjacent_pairs,
    arena_weights,
    bt_fit_variance,
    pair_index,
    pairs_of,
    win_matrices,
)
from metaeval.core.planning.confseq import DEFAULT_T_OPT, StopRule, pair_intervals, stop_reached
from metaeval.core.planning.ranks import rank_ranges
from metaeval.core.planning.simulate import _full, _order

__all__ = ["StudyState", "next_set", "set_probabilities", "study_state"]


@dataclass(frozen=True)
class StudyState:
    """One study's live ranking: per system (study order) the BT rating ``theta`` (natural-log units), rank
    ``best``/``worst`` from the separated pairs; per pair ``low``/``high`` of the confidence sequence at alpha /
    pairs; ``order`` (best first) and whether ``rule`` holds (``stopped``)."""

    systems: tuple[str, ...]
    count: np.ndarray
    score: np.ndarray
    theta: np.ndarray
    low: np.ndarray
    high: np.ndarray
    order: np.ndarray
    best: np.ndarray
    worst: np.ndarray
    rule: StopRule
    alpha: float
    stopped: bool

    @property
    def judged(self) -> int:
        return int(round(float(self.count.sum())))

    def ranking(self) -> list[dict[str, object]]:
        """Rows best first: ``system``, ``rating`` (Elo points, 400 log10 units, mean 0), ``rank_best``,
        ``rank_worst``."""
        elo = self.theta * 400.0 / math.log(10.0)
        return [{"system": self.systems[i], "rating": float(elo[i]), "rank_best": int(self.best[i]),
                 "rank_worst": int(self.worst[i])} for i in self.order.tolist()]

    def adjacent(self) -> list[dict[str, object]]:
        """The adjacent pairs of the ranking: ``better``, ``worse``, ``judged``, the interval of the better one's
        mean score against the other (``low``, ``high``) and whether it lies above 1/2 (``separated``)."""
        n = len(self.systems)
        index = pair_index(n)
        rows = []
        for a, b in zip(self.order[:-1].tolist(), self.order[1:].tolist(), strict=True):
            p = index[a, b]
            low, high = (self.low[p], self.high[p]) if a < b else (1.0 - self.high[p], 1.0 - self.low[p])
            rows.append({"better": self.systems[a], "worse": self.systems[b], "judged": int(self.count[p]),
                         "low": float(low), "high": float(high), "separated": bool(low > 0.5)})
        return rows


def study_state(systems: Sequence[str], count: Sequence[float], score: Sequence[float], *, rule: StopRule,
                alpha: float, t_opt: float = DEFAULT_T_OPT) -> StudyState:
    """The state from per-pair counts and scores (module docstring); intervals at ``alpha`` / pairs (Bonferroni,
    sec. 27.3), the ranking by the BT fit, ranks from the separated pairs, and ``rule``."""
    n = len(systems)
    pairs = n * (n - 1) // 2
    count_a = np.asarray(count, dtype=np.float64)
    score_a = np.asarray(score, dtype=np.float64)
    if n < 2 or count_a.shape != (pairs,) or score_a.shape != (pairs,):
        raise ValueError(f"{n} systems have {pairs} pairs: give that many counts and scores")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, not {alpha!r}")
    theta, _ = bt_fit_variance(win_matrices(count_a, score_a, n))
    low, high = pair_intervals(count_a, score_a, alpha / pairs, t_opt=t_opt)
    full_low, full_high = _full(low, high, n)
    order = _order(theta)
    better = full_low > 0.5
    np.fill_diagonal(better, False)
    best, worst = rank_ranges(better)
    stopped = bool(stop_reached(rule, order, full_low, full_high))
    return StudyState(tuple(systems), count_a, score_a, theta, low, high, order, best, worst, rule, alpha, stopped)


def set_probabilities(state: StudyState, *, floor: float = DEFAULT_FLOOR) -> np.ndarray:
    """The adaptive policy's pair probabilities (sec. 27.2, ``focus=adjacent``: the simulator's policy that saves
    judgments, sec. 27.7)."""
    _, variance = bt_fit_variance(win_matrices(state.count, state.score, len(state.systems)))
    return arena_weights(state.count, variance, floor=floor, focus=adjacent_pairs(state.theta))


def next_set(probabilities: Sequence[float] | np.ndarray, systems: Sequence[str], cases: Sequence[tuple[str, str]],
             history: Sequence[Assignment], *, k: int, seed: int) -> list[Assignment]:
    """One questionnaire's worth: ``k`` distinct pairs drawn without replacement from ``probabilities`` (at most
    every pair), all on one case, the case that these pairs have used least (summed), then the one used least over
    the study, then the one whose reader was used least, then the earliest in a seeded shuffle; sides per pair by
    the rule of :func:`~.adaptive.next_assignments` (the uniform design's balancing) against ``history`` and the
    pairs before it in the set. Deterministic in
    ``seed``."""
    p = np.asarray(probabilities, dtype=np.float64)
    n = len(systems)
    pairs = n * (n - 1) // 2
    if p.shape != (pairs,) or (p < 0).any() or not math.isclose(p.sum(), 1.0, rel_tol=1e-9):
        raise ValueError(f"expected {pairs} probabilities >= 0 summing to 1")
    if not cases:
        raise ValueError("no case to draw from")
    rng = np.random.default_rng(seed)
    k = min(k, int((p > 0).sum()))
    drawn = rng.choice(pairs, size=k, replace=False, p=p / p.sum()).tolist() if k > 0 else []
    deck = {case: rank for rank, case in enumerate(cases[i] for i in rng.permutation(len(cases)))}
    position = {system: i for i, system in enumerate(systems)}
    index = pair_index(n)
    pair_case: dict[tuple[int, tuple[str, str]], int] = {}
    case_uses: dict[tuple[str, str], int] = {}
    reader_uses: dict[str, int] = {}
    for item in history:
        case = (item.doc_id, item.reader_id)
        key = (int(index[position[item.model_a], position[item.model_b]]), case)
        pair_case[key] = pair_case.get(key, 0) + 1
        case_uses[case] = case_uses.get(case, 0) + 1
        reader_uses[item.reader_id] = reader_uses.get(item.reader_id, 0) + 1
    case = min(cases, key=lambda c: (sum(pair_case.get((d, c), 0) for d in drawn), case_uses.get(c, 0),
                                     reader_uses.get(c[1], 0), deck[c]))
    as_a: dict[str, int] = {}
    pair_as_a: dict[tuple[str, str], int] = {}  # (system, the other): times system was model_a against it
    for item in history:
        as_a[item.model_a] = as_a.get(item.model_a, 0) + 1
        pair_as_a[(item.model_a, item.model_b)] = pair_as_a.get((item.model_a, item.model_b), 0) + 1
    out: list[Assignment] = []
    for d in drawn:
        first, second = (systems[i] for i in pairs_of(n)[d])
        # next_assignments' side rule: the one that was model_a less often in this pair, then over the study,
        # then the earlier in study order
        a_first = ((pair_as_a.get((first, second), 0), as_a.get(first, 0))
                   <= (pair_as_a.get((second, first), 0), as_a.get(second, 0)))
        model_a, model_b = (first, second) if a_first else (second, first)
        as_a[model_a] = as_a.get(model_a, 0) + 1
        pair_as_a[(model_a, model_b)] = pair_as_a.get((model_a, model_b), 0) + 1
        out.append(Assignment(case[0], case[1], model_a, model_b))
    return out
