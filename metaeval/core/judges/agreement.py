"""How far a judge agrees with people, per criterion (conventions sec. 28): accuracy and Cohen's kappa of its games
against the people's, the people's own agreement (the ceiling), the judge's position and self-consistency, and its
length bias where the texts' lengths are known.

Input: an :class:`~metaeval.core.judges.items.ItemSet` (items with their people's and judge's votes and games).
One row per criterion (sorted), then ``overall`` (the items of every criterion together); the columns are
:data:`COLUMNS`. Agreement, the ceiling and the length bias use the items with both games; the judge's position
and self-consistency every item it judged. A share over no item is None.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from metaeval.core.judges.items import OUTCOMES, Item, ItemSet, Vote, pooled_outcome, score_of
from metaeval.core.pairwise.features import StyleData
from metaeval.core.pairwise.judgments import OVERALL

__all__ = ["COLUMNS", "agreement_rows", "cohen_kappa", "confusion", "confusion_rows", "pair_agreement"]

COLUMNS = (
    "criterion", "judge", "items", "accuracy", "cohen_kappa",
    "decisive_items", "decisive_accuracy",
    "ceiling_items", "human_human", "judge_human",
    "position_items", "position_consistency", "first_shown_judgments", "judge_first_shown",
    "self_items", "self_consistency",
    "length_items", "judge_longer", "human_longer",
)


def confusion(first: Sequence[str], second: Sequence[str], labels: Sequence[str] = OUTCOMES) -> list[list[int]]:
    """``counts[i][j]``: items where ``first`` says ``labels[i]`` and ``second`` says ``labels[j]``."""
    if len(first) != len(second):
        raise ValueError(f"two raters of the same items, not {len(first)} and {len(second)} labels")
    index = {label: i for i, label in enumerate(labels)}
    counts = [[0] * len(labels) for _ in labels]
    for one, other in zip(first, second, strict=True):
        counts[index[one]][index[other]] += 1
    return counts


def cohen_kappa(first: Sequence[str], second: Sequence[str], labels: Sequence[str] = OUTCOMES) -> float:
    """Cohen's kappa (p_o - p_e) / (1 - p_e) of two raters' labels of the same items, p_e = sum over the labels
    of the product of the two raters' shares; NaN when p_e = 1 (both give one and the same label to every item),
    as scikit-learn's ``cohen_kappa_score``."""
    counts = confusion(first, second, labels)
    n = len(first)
    if n == 0:
        return float("nan")
    observed = sum(counts[i][i] for i in range(len(labels))) / n
    rows = [sum(row) / n for row in counts]
    columns = [sum(row[j] for row in counts) / n for j in range(len(labels))]
    expected = sum(r * c for r, c in zip(rows, columns, strict=True))
    if expected == 1.0:
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def pair_agreement(outcomes: Iterable[str]) -> float | None:
    """The share of unordered pairs of the outcomes that are equal (None for fewer than two)."""
    counts: dict[str, int] = {}
    total = 0
    for outcome in outcomes:
        counts[outcome] = counts.get(outcome, 0) + 1
        total += 1
    if total < 2:
        return None
    return sum(c * (c - 1) for c in counts.values()) / (total * (total - 1))


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _row(criterion: str, judge: str, items: Sequence[Item], style: StyleData | None) -> dict[str, Any]:
    both = [item for item in items if item.human_outcome is not None and item.judge_outcome is not None]
    judge_says = [str(item.judge_outcome) for item in both]
    people_say = [str(item.human_outcome) for item in both]
    matches = [float(j == h) for j, h in zip(judge_says, people_say, strict=True)]
    decisive = [float(j == h) for j, h in zip(judge_says, people_say, strict=True) if "tie" not in (j, h)]
    ceiling = [item for item in both if len(item.human) >= 2]
    human_human = [pair_agreement(vote.outcome for vote in item.human) for item in ceiling]
    judge_human = [sum(vote.outcome == item.judge_outcome for vote in item.human) / len(item.human)
                   for item in ceiling]
    judged = [item for item in items if item.judge_outcome is not None]  # the judge alone: all its items
    position = [consistent for item in judged if (consistent := _position_consistent(item.judge)) is not None]
    first_shown = [float(vote.outcome == vote.first) for item in judged for vote in item.judge
                   if vote.first and vote.outcome != "tie"]
    self_agreement = [share for item in judged if (share := pair_agreement(v.outcome for v in item.judge))
                      is not None]
    judge_longer: list[float] = []
    human_longer: list[float] = []
    if style is not None:
        for item in both:
            longer = _longer(style, item)
            if longer is not None:
                judge_longer.append(score_of(str(item.judge_outcome), longer))
                human_longer.append(score_of(str(item.human_outcome), longer))
    return {
        "criterion": criterion, "judge": judge, "items": len(both), "accuracy": _mean(matches),
        "cohen_kappa": _finite(cohen_kappa(judge_says, people_say)),
        "decisive_items": len(decisive), "decisive_accuracy": _mean(decisive),
        "ceiling_items": len(ceiling), "human_human": _mean([float(x) for x in human_human if x is not None]),
        "judge_human": _mean(judge_human),
        "position_items": len(position), "position_consistency": _mean([float(x) for x in position]),
        "first_shown_judgments": len(first_shown), "judge_first_shown": _mean(first_shown),
        "self_items": len(self_agreement), "self_consistency": _mean(self_agreement),
        "length_items": len(judge_longer), "judge_longer": _mean(judge_longer), "human_longer": _mean(human_longer),
    }


def _position_consistent(votes: Sequence[Vote]) -> bool | None:
    """Whether the judge's runs showing ``a`` first and those showing ``b`` first, each pooled by the game rule,
    give the same outcome (None unless there are runs in both orders)."""
    shown_a = [vote for vote in votes if vote.first == "a"]
    shown_b = [vote for vote in votes if vote.first == "b"]
    if not shown_a or not shown_b:
        return None
    return pooled_outcome(shown_a) == pooled_outcome(shown_b)


def _longer(style: StyleData, item: Item) -> str | None:
    """``a`` or ``b``: the side whose text is longer (None when a length is unknown or they are equal)."""
    first, second = style.length(item.case_id, item.model_a), style.length(item.case_id, item.model_b)
    if first is None or second is None or first == second:
        return None
    return "a" if first > second else "b"


def agreement_rows(items: ItemSet, style: StyleData | None = None) -> list[dict[str, Any]]:
    """One row of :data:`COLUMNS` per criterion (sorted) and ``overall`` (module docstring)."""
    rows = [_row(criterion, items.judge, [item for item in items.items if item.criterion == criterion], style)
            for criterion in items.criteria()]
    rows.append(_row(OVERALL, items.judge, items.items, style))
    return rows


def confusion_rows(items: ItemSet) -> list[dict[str, Any]]:
    """Per criterion and ``overall``: the 3 x 3 counts of the judge's outcome (rows) against the people's (columns)
    over the items that both played, labels :data:`OUTCOMES`."""
    out = []
    for criterion in [*items.criteria(), OVERALL]:
        both = [item for item in items.items if item.human_outcome is not None and item.judge_outcome is not None
                and criterion in (OVERALL, item.criterion)]
        out.append({"criterion": criterion, "labels": list(OUTCOMES),
                    "counts": confusion([str(i.judge_outcome) for i in both], [str(i.human_outcome) for i in both])})
    return out
