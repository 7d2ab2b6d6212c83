"""Permutation tests of two automatic measures' correlations with a human one (SacreROUGE's; docs/conventions.md sec.
13)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metaeval.core.perseval.report_options import ALTERNATIVES, RESAMPLES
from metaeval.core.stats.correlation import correlate
from metaeval.core.stats.resampling.base import (
    _CELLS_PER_CHUNK,
    _TIE_TOLERANCE,
    METHODS,
    NAN,
    Alternative,
    Method,
    Resample,
    Seed,
    _check_choice,
    _matrix,
    _num_den,
    _ratio,
    _same_shape,
    _weights,
    batch_correlation,
)


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
