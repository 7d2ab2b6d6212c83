"""How many raters per questionnaire a PerSEval-HJ study needs: expected interval widths from pilot ratings
(conventions sec. 27.6; Card et al., EMNLP 2020: simulate the planned design from pilot data).

For each planned number k of raters per questionnaire and each replicate: every questionnaire of the pilot (the
export's ``(study, questionnaire)``, :func:`metaeval.core.stats.raters.questionnaire_key`) gets k of its raters drawn
with replacement (all of a drawn rater's ratings in it; a rater drawn twice counts twice), the HJ variants are
scored on those ratings exactly as ``run_scores`` scores them (``plan_human``, ``human_doc_pairs``,
``score_system``, with the auxiliary distances computed once), and each (automatic measure, HJ label) correlation
gets the report's bootstrap interval (:func:`metaeval.core.stats.resampling.correlation_with_ci`). Per k, measure pair
and method: the mean interval width and the share of replicates whose interval excludes 0 (the power to show a
correlation). The automatic scores do not depend on the ratings and are computed once.

The pilot's raters stand for the population: a questionnaire rated by one pilot rater contributes no rater
variability, and k above a questionnaire's pilot raters repeats them (the figures then describe raters like the
pilot's; ``single_rater_questionnaires`` says how many there are).

Seeds: replicate r at k raters draws from ``numpy.random.default_rng(SeedSequence(seed, spawn_key=(k, r)))``;
its bootstrap for cell c takes the seed ``SeedSequence(seed, spawn_key=(k, r, c + 1)).generate_state(1)[0]``, so
one k's figures do not depend on which other k are asked for.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from metaeval.core.io.corpus import Corpus, Rating, RatingTable
from metaeval.core.measures.cache import DistanceCache
from metaeval.core.measures.distances import compute, unique
from metaeval.core.perseval.human import human_doc_pairs, plan_human
from metaeval.core.perseval.measure import SystemScore, score_system
from metaeval.core.perseval.pipeline import HJ_PREFIX, RunOptions, _transform, prepare_measure
from metaeval.core.perseval.studies import StudyData, document_matrix, prepare_study, score
from metaeval.core.stats import resampling
from metaeval.core.stats.raters import questionnaire_key

__all__ = ["COLUMNS", "HJPower", "hj_power", "rater_groups"]

#: the table's columns, in order
COLUMNS = ("raters", "auto_measure", "hj_measure", "method", "expected_width", "p_excludes_zero", "estimate_mean",
           "replicates", "valid", "n_boot", "confidence", "resample")


@dataclass(frozen=True)
class HJPower:
    """The table (:data:`COLUMNS`) and what the pilot held."""

    rows: list[dict[str, object]]
    questionnaires: int
    single_rater_questionnaires: int
    pilot_raters_max: int


def rater_groups(ratings: RatingTable, extras: Sequence[Mapping[str, object]]) -> list[list[list[Rating]]]:
    """Per questionnaire (first appearance order), per rater (first appearance): that rater's ratings in it. A
    rating without a rater is a rater of its own (as in :mod:`metaeval.core.stats.raters`)."""
    if len(extras) != len(ratings.rows):
        raise ValueError(f"{len(extras)} export rows for {len(ratings.rows)} ratings")
    groups: dict[tuple[str, ...], dict[object, list[Rating]]] = {}
    for index, (rating, extra) in enumerate(zip(ratings.rows, extras, strict=True)):
        rater: object = rating.rater if rating.rater else ("anonymous", index)
        groups.setdefault(questionnaire_key(rating, extra), {}).setdefault(rater, []).append(rating)
    return [list(by_rater.values()) for by_rater in groups.values()]


def _resample(groups: list[list[list[Rating]]], k: int, rng: np.random.Generator, table: RatingTable) -> RatingTable:
    rows: list[Rating] = []
    for raters in groups:
        for pick in rng.integers(0, len(raters), size=k):
            rows.extend(raters[int(pick)])
    return RatingTable(rows=tuple(rows), source=table.source, scale_min=table.scale_min, scale_max=table.scale_max)


def _seed(seed: int, *key: int) -> int:
    return int(np.random.SeedSequence(seed, spawn_key=key).generate_state(1)[0])


def hj_power(
    corpus: Corpus,
    ratings: RatingTable,
    extras: Sequence[Mapping[str, object]],
    options: RunOptions,
    *,
    raters: Sequence[int],
    replicates: int = 100,
    n_boot: int = 200,
    confidence: float = 0.95,
    resample: str = "both",
    seed: int,
    cache: DistanceCache | None = None,
) -> HJPower:
    """The table of the module docstring. ``extras`` are the export rows behind ``ratings`` (for the
    ``study``/``questionnaire`` columns; empty mappings when the file has none). ``options`` name the automatic
    measures and the auxiliary measures of the HJ variants (at least one of each)."""
    if not options.measures or not options.aux:
        raise ValueError("power hj needs at least one automatic measure and one auxiliary (HJ) measure")
    if not raters or min(raters) < 1:
        raise ValueError("the numbers of raters per questionnaire must be at least 1")
    if replicates < 1:
        raise ValueError("replicates must be at least 1")
    groups = rater_groups(ratings, extras)
    study: StudyData = prepare_study(corpus, options, ratings=ratings, cache=cache)
    auto = score(study, labels=study.measures)
    transform = _transform(options.preprocess)
    full = plan_human(corpus, ratings, compat=options.compat, systems=options.systems, transform=transform)
    text_pairs = unique(full.text_pairs())
    aux: dict[str, dict[tuple[str, str], float]] = {}
    for name in options.aux:
        aux[name], _ = compute(prepare_measure(name, options, text_pairs), text_pairs, cache=cache,
                               workers=options.workers)
    cells = list(itertools.product(study.measures, [HJ_PREFIX + name for name in options.aux]))
    rows: list[dict[str, object]] = []
    for k in raters:
        keys = [(c, m) for c in range(len(cells)) for m in resampling.METHODS]
        widths: dict[tuple[int, str], list[float]] = {key: [] for key in keys}
        excludes = {key: 0 for key in keys}
        estimates: dict[tuple[int, str], list[float]] = {key: [] for key in keys}
        for r in range(replicates):
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(k, r)))
            table = _resample(groups, k, rng, ratings)
            plan = plan_human(corpus, table, compat=options.compat, systems=options.systems, transform=transform)
            human: dict[str, dict[str, SystemScore]] = {}
            for name in options.aux:
                human[HJ_PREFIX + name] = {system: score_system(human_doc_pairs(plan, system, aux[name])[0],
                                                                options.params) for system in plan.systems}
            for c, (a, h) in enumerate(cells):
                _, values, weights = _matrices(auto, human, a, h)
                cell = resampling.correlation_with_ci(
                    values[0], values[1], resample=cast(resampling.Resample, resample), n_boot=n_boot,
                    confidence=confidence, seed=_seed(seed, k, r, c + 1), auto_weights=weights[0],
                    human_weights=weights[1])
                for method in resampling.METHODS:
                    low, high = float(cell[f"{method}_low"]), float(cell[f"{method}_high"])  # type: ignore[arg-type]
                    estimates[(c, method)].append(float(cell[method]))  # type: ignore[arg-type]
                    if math.isfinite(low) and math.isfinite(high):
                        widths[(c, method)].append(high - low)
                        excludes[(c, method)] += int(low > 0 or high < 0)
        for c, (a, h) in enumerate(cells):
            for method in resampling.METHODS:
                key = (c, method)
                finite = [value for value in estimates[key] if math.isfinite(value)]
                rows.append({
                    "raters": k, "auto_measure": a, "hj_measure": h, "method": method,
                    "expected_width": float(np.mean(widths[key])) if widths[key] else math.nan,
                    "p_excludes_zero": excludes[key] / replicates,
                    "estimate_mean": float(np.mean(finite)) if finite else math.nan,
                    "replicates": replicates, "valid": len(widths[key]), "n_boot": n_boot,
                    "confidence": confidence, "resample": resample,
                })
    return HJPower(rows=rows, questionnaires=len(groups),
                   single_rater_questionnaires=sum(1 for group in groups if len(group) == 1),
                   pilot_raters_max=max((len(group) for group in groups), default=0))


def _matrices(auto: Mapping[str, Mapping[str, SystemScore]], human: Mapping[str, Mapping[str, SystemScore]],
              a: str, h: str) -> tuple[list[str], list[np.ndarray], list[np.ndarray | None]]:
    """The two measures' ``[S, D]`` document matrices over the same systems and documents (as the report)."""
    systems, _, values, weights = resampling.align(document_matrix(auto, a), document_matrix(human, h))
    return [str(system) for system in systems], values, weights
