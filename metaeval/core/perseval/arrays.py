"""The distance path's scoring over numpy arrays: :func:`score_layout` gives the :class:`SystemScore` that
:func:`~metaeval.core.perseval.measure.score_system` gives, bit for bit, without a Python loop per row.

On the distance path every reader of a document has every distance (sec. 2-3), so the rows of a system are known
before any distance is: per document with readers ``r_0 .. r_{n-1}``, the ordered pairs ``(j, k)`` in
``itertools.permutations`` order. A :class:`SystemLayout` holds that structure as index arrays into the run's
unique text pairs, once per run; each measure then only gathers its distances and runs eq. 1-7 on arrays.

Bit-identity with the reference (:mod:`metaeval.core.perseval.measure`, which stays the definition and scores the
human-judgment path) rests on:

* element-wise ``+ - * /`` and comparisons, which numpy rounds as Python does (IEEE double);
* ``exp`` taken with :func:`math.exp` (numpy's own ``exp`` may differ in the last bit), overflow giving ``inf``;
* every sum that the reference runs left to right (each origin's softmax total, the NaN-skipping means) taken by
  :func:`numpy.bincount` with weights, which adds each bin's values in array order starting from 0.0; the sums
  the reference takes with the built-in :func:`sum` (a document's mean accuracy, the pooled accuracy) taken with
  it here too;
* Python's ``round`` for ``egises_decimals`` (:func:`~metaeval.core.measures.base.round_like_python`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from metaeval.core.measures.base import round_like_python
from metaeval.core.perseval.measure import (
    NAN,
    PAIR_EPSILON,
    PENALTY_EPSILON,
    DocumentDetail,
    Params,
    ReaderDetail,
    SystemScore,
    nanmean,
    p_acc,
)


@dataclass(frozen=True)
class SystemLayout:
    """The rows of one system on the distance path, as positions in the run's list of unique text pairs.

    Reader entries (one per reader of each document, documents in plan order, readers in their order) carry
    ``user_doc`` = pair (u_j, d), ``system_doc`` = (s_j, d) and ``accuracy`` = (s_j, u_j); rows (per document
    the permutations of its readers) carry ``row_j``/``row_k`` (their entries) and ``row_user`` = (u_j, u_k),
    ``row_system`` = (s_j, s_k). ``doc_start[i]`` is the first entry of document ``i`` (one more at the end)."""

    doc_ids: list[str]
    readers: list[str]
    doc_start: np.ndarray
    user_doc: np.ndarray
    system_doc: np.ndarray
    accuracy: np.ndarray
    row_j: np.ndarray
    row_k: np.ndarray
    row_user: np.ndarray
    row_system: np.ndarray

    @property
    def entry_doc(self) -> np.ndarray:
        """Per reader entry, the index of its document."""
        return np.repeat(np.arange(len(self.doc_ids), dtype=np.int64), np.diff(self.doc_start))


def exps(values: np.ndarray) -> np.ndarray:
    """``math.exp`` of every element (bit for bit the reference's), ``inf`` where it overflows."""
    listed = values.tolist()
    try:
        return np.fromiter(map(math.exp, listed), dtype=np.float64, count=len(listed))
    except OverflowError:
        return np.array([_exp(value) for value in listed], dtype=np.float64)


def _exp(value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


def _sigmoid(x: np.ndarray, ten_a: float, ten_b: float) -> np.ndarray:
    """S_{a,b}(x) = 1 / (1 + 10^a exp(-10^b x)) element-wise, as the reference's ``_sigmoid_of_powers``."""
    return 1.0 / (1.0 + ten_a * exps(-ten_b * x))


def _group_nanmean(groups: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Per group, the NaN-skipping mean of its values in array order (the reference's ``nanmean``); NaN for a group
    with no value left. Adding 0.0 for a NaN changes no running sum that starts at 0.0."""
    kept = values == values
    totals = np.bincount(groups, weights=np.where(kept, values, 0.0), minlength=size)
    counts = np.bincount(groups, weights=kept.astype(np.float64), minlength=size)
    out = np.full(size, NAN)
    np.divide(totals, counts, out=out, where=counts > 0)
    return out


def _softmax(sigma: np.ndarray, base: np.ndarray, origin: np.ndarray, size: int) -> np.ndarray:
    """X (or Y) of eq. 1 on every row: the reference's ``weighted_softmax`` with every origin present."""
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.where(base == 0.0, 0.0, sigma / np.where(base == 0.0, 1.0, base))
        value = exps(weight)
        totals = np.bincount(origin, weights=value, minlength=size)
        return (value / totals[origin]) * sigma


def score_layout(layout: SystemLayout, distances: np.ndarray, params: Params = Params()) -> SystemScore:
    """:func:`~metaeval.core.perseval.measure.score_system` of one system, from ``distances[i]`` = the distance of
    the run's ``i``-th unique text pair (sec. 4-6, eq. 1-7), every detail included."""
    n_entries = len(layout.readers)
    n_docs = len(layout.doc_ids)
    row_j = layout.row_j
    user_pairs = distances[layout.row_user]
    system_pairs = distances[layout.row_system]
    if params.simplified:
        xs, ys = user_pairs, system_pairs
    else:
        xs = _softmax(user_pairs, distances[layout.user_doc][row_j], row_j, n_entries)
        ys = _softmax(system_pairs, distances[layout.system_doc][row_j], row_j, n_entries)
    if params.egises_decimals:
        xs = round_like_python(xs, params.egises_decimals)
        ys = round_like_python(ys, params.egises_decimals)
    # p = (min(Y, X) + eps) / (max(Y, X) + eps) with Python's min/max, Y first: Y unless X is strictly smaller/greater
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = np.where(xs > ys, xs, ys) + PAIR_EPSILON
        numerator = np.where(xs < ys, xs, ys) + PAIR_EPSILON
        proportions = np.where(denominator == 0.0, 0.0, numerator / np.where(denominator == 0.0, 1.0, denominator))
    entry_doc = layout.entry_doc
    degress_j = _group_nanmean(row_j, proportions, n_entries)
    doc_degress = _group_nanmean(entry_doc[row_j], degress_j[row_j], n_docs)
    degress = nanmean(doc_degress.tolist())

    accuracy = distances[layout.accuracy]
    accuracy = np.where(accuracy != accuracy, 1.0, accuracy)  # sec. 6: NaN is the maximum distance
    listed = accuracy.tolist()
    starts = layout.doc_start.tolist()
    d_min = np.minimum.reduceat(accuracy, layout.doc_start[:-1]) if n_docs else np.zeros(0)
    d_mean = np.array([sum(listed[lo:hi]) / (hi - lo) for lo, hi in zip(starts[:-1], starts[1:], strict=True)],
                      dtype=np.float64)
    eps = PENALTY_EPSILON
    ten_gamma, ten_delta = 10.0**params.gamma, 10.0**params.delta
    adp = _sigmoid((d_min - 0.0) / (1.0 - d_min + eps), ten_gamma, ten_delta)
    spread = (d_mean - d_min) + eps
    acp = _sigmoid((accuracy - d_min[entry_doc]) / spread[entry_doc], ten_gamma, ten_delta)
    edp = 1.0 - _sigmoid(adp[entry_doc] + acp, 10.0**params.alpha, 10.0**params.beta) + eps
    values = degress_j * edp
    doc_perseval = _group_nanmean(entry_doc, values, n_docs)
    perseval = nanmean(doc_perseval.tolist())
    pooled = sum(listed) / len(listed) if listed else NAN

    doc_ids = layout.doc_ids
    readers_per_doc = np.diff(layout.doc_start)
    documents = list(map(
        DocumentDetail, doc_ids, readers_per_doc.tolist(), (readers_per_doc * (readers_per_doc - 1)).tolist(),
        doc_degress.tolist(), adp.tolist(), d_min.tolist(), d_mean.tolist(), doc_perseval.tolist(),
    ))
    entry_doc_ids = [doc_ids[index] for index in entry_doc.tolist()]
    readers = list(map(
        ReaderDetail, entry_doc_ids, layout.readers, degress_j.tolist(), listed, acp.tolist(), edp.tolist(),
        values.tolist(),
    ))
    egises = 1.0 - degress
    if params.egises_decimals:
        egises = round(egises, params.egises_decimals)
    return SystemScore(
        egises=egises,
        degress=degress,
        perseval=perseval,
        accuracy=pooled,
        egises_accuracy=pooled,  # every reader of a row is also a row's j, first seen in the same order (sec. 6)
        p_acc=p_acc(pooled, egises, alpha=params.pacc_alpha, beta=params.pacc_beta),
        documents=n_docs,
        readers=n_entries,
        rows=len(row_j),
        per_document=documents,
        per_reader=readers,
    )
