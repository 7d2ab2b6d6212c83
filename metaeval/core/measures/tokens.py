"""Tokenisation and batched n-gram counting shared by the lexical measures.

Everything here works on one batch of pairs at a time: each unique text is tokenised once, its tokens are mapped
to integer ids, and the n-grams of all texts are counted together with numpy. Pairs are then compared through a
sorted table of ``(text, gram) -> count`` entries, so the per-pair work is a handful of vectorised look-ups rather
than Python loops over n-grams. All counts are exact integers; the measures turn them into floats themselves.

No state lives on objects that get pickled: the only module-level state is a cache of stemmed words (a pure
function of the word), which is safe to copy into forked worker processes.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

__all__ = [
    "GramBags",
    "Encoded",
    "rouge_token_lists",
    "rouge_tokens",
    "unique_texts",
]


def unique_texts(pairs: Sequence[tuple[str, str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The unique texts of ``pairs`` (first-seen order) and, per pair, the index of ``a`` and of ``b``."""
    firsts = list(map(itemgetter(0), pairs))
    seconds = list(map(itemgetter(1), pairs))
    texts = list(dict.fromkeys(itertools.chain(firsts, seconds)))  # a's first-seen, then b's new ones
    index = {text: position for position, text in enumerate(texts)}
    ia = np.fromiter(map(index.__getitem__, firsts), dtype=np.int64, count=len(firsts))
    ib = np.fromiter(map(index.__getitem__, seconds), dtype=np.int64, count=len(seconds))
    return texts, ia, ib


# --- rouge_score's tokenizer -------------------------------------------------------------------------------------

#: word (lower-case, ``[a-z0-9]+``) -> token after rouge_score's stemming rule, or None when the result is dropped
_STEMS: dict[str, str | None] = {}
_STEMS_MAX = 2_000_000
_ROUGE: dict[str, Any] = {}


def _rouge_parts() -> dict[str, Any]:
    """rouge_score's own regular expressions and an NLTK Porter stemmer (imported on first use)."""
    if not _ROUGE:
        from nltk.stem import porter
        from rouge_score import tokenize as rs_tokenize

        _ROUGE["non_alnum"] = rs_tokenize.NON_ALPHANUM_RE
        _ROUGE["spaces"] = rs_tokenize.SPACES_RE
        _ROUGE["valid"] = rs_tokenize.VALID_TOKEN_RE
        _ROUGE["stemmer"] = porter.PorterStemmer()
    return _ROUGE


#: byte -> itself for ``[a-z0-9]``, a space for every other byte (:func:`_rouge_words`)
_ALNUM_OR_SPACE = bytes(byte if 97 <= byte <= 122 or 48 <= byte <= 57 else 32 for byte in range(256))


def _rouge_words(text: str) -> list[str]:
    """rouge_score's words before stemming, without the empty ones: it lower-cases, replaces every run of
    characters outside ``[a-z0-9]`` by a space and splits on whitespace (an empty first or last word, where the text
    starts or ends with such a run, fails its validity check later and is dropped). Here every non-ASCII character
    becomes ``?`` and every byte outside ``[a-z0-9]`` a space (one C-level table), then ``str.split()``: the same
    words, several times faster than the two regular expressions."""
    return text.lower().encode("ascii", "replace").translate(_ALNUM_OR_SPACE).decode("ascii").split()


def rouge_tokens(text: str) -> list[str]:
    """Tokens exactly as ``rouge_score.tokenizers.DefaultTokenizer(use_stemmer=True).tokenize(text)``.

    rouge_score lower-cases the text, replaces every run of characters outside ``[a-z0-9]`` by a space, splits on
    whitespace, Porter-stems (NLTK's ``PorterStemmer``) every word longer than 3 characters and keeps the results
    that match ``^[a-z0-9]+$``. The same steps run here, with the stem of each distinct word computed once.
    """
    parts = _rouge_parts()
    words = _rouge_words(text)
    stems = _STEMS
    out: list[str] = []
    for word in words:
        try:
            token = stems[word]
        except KeyError:
            token = _stem_word(word, parts)
        if token is not None:
            out.append(token)
    return out


def rouge_token_lists(texts: Sequence[str]) -> list[list[str]]:
    """:func:`rouge_tokens` of every text (the same lists), each distinct word looked up once for the batch."""
    parts = _rouge_parts()
    word_lists = list(map(_rouge_words, texts))
    stems = _STEMS
    missing = [word for word in dict.fromkeys(itertools.chain.from_iterable(word_lists)) if word not in stems]
    if len(stems) + len(missing) > _STEMS_MAX:
        stems.clear()
        missing = list(dict.fromkeys(itertools.chain.from_iterable(word_lists)))
        if len(missing) >= _STEMS_MAX:  # pragma: no cover - more distinct words than the memo holds
            return [rouge_tokens(text) for text in texts]
    for word in missing:
        _stem_word(word, parts)
    stem = stems.__getitem__
    return [[token for token in map(stem, words) if token is not None] for words in word_lists]


def _stem_word(word: str, parts) -> str | None:
    token = parts["stemmer"].stem(word) if len(word) > 3 else word
    result = token if parts["valid"].match(token) else None
    if len(_STEMS) >= _STEMS_MAX:
        _STEMS.clear()
    _STEMS[word] = result
    return result


# --- integer encoding and n-grams --------------------------------------------------------------------------------


class Encoded:
    """The token sequences of a batch's unique texts as integer ids, concatenated.

    ``ids`` holds every token (ids are dense, ``0 .. vocab_size-1``, equal tokens share an id); text ``t`` owns
    ``ids[offsets[t]:offsets[t+1]]``; ``lengths[t]`` is its token count.
    """

    def __init__(self, token_lists: Sequence[Sequence[str]]):
        tokens = list(itertools.chain.from_iterable(token_lists))
        # ids in first-seen order, as a setdefault per token gives them, with the loops in C
        vocab = {token: position for position, token in enumerate(dict.fromkeys(tokens))}
        self.vocab_size = len(vocab)
        self.n_texts = len(token_lists)
        self.ids = np.fromiter(map(vocab.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        self.lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=self.n_texts)
        self.offsets = np.zeros(self.n_texts + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=self.offsets[1:])
        self.text_of = np.repeat(np.arange(self.n_texts, dtype=np.int64), self.lengths)
        #: tokens from each position to the end of its text (>= 1)
        self.remaining = self.offsets[self.text_of + 1] - np.arange(len(self.ids), dtype=np.int64)

    def id_lists(self) -> list[list[int]]:
        """Per text, its token ids as a Python list."""
        flat = self.ids.tolist()
        offs = self.offsets.tolist()
        return [flat[offs[t] : offs[t + 1]] for t in range(self.n_texts)]

    def as_strings(self) -> list[str] | None:
        """Per text, its ids as a string with one code point per token (surrogates skipped), for rapidfuzz, which
        compares strings fastest; None when the vocabulary has more ids than code points."""
        if self.vocab_size > _MAX_CODEPOINTS:
            return None
        cps = self.ids + np.where(self.ids >= 0xD800, 0x800, 0)
        text = cps.astype("<u4").tobytes().decode("utf-32-le")
        offs = self.offsets.tolist()
        return [text[offs[t] : offs[t + 1]] for t in range(self.n_texts)]

    def ngrams(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """All contiguous ``n``-grams: (text index, gram id) per occurrence. Gram ids identify ``n``-grams exactly."""
        if n < 1:
            raise ValueError("n must be >= 1")
        *_, (texts, grams, _count) = self.ngram_orders(n)
        return texts, grams

    def ngram_orders(self, n: int) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
        """:meth:`ngrams` of every order ``1 .. n`` in turn, each built from the one before, with the number of
        distinct grams: gram ids are dense (``0 .. count - 1``, every one used), so :class:`GramBags` can take the
        count instead of compressing them again."""
        gram = self.ids
        pos = np.arange(len(self.ids), dtype=np.int64)
        card = max(self.vocab_size, 1)
        yield self.text_of, gram, self.vocab_size
        for k in range(2, n + 1):
            keep = self.remaining[pos] >= k
            pos = pos[keep]
            # pair (id of the (k-1)-gram at pos, token at pos+k-1) -> a unique integer, then compress to dense ids
            _check_range(card, self.vocab_size)
            raw = gram[keep] * np.int64(max(self.vocab_size, 1)) + self.ids[pos + (k - 1)]
            uniq, gram = np.unique(raw, return_inverse=True)
            card = max(len(uniq), 1)
            yield self.text_of[pos], gram, len(uniq)

    def skip_bigrams(self, max_gap: int, unigrams: bool) -> tuple[np.ndarray, np.ndarray]:
        """Skip-bigrams as ROUGE-1.5.5 ``-2 max_gap`` (``-u`` when ``unigrams``) counts them.

        For each text with tokens ``t_0 .. t_{L-1}``: every pair ``(t_i, t_j)`` with ``1 <= j - i <= max_gap + 1``
        (at most ``max_gap`` words between them); with ``unigrams`` also every unigram ``t_i`` for
        ``i <= L - 2``, i.e. the last token's unigram is *not* counted -- ROUGE-1.5.5's ``createSkipBigram`` adds
        unigrams inside the loop ``for($i=0;$i<$#m_tokens;$i++)``. Returns (text index, gram id) per occurrence.
        """
        v = np.int64(max(self.vocab_size, 1))
        _check_range(self.vocab_size, self.vocab_size)
        texts, grams = [], []
        for d in range(1, max_gap + 2):
            pos = np.flatnonzero(self.remaining > d)
            texts.append(self.text_of[pos])
            grams.append(self.ids[pos] * v + self.ids[pos + d])
        if unigrams:
            pos = np.flatnonzero(self.remaining > 1)
            texts.append(self.text_of[pos])
            grams.append(v * v + self.ids[pos])
        return np.concatenate(texts), np.concatenate(grams)


_MAX_CODEPOINTS = 0x110000 - 0x800


def _check_range(card: int, vocab: int) -> None:
    if (card + 1) * (max(vocab, 1) + 1) >= 2**62:  # pragma: no cover - needs an astronomically large batch
        raise OverflowError("batch too large for 64-bit n-gram keys; split it")


class GramBags:
    """One multiset of grams per text, stored as a sorted table of ``text * G + gram`` keys with counts.

    ``totals[t]`` is the number of gram occurrences of text ``t``; ``distinct[t]`` the number of distinct grams.
    """

    #: entries handled per vectorised step (bounds memory; about 100 bytes each)
    chunk_entries = 1 << 21

    def __init__(self, text_idx: np.ndarray, gram_ids: np.ndarray, n_texts: int, dense: int | None = None):
        """``dense``: the grams' ids are already ``0 .. dense - 1``, every one used (:meth:`Encoded.ngram_orders`);
        the table is then the one compressing them would give, built without that step."""
        self.n_texts = n_texts
        self.totals = np.bincount(text_idx, minlength=n_texts).astype(np.int64)
        if dense is None:
            uniq, dense_ids = np.unique(gram_ids, return_inverse=True)
            distinct = len(uniq)
        else:
            dense_ids, distinct = gram_ids, dense
        self.g = np.int64(max(distinct, 1))
        self.keys, counts = np.unique(text_idx * self.g + dense_ids.astype(np.int64), return_counts=True)
        self.counts = counts.astype(np.int64)
        self.starts = np.searchsorted(self.keys, np.arange(n_texts + 1, dtype=np.int64) * self.g)
        self.distinct = np.diff(self.starts)

    def shared(self, ia: np.ndarray, ib: np.ndarray) -> Iterator[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
        """Per chunk of pairs ``[lo, hi)``: for every distinct gram of the smaller bag of each pair, the pair's
        position (relative to ``lo``), the gram's count in text ``ia`` and its count in text ``ib`` (0 if absent).

        Every gram the two bags share is listed exactly once; grams of the larger bag alone are not listed.
        """
        n_pairs = len(ia)
        if n_pairs == 0:
            return
        small_is_a = self.distinct[ia] <= self.distinct[ib]
        small = np.where(small_is_a, ia, ib)
        other = np.where(small_is_a, ib, ia)
        lens = self.distinct[small]
        ends = np.cumsum(lens)
        lo = 0
        while lo < n_pairs:
            base = ends[lo - 1] if lo else 0
            hi = int(np.searchsorted(ends, base + self.chunk_entries, side="right"))
            hi = min(max(hi, lo + 1), n_pairs)
            yield (lo, hi, *self._entries(small[lo:hi], other[lo:hi], lens[lo:hi], small_is_a[lo:hi]))
            lo = hi

    def _entries(self, small, other, lens, small_is_a):
        total = int(lens.sum())
        pair = np.repeat(np.arange(len(small), dtype=np.int64), lens)
        if total == 0:
            empty = np.zeros(0, dtype=np.int64)
            return pair, empty, empty
        first = np.cumsum(lens) - lens
        idx = np.arange(total, dtype=np.int64) - np.repeat(first - self.starts[small], lens)
        keys_s = self.keys[idx]
        count_s = self.counts[idx]
        wanted = keys_s + (other - small)[pair] * self.g
        pos = np.searchsorted(self.keys, wanted)
        np.minimum(pos, len(self.keys) - 1, out=pos)
        count_o = np.where(self.keys[pos] == wanted, self.counts[pos], 0)
        flip = small_is_a[pair]
        return pair, np.where(flip, count_s, count_o), np.where(flip, count_o, count_s)

    def clipped_matches(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """Per pair, ``sum over grams g of min(count_a(g), count_b(g))`` (exact int64)."""
        out = np.zeros(len(ia), dtype=np.int64)
        for lo, hi, pair, ca, cb in self.shared(ia, ib):
            out[lo:hi] = np.bincount(pair, weights=np.minimum(ca, cb), minlength=hi - lo).astype(np.int64)
        return out
