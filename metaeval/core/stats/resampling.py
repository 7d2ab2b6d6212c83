"""Resampling statistics for system-level correlations: bootstrap confidence intervals and permutation tests
(docs/conventions.md sec. 12-13, which also says which rules are SacreROUGE's and which are options).

The methods are those of Deutsch, Dror and Roth (2021), "A Statistical Analysis of Summarization Evaluation Metrics
Using Resampling Methods" (TACL; implemented in SacreROUGE), applied to the system-level correlation of
:mod:`metaeval.core.stats.correlation` (paper Table 2). The code is ours; only the definitions follow that paper.

Input
-----
Every measure is a matrix ``values[S, D]``: one row per system, one column per document, NaN where the system has
no value for the document, with optional non-negative ``weights[S, D]`` (the shape ``studies.document_matrix``
produces). The system score (:func:`system_scores`) is the NaN-skipping weighted mean over documents::

    score[s] = sum_d w[s, d] * v[s, d] / sum_d w[s, d]      (sums over the documents d where v[s, d] is not NaN)

with ``w = 1`` when ``weights`` is None (plain ``nanmean``). A system with no non-NaN value, or whose weights sum
to 0, scores NaN. The matrices of the measures being compared must share the same systems (rows) and documents
(columns) in the same order; :func:`align` builds such matrices from ``(systems, doc_ids, values, weights)``.

Systems whose full-data score is NaN in any of the compared measures are left out before resampling (they are the
pairs :func:`~metaeval.core.stats.correlation.correlate` drops from the point estimate), so the bootstrap and the
permutation test work on the systems the point estimate uses.

Bootstrap (:func:`bootstrap_correlation`)
-----------------------------------------
One bootstrap sample draws, with replacement and independently,

* ``systems``:   row indices ``i_1..i_S`` from the S systems (documents unchanged);
* ``documents``: column indices ``j_1..j_D`` from the D documents (systems unchanged);
* ``both``:      both of the above (rows first, then columns), the sample being ``values[rows][:, cols]``.

It recomputes each measure's system scores over the sampled documents (a document drawn k times counts k times:
``score*[s] = sum_k w[s, j_k] v[s, j_k] / sum_k w[s, j_k]`` over the draws with a non-NaN value) and the
correlation ``r*`` over the sampled systems (a system drawn twice is two pairs). When a drawn system has no drawn
document with a value (its ``score*`` is NaN on either side), the whole sample is discarded
(``missing_system="discard-sample"``, the default and SacreROUGE's behaviour: its system-level correlation of a
NaN score is undefined and skipped); ``"drop-system"`` instead correlates that sample over the other systems.
``n_incomplete`` counts such samples and ``n_discarded`` those left out. Samples whose correlation is undefined
(fewer than 3 pairs with a finite score on both sides, or a constant side) are dropped too; ``n_valid`` counts
the others. The interval is the percentile interval of the valid ``r*``::

    low, high = quantile(r*, (1 - c) / 2), quantile(r*, (1 + c) / 2)     (numpy's linear interpolation)

for confidence ``c`` (SacreROUGE's ``np.percentile`` is the same). The ``estimate`` is the full-data
correlation (SciPy's, as in ``correlate``).

Permutation test (:func:`permutation_test`)
-------------------------------------------
Tests whether automatic measure A correlates with the human judgments H better than measure B does::

    H0: r(A, H) <= r(B, H)      against      H1: r(A, H) > r(B, H)     (alternative="greater", one-sided)
    H0: r(A, H) =  r(B, H)      against      H1: r(A, H) != r(B, H)    (alternative="two-sided")
    delta = r(A, H) - r(B, H)

Because A and B may be on different scales (ROUGE in [0, 1], BERTScore near 0.85), each of A and B is first
z-scored over all its non-NaN cells (``standardize=True``; population sd, as SacreROUGE's ``standardize``).
``delta`` is computed from these z-scored matrices, exactly as the permuted deltas are: mathematically an affine
map leaves the correlations unchanged, but in floating point z-scoring can merge system scores that differ by
~1e-16 (relative) into ties, and the observed statistic must come from the distribution it is compared with.
Under H0 the two measures are exchangeable, so each permutation swaps A's and B's values (and their weights) at
random with probability 1/2, independently

* ``both``:      per (system, document) cell;
* ``systems``:   per system (a whole row: equivalently the two system scores are swapped);
* ``documents``: per document (a whole column, for every system);

recomputes both measures' system scores and ``delta* = r(A*, H) - r(B*, H)`` (H is never permuted). With
``n`` valid permutations (those where both correlations are defined)::

    p = (1 + #{delta* >= delta}) / (1 + n)            (greater)
    p = (1 + #{|delta*| >= |delta|}) / (1 + n)        (two-sided, SacreROUGE's two-tailed test)

(the +1 counts the observed assignment, so p is never 0; ``>=`` allows a tolerance of 1e-12 for rounding in the
incremental sums). The two-sided p is not twice the smaller one-sided p.

Correlations
------------
Pearson's r, Spearman's rho (Pearson's r of average ranks) and Kendall's tau-b, vectorised over samples by
:func:`batch_correlation`; for one sample they agree with ``scipy.stats`` to rounding. Kendall's tau-b over the
``n0 = n(n - 1)/2`` pairs i < j is ``sum sign(x_i - x_j) sign(y_i - y_j) / sqrt((n0 - n1)(n0 - n2))``, where n1 and
n2 count the pairs tied in x and in y.

Randomness
----------
Every random function takes ``seed`` and draws from ``np.random.default_rng(seed)``: the same inputs, seed and NumPy
version give the same result. For a given seed, :func:`bootstrap_correlation` and :func:`correlation_with_ci` draw
the same samples, so the three methods' intervals of :func:`correlation_with_ci` come from paired samples.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from metaeval.core.perseval.report_options import ALTERNATIVES, MISSING_SYSTEM_RULES, RESAMPLES
from metaeval.core.stats.correlation import ALPHA, correlate, size_label

__all__ = [
    "ALTERNATIVES",
    "METHODS",
    "MISSING_SYSTEM_RULES",
    "RESAMPLES",
    "BootstrapCI",
    "PermutationResult",
    "align",
    "batch_correlation",
    "bootstrap_correlation",
    "bootstrap_replicates",
    "correlation_with_ci",
    "document_draws",
    "draw_counts",
    "permutation_test",
    "system_scores",
]

Method = Literal["pearson", "spearman", "kendall"]
Resample = Literal["systems", "documents", "both"]
MissingSystem = Literal["discard-sample", "drop-system"]
Alternative = Literal["greater", "two-sided"]
Seed = int | np.random.SeedSequence | np.random.Generator | None

METHODS: tuple[Method, ...] = ("pearson", "spearman", "kendall")
MIN_PAIRS = 3
NAN = float("nan")
_CELLS_PER_CHUNK = 2_000_000  # bounds the temporary arrays (about 16 MB of float64 each)
_TIE_TOLERANCE = 1e-12


# --------------------------------------------------------------------------------------------------- validation
def _check_choice(value: str, choices: tuple[str, ...], name: str) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def _matrix(values: ArrayLike, name: str) -> NDArray[np.float64]:
    array = np.array(values, dtype=np.float64)  # a copy: callers' arrays are never modified
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D [systems, documents] matrix; got {array.ndim} dimension(s)")
    if np.isinf(array).any():
        raise ValueError(f"{name} holds +-inf; use NaN for a missing value")
    return array


def _weights(weights: ArrayLike | None, values: NDArray[np.float64], name: str) -> NDArray[np.float64]:
    """Weights with 0 where the value is NaN (``w = 1`` where finite when ``weights`` is None)."""
    present = ~np.isnan(values)
    if weights is None:
        return present.astype(np.float64)
    w = np.array(weights, dtype=np.float64)
    if w.shape != values.shape:
        raise ValueError(f"{name} has shape {w.shape}, its values {values.shape}")
    used = w[present]
    if not np.all(np.isfinite(used)) or np.any(used < 0):
        raise ValueError(f"{name} must be finite and >= 0 wherever the value is not NaN")
    return np.where(present, w, 0.0)


def _num_den(values: NDArray[np.float64], weights: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """``(w * v, w)`` with 0 where ``v`` is NaN: the per-cell numerator and denominator of the system mean."""
    return np.where(weights > 0, np.nan_to_num(values, nan=0.0) * weights, 0.0), weights


def _ratio(num: NDArray, den: NDArray) -> NDArray[np.float64]:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    return np.where(den > 0, out, np.nan)


def _same_shape(**matrices: NDArray) -> None:
    shapes = {name: m.shape for name, m in matrices.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(f"the matrices must cover the same systems and documents; got {listed}")


# ----------------------------------------------------------------------------------------------- aggregation
def system_scores(values: ArrayLike, weights: ArrayLike | None = None) -> NDArray[np.float64]:
    """System scores ``score[s] = sum_d w[s,d] v[s,d] / sum_d w[s,d]`` over the documents where ``v`` is not NaN.

    ``values`` is ``[S, D]`` (NaN = missing); ``weights`` ``[S, D]`` (finite, >= 0 where the value is not NaN;
    ignored where it is NaN) or None for the plain ``nanmean``. A row with no value, or with weights summing to 0,
    gives NaN (and no warning). +-inf values are refused (ValueError).
    """
    v = _matrix(values, "values")
    num, den = _num_den(v, _weights(weights, v, "weights"))
    return _ratio(num.sum(axis=1), den.sum(axis=1))


def align(
    *matrices: tuple[Sequence[Hashable], Sequence[Hashable], ArrayLike, ArrayLike | None],
) -> tuple[list[Hashable], list[Hashable], list[NDArray[np.float64]], list[NDArray[np.float64] | None]]:
    """Put document matrices ``(systems, doc_ids, values, weights)`` on common rows and columns.

    Rows: the systems present in every matrix, in the first matrix's order (a system missing from one measure
    cannot be correlated). Columns: the union of the documents, first-seen order, with NaN (weight 0) where a
    matrix lacks the document, so every measure's system scores are unchanged. Returns ``(systems, doc_ids,
    [values, ...], [weights or None, ...])`` in the order of the arguments.
    """
    if not matrices:
        raise ValueError("align needs at least one matrix")
    common = set(matrices[0][0])
    for systems, *_ in matrices[1:]:
        common &= set(systems)
    systems_out = [s for s in matrices[0][0] if s in common]
    docs_out: list[Hashable] = []
    seen: set[Hashable] = set()
    for _, doc_ids, *_ in matrices:
        for d in doc_ids:
            if d not in seen:
                seen.add(d)
                docs_out.append(d)
    column = {d: j for j, d in enumerate(docs_out)}
    values_out: list[NDArray[np.float64]] = []
    weights_out: list[NDArray[np.float64] | None] = []
    for k, (systems, doc_ids, values, weights) in enumerate(matrices):
        v = np.asarray(values, dtype=np.float64)
        if v.shape != (len(systems), len(doc_ids)):
            raise ValueError(f"matrix {k}: values {v.shape} do not match {len(systems)} systems x {len(doc_ids)} docs")
        row = {s: i for i, s in enumerate(systems)}
        rows = [row[s] for s in systems_out]
        cols = [column[d] for d in doc_ids]
        out = np.full((len(systems_out), len(docs_out)), np.nan)
        out[:, cols] = v[rows]
        values_out.append(out)
        if weights is None:
            weights_out.append(None)
        else:
            w = np.asarray(weights, dtype=np.float64)
            if w.shape != v.shape:
                raise ValueError(f"matrix {k}: weights {w.shape} differ from values {v.shape}")
            wout = np.zeros_like(out)
            wout[:, cols] = w[rows]
            weights_out.append(wout)
    return systems_out, docs_out, values_out, weights_out


# ---------------------------------------------------------------------------------------------- correlations
def _pearson_rows(x: NDArray, y: NDArray) -> NDArray[np.float64]:
    """sum(xc yc) / sqrt(sum(xc^2) sum(yc^2)) per row (centred): exactly 1 for identical rows, since
    sqrt(fl(s^2)) = s in binary floating point."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
        return np.clip(r, -1.0, 1.0)


def _kendall_rows(x: NDArray, y: NDArray) -> NDArray[np.float64]:
    n_rows, n = x.shape
    i, j = np.triu_indices(n, 1)
    out = np.empty(n_rows)
    step = max(1, _CELLS_PER_CHUNK // max(1, len(i)))
    for start in range(0, n_rows, step):
        xs, ys = x[start:start + step], y[start:start + step]
        dx = np.sign(xs[:, i] - xs[:, j])
        dy = np.sign(ys[:, i] - ys[:, j])
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = (dx * dy).sum(axis=1) / np.sqrt(np.abs(dx).sum(axis=1) * np.abs(dy).sum(axis=1))
        out[start:start + step] = np.clip(tau, -1.0, 1.0)
    return out


def _complete_rows(x: NDArray, y: NDArray, method: str) -> NDArray[np.float64]:
    """Correlation of each row pair; rows are NaN-free. Undefined (n < 3, constant row) gives NaN."""
    n_rows, n = x.shape
    if n_rows == 0:
        return np.empty(0)
    if n < MIN_PAIRS:
        return np.full(n_rows, np.nan)
    if method == "pearson":
        r = _pearson_rows(x, y)
    elif method == "spearman":
        r = _pearson_rows(stats.rankdata(x, axis=1), stats.rankdata(y, axis=1))
    else:
        r = _kendall_rows(x, y)
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
    return np.where(constant, np.nan, r)


def batch_correlation(x: ArrayLike, y: ArrayLike, method: Method) -> NDArray[np.float64]:
    """Row-wise correlation ``corr(x[k], y[k])`` for ``x``, ``y`` of shape ``[N, n]`` (``y`` may be ``[n]``).

    ``method``: ``"pearson"`` (r), ``"spearman"`` (Pearson's r of average ranks) or ``"kendall"`` (tau-b,
    ``sum_{i<j} sign(x_i - x_j) sign(y_i - y_j) / sqrt((n0 - n1)(n0 - n2))``). Per row, pairs with a NaN on either
    side are dropped; fewer than 3 remaining pairs or a constant side give NaN. Agrees with ``scipy.stats``
    (``pearsonr``, ``spearmanr``, ``kendalltau``) to rounding.
    """
    _check_choice(method, METHODS, "method")
    xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
    ys = np.asarray(y, dtype=np.float64)
    xs, ys = np.broadcast_arrays(xs, ys)
    out = np.full(xs.shape[0], np.nan)
    finite = np.isfinite(xs) & np.isfinite(ys)
    complete = finite.all(axis=1)
    out[complete] = _complete_rows(xs[complete], ys[complete], method)
    for k in np.flatnonzero(~complete):  # rare: a sample where some system has no score
        keep = finite[k]
        out[k] = _complete_rows(xs[k, keep][None], ys[k, keep][None], method)[0]
    return out


# ------------------------------------------------------------------------------------------------- bootstrap
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


# ----------------------------------------------------------------------------------------------- permutation
@dataclass(frozen=True)
class PermutationResult:
    """Permutation test of r(A, H) against r(B, H) (see the module docstring).

    ``delta = r_a - r_b`` on the ``n_systems`` systems with a score in A, B and H, computed from the matrices the
    permutations swap (z-scored when ``standardized``); ``p_value`` for the ``alternative`` (``"greater"``: H1
    r(A, H) > r(B, H); ``"two-sided"``: H1 r(A, H) != r(B, H)) from the ``n_valid`` of ``n_permutations``
    permutations with both correlations defined (NaN when ``delta`` is).
    """

    delta: float
    p_value: float
    n_permutations: int
    n_valid: int
    method: str
    resample: str
    r_a: float
    r_b: float
    n_systems: int
    standardized: bool = True
    note: str = ""
    alternative: str = "greater"

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether H0 is rejected at ``alpha`` (False when p is NaN)."""
        return bool(self.p_value < alpha)

    def as_dict(self) -> dict[str, object]:
        """The fields as plain values (NaN stays a float NaN)."""
        return asdict(self)


def _standardize(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``(v - mean) / sd`` over the non-NaN cells, population sd (SacreROUGE's ``standardize``); only centred when
    the sd is 0."""
    present = values[~np.isnan(values)]
    if not len(present):
        return values
    sd = float(present.std())
    centred = values - float(present.mean())
    return centred / sd if sd > 0 else centred


def permutation_test(
    auto_a: ArrayLike,
    auto_b: ArrayLike,
    human: ArrayLike,
    *,
    method: Method,
    resample: Resample,
    n_permutations: int = 1000,
    seed: Seed,
    a_weights: ArrayLike | None = None,
    b_weights: ArrayLike | None = None,
    human_weights: ArrayLike | None = None,
    standardize: bool = True,
    alternative: Alternative = "greater",
) -> PermutationResult:
    """Permutation test (PERM-BOTH / -SYSTEMS / -INPUTS) of r(A, H) against r(B, H).

    ``auto_a``, ``auto_b``, ``human``: ``[S, D]`` document matrices over the same systems and documents (NaN =
    missing) with optional weights. Systems lacking a score in A, B or H are left out. ``standardize`` z-scores A
    and B over their cells first (SacreROUGE does). ``delta = r(A, H) - r(B, H)`` is computed from those
    (z-scored) matrices, exactly as every permuted ``delta*``, so the unpermuted assignment reproduces ``delta``
    bit for bit. Each permutation swaps A's and B's (value, weight) with probability 1/2 per cell (``"both"``),
    per system (``"systems"``) or per document (``"documents"``). ``alternative="greater"`` (one-sided, H1:
    r(A, H) > r(B, H); a small p says A correlates better; swap A and B for the other direction) counts
    ``delta* >= delta``; ``"two-sided"`` counts ``|delta*| >= |delta|``; ``p = (1 + count) / (1 + n_valid)``.
    """
    _check_choice(method, METHODS, "method")
    _check_choice(resample, RESAMPLES, "resample")
    _check_choice(alternative, ALTERNATIVES, "alternative")
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer; got {n_permutations!r}")
    n_perm = int(n_permutations)
    a, b, h = _matrix(auto_a, "auto_a"), _matrix(auto_b, "auto_b"), _matrix(human, "human")
    _same_shape(auto_a=a, auto_b=b, human=h)
    wa, wb = _weights(a_weights, a, "a_weights"), _weights(b_weights, b, "b_weights")
    wh = _weights(human_weights, h, "human_weights")
    if standardize:  # an affine map per measure: which system scores are NaN does not change
        a, b = _standardize(a), _standardize(b)
    na, da = _num_den(a, wa)
    nb, db = _num_den(b, wb)
    sa, sb = _ratio(na.sum(axis=1), da.sum(axis=1)), _ratio(nb.sum(axis=1), db.sum(axis=1))
    sh = _ratio(*(m.sum(axis=1) for m in _num_den(h, wh)))
    keep = np.isfinite(sa) & np.isfinite(sb) & np.isfinite(sh)
    n_systems = int(keep.sum())
    na, da, nb, db = na[keep], da[keep], nb[keep], db[keep]
    hs = sh[keep]
    r_a = float(batch_correlation(sa[keep], hs, method)[0])
    r_b = float(batch_correlation(sb[keep], hs, method)[0])
    delta = r_a - r_b

    def result(delta: float, p_value: float, n_valid: int, note: str = "") -> PermutationResult:
        return PermutationResult(
            delta=delta, p_value=p_value, n_valid=n_valid, note=note, n_permutations=n_perm, method=method,
            resample=resample, r_a=r_a, r_b=r_b, n_systems=n_systems, standardized=standardize,
            alternative=alternative,
        )

    if not math.isfinite(delta):
        notes = (("A", correlate(sa[keep], hs)), ("B", correlate(sb[keep], hs)))
        note = "; ".join(f"{name}: {c.note}" for name, c in notes if c.note) or "delta undefined"
        return result(NAN, NAN, 0, note)
    rng = np.random.default_rng(seed)
    deltas = np.empty(n_perm)
    if resample == "systems":
        za, zb = sa[keep], sb[keep]
        swap = rng.integers(0, 2, size=(n_perm, n_systems), dtype=bool)
        pa, pb = np.where(swap, zb, za), np.where(swap, za, zb)
        deltas = batch_correlation(pa, hs, method) - batch_correlation(pb, hs, method)
    else:
        # swapping cell (s, d) moves (nb - na)[s, d] into A's numerator and out of B's (likewise denominators)
        dn, dd = nb - na, db - da
        sum_na, sum_da, sum_nb, sum_db = na.sum(axis=1), da.sum(axis=1), nb.sum(axis=1), db.sum(axis=1)
        n_docs = a.shape[1]
        cells = n_docs * (n_systems if resample == "both" else 1)
        step = max(1, min(n_perm, _CELLS_PER_CHUNK // max(1, cells)))
        for start in range(0, n_perm, step):
            k = min(step, n_perm - start)
            if resample == "documents":
                swap = rng.integers(0, 2, size=(k, n_docs), dtype=bool).astype(np.float64)
                move_n, move_d = swap @ dn.T, swap @ dd.T
            else:
                swap = rng.integers(0, 2, size=(k, n_systems, n_docs), dtype=bool)
                move_n, move_d = np.einsum("ksd,sd->ks", swap, dn), np.einsum("ksd,sd->ks", swap, dd)
            pa = _ratio(sum_na + move_n, sum_da + move_d)
            pb = _ratio(sum_nb - move_n, sum_db - move_d)
            deltas[start:start + k] = batch_correlation(pa, hs, method) - batch_correlation(pb, hs, method)
    valid = deltas[np.isfinite(deltas)]
    if alternative == "two-sided":
        exceed = int(np.sum(np.abs(valid) >= abs(delta) - _TIE_TOLERANCE))
    else:
        exceed = int(np.sum(valid >= delta - _TIE_TOLERANCE))
    p_value = (1 + exceed) / (1 + len(valid))
    note = "" if len(valid) == n_perm else f"{n_perm - len(valid)} permutation(s) gave an undefined correlation"
    return result(delta, p_value, len(valid), note)
