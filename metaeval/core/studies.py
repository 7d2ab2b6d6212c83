"""Meta-evaluation studies on top of one scoring run (perseval-tmlr sec. 7-8, Tables 1-8, Figure 3, App. B.2;
docs/conventions.md sec. 8 and 14).

Everything here rescores; nothing recomputes a distance. :func:`prepare_study` runs the ordinary pipeline
(:func:`metaeval.core.pipeline.run_scores`) once and keeps, per measure and system, the
:class:`~metaeval.core.perseval.DocPairs` the scores come from (:class:`StudyData`). Every study then calls
:func:`score` with other hyper-parameters, on other subsets, or both:

* :func:`benchmark_tables`: Table 1 (PerSEval), Table 7 (EGISES) and Table 8 (P-Acc), with ranks.
* :func:`document_matrix`: per-document values whose mean gives the system value, for bootstrapping.
* :func:`beta_ablation`: Figure 3, the correlation with human judgment as beta varies.
* :func:`stability`: sec. 7.2 and Tables 4 and 6. ``"paper"`` follows Def. 7-8 with documents resampled with
  replacement. ``"authors"`` follows the authors' loop (conventions sec. 8), with pair rows sampled without
  replacement.
* :func:`rank_agreement`: Table 3, the agreement between the EGISES ranking and the PerSEval ranking.
* :func:`borda_kendall` and :func:`borda_vs_hj`: App. B.2 and Table 5, the Borda-Kendall consensus of
  accuracy and PerSEval, correlated with human judgment.

Conventions shared by every function:

* A **ranking** is a list of systems, best first. PerSEval and P-Acc rank higher values first. EGISES (a
  divergence, where lower means more responsive) and accuracy (a distance, sigma(s_j, u_j)) rank lower values
  first. Systems whose value is NaN are left out of a ranking. Equal values keep the input order, which is the
  order of ``scores[measure]``.
* A **rank** (in the tables) is a competition rank: 1 + the number of systems strictly better. Ties share
  the best rank. NaN gets ``None``.
* Correlations come from :func:`metaeval.core.correlation.correlate` (SciPy: Pearson r, Spearman rho and
  Kendall tau-b, with two-sided p-values). Undefined cases give NaN with a ``note``.
* Random draws are seeded. :func:`draw_seed` turns ``(seed, level, index)`` into the seed of one draw, so a
  draw does not depend on which other levels or how many samples were asked for.

This module imports no Django.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from metaeval.core.cache import DistanceCache
from metaeval.core.corpus import Corpus, RatingTable
from metaeval.core.correlation import correlate, correlation_grid
from metaeval.core.perseval import DocPairs, Params, Row, SystemScore, document_rows, score_rows
from metaeval.core.pipeline import HJ_PREFIX, Progress, RunOptions, RunResult, run_scores
from metaeval.core.resampling import batch_correlation

__all__ = [
    "DOCUMENT_COLUMNS",
    "StudyData",
    "benchmark_tables",
    "beta_ablation",
    "borda_kendall",
    "borda_vs_hj",
    "document_matrix",
    "draw_seed",
    "prepare_study",
    "rank_agreement",
    "ranking",
    "ranks",
    "score",
    "stability",
    "stability_summary",
]

NAN = float("nan")
Scores = Mapping[str, Mapping[str, SystemScore]]
"""measure label -> system -> :class:`SystemScore`, as :func:`score` returns it."""

#: the columns :func:`document_matrix` can split into per-document values
DOCUMENT_COLUMNS = ("perseval", "egises", "degress", "accuracy")
#: the default levels of the paper's stability study (sec. 7.2), in percent of the documents
PAPER_LEVELS = (80, 60, 40, 20)


# ---------------------------------------------------------------------------------------------------------------
# Data: one run's DocPairs, rescored at will
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class StudyData:
    """Everything needed to rescore a run without computing any distance.

    ``docs[label][system]`` is the list of :class:`DocPairs` that :func:`~metaeval.core.perseval.score_system`
    scores, accuracy distances included. ``label`` is an automatic measure name (``measures``, in run order)
    or ``"hj:<aux>"`` for a human-judgment variant (``hj``). ``doc_ids`` lists the corpus documents in file
    order. ``result`` is the run that produced the data; its scores use ``options.params``. ``corpus`` is the
    scored corpus (the report reads which rated pairs compare identical texts from it).
    """

    options: RunOptions
    doc_ids: list[str]
    measures: list[str]
    hj: list[str]
    docs: dict[str, dict[str, list[DocPairs]]]
    result: RunResult | None = None
    corpus: Corpus | None = field(default=None, repr=False, compare=False)
    _rows: dict[tuple[str, str, bool], tuple[list[Row], dict[tuple[str, str], float]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def labels(self) -> list[str]:
        """The automatic measures, then the ``hj:`` labels."""
        return [*self.measures, *self.hj]

    def systems(self, label: str) -> list[str]:
        return list(self.docs[label])

    def rows(
        self, label: str, system: str, *, simplified: bool = False
    ) -> tuple[list[Row], dict[tuple[str, str], float]]:
        """The canonical rows of a system and its accuracy distances per (doc, reader), memoised.

        The rows are those of documents in order, each document's pairs in order. This is the order that
        row sampling draws from (conventions sec. 8). Rows do not depend on alpha, beta, gamma or delta, so
        rescoring at another beta reuses them.
        """
        key = (label, system, simplified)
        if key not in self._rows:
            self._rows[key] = _system_rows(self.docs[label][system], simplified=simplified)
        return self._rows[key]


def _system_rows(docs: Iterable[DocPairs], *, simplified: bool) -> tuple[list[Row], dict[tuple[str, str], float]]:
    """What :func:`~metaeval.core.perseval.score_system` passes to ``score_rows``: all rows and the accuracies.

    Documents without rows contribute neither rows nor accuracies.
    """
    rows: list[Row] = []
    accuracy: dict[tuple[str, str], float] = {}
    for doc in docs:
        doc_rows = document_rows(doc, simplified=simplified)
        if not doc_rows:
            continue
        rows.extend(doc_rows)
        for j, value in doc.accuracy.items():
            accuracy[(doc.doc_id, j)] = value
    return rows, accuracy


def prepare_study(
    corpus: Corpus,
    options: RunOptions,
    *,
    ratings: RatingTable | None = None,
    cache: DistanceCache | None = None,
    progress: Progress | None = None,
) -> StudyData:
    """Compute the run's distances once and keep the :class:`DocPairs` behind every score.

    This is :func:`~metaeval.core.pipeline.run_scores` itself, with its ``collect`` hook: the same planning
    (``plan_corpus``, ``plan_human``), distances (``compute``) and assembly (``corpus_doc_pairs``,
    ``human_doc_pairs``). ``score(data, options.params)`` therefore equals the run's scores exactly.
    Measures the run could not load (``options.skip_unavailable``) are left out.
    """
    docs: dict[str, dict[str, list[DocPairs]]] = {}

    def collect(label: str, system: str, pairs: list[DocPairs]) -> None:
        docs.setdefault(label, {})[system] = pairs

    result = run_scores(corpus, options, ratings=ratings, cache=cache, progress=progress, collect=collect)
    measures = [name for name in dict.fromkeys(options.measures) if name not in result.unavailable]
    hj: list[str] = []
    if ratings is not None:
        hj = [HJ_PREFIX + name for name in dict.fromkeys(options.aux) if name not in result.unavailable]
    for label in (*measures, *hj):
        docs.setdefault(label, {})
    return StudyData(
        options=options,
        doc_ids=[document.doc_id for document in corpus.documents],
        measures=measures,
        hj=hj,
        docs=docs,
        result=result,
        corpus=corpus,
    )


def score(
    data: StudyData, params: Params | None = None, *, labels: Sequence[str] | None = None
) -> dict[str, dict[str, SystemScore]]:
    """Every system under every label (default ``data.labels``), rescored with ``params``.

    ``params`` defaults to ``data.options.params``. The numbers are the same as ``score_system`` on the same
    DocPairs (sec. 4-7, eq. 1-7), bit for bit.
    """
    params = data.options.params if params is None else params
    chosen = data.labels if labels is None else list(labels)
    out: dict[str, dict[str, SystemScore]] = {}
    for label in chosen:
        out[label] = {}
        for system in data.docs[label]:
            rows, accuracy = data.rows(label, system, simplified=params.simplified)
            out[label][system] = score_rows(rows, accuracy, params)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Rankings
# ---------------------------------------------------------------------------------------------------------------


def _finite(value: object) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(float(value))


def ranking(values: Mapping[str, float], *, higher_is_better: bool) -> list[str]:
    """The systems with a finite value, best first; equal values keep their order in ``values``."""
    finite = [(system, float(value)) for system, value in values.items() if _finite(value)]
    sign = -1.0 if higher_is_better else 1.0
    return [system for system, _ in sorted(finite, key=lambda item: sign * item[1])]


def ranks(values: Mapping[str, float], *, higher_is_better: bool) -> dict[str, int | None]:
    """Competition ranks (1 = best; ties share the best rank; NaN gives ``None``)."""
    finite = {system: float(value) for system, value in values.items() if _finite(value)}
    out: dict[str, int | None] = {}
    for system, value in values.items():
        if system not in finite:
            out[system] = None
            continue
        better = sum(1 for other in finite.values() if (other > value if higher_is_better else other < value))
        out[system] = 1 + better
    return out


#: column -> (table of the paper, higher is better)
TABLE_COLUMNS: dict[str, tuple[str, bool]] = {
    "perseval": ("Table 1", True),
    "egises": ("Table 7", False),
    "p_acc": ("Table 8", True),
}


def benchmark_tables(scores: Scores, *, include_hj: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The benchmark tables: ``"perseval"`` (Table 1), ``"egises"`` (Table 7) and ``"p_acc"`` (Table 8).

    Each table has one row per system, with the systems in first-seen order over ``scores``. A row holds
    ``"system"``, then for every measure ``m`` the value ``row[m]`` (NaN where the system has no score)
    and its rank ``row[f"{m}_rank"]`` among the systems of that measure. PerSEval and P-Acc rank higher
    values first. EGISES ranks lower values first: it is a divergence, and Table 7 lists the least divergent
    (most responsive) model first. ``hj:`` labels are left out unless ``include_hj`` is set.
    """
    measures = [m for m in scores if include_hj or not m.startswith(HJ_PREFIX)]
    systems = list(dict.fromkeys(system for m in measures for system in scores[m]))
    tables: dict[str, list[dict[str, Any]]] = {}
    for column, (_, higher) in TABLE_COLUMNS.items():
        values = {m: {s: float(getattr(v, column)) for s, v in scores[m].items()} for m in measures}
        ranked = {m: ranks(values[m], higher_is_better=higher) for m in measures}
        rows = []
        for system in systems:
            row: dict[str, Any] = {"system": system}
            for m in measures:
                row[m] = values[m].get(system, NAN)
                row[f"{m}_rank"] = ranked[m].get(system)
            rows.append(row)
        tables[column] = rows
    return tables


# ---------------------------------------------------------------------------------------------------------------
# Per-document values
# ---------------------------------------------------------------------------------------------------------------


def document_matrix(
    scores: Scores,
    measure: str,
    column: str = "perseval",
    *,
    doc_ids: Sequence[str] | None = None,
) -> tuple[list[str], list[str], np.ndarray, np.ndarray | None]:
    """Per-document values of one measure: ``(systems, doc_ids, values, weights)``.

    ``systems`` is the order of ``scores[measure]``. ``doc_ids`` is the given order, or by default each
    document in the order first seen over the systems' ``per_document`` lists. ``values`` is a float array of
    shape ``[S, D]``. ``values[s, d]`` is NaN where system ``s`` has no value for document ``d``: it has no row
    there, or the document's value is NaN.

    **Contract.** For every system ``s``, ``scores[measure][s].<column>`` is the weighted mean of the finite
    entries of ``values[s]``::

        finite = ~isnan(values[s])
        system_value = sum(w[finite] * values[s][finite]) / sum(w[finite])   # NaN if nothing is finite

    Here ``w = weights[s]``, or all ones when ``weights`` is ``None``. The equality holds to floating-point
    summation order, about 1e-15. A bootstrap over documents may therefore resample the columns, with
    multiplicity, and take this mean per system. Per-document values do not depend on other documents, so
    resampling documents does not change them.

    Columns:

    * ``"perseval"``: the document PerSEval, the mean over its readers of DEGRESS_j * EDP_j (eq. 7; sec. 6).
      ``weights`` is ``None``: the system value is the NaN-skipping mean over documents.
    * ``"degress"``: the document DEGRESS. ``"egises"`` is 1 - the document DEGRESS (eq. 2; sec. 5).
      ``weights`` is ``None``. The row weighting of conventions sec. 5 happens inside a document, where each
      reader weighs as many rows as it has. Across documents the system value is the plain NaN-skipping mean
      of the document values, so no weight is needed.
    * ``"accuracy"``: the mean accuracy distance a_j over the document's PerSEval readers. ``weights`` is the
      number of those readers. The system accuracy is the mean pooled over readers, so each document weighs
      as much as its reader count (sec. 6).
    """
    if column not in DOCUMENT_COLUMNS:
        raise ValueError(f"document_matrix has no column {column!r}; choose from {', '.join(DOCUMENT_COLUMNS)}")
    by_system = scores[measure]
    systems = list(by_system)
    if doc_ids is None:
        doc_ids = list(dict.fromkeys(d.doc_id for s in systems for d in by_system[s].per_document))
    else:
        doc_ids = list(doc_ids)
    index = {doc_id: position for position, doc_id in enumerate(doc_ids)}
    values = np.full((len(systems), len(doc_ids)), np.nan)
    weights = np.zeros((len(systems), len(doc_ids))) if column == "accuracy" else None
    for row, system in enumerate(systems):
        detail = by_system[system]
        if column == "accuracy":
            pooled: dict[str, list[float]] = {}
            for reader in detail.per_reader:
                pooled.setdefault(reader.doc_id, []).append(reader.accuracy)
            for doc_id, items in pooled.items():
                if doc_id in index:
                    values[row, index[doc_id]] = sum(items) / len(items)
                    weights[row, index[doc_id]] = len(items)  # type: ignore[index]
            continue
        for document in detail.per_document:
            if document.doc_id not in index:
                continue
            if column == "perseval":
                value = document.perseval
            elif column == "degress":
                value = document.degress
            else:
                value = 1.0 - document.degress
            values[row, index[document.doc_id]] = value
    return systems, doc_ids, values, weights


def _row_means(matrix: np.ndarray) -> np.ndarray:
    """NaN-skipping mean of each row, NaN for a row with no finite entry (no warning)."""
    finite = ~np.isnan(matrix)
    counts = finite.sum(axis=1)
    sums = np.where(finite, matrix, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


# ---------------------------------------------------------------------------------------------------------------
# Figure 3: beta ablation
# ---------------------------------------------------------------------------------------------------------------


def beta_ablation(
    data: StudyData,
    betas: Iterable[float] = np.linspace(1.0, 2.0, 11),
    params: Params = Params(),
    *,
    vary_hj: bool = True,
) -> list[dict[str, Any]]:
    """Figure 3: how EDP's beta changes the correlation of system PerSEval with PerSEval-HJ.

    For each beta, every system is rescored with ``replace(params, beta=beta)`` under every automatic
    measure. With ``vary_hj`` (the default), the ``hj:`` labels are rescored with it too, because
    PerSEval-HJ uses the same EDP. Otherwise the ``hj:`` labels are scored once with ``params``. Every
    automatic measure is then correlated with every ``hj:`` label over the systems they share
    (:func:`metaeval.core.correlation.correlation_grid`). Only rescoring happens; no distance is computed.

    Each beta is rounded to 12 decimals, so ``np.linspace`` noise does not show: 1.7 reads as 1.7, not
    1.7000000000000002. Returns one row per (beta, automatic measure, hj measure): ``"beta"`` plus the keys
    of :meth:`GridCell.as_dict` (``auto_measure``, ``hj_measure``, ``n``, ``pearson``, ``pearson_p``,
    ``spearman``, ..., ``kendall_p``, the ``*_label`` strengths, ``systems``, ``dropped`` and ``note``).
    """
    if not data.hj:
        raise ValueError("beta_ablation needs human judgments: prepare the study with ratings and options.aux")
    fixed_hj = None if vary_hj else score(data, params, labels=data.hj)
    out: list[dict[str, Any]] = []
    for beta in betas:
        value = float(round(float(beta), 12))
        current = replace(params, beta=value)
        auto = score(data, current, labels=data.measures)
        human = score(data, current, labels=data.hj) if fixed_hj is None else fixed_hj
        cells = correlation_grid(
            {m: {s: v.perseval for s, v in auto[m].items()} for m in data.measures},
            {h: {s: v.perseval for s, v in human[h].items()} for h in data.hj},
        )
        out.extend({"beta": value, **cell.as_dict()} for cell in cells)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Sec. 7.2: stability
# ---------------------------------------------------------------------------------------------------------------


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
    by :func:`metaeval.core.resampling.batch_correlation` (the one batch implementation): systems with a NaN are
    dropped pairwise; fewer than 3 systems or a constant side give NaN, as
    :func:`~metaeval.core.correlation.correlate` does."""
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
) -> list[dict[str, Any]]:
    """Rank and score stability of PerSEval under subsampling (sec. 7.2, Def. 7-8, Tables 4 and 6).

    ``measures`` defaults to the automatic measures (``hj:`` labels may be named). ``params`` defaults to
    ``data.options.params``. The result has one row per (measure, system, level). Each row carries
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
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
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
                out.append({
                    "definition": "paper", "measure": label, "system": system, "level": item["level"],
                    "samples": samples, "seed": seed, "draw_seeds": item["seeds"], "documents": total,
                    "set_size": item["size"], "full": float(full_values[row]), "value": mean,
                    "level_bias": bias, "level_variance": variance,
                    "bias": delta_bias, "variance": delta_variance, "delta": delta,
                    "scores": [float(v) for v in item["scores"][row]],
                    **item["epsilon"],
                })
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
) -> list[dict[str, Any]]:
    all_levels = [100, *[level for level in levels if float(level) != 100.0]]
    out: list[dict[str, Any]] = []
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
                rows, accuracy = data.rows(label, system, simplified=params.simplified)
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
            n_rows = len(data.rows(label, system, simplified=params.simplified)[0])
            for index, (level, seeds, perseval, egises, kept) in enumerate(drawn):
                out.append({
                    "definition": "authors", "measure": label, "system": system, "level": level,
                    "samples": len(seeds), "seed": seed, "draw_seeds": seeds, "rows": n_rows,
                    "sample_rows": kept[row], "full": float(full_values[row]), "value": level_values[index],
                    "bias": bias, "variance": variance, "delta": max(bias, variance),
                    "perseval_samples": [float(v) for v in perseval[row]],
                    "egises_full": float(full[label][system].egises), "egises": egises_values[index],
                    "egises_bias": egises_bias, "egises_variance": egises_variance,
                    "egises_samples": [float(v) for v in egises[row]],
                    **epsilon[level],
                })
    return out


def stability_summary(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Table 6's summary per (definition, measure), from :func:`stability` rows.

    ``delta`` is the maximum over systems of max(bias, variance) (footnote 8), with ``delta_bias`` and
    ``delta_variance`` its two parts. ``epsilon_spearman`` and ``epsilon_kendall`` are the smallest
    per-level mean rank correlation, the level where the ranking is least stable. ``levels`` maps each level
    to its mean Spearman and Kendall.
    """
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["definition"], row["measure"]), []).append(row)
    out = []
    for (definition, measure), items in groups.items():
        by_level: dict[Any, Mapping[str, Any]] = {}
        for item in items:
            by_level.setdefault(item["level"], item)
        out.append({
            "definition": definition,
            "measure": measure,
            "systems": len({item["system"] for item in items}),
            "delta_bias": _quiet(np.nanmax, [item["bias"] for item in items]),
            "delta_variance": _quiet(np.nanmax, [item["variance"] for item in items]),
            "delta": _quiet(np.nanmax, [item["delta"] for item in items]),
            "epsilon_spearman": _quiet(np.nanmin, [item["epsilon_spearman"] for item in by_level.values()]),
            "epsilon_kendall": _quiet(np.nanmin, [item["epsilon_kendall"] for item in by_level.values()]),
            "levels": {level: {"spearman": item["epsilon_spearman"], "kendall": item["epsilon_kendall"]}
                       for level, item in by_level.items()},
        })
    return out


# ---------------------------------------------------------------------------------------------------------------
# Table 3: EGISES rank vs PerSEval rank
# ---------------------------------------------------------------------------------------------------------------


def _rank_result(corr: Any) -> dict[str, Any]:
    return {
        "n": corr.n, "spearman": corr.spearman, "spearman_p": corr.spearman_p,
        "kendall": corr.kendall, "kendall_p": corr.kendall_p, "note": corr.note,
    }


def rank_agreement(scores: Scores, measure: str) -> dict[str, Any]:
    """Table 3: how far the EGISES ranking of a measure agrees with its PerSEval ranking.

    EGISES is a divergence, so the EGISES ranking puts the lowest EGISES first. PerSEval puts the highest
    first. This is the paper's orientation: Table 3 reports positive inter-correlations (Spearman 0.85-0.997,
    Kendall 0.70-0.99), and BigBird-Pegasus tops both Table 7 (lowest EGISES) and Table 1 (highest
    PerSEval). With either ranking reversed the coefficients would be negative. The coefficients correlate
    -EGISES (= DEGRESS - 1) with PerSEval over the systems where both are finite. Spearman rho and Kendall
    tau-b depend only on ranks, so this equals correlating the two rankings. A value below 1 is the paper's
    "EGISES paradox": EDP reorders the models.

    Returns ``measure``, ``systems``, ``egises_ranking``, ``perseval_ranking`` (best first), ``n``,
    ``spearman``, ``spearman_p``, ``kendall``, ``kendall_p`` and ``note``.
    """
    by_system = scores[measure]
    systems = [s for s, v in by_system.items() if _finite(v.egises) and _finite(v.perseval)]
    egises = {s: by_system[s].egises for s in systems}
    perseval = {s: by_system[s].perseval for s in systems}
    corr = correlate([-egises[s] for s in systems], [perseval[s] for s in systems])
    return {
        "measure": measure,
        "systems": systems,
        "egises_ranking": ranking(egises, higher_is_better=False),
        "perseval_ranking": ranking(perseval, higher_is_better=True),
        **_rank_result(corr),
    }


# ---------------------------------------------------------------------------------------------------------------
# Appendix B.2 and Table 5: Borda-Kendall consensus
# ---------------------------------------------------------------------------------------------------------------


def borda_kendall(rankings: Sequence[Sequence[str]]) -> list[str]:
    """Borda-Kendall consensus of rankings of the same systems (App. B.2).

    Each ranking lists the systems best first, so a system's rank eta^l_n in ranking l is its position + 1.
    sum_n = sum over l of eta^l_n, and the consensus orders the systems by increasing sum_n:
    BK(eta^1, ..., eta^L) = argsort(sum_1, ..., sum_N). Equal sums keep the order of the **first** ranking.
    Table 5 puts the PerSEval ranking first, so a tie goes to PerSEval's order. Raises ``ValueError`` unless
    every ranking holds the same systems exactly once.
    """
    if not rankings:
        raise ValueError("borda_kendall needs at least one ranking")
    first = list(rankings[0])
    if len(set(first)) != len(first):
        raise ValueError("a ranking lists a system twice")
    for other in rankings[1:]:
        if len(other) != len(first) or set(other) != set(first):
            raise ValueError("every ranking must hold the same systems")
    sums = {system: 0 for system in first}
    for ranked in rankings:
        for position, system in enumerate(ranked):
            sums[system] += position + 1
    tie = {system: position for position, system in enumerate(first)}
    return sorted(first, key=lambda system: (sums[system], tie[system]))


def average_ranks(values: Mapping[str, float], *, higher_is_better: bool) -> dict[str, float]:
    """Rank of each system with a finite value, 1 = best; tied values share their average rank."""
    from scipy.stats import rankdata

    finite = {system: float(value) for system, value in values.items() if _finite(value)}
    sign = -1.0 if higher_is_better else 1.0
    ranked = rankdata([sign * value for value in finite.values()], method="average")
    return dict(zip(finite, (float(rank) for rank in ranked), strict=True))


def borda_sums(rank_maps: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """sum_n = sum over l of eta^l_n (App. B.2) for the systems ranked in every map."""
    common = set(rank_maps[0]).intersection(*rank_maps[1:]) if rank_maps else set()
    return {system: float(sum(ranks_[system] for ranks_ in rank_maps)) for system in rank_maps[0] if system in common}


def borda_vs_hj(
    scores: Scores,
    hj_label: str,
    *,
    perseval_measures: Sequence[str] | None = None,
    accuracy_measures: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Table 5: does adding an accuracy leaderboard to PerSEval agree better with human judgment?

    The human ranking orders the systems by the PerSEval of ``hj_label`` (PerSEval-HJ), highest first.
    ``perseval_measures`` and ``accuracy_measures`` default to every non-``hj:`` measure in ``scores``. For
    each PerSEval measure X, the rows are:

    * ``accuracy_measure=None`` (``"PSE-X"``): PerSEval-X alone, correlated by its values (so this column
      equals Table 2's cell, as in the paper).
    * One row per accuracy measure Y (``"BK(PSE-X, Y)"``): the Borda-Kendall consensus of the PerSEval-X
      ranking and the accuracy-Y ranking (App. B.2): sum_n = eta^PSE_n + eta^acc_n with average ranks for
      tied values. The accuracy is Y's mean sigma(s_j, u_j), a distance, so the lowest ranks first (the order
      of the accuracy score 1 - sigma). The consensus is correlated by -sum_n, **ties kept**: the paper's
      Table 5 Kendall values (e.g. 0.46 = 20/sqrt(45*42) over 10 systems) are tau-b with tied Borda sums.

    Systems are those with finite values in every ranking involved and in the human one. Correlations are
    Spearman rho and Kendall tau-b against the PerSEval-HJ values, with p-values. Rows carry
    ``perseval_measure``, ``accuracy_measure``, ``aggregate``, ``ranking`` (best first; equal sums in PerSEval
    order), ``hj_ranking``, ``systems``, ``n``, ``spearman``, ``spearman_p``, ``kendall``, ``kendall_p``,
    ``note`` and, for consensus rows, ``borda_sums`` (in ``ranking`` order).
    """
    automatic = [m for m in scores if not m.startswith(HJ_PREFIX)]
    pse_measures = automatic if perseval_measures is None else list(perseval_measures)
    acc_measures = automatic if accuracy_measures is None else list(accuracy_measures)
    human = {s: v.perseval for s, v in scores[hj_label].items() if _finite(v.perseval)}
    out: list[dict[str, Any]] = []

    def compare(order: list[str], values: Mapping[str, float]) -> dict[str, Any]:
        """``values``: higher is better; ties stay ties (tau-b), as in the paper's Table 5."""
        corr = correlate([values[s] for s in order], [human[s] for s in order])
        return {
            "ranking": order,
            "hj_ranking": ranking({s: human[s] for s in order}, higher_is_better=True),
            "systems": sorted(order),
            **_rank_result(corr),
        }

    for x in pse_measures:
        perseval = {s: v.perseval for s, v in scores[x].items() if s in human and _finite(v.perseval)}
        alone = ranking(perseval, higher_is_better=True)
        out.append({"perseval_measure": x, "accuracy_measure": None, "aggregate": f"PSE-{x}",
                    **compare(alone, perseval)})
        for y in acc_measures:
            accuracy = {s: v.accuracy for s, v in scores[y].items() if s in perseval and _finite(v.accuracy)}
            both = {s: perseval[s] for s in accuracy}
            sums = borda_sums([average_ranks(both, higher_is_better=True),
                               average_ranks(accuracy, higher_is_better=False)])
            consensus = sorted(ranking(both, higher_is_better=True), key=lambda system: sums[system])
            out.append({"perseval_measure": x, "accuracy_measure": y, "aggregate": f"BK(PSE-{x}, {y})",
                        **compare(consensus, {system: -total for system, total in sums.items()}),
                        "borda_sums": [sums[system] for system in consensus]})
    return out
