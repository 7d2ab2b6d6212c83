"""tests.reference.straightforward: the literal, pair-at-a-time reference (docs/conventions.md sec. 2-7)."""
from __future__ import annotations

import math
import random
import zlib
from itertools import permutations

import pytest

from metaeval.core.io.corpus import Corpus, DataError, Document, Rating, RatingTable
from tests.metaeval.core import hand_example as hand
from tests.reference.straightforward import (
    AUTHORS_DISTANCES,
    authors_bleu,
    authors_jsd,
    authors_rouge_l,
    authors_rouge_su4,
    reference_details,
    reference_hj_scores,
    reference_p_acc,
    reference_sampled_scores,
    reference_scores,
    sample_row_indices,
)

KEYS = ("egises", "degress", "perseval", "accuracy", "egises_accuracy")
E = 1e-5
EPS = 1e-7


def same(a: float, b: float, tol: float = 1e-12) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def assert_scores_equal(left: dict, right: dict, tol: float = 1e-12) -> None:
    assert set(left) == set(right)
    for system in left:
        for key in KEYS:
            assert same(left[system][key], right[system][key], tol), (
                system,
                key,
                left[system][key],
                right[system][key],
            )


def sigmoid_shift(a: float, b: float, x: float) -> float:
    return 1 / (1 + 10**a * math.exp(-(10**b) * x))


# ---------------------------------------------------------------------------------------------------------------
# The hand example
# ---------------------------------------------------------------------------------------------------------------


def test_hand_example_system_values():
    scores = reference_scores(hand.build_corpus(), hand.table_distance)
    assert set(scores) == {hand.SYSTEM}
    for key in KEYS:
        assert scores[hand.SYSTEM][key] == pytest.approx(hand.EXPECTED[key], abs=1e-12), key
    for key, rounded in hand.DOCSTRING_VALUES.items():
        assert scores[hand.SYSTEM][key] == pytest.approx(rounded, abs=1e-6), key


def test_hand_example_intermediate_values():
    details = reference_details(hand.build_corpus(), hand.table_distance, hand.SYSTEM)
    d1, d2 = details["documents"]  # d3 (single reader) is absent
    assert (d1["doc_id"], d2["doc_id"]) == ("d1", "d2")
    assert d1["x"][("A", "B")] == pytest.approx(hand.X_AB, abs=1e-12)
    assert d1["x"][("C", "B")] == pytest.approx(hand.X_CB, abs=1e-12)
    assert d1["y"][("B", "A")] == pytest.approx(hand.Y_BA, abs=1e-12)
    assert d1["y"][("C", "A")] == pytest.approx(0.3, abs=1e-15)  # sigma(sC, d) = 0 -> w = 0 -> share 1/2
    assert [(j, k) for j, k, _ in d1["rows"]] == list(permutations("ABC", 2))
    for j, k, p in d1["rows"]:
        assert p == pytest.approx(hand.P_D1[(j, k)], abs=1e-12)
    for j in "ABC":
        assert d1["degress_reader"][j] == pytest.approx(hand.DEGRESS_D1[j], abs=1e-12)
        assert d1["acp"][j] == pytest.approx(hand.ACP_D1[j], abs=1e-12)
        assert d1["edp"][j] == pytest.approx(hand.EDP_D1[j], abs=1e-12)
    assert d1["adp"] == pytest.approx(hand.ADP_D1, abs=1e-12)
    assert d1["degress"] == pytest.approx(hand.DOC_DEGRESS_D1, abs=1e-12)
    assert d1["perseval"] == pytest.approx(hand.DOC_PERSEVAL_D1, abs=1e-12)
    assert d2["accuracy"] == {"P": 0.1, "Q": 1.0}  # NaN accuracy became 1.0
    assert d2["degress"] == pytest.approx(hand.DOC_DEGRESS_D2, abs=1e-12)
    assert d2["perseval"] == pytest.approx(hand.DOC_PERSEVAL_D2, abs=1e-12)


def test_one_call_per_pair_in_the_conventions_order_and_no_caching():
    calls: list[tuple[str, str]] = []

    def recording(a: str, b: str) -> float:
        calls.append((a, b))
        return hand.table_distance(a, b)  # KeyError for any other argument order

    corpus = hand.build_corpus()
    reference_scores(corpus, recording)
    # per document with n readers: 2n doc distances + 2 n(n-1) pair distances + n accuracies; d3 needs none
    assert len(calls) == (6 + 12 + 3) + (4 + 4 + 2)
    assert len(set(calls)) == len(calls)
    reference_scores(corpus, recording)
    assert len(calls) == 2 * 31  # a second call recomputes everything


# ---------------------------------------------------------------------------------------------------------------
# Small table-driven cases for the NaN / inf / zero rules
# ---------------------------------------------------------------------------------------------------------------


def table_case(user_doc, system_doc, user_pair, system_pair, accuracy, system="S"):
    """One document "d" whose readers are the keys of ``user_doc``; returns (corpus, distance)."""
    readers = list(user_doc)
    text = "head body"
    summaries = {r: {"user": f"u {r}", system: f"s {r}"} for r in readers}
    table = {}
    for r in readers:
        table[(f"u {r}", text)] = user_doc[r]
        table[(f"s {r}", text)] = system_doc[r]
        table[(f"s {r}", f"u {r}")] = accuracy[r]
    for (j, k), value in user_pair.items():
        table[(f"u {j}", f"u {k}")] = value
    for (j, k), value in system_pair.items():
        table[(f"s {j}", f"s {k}")] = value
    corpus = Corpus((Document("d", "head", "body", summaries),), (system,))
    return corpus, lambda a, b: table[(a, b)]


THREE = {"A": 0.5, "B": 0.5, "C": 0.5}
PAIRS = {pair: 0.5 for pair in permutations("ABC", 2)}


def test_nan_x_with_finite_y_gives_proportion_one():
    user_pair = {**PAIRS, ("A", "B"): float("nan")}  # poisons A's whole softmax group
    corpus, distance = table_case(THREE, THREE, user_pair, PAIRS, {"A": 0.1, "B": 0.2, "C": 0.3})
    doc = reference_details(corpus, distance, "S")["documents"][0]
    assert math.isnan(doc["x"][("A", "B")]) and math.isnan(doc["x"][("A", "C")])
    rows = {(j, k): p for j, k, p in doc["rows"]}
    assert rows[("A", "B")] == 1.0 and rows[("A", "C")] == 1.0  # min(Y, NaN) = Y


def test_nan_y_gives_nan_proportion_and_is_skipped():
    system_pair = {**PAIRS, ("A", "C"): float("nan")}
    corpus, distance = table_case(THREE, THREE, PAIRS, system_pair, {"A": 0.1, "B": 0.2, "C": 0.3})
    doc = reference_details(corpus, distance, "S")["documents"][0]
    rows = {(j, k): p for j, k, p in doc["rows"]}
    assert math.isnan(rows[("A", "B")]) and math.isnan(rows[("A", "C")])  # min(NaN, X) = NaN
    assert math.isnan(doc["degress_reader"]["A"])
    assert doc["degress"] == pytest.approx((doc["degress_reader"]["B"] + doc["degress_reader"]["C"]) / 2)
    # A still counts for the accuracies and EDP's d_min / d_mean, but not for the PerSEval mean
    assert doc["d_min"] == 0.1
    assert doc["perseval"] == pytest.approx((doc["perseval_reader"]["B"] + doc["perseval_reader"]["C"]) / 2)
    scores = reference_scores(corpus, distance)["S"]
    assert scores["accuracy"] == pytest.approx(0.2)


def test_exp_overflow_gives_inf_and_inf_over_inf_is_nan():
    user_doc = dict(THREE, A=1e-3)
    user_pair = {**PAIRS, ("A", "B"): 1.0, ("A", "C"): 0.5}  # w_AB = 1000: exp overflows
    corpus, distance = table_case(user_doc, THREE, user_pair, PAIRS, {"A": 0.1, "B": 0.2, "C": 0.3})
    doc = reference_details(corpus, distance, "S")["documents"][0]
    assert math.isnan(doc["x"][("A", "B")])  # inf / inf
    assert doc["x"][("A", "C")] == 0.0  # finite / inf
    rows = {(j, k): p for j, k, p in doc["rows"]}
    assert rows[("A", "B")] == 1.0
    y_ac = doc["y"][("A", "C")]
    assert rows[("A", "C")] == pytest.approx(E / (y_ac + E), rel=1e-12)


def test_zero_document_distance_gives_zero_weights():
    system_doc = dict(THREE, B=0.0)
    system_pair = {**PAIRS, ("B", "A"): 0.2, ("B", "C"): 0.9}
    corpus, distance = table_case(THREE, system_doc, PAIRS, system_pair, {"A": 0.1, "B": 0.2, "C": 0.3})
    doc = reference_details(corpus, distance, "S")["documents"][0]
    assert doc["y"][("B", "A")] == pytest.approx(0.5 * 0.2, abs=1e-15)
    assert doc["y"][("B", "C")] == pytest.approx(0.5 * 0.9, abs=1e-15)


def test_zero_proportion_denominator_gives_zero():
    two = {"P": 0.5, "Q": 0.5}
    pair = {("P", "Q"): -1e-5, ("Q", "P"): -1e-5}  # a (bad) callable with negative distances
    corpus, distance = table_case(two, two, pair, pair, {"P": 0.1, "Q": 0.1})
    doc = reference_details(corpus, distance, "S")["documents"][0]
    assert [p for _, _, p in doc["rows"]] == [0.0, 0.0]


def test_simplified_uses_raw_sigma():
    corpus, distance = table_case(THREE, THREE, {**PAIRS, ("A", "B"): 0.2}, PAIRS, {"A": 0.1, "B": 0.2, "C": 0.3})
    doc = reference_details(corpus, distance, "S", simplified=True)["documents"][0]
    assert doc["x"][("A", "B")] == 0.2 and doc["y"][("A", "B")] == 0.5
    assert doc["rows"][0][2] == pytest.approx((0.2 + E) / (0.5 + E))


def test_best_edp_floor():
    # all accuracies 0: ADP = ACP = S(0) = 1/(1 + 1e4); EDP = 1 - S_{3,1}(2 S(0)) + eps ~ 0.998999
    corpus, distance = table_case(THREE, THREE, PAIRS, PAIRS, {"A": 0.0, "B": 0.0, "C": 0.0})
    doc = reference_details(corpus, distance, "S")["documents"][0]
    floor = 1 - sigmoid_shift(3, 1, 2 / (1 + 1e4)) + EPS
    assert doc["edp"]["A"] == pytest.approx(floor, abs=1e-15)
    assert round(floor, 6) == 0.998999
    doc = reference_details(corpus, distance, "S", beta=1.7)["documents"][0]
    assert round(doc["edp"]["A"], 6) == 0.998991


# ---------------------------------------------------------------------------------------------------------------
# Properties on random corpora
# ---------------------------------------------------------------------------------------------------------------

VOCAB = "the a storm coast city rain wind power school game team win local news".split()


def random_corpus(
    seed: int, *, docs: int = 6, systems=("S1", "S2"), max_readers: int = 5, empty: float = 0.05
) -> Corpus:
    rng = random.Random(seed)

    def text() -> str:
        if rng.random() < empty:
            return ""
        return " ".join(rng.choice(VOCAB[:8]) for _ in range(rng.randint(3, 10)))

    documents = []
    for d in range(docs):
        readers = [f"r{d}{i}" for i in range(rng.randint(1, max_readers))]
        summaries = {r: {"user": text(), **{s: text() for s in systems}} for r in readers}
        body = " ".join(rng.choice(VOCAB) for _ in range(30))
        documents.append(Document(f"n{d}", f"headline {d}", body, summaries))
    return Corpus(tuple(documents), tuple(systems))


def hashed_distance(a: str, b: str) -> float:
    """A deterministic pseudo-random, asymmetric distance in [0, 1] with some exact zeros."""
    h = zlib.crc32(f"{a}\x00{b}".encode())
    return 0.0 if h % 13 == 0 else (h % 1000) / 999


@pytest.mark.parametrize("distance", [hashed_distance, authors_jsd, authors_rouge_su4], ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ranges_and_identities(distance, seed):
    scores = reference_scores(random_corpus(seed), distance)
    for system, values in scores.items():
        assert 0 <= values["degress"] <= 1, system
        assert values["egises"] == pytest.approx(1 - values["degress"], abs=1e-15)
        assert 0 <= values["perseval"] <= values["degress"] + 1e-9
        assert 0 <= values["accuracy"] <= 1
        # complete pairs: every reader is an origin, so the two pooled accuracies agree
        assert values["egises_accuracy"] == pytest.approx(values["accuracy"], abs=1e-15)


def test_all_authors_distances_run_through_the_pipeline():
    assert set(AUTHORS_DISTANCES) == {"rouge_l", "bleu4", "rouge_su4", "jsd"}
    corpus = random_corpus(7, docs=3, max_readers=4)
    for name, distance in AUTHORS_DISTANCES.items():
        for values in reference_scores(corpus, distance).values():
            assert 0 <= values["perseval"] <= values["degress"] + 1e-9 <= 1 + 1e-9, name


def test_single_reader_documents_are_ignored():
    corpus = random_corpus(4)
    extra = [Document(f"single{i}", "h", "b", {f"z{i}": {"user": "only one", "S1": "x y", "S2": ""}}) for i in range(3)]
    documents = list(corpus.documents)
    for i, document in enumerate(extra):
        documents.insert(2 * i, document)
    padded = Corpus(tuple(documents), corpus.systems)
    assert_scores_equal(reference_scores(padded, hashed_distance), reference_scores(corpus, hashed_distance), 0.0)


def replace_document(corpus: Corpus, index: int, summaries) -> Corpus:
    documents = list(corpus.documents)
    old = documents[index]
    documents[index] = Document(old.doc_id, old.headline, old.body, summaries)
    return Corpus(tuple(documents), corpus.systems)


def pick_document(corpus: Corpus, min_readers: int = 3) -> int:
    return next(i for i, d in enumerate(corpus.documents) if len(d.summaries) >= min_readers)


def test_missing_drop_equals_deleting_the_reader():
    corpus = random_corpus(5)
    index = pick_document(corpus)
    summaries = {r: dict(s) for r, s in corpus.documents[index].summaries.items()}
    victim = list(summaries)[1]

    without_s1 = dict(summaries)
    without_s1[victim] = {k: v for k, v in summaries[victim].items() if k != "S1"}
    lacking = replace_document(corpus, index, without_s1)
    deleted = replace_document(corpus, index, {r: s for r, s in summaries.items() if r != victim})

    dropped = reference_scores(lacking, hashed_distance, missing="drop")
    assert_scores_equal({"S1": dropped["S1"]}, reference_scores(deleted, hashed_distance, systems=["S1"]), 0.0)
    assert_scores_equal({"S2": dropped["S2"]}, reference_scores(corpus, hashed_distance, systems=["S2"]), 0.0)

    # a non-string user summary counts as missing: the reader leaves every system
    no_user = dict(summaries)
    no_user[victim] = dict(summaries[victim], user=None)
    dropped = reference_scores(replace_document(corpus, index, no_user), hashed_distance, missing="drop")
    assert_scores_equal(dropped, reference_scores(deleted, hashed_distance), 0.0)


def test_missing_error_names_document_and_reader():
    corpus = random_corpus(5)
    index = pick_document(corpus)
    summaries = {r: dict(s) for r, s in corpus.documents[index].summaries.items()}
    victim = list(summaries)[2]
    summaries[victim].pop("S2")
    lacking = replace_document(corpus, index, summaries)
    doc_id = corpus.documents[index].doc_id
    with pytest.raises(DataError, match=rf'"{doc_id}".*"{victim}"'):
        reference_scores(lacking, hashed_distance)  # missing="error" is the default
    with pytest.raises(DataError, match=rf'"{doc_id}".*"{victim}"'):
        reference_scores(lacking, hashed_distance, systems=["S2"], missing="error")
    reference_scores(lacking, hashed_distance, systems=["S1"])  # S1 is complete


# ---------------------------------------------------------------------------------------------------------------
# PerSEval-HJ
# ---------------------------------------------------------------------------------------------------------------

HJ_READERS = ["a", "b", "c", "d"]


def hj_corpus(docs=("n1", "n2", "n3"), systems=("S1", "S2"), readers=HJ_READERS) -> Corpus:
    documents = tuple(
        Document(
            doc,
            f"head {doc}",
            f"body {doc}",
            {r: {"user": f"{doc} u {r}", **{s: f"{doc} {s} {r}" for s in systems}} for r in readers},
        )
        for doc in docs
    )
    return Corpus(documents, tuple(systems))


def hj_rating(doc: str, system: str, j: str, k: str) -> int:
    """A symmetric pseudo-random rating 1..6 of the pair {j, k}."""
    low, high = sorted((j, k))
    return 1 + zlib.crc32(f"{doc}|{system}|{low}|{high}".encode()) % 6


def hj_table(corpus: Corpus, systems=("S1", "S2"), ordered: bool = False) -> RatingTable:
    rows = []
    for document in corpus.documents:
        readers = list(document.summaries)
        for system in ("user", *systems):
            pairs = permutations(readers, 2) if ordered else [(j, k) for j, k in permutations(readers, 2) if j < k]
            for j, k in pairs:
                rows.append(
                    Rating(document.doc_id, system, j, k, hj_rating(document.doc_id, system, j, k), line=len(rows) + 2)
                )
    return RatingTable(tuple(rows), source="ratings.csv")


def aux(a: str, b: str) -> float:
    return hashed_distance(a, b)


def pair_table_distance(corpus: Corpus):
    """A distance that gives the rating-derived pair distances and the aux distance otherwise."""
    texts = {}
    for document in corpus.documents:
        for reader, summaries in document.summaries.items():
            for system, text in summaries.items():
                texts[text] = (document.doc_id, system, reader)

    def distance(a: str, b: str) -> float:
        if a in texts and b in texts and texts[a][0] == texts[b][0] and texts[a][1] == texts[b][1]:
            doc, system, j = texts[a]
            k = texts[b][2]
            return (6 - hj_rating(doc, system, j, k)) / 5
        return aux(a, b)

    return distance


@pytest.mark.parametrize("compat", [True, False])
def test_hj_with_complete_consistent_ratings_equals_the_distance_path(compat):
    corpus = hj_corpus()
    # compat keeps pairs as stored, so it needs both orders; default symmetrises one order
    ratings = hj_table(corpus, ordered=compat)
    hj = reference_hj_scores(corpus, ratings, aux, compat=compat)
    direct = reference_scores(corpus, pair_table_distance(corpus))
    assert_scores_equal({s: hj[s] for s in direct}, direct, 1e-12)
    for system in direct:
        assert hj[system]["rows"] == 3 * 12
        assert sum(hj[system]["skipped"].values()) == 0


def one_doc_corpus() -> Corpus:
    return hj_corpus(docs=("n1",), systems=("S",), readers=["a", "b", "c"])


def test_hj_unrated_pairs_are_absent_and_rows_are_weighted():
    corpus = one_doc_corpus()
    document = corpus.documents[0]
    ratings = RatingTable(
        (
            Rating("n1", "user", "a", "b", 2),
            Rating("n1", "user", "a", "c", 5),
            Rating("n1", "user", "b", "a", 3),
            Rating("n1", "user", "b", "c", 6),
            Rating("n1", "S", "a", "b", 4),
            Rating("n1", "S", "a", "c", 1),
            Rating("n1", "S", "b", "a", 2),
            Rating("n1", "S", "c", "b", 3),  # no user rating of (c, b): not a row
        )
    )
    result = reference_hj_scores(corpus, ratings, aux, compat=True)["S"]
    assert result["rows"] == 3
    assert result["skipped"]["no_user_pair"] == 1

    def dist(r):
        return round(1 - (int(r) - 1) / 5, 5)

    def d_u(j):
        return aux(document.summary(j, "user"), document.text)

    def d_s(j):
        return aux(document.summary(j, "S"), document.text)

    def weight(sigma, d):
        return 0.0 if d == 0 else sigma / d

    # user side: a's group {ab, ac}; b's group {ba, bc}. System side: a's group {ab, ac}; b's group {ba} alone.
    wu = {
        ("a", "b"): weight(dist(2), d_u("a")),
        ("a", "c"): weight(dist(5), d_u("a")),
        ("b", "a"): weight(dist(3), d_u("b")),
        ("b", "c"): weight(dist(6), d_u("b")),
    }
    ws = {("a", "b"): weight(dist(4), d_s("a")), ("a", "c"): weight(dist(1), d_s("a"))}
    x_ab = math.exp(wu[("a", "b")]) / (math.exp(wu[("a", "b")]) + math.exp(wu[("a", "c")])) * dist(2)
    x_ac = math.exp(wu[("a", "c")]) / (math.exp(wu[("a", "b")]) + math.exp(wu[("a", "c")])) * dist(5)
    x_ba = math.exp(wu[("b", "a")]) / (math.exp(wu[("b", "a")]) + math.exp(wu[("b", "c")])) * dist(3)
    y_ab = math.exp(ws[("a", "b")]) / (math.exp(ws[("a", "b")]) + math.exp(ws[("a", "c")])) * dist(4)
    y_ac = math.exp(ws[("a", "c")]) / (math.exp(ws[("a", "b")]) + math.exp(ws[("a", "c")])) * dist(1)
    y_ba = 1.0 * dist(2)

    def prop(y, x):
        return (min(y, x) + E) / (max(y, x) + E)

    deg_a = (prop(y_ab, x_ab) + prop(y_ac, x_ac)) / 2
    deg_b = prop(y_ba, x_ba)
    # EGISES: row-weighted (a has 2 rows, b has 1)
    assert result["degress"] == pytest.approx((2 * deg_a + deg_b) / 3, abs=1e-12)
    assert result["egises"] == pytest.approx(1 - (2 * deg_a + deg_b) / 3, abs=1e-12)
    # PerSEval: readers a and b (origins of rows), equally weighted
    acc = {j: aux(document.summary(j, "S"), document.summary(j, "user")) for j in "abc"}
    d_min = min(acc["a"], acc["b"])
    d_mean = (acc["a"] + acc["b"]) / 2
    adp = sigmoid_shift(4, 1, d_min / ((1 - d_min) + EPS))
    edp = {
        j: 1 - sigmoid_shift(3, 1, adp + sigmoid_shift(4, 1, (acc[j] - d_min) / ((d_mean - d_min) + EPS))) + EPS
        for j in "ab"
    }
    assert result["perseval"] == pytest.approx((deg_a * edp["a"] + deg_b * edp["b"]) / 2, abs=1e-12)
    assert result["accuracy"] == pytest.approx((acc["a"] + acc["b"]) / 2, abs=1e-15)
    assert result["egises_accuracy"] == pytest.approx((acc["a"] + acc["b"] + acc["c"]) / 3, abs=1e-15)


def with_rows(*rows) -> RatingTable:
    return RatingTable(tuple(row if isinstance(row, Rating) else Rating(*row) for row in rows))


BASE_HJ = [
    ("n1", "user", "a", "b", 2),
    ("n1", "user", "a", "c", 5),
    ("n1", "user", "b", "c", 4),
    ("n1", "user", "b", "a", 3),
    ("n1", "user", "c", "a", 1),
    ("n1", "user", "c", "b", 6),
    ("n1", "S", "a", "c", 1),
    ("n1", "S", "b", "a", 2),
    ("n1", "S", "b", "c", 5),
    ("n1", "S", "c", "a", 2),
    ("n1", "S", "c", "b", 4),
]


def hj_values(ratings, **options):
    result = reference_hj_scores(one_doc_corpus(), ratings, aux, **options)
    return {s: {k: v[k] for k in KEYS} for s, v in result.items()}


@pytest.mark.parametrize("compat", [True, False])
def test_hj_duplicate_ratings_are_averaged(compat):
    base = [row for row in BASE_HJ if row[1:4] != ("S", "b", "a")]  # {a, b} of S rated only below
    single = hj_values(with_rows(*base, ("n1", "S", "a", "b", 3)), compat=compat)
    duplicated = hj_values(with_rows(*base, ("n1", "S", "a", "b", 2), ("n1", "S", "a", "b", 4)), compat=compat)
    assert_scores_equal(duplicated, single, 1e-12)
    other = hj_values(with_rows(*base, ("n1", "S", "a", "b", 2)), compat=compat)
    assert not same(other["S"]["degress"], single["S"]["degress"])


def test_hj_compat_truncates_fractional_ratings():
    truncated = hj_values(with_rows(*BASE_HJ, ("n1", "S", "a", "b", 2.9)), compat=True)
    whole = hj_values(with_rows(*BASE_HJ, ("n1", "S", "a", "b", 2)), compat=True)
    assert_scores_equal(truncated, whole, 0.0)
    # the default mode is linear and unrounded: 2.9 is not 2
    fractional = hj_values(with_rows(*BASE_HJ, ("n1", "S", "a", "b", 2.9)), compat=False)
    assert not same(
        fractional["S"]["degress"],
        hj_values(with_rows(*BASE_HJ, ("n1", "S", "a", "b", 2)), compat=False)["S"]["degress"],
    )


def test_hj_default_is_symmetric_and_compat_is_not():
    one_way = with_rows(
        ("n1", "user", "a", "b", 2),
        ("n1", "user", "a", "c", 5),
        ("n1", "user", "b", "c", 4),
        ("n1", "S", "a", "b", 3),
        ("n1", "S", "a", "c", 1),
        ("n1", "S", "b", "c", 6),
    )
    both_ways = with_rows(*one_way.rows, *[Rating(r.doc_id, r.system, r.uid2, r.uid1, r.rating) for r in one_way.rows])
    default_one = reference_hj_scores(one_doc_corpus(), one_way, aux, compat=False)["S"]
    default_both = reference_hj_scores(one_doc_corpus(), both_ways, aux, compat=False)["S"]
    assert default_one["rows"] == default_both["rows"] == 6
    assert_scores_equal({"S": default_one}, {"S": default_both}, 1e-15)
    compat_one = reference_hj_scores(one_doc_corpus(), one_way, aux, compat=True)["S"]
    compat_both = reference_hj_scores(one_doc_corpus(), both_ways, aux, compat=True)["S"]
    assert (compat_one["rows"], compat_both["rows"]) == (3, 6)
    assert_scores_equal({"S": compat_both}, {"S": default_both}, 1e-12)  # integer ratings: same distances


def test_hj_default_scale():
    ratings = with_rows(*[(d, s, j, k, r) for d, s, j, k, r in BASE_HJ], ("n1", "S", "a", "b", 3))
    five = RatingTable(ratings.rows, scale_min=1, scale_max=5)
    assert_scores_equal(hj_values(five, compat=False), hj_values(ratings, compat=False, scale=(1, 5)), 0.0)
    assert not same(hj_values(five, compat=False)["S"]["degress"], hj_values(ratings, compat=False)["S"]["degress"])


def test_hj_unknown_reader_or_document_is_a_clear_error():
    with pytest.raises(DataError, match=r'document "n1", reader "zz"'):
        reference_hj_scores(one_doc_corpus(), with_rows(*BASE_HJ, ("n1", "S", "a", "zz", 3)), aux)
    with pytest.raises(DataError, match=r'document "n1", reader "zz"'):
        reference_hj_scores(one_doc_corpus(), with_rows(*BASE_HJ, ("n1", "user", "zz", "a", 3)), aux)
    with pytest.raises(DataError, match=r'document "nope"'):
        reference_hj_scores(one_doc_corpus(), with_rows(*BASE_HJ, ("nope", "S", "a", "b", 3)), aux)


def test_hj_default_systems_and_missing_system_summary():
    corpus = hj_corpus(docs=("n1",), systems=("S", "T"), readers=["a", "b", "c"])
    rows = list(BASE_HJ) + [("n1", "T", j, k, 3) for j, k in permutations("abc", 2)] + [("n1", "R", "a", "b", 3)]
    result = reference_hj_scores(corpus, with_rows(*rows), aux)
    assert list(result) == ["R", "S", "T"]  # sorted rated systems, "user" excluded
    # the dataset has no "R" summaries: no document distance for any origin
    assert result["R"]["rows"] == 0 and result["R"]["skipped"]["no_document_distance"] == 1
    assert math.isnan(result["R"]["degress"])
    assert result["T"]["rows"] == 6
    assert list(reference_hj_scores(corpus, with_rows(*rows), aux, systems=["T"])) == ["T"]


# ---------------------------------------------------------------------------------------------------------------
# The authors' distances (sec. 3): edge cases
# ---------------------------------------------------------------------------------------------------------------


def test_authors_rouge_l():
    assert authors_rouge_l("the cat sat on the mat", "the cat sat on the mat") == 0.0
    assert authors_rouge_l("cats running", "cat run") == 0.0  # Porter stemming
    assert authors_rouge_l("", "") == 1.0
    assert authors_rouge_l("", "a b") == 1.0
    assert authors_rouge_l("a b c", "a b d") == pytest.approx(1 - 0.66667, abs=1e-15)  # F rounded to 5 dp


def test_authors_bleu():
    assert authors_bleu("a b c d e", "a b c d e") == 0.0
    assert authors_bleu("a b", "a b") == 1.0  # fewer than 4 tokens: sys.float_info.min precisions -> ~1e-154
    assert authors_bleu("", "") == 1.0
    assert authors_bleu("", "a b c d") == 1.0
    assert authors_bleu("a b c d", "x y z w") == 1.0  # no unigram match -> 0
    # reference a, hypothesis b: a short hypothesis gets the brevity penalty exp(1 - r/c)
    assert authors_bleu("a b c d e f", "a b c d") == pytest.approx(1 - round(math.exp(1 - 6 / 4), 5), abs=1e-15)
    assert authors_bleu("a b c d e f", "a b c d") != authors_bleu("a b c d", "a b c d e f")
    # split(" "): a doubled space is an empty token
    assert authors_bleu("a b c d e", "a  b c d e") > 0.0


def test_authors_rouge_su4_is_contiguous_5gram_f1():
    assert authors_rouge_su4("a b c d e", "a b c d e") == 0.0
    assert authors_rouge_su4("a b c d", "a b c d") == 1.0  # no 5-gram at all
    assert authors_rouge_su4("", "") == 1.0
    assert authors_rouge_su4("a b c d e f", "a b c d e g") == pytest.approx(0.5, abs=1e-15)
    assert authors_rouge_su4("a b c d e", "a b c d  e") == 1.0  # the empty token breaks the only 5-gram
    # clipped matches: 2 x (x x x x x) against 1: P = 1/2, R = 1, F = 2/3
    assert authors_rouge_su4("x x x x x x", "x x x x x") == pytest.approx(1 - 0.66667, abs=1e-15)
    assert authors_rouge_su4("a c b d e", "a b c d e") == 1.0  # skip-bigrams would match; 5-grams do not


def test_authors_jsd():
    assert authors_jsd("a b c", "c b a") == 0.0
    assert authors_jsd("", "") == 0.0
    assert authors_jsd("   ", " ") == 0.0
    assert math.isnan(authors_jsd("", "a"))
    assert math.isnan(authors_jsd("a b", "  "))
    assert authors_jsd("a b", "c d") == 1.0
    assert authors_jsd("a b", "a c") == 0.5
    # P = (2/3, 1/3), Q = (1, 0): 0.5 * (0.118714 + 0.263034) = 0.190874 -> 0.1909
    assert authors_jsd("a a b", "a") == 0.1909
    assert authors_jsd("a", "a a b") == 0.1909
    assert authors_jsd("The cat.", "the cat") == 1.0  # no lower-casing, no punctuation stripping


# ---------------------------------------------------------------------------------------------------------------
# P-Acc (paper eq. 3)
# ---------------------------------------------------------------------------------------------------------------


def test_p_acc():
    def sig(x):
        return 1 / (1 + math.exp(-x))

    assert reference_p_acc(0.0, 0.0) == pytest.approx(1 - 0.5 * 0.5, abs=1e-15)
    assert reference_p_acc(0.65, 0.9) < 0  # the paper's example: Score_Acc 0.35, EGISES 0.9
    assert reference_p_acc(1.0, 1.0) == pytest.approx(-0.5 * sig(1), abs=1e-15)  # Score_Acc = 0: the limit
    assert round(reference_p_acc(1.0, 1.0), 2) == -0.37
    rng = random.Random(3)
    for _ in range(20):
        acc, eg, alpha, beta = rng.random(), rng.random(), rng.random(), rng.random()
        expected = (1 - acc) - alpha * sig(beta * eg)
        assert reference_p_acc(acc, eg, alpha, beta) == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# Row sampling (sec. 8)
# ---------------------------------------------------------------------------------------------------------------


def test_sample_row_indices_is_the_pandas_draw():
    import numpy as np

    assert sample_row_indices(10, 50, 7) == list(np.random.RandomState(7).choice(10, 5, replace=False))
    assert len(sample_row_indices(5, 50, 1)) == 2  # Python round: round(2.5) = 2
    assert sorted(sample_row_indices(12, 100, 3)) == list(range(12))  # 100 %: a permutation


def test_sampled_at_100_percent_equals_the_full_computation():
    corpus = random_corpus(8)
    full = reference_scores(corpus, hashed_distance)
    sampled = reference_sampled_scores(corpus, hashed_distance, 100, seed=5)
    assert_scores_equal({s: {k: v[k] for k in KEYS} for s, v in sampled.items()}, full, 1e-12)
    assert all(v["seed"] == 5 and v["egises_rows"] == v["perseval_rows"] == v["rows"] for v in sampled.values())
    sampled = reference_sampled_scores(corpus, hashed_distance, 40, seed=5)
    for values in sampled.values():
        assert values["egises_rows"] == round(0.4 * values["rows"])
    with pytest.raises(ValueError):
        reference_sampled_scores(corpus, hashed_distance, 40)


def test_sampled_draws_are_separate_and_edp_is_recomputed_on_the_sample():
    corpus = random_corpus(9)
    multi = [i for i, d in enumerate(corpus.documents) if len(d.summaries) >= 2]
    first, second = multi[0], multi[1]
    sizes = [len(d.summaries) * (len(d.summaries) - 1) for d in corpus.documents if len(d.summaries) >= 2]
    start_first = 0
    start_second = sum(sizes[:1])

    def draw(system, which, n_rows):
        if which == "egises":
            return range(start_first, start_first + sizes[0])  # all rows of the first multi-reader document
        return range(start_second, start_second + sizes[1])  # all rows of the second one

    sampled = reference_sampled_scores(corpus, hashed_distance, 50, draw=draw, systems=["S1"])["S1"]
    only_first = reference_scores(Corpus((corpus.documents[first],), corpus.systems), hashed_distance, systems=["S1"])[
        "S1"
    ]
    only_second = reference_scores(
        Corpus((corpus.documents[second],), corpus.systems), hashed_distance, systems=["S1"]
    )["S1"]
    assert sampled["egises"] == pytest.approx(only_first["egises"], abs=1e-12)
    assert sampled["egises_accuracy"] == pytest.approx(only_first["egises_accuracy"], abs=1e-12)
    assert sampled["perseval"] == pytest.approx(only_second["perseval"], abs=1e-12)
    assert sampled["accuracy"] == pytest.approx(only_second["accuracy"], abs=1e-12)

    # one row of reader j left in a document: d_min = d_mean = a_j, so EDP is the floor
    doc = corpus.documents[first]

    def one_row(system, which, n_rows):
        return [start_first]

    single = reference_sampled_scores(corpus, hashed_distance, 1, draw=one_row, systems=["S1"])["S1"]
    details = reference_details(Corpus((doc,), corpus.systems), hashed_distance, "S1")["documents"][0]
    j, _, p = details["rows"][0]
    a_j = details["accuracy"][j]
    adp = sigmoid_shift(4, 1, a_j / ((1 - a_j) + EPS))
    edp = 1 - sigmoid_shift(3, 1, adp + sigmoid_shift(4, 1, 0.0)) + EPS
    assert single["perseval"] == pytest.approx(p * edp, abs=1e-12)
    assert single["degress"] == pytest.approx(p, abs=1e-12)
