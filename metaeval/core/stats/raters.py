"""Inter-rater reliability and per-rater quality checks for the similarity ratings (no Django; docs/conventions.md
sec. 15).

Participants rate pairs of summaries for similarity on a 1..6 scale. An **item** (Krippendorff's *unit*) is
``(doc_id, system, uid1, uid2)``; several raters rate the same item. Alpha itself is
:mod:`metaeval.core.stats.agreement`; this module gives

* :func:`rater_report` -- per rater: volume, time on task, straight-lining, agreement with the other raters and
  the leave-one-out alpha;
* :func:`overall_report` -- alpha overall and per study, with intervals and counts, also on the units that
  compare two different texts and on those that compare a text with itself (:func:`identical_text_items`);
* :func:`exclude_raters` -- drop raters so that a run can be redone without them.

Rows
----
The per-rater and overall reports take the rows of the survey's ratings export (``doc_id, system, uid1, uid2,
rating, rater, study, questionnaire, shown_position, swapped, claimed_at, completed_at, rated_at``), e.g. from
``survey.selectors.ratings_export_rows`` or ``csv.DictReader`` over the exported CSV, or a
:class:`~metaeval.core.io.corpus.RatingTable`. The five rating columns are validated by
:func:`metaeval.core.io.loaders.ratings_from_rows`. A ``RatingTable`` keeps only those (and ``rater``), so timing
fields come out ``None`` and questionnaires are approximated as described in :func:`rater_report`; so do rows
that lack the columns (the CLI ratings CSV). Choices:

* A row without a rater (empty ``rater``) counts as a distinct anonymous rater: it enters alpha and the other
  raters' means, but has no line in :func:`rater_report`.
* A named rater who rated the same item more than once: only the first rating (in row order) enters alpha and
  the agreement figures; the number left out is reported as ``duplicate_ratings``.
* Times are ISO 8601 strings (``datetime.isoformat()`` with a UTC offset, as exported) or ``datetime`` objects;
  an empty or missing value gives ``None``.
"""
from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from statistics import median
from typing import overload

import numpy as np

from metaeval.core.io.corpus import Corpus, Rating, RatingTable
from metaeval.core.io.loaders import ratings_from_rows
from metaeval.core.stats.agreement import (
    Level,
    alpha_from_counts,
    bootstrap_counts,
    check_boot,
    check_level,
    level_values,
)
from metaeval.core.stats.resampling import batch_correlation

__all__ = [
    "Item",
    "RaterQuality",
    "TEXT_GROUPS",
    "exclude_raters",
    "identical_text_items",
    "overall_report",
    "parse_time",
    "questionnaire_key",
    "rater_report",
]

Item = tuple[str, str, str, str]
"""``(doc_id, system, uid1, uid2)``: the unit being rated."""
MIN_SHARED_ITEMS = 3
NAN = float("nan")


# --------------------------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------------------------


def parse_time(value: object) -> datetime | None:
    """An ISO 8601 time (``datetime.fromisoformat``, which takes ``+00:00`` and ``Z``) or a ``datetime``;
    ``None`` or an empty string give ``None``. Anything else raises ``ValueError``."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"not an ISO 8601 time: {value!r}") from None
    raise ValueError(f"not an ISO 8601 time: {value!r}")


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    """``end - start`` in seconds; ``None`` when either is missing, one has a UTC offset and the other not, or the
    duration is negative."""
    if start is None or end is None or (start.utcoffset() is None) != (end.utcoffset() is None):
        return None
    seconds = (end - start).total_seconds()
    return seconds if seconds >= 0 else None


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def is_automatic(value: object) -> bool:
    """Whether a ratings row's ``automatic`` cell marks a rating recorded without being shown (identical texts
    under ``identical_pairs=auto``): 1/true/yes, any case. Such rows count in the scores (they are the top of the
    scale) but not in rater quality or agreement (docs/conventions.md, sec. 15)."""
    return value is True or (not _blank(value) and str(value).strip().lower() in {"1", "true", "yes"})


@dataclass(frozen=True)
class _Obs:
    """One rating with what the reports need."""

    item: Item
    rater: str
    value: float
    study: str
    questionnaire: tuple[str, ...]
    order: float
    claimed_at: datetime | None
    completed_at: datetime | None
    index: int


def _observations(rows: RatingTable | Iterable[Mapping[str, object]], scale: tuple[float, float]) -> tuple[
    list[_Obs], tuple[float, float]
]:
    """Validate ``rows`` (via ``ratings_from_rows``) and attach study, questionnaire, shown order and times;
    automatic rows (:func:`is_automatic`) are left out."""
    if isinstance(rows, RatingTable):
        ratings: Sequence[Rating] = rows.rows
        extras: Sequence[Mapping[str, object]] = [{}] * len(ratings)
        scale = (rows.scale_min, rows.scale_max)
    else:
        extras = list(rows)
        ratings = ratings_from_rows(extras, scale=scale).rows
    out: list[_Obs] = []
    for index, (rating, extra) in enumerate(zip(ratings, extras, strict=True)):
        if is_automatic(extra.get("automatic")):
            continue  # recorded without being shown: says nothing about the rater
        line = rating.line or index + 1
        study = "" if _blank(extra.get("study")) else str(extra["study"])
        item = (rating.doc_id, rating.system, rating.uid1, rating.uid2)
        key = questionnaire_key(rating, extra)
        shown = extra.get("shown_position")
        try:
            order = float(index) if _blank(shown) else float(shown)  # type: ignore[arg-type]
            claimed = parse_time(extra.get("claimed_at"))
            completed = parse_time(extra.get("completed_at"))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"row {line}: {exc}") from None
        out.append(_Obs(item, rating.rater, rating.rating, study, key, order, claimed, completed, index))
    return out, scale


def questionnaire_key(rating: Rating, extra: Mapping[str, object]) -> tuple[str, ...]:
    """The questionnaire of a rating: ``(study, "q", questionnaire)`` from the export's columns, or, without a
    ``questionnaire`` value, ``(study, "doc", doc_id, uid1, uid2)`` (the survey's questionnaires hold one document
    and reader pair)."""
    study = "" if _blank(extra.get("study")) else str(extra["study"])
    questionnaire = extra.get("questionnaire")
    if _blank(questionnaire):
        return (study, "doc", rating.doc_id, rating.uid1, rating.uid2)
    return (study, "q", str(questionnaire))


def _scale_values(scale: tuple[float, float]) -> tuple[int, ...]:
    low, high = scale
    if not (float(low).is_integer() and float(high).is_integer()):
        raise ValueError(f"alpha needs an integer scale, not {scale!r}")
    return tuple(range(int(low), int(high) + 1))


@dataclass
class _Units:
    """The deduplicated ratings as a count matrix, with who gave which value where."""

    items: list[Item]
    counts: np.ndarray  # items x values
    cells: dict[str, list[tuple[int, int]]]  # named rater -> (item index, value index) of their ratings
    kept: list[_Obs]  # the ratings that enter alpha, in row order
    duplicates: int


def _units(observations: Sequence[_Obs], values: Sequence[int]) -> _Units:
    item_index: dict[Item, int] = {}
    value_index = {float(v): i for i, v in enumerate(values)}
    seen: set[tuple[Item, str]] = set()
    cells: dict[str, list[tuple[int, int]]] = {}
    kept: list[_Obs] = []
    duplicates = 0
    pending: list[tuple[int, int]] = []
    for obs in observations:
        if obs.rater:
            if (obs.item, obs.rater) in seen:
                duplicates += 1
                continue
            seen.add((obs.item, obs.rater))
        if obs.value not in value_index:
            raise ValueError(f"rating {obs.value:g} is not one of the values {tuple(values)!r}")
        u = item_index.setdefault(obs.item, len(item_index))
        cell = (u, value_index[obs.value])
        pending.append(cell)
        kept.append(obs)
        if obs.rater:
            cells.setdefault(obs.rater, []).append(cell)
    counts = np.zeros((len(item_index), len(values)), dtype=np.float64)
    if pending:
        np.add.at(counts, tuple(np.array(pending).T), 1)
    return _Units(list(item_index), counts, cells, kept, duplicates)


# --------------------------------------------------------------------------------------------------------------
# Reports
# --------------------------------------------------------------------------------------------------------------


def _natural_key(text: str) -> list[object]:
    # digits beyond what int() converts (4300) sort as text
    return [(0, int(part), "") if part.isdigit() and len(part) <= 1000 else (1, 0, part)
            for part in re.split(r"(\d+)", text)]


def _longest_run(values: Sequence[float]) -> int:
    best = run = 0
    previous: float | None = None
    for value in values:
        run = run + 1 if value == previous else 1
        previous = value
        best = max(best, run)
    return best


@dataclass(frozen=True)
class RaterQuality:
    """One rater's line of :func:`rater_report` (the fields are described there)."""

    rater: str
    studies: list[str]
    n_ratings: int
    n_questionnaires: int
    mean_rating: float
    median_seconds: float | None
    n_timed: int
    straightlined_share: float | None
    n_straightlined: int
    longest_run: int
    n_shared_items: int
    spearman_with_others: float
    mad_from_others: float
    alpha_without: float
    alpha_change: float

    def as_dict(self) -> dict[str, object]:
        """The fields in order, as a plain dict (a report table row)."""
        return dataclasses.asdict(self)


def rater_report(
    rows: RatingTable | Iterable[Mapping[str, object]],
    *,
    scale: tuple[float, float] = (1, 6),
    level: Level = "ordinal",
) -> list[RaterQuality]:
    """One :class:`RaterQuality` per named rater (natural order of the ids: P2 before P10).

    Fields:

    * ``rater``, ``studies`` (sorted), ``n_ratings`` (rows, duplicates included), ``n_questionnaires``,
      ``mean_rating``;
    * ``median_seconds``: median over the rater's questionnaires of ``completed_at - claimed_at`` in seconds
      (``None`` without usable times); ``n_timed`` questionnaires went into it;
    * ``straightlined_share``: share of the rater's questionnaires with at least two ratings in which every
      rating is the same value (``None`` when there is no such questionnaire), and ``n_straightlined``;
    * ``longest_run``: the longest run of identical consecutive ratings in shown order (``shown_position``, else
      row order) within one questionnaire;
    * ``n_shared_items``: items the rater rated that at least one other rater rated too;
    * ``spearman_with_others``: Spearman's rho between the rater's ratings and, item by item, the mean rating of
      the *other* raters (NaN with fewer than 3 shared items or a constant side);
    * ``mad_from_others``: mean of ``|rating - mean of the others|`` over the shared items (NaN without any);
    * ``alpha_without``: Krippendorff's alpha at ``level`` (ordinal by default) of all ratings except this
      rater's, and ``alpha_change = alpha_without - alpha`` of all ratings: positive means that leaving the rater
      out raises agreement.

    A questionnaire is ``(study, questionnaire)`` from the export; rows without a ``questionnaire`` value (the
    CLI ratings CSV, a ``RatingTable``) are grouped by ``(study, doc_id, uid1, uid2)``, which is the
    questionnaire's document and reader pair in the survey. Agreement figures and alpha use each rater's first
    rating of an item (see the module docstring); the questionnaire figures use every row.
    """
    check_level(level)
    observations, scale = _observations(rows, scale)
    values = _scale_values(scale)
    units = _units(observations, values)
    numeric = level_values(values, level)
    alpha_all = alpha_from_counts(units.counts, numeric, level)

    item_index = {item: u for u, item in enumerate(units.items)}
    sums = np.zeros(len(units.items))
    sizes = np.zeros(len(units.items))
    for obs in units.kept:
        u = item_index[obs.item]
        sums[u] += obs.value
        sizes[u] += 1

    by_rater: dict[str, list[_Obs]] = {}
    for obs in observations:
        if obs.rater:
            by_rater.setdefault(obs.rater, []).append(obs)
    kept_by_rater: dict[str, list[_Obs]] = {}
    for obs in units.kept:
        if obs.rater:
            kept_by_rater.setdefault(obs.rater, []).append(obs)

    report: list[RaterQuality] = []
    for rater in sorted(by_rater, key=_natural_key):
        own = by_rater[rater]
        questionnaires: dict[tuple[str, ...], list[_Obs]] = {}
        for obs in own:
            questionnaires.setdefault(obs.questionnaire, []).append(obs)
        durations = [
            seconds
            for group in questionnaires.values()
            if (seconds := _seconds(group[0].claimed_at, group[0].completed_at)) is not None
        ]
        multi = [group for group in questionnaires.values() if len(group) >= 2]
        straight = sum(1 for group in multi if len({obs.value for obs in group}) == 1)
        runs = [
            _longest_run([obs.value for obs in sorted(group, key=lambda o: (o.order, o.index))])
            for group in questionnaires.values()
        ]

        mine: list[float] = []
        others: list[float] = []
        for obs in kept_by_rater.get(rater, []):
            u = item_index[obs.item]
            if sizes[u] > 1:
                mine.append(obs.value)
                others.append((sums[u] - obs.value) / (sizes[u] - 1))
        shared = len(mine)
        # Spearman's rho (Pearson's r of average ranks; NaN for a constant side), the one batch implementation
        spearman = float(batch_correlation(mine, others, "spearman")[0]) if shared >= MIN_SHARED_ITEMS else NAN
        mad = float(np.mean(np.abs(np.subtract(mine, others)))) if shared else NAN

        without = units.counts.copy()
        cells = units.cells.get(rater, [])
        if cells:
            np.subtract.at(without, tuple(np.array(cells).T), 1)
        alpha_without = alpha_from_counts(without, numeric, level)

        report.append(RaterQuality(
            rater=rater,
            studies=sorted({obs.study for obs in own}),
            n_ratings=len(own),
            n_questionnaires=len(questionnaires),
            mean_rating=float(np.mean([obs.value for obs in own])),
            median_seconds=float(median(durations)) if durations else None,
            n_timed=len(durations),
            straightlined_share=straight / len(multi) if multi else None,
            n_straightlined=straight,
            longest_run=max(runs),
            n_shared_items=shared,
            spearman_with_others=spearman,
            mad_from_others=mad,
            alpha_without=alpha_without,
            alpha_change=alpha_without - alpha_all,
        ))
    return report


def _summary(
    observations: Sequence[_Obs], values: Sequence[int], level: Level, n_boot: int, confidence: float,
    seed: int,
) -> dict[str, object]:
    units = _units(observations, values)
    sizes = units.counts.sum(axis=1)
    pairable = sizes >= 2
    alpha, low, high = bootstrap_counts(units.counts, level_values(values, level), level, n_boot, confidence, seed)
    return {
        "alpha": alpha,
        "low": low,
        "high": high,
        "n_ratings": len(observations),
        "n_items": len(units.items),
        "n_pairable_items": int(pairable.sum()),
        "n_pairable_ratings": int(sizes[pairable].sum()),
        "n_raters": len({obs.rater for obs in observations if obs.rater}),
        "n_anonymous_ratings": sum(1 for obs in observations if not obs.rater),
        "duplicate_ratings": units.duplicates,
    }


#: the unit groups of :func:`overall_report`'s ``texts`` (besides all units)
TEXT_GROUPS: tuple[str, ...] = ("different", "identical")


def identical_text_items(corpus: Corpus, items: Iterable[Item]) -> dict[Item, bool]:
    """For each item ``(doc_id, system, uid1, uid2)``: whether the two texts it compares are the same text
    (:meth:`~metaeval.core.io.corpus.Document.pair_is_identical`: ``system``'s summaries for the two readers, the
    readers' own for ``"user"``, equal after collapsing whitespace). Items whose document or summaries are not
    in ``corpus`` are left out of the mapping."""
    documents = corpus.by_id()
    out: dict[Item, bool] = {}
    for item in items:
        doc_id, system, uid1, uid2 = item
        document = documents.get(doc_id)
        same = document.pair_is_identical(system, uid1, uid2) if document is not None else None
        if same is not None:
            out[item] = same
    return out


def _alpha_groups(
    observations: Sequence[_Obs], identical: Mapping[Item, bool], values: Sequence[int], level: Level, n_boot: int,
    confidence: float, seed: int,
) -> dict[str, object]:
    """``{"different": summary, "identical": summary, "quote": group, "n_unknown_texts": ratings}``."""
    groups: dict[str, list[_Obs]] = {"different": [], "identical": []}
    unknown = 0
    for obs in observations:
        same = identical.get(obs.item)
        if same is None:
            unknown += 1
        else:
            groups["identical" if same else "different"].append(obs)
    out: dict[str, object] = {
        name: _summary(groups[name], values, level, n_boot, confidence, seed) for name in TEXT_GROUPS
    }
    different = out["different"]
    assert isinstance(different, dict)
    out["quote"] = "different" if not math.isnan(float(different["alpha"])) else "all"
    out["n_unknown_texts"] = unknown
    return out


def overall_report(
    rows: RatingTable | Iterable[Mapping[str, object]],
    *,
    by_study: bool = True,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    level: Level = "ordinal",
    scale: tuple[float, float] = (1, 6),
    identical: Mapping[Item, bool] | Corpus | None = None,
) -> dict[str, object]:
    """Alpha of all ratings with its bootstrap interval (:func:`alpha_bootstrap_ci`) and counts.

    Returns ``{"level", "values", "n_boot", "confidence", "seed", "alpha", "low", "high", "n_ratings",
    "n_items", "n_pairable_items", "n_pairable_ratings", "n_raters", "n_anonymous_ratings",
    "duplicate_ratings"}``, and with ``by_study`` also ``"studies": {study: {the same counts and alpha, low,
    high}}`` in sorted order (rows without a study under ``""``). Overall, an item rated in two studies is one
    unit. Every bootstrap uses ``seed`` itself, so a study's interval does not depend on which other studies
    are present.

    ``identical`` (item -> whether it compares a text with itself, or the :class:`Corpus` to read that from with
    :func:`identical_text_items`) adds ``"texts"`` to the whole and to each study: ``{"different": {...},
    "identical": {...}, "quote": ..., "n_unknown_texts": ...}``, the same summary on the units comparing two
    different texts and on those comparing a text with itself (rated "almost same" by anyone who reads them, so they
    inflate agreement), and which alpha to quote: ``"different"`` when it is defined, else ``"all"``. Ratings of
    items missing from ``identical`` enter neither group and are counted in ``n_unknown_texts``.
    """
    check_level(level)
    check_boot(n_boot, confidence)
    observations, scale = _observations(rows, scale)
    values = _scale_values(scale)
    if isinstance(identical, Corpus):
        identical = identical_text_items(identical, {obs.item for obs in observations})

    def summary(group: Sequence[_Obs]) -> dict[str, object]:
        out = _summary(group, values, level, n_boot, confidence, seed)
        if identical is not None:
            out["texts"] = _alpha_groups(group, identical, values, level, n_boot, confidence, seed)
        return out

    report: dict[str, object] = {
        "level": level,
        "values": list(values),
        "n_boot": n_boot,
        "confidence": confidence,
        "seed": seed,
        **summary(observations),
    }
    if by_study:
        studies: dict[str, list[_Obs]] = {}
        for obs in observations:
            studies.setdefault(obs.study, []).append(obs)
        report["studies"] = {study: summary(studies[study]) for study in sorted(studies)}
    return report


@overload
def exclude_raters(rows: RatingTable, raters: Collection[str]) -> RatingTable: ...


@overload
def exclude_raters(rows: Iterable[Mapping[str, object]], raters: Collection[str]) -> list[Mapping[str, object]]: ...


def exclude_raters(
    rows: RatingTable | Iterable[Mapping[str, object]], raters: Collection[str]
) -> RatingTable | list[Mapping[str, object]]:
    """``rows`` without the ratings of ``raters``, of the same kind: a :class:`RatingTable` (with its source,
    scale and extra kept) or a list of the same row mappings, in order. Names not present are ignored; the
    caller records which raters were excluded."""
    excluded = {str(rater) for rater in raters}
    if isinstance(rows, RatingTable):
        return dataclasses.replace(rows, rows=tuple(r for r in rows.rows if r.rater not in excluded))
    return [row for row in rows if ("" if row.get("rater") is None else str(row.get("rater"))) not in excluded]
