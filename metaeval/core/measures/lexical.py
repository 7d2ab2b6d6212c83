"""Lexical distances: ROUGE-L, ROUGE-SU4 and sentence BLEU (docs/conventions.md sec. 1, 3 and 9.7).

Every measure returns a *distance* ``1 - score`` for each pair ``(a, b)``, smaller = closer. ``a`` is the
reference side (rouge_score's *target*, BLEU's *reference*) and ``b`` the candidate side (*prediction*,
*hypothesis*); the engine passes pairs in the conventions' argument order (sec. 3).

``compat=True`` (``--compat authors``) reproduces the authors' distance functions bit for bit, quirks and rounding
included; ``compat=False`` computes the measures the paper names, unrounded. A batch is scored at once: each
unique text is tokenised once, n-grams are counted with numpy for all texts together, and only the final float
formula runs per pair, with the same operations in the same order as the reference implementation, so results
are identical to calling the library pair by pair.
"""
from __future__ import annotations

import math
import sys
from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

from metaeval.core.measures.base import Measure, round_like_python
from metaeval.core.measures.tokens import Encoded, GramBags, _rouge_parts, rouge_token_lists, unique_texts

__all__ = ["Bleu", "RougeL", "RougeSU4", "SplitSpaceCounts", "split_space_distances"]


def _split_space(text: str) -> list[str]:
    """The authors' ``text.split(" ")``: doubled, leading or trailing spaces give empty tokens."""
    return text.split(" ")


def _f1(matches: np.ndarray, n_candidate: np.ndarray, n_reference: np.ndarray) -> np.ndarray:
    """F1 from integer match counts, as rouge_score's ``fmeasure`` and the authors' rougeSU4 compute it.

    precision = matches / n_candidate, recall = matches / n_reference, F = 2 * precision * recall /
    (precision + recall), and 0.0 when there is no match (then precision + recall is 0, or a side is empty).
    numpy's float64 ``/``, ``*`` and ``+`` are the same correctly rounded IEEE operations as Python's, applied in
    the same order, so the result is bit-identical to the scalar Python formula.
    """
    out = np.zeros(len(matches), dtype=np.float64)
    hit = matches > 0
    if hit.any():
        m = matches[hit]
        precision = m / n_candidate[hit]
        recall = m / n_reference[hit]
        out[hit] = 2.0 * precision * recall / (precision + recall)
    return out


class SplitSpaceCounts:
    """The integer counts BLEU and the authors' ROUGE-SU4 are computed from, for one batch of pairs: the batch's
    unique texts tokenised once (``split``: the authors' ``split(" ")`` by default), ``lengths[t]`` tokens per text,
    and for each n-gram order ``k = 1 .. orders`` in ``needed`` (default: all): ``matches[k-1][i]``, the clipped
    matches of pair ``i`` (``sum over k-grams g of min(count_a(g), count_b(g))``), and ``totals[k-1][t]``, the number
    of k-grams of text ``t`` (empty arrays for the orders not needed). Pair ``i`` is texts ``ia[i]`` and ``ib[i]``."""

    def __init__(self, pairs: Sequence[tuple[str, str]], orders: int,
                 split: Callable[[str], list[str]] | None = None, needed: Collection[int] | None = None) -> None:
        split = split or _split_space
        texts, self.ia, self.ib = unique_texts(pairs)
        enc = Encoded([split(text) for text in texts])
        self.lengths = enc.lengths
        self.matches: list[np.ndarray] = []
        self.totals: list[np.ndarray] = []
        for order, (texts_k, grams, count) in enumerate(enc.ngram_orders(orders), start=1):
            if needed is not None and order not in needed:
                self.matches.append(np.zeros(0, dtype=np.int64))
                self.totals.append(np.zeros(0, dtype=np.int64))
                continue
            bags = GramBags(texts_k, grams, enc.n_texts, dense=count)
            self.matches.append(bags.clipped_matches(self.ia, self.ib))
            self.totals.append(bags.totals)


def split_space_distances(measures: Sequence[Measure], pairs: Sequence[tuple[str, str]]) -> list[np.ndarray]:
    """The distances of several measures whose ``fusion`` is ``"split-space-ngrams"`` (the authors' BLEU and
    ROUGE-SU4) on the same ``pairs``, from one :class:`SplitSpaceCounts` (the texts tokenised and their n-grams
    counted once for all): the same numbers as each measure's own ``distances``."""
    if len(pairs) == 0:
        return [np.zeros(0, dtype=np.float64) for _ in measures]
    chosen: list[Bleu | RougeSU4] = []
    for measure in measures:
        if not isinstance(measure, Bleu | RougeSU4) or measure.fusion != "split-space-ngrams":
            raise ValueError(f"{measure.label} does not count split-space n-grams")
        chosen.append(measure)
    needed = {order for measure in chosen for order in measure.needed_orders}
    counts = SplitSpaceCounts(pairs, max(needed), needed=needed)
    return [measure.from_counts(counts) for measure in chosen]


class RougeL(Measure):
    """``1 - F1`` of ROUGE-L, exactly ``rouge_score.rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    .score(a, b)["rougeL"].fmeasure`` (``a`` = target, ``b`` = prediction).

    Tokens: rouge_score's tokenizer (lower-case, non-``[a-z0-9]`` runs become spaces, Porter stem on words longer
    than 3 characters). LCS = length of the longest common subsequence of the two token sequences (rapidfuzz's
    ``LCSseq``, on integer token ids). precision = LCS / len(b tokens), recall = LCS / len(a tokens), F1 as in
    rouge_score; 0 when either side has no token. compat: ``1 - round(F, 5)`` (Python ``round``); default:
    ``1 - F``.
    """

    name = "rouge_l"
    version = "1"

    def __init__(self, compat: bool = False):
        self.compat = bool(compat)

    @property
    def options(self) -> Mapping[str, object]:
        return {"tokenizer": "rouge_score", "stemmer": "porter"}

    def prepare(self) -> None:
        _rouge_parts()

    def distances(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if len(pairs) == 0:
            return np.zeros(0, dtype=np.float64)
        texts, ia, ib = unique_texts(pairs)
        enc = Encoded(rouge_token_lists(texts))
        lcs = _lcs_lengths(enc, ia, ib)
        f = _f1(lcs, enc.lengths[ib], enc.lengths[ia])
        if self.compat:
            f = round_like_python(f, 5)
        return 1.0 - f


def _lcs_lengths(enc: Encoded, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Length of the longest common subsequence of the token sequences of each pair (exact, int64)."""
    from rapidfuzz.distance import LCSseq
    from rapidfuzz.process import cpdist

    seqs: Sequence[str] | Sequence[list[int]] | None = enc.as_strings()
    if seqs is None:  # more distinct tokens than code points: compare integer lists instead
        seqs = enc.id_lists()
    left = [seqs[i] for i in ia.tolist()]
    right = [seqs[i] for i in ib.tolist()]
    return np.asarray(cpdist(left, right, scorer=LCSseq.similarity, dtype=np.int64, workers=1), dtype=np.int64)


class RougeSU4(Measure):
    """``1 - F1`` of ROUGE-SU4 (default) or of the authors' ``rougeSU4`` (compat).

    **default** -- ROUGE-SU4 as ROUGE-1.5.5 ``-2 4 -U`` (and rouge-metric's ``PyRouge(rouge_su=True,
    skip_gap=4)``) counts it, on rouge_score tokens (as :class:`RougeL`). For tokens ``t_0 .. t_{L-1}`` of one
    text, its bag of grams holds

    * every skip-bigram ``(t_i, t_j)`` with ``1 <= j - i <= 5`` (at most 4 words in between), in order, and
    * every unigram ``t_i`` with ``i <= L - 2``: ROUGE-1.5.5 adds unigrams inside its skip-bigram loop, which stops
      before the last token, so the last token's unigram is never counted (a one-token text has an empty bag).

    matches = sum over grams of min(count in a, count in b) (clipped); precision = matches / |bag of b|,
    recall = matches / |bag of a|, F1 = 2PR / (P + R), 0 when there is no match. Unlike the Perl script this
    uses NLTK's Porter stemmer (rouge_score's), joins all sentences into one token sequence, and does not round
    P and R to 5 decimals before forming F.

    Worked examples (distance = 1 - F1):

    * a = "the cat sat", b = "the cat ran": bags {the cat, the sat, cat sat, the, cat} and
      {the cat, the ran, cat ran, the, cat}, 5 grams each; matches = 3 (the cat, the, cat); P = R = 3/5, F = 0.6.
    * a = "w1 w2 w3 w4 w5 w6 w7", b = "w1 w7": a's bag has 20 skip-bigrams (all 21 pairs but (w1, w7), whose gap
      j - i = 6 is too wide) + 6 unigrams (w1..w6) = 26; b's has (w1, w7) + w1 = 2. matches = 1 (w1);
      P = 1/2, R = 1/26, F = 2 * 1/52 / (14/26) = 1/14.
    * a = b = "cats": one token, empty bags, no match, F = 0, distance 1.

    **compat** -- what the authors' ``calculate_rougeSU4`` computes (sec. 9.7: its loop overwrites the n-gram
    lists, so only the last order, 5, is used): tokens ``split(" ")``; bags of *contiguous 5-grams*;
    matches = clipped 5-gram matches; precision = matches / (number of 5-grams of a) -- ``a`` is the authors'
    "candidate" -- and recall = matches / (number of 5-grams of b), each 0.0 when that number is 0;
    F = (1+1) * P * R / (1 * P + R), 0.0 when P + R = 0; distance ``1 - round(F, 5)`` (Python ``round``).
    """

    name = "rouge_su4"
    version = "1"

    def __init__(self, compat: bool = False):
        self.compat = bool(compat)

    @property
    def options(self) -> Mapping[str, object]:
        if self.compat:
            return {"grams": "contiguous-5", "tokens": "split-space"}
        return {"grams": "skip-bigram+unigram", "max_gap": 4, "tokenizer": "rouge_score", "stemmer": "porter"}

    def prepare(self) -> None:
        if not self.compat:
            _rouge_parts()

    @property
    def fusion(self) -> str:  # type: ignore[override]
        return "split-space-ngrams" if self.compat else ""

    #: the n-gram orders the compat mode counts (:func:`split_space_distances`): only the 5-grams
    needed_orders = (5,)

    def from_counts(self, counts: SplitSpaceCounts) -> np.ndarray:
        """compat distances from the batch's 5-gram counts."""
        matches, totals = counts.matches[4], counts.totals[4]
        # the authors' first argument is the "candidate": precision divides by a's 5-gram count
        f = round_like_python(_f1(matches, totals[counts.ia], totals[counts.ib]), 5)
        return 1.0 - f

    def distances(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if len(pairs) == 0:
            return np.zeros(0, dtype=np.float64)
        if self.compat:
            return self.from_counts(SplitSpaceCounts(pairs, 5, needed=self.needed_orders))
        texts, ia, ib = unique_texts(pairs)
        enc = Encoded(rouge_token_lists(texts))
        bags = GramBags(*enc.skip_bigrams(4, unigrams=True), enc.n_texts)
        matches = bags.clipped_matches(ia, ib)
        f = _f1(matches, bags.totals[ib], bags.totals[ia])
        return 1.0 - f


class Bleu(Measure):
    """``1 - sentence BLEU`` of hypothesis ``b`` against the single reference ``a``, uniform weights ``1/n``
    (``bleu1``: (1,), ``bleu4``: (0.25, 0.25, 0.25, 0.25)), no smoothing.

    Bit-identical to ``nltk.translate.bleu_score.sentence_bleu([a_tokens], b_tokens, weights)`` with NLTK 3.8
    semantics: p_i = clipped i-gram matches / max(1, number of i-grams of b) from integer counts; if the unigram
    numerator is 0 the score is 0; any other zero numerator makes p_i = ``sys.float_info.min``; BP = 1 when
    c > r, else exp(1 - r/c) (c = len(b tokens), r = len(a tokens)); BLEU = BP * exp(math.fsum(w_i * log p_i)).

    compat: tokens ``split(" ")`` (doubled/leading/trailing spaces give empty tokens; "" is one empty token) and
    distance ``1 - round(BLEU, 5)`` (Python ``round``). default: tokens ``str.split()``, unrounded.
    """

    version = "1"

    def __init__(self, n: int = 4, compat: bool = False):
        n = int(n)
        if n < 1:
            raise ValueError("BLEU order n must be >= 1")
        self.n = n
        self.compat = bool(compat)
        self.name = f"bleu{n}"
        self.weights: tuple[float, ...] = (1,) if n == 1 else tuple(1 / n for _ in range(n))

    @property
    def options(self) -> Mapping[str, object]:
        return {"n": self.n, "smoothing": "none", "tokens": "split-space" if self.compat else "whitespace"}

    @property
    def fusion(self) -> str:  # type: ignore[override]
        return "split-space-ngrams" if self.compat else ""

    @property
    def needed_orders(self) -> tuple[int, ...]:
        """The n-gram orders counted (:func:`split_space_distances`): ``1 .. n``."""
        return tuple(range(1, self.n + 1))

    def from_counts(self, counts: SplitSpaceCounts) -> np.ndarray:
        """Distances from the batch's clipped matches of orders ``1 .. n`` and the token counts."""
        lengths = counts.lengths
        scores = _sentence_bleu(counts.matches[: self.n], lengths[counts.ib], lengths[counts.ia], self.weights)
        if self.compat:
            scores = round_like_python(scores, 5)
        return 1.0 - scores

    def distances(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if len(pairs) == 0:
            return np.zeros(0, dtype=np.float64)
        return self.from_counts(SplitSpaceCounts(pairs, self.n, split=_split_space if self.compat else str.split))


def _sentence_bleu(numerators: list[np.ndarray], hyp_len: np.ndarray, ref_len: np.ndarray, weights) -> np.ndarray:
    """NLTK's sentence BLEU float arithmetic from integer clipped match counts (see :class:`Bleu`), taken once per
    distinct combination of counts and lengths (a pure function of them)."""
    if len(hyp_len) == 0:
        return np.zeros(0, dtype=np.float64)
    table = np.stack([*numerators, hyp_len, ref_len], axis=1).astype(np.int64)
    distinct, where = np.unique(table, axis=0, return_inverse=True)
    scores = _sentence_bleu_each([distinct[:, i] for i in range(len(numerators))], distinct[:, -2], distinct[:, -1],
                                 weights)
    return scores[where.reshape(-1)]


def _sentence_bleu_each(numerators: list[np.ndarray], hyp_len: np.ndarray, ref_len: np.ndarray,
                        weights) -> np.ndarray:
    """:func:`_sentence_bleu` pair by pair."""
    log, exp, fsum = math.log, math.exp, math.fsum
    log_min = math.log(sys.float_info.min)
    weights = tuple(weights)
    order = range(len(weights))
    out: list[float] = []
    append = out.append
    per_order = zip(*(x.tolist() for x in numerators), strict=True)
    for c, r, nums in zip(hyp_len.tolist(), ref_len.tolist(), per_order, strict=True):
        if nums[0] == 0:
            append(0.0)
            continue
        terms = [
            weights[i] * log(nums[i] / (c - i if c - i > 1 else 1)) if nums[i] else weights[i] * log_min for i in order
        ]
        bp = 1 if c > r else exp(1 - r / c)
        append(bp * exp(fsum(terms)))
    return np.array(out, dtype=np.float64)
