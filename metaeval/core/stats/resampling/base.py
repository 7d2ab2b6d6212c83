"""What the resampling shares: input checks, the system-level scores of a systems x documents matrix, aligning two
measures, correlations of many rows at once."""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

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
