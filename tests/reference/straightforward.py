"""The straightforward reference: PerSEval computed literally, one pair at a time.

This module is deliberately slow and literal. It follows ``docs/conventions.md`` (sec. 2-7) step by step,
the way the authors' pipeline does it: every distance the pipeline needs is obtained by calling the distance
function once per text pair, in the reference's argument order, and then every quantity (weights, softmax,
X, Y, proportions, DEGRESS, ADP, ACP, EDP, PerSEval) is computed with plain Python loops over dictionaries.
Nothing is cached across calls and nothing is vectorised.

It exists for two reasons:

* as the **oracle** for parity tests of the fast implementation (it was written independently of it, from the
  conventions document alone), and
* as "the straightforward way" in benchmarks (one library call per pair, recomputed per system).

Public functions
----------------
``authors_rouge_l``, ``authors_bleu``, ``authors_rouge_su4``, ``authors_jsd`` and :data:`AUTHORS_DISTANCES`
    the authors' compat-mode distances (sec. 3), one library call per pair.
:func:`reference_scores`
    EGISES / DEGRESS / PerSEval / accuracy per system from a distance function (sec. 4-6).
:func:`reference_details`
    the same computation for one system, returning every intermediate value per document (for debugging and
    hand-checked tests).
:func:`reference_hj_scores`
    the human-judgment variants (sec. 7).
:func:`reference_sampled_scores`, :func:`sample_row_indices`
    the row sampling of the stability study (sec. 8).
:func:`reference_p_acc`
    P-Acc (paper eq. 3).

Interpretations of the conventions that are not spelled out there are marked "Interpretation:" below.
"""
from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metaeval.core.io.corpus import REFERENCE, Corpus, DataError, Missing, RatingTable

Distance = Callable[[str, str], float]

#: epsilon of the pair proportion min/max (sec. 4.4)
PROPORTION_EPSILON = 1e-5
#: epsilon of ADP, ACP and EDP (sec. 6)
PENALTY_EPSILON = 1e-7

NAN = float("nan")

__all__ = [
    "AUTHORS_DISTANCES",
    "PENALTY_EPSILON",
    "PROPORTION_EPSILON",
    "authors_bleu",
    "authors_jsd",
    "authors_rouge_l",
    "authors_rouge_su4",
    "reference_details",
    "reference_hj_scores",
    "reference_p_acc",
    "reference_sampled_scores",
    "reference_scores",
    "sample_row_indices",
]


# ---------------------------------------------------------------------------------------------------------------
# Sec. 3: the authors' distance functions (compat mode), one library call per pair
# ---------------------------------------------------------------------------------------------------------------


def authors_rouge_l(a: str, b: str) -> float:
    """1 - ROUGE-L F1, with F rounded to 5 dp by Python ``round``.

    A new ``RougeScorer(["rougeL"], use_stemmer=True)`` is built on every call, as the authors' code does.
    ``score(a, b)`` takes ``a`` as the target and ``b`` as the prediction; the F-measure is the same either way.
    rouge_score gives F = 0 when either text has no tokens, so empty texts are at distance 1.
    """
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    f_measure = scorer.score(a, b)["rougeL"].fmeasure
    return float(1 - round(f_measure, 5))


def authors_bleu(a: str, b: str) -> float:
    """1 - sentence BLEU-4 (NLTK, no smoothing), reference ``a.split(" ")``, hypothesis ``b.split(" ")``.

    The score is rounded to 5 dp with Python ``round``. NLTK's "0 counts of n-gram overlaps" warnings are
    silenced. Because of NLTK's ``sys.float_info.min`` rule, a text shorter than 4 tokens scores about 1e-154
    even against itself, which rounds to 0: its distance is 1.
    """
    from nltk.translate.bleu_score import sentence_bleu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score = sentence_bleu([a.split(" ")], b.split(" "))
    return float(1 - round(score, 5))


def _contiguous_ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[start : start + n]) for start in range(len(tokens) - n + 1)]


def authors_rouge_su4(a: str, b: str) -> float:
    """1 - F1 of clipped **contiguous 5-gram** matches on ``split(" ")`` tokens, F rounded to 5 dp.

    This is what the authors' ``calculate_rougeSU4`` really computes (sec. 3), not skip-bigram ROUGE-SU4.
    Precision is taken over ``a``'s 5-grams and recall over ``b``'s (the authors call ``a`` the candidate);
    a text with no 5-gram gives 0 for its side, and F = 0 when precision + recall = 0.
    Splitting on a single space keeps empty tokens from doubled, leading or trailing spaces.
    """
    first = a.split(" ")
    second = b.split(" ")
    first_grams = _contiguous_ngrams(first, 5)
    second_grams = _contiguous_ngrams(second, 5)
    matches = sum((Counter(first_grams) & Counter(second_grams)).values())
    precision = matches / len(first_grams) if len(first_grams) > 0 else 0.0
    recall = matches / len(second_grams) if len(second_grams) > 0 else 0.0
    if precision + recall > 0:
        f_measure = 2 * precision * recall / (precision + recall)
    else:
        f_measure = 0.0
    return float(1 - round(f_measure, 5))


def _relative_frequencies(tokens: Sequence[str], vocabulary: Sequence[str]) -> np.ndarray:
    counts = Counter(tokens)
    total = len(tokens)
    distribution = np.zeros(len(vocabulary))
    for index, word in enumerate(vocabulary):
        distribution[index] = counts[word] / total
    return distribution


def authors_jsd(a: str, b: str) -> float:
    """Jensen-Shannon **divergence** in bits (no square root) of the word distributions, rounded to 4 dp.

    P and Q are relative frequencies of ``str.split()`` tokens over the union vocabulary; the two KL terms come
    from ``scipy.stats.entropy(., M, base=2)``; the result is rounded with ``np.round(., 4)``.
    Both texts without tokens: 0.0. Exactly one without tokens: NaN (sec. 3).

    Interpretation: "empty" means no ``split()`` token, so a whitespace-only text is empty. The vocabulary is
    iterated in sorted order (the authors iterate a ``set``, whose order varies between runs; only the
    floating-point summation order inside ``entropy`` depends on it, below the 4 dp rounding).
    """
    from scipy.stats import entropy

    first = a.split()
    second = b.split()
    if not first and not second:
        return 0.0
    if not first or not second:
        return NAN
    vocabulary = sorted(set(first) | set(second))
    p = _relative_frequencies(first, vocabulary)
    q = _relative_frequencies(second, vocabulary)
    m = 0.5 * (p + q)
    kl_p = entropy(p, m, base=2)
    kl_q = entropy(q, m, base=2)
    value = 0.5 * (kl_p + kl_q)
    return float(np.round(value, 4))


#: the authors' distances under their CLI names in ``--compat authors`` mode
AUTHORS_DISTANCES: dict[str, Distance] = {
    "rouge_l": authors_rouge_l,
    "bleu4": authors_bleu,
    "rouge_su4": authors_rouge_su4,
    "jsd": authors_jsd,
}


# ---------------------------------------------------------------------------------------------------------------
# Small literal helpers
# ---------------------------------------------------------------------------------------------------------------


def _nanmean(values: Iterable[float]) -> float:
    """Mean of the non-NaN values; NaN when there are none (pandas ``mean`` semantics)."""
    kept = [float(value) for value in values if not math.isnan(value)]
    if not kept:
        return NAN
    return sum(kept) / len(kept)


def _weight(pair_distance: float, document_distance: float) -> float:
    """w = sigma(pair) / sigma(origin, document); a ``ZeroDivisionError`` gives 0 (sec. 4.2).

    Python float division raises for a zero divisor whatever the numerator (NaN included), which is the
    reference's behaviour with string ids.
    """
    try:
        return float(pair_distance) / float(document_distance)
    except ZeroDivisionError:
        return 0.0


def _proportion(y: float, x: float) -> float:
    """p = (min(Y, X) + 1e-5) / (max(Y, X) + 1e-5) with the builtin min/max, Y first (sec. 4.4).

    ``min(nan, x)`` is NaN but ``min(y, nan)`` is ``y``; a zero denominator gives 0.
    """
    low = min(y, x)
    high = max(y, x)
    numerator = low + PROPORTION_EPSILON
    denominator = high + PROPORTION_EPSILON
    try:
        return numerator / denominator
    except ZeroDivisionError:
        return 0.0


def _shifted_sigmoid(a: float, b: float, x: float) -> float:
    """S_{a,b}(x) = 1 / (1 + 10^a * exp(-10^b * x)), with numpy's exp (overflow gives inf, hence 0)."""
    with np.errstate(all="ignore"):
        return float(1.0 / (1.0 + (10.0**a) * np.exp(np.float64(-(10.0**b) * x))))


def _softmax_side(
    pairs: Sequence[tuple[tuple[str, str], float]],
    document_distances: Mapping[str, float],
    *,
    simplified: bool,
) -> dict[tuple[str, str], float]:
    """X (or Y) for every pair whose origin has a document distance (sec. 4.2-4.3).

    ``pairs`` are ``((j, k), sigma(j, k))`` in their canonical order. For each origin j the softmax runs over
    j's pairs: exp(w_jk) / sum_l exp(w_jl), times sigma(j, k). numpy's exp overflows to inf and inf / inf
    gives NaN; the denominator is a left-to-right sum like the builtin ``sum`` the reference uses.
    With ``simplified`` the raw sigma is returned instead.
    """
    groups: dict[str, list[tuple[str, float]]] = {}
    for (j, k), sigma in pairs:
        if j not in document_distances:
            continue  # the pair is dropped: its (d, j) has no document distance
        groups.setdefault(j, []).append((k, sigma))
    values: dict[tuple[str, str], float] = {}
    with np.errstate(all="ignore"):
        for j, members in groups.items():
            exps = [np.exp(np.float64(_weight(sigma, document_distances[j]))) for _, sigma in members]
            total = np.float64(0.0)
            for value in exps:
                total = total + value
            for (k, sigma), value in zip(members, exps, strict=True):
                if simplified:
                    values[(j, k)] = float(sigma)
                else:
                    values[(j, k)] = float(value / total * np.float64(sigma))
    return values


# ---------------------------------------------------------------------------------------------------------------
# Sec. 4-6: one document of one system, then the system aggregate
# ---------------------------------------------------------------------------------------------------------------


def _document_pipeline(
    *,
    doc_id: str,
    user_pairs: Sequence[tuple[tuple[str, str], float]],
    system_pairs: Sequence[tuple[tuple[str, str], float]],
    user_document: Mapping[str, float],
    system_document: Mapping[str, float],
    accuracy: Mapping[str, float],
    alpha: float,
    beta: float,
    gamma: float,
    delta: float,
    simplified: bool,
) -> dict[str, Any]:
    """Every quantity of one (system, document), as plain dictionaries.

    ``user_pairs``/``system_pairs``: ``((j, k), sigma)`` in row order; ``user_document``/``system_document``:
    sigma(u_j, d) and sigma(s_j, d) for the readers that have one; ``accuracy``: raw sigma(s_j, u_j) (NaN
    allowed) for the readers that have one.
    """
    x_values = _softmax_side(user_pairs, user_document, simplified=simplified)
    y_values = _softmax_side(system_pairs, system_document, simplified=simplified)

    # rows: the system pairs (in their order) that have a Y and also a reader pair X
    rows: list[tuple[str, str, float]] = []
    for (j, k), _ in system_pairs:
        if (j, k) in y_values and (j, k) in x_values:
            rows.append((j, k, _proportion(y_values[(j, k)], x_values[(j, k)])))

    result = _document_from_rows(doc_id=doc_id, rows=rows, accuracy=accuracy, alpha=alpha, beta=beta, gamma=gamma,
                                 delta=delta)
    result["x"] = x_values
    result["y"] = y_values
    return result


def _document_from_rows(
    *,
    doc_id: str,
    rows: Sequence[tuple[str, str, float]],
    accuracy: Mapping[str, float],
    alpha: float,
    beta: float,
    gamma: float,
    delta: float,
) -> dict[str, Any]:
    """Everything downstream of the rows ``(j, k, p_jk)`` of one document (sec. 4.5, 5, 6).

    Split out so that a sample of the rows (sec. 8) goes through exactly the same code.
    """
    rows = list(rows)

    # reader level: DEGRESS_j = NaN-skipping mean of p_jk over j's rows
    proportions_by_reader: dict[str, list[float]] = {}
    for j, _, proportion in rows:
        proportions_by_reader.setdefault(j, []).append(proportion)
    degress_reader = {j: _nanmean(values) for j, values in proportions_by_reader.items()}

    # document level (sec. 5): NaN-skipping mean over ROWS of DEGRESS_{j(row)} (row-weighted)
    document_degress = _nanmean(degress_reader[j] for j, _, _ in rows)

    # accuracy (sec. 6): NaN becomes 1.0
    accuracy_used = {reader: (1.0 if math.isnan(value) else float(value)) for reader, value in accuracy.items()}
    perseval_readers = list(degress_reader)  # first elements of rows, in order of appearance
    egises_readers: list[str] = []
    for j, k, _ in rows:
        for reader in (j, k):
            if reader not in egises_readers:
                egises_readers.append(reader)

    result: dict[str, Any] = {
        "doc_id": doc_id,
        "rows": rows,
        "accuracy_raw": dict(accuracy),
        "degress_reader": degress_reader,
        "degress": document_degress,
        "accuracy": {reader: accuracy_used[reader] for reader in perseval_readers if reader in accuracy_used},
        "perseval_readers": perseval_readers,
        "egises_accuracy": [accuracy_used[reader] for reader in egises_readers if reader in accuracy_used],
    }

    # EDP over the PerSEval readers (sec. 6)
    reader_accuracy = [accuracy_used[reader] for reader in perseval_readers if reader in accuracy_used]
    if not reader_accuracy:
        result.update(d_min=NAN, d_mean=NAN, adp=NAN, acp={}, edp={}, perseval_reader={}, perseval=NAN)
        return result
    d_min = min(reader_accuracy)
    d_mean = sum(reader_accuracy) / len(reader_accuracy)
    adp = _shifted_sigmoid(gamma, delta, (d_min - 0) / ((1 - d_min) + PENALTY_EPSILON))
    acp: dict[str, float] = {}
    edp: dict[str, float] = {}
    perseval_reader: dict[str, float] = {}
    for reader in perseval_readers:
        if reader not in accuracy_used:
            continue  # Interpretation: a reader without an accuracy distance has no EDP (HJ only)
        a_j = accuracy_used[reader]
        acp[reader] = _shifted_sigmoid(gamma, delta, (a_j - d_min) / ((d_mean - d_min) + PENALTY_EPSILON))
        dgp = adp + acp[reader]
        edp[reader] = (1 - _shifted_sigmoid(alpha, beta, dgp)) + PENALTY_EPSILON
        perseval_reader[reader] = degress_reader[reader] * edp[reader]
    result.update(
        d_min=d_min,
        d_mean=d_mean,
        adp=adp,
        acp=acp,
        edp=edp,
        perseval_reader=perseval_reader,
        perseval=_nanmean(perseval_reader.values()),
    )
    return result


def _system_aggregate(documents: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """System values from the per-document results (sec. 5-6): NaN-skipping means, pooled accuracies.

    Only documents with at least one row count. Interpretation: the pooled accuracies include the readers of a
    document whose DEGRESS is NaN (they are still first elements of rows).
    """
    counted = [document for document in documents if document["rows"]]
    degress = _nanmean(document["degress"] for document in counted)
    perseval = _nanmean(document["perseval"] for document in counted)
    pooled = [value for document in counted for value in document["accuracy"].values()]
    pooled_egises = [value for document in counted for value in document["egises_accuracy"]]
    return {
        "egises": 1 - degress,
        "degress": degress,
        "perseval": perseval,
        "accuracy": sum(pooled) / len(pooled) if pooled else NAN,
        "egises_accuracy": sum(pooled_egises) / len(pooled_egises) if pooled_egises else NAN,
    }


# ---------------------------------------------------------------------------------------------------------------
# The distance path
# ---------------------------------------------------------------------------------------------------------------


def _distance_documents(
    corpus: Corpus,
    distance: Distance,
    system: str,
    *,
    missing: Missing,
    alpha: float,
    beta: float,
    gamma: float,
    delta: float,
    simplified: bool,
) -> list[dict[str, Any]]:
    """Per-document results of one system, every distance obtained by one ``distance(a, b)`` call."""
    results = []
    for document in corpus.documents:
        readers = document.readers_for(system, missing)
        if len(readers) < 2:
            continue  # a single-reader document has no pair: absent everywhere (sec. 5)
        text = document.text
        user = {reader: document.summary(reader, REFERENCE) for reader in readers}
        generated = {reader: document.summary(reader, system) for reader in readers}

        # sigma(summary, document)
        user_document = {reader: float(distance(user[reader], text)) for reader in readers}
        system_document = {reader: float(distance(generated[reader], text)) for reader in readers}
        # sigma(summary_j, summary_k) over itertools.permutations of the kept readers
        user_pairs = [((j, k), float(distance(user[j], user[k]))) for j, k in itertools.permutations(readers, 2)]
        system_pairs = [
            ((j, k), float(distance(generated[j], generated[k]))) for j, k in itertools.permutations(readers, 2)
        ]
        # sigma(system summary_j, user summary_j)
        accuracy = {reader: float(distance(generated[reader], user[reader])) for reader in readers}

        results.append(
            _document_pipeline(
                doc_id=document.doc_id,
                user_pairs=user_pairs,
                system_pairs=system_pairs,
                user_document=user_document,
                system_document=system_document,
                accuracy=accuracy,
                alpha=alpha,
                beta=beta,
                gamma=gamma,
                delta=delta,
                simplified=simplified,
            )
        )
    return results


def reference_scores(
    corpus: Corpus,
    distance: Distance,
    *,
    systems: Sequence[str] | None = None,
    missing: Missing = "error",
    alpha: float = 3.0,
    beta: float = 1.0,
    gamma: float = 4.0,
    delta: float = 1.0,
    simplified: bool = False,
) -> dict[str, dict[str, float]]:
    """EGISES, DEGRESS, PerSEval and accuracy per system, computed literally (sec. 2-6).

    ``distance(a, b)`` is called once per pair the pipeline needs, per system (nothing cached): sigma(summary,
    document text) for every kept reader's user and system summary, sigma(summary_j, summary_k) over
    ``itertools.permutations`` of the kept readers (user and system side), and sigma(system summary_j, user
    summary_j). ``systems`` defaults to ``corpus.systems``; ``missing`` is as in :meth:`Document.readers_for`.
    ``alpha``/``beta`` shape EDP, ``gamma``/``delta`` shape ADP and ACP. ``simplified`` is the reference's
    ``simplified_flag`` (raw sigma instead of X and Y).

    Returns ``{system: {"egises", "degress", "perseval", "accuracy", "egises_accuracy"}}``; a system without
    any document of at least two readers gets NaN everywhere.
    """
    chosen = list(corpus.systems) if systems is None else list(systems)
    scores: dict[str, dict[str, float]] = {}
    for system in chosen:
        documents = _distance_documents(
            corpus,
            distance,
            system,
            missing=missing,
            alpha=alpha,
            beta=beta,
            gamma=gamma,
            delta=delta,
            simplified=simplified,
        )
        scores[system] = _system_aggregate(documents)
    return scores


def reference_details(
    corpus: Corpus,
    distance: Distance,
    system: str,
    *,
    missing: Missing = "error",
    alpha: float = 3.0,
    beta: float = 1.0,
    gamma: float = 4.0,
    delta: float = 1.0,
    simplified: bool = False,
) -> dict[str, Any]:
    """Everything :func:`reference_scores` computes for one system, intermediate values included.

    Returns ``{"documents": [...], "system": {...}}``; each document entry holds ``x``, ``y`` (per ordered
    pair), ``rows`` (``(j, k, p_jk)``), ``degress_reader``, ``degress``, ``accuracy`` (after NaN -> 1.0),
    ``d_min``, ``d_mean``, ``adp``, ``acp``, ``edp``, ``perseval_reader`` and ``perseval``.
    """
    documents = _distance_documents(
        corpus,
        distance,
        system,
        missing=missing,
        alpha=alpha,
        beta=beta,
        gamma=gamma,
        delta=delta,
        simplified=simplified,
    )
    return {"documents": documents, "system": _system_aggregate(documents)}


# ---------------------------------------------------------------------------------------------------------------
# Sec. 8: row sampling
# ---------------------------------------------------------------------------------------------------------------


def sample_row_indices(n_rows: int, percentage: float, seed: int) -> list[int]:
    """The seeded equivalent of ``DataFrame.sample(frac=percentage/100)`` on ``n_rows`` rows (sec. 8).

    ``numpy.random.RandomState(seed).choice(n_rows, round(percentage/100 * n_rows), replace=False)``, with
    Python's ``round`` as pandas uses it. The indices come back in draw order.
    """
    state = np.random.RandomState(seed)
    size = round(percentage / 100 * n_rows)
    return [int(index) for index in state.choice(n_rows, size, replace=False)]


def reference_sampled_scores(
    corpus: Corpus,
    distance: Distance,
    percentage: float,
    *,
    seed: int | None = None,
    draw: Callable[[str, str, int], Sequence[int]] | None = None,
    systems: Sequence[str] | None = None,
    missing: Missing = "error",
    alpha: float = 3.0,
    beta: float = 1.0,
    gamma: float = 4.0,
    delta: float = 1.0,
    simplified: bool = False,
) -> dict[str, dict[str, Any]]:
    """EGISES / PerSEval on a sample of the rows, as the reference's stability loop draws it (sec. 8).

    X, Y and the proportions are computed on the full data; then the rows (ordered pairs) of all documents, in
    their canonical order (documents in file order, pairs in ``itertools.permutations`` order), are sampled
    without replacement, separately for EGISES and for PerSEval, and everything downstream of the rows
    (DEGRESS_j, document values, the PerSEval readers and EDP's d_min / d_mean, the pooled accuracies) is
    recomputed on the sample by the same code as the full computation.

    The draw is ``draw(system, which, n_rows)`` with ``which`` in ``("egises", "perseval")``, returning row
    indices; by default :func:`sample_row_indices` with ``seed``, from a fresh ``RandomState(seed)`` for each
    draw. Interpretation: the conventions do not say how the two draws share a seed; with the default both see
    the same rows. Pass ``draw`` to reproduce any other convention (or to feed two implementations the same
    rows). At 100 % the draw is a permutation and the result equals :func:`reference_scores` up to summation
    order.

    Returns per system the keys of :func:`reference_scores` (``egises``, ``degress``, ``egises_accuracy`` from
    the EGISES draw; ``perseval``, ``accuracy`` from the PerSEval draw) plus ``seed``, ``percentage``,
    ``rows`` (rows before sampling), ``egises_rows`` and ``perseval_rows`` (rows drawn).
    """
    if draw is None:
        if seed is None:
            raise ValueError("reference_sampled_scores needs a seed (or a draw function)")

        def draw(system: str, which: str, n_rows: int) -> Sequence[int]:
            return sample_row_indices(n_rows, percentage, seed)

    chosen = list(corpus.systems) if systems is None else list(systems)
    scores: dict[str, dict[str, Any]] = {}
    for system in chosen:
        documents = _distance_documents(
            corpus,
            distance,
            system,
            missing=missing,
            alpha=alpha,
            beta=beta,
            gamma=gamma,
            delta=delta,
            simplified=simplified,
        )
        canonical = [(index, row) for index, document in enumerate(documents) for row in document["rows"]]

        def recompute(
            which: str,
            system: str = system,
            canonical: list[tuple[int, Any]] = canonical,
            documents: list[dict[str, Any]] = documents,
        ) -> tuple[list[dict[str, Any]], int]:
            picked = sorted(int(i) for i in draw(system, which, len(canonical)))
            kept: dict[int, list[tuple[str, str, float]]] = {}
            for position in picked:
                index, row = canonical[position]
                kept.setdefault(index, []).append(row)
            sampled = [
                _document_from_rows(
                    doc_id=documents[index]["doc_id"],
                    rows=rows,
                    accuracy=documents[index]["accuracy_raw"],
                    alpha=alpha,
                    beta=beta,
                    gamma=gamma,
                    delta=delta,
                )
                for index, rows in sorted(kept.items())
            ]
            return sampled, len(picked)

        egises_documents, egises_count = recompute("egises")
        perseval_documents, perseval_count = recompute("perseval")
        egises_part = _system_aggregate(egises_documents)
        perseval_part = _system_aggregate(perseval_documents)
        scores[system] = {
            "egises": egises_part["egises"],
            "degress": egises_part["degress"],
            "perseval": perseval_part["perseval"],
            "accuracy": perseval_part["accuracy"],
            "egises_accuracy": egises_part["egises_accuracy"],
            "seed": seed,
            "percentage": percentage,
            "rows": len(canonical),
            "egises_rows": egises_count,
            "perseval_rows": perseval_count,
        }
    return scores


# ---------------------------------------------------------------------------------------------------------------
# Sec. 7: PerSEval-HJ
# ---------------------------------------------------------------------------------------------------------------

#: why a rated system pair did not become a row
SKIP_NO_DOCUMENT_DISTANCE = "no_document_distance"  # the dataset has no system summary for the origin reader
SKIP_NO_USER_PAIR = "no_user_pair"  # the same ordered pair has no "user" rating
SKIP_USER_NO_DOCUMENT_DISTANCE = "user_pair_no_document_distance"  # the dataset has no user summary for j


def _rating_distance(rating: float, *, compat: bool, scale: tuple[float, float]) -> float:
    if compat:
        return round(1 - (int(rating) - 1) / 5, 5)
    low, high = scale
    return (high - rating) / (high - low)


def reference_hj_scores(
    corpus: Corpus,
    ratings: RatingTable,
    aux_distance: Distance,
    *,
    systems: Sequence[str] | None = None,
    compat: bool = True,
    alpha: float = 3.0,
    beta: float = 1.0,
    gamma: float = 4.0,
    delta: float = 1.0,
    scale: tuple[float, float] | None = None,
    simplified: bool = False,
) -> dict[str, dict[str, Any]]:
    """DEGRESS-HJ, EGISES-HJ and PerSEval-HJ-X per system, computed literally (sec. 7).

    Ratings become distances: with ``compat`` (the authors' way) round(1 - (int(r) - 1)/5, 5), used for the
    ordered pair exactly as stored; otherwise (r_max - r)/(r_max - r_min) unrounded, counted for both (j, k)
    and (k, j). ``scale`` is (r_min, r_max), by default the table's ``scale_min``/``scale_max`` (1..6).
    Distances are averaged per (doc, system, uid1, uid2). ``system="user"`` pairs play sigma(u_j, u_k), the
    system's pairs sigma(s_j, s_k); sigma(., d) and the accuracy sigma(s_j, u_j) come from ``aux_distance``
    on the dataset texts, one call per (document, reader, side). Pairs are ordered by (doc, uid1, uid2).
    ``systems`` defaults to every rated system other than ``"user"``, sorted.

    Raises :class:`DataError` naming document and reader when a rated uid (uid1 or uid2) is not a reader of
    that document in the dataset, or naming the document when it is not in the dataset.

    Returns ``{system: {"egises", "degress", "perseval", "accuracy", "egises_accuracy", "rows", "skipped"}}``
    where ``rows`` counts the rows used and ``skipped`` maps a reason to the number of rated (averaged, ordered)
    system pairs left out for it: ``"no_user_pair"`` (that ordered pair has no ``"user"`` rating),
    ``"user_pair_no_document_distance"`` (it has, but the dataset has no user summary for the origin, so the
    user pair has no document distance), ``"no_document_distance"`` (the dataset has no summary of this
    system for the origin reader).
    """
    if scale is None:
        scale = (ratings.scale_min, ratings.scale_max)
    chosen = ratings.systems if systems is None else list(systems)
    documents = corpus.by_id()

    # 1. check the ids and turn ratings into (averaged) distances
    wanted = set(chosen) | {REFERENCE}
    collected: dict[tuple[str, str, str, str], list[float]] = {}
    for rating in ratings.rows:
        system = str(rating.system)
        if system not in wanted:
            continue
        doc_id, uid1, uid2 = str(rating.doc_id), str(rating.uid1), str(rating.uid2)
        document = documents.get(doc_id)
        where = f" (ratings line {rating.line})" if rating.line else ""
        if document is None:
            raise DataError(f'document "{doc_id}"{where}: rated but not in the dataset')
        for uid in (uid1, uid2):
            if uid not in document.summaries:
                raise DataError(f'document "{doc_id}", reader "{uid}"{where}: rated but not in the dataset')
        value = _rating_distance(rating.rating, compat=compat, scale=scale)
        orders = [(uid1, uid2)] if compat else list(dict.fromkeys([(uid1, uid2), (uid2, uid1)]))
        for first, second in orders:
            collected.setdefault((doc_id, system, first, second), []).append(value)
    averaged = {key: sum(values) / len(values) for key, values in collected.items()}

    def pairs_of(system: str) -> dict[str, list[tuple[tuple[str, str], float]]]:
        """The averaged pairs of ``system`` per document, each list sorted by (uid1, uid2)."""
        by_document: dict[str, list[tuple[tuple[str, str], float]]] = {}
        for (doc_id, name, uid1, uid2), value in sorted(averaged.items()):
            if name == system:
                by_document.setdefault(doc_id, []).append(((uid1, uid2), value))
        return by_document

    user_pairs_by_document = pairs_of(REFERENCE)

    scores: dict[str, dict[str, Any]] = {}
    for system in chosen:
        system_pairs_by_document = pairs_of(system)
        results = []
        skipped = {SKIP_NO_USER_PAIR: 0, SKIP_USER_NO_DOCUMENT_DISTANCE: 0, SKIP_NO_DOCUMENT_DISTANCE: 0}
        for doc_id in sorted(system_pairs_by_document):
            document = documents[doc_id]
            text = document.text
            system_pairs = system_pairs_by_document[doc_id]
            user_pairs = user_pairs_by_document.get(doc_id, [])

            # borrowed sigma(., d) from the auxiliary measure, for the origins that have the text
            user_document: dict[str, float] = {}
            for (j, _), _ in user_pairs:
                summary = document.summary(j, REFERENCE)
                if j not in user_document and summary is not None:
                    user_document[j] = float(aux_distance(summary, text))
            system_document: dict[str, float] = {}
            for (j, _), _ in system_pairs:
                summary = document.summary(j, system)
                if j not in system_document and summary is not None:
                    system_document[j] = float(aux_distance(summary, text))

            # why a system pair does not become a row
            rated_user = {pair for pair, _ in user_pairs}
            for (j, k), _ in system_pairs:
                if j not in system_document:
                    skipped[SKIP_NO_DOCUMENT_DISTANCE] += 1
                elif (j, k) not in rated_user:
                    skipped[SKIP_NO_USER_PAIR] += 1
                elif j not in user_document:
                    skipped[SKIP_USER_NO_DOCUMENT_DISTANCE] += 1

            # borrowed accuracy sigma(s_j, u_j) for every reader that can appear in a row
            accuracy: dict[str, float] = {}
            for (j, k), _ in system_pairs:
                for reader in (j, k):
                    if reader in accuracy:
                        continue
                    generated = document.summary(reader, system)
                    own = document.summary(reader, REFERENCE)
                    if generated is not None and own is not None:
                        accuracy[reader] = float(aux_distance(generated, own))

            results.append(
                _document_pipeline(
                    doc_id=doc_id,
                    user_pairs=user_pairs,
                    system_pairs=system_pairs,
                    user_document=user_document,
                    system_document=system_document,
                    accuracy=accuracy,
                    alpha=alpha,
                    beta=beta,
                    gamma=gamma,
                    delta=delta,
                    simplified=simplified,
                )
            )
        entry: dict[str, Any] = dict(_system_aggregate(results))
        entry["rows"] = sum(len(result["rows"]) for result in results)
        entry["skipped"] = skipped
        scores[system] = entry
    return scores


# ---------------------------------------------------------------------------------------------------------------
# Paper eq. 3: P-Acc
# ---------------------------------------------------------------------------------------------------------------


def reference_p_acc(accuracy_distance: float, egises: float, alpha: float = 0.5, beta: float = 1.0) -> float:
    """P-Acc (paper eq. 3): Score_Acc * (1 - alpha * f_sig(beta * EGISES) / Score_Acc).

    Interpretation: Score_Acc = 1 - ``accuracy_distance`` (the system's mean sigma(s_j, u_j), e.g. the
    ``accuracy`` of :func:`reference_scores`), f_sig is the logistic sigmoid 1 / (1 + exp(-x)), and EGISES is
    the system EGISES (lower = better personalised). The product form equals Score_Acc - alpha * f_sig(beta *
    EGISES), which the paper uses in its proofs; at Score_Acc = 0 the product form is 0 * (-inf), so that limit
    value Score_Acc - alpha * f_sig(...) is returned instead. The paper's own examples agree with this reading
    (alpha = 0.5, beta = 1, EGISES = 0.9, Score_Acc = 0.35 gives a negative P-Acc; Score_Acc = 0 with EGISES = 1
    gives -0.37).
    """
    score_acc = 1.0 - float(accuracy_distance)
    with np.errstate(all="ignore"):
        f_sig = float(1.0 / (1.0 + np.exp(np.float64(-beta * float(egises)))))
    if score_acc == 0:
        return score_acc - alpha * f_sig
    return score_acc * (1 - alpha * (f_sig / score_acc))
