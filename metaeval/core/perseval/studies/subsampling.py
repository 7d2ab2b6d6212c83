"""Sec. 7.2 and Tables 4 and 6: score and rank stability under subsampling, in the paper's definition and the
authors' (no Django)."""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from metaeval.core.perseval.measure import Params, score_rows
from metaeval.core.perseval.studies.data import Scores, StudyData, score
from metaeval.core.perseval.studies.tables import document_matrix
from metaeval.core.stats.resampling import batch_correlation

NAN = float("nan")
#: the default levels of the paper's stability study (sec. 7.2), in percent of the documents
PAPER_LEVELS = (80, 60, 40, 20)


#: the rank-stability columns every stability row ends with (:func:`_epsilon`)
EPSILON_COLUMNS = tuple(
    f"epsilon_{method}{part}" for method in ("spearman", "kendall") for part in ("", "_min", "_max", "_samples")
)


@dataclass(frozen=True, kw_only=True)
class _Stability:
    """The columns both definitions share: what was drawn, and the rank stability of the (measure, level)."""

    definition: str
    measure: str
    system: str
    level: float
    samples: int
    seed: int
    draw_seeds: list[int]
    epsilon_spearman: float
    epsilon_spearman_min: float
    epsilon_spearman_max: float
    epsilon_spearman_samples: list[float]
    epsilon_kendall: float
    epsilon_kendall_min: float
    epsilon_kendall_max: float
    epsilon_kendall_samples: list[float]

    def as_dict(self) -> dict[str, Any]:
        """A plain dict (a report table row): the shared columns, the definition's own, then the epsilon ones."""
        values = asdict(self)
        own = {key: value for key, value in values.items() if key not in EPSILON_COLUMNS}
        return {**own, **{key: values[key] for key in EPSILON_COLUMNS}}


@dataclass(frozen=True, kw_only=True)
class PaperStability(_Stability):
    """One (measure, system, level) row of :func:`stability` with ``definition="paper"`` (fields described there)."""

    documents: int
    set_size: int
    full: float
    value: float
    level_bias: float
    level_variance: float
    bias: float
    variance: float
    delta: float
    scores: list[float]


@dataclass(frozen=True, kw_only=True)
class AuthorsStability(_Stability):
    """One (measure, system, level) row of :func:`stability` with ``definition="authors"`` (fields described
    there)."""

    rows: int
    sample_rows: int
    full: float
    value: float
    bias: float
    variance: float
    delta: float
    perseval_samples: list[float]
    egises_full: float
    egises: float
    egises_bias: float
    egises_variance: float
    egises_samples: list[float]


StabilityRow = PaperStability | AuthorsStability
"""A row of :func:`stability`."""


def _row_means(matrix: np.ndarray) -> np.ndarray:
    """NaN-skipping mean of each row, NaN for a row with no finite entry (no warning)."""
    finite = ~np.isnan(matrix)
    counts = finite.sum(axis=1)
    sums = np.where(finite, matrix, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def draw_seed(seed: int, level: float, index: int) -> int:
    """The seed of draw ``index`` at ``level`` percent: a 32-bit word of ``SeedSequence(seed, spawn_key=...)``.

    The spawn key is ``(round(level * 1000), index)``. Each draw therefore has its own reproducible stream,
    whatever other levels or sample counts a study asks for. The result suits ``numpy.random.RandomState``,
    e.g. :func:`tests.reference.straightforward.sample_row_indices`.
    """
    if seed < 0:
        raise ValueError("seed must be a non-negative integer")
    sequence = np.random.SeedSequence(int(seed), spawn_key=(int(round(float(level) * 1000)), int(index)))
    return int(sequence.generate_state(1)[0])


def _rank_correlations(samples: np.ndarray, full: np.ndarray) -> tuple[list[float], list[float]]:
    """Spearman rho and Kendall tau-b of each column of ``samples`` (systems x draws) with ``full`` (per system),
    by :func:`metaeval.core.stats.resampling.batch_correlation` (the one batch implementation): systems with a NaN are
    dropped pairwise; fewer than 3 systems or a constant side give NaN, as
    :func:`~metaeval.core.stats.correlation.correlate` does."""
    columns = np.asarray(samples, dtype=np.float64).T
    return (
        batch_correlation(columns, full, "spearman").tolist(),
        batch_correlation(columns, full, "kendall").tolist(),
    )


def _quiet(function: Callable[..., Any], values: Sequence[float]) -> float:
    """``function`` (a NaN-aware numpy reduction) of ``values``; NaN when there is nothing, without a warning."""
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0 or np.all(np.isnan(array)):
        return NAN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(function(array))


def _epsilon(prefix: str, values: Sequence[float]) -> dict[str, Any]:
    return {
        prefix: _quiet(np.nanmean, values),
        f"{prefix}_min": _quiet(np.nanmin, values),
        f"{prefix}_max": _quiet(np.nanmax, values),
        f"{prefix}_samples": [float(v) for v in values],
    }


def stability(
    data: StudyData,
    *,
    definition: Literal["paper", "authors"],
    levels: Sequence[float] = PAPER_LEVELS,
    samples: int = 10,
    seed: int,
    params: Params | None = None,
    measures: Sequence[str] | None = None,
) -> list[StabilityRow]:
    """Rank and score stability of PerSEval under subsampling (sec. 7.2, Def. 7-8, Tables 4 and 6).

    ``measures`` defaults to the automatic measures (``hj:`` labels may be named). ``params`` defaults to
    ``data.options.params``. The result has one row per (measure, system, level): a :class:`PaperStability` or
    :class:`AuthorsStability`. Each row carries
    ``"definition"``, ``"measure"``, ``"system"``, ``"level"``, ``"samples"`` (draws at that level), ``"seed"``,
    ``"draw_seeds"`` (:func:`draw_seed` of each draw), ``"full"`` (the system PerSEval on all the data),
    ``"value"`` (the level's mean PerSEval), ``"bias"``, ``"variance"`` and ``"delta"`` = max(bias, variance).
    These last three describe the (measure, system) and repeat on its level rows. Each row also carries the
    rank stability of the (measure, level): ``"epsilon_spearman"`` and ``"epsilon_kendall"``, each with
    ``_min``, ``_max`` and ``_samples``. They are computed per draw, correlating the system scores of the draw
    with the full-data scores over the systems (Spearman rho, Kendall tau-b), then averaged over the draws.

    ``definition="paper"`` (sec. 7.2, Def. 7-8):

    * For each level p (default 80, 60, 40, 20) there are ``samples`` (default 10) sample sets n_i^p. Each
      set is ``round(p/100 * D)`` documents, at least 1, drawn **with replacement** with
      ``RandomState(draw_seed(seed, p, i)).choice(D, size, replace=True)``. The D documents are those where
      some system of the measure has a value, in corpus order. Every system and every measure with the same
      D see the same sets.
    * The set score of a system is the NaN-skipping mean of its document PerSEval over the set, counting a
      document as often as it was drawn. A document's PerSEval depends on that document only, so this is the
      system PerSEval of the resampled dataset (see :func:`document_matrix`).
    * Per level, ``value`` = m_p = mean_i x_{p,i} and ``level_bias`` = m_p - x_N, where x_N is the full-data
      score. ``level_variance`` = v_p = (1/n) sum_i (x_{p,i} - m_p)^2, the population variance of the n set
      scores. ``scores`` lists the x_{p,i}.
    * delta-bias and delta-variance (Def. 8 (ii)-(iii), "bias over C w.r.t. the mean score of each C^k") as
      the paper tabulates them (Table 4, BigBird-Pegasus: level means 0.15, 0.153, 0.1535, 0.1558, 0.1564
      give 0.0023 and 5.2e-6 as printed, 0.0024 and 5.81e-6 published, sqrt(5.81e-6) = 0.0024, the 100 %
      value being rounded): ``bias`` = the population standard deviation and ``variance`` = the variance of
      the level means (x_N, m_80, m_60, m_40, m_20), the full data counting as the 100 % level. Then
      delta = max(bias, variance) (Def. 8), and footnote 8 takes the maximum over the models
      (:func:`stability_summary`). NaN set scores are skipped. The per-level ``level_bias`` and
      ``level_variance`` are kept for other readings of Def. 8.
    * Def. 7 calls a measure epsilon-weakly stable when "the maximum rank-correlation [tau] between the
      ranking on each n_i^k and the ranking on N is <= epsilon". Read literally, that bound is trivial. We
      report the mean over the draws (``epsilon_*``), which is what the paper tabulates (1 = every ranking
      identical), and also ``_min`` (the worst draw) and ``_max`` (the literal reading).

    ``definition="authors"`` (the authors' stability loop, conventions sec. 8):

    * The levels are 100 (one draw), then each of ``levels`` other than 100 (``samples`` draws each).
    * A draw takes the system's pair rows in canonical order (documents in order, pairs in order), ``n``
      rows, and keeps ``RandomState(s).choice(n, round(p/100 * n), replace=False)``, with
      s = ``draw_seed(seed, p, i)``. This is the seeded equivalent of ``DataFrame.sample(frac=p/100)``.
      X, Y and the proportions come from the full data. DEGRESS_j, the document values and EDP's d_min and
      d_mean are recomputed over the kept rows. The EGISES draw and the PerSEval draw use the same seed, so
      they keep the same rows; :func:`tests.reference.straightforward.reference_sampled_scores` does the same
      by default.
    * ``value`` = np.round(mean over the level's draws, 4), and likewise ``egises``. Then
      ``bias`` = round(np.std(level values), 4) and ``variance`` = np.var(level values), both population
      statistics across the levels (100 included). ``egises_bias`` and ``egises_variance`` do the same for
      EGISES. These are the authors' "bias" and "variance" (conventions sec. 9.9): the same statistics as the
      paper's Table 4, over levels drawn the code's way (pair rows without replacement) instead of the
      paper's (documents with replacement).
    * ``perseval_samples`` and ``egises_samples`` hold the unrounded draw scores. ``rows`` is n and
      ``sample_rows`` is the number kept. The epsilon columns correlate each draw's PerSEval with the
      full-data PerSEval. They are our addition; the authors' loop reports none.
    """
    if definition not in ("paper", "authors"):
        raise ValueError(f"definition must be 'paper' or 'authors', not {definition!r}")
    if samples < 1:
        raise ValueError("samples must be at least 1")
    for level in levels:
        if not 0 < float(level) <= 100:
            raise ValueError(f"a level is a percentage in (0, 100], not {level!r}")
    params = data.options.params if params is None else params
    chosen = list(data.measures if measures is None else measures)
    full = score(data, params, labels=chosen)
    if definition == "paper":
        return _paper_stability(data, full, chosen, levels, samples, seed)
    return _authors_stability(data, full, chosen, levels, samples, seed, params)


def _paper_stability(
    data: StudyData, full: Scores, chosen: Sequence[str], levels: Sequence[float], samples: int, seed: int
) -> list[StabilityRow]:
    out: list[StabilityRow] = []
    for label in chosen:
        systems, doc_ids, values, _ = document_matrix(full, label, "perseval")
        present = set(np.asarray(doc_ids, dtype=object)[np.any(~np.isnan(values), axis=0)].tolist())
        known = set(data.doc_ids)
        order = [d for d in data.doc_ids if d in present] + [d for d in doc_ids if d in present and d not in known]
        systems, doc_ids, values, _ = document_matrix(full, label, "perseval", doc_ids=order)
        total = len(doc_ids)
        full_values = np.array([full[label][s].perseval for s in systems], dtype=np.float64)
        per_level: list[dict[str, Any]] = []
        for level in levels:
            size = max(1, round(float(level) / 100 * total)) if total else 0
            seeds = [draw_seed(seed, level, i) for i in range(samples)]
            if total:
                sets = [np.random.RandomState(s).choice(total, size, replace=True) for s in seeds]
                set_scores = np.column_stack([_row_means(values[:, chosen_docs]) for chosen_docs in sets])
            else:
                set_scores = np.full((len(systems), samples), np.nan)
            spearman, kendall = _rank_correlations(set_scores, full_values)
            per_level.append(
                {"level": level, "size": size, "seeds": seeds, "scores": set_scores,
                 "epsilon": {**_epsilon("epsilon_spearman", spearman), **_epsilon("epsilon_kendall", kendall)}}
            )
        for row, system in enumerate(systems):
            stats = []
            for item in per_level:
                draws = item["scores"][row].tolist()
                mean = _quiet(np.nanmean, draws)
                stats.append((mean, mean - full_values[row], _quiet(np.nanvar, draws)))
            level_means = [float(full_values[row]), *[mean for mean, _, _ in stats]]
            delta_bias = _quiet(np.nanstd, level_means)
            delta_variance = _quiet(np.nanvar, level_means)
            delta = _quiet(np.nanmax, [delta_bias, delta_variance])
            for item, (mean, bias, variance) in zip(per_level, stats, strict=True):
                out.append(PaperStability(
                    definition="paper", measure=label, system=system, level=item["level"],
                    samples=samples, seed=seed, draw_seeds=item["seeds"], documents=total,
                    set_size=item["size"], full=float(full_values[row]), value=mean,
                    level_bias=bias, level_variance=variance,
                    bias=delta_bias, variance=delta_variance, delta=delta,
                    scores=[float(v) for v in item["scores"][row]],
                    **item["epsilon"],
                ))
    return out


def _row_sample(n_rows: int, level: float, seed: int) -> list[int]:
    """``RandomState(seed).choice(n, round(level/100 * n), replace=False)``, sorted back to canonical order."""
    size = round(float(level) / 100 * n_rows)
    return sorted(int(i) for i in np.random.RandomState(seed).choice(n_rows, size, replace=False))


def _authors_stability(
    data: StudyData,
    full: Scores,
    chosen: Sequence[str],
    levels: Sequence[float],
    samples: int,
    seed: int,
    params: Params,
) -> list[StabilityRow]:
    all_levels = [100, *[level for level in levels if float(level) != 100.0]]
    out: list[StabilityRow] = []
    for label in chosen:
        systems = data.systems(label)
        full_values = np.array([full[label][s].perseval for s in systems], dtype=np.float64)
        # level -> (seeds, perseval[S, draws], egises[S, draws], kept rows per system)
        drawn: list[tuple[float, list[int], np.ndarray, np.ndarray, list[int]]] = []
        for level in all_levels:
            count = 1 if float(level) == 100.0 else samples
            seeds = [draw_seed(seed, level, i) for i in range(count)]
            perseval = np.full((len(systems), count), np.nan)
            egises = np.full((len(systems), count), np.nan)
            kept = []
            for row, system in enumerate(systems):
                rows, accuracy = data.rows(label, system, simplified=params.simplified, decimals=params.egises_decimals)
                for column, draw in enumerate(seeds):
                    picked = _row_sample(len(rows), level, draw)
                    sampled = score_rows([rows[i] for i in picked], accuracy, params)
                    perseval[row, column] = sampled.perseval
                    egises[row, column] = sampled.egises
                kept.append(round(float(level) / 100 * len(rows)))
            drawn.append((level, seeds, perseval, egises, kept))
        epsilon = {}
        for level, _, perseval, _, _ in drawn:
            spearman, kendall = _rank_correlations(perseval, full_values)
            epsilon[level] = {**_epsilon("epsilon_spearman", spearman), **_epsilon("epsilon_kendall", kendall)}
        for row, system in enumerate(systems):
            level_values = [float(np.round(np.mean(perseval[row]), 4)) for _, _, perseval, _, _ in drawn]
            egises_values = [float(np.round(np.mean(egises[row]), 4)) for _, _, _, egises, _ in drawn]
            bias = float(round(np.std(level_values), 4))
            variance = float(np.var(level_values))
            egises_bias = float(round(np.std(egises_values), 4))
            egises_variance = float(np.var(egises_values))
            n_rows = len(data.rows(label, system, simplified=params.simplified, decimals=params.egises_decimals)[0])
            for index, (level, seeds, perseval, egises, kept) in enumerate(drawn):
                out.append(AuthorsStability(
                    definition="authors", measure=label, system=system, level=level,
                    samples=len(seeds), seed=seed, draw_seeds=seeds, rows=n_rows,
                    sample_rows=kept[row], full=float(full_values[row]), value=level_values[index],
                    bias=bias, variance=variance, delta=max(bias, variance),
                    perseval_samples=[float(v) for v in perseval[row]],
                    egises_full=float(full[label][system].egises), egises=egises_values[index],
                    egises_bias=egises_bias, egises_variance=egises_variance,
                    egises_samples=[float(v) for v in egises[row]],
                    **epsilon[level],
                ))
    return out


def stability_summary(rows: Sequence[StabilityRow]) -> list[dict[str, Any]]:
    """Table 6's summary per (definition, measure), from :func:`stability` rows.

    ``delta`` is the maximum over systems of max(bias, variance) (footnote 8), with ``delta_bias`` and
    ``delta_variance`` its two parts. ``epsilon_spearman`` and ``epsilon_kendall`` are the smallest
    per-level mean rank correlation, the level where the ranking is least stable. ``levels`` maps each level
    to its mean Spearman and Kendall.
    """
    groups: dict[tuple[str, str], list[StabilityRow]] = {}
    for row in rows:
        groups.setdefault((row.definition, row.measure), []).append(row)
    out = []
    for (definition, measure), items in groups.items():
        by_level: dict[float, StabilityRow] = {}
        for item in items:
            by_level.setdefault(item.level, item)
        out.append({
            "definition": definition,
            "measure": measure,
            "systems": len({item.system for item in items}),
            "delta_bias": _quiet(np.nanmax, [item.bias for item in items]),
            "delta_variance": _quiet(np.nanmax, [item.variance for item in items]),
            "delta": _quiet(np.nanmax, [item.delta for item in items]),
            "epsilon_spearman": _quiet(np.nanmin, [item.epsilon_spearman for item in by_level.values()]),
            "epsilon_kendall": _quiet(np.nanmin, [item.epsilon_kendall for item in by_level.values()]),
            "levels": {level: {"spearman": item.epsilon_spearman, "kendall": item.epsilon_kendall}
                       for level, item in by_level.items()},
        })
    return out
