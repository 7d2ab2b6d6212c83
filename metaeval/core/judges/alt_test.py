"""May the judge replace the people? The alternative annotator test (Calderon, Reichart and Dror, ACL 2025, "The
Alternative Annotator Test for LLM-as-a-Judge"; the authors' reference code: github.com/nitaytech/AltTest)
(conventions sec. 28).

Instances are the items (case, criterion, pair) with a judge game and at least ``min_people`` people (three by
default, as the issue asks; the authors' code keeps instances with two); a person's label is their own game on the
item (their judgments pooled by the game rule), the judge's label its game. Leaving out each annotator j in turn,
on each instance i that j labelled, with H the other annotators of i:

    S(x) = share of H whose label equals x                (the alignment score: accuracy, for categorical labels)
    W_f = 1 if S(judge) >= S(j) else 0,  W_h = 1 if S(j) >= S(judge) else 0,  d_i = W_h - W_f

and the one-sided one-sample t-test of H0: mean(d) >= epsilon against H1: mean(d) < epsilon (``scipy.stats.
ttest_1samp(d, epsilon, alternative="less")``; H1 says the judge's advantage rho_f - rho_h exceeds -epsilon).
Annotators with fewer than ``min_items`` instances (30, the authors' default, for the t-test's normality) are
not tested (``test="wilcoxon"``: the signed-rank test of d - epsilon, the authors' advice for fewer). The
p-values of the tested annotators are corrected by Benjamini-Yekutieli at level q (0.05): with the sorted p_(1) <=
... <= p_(m) and H_m = 1 + 1/2 + ... + 1/m, the k smallest are rejected for the largest k with p_(k) <= k q /
(m H_m). The winning rate omega is the share of tested annotators whose null is rejected, and the judge passes
(may replace the annotators) when omega >= 0.5; the average advantage probability rho (mean over the tested
annotators of mean(W_f)) compares judges.

epsilon is the cost-benefit margin: the authors advise 0.2 for experts, 0.15 for skilled annotators and 0.1 for
crowd workers (the default here: a preference study's participants).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metaeval.core.judges.items import ItemSet
from metaeval.core.pairwise.judgments import OVERALL

__all__ = ["ANNOTATOR_COLUMNS", "COLUMNS", "DEFAULT_EPSILON", "EPSILONS", "AltTest", "AnnotatorTest", "alt_test",
           "alt_test_rows", "by_rejections"]

#: the authors' advice per kind of annotator
EPSILONS = {"experts": 0.2, "skilled": 0.15, "crowd": 0.1}
DEFAULT_EPSILON = EPSILONS["crowd"]
DEFAULT_Q = 0.05
DEFAULT_MIN_PEOPLE = 3
DEFAULT_MIN_ITEMS = 30
TESTS = ("t", "wilcoxon")

COLUMNS = ("criterion", "judge", "epsilon", "items", "annotators", "tested", "rejected", "omega", "rho", "verdict")
ANNOTATOR_COLUMNS = ("criterion", "annotator", "items", "judge_advantage", "human_advantage", "mean_difference",
                     "p_value", "rejected")


@dataclass(frozen=True)
class AnnotatorTest:
    """The test of one left-out annotator: ``judge_advantage`` = mean(W_f) (rho_f), ``human_advantage`` =
    mean(W_h), ``p_value`` of H0 mean(W_h - W_f) >= epsilon (None when not tested: fewer than min_items)."""

    annotator: str
    items: int
    judge_advantage: float | None
    human_advantage: float | None
    p_value: float | None
    rejected: bool

    @property
    def tested(self) -> bool:
        return self.p_value is not None


@dataclass(frozen=True)
class AltTest:
    """The test over the annotators: omega = rejected / tested, rho = mean judge advantage over the tested;
    ``verdict`` ``passes`` (omega >= 0.5), ``fails``, or ``untested`` (no annotator had enough instances)."""

    epsilon: float
    q: float
    items: int
    annotators: tuple[AnnotatorTest, ...]

    @property
    def tested(self) -> list[AnnotatorTest]:
        return [a for a in self.annotators if a.tested]

    @property
    def rejected(self) -> int:
        return sum(a.rejected for a in self.annotators)

    @property
    def omega(self) -> float | None:
        tested = self.tested
        return self.rejected / len(tested) if tested else None

    @property
    def rho(self) -> float | None:
        tested = self.tested
        return sum(float(a.judge_advantage or 0.0) for a in tested) / len(tested) if tested else None

    @property
    def verdict(self) -> str:
        omega = self.omega
        return "untested" if omega is None else "passes" if omega >= 0.5 else "fails"


def by_rejections(p_values: Sequence[float], q: float) -> list[bool]:
    """Benjamini-Yekutieli at level ``q``: which hypotheses are rejected (module docstring)."""
    m = len(p_values)
    if m == 0:
        return []
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    thresholds = np.arange(1, m + 1) / m * (q / harmonic)
    passing = np.flatnonzero(p[order] <= thresholds)
    rejected = np.zeros(m, dtype=bool)
    if len(passing):
        rejected[order[: passing[-1] + 1]] = True
    return rejected.tolist()


def _p_value(differences: np.ndarray, epsilon: float, test: str) -> float:
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's "nearly identical data" when d is constant
        if test == "wilcoxon":
            shifted = differences - epsilon
            if not np.any(shifted):
                return 1.0
            p = float(stats.wilcoxon(shifted, alternative="less").pvalue)
        else:
            p = float(stats.ttest_1samp(differences, epsilon, alternative="less").pvalue)
    return 1.0 if math.isnan(p) else p  # constant d equal to epsilon: no evidence either way


def alt_test(judge: Mapping[Hashable, str], people: Mapping[str, Mapping[Hashable, str]], *,
             epsilon: float = DEFAULT_EPSILON, q: float = DEFAULT_Q, min_people: int = DEFAULT_MIN_PEOPLE,
             min_items: int = DEFAULT_MIN_ITEMS, test: str = "t") -> AltTest:
    """The test of the module docstring: ``judge[i]`` the judge's label of instance i, ``people[j][i]``
    annotator j's. Instances without a judge label or with fewer than ``min_people`` annotators are left out."""
    if not 0 <= epsilon < 1:
        raise ValueError(f"epsilon must lie in [0, 1), not {epsilon!r}")
    if not 0 < q < 1:
        raise ValueError(f"q must lie strictly between 0 and 1, not {q!r}")
    if min_people < 2:
        raise ValueError(f"min_people must be >= 2 (one left out, one to compare with), not {min_people!r}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    annotators_of: dict[Hashable, list[str]] = {}
    for person, labels in people.items():
        for instance in labels:
            annotators_of.setdefault(instance, []).append(person)
    kept = {i for i, who in annotators_of.items() if len(who) >= min_people and i in judge}
    results: list[AnnotatorTest] = []
    for person, labels in people.items():
        instances = [i for i in labels if i in kept]
        if not instances:
            continue
        judge_wins = np.empty(len(instances))
        human_wins = np.empty(len(instances))
        for k, instance in enumerate(instances):
            others = [people[other][instance] for other in annotators_of[instance] if other != person]
            judge_score = sum(label == judge[instance] for label in others) / len(others)
            human_score = sum(label == labels[instance] for label in others) / len(others)
            judge_wins[k] = judge_score >= human_score
            human_wins[k] = human_score >= judge_score
        if len(instances) < min_items:
            results.append(AnnotatorTest(person, len(instances), float(judge_wins.mean()),
                                         float(human_wins.mean()), None, False))
            continue
        p = _p_value(human_wins - judge_wins, epsilon, test)
        results.append(AnnotatorTest(person, len(instances), float(judge_wins.mean()), float(human_wins.mean()),
                                     p, False))
    tested = [k for k, result in enumerate(results) if result.tested]
    for k, rejected in zip(tested, by_rejections([float(results[k].p_value or 0.0) for k in tested], q),
                           strict=True):
        if rejected:
            result = results[k]
            results[k] = AnnotatorTest(result.annotator, result.items, result.judge_advantage,
                                       result.human_advantage, result.p_value, True)
    return AltTest(epsilon=epsilon, q=q, items=len(kept), annotators=tuple(results))


def _inputs(items: ItemSet, criterion: str) -> tuple[dict[Hashable, str], dict[str, dict[Hashable, str]]]:
    judge: dict[Hashable, str] = {}
    people: dict[str, dict[Hashable, str]] = {}
    for item in items.items:
        if item.judge_outcome is None or criterion not in (OVERALL, item.criterion):
            continue
        judge[item.key] = item.judge_outcome
        for person, outcome in item.people().items():
            people.setdefault(person, {})[item.key] = outcome
    return judge, people


def alt_test_rows(items: ItemSet, *, epsilon: float = DEFAULT_EPSILON, q: float = DEFAULT_Q,
                  min_people: int = DEFAULT_MIN_PEOPLE, min_items: int = DEFAULT_MIN_ITEMS,
                  test: str = "t") -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per criterion (sorted) and ``overall``: one row of :data:`COLUMNS`, and one row of
    :data:`ANNOTATOR_COLUMNS` per annotator with an instance there. People are told apart by their ``judge`` id
    (judgments without one are left out); the Benjamini-Yekutieli correction runs within each row."""
    rows: list[dict[str, Any]] = []
    detail: list[dict[str, Any]] = []
    for criterion in [*items.criteria(), OVERALL]:
        judge, people = _inputs(items, criterion)
        result = alt_test(judge, people, epsilon=epsilon, q=q, min_people=min_people, min_items=min_items,
                          test=test)
        rows.append({"criterion": criterion, "judge": items.judge, "epsilon": epsilon, "items": result.items,
                     "annotators": len(result.annotators), "tested": len(result.tested),
                     "rejected": result.rejected, "omega": result.omega, "rho": result.rho,
                     "verdict": result.verdict})
        for annotator in result.annotators:
            difference = None
            if annotator.human_advantage is not None and annotator.judge_advantage is not None:
                difference = annotator.human_advantage - annotator.judge_advantage
            detail.append({"criterion": criterion, "annotator": annotator.annotator, "items": annotator.items,
                           "judge_advantage": annotator.judge_advantage,
                           "human_advantage": annotator.human_advantage, "mean_difference": difference,
                           "p_value": annotator.p_value, "rejected": annotator.rejected})
    return rows, detail
