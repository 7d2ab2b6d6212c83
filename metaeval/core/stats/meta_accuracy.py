"""Meta-evaluation by pairs: pairwise accuracy, acc_eq with tie calibration, close-pair buckets, and bootstrap
intervals over documents (docs/conventions.md sec. 26; soft pairwise accuracy is :mod:`.soft_pairwise`).

Pairs. For systems with a finite value on both sides (``metric`` m, ``human`` h; a system with NaN on either side is
left out and reported in ``dropped``), every unordered pair i < j gives dm = m_i - m_j and dh = h_i - h_j. A human
tie is exact equality (dh == 0); a metric tie is |dm| <= epsilon. At one epsilon every pair is one of (Deutsch,
Foster and Freitag, EMNLP 2023, sec. 3): concordant C (neither tied, same sign), discordant D (neither tied, other
sign), tied only in the human T_h, only in the metric T_m, or in both T_hm.

* ``accuracy`` (Kocmi et al., WMT 2021): among the pairs with dh != 0, the share with sign(dm) == sign(dh); a metric
  tie (dm == 0 exactly; epsilon does not enter) disagrees. NaN when no pair has a human difference.
* ``acc_eq`` (Deutsch et al. 2023, acc_eq): (C + T_hm) / (C + D + T_h + T_m + T_hm), i.e. over all pairs.
* tie calibration (ibid., sec. 5): epsilon = the value among 0 and every observed |dm| that maximises acc_eq; the
  smallest such value when several do (values within 1e-12 count as equal). Same rule as the reference
  ``tau_optimization`` of google-research/mt-metrics-eval (its ``nanargmax`` over ascending thresholds).

Document level ("group-by-item", Deutsch et al. 2023): the same statistics per document over the systems with both
values in that document, then the plain mean over documents (accuracy: over the documents with a pair that has a
human difference; acc_eq: over the documents with a pair). Tie calibration chooses one epsilon for all documents,
the one that maximises that mean (the reference's ``average_by="item"``).

Buckets (Deutsch, Dror and Roth, NAACL 2022): the statistics restricted to the pairs with |dh| in [low, high), at
the epsilon of all pairs. The correlations are written as sums over pairs, which over all pairs equal Pearson's r,
Spearman's rho and Kendall's tau-b (:mod:`metaeval.core.stats.correlation`), and restricted to the bucket's pairs::

    pearson  = sum dm dh / sqrt(sum dm^2 sum dh^2)             (sum_{i<j} dx dy = n sum (x - mean)(y - mean))
    spearman = the same on the average ranks of m and h over all compared systems
    kendall  = sum sign(dm) sign(dh) / sqrt(#{dm != 0} #{dh != 0})

NaN with fewer than 3 pairs (over all pairs: fewer than 3 systems, correlate's rule) or a zero denominator.

Bootstrap over documents: the draws of :func:`metaeval.core.stats.resampling.document_draws` (``default_rng(seed)``, the
same samples as the correlation bootstrap for that seed). A sample's system values are the means over its drawn
documents (a document drawn k times counts k times); a sample in which some system has no drawn document with a
value on either side is discarded (resampling's ``discard-sample``). Each sample recomputes accuracy, acc_eq (with
its own calibrated epsilon under tie calibration) and SPA; the interval is the ``(1 -+ confidence) / 2`` quantiles
(numpy's linear interpolation) of the defined samples. The document-level statistics resample documents the same
way and average over the drawn documents.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import rankdata

from metaeval.core.stats.resampling import align, document_draws, draw_counts, system_scores
from metaeval.core.stats.soft_pairwise import PairedDocuments, permutation_signs

__all__ = [
    "COLUMNS",
    "MIN_PAIRS",
    "Bucket",
    "DocumentValues",
    "PairAgreement",
    "best_epsilon",
    "bucket_agreement",
    "check_edges",
    "item_agreement",
    "item_bootstrap",
    "meta_accuracy_rows",
    "pair_correlations",
    "pairwise_agreement",
    "system_bootstrap",
]

NAN = float("nan")
MIN_PAIRS = 3
TOLERANCE = 1e-12  # acc_eq values this close are equal maxima
_CELLS = 2_000_000  # bounds the [samples, pairs] temporaries
#: the command's and the rows' columns; the first six are fixed by issue 33
COLUMNS = (
    "metric", "human", "pairs", "accuracy", "acc_eq", "epsilon", "level", "bucket_low", "bucket_high", "systems",
    "documents", "compared", "concordant", "discordant", "ties_human", "ties_metric", "ties_both", "spa",
    "accuracy_low", "accuracy_high", "acc_eq_low", "acc_eq_high", "spa_low", "spa_high", "n_valid", "pearson",
    "spearman", "kendall", "dropped", "note",
)


@dataclass(frozen=True)
class PairAgreement:
    """Accuracy and acc_eq of one comparison. Counts are at ``epsilon`` (summed over documents at document level);
    ``compared`` = pairs with a human difference; ``systems``: compared systems; ``documents``: documents averaged
    (0 at system level); ``dropped``: indices of systems left out for a NaN."""

    accuracy: float
    acc_eq: float
    epsilon: float
    pairs: int
    compared: int
    concordant: int
    discordant: int
    ties_human: int
    ties_metric: int
    ties_both: int
    systems: int
    documents: int = 0
    dropped: tuple[int, ...] = ()
    note: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _vector(values: ArrayLike, name: str) -> NDArray[np.float64]:
    array = np.array(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one value per system")
    return array


def _differences(metric: ArrayLike, human: ArrayLike) -> tuple[NDArray, NDArray, NDArray[np.bool_]]:
    """``(dm, dh, kept)`` over the pairs i < j of the systems finite on both sides."""
    m, h = _vector(metric, "metric"), _vector(human, "human")
    if m.shape != h.shape:
        raise ValueError(f"metric and human differ in length ({len(m)} and {len(h)})")
    kept = np.isfinite(m) & np.isfinite(h)
    i, j = np.triu_indices(int(kept.sum()), 1)
    return m[kept][i] - m[kept][j], h[kept][i] - h[kept][j], kept


def _counts(dm: NDArray, dh: NDArray, epsilon: float) -> dict[str, Any]:
    tied_m, tied_h = np.abs(dm) <= epsilon, dh == 0
    same = np.sign(dm) == np.sign(dh)
    untied = ~tied_m & ~tied_h
    return {"pairs": int(dm.size), "compared": int((~tied_h).sum()),
            "concordant": int((untied & same).sum()), "discordant": int((untied & ~same).sum()),
            "ties_human": int((tied_h & ~tied_m).sum()), "ties_metric": int((tied_m & ~tied_h).sum()),
            "ties_both": int((tied_m & tied_h).sum())}


def _terms(dm: NDArray, dh: NDArray) -> tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.bool_]]:
    """``(agree_untied, agree_tied, accurate)``: a pair agrees when the metric does not tie it (same sign, dh != 0),
    when it does (dh == 0), and Kocmi's agreement (dh != 0, same sign of dm; a metric tie disagrees)."""
    untied = (np.sign(dm) == np.sign(dh)) & (dh != 0)
    return untied, dh == 0, untied


def best_epsilon(
    abs_dm: NDArray[np.float64], gain: NDArray[np.float64], base: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Tie calibration of each row: ``(epsilon, value)`` maximising ``value(eps) = base + sum(gain[|dm| <= eps])``
    over eps in {0} and the row's |dm| (NaN = no pair), the smallest eps among equal maxima (within 1e-12).

    With ``base = sum w * agree_untied`` and ``gain = w * (agree_tied - agree_untied)``, value is the w-weighted
    acc_eq (w = 1/pairs at system level, 1/(pairs_d * documents) at document level).
    """
    rows, n = abs_dm.shape
    order = np.argsort(abs_dm, axis=1, kind="stable")  # NaN last
    d = np.take_along_axis(abs_dm, order, axis=1)
    cum = np.zeros((rows, n + 1))
    np.cumsum(np.take_along_axis(gain, order, axis=1), axis=1, out=cum[:, 1:])
    following = np.concatenate([d[:, 1:], np.full((rows, 1), np.nan)], axis=1)
    last_of_value = np.isfinite(d) & (following != d)  # eps = d[k] ties every pair up to k
    at_zero = base + cum[np.arange(rows), (d == 0).sum(axis=1)]
    values = np.concatenate([at_zero[:, None], np.where(last_of_value, base[:, None] + cum[:, 1:], -np.inf)], axis=1)
    candidates = np.concatenate([np.zeros((rows, 1)), d], axis=1)
    best = values.max(axis=1)
    first = np.argmax(values >= best[:, None] - TOLERANCE, axis=1)
    return candidates[np.arange(rows), first], values[np.arange(rows), first]


def _calibrated(dm: NDArray, dh: NDArray, weights: NDArray) -> float:
    untied, tied, _ = _terms(dm, dh)
    w = weights.ravel()
    abs_dm = np.where(w > 0, np.abs(dm).ravel(), np.nan)
    eps, _ = best_epsilon(abs_dm[None], (w * (tied.ravel().astype(float) - untied.ravel()))[None],
                          np.array([float((w * untied.ravel()).sum())]))
    return float(eps[0])


def _check_epsilon(epsilon: float, tie_calibration: bool) -> None:
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0; got {epsilon!r}")
    if tie_calibration and epsilon != 0:
        raise ValueError("give epsilon or tie_calibration, not both")


def pairwise_agreement(
    metric: ArrayLike, human: ArrayLike, *, epsilon: float = 0.0, tie_calibration: bool = False
) -> PairAgreement:
    """System-level accuracy and acc_eq of ``metric`` against ``human`` (one value per system, NaN = missing): see
    the module docstring. ``tie_calibration`` chooses epsilon; otherwise ``epsilon`` (default 0) is used."""
    _check_epsilon(epsilon, tie_calibration)
    dm, dh, kept = _differences(metric, human)
    dropped = tuple(int(k) for k in np.flatnonzero(~kept))
    if tie_calibration and dm.size:
        epsilon = _calibrated(dm, dh, np.full(dm.shape, 1.0 / dm.size))
    counts = _counts(dm, dh, epsilon)
    _, _, accurate = _terms(dm, dh)
    note = ""
    if not dm.size:
        note = f"undefined: {int(kept.sum())} system(s) with both values; at least 2 are needed"
    elif not counts["compared"]:
        note = "accuracy undefined: people tie every pair"
    return PairAgreement(
        accuracy=float(accurate.sum() / counts["compared"]) if counts["compared"] else NAN,
        acc_eq=(counts["concordant"] + counts["ties_both"]) / dm.size if dm.size else NAN,
        epsilon=float(epsilon), systems=int(kept.sum()), dropped=dropped, note=note, **counts,
    )


# ------------------------------------------------------------------------------------------- document level
@dataclass(frozen=True)
class _Items:
    """Per document (rows) and pair i < j (columns): dm, dh, and whether all four values are finite."""

    dm: NDArray[np.float64]
    dh: NDArray[np.float64]
    valid: NDArray[np.bool_]
    systems: int  # systems in at least one valid pair

    @classmethod
    def of(cls, metric: ArrayLike, human: ArrayLike) -> _Items:
        m, h = np.array(metric, dtype=np.float64, ndmin=2), np.array(human, dtype=np.float64, ndmin=2)
        if m.shape != h.shape or m.ndim != 2:
            raise ValueError(f"metric {m.shape} and human {h.shape} must be [systems, documents] of one shape")
        i, j = np.triu_indices(m.shape[0], 1)
        with np.errstate(invalid="ignore"):
            dm, dh = (m[i] - m[j]).T, (h[i] - h[j]).T
        valid = np.isfinite(dm) & np.isfinite(dh)
        present = np.isfinite(m) & np.isfinite(h)
        systems = int(present[:, present.sum(axis=0) >= 2].any(axis=1).sum())
        return cls(np.where(valid, dm, 0.0), np.where(valid, dh, 0.0), valid, systems)

    def per_document(self, epsilon: float) -> tuple[NDArray, NDArray, NDArray, NDArray]:
        """``(accuracy_d, acc_eq_d, has_compared, has_pairs)`` per document (NaN where undefined)."""
        untied, tied, accurate = _terms(self.dm, self.dh)
        pairs = self.valid.sum(axis=1)
        compared = (self.valid & ~tied).sum(axis=1)
        good = self.valid & np.where(np.abs(self.dm) <= epsilon, tied, untied)
        with np.errstate(invalid="ignore", divide="ignore"):
            return ((self.valid & accurate).sum(axis=1) / compared, good.sum(axis=1) / pairs, compared > 0, pairs > 0)

    def weights(self, counts: NDArray[np.float64]) -> NDArray[np.float64]:
        """``[samples, D * P]``: each valid pair's weight in the mean over drawn documents of acc_eq_d."""
        pairs = self.valid.sum(axis=1)
        per_doc = np.where(pairs > 0, 1.0 / np.maximum(pairs, 1), 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = counts * per_doc / (counts @ (pairs > 0).astype(float))[:, None]
        return (scale[:, :, None] * self.valid[None]).reshape(len(counts), -1)


def item_agreement(
    metric: ArrayLike, human: ArrayLike, *, epsilon: float = 0.0, tie_calibration: bool = False
) -> PairAgreement:
    """Document-level ("group-by-item") accuracy and acc_eq of ``metric`` against ``human`` ``[S, D]`` per-document
    values (NaN = missing): the per-document statistics averaged over documents; see the module docstring."""
    _check_epsilon(epsilon, tie_calibration)
    items = _Items.of(metric, human)
    if tie_calibration and items.valid.any():
        epsilon = _calibrated(items.dm, items.dh, items.weights(np.ones((1, items.dm.shape[0])))[0])
    accuracy, acc_eq, has_compared, has_pairs = items.per_document(epsilon)
    totals: dict[str, Any] = dict.fromkeys(
        ("pairs", "compared", "concordant", "discordant", "ties_human", "ties_metric", "ties_both"), 0)
    for row in np.flatnonzero(has_pairs):
        valid = items.valid[row]
        for key, value in _counts(items.dm[row][valid], items.dh[row][valid], epsilon).items():
            totals[key] += value
    note = "" if has_pairs.any() else "undefined: no document has 2 systems with both values"
    return PairAgreement(
        accuracy=float(accuracy[has_compared].mean()) if has_compared.any() else NAN,
        acc_eq=float(acc_eq[has_pairs].mean()) if has_pairs.any() else NAN, epsilon=float(epsilon),
        systems=items.systems, documents=int(has_pairs.sum()), note=note, **totals,
    )


# ------------------------------------------------------------------------------------------------- buckets
def pair_correlations(
    metric: ArrayLike, human: ArrayLike, mask: NDArray[np.bool_] | None = None
) -> dict[str, float]:
    """Pearson, Spearman and Kendall (tau-b) as sums over the pairs i < j of the systems finite on both sides,
    restricted to ``mask`` (all pairs by default; see the module docstring)."""
    dm, dh, kept = _differences(metric, human)
    m, h = _vector(metric, "metric")[kept], _vector(human, "human")[kept]
    i, j = np.triu_indices(len(m), 1)
    rm, rh = rankdata(m), rankdata(h)
    keep = np.ones(dm.shape, dtype=bool) if mask is None else mask
    if keep.sum() < MIN_PAIRS:
        return {"pearson": NAN, "spearman": NAN, "kendall": NAN}

    def ratio(x: NDArray, y: NDArray) -> float:
        den = math.sqrt(float((x * x).sum()) * float((y * y).sum()))
        return float(np.clip((x * y).sum() / den, -1.0, 1.0)) if den > 0 else NAN

    return {
        "pearson": ratio(dm[keep], dh[keep]),
        "spearman": ratio((rm[i] - rm[j])[keep], (rh[i] - rh[j])[keep]),
        "kendall": ratio(np.sign(dm[keep]), np.sign(dh[keep])),
    }


@dataclass(frozen=True)
class Bucket:
    """The pairs with |dh| in [low, high): their agreement (at the given epsilon) and pair correlations."""

    low: float
    high: float
    agreement: PairAgreement
    correlations: dict[str, float]


def check_edges(edges: Sequence[float]) -> list[float]:
    """Bucket edges: at least two, >= 0, strictly increasing, all finite but the last (which may be inf)."""
    out = [float(e) for e in edges]
    if len(out) < 2 or any(e < 0 or math.isnan(e) for e in out) or any(math.isinf(e) for e in out[:-1]):
        raise ValueError(f"bucket edges must be two or more numbers >= 0 (only the last may be inf); got {edges!r}")
    if any(b <= a for a, b in zip(out, out[1:], strict=False)):
        raise ValueError(f"bucket edges must increase strictly; got {edges!r}")
    return out


def bucket_agreement(
    metric: ArrayLike, human: ArrayLike, edges: Sequence[float], *, epsilon: float = 0.0
) -> list[Bucket]:
    """One :class:`Bucket` per ``[edges[k], edges[k + 1])`` of |dh| (Deutsch, Dror and Roth 2022)."""
    edges = check_edges(edges)
    _check_epsilon(epsilon, False)
    dm, dh, kept = _differences(metric, human)
    m, h = _vector(metric, "metric")[kept], _vector(human, "human")[kept]
    i, j = np.triu_indices(len(m), 1)
    out = []
    for low, high in zip(edges, edges[1:], strict=False):
        mask = (np.abs(dh) >= low) & (np.abs(dh) < high)
        counts = _counts(dm[mask], dh[mask], epsilon)
        _, _, accurate = _terms(dm[mask], dh[mask])
        agreement = PairAgreement(
            accuracy=float(accurate.sum() / counts["compared"]) if counts["compared"] else NAN,
            acc_eq=(counts["concordant"] + counts["ties_both"]) / counts["pairs"] if counts["pairs"] else NAN,
            epsilon=float(epsilon), systems=len(set(i[mask]) | set(j[mask])), **counts,
        )
        out.append(Bucket(low, high, agreement, pair_correlations(m, h, mask)))
    return out


# ----------------------------------------------------------------------------------------------- bootstrap
def _quantiles(replicates: NDArray[np.float64], confidence: float) -> tuple[float, float, int]:
    valid = replicates[np.isfinite(replicates)]
    if not len(valid):
        return NAN, NAN, 0
    low, high = np.quantile(valid, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high), len(valid)


def _check_bootstrap(n_boot: int, confidence: float) -> None:
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer; got {n_boot!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}")


def _replicate_agreement(ms: NDArray, hs: NDArray, epsilon: float, tie_calibration: bool) -> tuple[NDArray, NDArray]:
    """accuracy and acc_eq of each row of resampled system values ``[b, S]`` (NaN rows where a value is missing)."""
    i, j = np.triu_indices(ms.shape[1], 1)
    complete = np.isfinite(ms).all(axis=1) & np.isfinite(hs).all(axis=1)
    dm, dh = np.nan_to_num(ms[:, i] - ms[:, j]), np.nan_to_num(hs[:, i] - hs[:, j])
    untied, tied, accurate = _terms(dm, dh)
    compared = (~tied).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(compared > 0, accurate.sum(axis=1) / compared, np.nan)
    if tie_calibration:
        w = 1.0 / len(i)
        _, acc_eq = best_epsilon(np.abs(dm), w * (tied.astype(float) - untied), w * untied.sum(axis=1))
    else:
        acc_eq = np.where(np.abs(dm) <= epsilon, tied, untied).sum(axis=1) / len(i)
    return np.where(complete, accuracy, np.nan), np.where(complete, acc_eq, np.nan)


def system_bootstrap(
    metric: ArrayLike, human: ArrayLike, *, n_boot: int = 1000, seed: int, confidence: float = 0.95,
    epsilon: float = 0.0, tie_calibration: bool = False, n_permutations: int | None = None,
) -> dict[str, tuple[float, float, int]]:
    """Percentile intervals ``{name: (low, high, n_valid)}`` over documents of the system-level ``accuracy``,
    ``acc_eq`` and, with ``n_permutations``, ``spa`` (:mod:`.soft_pairwise`, signs from the first child of
    ``SeedSequence(seed)``), from ``[S, D]`` per-document values whose row means are the system values."""
    _check_bootstrap(n_boot, confidence)
    _check_epsilon(epsilon, tie_calibration)
    m, h = np.array(metric, dtype=np.float64, ndmin=2), np.array(human, dtype=np.float64, ndmin=2)
    n_systems, n_docs = m.shape
    reps = {name: np.full(int(n_boot), np.nan) for name in ("accuracy", "acc_eq", "spa")}
    if n_systems < 2:
        return {name: _quantiles(r, confidence) for name, r in reps.items() if name != "spa" or n_permutations}
    num = [np.nan_to_num(x) for x in (m, h)]
    den = [np.isfinite(x).astype(float) for x in (m, h)]
    paired = PairedDocuments.of(m, h)
    signs, exact = permutation_signs(n_docs, n_permutations or 1, np.random.SeedSequence(seed).spawn(1)[0])
    step = max(1, _CELLS // max(1, n_systems * n_systems))
    for start, cols in document_draws(np.random.default_rng(seed), int(n_boot), n_docs):
        counts = draw_counts(cols, n_docs)
        with np.errstate(invalid="ignore", divide="ignore"):
            ms, hs = ((counts @ n.T) / (counts @ d.T) for n, d in zip(num, den, strict=True))
        for at in range(0, len(cols), step):
            part = slice(start + at, start + min(at + step, len(cols)))
            reps["accuracy"][part], reps["acc_eq"][part] = _replicate_agreement(
                ms[at:at + step], hs[at:at + step], epsilon, tie_calibration)
        if n_permutations:
            part = slice(start, start + len(cols))
            spa = paired.spa(signs, exact, cols)
            reps["spa"][part] = np.where(np.isfinite(reps["acc_eq"][part]), spa, np.nan)  # discard-sample
    names = ("accuracy", "acc_eq", "spa") if n_permutations else ("accuracy", "acc_eq")
    return {name: _quantiles(reps[name], confidence) for name in names}


def item_bootstrap(
    metric: ArrayLike, human: ArrayLike, *, n_boot: int = 1000, seed: int, confidence: float = 0.95,
    epsilon: float = 0.0, tie_calibration: bool = False,
) -> dict[str, tuple[float, float, int]]:
    """Percentile intervals over documents of the document-level ``accuracy`` and ``acc_eq`` (each sample averages
    the per-document values over its drawn documents; under tie calibration it chooses its own epsilon)."""
    _check_bootstrap(n_boot, confidence)
    _check_epsilon(epsilon, tie_calibration)
    items = _Items.of(metric, human)
    n_docs = items.dm.shape[0]
    accuracy_d, acc_eq_d, has_compared, has_pairs = items.per_document(epsilon)
    reps = {name: np.full(int(n_boot), np.nan) for name in ("accuracy", "acc_eq")}
    untied, tied, _ = _terms(items.dm, items.dh)
    abs_dm = np.where(items.valid, np.abs(items.dm), np.nan).ravel()
    order = np.argsort(abs_dm, kind="stable")  # once: best_epsilon's per-row sort then meets sorted rows
    abs_dm = abs_dm[order]
    flat_untied, flat_gain = untied.ravel()[order].astype(float), (tied.astype(float) - untied).ravel()[order]
    step = max(1, _CELLS // max(1, abs_dm.size))
    for start, cols in document_draws(np.random.default_rng(seed), int(n_boot), n_docs):
        counts = draw_counts(cols, n_docs)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps["accuracy"][start:start + len(cols)] = (
                (counts @ np.where(has_compared, accuracy_d, 0.0)) / (counts @ has_compared.astype(float)))
            if not tie_calibration:
                reps["acc_eq"][start:start + len(cols)] = (
                    (counts @ np.where(has_pairs, acc_eq_d, 0.0)) / (counts @ has_pairs.astype(float)))
                continue
        for at in range(0, len(cols), step):
            w = items.weights(counts[at:at + step])[:, order]
            defined = np.isfinite(w).all(axis=1)
            w = np.nan_to_num(w)
            _, value = best_epsilon(np.broadcast_to(abs_dm, w.shape), w * flat_gain, w @ flat_untied)
            reps["acc_eq"][start + at:start + at + len(w)] = np.where(defined, value, np.nan)
    return {name: _quantiles(reps[name], confidence) for name in reps}


# ------------------------------------------------------------------------------------------------ the rows
@dataclass(frozen=True)
class DocumentValues:
    """Per-document values of one measure: ``values[s, d]`` for ``systems[s]`` and ``doc_ids[d]`` (NaN = none)."""

    systems: tuple[str, ...]
    doc_ids: tuple[str, ...]
    values: NDArray[np.float64]

    @classmethod
    def of(cls, cells: Mapping[tuple[str, str], float]) -> DocumentValues:
        """From ``{(system, doc_id): value}``; systems and documents in first-seen order."""
        systems = list(dict.fromkeys(system for system, _ in cells))
        doc_ids = list(dict.fromkeys(doc for _, doc in cells))
        row, col = {s: k for k, s in enumerate(systems)}, {d: k for k, d in enumerate(doc_ids)}
        values = np.full((len(systems), len(doc_ids)), np.nan)
        for (system, doc), value in cells.items():
            values[row[system], col[doc]] = value
        return cls(tuple(systems), tuple(doc_ids), values)


def _aligned(
    systems: Sequence[str], metric: DocumentValues, human: DocumentValues, labels: tuple[str, str],
    expected: tuple[NDArray, NDArray],
) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """The two document matrices on ``systems`` (rows) and the union of their documents; checks that each row's mean
    is the system value the scores give (``expected``)."""
    for label, docs in zip(labels, (metric, human), strict=True):
        missing = [s for s in systems if s not in docs.systems]
        if missing:
            raise ValueError(f"no per-document values of {label} for system(s) {', '.join(missing)}")
    names, doc_ids, (mv, hv), _ = align((metric.systems, metric.doc_ids, metric.values, None),
                                        (human.systems, human.doc_ids, human.values, None))
    rows = [names.index(s) for s in systems]
    out = (mv[rows], hv[rows])
    for label, matrix, want in zip(labels, out, expected, strict=True):
        got = system_scores(matrix)
        bad = [k for k in range(len(systems)) if not math.isclose(got[k], want[k], rel_tol=1e-9, abs_tol=1e-12)]
        if bad:
            k = bad[0]
            raise ValueError(f"the per-document values of {label} do not average to its system value for "
                             f"{systems[k]} ({got[k]!r} against {want[k]!r}): were both files written by one run?")
    return out[0], out[1], len(doc_ids)


def meta_accuracy_rows(
    metric_name: str, human_name: str, metric: Mapping[str, float], human: Mapping[str, float], *,
    metric_documents: DocumentValues | None = None, human_documents: DocumentValues | None = None,
    tie_calibration: bool = False, epsilon: float = 0.0, buckets: Sequence[float] | None = None,
    n_boot: int = 1000, n_permutations: int = 1000, confidence: float = 0.95, seed: int = 0,
) -> list[dict[str, object]]:
    """The rows of one metric against one human measure, each with every key of :data:`COLUMNS` (None where it
    does not apply): the system level (with SPA, and bootstrap intervals when ``n_boot`` > 0, when both
    per-document tables are given), one row per bucket of ``buckets`` edges, and the document level when
    per-document values are given. Systems are those of ``metric`` then ``human`` in first-seen order; one with a
    NaN or no value on either side is ``dropped``. ValueError when the per-document values lack a compared system
    or do not average to its system value."""
    names = list(dict.fromkeys([*metric, *human]))
    m = np.array([metric.get(s, NAN) for s in names], dtype=np.float64)
    h = np.array([human.get(s, NAN) for s in names], dtype=np.float64)
    agreement = pairwise_agreement(m, h, epsilon=epsilon, tie_calibration=tie_calibration)
    kept = [s for k, s in enumerate(names) if k not in set(agreement.dropped)]
    base = {"metric": metric_name, "human": human_name, "dropped": ";".join(names[k] for k in agreement.dropped)}

    def row(level: str, result: PairAgreement, **extra: object) -> dict[str, object]:
        fields = {key: getattr(result, key) for key in ("pairs", "accuracy", "acc_eq", "epsilon", "systems",
                                                        "compared", "concordant", "discordant", "ties_human",
                                                        "ties_metric", "ties_both", "note")}
        return {**base, **fields, "level": level, **extra}

    system_row = row("system", agreement, **pair_correlations(m, h))
    rows = [system_row]
    if buckets is not None:
        for bucket in bucket_agreement(m, h, buckets, epsilon=agreement.epsilon):
            rows.append(row("system", bucket.agreement, bucket_low=bucket.low, bucket_high=bucket.high,
                            **bucket.correlations))
    if metric_documents is None or human_documents is None:
        return [{column: r.get(column) for column in COLUMNS} for r in rows]
    keep = np.isin(names, kept)
    md, hd, n_docs = _aligned(kept, metric_documents, human_documents, (metric_name, human_name),
                              (m[keep], h[keep]))
    system_row["documents"] = n_docs
    if n_boot:
        intervals = system_bootstrap(md, hd, n_boot=n_boot, seed=seed, confidence=confidence, epsilon=epsilon,
                                     tie_calibration=tie_calibration, n_permutations=n_permutations)
        for name, (low, high, _) in intervals.items():
            system_row[f"{name}_low"], system_row[f"{name}_high"] = low, high
        system_row["n_valid"] = intervals["acc_eq"][2]
    signs, exact = permutation_signs(n_docs, n_permutations, np.random.SeedSequence(seed).spawn(1)[0])
    system_row["spa"] = float(PairedDocuments.of(md, hd).spa(signs, exact)[0])
    items = item_agreement(md, hd, epsilon=epsilon, tie_calibration=tie_calibration)
    document_row = row("document", items, documents=items.documents)
    if n_boot:
        intervals = item_bootstrap(md, hd, n_boot=n_boot, seed=seed, confidence=confidence, epsilon=epsilon,
                                   tie_calibration=tie_calibration)
        for name, (low, high, _) in intervals.items():
            document_row[f"{name}_low"], document_row[f"{name}_high"] = low, high
        document_row["n_valid"] = intervals["acc_eq"][2]
    rows.append(document_row)
    return [{column: r.get(column) for column in COLUMNS} for r in rows]
