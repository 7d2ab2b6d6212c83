"""ROUGE-L, ROUGE-SU4 and BLEU distances against the maintained libraries, plus small cases by hand.

compat results must equal the authors' functions exactly; default results must equal the libraries exactly
(rouge_score, nltk) or, for true ROUGE-SU4, rouge-metric's independent ROUGE-1.5.5 re-implementation.
"""
from __future__ import annotations

import math
import pickle
import sys
import warnings
from collections import Counter

import numpy as np
import pytest
from nltk.translate.bleu_score import sentence_bleu
from rouge_metric import PyRouge
from rouge_score import rouge_scorer, tokenizers

from metaeval.core.measures import tokens as tokens_mod
from metaeval.core.measures.lexical import Bleu, RougeL, RougeSU4
from metaeval.core.measures.tokens import rouge_tokens

from . import random_pairs

PAIRS = random_pairs(seed=20240611, n=400)
TEXTS = sorted({t for pair in PAIRS for t in pair})


def nltk_bleu(reference: list[str], hypothesis: list[str], weights) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLTK warns about zero n-gram overlaps
        return sentence_bleu([reference], hypothesis, weights=weights)


def authors_rouge_su4(candidate: str, reference: str) -> float:
    """The spec's description of the authors' rougeSU4 (sec. 3, 9.7), written independently: F1 of clipped
    contiguous 5-gram matches of ``split(" ")`` tokens, rounded to 5 decimals."""
    cand, ref = candidate.split(" "), reference.split(" ")
    cand_grams = [tuple(cand[i : i + 5]) for i in range(len(cand) - 4)]
    ref_grams = [tuple(ref[i : i + 5]) for i in range(len(ref) - 4)]
    matches = sum((Counter(cand_grams) & Counter(ref_grams)).values())
    p = matches / len(cand_grams) if len(cand_grams) > 0 else 0.0
    r = matches / len(ref_grams) if len(ref_grams) > 0 else 0.0
    f = (1 + 1) * p * r / (1 * p + r) if p + r > 0 else 0.0
    return round(f, 5)


def same(x: np.ndarray, y) -> bool:
    """Equal element by element, bit for bit (NaN equals NaN)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return x.shape == y.shape and bool(np.all((x == y) | (np.isnan(x) & np.isnan(y))))


# --- tokenisation ------------------------------------------------------------------------------------------------


def test_rouge_tokens_equal_rouge_score_tokenizer():
    from metaeval.core.measures.tokens import rouge_token_lists

    tokenizer = tokenizers.DefaultTokenizer(use_stemmer=True)
    tricky = ["Generously RUNNING runners' policies, İstanbul ﬁne!", "sses ies caresses ponies", "", " ", "\t\n",
              "  lead and trail  ", "K\u212a \u0130i ÀÉ straße ÆSIR", "a\u00a0b\u2003c\u3000d", "x\ud800y 12\u0663",
              "don't-stop_here; 3.14 ...", "\u00b2 \u2460 \uff21\uff42", "ŉ ǅ ǈ ﬀ ﬃ"]
    texts = TEXTS + tricky
    for text in texts:
        assert rouge_tokens(text) == tokenizer.tokenize(text), text
    assert rouge_token_lists(texts) == [tokenizer.tokenize(text) for text in texts]


# --- ROUGE-L ------------------------------------------------------------------------------------------------------


def test_rouge_l_equals_rouge_score_exactly():
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    f = [scorer.score(a, b)["rougeL"].fmeasure for a, b in PAIRS]
    assert same(RougeL(compat=False).distances(PAIRS), [1 - x for x in f])
    assert same(RougeL(compat=True).distances(PAIRS), [1 - round(x, 5) for x in f])


def test_rouge_l_by_hand():
    # "the cat sat on the mat" vs "the cat lay on a mat": LCS = the cat on mat = 4 of 6 and 6 tokens
    # P = R = 4/6 -> F = 2/3
    d = RougeL().distances([("the cat sat on the mat", "the cat lay on a mat")])
    assert d[0] == 1 - (2 * (4 / 6) * (4 / 6)) / (4 / 6 + 4 / 6)
    # stemming: "Running dogs" vs "run dog" -> tokens [run, dog] both, F = 1
    # no tokens on one side (punctuation only) -> F = 0, distance 1
    assert same(RougeL().distances([("Running dogs", "run dog"), ("!!!", "dog"), ("", "")]), [0.0, 1.0, 1.0])
    # compat rounds F: 1/3 -> 0.33333
    assert RougeL(compat=True).distances([("a b c", "a x y")])[0] == 1 - 0.33333


# --- ROUGE-SU4 ---------------------------------------------------------------------------------------------------


def test_rouge_su4_compat_equals_authors_exactly():
    expected = [1 - authors_rouge_su4(a, b) for a, b in PAIRS]
    assert same(RougeSU4(compat=True).distances(PAIRS), expected)


def test_rouge_su4_compat_by_hand():
    m = RougeSU4(compat=True)
    # 6 tokens each -> 2 five-grams each; (a b c d e) is shared -> P = R = 1/2, F = 0.5
    # 4 tokens -> no five-gram -> P = R = 0 -> F = 0
    # "a  b c d" splits into [a, "", b, c, d]: one five-gram, identical on both sides -> F = 1
    # ... but not the same five-gram as "a b c d e": -> F = 0
    pairs = [
        ("a b c d e f", "a b c d e x"),
        ("a b c d", "a b c d"),
        ("a  b c d", "a  b c d"),
        ("a  b c d", "a b c d e"),
    ]
    assert same(m.distances(pairs), [0.5, 1.0, 0.0, 1.0])
    # asymmetric counts: 7 tokens (3 five-grams) vs 5 tokens (1 five-gram), 1 shared: P = 1/3, R = 1, F = 0.5
    assert m.distances([("a b c d e f g", "a b c d e")])[0] == 1 - round(2 * (1 / 3) * 1 / (1 / 3 + 1), 5)


def test_rouge_su4_default_equals_rouge_metric():
    rouge = PyRouge(rouge_n=(), rouge_l=False, rouge_su=True, skip_gap=4, mode="individual")
    ours = RougeSU4(compat=False).distances(PAIRS)
    hyps = [[rouge_tokens(b)] for _, b in PAIRS]
    refs = [[[rouge_tokens(a)]] for a, _ in PAIRS]
    scores = rouge.evaluate_tokenized(hyps, refs)
    expected = [1 - s["rouge-su4"]["f"] for s in scores]
    # rouge-metric forms F as R*P / (0.5*R + 0.5*P), which is the same correctly rounded value as 2PR / (P + R)
    assert same(ours, expected)
    # the same through rouge-metric's own string path, fed pre-tokenised space-joined text
    joined = rouge.evaluate(
        [" ".join(rouge_tokens(b)) for _, b in PAIRS[:60]], [[" ".join(rouge_tokens(a))] for a, _ in PAIRS[:60]]
    )
    assert same(ours[:60], [1 - s["rouge-su4"]["f"] for s in joined])


def test_rouge_su4_default_by_hand():
    m = RougeSU4()
    # bags {the cat, the sat, cat sat, the, cat} and {the cat, the ran, cat ran, the, cat}: 3 of 5 match both ways
    assert m.distances([("the cat sat", "the cat ran")])[0] == 1 - (2 * 0.6 * 0.6) / (0.6 + 0.6)
    # a: 20 skip-bigrams (not (w1, w7): gap j - i = 6 > 5) + unigrams w1..w6 = 26; b: (w1, w7) + w1 = 2
    # matches: w1 only -> P = 1/2, R = 1/26, F = 1/14
    d = m.distances([("w1 w2 w3 w4 w5 w6 w7", "w1 w7")])[0]
    assert d == pytest.approx(1 - 1 / 14, abs=1e-15)
    # one token: the last token's unigram is not counted (ROUGE-1.5.5), so the bags are empty and F = 0
    assert m.distances([("cats", "cats")])[0] == 1.0
    # two tokens, identical: bags {x y, x} -> F = 1; stemming makes "Cats run" equal "cat runs"
    assert same(m.distances([("x y", "x y"), ("Cats run", "cat runs")]), [0.0, 0.0])


# --- BLEU ---------------------------------------------------------------------------------------------------------

BLEU_WEIGHTS = {1: (1,), 4: (0.25, 0.25, 0.25, 0.25)}


@pytest.mark.parametrize("n", [1, 4])
def test_bleu_equals_nltk_exactly(n):
    weights = BLEU_WEIGHTS[n]
    compat = [1 - round(nltk_bleu(a.split(" "), b.split(" "), weights), 5) for a, b in PAIRS]
    default = [1 - nltk_bleu(a.split(), b.split(), weights) for a, b in PAIRS]
    assert same(Bleu(n, compat=True).distances(PAIRS), compat)
    assert same(Bleu(n, compat=False).distances(PAIRS), default)


def test_bleu_short_hypotheses_and_spaces_equal_nltk():
    pairs = [
        (" a b c", "a b c "),  # empty tokens from split(" ") in compat
        ("a b c d e", "a b"),  # hypothesis shorter than n
        ("a", "a"),
        ("a b", "a b c d e f"),  # c > r: BP = 1
        ("a b c d", "d c b a"),  # unigrams only
        ("", "a"),
        ("a", ""),
        ("", ""),
        ("a  b", "a  b"),
    ]
    for n, weights in BLEU_WEIGHTS.items():
        got_c = Bleu(n, compat=True).distances(pairs)
        got_d = Bleu(n, compat=False).distances(pairs)
        for k, (a, b) in enumerate(pairs):
            assert got_c[k] == 1 - round(nltk_bleu(a.split(" "), b.split(" "), weights), 5), (n, a, b)
            assert got_d[k] == 1 - nltk_bleu(a.split(), b.split(), weights), (n, a, b)


def test_bleu_by_hand():
    # BLEU-1, ref "a b c d", hyp "a b": p1 = 2/2, BP = exp(1 - 4/2) -> BLEU = exp(-1)
    assert Bleu(1).distances([("a b c d", "a b")])[0] == 1 - math.exp(-1) * math.exp(math.fsum([math.log(1.0)]))
    # BLEU-4, ref "a b c", hyp "a b": p1 = p2 = 1, no trigram/4-gram -> sys.float_info.min,
    # BP = exp(1 - 3/2); BLEU = e^-0.5 * exp(0.5 * log(min)) ~ 1e-154, distance 1 - that == 1.0
    tiny = math.exp(1 - 3 / 2) * math.exp(math.fsum([0.0, 0.0] + [0.25 * math.log(sys.float_info.min)] * 2))
    assert Bleu(4).distances([("a b c", "a b")])[0] == 1 - tiny
    # no unigram match -> 0 -> distance 1; identical -> 1 -> distance 0
    assert same(Bleu(4).distances([("a b", "c d"), ("x y z w", "x y z w")]), [1.0, 0.0])
    # compat: "" splits into [""]; both empty -> unigram p1 = 1/1, higher orders tiny -> rounds to 0
    assert Bleu(4, compat=True).distances([("", "")])[0] == 1.0
    assert Bleu(1, compat=True).distances([("", "")])[0] == 0.0


# --- batch behaviour ----------------------------------------------------------------------------------------------

ALL = [
    RougeL(False), RougeL(True), RougeSU4(False), RougeSU4(True),
    Bleu(1, False), Bleu(1, True), Bleu(4, False), Bleu(4, True),
]  # fmt: skip


@pytest.mark.parametrize("measure", ALL, ids=lambda m: m.label)
def test_batch_equals_single_pairs_and_survives_pickle(measure, monkeypatch):
    pairs = PAIRS[:120]
    batch = measure.distances(pairs)
    assert batch.dtype == np.float64 and batch.shape == (len(pairs),)
    assert same(batch, [measure(a, b) for a, b in pairs])
    clone = pickle.loads(pickle.dumps(measure))
    assert clone.cache_key == measure.cache_key
    monkeypatch.setattr(tokens_mod.GramBags, "chunk_entries", 7)  # many small chunks
    assert same(clone.distances(pairs), batch)
    assert measure.distances([]).shape == (0,)


def test_names_and_cache_keys():
    assert [m.name for m in ALL] == ["rouge_l"] * 2 + ["rouge_su4"] * 2 + ["bleu1"] * 2 + ["bleu4"] * 2
    assert len({m.cache_key for m in ALL}) == len(ALL)
    assert RougeL(True).label == "rouge_l (authors)"
    with pytest.raises(ValueError):
        Bleu(0)


def test_lcs_encoding_past_the_surrogate_range_and_integer_fallback(monkeypatch):
    # 60,000 distinct tokens: ids beyond 0xD800 skip the surrogate code points; the integer-list path agrees
    from metaeval.core.measures.lexical import _lcs_lengths
    from metaeval.core.measures.tokens import Encoded

    rng = np.random.default_rng(5)
    token_lists = [[str(i) for i in range(60_000)]]
    token_lists += [[str(x) for x in rng.integers(0, 60_000, size=40)] for _ in range(30)]
    token_lists += [[str(x) for x in rng.integers(55_000, 60_000, size=40)] for _ in range(10)]
    enc = Encoded(token_lists)
    strings = enc.as_strings()
    assert [len(s) for s in strings] == enc.lengths.tolist()
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for s in strings for ch in s)
    ia = np.array([0] * 40 + list(range(1, 41)), dtype=np.int64)
    ib = np.array(list(range(1, 41)) + list(range(40, 0, -1)), dtype=np.int64)
    fast = _lcs_lengths(enc, ia, ib)
    monkeypatch.setattr(tokens_mod, "_MAX_CODEPOINTS", 10)
    assert enc.as_strings() is None
    assert np.array_equal(_lcs_lengths(enc, ia, ib), fast)
    # ground truth for the short pairs: textbook LCS dynamic programme
    ids = enc.id_lists()
    for k in range(40, 80):
        x, y = ids[ia[k]], ids[ib[k]]
        row = [0] * (len(y) + 1)
        for u in x:
            diag = 0
            for j, v in enumerate(y, 1):
                diag, row[j] = row[j], diag + 1 if u == v else max(row[j], row[j - 1])
        assert fast[k] == row[-1]
    assert fast[40:80].max() > 0


def test_bleu_and_rouge_su4_compat_computed_together_equal_each_alone(monkeypatch):
    """split_space_distances: one tokenisation and one n-gram count for the authors' BLEU and ROUGE-SU4, the same
    bits as each measure's own distances; evaluate_many fuses them on the same pairs in its workers."""
    import numpy as np

    import metaeval.core.measures.distances as distances
    from metaeval.core.measures.distances import fused_distances
    from metaeval.core.measures.lexical import Bleu, RougeL, RougeSU4, split_space_distances

    rng = np.random.default_rng(5)
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", ""]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(0, 14)))) for _ in range(30)] + ["", " ", "a  b"]
    pairs = [(texts[i], texts[j]) for i in range(len(texts)) for j in range(0, len(texts), 2)]
    measures = [Bleu(4, compat=True), RougeSU4(compat=True), Bleu(1, compat=True)]
    alone = [measure.distances(pairs) for measure in measures]
    together = split_space_distances(measures, pairs)
    for one, both in zip(alone, together, strict=True):
        assert one.tobytes() == both.tobytes()  # every bit, NaN included
    assert [a.tobytes() for a in fused_distances(measures, pairs)] == [a.tobytes() for a in alone]
    # a measure without that fusion is refused by the fused path and computed alone by fused_distances
    with pytest.raises(ValueError, match="split-space"):
        split_space_distances([Bleu(4, compat=False), RougeSU4(compat=True)], pairs)
    mixed = fused_distances([RougeL(compat=True), Bleu(4, compat=True)], pairs)
    assert mixed[1].tobytes() == alone[0].tobytes()
    monkeypatch.setattr(distances, "PARALLEL_THRESHOLD", 10)
    pooled = list(distances.evaluate_many([(measure, pairs) for measure in measures], workers=2))
    assert [a.tobytes() for a in pooled] == [a.tobytes() for a in alone]
