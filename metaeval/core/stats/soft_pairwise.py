"""Soft pairwise accuracy (Thompson, Mathur, Deutsch and Khayrallah, WMT 2024) from one-sided paired permutation
tests over documents (docs/conventions.md sec. 26).

Input: per-document values ``[S, D]`` of the human measure and of the metric over the same systems (rows) and
documents (columns), NaN where a system has no value. For systems i before j (row order) the usable documents are
those where all four values (h_i, h_j, m_i, m_j) are finite, so both sides test the same documents. On each side
the statistic is the summed difference over the usable documents (the mean gives the same p-value: the number of
documents is the same in every permutation)::

    T_ij = sum_d (x_i[d] - x_j[d])          T*_ij = sum_d s_d (x_i[d] - x_j[d]),   s_d in {-1, +1}

(a permutation swaps the two systems' values on the documents where s_d = -1). The one-sided p-value that system i
is better than system j is::

    p_ij = (1 + #{T* >= T}) / (1 + K)       K random sign vectors (the +1 counts the observed assignment)
    p_ij = #{T* >= T} / 2^D                 exact: all 2^D sign vectors, used when 2^D <= K

where ``>=`` allows ``1e-12 * sum_d (|x_i[d]| + |x_j[d]|)`` for rounding. These are the p-values of
``scipy.stats.permutation_test(..., permutation_type="samples", alternative="greater")`` (randomised and exact). The
sign vectors (numpy ``default_rng(seed).integers(0, 2, size=(K, D))``, 0 -> -1) are drawn once and shared by every
pair, by both sides and by every bootstrap sample, as the reference implementation shares its mask
(google-research/mt-metrics-eval, ``pce.compute_pairwise_p_values``). Then::

    SPA = mean over pairs i < j with a usable document of  1 - |p^h_ij - p^m_ij|        (Thompson et al.'s SPA)

The reference differs in three details, each documented in sec. 26: its p-value is ``#{T* >= T} / K`` (no +1, never
exact), it computes in float32 without a tolerance, and it needs complete matrices.

Computation: ``K x D`` signs times the documents' differences, per pair; when no value is missing, the null
statistics come from per-system sums instead (``T*_ij = sum_d s_d x_i[d] - sum_d s_d x_j[d]``, S products instead
of S(S - 1)/2; the same numbers up to rounding, which the tolerance absorbs). A bootstrap sample's tests are the
same computation on its drawn columns, many samples per matrix product.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "RELATIVE_TOLERANCE",
    "PairedDocuments",
    "SoftPairwiseResult",
    "one_sided_p_values",
    "permutation_signs",
    "soft_pairwise_accuracy",
]

Seed = int | np.random.SeedSequence | np.random.Generator | None
#: ``T* >= T - RELATIVE_TOLERANCE * sum_d (|x_i[d]| + |x_j[d]|)`` counts as ``T* >= T``
RELATIVE_TOLERANCE = 1e-12
NAN = float("nan")
_CELLS = 4_000_000  # bounds a chunk's [permutations, pairs, samples] and [pairs, samples, documents] arrays


def permutation_signs(n_docs: int, n_permutations: int, seed: Seed) -> tuple[NDArray[np.float64], bool]:
    """``(signs [K, D], exact)``: every one of the ``2**n_docs`` sign vectors when that is at most
    ``n_permutations`` (``exact``), otherwise ``n_permutations`` random ones (``default_rng(seed)``)."""
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer; got {n_permutations!r}")
    if n_docs < 63 and 2**n_docs <= n_permutations:
        bits = (np.arange(2**n_docs)[:, None] >> np.arange(n_docs)) & 1
        return bits.astype(np.float64) * 2.0 - 1.0, True
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, size=(int(n_permutations), n_docs)).astype(np.float64) * 2.0 - 1.0, False


def _p_from_counts(count: NDArray, k: int, exact: bool) -> NDArray[np.float64]:
    """p from ``#{T* >= T}`` out of ``k`` sign vectors."""
    return count / k if exact else (1.0 + count) / (1.0 + k)


def _p_values(null: NDArray, observed: NDArray, scale: NDArray, exact: bool) -> NDArray[np.float64]:
    """p from the null statistics ``[K, ...]`` and the observed ones ``[...]``."""
    return _p_from_counts((null >= observed - RELATIVE_TOLERANCE * scale).sum(axis=0), null.shape[0], exact)


def one_sided_p_values(
    diffs: NDArray[np.float64], signs: NDArray[np.float64], exact: bool, scale: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """One-sided p-value per row of ``diffs`` ``[..., D]`` (0 = not usable) that the first system is better;
    ``scale`` (default ``sum_d |diffs|``) sets the tolerance."""
    flat = diffs.reshape(-1, diffs.shape[-1])
    size = np.abs(flat).sum(axis=1) if scale is None else scale.reshape(-1)
    return _p_values(signs @ flat.T, flat.sum(axis=1), size, exact).reshape(diffs.shape[:-1])


@dataclass(frozen=True)
class PairedDocuments:
    """Both sides' per-document values ``[S, D]`` over the same systems and documents, and per pair i < j
    (``np.triu_indices`` order) the usable documents ``[P, D]`` (all four values finite)."""

    metric: NDArray[np.float64]
    human: NDArray[np.float64]
    usable: NDArray[np.bool_]

    @classmethod
    def of(cls, metric: ArrayLike, human: ArrayLike) -> PairedDocuments:
        m = np.array(metric, dtype=np.float64, ndmin=2)
        h = np.array(human, dtype=np.float64, ndmin=2)
        if m.shape != h.shape or m.ndim != 2:
            raise ValueError(f"metric {m.shape} and human {h.shape} must be [systems, documents] of one shape")
        present = np.isfinite(m) & np.isfinite(h)
        i, j = np.triu_indices(m.shape[0], 1)
        return cls(m, h, present[i] & present[j])

    def _side(self, values: NDArray, cols: NDArray, signs: NDArray, exact: bool) -> NDArray[np.float64]:
        """p-values ``[P, b]`` of one side for the document sets ``cols`` ``[b, D]``."""
        i, j = np.triu_indices(values.shape[0], 1)
        usable = self.usable[:, cols]  # [P, b, D]
        with np.errstate(invalid="ignore"):
            diffs = np.where(usable, values[i][:, cols] - values[j][:, cols], 0.0)
            scale = np.where(usable, np.abs(values[i][:, cols]) + np.abs(values[j][:, cols]), 0.0).sum(axis=2)
        observed = diffs.sum(axis=2)
        if not self.usable.all():
            null = (signs @ diffs.reshape(-1, diffs.shape[2]).T).reshape(len(signs), *diffs.shape[:2])
            return _p_values(null, observed, scale, exact)
        # per-system sums: S products instead of P; the pairs (a, a+1), ..., (a, S-1) follow one another in
        # np.triu_indices order, so each system's are counted at once (no [K, P, b] array gathered)
        drawn = values[:, cols]  # [S, b, D]
        partial = (signs @ drawn.reshape(-1, drawn.shape[2]).T).reshape(len(signs), *drawn.shape[:2])
        threshold = observed - RELATIVE_TOLERANCE * scale
        count = np.empty(observed.shape, dtype=np.int64)
        start = 0
        for a in range(len(values) - 1):
            stop = start + len(values) - 1 - a
            count[start:stop] = (partial[:, a, None] - partial[:, a + 1:] >= threshold[start:stop]).sum(axis=0)
            start = stop
        return _p_from_counts(count, len(signs), exact)

    def p_values(
        self, signs: NDArray[np.float64], exact: bool, cols: NDArray[np.int64] | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        """``(p_human, p_metric, counted)``, each ``[P, b]``, for the document sets ``cols`` ``[b, D]`` (column
        indices, e.g. a bootstrap's draws; default: the documents once, b = 1). ``counted``: the pair has a usable
        document in that set."""
        if cols is None:
            cols = np.arange(self.usable.shape[1])[None]
        return (self._side(self.human, cols, signs, exact), self._side(self.metric, cols, signs, exact),
                np.asarray(self.usable[:, cols].any(axis=2)))

    def spa(self, signs: NDArray[np.float64], exact: bool, cols: NDArray[np.int64] | None = None,
            ) -> NDArray[np.float64]:
        """SPA of each document set of ``cols`` (default: the documents once): ``[b]``, NaN where no pair
        counts."""
        if cols is None:
            cols = np.arange(self.usable.shape[1])[None]
        out = np.full(len(cols), np.nan)
        pairs, n_docs = self.usable.shape
        step = max(1, _CELLS // max(1, len(signs) * max(pairs, self.metric.shape[0]), pairs * n_docs))
        for start in range(0, len(cols), step):
            p_human, p_metric, counted = self.p_values(signs, exact, cols[start:start + step])
            with np.errstate(invalid="ignore", divide="ignore"):
                out[start:start + len(p_human[0])] = (
                    np.where(counted, 1.0 - np.abs(p_human - p_metric), 0.0).sum(axis=0) / counted.sum(axis=0))
        return out


@dataclass(frozen=True)
class SoftPairwiseResult:
    """SPA over ``pairs`` system pairs (i < j in row order) with a usable document; per pair (``np.triu_indices``
    order, NaN where not counted) the p-values of both sides and the number of usable documents."""

    spa: float
    pairs: int
    p_human: tuple[float, ...]
    p_metric: tuple[float, ...]
    documents: tuple[int, ...]
    n_permutations: int
    exact: bool
    note: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def soft_pairwise_accuracy(
    metric: ArrayLike, human: ArrayLike, *, n_permutations: int = 1000, seed: Seed,
) -> SoftPairwiseResult:
    """Soft pairwise accuracy of ``metric`` against ``human``, both ``[S, D]`` per-document values (NaN = missing)
    over the same systems and documents; see the module docstring."""
    paired = PairedDocuments.of(metric, human)
    signs, exact = permutation_signs(paired.usable.shape[1], n_permutations, seed)
    p_humans, p_metrics, counts = paired.p_values(signs, exact)
    p_human, p_metric, counted = p_humans[:, 0], p_metrics[:, 0], counts[:, 0]
    spa = float(np.mean(1.0 - np.abs(p_human - p_metric)[counted])) if counted.any() else NAN
    left_out = int((~counted).sum())
    note = f"{left_out} pair(s) without a document where both systems have both values" if left_out else ""
    if not counted.any():
        note = "no pair of systems shares a document with values on both sides"
    return SoftPairwiseResult(
        spa=spa, pairs=int(counted.sum()),
        p_human=tuple(float(p) if c else NAN for p, c in zip(p_human, counted, strict=True)),
        p_metric=tuple(float(p) if c else NAN for p, c in zip(p_metric, counted, strict=True)),
        documents=tuple(int(n) for n in paired.usable.sum(axis=1)), n_permutations=int(signs.shape[0]),
        exact=exact, note=note,
    )
