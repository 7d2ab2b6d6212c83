"""Bootstrap confidence intervals (SacreROUGE's, at the system level; docs/conventions.md sec. 12): the documents'
draws, resampled system scores and correlations, percentile intervals."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metaeval.core.perseval.report_options import MISSING_SYSTEM_RULES, RESAMPLES
from metaeval.core.stats.correlation import ALPHA, correlate, size_label
from metaeval.core.stats.resampling.base import (
    _CELLS_PER_CHUNK,
    METHODS,
    MIN_PAIRS,
    NAN,
    Method,
    MissingSystem,
    Resample,
    Seed,
    _check_choice,
    _matrix,
    _num_den,
    _ratio,
    _same_shape,
    _weights,
    batch_correlation,
    system_scores,
)


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap interval ``[low, high]`` of a system-level correlation (see the module docstring).

    ``estimate``: the full-data correlation; ``n_valid`` of the ``n_boot`` samples gave a defined correlation and
    were kept (``low``/``high`` are NaN when none did); ``n_systems``: systems in the point estimate.
    ``n_incomplete`` samples drew a system without any drawn document holding a value; under
    ``missing_system="discard-sample"`` they are the ``n_discarded`` samples left out, under ``"drop-system"``
    they are kept with that system left out of their correlation (``n_discarded`` = 0).
    """

    estimate: float
    low: float
    high: float
    n_boot: int
    n_valid: int
    method: str
    resample: str
    confidence: float
    n_systems: int = 0
    note: str = ""
    missing_system: str = "discard-sample"
    n_incomplete: int = 0
    n_discarded: int = 0

    def as_dict(self) -> dict[str, object]:
        """The fields as plain values (NaN stays a float NaN)."""
        return asdict(self)


def _bootstrap_system_scores(
    pairs: Sequence[tuple[NDArray, NDArray]], resample: str, n_boot: int, rng: np.random.Generator
) -> list[NDArray[np.float64]]:
    """Resampled system scores ``[n_boot, S]`` of each measure ``(num, den)``, all from the same draws."""
    n_systems, n_docs = pairs[0][0].shape
    rows = rng.integers(0, n_systems, size=(n_boot, n_systems)) if resample != "documents" else None
    if resample == "systems":
        return [_ratio(num.sum(axis=1), den.sum(axis=1))[rows] for num, den in pairs]
    out = [np.empty((n_boot, n_systems)) for _ in pairs]
    for start, cols in document_draws(rng, n_boot, n_docs):
        b = len(cols)
        # the sample's sums over drawn documents are counts @ M.T
        counts = draw_counts(cols, n_docs)
        for k, (num, den) in enumerate(pairs):
            out[k][start:start + b] = _ratio(counts @ num.T, counts @ den.T)
    if rows is not None:
        out = [np.take_along_axis(scores, rows, axis=1) for scores in out]
    return out


def document_draws(
    rng: np.random.Generator, n_boot: int, n_docs: int
) -> Iterator[tuple[int, NDArray[np.int64]]]:
    """The documents bootstrap's draws, ``(start, cols)`` per chunk: ``cols[k]`` are the column indices of sample
    ``start + k``, ``n_docs`` of them drawn with replacement (``rng.integers(0, n_docs, size=(b, n_docs))``, in
    chunks of at most about ``_CELLS_PER_CHUNK`` cells). Every documents bootstrap of the core draws this way, so
    one seed gives one set of samples."""
    step = max(1, min(n_boot, _CELLS_PER_CHUNK // max(1, n_docs)))
    for start in range(0, n_boot, step):
        yield start, rng.integers(0, n_docs, size=(min(step, n_boot - start), n_docs))


def draw_counts(cols: NDArray[np.int64], n_docs: int) -> NDArray[np.float64]:
    """``counts[k, d]``: how often sample ``k`` of ``cols`` (:func:`document_draws`) drew document ``d``."""
    b = len(cols)
    offsets = np.arange(b)[:, None] * n_docs
    return np.bincount((cols + offsets).ravel(), minlength=b * n_docs).reshape(b, n_docs).astype(np.float64)


def system_score_intervals(
    values: ArrayLike, weights: ArrayLike | None = None, *, n_boot: int = 1000, confidence: float = 0.95, seed: Seed,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(scores, low, high)`` per system: the score (:func:`system_scores`) and its percentile bootstrap interval
    over documents drawn with replacement (the leaderboard's error bars). A system without a score gets NaN."""
    _validate_bootstrap("documents", n_boot, confidence)
    matrix = _matrix(values, "values")
    w = _weights(weights, matrix, "weights")
    num, den = _num_den(matrix, w)
    replicates = _bootstrap_system_scores([(num, den)], "documents", n_boot, np.random.default_rng(seed))[0]
    tail = (1.0 - confidence) / 2.0
    low = np.full(matrix.shape[0], np.nan)
    high = np.full(matrix.shape[0], np.nan)
    for row in range(matrix.shape[0]):
        finite = replicates[:, row][np.isfinite(replicates[:, row])]
        if len(finite):
            low[row], high[row] = np.quantile(finite, [tail, 1.0 - tail])
    return system_scores(matrix, weights), low, high


def _prepare_pair(
    auto: ArrayLike, human: ArrayLike, auto_weights: ArrayLike | None, human_weights: ArrayLike | None
) -> tuple[NDArray, NDArray, list[tuple[NDArray, NDArray]], NDArray[np.bool_]]:
    """Full-data system scores of both measures, their ``(num, den)`` on the kept systems, and the kept mask."""
    a, h = _matrix(auto, "auto"), _matrix(human, "human")
    _same_shape(auto=a, human=h)
    pairs = [_num_den(a, _weights(auto_weights, a, "auto_weights")),
             _num_den(h, _weights(human_weights, h, "human_weights"))]
    sa = _ratio(pairs[0][0].sum(axis=1), pairs[0][1].sum(axis=1))
    sh = _ratio(pairs[1][0].sum(axis=1), pairs[1][1].sum(axis=1))
    keep = np.isfinite(sa) & np.isfinite(sh)
    return sa, sh, [(num[keep], den[keep]) for num, den in pairs], keep


def _validate_bootstrap(resample: str, n_boot: int, confidence: float) -> None:
    _check_choice(resample, RESAMPLES, "resample")
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer; got {n_boot!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}")


def _replicates(
    auto: ArrayLike,
    human: ArrayLike,
    *,
    methods: Sequence[Method],
    resample: str,
    n_boot: int,
    seed: Seed,
    auto_weights: ArrayLike | None,
    human_weights: ArrayLike | None,
    missing_system: str,
) -> tuple[dict[str, NDArray[np.float64]], int]:
    """``({method: r*}, n_incomplete)``: the replicates of :func:`bootstrap_replicates` and the number of samples
    in which some drawn system had no score (no drawn document with a value, on either side)."""
    for method in methods:
        _check_choice(method, METHODS, "method")
    _check_choice(missing_system, MISSING_SYSTEM_RULES, "missing_system")
    _validate_bootstrap(resample, n_boot, 0.5)
    _, _, pairs, keep = _prepare_pair(auto, human, auto_weights, human_weights)
    rng = np.random.default_rng(seed)
    if keep.sum() < MIN_PAIRS:
        return {m: np.full(int(n_boot), np.nan) for m in methods}, 0
    xa, xh = _bootstrap_system_scores(pairs, resample, int(n_boot), rng)
    incomplete: NDArray[np.bool_] = ~np.asarray((np.isfinite(xa) & np.isfinite(xh)).all(axis=1))
    if missing_system == "discard-sample":
        xa = np.where(incomplete[:, None], np.nan, xa)  # an all-NaN row correlates to NaN: the sample is dropped
    return {m: batch_correlation(xa, xh, m) for m in methods}, int(incomplete.sum())


def bootstrap_replicates(
    auto: ArrayLike,
    human: ArrayLike,
    *,
    methods: Sequence[Method] = METHODS,
    resample: Resample,
    n_boot: int = 1000,
    seed: Seed,
    auto_weights: ArrayLike | None = None,
    human_weights: ArrayLike | None = None,
    missing_system: MissingSystem = "discard-sample",
) -> dict[str, NDArray[np.float64]]:
    """The ``n_boot`` bootstrap correlations ``r*`` per method (NaN where undefined or discarded), from one set
    of samples.

    Same sampling as :func:`bootstrap_correlation` (which summarises these): ``auto``/``human`` are ``[S, D]``
    over the same systems and documents, systems with a NaN full-data score on either side are left out first.
    ``missing_system`` is the rule for a sample in which a drawn system has no drawn document with a value:
    ``"discard-sample"`` (SacreROUGE's; the sample's ``r*`` is NaN) or ``"drop-system"`` (the correlation of
    that sample is taken over the other systems).
    """
    return _replicates(auto, human, methods=methods, resample=resample, n_boot=n_boot, seed=seed,
                       auto_weights=auto_weights, human_weights=human_weights, missing_system=missing_system)[0]


def _interval(estimate: float, replicates: NDArray, *, method: str, resample: str, confidence: float,
              n_systems: int, note: str, missing_system: str, n_incomplete: int) -> BootstrapCI:
    valid = replicates[np.isfinite(replicates)]
    if len(valid):
        low, high = (float(q) for q in np.quantile(valid, [(1 - confidence) / 2, (1 + confidence) / 2]))
    else:
        low = high = NAN
        note = note or "no bootstrap sample gave a defined correlation"
    discarded = n_incomplete if missing_system == "discard-sample" else 0
    return BootstrapCI(estimate=float(estimate), low=low, high=high, n_boot=len(replicates), n_valid=len(valid),
                       method=method, resample=resample, confidence=float(confidence), n_systems=n_systems,
                       note=note, missing_system=missing_system, n_incomplete=n_incomplete, n_discarded=discarded)


def bootstrap_correlation(
    auto: ArrayLike,
    human: ArrayLike,
    *,
    method: Method,
    resample: Resample,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: Seed,
    auto_weights: ArrayLike | None = None,
    human_weights: ArrayLike | None = None,
    missing_system: MissingSystem = "discard-sample",
) -> BootstrapCI:
    """Percentile bootstrap confidence interval of the system-level correlation of ``auto`` with ``human``.

    ``auto``, ``human``: ``[S, D]`` document matrices over the same systems and documents (NaN = missing), with
    optional ``[S, D]`` weights (see :func:`system_scores`). ``resample``: ``"systems"`` (rows), ``"documents"``
    (columns) or ``"both"`` (rows and columns independently), each with replacement. Each sample's system scores
    are the weighted means over its drawn documents and its correlation is over its drawn systems. A sample in
    which a drawn system has no drawn document with a value is discarded (``missing_system="discard-sample"``,
    SacreROUGE's rule) or correlated without that system (``"drop-system"``); samples with an undefined
    correlation are dropped (``n_valid`` counts the rest); ``[low, high]`` are the ``(1 -+ confidence) / 2``
    quantiles of the valid ones. ``estimate`` is the full-data correlation (``correlate`` of the system scores).
    See the module docstring for the formulas.
    """
    _check_choice(method, METHODS, "method")
    _validate_bootstrap(resample, n_boot, confidence)
    sa, sh, _, keep = _prepare_pair(auto, human, auto_weights, human_weights)
    corr = correlate(sa, sh)
    replicates, incomplete = _replicates(
        auto, human, methods=(method,), resample=resample, n_boot=n_boot, seed=seed, auto_weights=auto_weights,
        human_weights=human_weights, missing_system=missing_system,
    )
    return _interval(getattr(corr, method), replicates[method], method=method, resample=resample,
                     confidence=confidence, n_systems=int(keep.sum()), note=corr.note,
                     missing_system=missing_system, n_incomplete=incomplete)


def correlation_with_ci(
    auto: ArrayLike,
    human: ArrayLike,
    *,
    resample: Resample = "both",
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: Seed,
    auto_weights: ArrayLike | None = None,
    human_weights: ArrayLike | None = None,
    alpha: float | None = ALPHA,
    missing_system: MissingSystem = "discard-sample",
) -> dict[str, object]:
    """One Table 2 cell: Pearson, Spearman and Kendall with p-values, labels and bootstrap intervals.

    The point estimates and two-sided p-values are :func:`~metaeval.core.stats.correlation.correlate` of the system
    scores; the intervals are :func:`bootstrap_correlation`'s (one set of samples for the three methods, the
    same as ``bootstrap_correlation`` draws with this seed). Keys: ``n``, ``dropped`` (indices of systems left
    out for a NaN score), ``note``; per method ``m``: ``m``, ``m_p``, ``m_label`` (strength, significance at
    ``alpha``), ``m_size`` (strength by size alone), ``m_low``, ``m_high``, ``m_n_valid``; and ``resample``,
    ``n_boot``, ``confidence``, ``missing_system``, ``n_incomplete`` and ``n_discarded`` (samples in which a
    drawn system had no drawn document with a value, and how many of them were discarded). Values are plain
    floats/ints/strings/lists; NaN stays a float NaN (JSON encoding is the caller's).
    """
    _validate_bootstrap(resample, n_boot, confidence)
    sa, sh, _, keep = _prepare_pair(auto, human, auto_weights, human_weights)
    corr = correlate(sa, sh)
    replicates, incomplete = _replicates(
        auto, human, methods=METHODS, resample=resample, n_boot=n_boot, seed=seed, auto_weights=auto_weights,
        human_weights=human_weights, missing_system=missing_system,
    )
    labels = corr.labels(alpha)
    row: dict[str, object] = {"n": corr.n}
    ci = None
    for method in METHODS:
        ci = _interval(getattr(corr, method), replicates[method], method=method, resample=resample,
                       confidence=confidence, n_systems=int(keep.sum()), note=corr.note,
                       missing_system=missing_system, n_incomplete=incomplete)
        row[method] = ci.estimate
        row[f"{method}_p"] = float(getattr(corr, f"{method}_p"))
        row[f"{method}_label"] = labels[method]
        row[f"{method}_size"] = size_label(ci.estimate)
        row[f"{method}_low"] = ci.low
        row[f"{method}_high"] = ci.high
        row[f"{method}_n_valid"] = ci.n_valid
    assert ci is not None
    row.update(resample=resample, n_boot=int(n_boot), confidence=float(confidence), dropped=list(corr.dropped),
               note=corr.note, missing_system=missing_system, n_incomplete=ci.n_incomplete,
               n_discarded=ci.n_discarded)
    return row
