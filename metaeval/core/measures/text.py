"""Text preprocessing pipelines, applied to texts before any distance is computed (conventions sec. 9 item 7).

Preprocessing is a separate, optional step: a measure never preprocesses by itself. Pipelines:

``none`` (the default)
    The text unchanged.

``authors``
    The tokenisation the PerSEval authors applied to the PENS data before computing their published numbers
    (their ``utils._tokenize``), reproduced step by step:

    1. **Strip punctuation**: delete every character that is neither a word character nor whitespace
       (``re.sub(r"[^\\w\\s]", "", text)``; Unicode-aware, so letters with accents and ``_`` stay).
    2. **Lower-case, then strip digits**: ``re.sub(r"[\\d+]", "", text.lower())``: every Unicode decimal
       digit is deleted (the ``+`` in the class is the authors' and harmless: no ``+`` survives step 1).
       The order matters and is kept: lower-casing comes after step 1, so a character that lower-cases to a
       non-word character (``"İ"`` -> ``"i̇"``) keeps it.
    3. **Tokenise** with NLTK's ``word_tokenize`` tokenizer (``NLTKWordTokenizer``). On text with no
       punctuation left it splits on whitespace, except for its contraction rules: ``cannot`` -> ``can not``,
       ``gonna`` -> ``gon na``, ``gotta`` -> ``got ta``, ``gimme``/``lemme`` -> ``gim me``/``lem me``,
       ``wanna`` -> ``wan na``. The authors' ``word_tokenize`` first splits sentences with Punkt, which only
       breaks at ``.``, ``?`` or ``!``; none survive step 1, so the whole text is one sentence and Punkt (a
       data download) is not needed here.
    4. **Remove English stop-words**: NLTK's English list (179 words, ``metaeval/core/measures/data/
       stopwords_english.txt``; see that file for its origin), matched on whole lower-cased tokens.
    5. **Lemmatise** each remaining token with NLTK's ``WordNetLemmatizer().lemmatize(token)``: the default
       part of speech, noun (the authors pass none), so ``running`` stays ``running`` while ``dogs`` becomes
       ``dog``; a word WordNet does not know stays as it is. Lemmas are memoised per unique token.
    6. **Join** the tokens with single spaces (no tokens -> ``""``).

    Needs WordNet (``make wordnet``); raises :class:`~metaeval.core.measures.base.MeasureUnavailable` naming
    the fix when it is missing. nltk is imported lazily.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

PIPELINES = ("none", "authors")

_STOPWORDS_FILE = Path(__file__).resolve().parent / "data" / "stopwords_english.txt"
_PUNCTUATION = re.compile(r"[^\w\s]")
_DIGITS = re.compile(r"[\d+]")
_MEMO_LIMIT = 500_000


@lru_cache(maxsize=1)
def english_stopwords() -> frozenset[str]:
    """NLTK's English stop-word list (179 words), read from ``metaeval/core/measures/data/stopwords_english.txt``."""
    words = []
    for line in _STOPWORDS_FILE.read_text(encoding="utf-8").splitlines():
        word = line.strip()
        if word and not word.startswith("#"):
            words.append(word)
    return frozenset(words)


class _AuthorsPipeline:
    """The ``authors`` pipeline with its NLTK objects and a per-token lemma memo."""

    def __init__(self) -> None:
        from nltk.stem import WordNetLemmatizer
        from nltk.tokenize import NLTKWordTokenizer

        from metaeval.core.measures.nltkdata import require_wordnet

        self.wordnet = require_wordnet()
        self._tokenizer = NLTKWordTokenizer()
        self._lemmatizer = WordNetLemmatizer()
        self._stopwords = english_stopwords()
        self._lemmas: dict[str, str] = {}

    def lemma(self, token: str) -> str:
        lemma = self._lemmas.get(token)
        if lemma is None:
            if len(self._lemmas) >= _MEMO_LIMIT:
                self._lemmas.clear()
            lemma = self._lemmas[token] = self._lemmatizer.lemmatize(token)
        return lemma

    def tokens(self, text: str) -> list[str]:
        text = _PUNCTUATION.sub("", text)  # 1. punctuation
        text = _DIGITS.sub("", text.lower())  # 2. lower-case, then digits
        tokens = self._tokenizer.tokenize(text)  # 3. NLTK word tokenizer (one "sentence")
        stop = self._stopwords
        return [self.lemma(t) for t in tokens if t not in stop]  # 4. stop-words, 5. lemmas


_AUTHORS: _AuthorsPipeline | None = None


def _authors() -> _AuthorsPipeline:
    global _AUTHORS
    if _AUTHORS is None:
        _AUTHORS = _AuthorsPipeline()
    else:  # cheap re-check, so a WordNet removed or replaced while running is noticed
        from metaeval.core.measures.nltkdata import require_wordnet

        if require_wordnet() is not _AUTHORS.wordnet:
            _AUTHORS = _AuthorsPipeline()
    return _AUTHORS


def _check(pipeline: str) -> None:
    if pipeline not in PIPELINES:
        raise ValueError(f"unknown preprocessing pipeline {pipeline!r}; choose one of {', '.join(PIPELINES)}")


def preprocess(text: str, pipeline: str = "none") -> str:
    """``text`` after ``pipeline`` (``"none"``: unchanged; ``"authors"``: see the module docstring)."""
    _check(pipeline)
    if pipeline == "none":
        return text
    return " ".join(_authors().tokens(text))
