"""Accuracy of pairwise judgments against an assumed truth ranking (AuPEL, sec. 5.1; docs/conventions.md sec. 18).

A judgment is a plain tuple ``(case_id, model_a, model_b, winner)`` with ``winner`` one of ``"model_a"``,
``"model_b"``, ``"tie"``. The truth is a list of systems, best first (AuPEL: GOLD > T5-XXL > T5-XL). A judgment
counts when both of its systems are ranked and differ; it scores 1 when it prefers the higher-ranked system, 0 when
it prefers the lower one, and ``tie_credit`` for a tie: 0 by default (a tie agrees with no ranking), 0.5 as an
option (half right). Accuracy = mean score over the counted judgments.

Interval: cluster bootstrap over cases. Each of ``n_boot`` rounds resamples the case ids (of the cases with a
counted judgment) with replacement, keeps every counted judgment of a drawn case as often as the case was drawn,
and recomputes the accuracy; the interval is the 2.5 / 97.5 percentile (numpy's linear interpolation) of the
rounds. Seeded with :func:`numpy.random.default_rng`.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["WINNERS", "AccuracyResult", "Judgment", "judgment_scores", "truth_accuracy"]

WINNERS = ("model_a", "model_b", "tie")
Judgment = tuple[str, str, str, str]


@dataclass(frozen=True)
class AccuracyResult:
    accuracy: float
    low: float
    high: float
    judgments: int  # counted (both systems ranked and different)
    cases: int
    skipped: int  # judgments with an unranked system or a system against itself
    tie_credit: float
    n_boot: int
    seed: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def judgment_scores(
    judgments: Iterable[Judgment], truth: Sequence[str], *, tie_credit: float = 0.0
) -> tuple[list[str], list[float], int]:
    """(case id, score) of every counted judgment and the number skipped; a bad ``winner`` is a ValueError."""
    if len(set(truth)) != len(truth):
        raise ValueError("the truth ranking names a system twice")
    if not 0 <= tie_credit <= 1:
        raise ValueError("tie_credit must lie in [0, 1]")
    rank = {system: position for position, system in enumerate(truth)}
    cases: list[str] = []
    scores: list[float] = []
    skipped = 0
    for number, (case_id, model_a, model_b, winner) in enumerate(judgments):
        if winner not in WINNERS:
            raise ValueError(f"judgment {number}: winner {winner!r} is not one of {', '.join(WINNERS)}")
        if model_a not in rank or model_b not in rank or model_a == model_b:
            skipped += 1
            continue
        better_is_a = rank[model_a] < rank[model_b]
        if winner == "tie":
            score = tie_credit
        else:
            score = 1.0 if (winner == "model_a") == better_is_a else 0.0
        cases.append(str(case_id))
        scores.append(score)
    return cases, scores, skipped


def truth_accuracy(
    judgments: Iterable[Judgment],
    truth: Sequence[str],
    *,
    tie_credit: float = 0.0,
    n_boot: int = 1000,
    seed: int = 0,
) -> AccuracyResult:
    """Share of counted judgments that agree with ``truth`` and its cluster-bootstrap 95% interval."""
    cases, scores, skipped = judgment_scores(judgments, truth, tie_credit=tie_credit)
    if not scores:
        raise ValueError("no judgment compares two systems of the truth ranking")
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    ids, index = np.unique(np.array(cases), return_inverse=True)
    totals = np.bincount(index, weights=np.array(scores), minlength=len(ids))
    counts = np.bincount(index, minlength=len(ids)).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(len(ids), np.full(len(ids), 1 / len(ids)), size=n_boot).astype(float)
    rounds = (draws @ totals) / (draws @ counts)
    low, high = np.percentile(rounds, [2.5, 97.5])
    return AccuracyResult(
        accuracy=float(totals.sum() / counts.sum()),
        low=float(low),
        high=float(high),
        judgments=len(scores),
        cases=len(ids),
        skipped=skipped,
        tie_credit=tie_credit,
        n_boot=n_boot,
        seed=seed,
    )
