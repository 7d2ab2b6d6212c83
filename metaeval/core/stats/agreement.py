"""Krippendorff's alpha (no Django; docs/conventions.md sec. 15): the agreement of several raters on the same
units, for the nominal, ordinal, interval and ratio levels, with a percentile bootstrap interval.

* :func:`krippendorff_alpha` -- alpha via the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's
  Alpha-Reliability");
* :func:`alpha_bootstrap_ci` -- a percentile bootstrap interval, resampling units with replacement;
* :func:`alpha_from_counts` and :func:`bootstrap_counts` -- the same on a units x values count matrix, for
  callers that build the units themselves (:mod:`metaeval.core.stats.raters`).

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
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

__all__ = [
    "DEFAULT_VALUES",
    "LEVELS",
    "Level",
    "ReliabilityData",
    "alpha_bootstrap_ci",
    "alpha_from_counts",
    "bootstrap_counts",
    "check_boot",
    "check_level",
    "coincidence_matrix",
    "krippendorff_alpha",
    "level_values",
]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
DEFAULT_VALUES: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
NAN = float("nan")

#: Units (items) mapped to their ratings: ``{rater: value}`` or a plain collection of values. ``None``/NaN
#: values are missing. Or a reliability matrix: raters x units, NaN for missing (as the ``krippendorff`` package).
ReliabilityData = Mapping[Any, Mapping[Any, object] | Iterable[object]] | Sequence[Any] | np.ndarray


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


def check_boot(n_boot: int, confidence: float) -> None:
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, not {n_boot}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")


def check_level(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")


def level_values(domain: Sequence[object], level: str) -> np.ndarray:
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


def alpha_from_counts(counts: np.ndarray, numeric: np.ndarray, level: str) -> float:
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
    check_level(level)
    counts, domain = _value_counts(data, values)
    return alpha_from_counts(counts, level_values(domain, level), level)


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
    check_level(level)
    check_boot(n_boot, confidence)
    counts, domain = _value_counts(data, values)
    return bootstrap_counts(counts, level_values(domain, level), level, n_boot, confidence, seed)


def bootstrap_counts(
    counts: np.ndarray, numeric: np.ndarray, level: str, n_boot: int, confidence: float,
    seed: int | np.random.Generator,
) -> tuple[float, float, float]:
    alpha = alpha_from_counts(counts, numeric, level)
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
