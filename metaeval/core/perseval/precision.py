"""Low precision may not reorder systems silently (docs/conventions.md sec. 3, default mode).

A neural measure run in ``bfloat16`` or ``float16`` gives distances within a few 1e-3 of float32's, which can swap
two systems whose PerSEval values lie closer than that. After such a run:

1. **The error is measured**, not assumed: on a sample of the run's documents (every k-th document of the plan,
   about ``SAMPLE_SHARE`` of them, at least ``MIN_DOCUMENTS`` and at most ``MAX_DOCUMENTS``) the sample's pairs
   are computed again in float32 and every system is scored on the sample both ways;
   ``error = max |value_low - value_float32|`` over the systems and the columns ``COLUMNS``.
2. **Close systems** are those whose full-corpus values (in any of ``COLUMNS``) lie within
   ``bound = MARGIN x error`` of their neighbour in that column's order: chains of such neighbours form groups.
3. ``recheck=auto`` (the default) scores every system of a group again in float32 on every document (its pairs
   computed in float32, through the cache) and its row takes those values, so the order inside a group is
   float32's; systems outside the groups lie farther apart than the bound and keep their low-precision values.
   ``recheck=flag`` only names the groups; ``recheck=off`` skips the check.

The check is returned as a :class:`PrecisionCheck` (``RunResult.precision``, ``run.json``).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from metaeval.core.measures.base import Measure
from metaeval.core.measures.cache import DistanceCache
from metaeval.core.measures.distances import Plan, TextPair, compute, score_systems
from metaeval.core.perseval.measure import DocPairs, Params, SystemScore

__all__ = ["LOW_PRECISION", "PrecisionCheck", "close_groups", "recheck_low_precision", "sample_plan"]

LOW_PRECISION = ("bfloat16", "float16")
#: share of the documents re-computed in float32 to measure the error, and its bounds
SAMPLE_SHARE = 0.02
MIN_DOCUMENTS = 4
MAX_DOCUMENTS = 40
#: the bound is this multiple of the measured error: a sample's error estimates the corpus's from below (on an H100,
#: 6 documents of the BERT-base shape: 7.1e-3 on a 2-document sample against 3.4e-2 on all 6, docs/guide/gpus.md)
MARGIN = 5.0
#: the score columns whose order is protected
COLUMNS = ("perseval", "egises", "degress")


@dataclass
class PrecisionCheck:
    """What the check of one measure found and did."""

    measure: str
    dtype: str
    mode: str
    documents: int
    sample_documents: int
    error: float
    bound: float
    groups: list[list[str]] = field(default_factory=list)
    rechecked: list[str] = field(default_factory=list)
    #: column -> the systems of the groups in the low-precision order and in float32's, where they differ
    reordered: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    float32_pairs: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "measure": self.measure, "dtype": self.dtype, "mode": self.mode, "documents": self.documents,
            "sample_documents": self.sample_documents, "error": self.error, "bound": self.bound,
            "groups": self.groups, "rechecked": self.rechecked, "reordered": self.reordered,
            "float32_pairs": self.float32_pairs, "seconds": self.seconds,
        }

    def message(self) -> str:
        """One line for a log or a report."""
        head = (f"{self.measure} in {self.dtype}: measured error {self.error:.2e} on {self.sample_documents} of "
                f"{self.documents} documents (bound {self.bound:.2e})")
        if not self.groups:
            return head + "; no two systems closer than the bound"
        groups = "; ".join(", ".join(group) for group in self.groups)
        if self.mode == "flag":
            return head + f"; closer than the bound, order not checked in float32: {groups}"
        moved = f", order changed in {', '.join(sorted(self.reordered))}" if self.reordered else ", order kept"
        return head + f"; re-checked in float32: {groups}{moved}"


def _document_ids(plan: Plan) -> list[str]:
    seen: dict[str, None] = {}
    for documents in plan.systems.values():
        for document in documents:
            seen.setdefault(document.doc_id)
    return list(seen)


def sample_plan(plan: Plan, share: float = SAMPLE_SHARE, low: int = MIN_DOCUMENTS,
                high: int = MAX_DOCUMENTS) -> tuple[Plan, int]:
    """The plan restricted to every k-th of its documents (in plan order), about ``share`` of them, clipped to
    [low, high] (all documents when there are fewer than ``low``); and the number of documents sampled."""
    ids = _document_ids(plan)
    if not ids:
        return plan, 0
    target = min(len(ids), max(low, min(high, math.ceil(share * len(ids)))))
    step = max(1, len(ids) // target)
    chosen = set(ids[::step][:target])
    sub = Plan({system: [doc for doc in documents if doc.doc_id in chosen]
                for system, documents in plan.systems.items()})
    return sub, len(chosen)


def close_groups(values: Mapping[str, float], bound: float) -> list[list[str]]:
    """Chains of systems whose neighbours in the order of ``values`` (highest first) lie within ``bound``; groups
    of two or more, each in that order. NaN values take no part."""
    ordered = sorted((system for system, value in values.items() if not math.isnan(value)),
                     key=lambda system: -values[system])
    groups: list[list[str]] = []
    current: list[str] = []
    for system in ordered:
        if current and values[current[-1]] - values[system] <= bound:
            current.append(system)
            continue
        if len(current) > 1:
            groups.append(current)
        current = [system]
    if len(current) > 1:
        groups.append(current)
    return groups


def _column(scores: Mapping[str, SystemScore], column: str) -> dict[str, float]:
    return {system: float(getattr(score, column)) for system, score in scores.items()}


def _merge(groups: Sequence[Sequence[str]], order: Sequence[str]) -> list[list[str]]:
    """Overlapping groups joined, each listed in ``order``."""
    merged: list[set[str]] = []
    for group in groups:
        members = set(group)
        for existing in [m for m in merged if m & members]:
            members |= existing
            merged.remove(existing)
        merged.append(members)
    rank = {system: index for index, system in enumerate(order)}
    return sorted(([s for s in order if s in members] for members in merged), key=lambda g: rank[g[0]])


def recheck_low_precision(
    name: str,
    measure: Measure,
    plan: Plan,
    distance: Mapping[TextPair, float],
    scored: dict[str, SystemScore],
    params: Params,
    exact_measure: Callable[[], Measure],
    *,
    cache: DistanceCache | None = None,
    collect: Callable[[str, list[DocPairs]], None] | None = None,
) -> tuple[dict[str, SystemScore], PrecisionCheck | None]:
    """The check of the module docstring for ``measure`` (run in ``measure.dtype``) on ``plan``: ``distance``
    holds its low-precision distances and ``scored`` the systems' scores from them; ``exact_measure()`` gives the
    same measure in float32 (loaded, idf fitted on the run's texts). Returns the scores (rechecked systems
    replaced) and the check; None when the measure ran in float32 or its ``recheck`` is ``off``."""
    dtype = str(getattr(measure, "dtype", "float32"))
    mode = str(getattr(measure, "recheck", "off"))
    if dtype not in LOW_PRECISION or mode == "off" or not scored:
        return scored, None
    started = time.perf_counter()
    documents = len(_document_ids(plan))
    sample, sampled = sample_plan(plan)
    sample_pairs = sample.text_pairs()
    exact = exact_measure()
    exact_distance, stat = compute(exact, sample_pairs, cache=cache, workers=1)
    float32_pairs = stat.computed
    low_sample = score_systems(sample, {pair: distance[pair] for pair in sample_pairs}, params, workers=1)
    exact_sample = score_systems(sample, exact_distance, params, workers=1)
    error = 0.0
    for column in COLUMNS:
        for system, low_score in low_sample.items():
            difference = abs(float(getattr(low_score, column)) - float(getattr(exact_sample[system], column)))
            if not math.isnan(difference):
                error = max(error, difference)
    bound = MARGIN * error
    order = sorted(scored, key=lambda system: -_nan_low(float(scored[system].perseval)))
    found = [group for column in COLUMNS for group in close_groups(_column(scored, column), bound)]
    groups = _merge(found, order)
    check = PrecisionCheck(name, dtype, mode, documents, sampled, error, bound, groups)
    out = dict(scored)
    if mode == "auto" and groups:
        rechecked = [system for group in groups for system in group]
        sub = Plan({system: plan.systems[system] for system in plan.systems if system in set(rechecked)})
        pairs = sub.text_pairs()
        exact_all, stat = compute(exact, pairs, cache=cache, workers=1)
        float32_pairs += stat.computed
        fresh = score_systems(sub, exact_all, params, workers=1, collect=collect)
        for column in COLUMNS:
            before = [s for s in sorted(rechecked, key=lambda s: -_nan_low(float(getattr(scored[s], column))))]
            after = [s for s in sorted(rechecked, key=lambda s: -_nan_low(float(getattr(fresh[s], column))))]
            if before != after:
                check.reordered[column] = {"low_precision": before, "float32": after}
        out.update(fresh)
        check.rechecked = rechecked
    check.float32_pairs = float32_pairs
    check.seconds = time.perf_counter() - started
    return out, check


def _nan_low(value: float) -> float:
    return -math.inf if math.isnan(value) else value
