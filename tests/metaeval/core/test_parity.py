"""The fast pipeline equals the straightforward pair-at-a-time reference (conventions sec. 2-7) to 1e-9.

The reference (:mod:`tests.reference.straightforward`) was written independently from the spec and calls the
authors' distance functions one pair at a time; the pipeline batches, deduplicates, caches and forks.
"""
from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from metaeval.core.io.corpus import Corpus, Document, Rating, RatingTable
from metaeval.core.io.loaders import load_corpus, load_ratings
from metaeval.core.measures.cache import DistanceCache
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions, run_scores
from tests.reference.straightforward import AUTHORS_DISTANCES, reference_hj_scores, reference_scores

DEMO = Path(__file__).resolve().parents[3] / "fixtures" / "demo"
KEYS = ("egises", "degress", "perseval", "accuracy", "egises_accuracy")


def assert_close(ours: dict, reference: dict, what: str) -> None:
    for key in KEYS:
        a, b = float(ours[key]), float(reference[key])
        assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9, f"{what} {key}: {a!r} != {b!r}"


@pytest.fixture(scope="module")
def demo() -> tuple[Corpus, RatingTable]:
    return load_corpus(DEMO / "consolidated.jsonl"), load_ratings(DEMO / "ratings.csv")


@pytest.mark.parametrize("measure", ["rouge_l", "jsd", "bleu4", "rouge_su4"])
def test_compat_scores_equal_the_reference_on_the_demo(demo, measure, tmp_path):
    corpus, _ = demo
    params = Params(beta=1.7)
    with DistanceCache(tmp_path) as cache:
        result = run_scores(corpus, RunOptions(measures=[measure], params=params, compat=True, workers=2), cache=cache)
    reference = reference_scores(corpus, AUTHORS_DISTANCES[measure], beta=1.7)
    assert {row.system for row in result.rows} == set(reference)
    for row in result.rows:
        assert_close(row.as_dict(), reference[row.system], f"{measure}/{row.system}")


@pytest.mark.parametrize("compat", [True, False])
def test_hj_scores_equal_the_reference_on_the_demo(demo, compat):
    corpus, ratings = demo
    options = RunOptions(measures=[], aux=["rouge_l"], params=Params(beta=1.7), compat=compat, workers=1)
    result = run_scores(corpus, options, ratings=ratings)
    aux = AUTHORS_DISTANCES["rouge_l"] if compat else _default_rouge_l()
    reference = reference_hj_scores(corpus, ratings, aux, compat=compat, beta=1.7)
    scores = reference.get("scores", reference) if isinstance(reference, dict) else reference
    hj_rows = [row for row in result.rows if row.measure == "hj:rouge_l"]
    assert len(hj_rows) == len(ratings.systems) == 10
    for row in hj_rows:
        assert_close(row.as_dict(), scores[row.system], f"hj/{row.system}")


def _default_rouge_l():
    from metaeval.core.measures.registry import get_measure

    return get_measure("rouge_l", compat=False)


def random_corpus(seed: int) -> Corpus:
    """Small corpora full of edge cases: empty and identical summaries, single-reader documents."""
    rng = random.Random(seed)
    vocab = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]
    docs = []
    for d in range(6):
        readers = {}
        for r in range(rng.choice([1, 2, 3, 4])):
            entry = {}
            for name in ("user", "A", "B", "C"):
                kind = rng.random()
                if kind < 0.1:
                    entry[name] = ""
                elif kind < 0.25 and name != "user":
                    entry[name] = "same words for every reader"
                else:
                    entry[name] = " ".join(rng.choices(vocab, k=rng.randint(1, 8)))
            readers[f"u{r}"] = entry
        body = " ".join(rng.choices(vocab, k=60))
        docs.append(Document(f"doc{d}", "a headline", body, readers))
    return Corpus(tuple(docs), ("A", "B", "C"))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("measure", ["rouge_l", "jsd", "bleu4", "rouge_su4"])
def test_compat_parity_on_edge_case_corpora(seed, measure):
    corpus = random_corpus(seed)
    result = run_scores(corpus, RunOptions(measures=[measure], compat=True, workers=1))
    reference = reference_scores(corpus, AUTHORS_DISTANCES[measure])
    for row in result.rows:
        assert_close(row.as_dict(), reference[row.system], f"{measure}/{row.system}/seed {seed}")


def test_missing_drop_equals_deleting_the_reader():
    corpus = random_corpus(3)
    first = corpus.documents[0]
    readers = dict(first.summaries)
    readers["gone"] = {"user": "only a user summary"}
    with_gap = Corpus(
        (Document(first.doc_id, first.headline, first.body, readers), *corpus.documents[1:]), corpus.systems
    )
    dropped = run_scores(with_gap, RunOptions(measures=["rouge_l"], compat=True, missing="drop", workers=1))
    plain = run_scores(corpus, RunOptions(measures=["rouge_l"], compat=True, workers=1))
    assert [row.as_dict() for row in dropped.rows] == [row.as_dict() for row in plain.rows]


def test_hj_parity_with_sparse_and_duplicate_ratings():
    corpus = random_corpus(1)
    rng = random.Random(5)
    rows = []
    for document in corpus.documents:
        uids = list(document.summaries)
        for _ in range(12):
            if len(uids) < 2:
                break
            j, k = rng.sample(uids, 2)
            rows.append(Rating(document.doc_id, rng.choice(["user", "A", "B", "C"]), j, k, rng.randint(1, 6)))
    ratings = RatingTable(tuple(rows), source="generated")
    for compat in (True, False):
        result = run_scores(corpus, RunOptions(measures=[], aux=["jsd"], compat=compat, workers=1), ratings=ratings)
        from metaeval.core.measures.registry import get_measure

        reference = reference_hj_scores(corpus, ratings, get_measure("jsd", compat=compat), compat=compat)
        scores = reference.get("scores", reference)
        for row in result.rows:
            assert_close(row.as_dict(), scores[row.system], f"hj jsd compat={compat} {row.system}")
