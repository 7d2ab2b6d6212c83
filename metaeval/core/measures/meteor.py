"""METEOR distance: ``1 - METEOR(reference=a, hypothesis=b)``, NLTK's sentence METEOR (conventions sec. 3).

The authors call ``nltk.translate.meteor_score.meteor_score([a.split()], b.split())``: whitespace tokens,
reference = the first text of the pair, hypothesis = the second, NLTK's defaults (``str.lower``, Porter
stemmer, WordNet synonyms, alpha = 0.9, beta = 3, gamma = 0.5). Compat mode rounds the score to 5 dp with
Python's ``round`` before taking ``1 - score``; default mode does not round.

Speed. NLTK's implementation spends its time stemming words and building WordNet synonym sets again for every
pair. This module computes the same numbers with the same algorithm (the equality ``==`` with NLTK 3.10.4's
``meteor_score`` is tested), but memoises what only depends on a word:

* the Porter stem of a word (``PorterStemmer.stem`` is a pure function of the word);
* the synonym set of a word: every lemma name without ``_`` of every synset ``wordnet.synsets(word)``
  returns, plus the word itself. It only depends on the word and on the WordNet data, which do not change
  while the process runs, so the memo is exact (it is keyed to the reader object and rebuilt if that changes);
* the lower-cased tokens of each text and the score of each unique pair within one batch.

The alignment itself (exact, then stem, then synonym matches; NLTK keeps the *stemmed* leftovers for the
synonym stage), the chunk count and the formula ``(1 - gamma * (chunks/m) ** beta) * Fmean`` follow NLTK's
order of floating-point operations, so results are identical, not merely close.

Edge cases, as NLTK: a text with no tokens (empty or only whitespace) or a pair with no matched word scores
0.0, so the distance is 1.0, including for two empty texts. Identical texts do not reach distance 0: the
fragmentation penalty of one chunk remains, e.g. one identical word scores 0.5 (distance 0.5).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from metaeval.core.measures.base import Measure, round_like_python

__all__ = ["Meteor", "meteor"]

#: NLTK's default METEOR parameters (the authors use the defaults).
ALPHA = 0.9
BETA = 3.0
GAMMA = 0.5

_MEMO_LIMIT = 500_000  # words per memo before it is emptied (keeps a long-running process bounded)


class _Lexicon:
    """Memoised Porter stems and WordNet synonym sets, for one WordNet reader."""

    def __init__(self, wordnet) -> None:
        from nltk.stem.porter import PorterStemmer

        self.wordnet = wordnet
        self._stemmer = PorterStemmer()
        self._stems: dict[str, str] = {}
        self._synonyms: dict[str, frozenset[str]] = {}

    def stem(self, word: str) -> str:
        s = self._stems.get(word)
        if s is None:
            if len(self._stems) >= _MEMO_LIMIT:
                self._stems.clear()
            s = self._stems[word] = self._stemmer.stem(word)
        return s

    def synonyms(self, word: str) -> frozenset[str]:
        """Lemma names (without ``_``) of all synsets of ``word``, and ``word`` itself."""
        syn = self._synonyms.get(word)
        if syn is None:
            if len(self._synonyms) >= _MEMO_LIMIT:
                self._synonyms.clear()
            names = {word}
            for synset in self.wordnet.synsets(word):
                for lemma in synset.lemmas():
                    name = lemma.name()
                    if "_" not in name:
                        names.add(name)
            syn = self._synonyms[word] = frozenset(names)
        return syn


_LEXICON: _Lexicon | None = None


def _lexicon() -> _Lexicon:
    """The shared lexicon; raises MeasureUnavailable (naming the fix) when WordNet is missing."""
    global _LEXICON
    from metaeval.core.measures.nltkdata import require_wordnet

    wordnet = require_wordnet()
    if _LEXICON is None or _LEXICON.wordnet is not wordnet:
        _LEXICON = _Lexicon(wordnet)
    return _LEXICON


def _match_exact(hyp: list[tuple[int, str]], ref: list[tuple[int, str]], matches: list[tuple[int, int]]):
    """Match equal words; each hypothesis word, from the last, takes the last free equal reference word.

    Appends (hypothesis index, reference index) pairs to ``matches``; returns the unmatched (index, word)
    lists of both sides, in their order.
    """
    free: dict[str, list[int]] = {}
    for j, (_, word) in enumerate(ref):
        free.setdefault(word, []).append(j)
    hyp_used: set[int] = set()
    ref_used: set[int] = set()
    for i in range(len(hyp) - 1, -1, -1):
        slots = free.get(hyp[i][1])
        if slots:
            j = slots.pop()
            hyp_used.add(i)
            ref_used.add(j)
            matches.append((hyp[i][0], ref[j][0]))
    return (
        [p for i, p in enumerate(hyp) if i not in hyp_used],
        [p for j, p in enumerate(ref) if j not in ref_used],
    )


def _match_synonyms(
    hyp: list[tuple[int, str]], ref: list[tuple[int, str]], matches: list[tuple[int, int]], lex: _Lexicon
) -> None:
    """Match a hypothesis word (from the last) to the free reference word, equal to one of its synonyms, that
    stands last in the reference."""
    free: dict[str, list[int]] = {}
    for j, (_, word) in enumerate(ref):
        free.setdefault(word, []).append(j)
    for i in range(len(hyp) - 1, -1, -1):
        if not free:
            break
        syns = lex.synonyms(hyp[i][1])
        best_j = -1
        best_word = None
        if len(free) <= len(syns):
            candidates = (w for w in free if w in syns)
        else:
            candidates = (w for w in syns if w in free)
        for word in candidates:
            slots = free[word]
            if slots and slots[-1] > best_j:
                best_j = slots[-1]
                best_word = word
        if best_word is not None:
            slots = free[best_word]
            slots.pop()
            if not slots:
                del free[best_word]
            matches.append((hyp[i][0], ref[best_j][0]))


def _count_chunks(matches: list[tuple[int, int]]) -> int:
    """Fewest runs of matches that are adjacent in both texts (matches sorted by hypothesis index)."""
    chunks = 1
    for k in range(len(matches) - 1):
        h, r = matches[k]
        h2, r2 = matches[k + 1]
        if not (h2 == h + 1 and r2 == r + 1):
            chunks += 1
    return chunks


def meteor(reference: Sequence[str], hypothesis: Sequence[str], lex: _Lexicon | None = None) -> float:
    """Sentence METEOR of lower-cased token lists, equal to NLTK's ``meteor_score([reference], hypothesis)``.

    Tokens must already be lower-cased (as NLTK's default ``preprocess=str.lower`` does).
    """
    if lex is None:
        lex = _lexicon()
    hyp = list(enumerate(hypothesis))
    ref = list(enumerate(reference))
    matches: list[tuple[int, int]] = []
    # 1. exact matches
    hyp, ref = _match_exact(hyp, ref, matches)
    # 2. stem matches, on the stems of the words left; the leftovers stay stemmed (as in NLTK)
    if hyp and ref:
        hyp = [(i, lex.stem(w)) for i, w in hyp]
        ref = [(j, lex.stem(w)) for j, w in ref]
        hyp, ref = _match_exact(hyp, ref, matches)
    # 3. WordNet synonym matches
    if hyp and ref:
        _match_synonyms(hyp, ref, matches, lex)
    m = len(matches)
    if m == 0:  # also covers empty texts; NLTK returns 0.0 on its ZeroDivisionError
        return 0.0
    matches.sort(key=lambda pair: pair[0])
    # Same floating-point operations, in the same order, as NLTK's single_meteor_score.
    precision = float(m) / len(hypothesis)
    recall = float(m) / len(reference)
    fmean = (precision * recall) / (ALPHA * precision + (1 - ALPHA) * recall)
    frag_frac = float(_count_chunks(matches)) / m
    penalty = GAMMA * frag_frac**BETA
    return (1 - penalty) * fmean


class Meteor(Measure):
    """``sigma(a, b) = 1 - METEOR(reference=a.split(), hypothesis=b.split())`` (needs WordNet: ``make wordnet``).

    ``compat=True`` rounds the score to 5 dp (Python ``round``) before ``1 - score``, as the authors' code.
    """

    name = "meteor"
    version = "1"

    def __init__(self, compat: bool = False) -> None:
        self.compat = bool(compat)

    @property
    def options(self) -> Mapping[str, object]:
        return {"alpha": ALPHA, "beta": BETA, "gamma": GAMMA, "tokens": "str.split", "wordnet": "3.0"}

    def prepare(self) -> None:
        """Load WordNet now, so that a run that may skip unavailable measures lists METEOR as unavailable (with
        the fix) before any distance is computed, instead of failing in the middle of the run."""
        _lexicon()

    def scores(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Raw METEOR scores (reference = a, hypothesis = b), unrounded."""
        if len(pairs) == 0:
            return np.zeros(0, dtype=np.float64)
        lex = _lexicon()
        tokens: dict[str, list[str]] = {}
        done: dict[tuple[str, str], float] = {}
        out = np.empty(len(pairs), dtype=np.float64)
        for k, (a, b) in enumerate(pairs):
            score = done.get((a, b))
            if score is None:
                ta = tokens.get(a)
                if ta is None:
                    ta = tokens[a] = [t.lower() for t in a.split()]
                tb = tokens.get(b)
                if tb is None:
                    tb = tokens[b] = [t.lower() for t in b.split()]
                score = done[(a, b)] = meteor(ta, tb, lex)
            out[k] = score
        return out

    def distances(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        scores = self.scores(pairs)
        if self.compat:
            return 1 - round_like_python(scores, 5)
        return 1 - scores
