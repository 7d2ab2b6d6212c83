"""Inter-rater reliability and per-rater quality checks for the similarity ratings (no Django; docs/conventions.md
sec. 15).

Participants rate pairs of summaries for similarity on a 1..6 scale. An **item** (Krippendorff's *unit*) is
``(doc_id, system, uid1, uid2)``; several raters rate the same item. This module gives

* :func:`krippendorff_alpha` -- Krippendorff's alpha via the coincidence matrix (Krippendorff 2011,
  "Computing Krippendorff's Alpha-Reliability"), for the nominal, ordinal, interval and ratio levels;
* :func:`alpha_bootstrap_ci` -- a percentile bootstrap interval, resampling units with replacement;
* :func:`rater_report` -- per rater: volume, time on task, straight-lining, agreement with the other raters and
  the leave-one-out alpha;
* :func:`overall_report` -- alpha overall and per study, with intervals and counts, also on the units that
  compare two different texts and on those that compare a text with itself (:func:`identical_text_items`);
* :func:`exclude_raters` -- drop raters so that a run can be redone without them.

Formulas (Krippendorff 2011)
----------------------------
Let ``n_uc`` be the number of values ``c`` assigned to unit ``u`` and ``m_u = sum_c n_uc``. Only units with
``m_u >= 2`` are *pairable*; the others are ignored. The coincidence matrix is ::

    o_ck = sum_u (n_uc * n_uk - [c == k] * n_uc) / (m_u - 1)

with margins ``n_c = sum_k o_ck`` and ``n = sum_c n_c`` (the number of pairable values). Then ::

    alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_{c,k} o_ck * delta2_ck / sum_{c,k} n_c * n_k * delta2_ck

(the expected coincidences are ``e_ck = (n_c * n_k - [c == k] * n_c) / (n - 1)``; the diagonal term drops out
because ``delta2_cc = 0``). The difference functions ``delta2_ck`` are

* nominal:  ``0 if c == k else 1``;
* ordinal:  ``(sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2`` -- which equals ``(r_k - r_c) ** 2`` with the mid-rank
  ``r_g = sum_{h<=g} n_h - n_g / 2``; values are ordered as given in ``values``;
* interval: ``(c - k) ** 2``;
* ratio:    ``((c - k) / (c + k)) ** 2``.

Alpha is 1 for perfect agreement and 0 for agreement at chance level. It is NaN when no unit is pairable or
when ``D_e = 0`` (every pairable value is the same, so there is no variation to agree about).

Rows
----
The per-rater and overall reports take the rows of the survey's ratings export (``doc_id, system, uid1, uid2,
rating, rater, study, questionnaire, shown_position, swapped, claimed_at, completed_at, rated_at``), e.g. from
``survey.selectors.ratings_export_rows`` or ``csv.DictReader`` over the exported CSV, or a
:class:`~metaeval.core.corpus.RatingTable`. The five rating columns are validated by
:func:`metaeval.core.loaders.ratings_from_rows`. A ``RatingTable`` keeps only those (and ``rater``), so timing
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
from typing import Any, Literal, overload

import numpy as np

from metaeval.core.corpus import Corpus, Rating, RatingTable
from metaeval.core.loaders import ratings_from_rows
from metaeval.core.resampling import batch_correlation

__all__ = [
    "Item",
    "Level",
    "alpha_bootstrap_ci",
    "coincidence_matrix",
    "exclude_raters",
    "identical_text_items",
    "krippendorff_alpha",
    "overall_report",
    "parse_time",
    "rater_report",
]

Item = tuple[str, str, str, str]
"""``(doc_id, system, uid1, uid2)``: the unit being rated."""
Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
DEFAULT_VALUES: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
MIN_SHARED_ITEMS = 3
NAN = float("nan")

#: Units (items) mapped to their ratings: ``{rater: value}`` or a plain collection of values. ``None``/NaN
#: values are missing. Or a reliability matrix: raters x units, NaN for missing (as the ``krippendorff`` package).
ReliabilityData = Mapping[Any, Mapping[Any, object] | Iterable[object]] | Sequence[Any] | np.ndarray


# --------------------------------------------------------------------------------------------------------------
# Krippendorff's alpha
# --------------------------------------------------------------------------------------------------------------


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, np.floating) and bool(np.isnan(value))
    )


def _domain(values: Sequence[object] | None, observed: Iterable[object]) -> tuple[object, ...]:
    """The ordered value domain: ``values`` as given, or the sorted observed values when ``None``."""
    if values is None:
        domain = tuple(sorted(set(observed)))  # type: ignore[type-var]
    else:
        domain = tuple(values)
        if len(set(domain)) != len(domain):
            raise ValueError(f"values must not repeat a value: {domain!r}")
    return domain


def _value_counts(data: ReliabilityData, values: Sequence[object] | None) -> tuple[np.ndarray, tuple[object, ...]]:
    """``(counts, domain)``: ``counts[u, c]`` is the number of times value ``domain[c]`` was given to unit ``u``.

    Every unit is included (also those with fewer than two values).
    """
    if isinstance(data, Mapping):
        units: list[list[object]] = []
        for ratings in data.values():
            given = ratings.values() if isinstance(ratings, Mapping) else ratings
            units.append([v for v in given if not _is_missing(v)])
        domain = _domain(values, (v for unit in units for v in unit))
        index = {value: i for i, value in enumerate(domain)}
        counts = np.zeros((len(units), len(domain)), dtype=np.float64)
        for u, unit in enumerate(units):
            for value in unit:
                try:
                    counts[u, index[value]] += 1
                except (KeyError, TypeError):
                    raise ValueError(f"value {value!r} is not one of the values {domain!r}") from None
        return counts, domain
    matrix = np.asarray(data, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"a reliability matrix must be 2-D (raters x units), not of shape {matrix.shape}")
    present = ~np.isnan(matrix)
    domain = _domain(values, np.unique(matrix[present]).tolist())
    numeric = np.asarray(domain, dtype=np.float64)
    hits = matrix.T[:, :, None] == numeric[None, None, :]  # units x raters x values
    outside = present.T & ~hits.any(axis=2)
    if outside.any():
        bad = matrix.T[outside][0]
        raise ValueError(f"value {bad!r} is not one of the values {domain!r}")
    return hits.sum(axis=1).astype(np.float64), domain


def _pairable(counts: np.ndarray) -> np.ndarray:
    return counts[counts.sum(axis=1) >= 2]


def _unit_coincidences(counts: np.ndarray) -> np.ndarray:
    """Per pairable unit ``(n_uc n_uk - [c == k] n_uc) / (m_u - 1)``, shape (units, V, V)."""
    m = counts.sum(axis=1)
    scaled = counts / (m - 1)[:, None]
    out = scaled[:, :, None] * counts[:, None, :]
    diagonal = np.arange(counts.shape[1])
    out[:, diagonal, diagonal] -= scaled
    return out


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """The coincidence matrix ``o`` (V x V) of the pairable units of ``counts``."""
    pairable = _pairable(counts)
    m = pairable.sum(axis=1)
    scaled = pairable / (m - 1)[:, None]
    return scaled.T @ pairable - np.diag(scaled.sum(axis=0))


def _check_boot(n_boot: int, confidence: float) -> None:
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, not {n_boot}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")


def _numeric(domain: Sequence[object], level: str) -> np.ndarray:
    if level in ("interval", "ratio"):
        try:
            return np.asarray(domain, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"the {level} level needs numeric values, not {tuple(domain)!r}") from None
    return np.arange(len(domain), dtype=np.float64)


def _alpha_from_o(o: np.ndarray, numeric: np.ndarray, level: str) -> np.ndarray:
    """Alpha from coincidence matrices ``o`` of shape (..., V, V); NaN where undefined."""
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    if level == "ordinal":
        mid = np.cumsum(n_c, axis=-1) - n_c / 2  # mid-ranks: sum_{g=c..k} n_g - (n_c + n_k)/2 = r_k - r_c
        delta2 = (mid[..., :, None] - mid[..., None, :]) ** 2
    elif level == "nominal":
        delta2 = 1.0 - np.eye(len(numeric))
    elif level == "interval":
        delta2 = (numeric[:, None] - numeric[None, :]) ** 2
    else:
        total = numeric[:, None] + numeric[None, :]
        diff = numeric[:, None] - numeric[None, :]
        delta2 = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
    observed = (o * delta2).sum(axis=(-2, -1))
    expected = (n_c[..., :, None] * n_c[..., None, :] * delta2).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1) * observed / expected
    return np.where((expected > 0) & (n > 1), alpha, np.nan)


def _alpha_from_counts(counts: np.ndarray, numeric: np.ndarray, level: str) -> float:
    if not (counts.sum(axis=1) >= 2).any():
        return NAN
    return float(_alpha_from_o(_coincidences(counts), numeric, level))


def coincidence_matrix(data: ReliabilityData, values: Sequence[object] | None = DEFAULT_VALUES) -> np.ndarray:
    """The coincidence matrix ``o_ck = sum_u (n_uc n_uk - [c == k] n_uc) / (m_u - 1)`` over pairable units,
    rows and columns in the order of ``values`` (``None``: the sorted observed values). See
    :func:`krippendorff_alpha` for ``data``."""
    counts, _ = _value_counts(data, values)
    return _coincidences(counts)


def krippendorff_alpha(
    data: ReliabilityData,
    level: Level = "ordinal",
    values: Sequence[object] | None = DEFAULT_VALUES,
) -> float:
    """Krippendorff's alpha of ``data`` at ``level`` (formulas in the module docstring).

    ``data`` is either a mapping ``{unit: {rater: value}}`` (or ``{unit: [values]}``; ``None``/NaN values are
    missing), or a reliability matrix of shape (raters, units) with NaN for missing values, as the
    ``krippendorff`` package takes it. ``values`` is the ordered value domain (default 1..6, the survey's scale);
    ``None`` uses the sorted observed values. A value outside the domain raises ``ValueError``. Units with fewer
    than two values are not pairable and are ignored. Returns NaN when no unit is pairable or the pairable
    values do not vary.
    """
    _check_level(level)
    counts, domain = _value_counts(data, values)
    return _alpha_from_counts(counts, _numeric(domain, level), level)


def alpha_bootstrap_ci(
    data: ReliabilityData,
    level: Level = "ordinal",
    values: Sequence[object] | None = DEFAULT_VALUES,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> tuple[float, float, float]:
    """``(alpha, low, high)``: alpha and its percentile bootstrap interval.

    Each replicate draws as many pairable units as there are, uniformly with replacement (units with fewer
    than two values carry no pairs and are left out of the draw), rebuilds the coincidence matrix from the drawn
    units' contributions -- for the ordinal level the mid-ranks are recomputed from each replicate's margins --
    and computes alpha. ``low``/``high`` are the ``(1 - confidence)/2`` and ``(1 + confidence)/2`` quantiles
    (linear interpolation) of the replicates that are defined (not NaN). ``seed`` seeds
    ``numpy.random.default_rng``; the same seed and data give the same interval. ``low``/``high`` are NaN when
    alpha is undefined or no replicate is.
    """
    _check_level(level)
    _check_boot(n_boot, confidence)
    counts, domain = _value_counts(data, values)
    return _bootstrap(counts, _numeric(domain, level), level, n_boot, confidence, seed)


def _bootstrap(
    counts: np.ndarray, numeric: np.ndarray, level: str, n_boot: int, confidence: float,
    seed: int | np.random.Generator,
) -> tuple[float, float, float]:
    alpha = _alpha_from_counts(counts, numeric, level)
    if math.isnan(alpha):
        return alpha, NAN, NAN
    pairable = _pairable(counts)
    units = len(pairable)
    width = pairable.shape[1]
    contributions = _unit_coincidences(pairable).reshape(units, width * width)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    chunk = max(1, min(n_boot, 2_000_000 // units))
    probabilities = np.full(units, 1.0 / units)
    replicates: list[np.ndarray] = []
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        weights = rng.multinomial(units, probabilities, size=size).astype(np.float64)
        o = (weights @ contributions).reshape(size, width, width)
        replicates.append(_alpha_from_o(o, numeric, level))
    reps = np.concatenate(replicates)
    reps = reps[~np.isnan(reps)]
    if not reps.size:
        return alpha, NAN, NAN
    low, high = np.quantile(reps, [(1 - confidence) / 2, (1 + confidence) / 2])
    return alpha, float(low), float(high)


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
    """Validate ``rows`` (via ``ratings_from_rows``) and attach study, questionnaire, shown order and times."""
    if isinstance(rows, RatingTable):
        ratings: Sequence[Rating] = rows.rows
        extras: Sequence[Mapping[str, object]] = [{}] * len(ratings)
        scale = (rows.scale_min, rows.scale_max)
    else:
        extras = list(rows)
        ratings = ratings_from_rows(extras, scale=scale).rows
    out: list[_Obs] = []
    for index, (rating, extra) in enumerate(zip(ratings, extras, strict=True)):
        line = rating.line or index + 1
        study = "" if _blank(extra.get("study")) else str(extra["study"])
        item = (rating.doc_id, rating.system, rating.uid1, rating.uid2)
        questionnaire = extra.get("questionnaire")
        key: tuple[str, ...]
        if _blank(questionnaire):
            key = (study, "doc", rating.doc_id, rating.uid1, rating.uid2)
        else:
            key = (study, "q", str(questionnaire))
        shown = extra.get("shown_position")
        try:
            order = float(index) if _blank(shown) else float(shown)  # type: ignore[arg-type]
            claimed = parse_time(extra.get("claimed_at"))
            completed = parse_time(extra.get("completed_at"))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"row {line}: {exc}") from None
        out.append(_Obs(item, rating.rater, rating.rating, study, key, order, claimed, completed, index))
    return out, scale


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
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]


def _longest_run(values: Sequence[float]) -> int:
    best = run = 0
    previous: float | None = None
    for value in values:
        run = run + 1 if value == previous else 1
        previous = value
        best = max(best, run)
    return best


def rater_report(
    rows: RatingTable | Iterable[Mapping[str, object]],
    *,
    scale: tuple[float, float] = (1, 6),
    level: Level = "ordinal",
) -> list[dict[str, object]]:
    """One dict per named rater (natural order of the ids: P2 before P10).

    Keys:

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
    _check_level(level)
    observations, scale = _observations(rows, scale)
    values = _scale_values(scale)
    units = _units(observations, values)
    numeric = _numeric(values, level)
    alpha_all = _alpha_from_counts(units.counts, numeric, level)

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

    report: list[dict[str, object]] = []
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
        alpha_without = _alpha_from_counts(without, numeric, level)

        report.append({
            "rater": rater,
            "studies": sorted({obs.study for obs in own}),
            "n_ratings": len(own),
            "n_questionnaires": len(questionnaires),
            "mean_rating": float(np.mean([obs.value for obs in own])),
            "median_seconds": float(median(durations)) if durations else None,
            "n_timed": len(durations),
            "straightlined_share": straight / len(multi) if multi else None,
            "n_straightlined": straight,
            "longest_run": max(runs),
            "n_shared_items": shared,
            "spearman_with_others": spearman,
            "mad_from_others": mad,
            "alpha_without": alpha_without,
            "alpha_change": alpha_without - alpha_all,
        })
    return report


def _summary(
    observations: Sequence[_Obs], values: Sequence[int], level: Level, n_boot: int, confidence: float,
    seed: int,
) -> dict[str, object]:
    units = _units(observations, values)
    sizes = units.counts.sum(axis=1)
    pairable = sizes >= 2
    alpha, low, high = _bootstrap(units.counts, _numeric(values, level), level, n_boot, confidence, seed)
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
    (:meth:`~metaeval.core.corpus.Document.pair_is_identical`: ``system``'s summaries for the two readers, the
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
    _check_level(level)
    _check_boot(n_boot, confidence)
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
