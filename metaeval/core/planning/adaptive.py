"""Adaptive assignment of preference pairs: which system pairs to ask about next, and a balanced, seeded draw of
the next set (conventions sec. 27.2). Pure functions: the survey's claims call them, the simulator too.

State: the systems in study order and, per unordered pair p = (i, j), i < j in ``itertools.combinations`` order,
``count[p]`` judgments and ``score[p]`` = the sum of i's scores (a win 1, a tie 1/2, a loss 0). Leading axes are
independent studies (the simulator runs many at once).

Probabilities (Chiang et al. 2024, "Chatbot Arena", sec. 5, eq. (9)): P(a) ~ sqrt(S_aa / n_a) - sqrt(S_aa /
(n_a + 1)), the expected shrinking of pair a's interval from one more judgment. S_aa / n_a is taken as the
Bradley-Terry fit's variance of the difference theta_i - theta_j (the inverse Fisher information of the fit of
:mod:`metaeval.core.pairwise.bradley_terry`, gauge-free: V_a = C_ii + C_jj - 2 C_ij with C the pseudo-inverse of
the Laplacian of N_ij sigma_ij (1 - sigma_ij)), so S_aa = n_a V_a and the weight is sqrt(V_a) (1 - sqrt(n_a /
(n_a + 1))). A pair never judged has weight +inf: while any is left, the weight goes to those evenly. The floor
mixes in the uniform distribution: P(a) = floor / |pairs| + (1 - floor) w_a / sum w, so no pair starves.

The draw (:func:`next_assignments`): ``k`` pairs i.i.d. from P with ``numpy.random.default_rng(seed)``; each gets a
case and sides balanced as the uniform design balances them (``survey/pairwise_design.py``): sides alternate within
a pair (the system that was ``model_a`` less often in this pair goes first; on a tie, the one that was ``model_a``
less often over the study; then the one earlier in study order, as the uniform design's first case), and the case
is the one this pair has used least, then the one used least over the study, then the one whose reader was used
least, then the earliest in one seeded shuffle of the cases (the uniform design deals from such a shuffle).
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from metaeval.core.pairwise.bradley_terry import REGULARISER, fit_bt_many, strongly_connected

__all__ = ["DEFAULT_FLOOR", "Assignment", "arena_probabilities", "arena_weights", "bt_fit_variance",
           "next_assignments", "pair_index", "pairs_of", "uniform_probabilities", "win_matrices"]

#: share of the probability spread evenly over every pair
DEFAULT_FLOOR = 0.1


def pairs_of(n: int) -> list[tuple[int, int]]:
    """The unordered pairs (i, j), i < j, of n systems in ``itertools.combinations`` order."""
    return list(itertools.combinations(range(n), 2))


def pair_index(n: int) -> np.ndarray:
    """``(n, n)``: the index of pair {i, j} in :func:`pairs_of` order (-1 on the diagonal)."""
    index = np.full((n, n), -1, dtype=np.intp)
    for p, (i, j) in enumerate(pairs_of(n)):
        index[i, j] = index[j, i] = p
    return index


def win_matrices(count: np.ndarray, score: np.ndarray, n: int) -> np.ndarray:
    """``(..., n, n)`` win matrices (a tie half a win each way) from per-pair counts and scores ``(..., P)``."""
    count = np.asarray(count, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    first, second = np.array(pairs_of(n), dtype=np.intp).T
    wins = np.zeros((*count.shape[:-1], n, n))
    wins[..., first, second] = score
    wins[..., second, first] = count - score
    return wins


def bt_fit_variance(wins: np.ndarray, *, regulariser: float = REGULARISER) -> tuple[np.ndarray, np.ndarray]:
    """``(theta, variance)``: the Bradley-Terry fit ``(..., n)`` (natural-log units, mean 0) and its variance of
    theta_i - theta_j per pair ``(..., P)``, from the inverse Fisher information at the fit (module docstring).
    The fit and its regulariser are those of :func:`~metaeval.core.pairwise.bradley_terry.fit_bt_many` (virtual
    half wins where the graph needs them)."""
    wins = np.array(wins, dtype=np.float64)
    lead, n = wins.shape[:-2], wins.shape[-1]
    flat = wins.reshape(-1, n, n)
    fit = fit_bt_many(flat, scale=1.0, base=math.e, init=0.0, regulariser=regulariser)  # ratings = theta
    needs = ~strongly_connected(flat)
    flat[needs] += regulariser * (1.0 - np.eye(n))
    theta = fit.ratings
    sigma = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))
    weight = (flat + flat.transpose(0, 2, 1)) * sigma * (1.0 - sigma)
    laplacian = -weight
    laplacian[:, np.arange(n), np.arange(n)] += weight.sum(axis=2)
    inverse = np.linalg.inv(laplacian + 1.0 / n)  # = L^+ + J/n; J cancels in the differences
    first, second = np.array(pairs_of(n), dtype=np.intp).T
    variance = (inverse[:, first, first] + inverse[:, second, second] - inverse[:, first, second]
                - inverse[:, second, first])
    return theta.reshape(*lead, n), variance.reshape(*lead, len(first))


def adjacent_pairs(theta: np.ndarray) -> np.ndarray:
    """``(..., P)``: whether each pair is adjacent in the ranking by ``theta`` ``(..., n)`` (best first, stable)."""
    theta = np.asarray(theta, dtype=np.float64)
    n = theta.shape[-1]
    order = np.argsort(-theta, axis=-1, kind="stable")
    index = pair_index(n)
    adjacent = np.zeros((*theta.shape[:-1], n * (n - 1) // 2), dtype=bool)
    np.put_along_axis(adjacent, index[order[..., :-1], order[..., 1:]], True, axis=-1)
    return adjacent


def arena_weights(count: np.ndarray, variance: np.ndarray, *, floor: float = DEFAULT_FLOOR,
                  focus: np.ndarray | None = None, candidates: np.ndarray | None = None) -> np.ndarray:
    """Probabilities from per-pair counts and BT variances (module docstring): w = sqrt(V) (1 - sqrt(n / (n + 1))),
    the unjudged pairs first, ``floor`` spread evenly. ``candidates`` (a boolean per pair; default all) are the pairs
    that may be drawn at all: the others get probability 0 and the floor is spread over the candidates. ``focus``
    (a boolean per pair, e.g. :func:`adjacent_pairs`) keeps the rule's weight on those pairs only; the other
    candidates get the floor alone (all of the rule's share when no candidate is in focus)."""
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"the floor must lie between 0 and 1, not {floor!r}")
    count = np.asarray(count, dtype=np.float64)
    allowed = np.ones(count.shape, dtype=bool) if candidates is None else np.broadcast_to(candidates, count.shape)
    if not allowed.any(axis=-1).all():
        raise ValueError("no candidate pair")
    weight = np.where(allowed, np.sqrt(variance) * (1.0 - np.sqrt(count / (count + 1.0))), 0.0)
    if focus is not None:
        focused = np.where(focus, weight, 0.0)
        weight = np.where((focused > 0).any(axis=-1, keepdims=True), focused, weight)
    unjudged = (count == 0) & allowed
    weight = np.where(unjudged.any(axis=-1, keepdims=True), unjudged.astype(np.float64), weight)
    total = weight.sum(axis=-1, keepdims=True)
    share = np.where(total > 0, weight / np.where(total > 0, total, 1.0), allowed / allowed.sum(axis=-1, keepdims=True))
    return allowed * floor / allowed.sum(axis=-1, keepdims=True) + (1.0 - floor) * share


def uniform_probabilities(n: int) -> np.ndarray:
    """Every pair alike."""
    pairs = n * (n - 1) // 2
    return np.full(pairs, 1.0 / pairs)


def arena_probabilities(count: np.ndarray, score: np.ndarray, n: int, *, floor: float = DEFAULT_FLOOR,
                        candidates: np.ndarray | None = None, focus: np.ndarray | None = None,
                        regulariser: float = REGULARISER) -> np.ndarray:
    """``(..., P)`` sampling probabilities of the pairs (module docstring): Chatbot Arena's rule with the BT fit's
    variances, the unjudged pairs first, and ``floor`` spread evenly; ``candidates`` and ``focus`` as in
    :func:`arena_weights` (the fit uses every pair's judgments)."""
    count = np.asarray(count, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    if n < 2 or count.shape[-1] != n * (n - 1) // 2 or score.shape != count.shape:
        raise ValueError(f"{n} systems have {n * (n - 1) // 2} pairs: give that many counts and scores")
    if (count < 0).any() or (score < 0).any() or (score > count).any():
        raise ValueError("each pair needs 0 <= score <= count")
    _, variance = bt_fit_variance(win_matrices(count, score, n), regulariser=regulariser)
    return arena_weights(count, variance, floor=floor, candidates=candidates, focus=focus)


@dataclass(frozen=True)
class Assignment:
    """One preference item to ask: a case (document, reader) and two systems, ``model_a`` stored first (the shape
    of ``survey.pairwise_design.PreferenceSpec``)."""

    doc_id: str
    reader_id: str
    model_a: str
    model_b: str

    @property
    def case_id(self) -> str:
        return f"{self.doc_id}/{self.reader_id}"


def next_assignments(probabilities: Sequence[float] | np.ndarray, systems: Sequence[str],
                     cases: Sequence[tuple[str, str]], history: Sequence[Assignment], *, k: int,
                     seed: int) -> list[Assignment]:
    """The next ``k`` items (module docstring): pairs drawn from ``probabilities`` (:func:`pairs_of` order over
    ``systems``), each given a case of ``cases`` ((doc_id, reader_id)) and sides, balanced against ``history``
    (the items assigned so far, in order) and the items drawn before it in this set. Deterministic in ``seed``."""
    n = len(systems)
    if len(set(systems)) != n or n < 2:
        raise ValueError("name at least two systems, each once")
    if not cases or len(set(cases)) != len(cases):
        raise ValueError("name at least one case, each once")
    if k < 0:
        raise ValueError("k must be at least 0")
    p = np.asarray(probabilities, dtype=np.float64)
    if p.shape != (n * (n - 1) // 2,) or (p < 0).any() or not math.isclose(p.sum(), 1.0, rel_tol=1e-9):
        raise ValueError(f"expected {n * (n - 1) // 2} probabilities >= 0 summing to 1")
    position = {system: i for i, system in enumerate(systems)}
    known_cases = set(cases)
    for item in history:
        if item.model_a not in position or item.model_b not in position or item.model_a == item.model_b:
            raise ValueError(f"history names a pair outside the study: {item.model_a} / {item.model_b}")
        if (item.doc_id, item.reader_id) not in known_cases:
            raise ValueError(f"history names a case outside the study: {item.case_id}")
    rng = np.random.default_rng(seed)
    drawn = rng.choice(len(p), size=k, p=p / p.sum())
    deck = {case: rank for rank, case in enumerate(cases[i] for i in rng.permutation(len(cases)))}
    as_a: Counter[str] = Counter()
    pair_as_a: Counter[tuple[str, str]] = Counter()  # (system, the other): times system was model_a against it
    case_uses: Counter[tuple[str, str]] = Counter()
    reader_uses: Counter[str] = Counter()
    pair_case_uses: Counter[tuple[str, str, tuple[str, str]]] = Counter()

    def record(item: Assignment) -> None:
        case = (item.doc_id, item.reader_id)
        first, second = sorted((item.model_a, item.model_b), key=position.__getitem__)
        as_a[item.model_a] += 1
        pair_as_a[(item.model_a, item.model_b)] += 1
        case_uses[case] += 1
        reader_uses[item.reader_id] += 1
        pair_case_uses[(first, second, case)] += 1

    for item in history:
        record(item)
    out: list[Assignment] = []
    pairs = pairs_of(n)
    for index in drawn.tolist():
        first, second = systems[pairs[index][0]], systems[pairs[index][1]]
        a_first = (pair_as_a[(first, second)], as_a[first]) <= (pair_as_a[(second, first)], as_a[second])
        case = min(cases, key=lambda c: (pair_case_uses[(first, second, c)], case_uses[c], reader_uses[c[1]],
                                         deck[c]))
        model_a, model_b = (first, second) if a_first else (second, first)
        item = Assignment(case[0], case[1], model_a, model_b)
        record(item)
        out.append(item)
    return out
