"""The OpenAI PerSEval-HJ variant (perseval-tmlr sec. 7; docs/conventions.md sec. 25): a hand-worked example and
the ratings file's ``file:line: field`` errors."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from metaeval.core.feedback.hj import (
    FeedbackRating,
    FeedbackTable,
    feedback_doc_pairs,
    load_feedback_ratings,
    plan_feedback,
)
from metaeval.core.io.corpus import Corpus, DataError, Document
from metaeval.core.io.fileio import ImportFileError
from metaeval.core.perseval.measure import Params, score_system

EPS_P, EPS_E = 1e-5, 1e-7  # the proportion's and EDP's epsilons (conventions sec. 4 and 6)

# Two articles, policies P and Q, r_max = 7 (differences divided by 6).
#   D1: annotators a, b with gold means 7 and 6.   P: a 4, b 7.   Q: a 7, b 6.
#   D2: annotators a, b, c with gold means 7, 6.5, 6.   P: a 7, b 5, c 6.   Q: a 7, c 3 (b did not rate Q).
# Each text is "<doc> <reader> <system>" so that the auxiliary distances below can be looked up by text.
GOLD = {"D1": {"a": 7.0, "b": 6.0}, "D2": {"a": 7.0, "b": 6.5, "c": 6.0}}
RATED = {("D1", "P"): {"a": 4.0, "b": 7.0}, ("D1", "Q"): {"a": 7.0, "b": 6.0},
         ("D2", "P"): {"a": 7.0, "b": 5.0, "c": 6.0}, ("D2", "Q"): {"a": 7.0, "c": 3.0}}
# sigma(u_j, d) and sigma(s_j, d) of the auxiliary measure X, chosen by hand
USER_DOC = {("D1", "a"): 0.4, ("D1", "b"): 0.8, ("D2", "a"): 0.5, ("D2", "b"): 0.25, ("D2", "c"): 1.0}
SYSTEM_DOC = {("D1", "P", "a"): 0.3, ("D1", "P", "b"): 0.6, ("D1", "Q", "a"): 0.2, ("D1", "Q", "b"): 0.9,
              ("D2", "P", "a"): 0.5, ("D2", "P", "b"): 0.5, ("D2", "P", "c"): 0.25,
              ("D2", "Q", "a"): 0.2, ("D2", "Q", "c"): 0.4}


def corpus() -> Corpus:
    documents = []
    for doc_id, gold in GOLD.items():
        summaries = {reader: {"user": f"{doc_id} {reader} user"} for reader in gold}
        for (doc, system), rated in RATED.items():
            if doc == doc_id:
                for reader in rated:
                    summaries[reader][system] = f"{doc_id} {reader} {system}"
        documents.append(Document(doc_id, "", f"{doc_id} text", summaries))
    return Corpus(tuple(documents), ("P", "Q"))


def table() -> FeedbackTable:
    rows = [FeedbackRating(doc, reader, system, rating, GOLD[doc][reader])
            for (doc, system), rated in RATED.items() for reader, rating in rated.items()]
    return FeedbackTable(tuple(rows), "ratings.csv", 7)


def aux() -> dict[tuple[str, str], float]:
    out = {(f"{d} {r} user", f" {d} text"): value for (d, r), value in USER_DOC.items()}
    out.update({(f"{d} {r} {s}", f" {d} text"): value for (d, s, r), value in SYSTEM_DOC.items()})
    return out


def S(x: float, a: float, b: float) -> float:  # S_{a,b}(x) = 1 / (1 + 10^a exp(-10^b x))
    return 1 / (1 + 10**a * math.exp(-(10**b) * x))


def by_hand(system: str, unit: float = 6.0) -> tuple[float, float, float]:
    """DEGRESS-HJ, EGISES-HJ and PerSEval-HJ written out from eq. 1-7 (conventions sec. 4-6), every pair present.

    X_jk = exp(s_jk / sigma(u_j, d)) / sum_{l != j} exp(s_jl / sigma(u_j, d)) * s_jk with s_jk = |rbar_j - rbar_k| / 6;
    Y_jk likewise from |r_j - r_k| / 6 and sigma(s_j, d); p_jk = (min + 1e-5) / (max + 1e-5); DEGRESS_j = mean_k
    p_jk; document = mean_j; system = mean over documents. a_j = |r_j - rbar_j| / 6; ADP = S_{4,1}(d_min / (1 -
    d_min + 1e-7)); ACP_j = S_{4,1}((a_j - d_min) / (d_mean - d_min + 1e-7)); EDP_j = 1 - S_{3,1}(ADP + ACP_j) +
    1e-7; PerSEval = mean over documents of mean_j DEGRESS_j * EDP_j.
    With two readers the softmax has one term, so X = s_ab: for D1 and P, X = 1/6, Y = 3/6 and
    p = (1/6 + 1e-5) / (3/6 + 1e-5) for both (a, b) and (b, a).
    """
    degress_docs, perseval_docs = [], []
    for doc_id in GOLD:
        rated = RATED[(doc_id, system)]
        readers = list(rated)
        gold = GOLD[doc_id]
        degress = {}
        for j in readers:
            others = [k for k in readers if k != j]
            su = {k: abs(gold[j] - gold[k]) / unit for k in others}
            ss = {k: abs(rated[j] - rated[k]) / unit for k in others}
            zx = sum(math.exp(su[k] / USER_DOC[(doc_id, j)]) for k in others)
            zy = sum(math.exp(ss[k] / SYSTEM_DOC[(doc_id, system, j)]) for k in others)
            ps = []
            for k in others:
                x = math.exp(su[k] / USER_DOC[(doc_id, j)]) / zx * su[k]
                y = math.exp(ss[k] / SYSTEM_DOC[(doc_id, system, j)]) / zy * ss[k]
                ps.append((min(x, y) + EPS_P) / (max(x, y) + EPS_P))
            degress[j] = sum(ps) / len(ps)
        degress_docs.append(sum(degress.values()) / len(degress))
        acc = {j: abs(rated[j] - gold[j]) / unit for j in readers}
        d_min, d_mean = min(acc.values()), sum(acc.values()) / len(acc)
        adp = S(d_min / (1 - d_min + EPS_E), 4, 1)
        values = [degress[j] * (1 - S(adp + S((acc[j] - d_min) / (d_mean - d_min + EPS_E), 4, 1), 3, 1) + EPS_E)
                  for j in readers]
        perseval_docs.append(sum(values) / len(values))
    degress_system = sum(degress_docs) / len(degress_docs)
    return degress_system, 1 - degress_system, sum(perseval_docs) / len(perseval_docs)


@pytest.mark.parametrize("system", ["P", "Q"])
def test_golden_degress_egises_perseval_hj(system: str) -> None:
    plan = plan_feedback(corpus(), table())
    docs, counts = feedback_doc_pairs(plan, system, aux(), scale_max=7)
    score = score_system(docs, Params())
    degress, egises, perseval = by_hand(system)
    assert score.degress == pytest.approx(degress, abs=1e-12)
    assert score.egises == pytest.approx(egises, abs=1e-12)
    assert score.perseval == pytest.approx(perseval, abs=1e-12)
    assert counts.rated_pairs == {"P": 2 + 6, "Q": 2 + 2}[system]
    d1 = next(detail for detail in score.per_document if detail.doc_id == "D1")
    if system == "P":  # the two-reader case in numbers: p = (1/6 + 1e-5) / (1/2 + 1e-5) for both pairs
        assert d1.degress == pytest.approx((1 / 6 + EPS_P) / (1 / 2 + EPS_P), abs=1e-15)
    # accuracy: pooled |r_j - rbar_j| / 6
    pooled = [abs(RATED[(d, system)][j] - GOLD[d][j]) / 6 for d in GOLD for j in RATED[(d, system)]]
    assert score.accuracy == pytest.approx(sum(pooled) / len(pooled), abs=1e-15)


def test_raw_scale_skips_the_division() -> None:
    plan = plan_feedback(corpus(), table())
    docs, _ = feedback_doc_pairs(plan, "P", aux(), scale_max=7, scale="raw")
    d1 = docs[0]
    assert d1.system_pairs[("a", "b")] == 3.0 and d1.user_pairs[("a", "b")] == 1.0 and d1.accuracy["a"] == 3.0
    assert score_system(docs).degress == pytest.approx(by_hand("P", unit=1.0)[0], abs=1e-12)
    normalised, _ = feedback_doc_pairs(plan, "P", aux(), scale_max=7)
    assert normalised[0].system_pairs[("a", "b")] == 0.5


def test_rows_follow_dataset_order_of_readers() -> None:
    plan = plan_feedback(corpus(), table())
    docs, _ = feedback_doc_pairs(plan, "P", aux(), scale_max=7)
    assert list(docs[1].system_pairs) == [("a", "b"), ("a", "c"), ("b", "a"), ("b", "c"), ("c", "a"), ("c", "b")]


def test_plan_checks_the_dataset() -> None:
    rows = (*table().rows, FeedbackRating("D3", "a", "P", 7, 7, line=9))
    with pytest.raises(DataError, match=r'ratings.csv:9: document "D3" is not in the dataset'):
        plan_feedback(corpus(), FeedbackTable(rows, "ratings.csv"))
    rows = (FeedbackRating("D2", "b", "Q", 7, 6.5, line=4),)
    with pytest.raises(DataError, match=r'ratings.csv:4: document "D2", reader "b" has no "Q" summary'):
        plan_feedback(corpus(), FeedbackTable(rows, "ratings.csv"))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_ratings_file_reads_and_refuses(tmp_path: Path) -> None:
    good = load_feedback_ratings(write(tmp_path, "doc_id,reader,system,rating,gold_mean\nD1,a,P,4.0,7.0\n"
                                       "D1,b,P,6.5,6\n"))
    assert [(r.doc_id, r.reader, r.system, r.rating, r.gold_mean, r.line) for r in good.rows] == [
        ("D1", "a", "P", 4.0, 7.0, 2), ("D1", "b", "P", 6.5, 6.0, 3)]
    with pytest.raises(ImportFileError) as info:
        load_feedback_ratings(write(tmp_path, "doc_id,reader,system,rating,gold_mean\nD1,a,P,8,7\nD1,a,P,4,7\n"
                                    "D1,a,P,5,7\nD1,a,Q,5,6\nD1,,user,x,7\n"))
    assert info.value.problems == [
        "r.csv:2: field \"rating\": '8' is not a number in 1..7",
        'r.csv:4: field "system": "P" rated again by reader "a" for doc_id "D1" (first at line 3)',
        'r.csv:5: field "gold_mean": 6.0 differs from 7.0 at line 3 (reader "a", doc_id "D1")',
        'r.csv:6: field "reader" must not be empty',
        "r.csv:6: field \"rating\": 'x' is not a number in 1..7",
        'r.csv:6: field "system": "user" is the combined gold, not a system',
    ]
    with pytest.raises(ImportFileError, match='r.csv:1: the header lacks "gold_mean"'):
        load_feedback_ratings(write(tmp_path, "doc_id,reader,system,rating\nD1,a,P,4\n"))


def test_the_scale_comes_from_the_file(tmp_path: Path) -> None:
    header = "doc_id,reader,system,rating,gold_mean,scale_max\n"
    five = load_feedback_ratings(write(tmp_path, header + "D1,a,P,4,5,5\nD1,b,P,2,5,5\n"))
    assert five.scale_max == 5
    plan = plan_feedback(Corpus((Document("D1", "", "t", {r: {"user": "u", "P": "p"} for r in "ab"}),), ("P",)),
                         five)
    docs, _ = feedback_doc_pairs(plan, "P", {("u", " t"): 0.5, ("p", " t"): 0.5}, scale_max=five.scale_max)
    assert docs[0].system_pairs[("a", "b")] == 0.5  # |4 - 2| / (5 - 1)
    assert load_feedback_ratings(write(tmp_path, header + "D1,a,P,4,5,5\n"), scale_max=5).scale_max == 5
    assert load_feedback_ratings(write(tmp_path, header.replace(",scale_max", "") + "D1,a,P,4,5\n"),
                                 scale_max=5).scale_max == 5
    assert load_feedback_ratings(write(tmp_path, header.replace(",scale_max", "") + "D1,a,P,4,5\n")).scale_max == 7
    with pytest.raises(ImportFileError) as info:
        load_feedback_ratings(write(tmp_path, header + "D1,a,P,4,5,5\n"), scale_max=7)
    assert info.value.problems == [
        'r.csv:2: field "scale_max": 5 differs from 7 (the scale given with --feedback-scale-max or on an earlier '
        "line)"]
    with pytest.raises(ImportFileError, match='r.csv:3: field "scale_max": 7 differs from 5'):
        load_feedback_ratings(write(tmp_path, header + "D1,a,P,4,5,5\nD1,b,P,4,5,7\n"))
    with pytest.raises(ImportFileError, match="r.csv:2: field \"scale_max\": '1.5' is not a whole number >= 2"):
        load_feedback_ratings(write(tmp_path, header + "D1,a,P,4,5,1.5\n"))
