"""Summary quality from pairwise sentence preferences (Zopf, "Estimating Summary Quality with Pairwise
Preferences"; docs/conventions.md sec. 18).

The items of a topic are its source sentences S* (in a fixed order, index 0..n-1). A judgment ``(i, j)`` says
sentence i was preferred to sentence j ("holds more important information").

* **Similarity** (sec. 4.1): sim(x, y) = (cos(tfidf(x), tfidf(y)) + Jaccard(tokens(x), tokens(y))) / 2. Tokens:
  lower-cased runs of word characters (regex ``\\w+``). TF-IDF: scikit-learn's ``TfidfVectorizer`` with that
  tokenisation, fitted on S* only (raw term counts, smoothed idf = ln((1 + n) / (1 + df)) + 1, rows L2-normalised;
  a word outside S* has no TF-IDF weight). Jaccard over the sets of tokens; a text without tokens has cosine 0 and
  Jaccard 0 with everything.
* **Comparison matrix** (sec. 4.1): smoothed, for each judgment a > b, M += outer(a_hat, b_hat) with a_hat_i =
  sim(a, s_i), then the diagonal is zeroed; raw (option): M[a, b] += 1.
* **Bradley-Terry** (sec. 4.2, eq. 2-3 with the printed update corrected): v_i <- W_i / sum_{j != i} N_ij /
  (v_i + v_j), W_i = sum_j M_ij, N_ij = M_ij + M_ji; start uniform, renormalise to sum 1 after each iteration,
  stop when max |dv| < 1e-10 or after 10,000 iterations. An item never compared (N_i = 0) gets ``alpha`` (0.01) as
  a comparison won and lost against every other item, so it has a defined strength; the items so treated are
  recorded.
* **Summary utility** (sec. 4.2.1, eq. 4-5): u(s) = sum_i w_i * v_red(s_i_hat), s_i_hat = the sentence of S* most
  similar to summary sentence s_i (the first on ties), w_i = characters of s_i / characters of all summary
  sentences, v_red = v(s_i_hat) * (1 / B_i) * sum over the distinct token bigrams g of s_i of count(g, s_i) /
  count(g, s), B_i = the number of distinct bigrams of s_i (factor 1 without a bigram). Each bigram's share of its
  occurrences in the summary that lie in s_i, averaged: a sentence repeated verbatim halves.
* **Agreement** (sec. 3, eq. 1): over the pairs of summaries with different human scores, the share the metric
  orders the same way, a metric tie counting 0.5; macro-averaged over topics with at least one such pair.
* **Simulated labels** (sec. 4.3, eq. 6): w(s) = max similarity of s to a reference-summary sentence; a > b iff
  w(a) > w(b); a tie is skipped (option literal: the paper's "a win of b otherwise").
* **Sentences**: NLTK's Punkt (``punkt_tab`` data) when installed; otherwise input must be pre-split, one
  sentence per list entry (:func:`split_sentences` raises :class:`SentenceSplitterUnavailable`).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from metaeval.core.pairwise.zopf_params import ALPHA, MAX_ITERATIONS, TOLERANCE

__all__ = [
    "ALPHA",
    "BTFit",
    "SentenceSplitterUnavailable",
    "agreement",
    "bradley_terry",
    "comparison_matrix",
    "macro_agreement",
    "punkt_available",
    "redundancy_factors",
    "reference_weights",
    "sample_pairs",
    "similarity",
    "simulated_judgments",
    "split_sentences",
    "summary_utility",
    "tokens",
]

TOKEN = re.compile(r"\w+")
PUNKT = "tokenizers/punkt_tab"


class SentenceSplitterUnavailable(Exception):
    """NLTK's Punkt data is not installed: give sentences pre-split."""


def tokens(text: str) -> list[str]:
    """Lower-cased runs of word characters."""
    return TOKEN.findall(text.lower())


def similarity(rows: Sequence[str], columns: Sequence[str], items: Sequence[str]) -> np.ndarray:
    """``sim[r, c]`` between ``rows[r]`` and ``columns[c]``, TF-IDF fitted on ``items`` (S*)."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    tfidf = TfidfVectorizer(tokenizer=tokens, lowercase=False, token_pattern=None)
    tfidf.fit(items)
    cosine = (tfidf.transform(rows) @ tfidf.transform(columns).T).toarray()
    counts = CountVectorizer(tokenizer=tokens, lowercase=False, token_pattern=None, binary=True)
    try:
        counts.fit([*rows, *columns])
    except ValueError:  # no token in any text
        return cosine / 2
    row_sets, column_sets = counts.transform(rows), counts.transform(columns)
    shared = (row_sets @ column_sets.T).toarray().astype(float)
    union = np.asarray(row_sets.sum(axis=1)) + np.asarray(column_sets.sum(axis=1)).T - shared
    jaccard = np.divide(shared, union, out=np.zeros_like(shared), where=union > 0)
    return (cosine + jaccard) / 2


def comparison_matrix(
    judgments: Iterable[tuple[int, int]], n_items: int, sim: np.ndarray | None = None
) -> np.ndarray:
    """M from (winner, loser) index pairs: smoothed with the item similarity matrix ``sim``, raw without it."""
    matrix = np.zeros((n_items, n_items))
    pairs = list(judgments)
    for winner, loser in pairs:
        if not (0 <= winner < n_items and 0 <= loser < n_items) or winner == loser:
            raise ValueError(f"judgment ({winner}, {loser}): not two different items of 0..{n_items - 1}")
    if not pairs:
        return matrix
    winners = np.array([w for w, _ in pairs])
    losers = np.array([loser for _, loser in pairs])
    if sim is None:
        np.add.at(matrix, (winners, losers), 1.0)
    else:
        matrix = sim[winners].T @ sim[losers]
    np.fill_diagonal(matrix, 0.0)
    return matrix


@dataclass(frozen=True)
class BTFit:
    """Bradley-Terry strengths (summing to 1) and how the fit went."""

    strengths: np.ndarray
    iterations: int
    converged: bool
    alpha: float
    regularised: list[int] = field(default_factory=list)  # items never compared, given alpha


def bradley_terry(
    matrix: np.ndarray, *, alpha: float = ALPHA, tol: float = TOLERANCE, max_iter: int = MAX_ITERATIONS
) -> BTFit:
    """Zermelo's MM fixed point for Bradley-Terry on a matrix of (possibly fractional) win counts M[i, j]."""
    m = np.array(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise ValueError("the comparison matrix must be square and not empty")
    if (m < 0).any() or not np.isfinite(m).all():
        raise ValueError("the comparison matrix must hold finite counts >= 0")
    np.fill_diagonal(m, 0.0)
    n = len(m)
    never = np.flatnonzero((m.sum(axis=0) + m.sum(axis=1)) == 0) if n > 1 else np.array([], dtype=int)
    for item in never:
        m[item, :] += alpha
        m[:, item] += alpha
        m[item, item] = 0.0
    wins = m.sum(axis=1)
    games = m + m.T
    strengths = np.full(n, 1.0 / n)
    iterations, converged = 0, n == 1
    while not converged and iterations < max_iter:
        pair_sums = strengths[:, None] + strengths[None, :]
        rates = np.divide(games, pair_sums, out=np.zeros_like(games), where=games > 0)
        updated = wins / rates.sum(axis=1)
        updated /= updated.sum()
        iterations += 1
        converged = bool(np.max(np.abs(updated - strengths)) < tol)
        strengths = updated
    return BTFit(strengths, iterations, converged, alpha, [int(i) for i in never])


def _bigrams(text: str) -> Counter[tuple[str, str]]:
    words = tokens(text)
    return Counter(zip(words, words[1:], strict=False))


def redundancy_factors(summary: Sequence[str]) -> list[float]:
    """Per summary sentence: (1 / B_i) * sum over its distinct bigrams g of count(g, s_i) / count(g, summary)."""
    per_sentence = [_bigrams(sentence) for sentence in summary]
    total: Counter[tuple[str, str]] = Counter()
    for counts in per_sentence:
        total.update(counts)
    return [
        sum(count / total[gram] for gram, count in counts.items()) / len(counts) if counts else 1.0
        for counts in per_sentence
    ]


def summary_utility(summary: Sequence[str], items: Sequence[str], strengths: np.ndarray) -> float:
    """u(s) = sum_i w_i * v_red(s_i_hat) (eq. 4-5); 0 for a summary without characters."""
    if not summary:
        return 0.0
    lengths = np.array([len(sentence) for sentence in summary], dtype=float)
    if lengths.sum() == 0:
        return 0.0
    nearest = np.argmax(similarity(summary, items, items), axis=1)
    values = np.asarray(strengths)[nearest] * np.array(redundancy_factors(summary))
    return float(np.dot(lengths / lengths.sum(), values))


def agreement(human: Sequence[float], metric: Sequence[float]) -> tuple[float, int]:
    """(share of summary pairs with different human scores that the metric orders the same way, pairs);
    a metric tie counts 0.5; NaN without such a pair."""
    if len(human) != len(metric):
        raise ValueError("human and metric scores differ in length")
    h, m = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    upper = np.triu_indices(len(h), k=1)
    human_sign = np.sign(h[:, None] - h[None, :])[upper]
    metric_sign = np.sign(m[:, None] - m[None, :])[upper]
    counted = human_sign != 0
    if not counted.any():
        return float("nan"), 0
    credit = np.where(metric_sign == 0, 0.5, (metric_sign == human_sign).astype(float))
    return float(credit[counted].mean()), int(counted.sum())


def macro_agreement(per_topic: Iterable[float]) -> float:
    """Mean over the topics whose agreement is defined (NaN when none is)."""
    values = [value for value in per_topic if not np.isnan(value)]
    return float(np.mean(values)) if values else float("nan")


def reference_weights(items: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """w_r(s) = max over the reference-summary sentences t of sim(s, t) (eq. 6)."""
    if not references:
        raise ValueError("no reference sentence")
    return similarity(items, references, items).max(axis=1)


def sample_pairs(n_items: int, count: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """``count`` distinct unordered pairs of 0..n_items-1 (all of them if fewer), each in a random order."""
    first, second = np.triu_indices(n_items, k=1)
    chosen = rng.permutation(len(first))[:count]
    flip = rng.random(len(chosen)) < 0.5
    return [
        (int(second[c]), int(first[c])) if f else (int(first[c]), int(second[c]))
        for c, f in zip(chosen, flip, strict=True)
    ]


def simulated_judgments(
    weights: Sequence[float] | np.ndarray, pairs: Iterable[tuple[int, int]], *, ties: str = "skip"
) -> list[tuple[int, int]]:
    """(winner, loser) for each pair (a, b): a wins iff w(a) > w(b); on a tie skip, or b wins (``literal``)."""
    if ties not in ("skip", "literal"):
        raise ValueError("ties must be 'skip' or 'literal'")
    out: list[tuple[int, int]] = []
    for a, b in pairs:
        if weights[a] > weights[b]:
            out.append((a, b))
        elif weights[a] < weights[b] or ties == "literal":
            out.append((b, a))
    return out


def punkt_available() -> bool:
    """Whether NLTK's ``punkt_tab`` data can be found (no download is ever attempted)."""
    import nltk.data

    try:
        nltk.data.find(PUNKT)
    except LookupError:
        return False
    return True


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` by NLTK's Punkt (English); :class:`SentenceSplitterUnavailable` without its data."""
    if not punkt_available():
        raise SentenceSplitterUnavailable(
            "NLTK's Punkt data (tokenizers/punkt_tab) is not installed: give the sentences pre-split, one per list "
            "entry"
        )
    from nltk.tokenize import sent_tokenize

    return [sentence for sentence in sent_tokenize(text) if sentence.strip()]
