"""metaeval.core.measures.distances and cache: each unique pair computed once, cached across runs, parallel = serial."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from metaeval.core.io.corpus import Corpus, DataError, Document
from metaeval.core.measures.base import Measure
from metaeval.core.measures.cache import DistanceCache
from metaeval.core.measures.distances import (
    compute,
    compute_many,
    corpus_doc_pairs,
    evaluate,
    evaluate_many,
    plan_corpus,
)


class LengthGap(Measure):
    """|len(a) - len(b)| / max(len) (NaN when both are empty); counts the pairs it is asked for."""

    name = "length_gap"

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale
        self.seen: list[tuple[str, str]] = []

    @property
    def options(self):
        return {"scale": self.scale}

    def distances(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.seen.extend(pairs)
        out = []
        for a, b in pairs:
            top = max(len(a), len(b))
            out.append(math.nan if top == 0 else abs(len(a) - len(b)) / top / self.scale)
        return np.array(out)


def corpus() -> Corpus:
    docs = (
        Document("d1", "Head", "Body one", {
            "r1": {"user": "aa", "S": "a", "T": "a"},
            "r2": {"user": "bbb", "S": "b", "T": "a"},
            "r3": {"user": "", "S": "cc", "T": "a"},
        }),
        Document("d2", "Head", "Body two", {"r1": {"user": "x", "S": "yy", "T": "z"}}),
    )
    return Corpus(docs, ("S", "T"))


def test_plan_lists_each_needed_pair_once_and_skips_single_reader_documents():
    plan = plan_corpus(corpus())
    assert [d.doc_id for d in plan.systems["S"]] == ["d1"]
    pairs = plan.text_pairs()
    assert len(pairs) == len(set(pairs))
    doc = "Head Body one"
    # sigma(summary, document) argument order, sigma(system, user) for accuracy
    assert ("aa", doc) in pairs and ("a", doc) in pairs and ("a", "aa") in pairs
    # T gives the same summary "a" to every reader: (a, a) appears once although needed six times
    assert pairs.count(("a", "a")) == 1


def test_doc_pairs_follow_permutation_order():
    plan = plan_corpus(corpus(), ["S"])
    measure = LengthGap()
    distance, _ = compute(measure, plan.text_pairs())
    [doc] = corpus_doc_pairs(plan, "S", distance)
    assert list(doc.user_pairs) == [("r1", "r2"), ("r1", "r3"), ("r2", "r1"), ("r2", "r3"), ("r3", "r1"), ("r3", "r2")]
    assert doc.user_pairs[("r1", "r2")] == pytest.approx(1 / 3)
    assert doc.accuracy["r3"] == 1.0  # |2 - 0| / 2


def test_missing_summary_is_an_error_naming_document_and_reader_or_dropped():
    docs = (
        Document("d1", "H", "B", {"r1": {"user": "a", "S": "b"}, "r2": {"user": "c"}, "r3": {"user": "d", "S": "e"}}),
    )
    with pytest.raises(DataError, match='document "d1", reader "r2": no "S" summary'):
        plan_corpus(Corpus(docs, ("S",)))
    plan = plan_corpus(Corpus(docs, ("S",)), missing="drop")
    assert plan.systems["S"][0].readers == ["r1", "r3"]


def test_cache_serves_a_second_run_and_keys_on_options(tmp_path):
    pairs = [("a", "bb"), ("", ""), ("ccc", "c")]
    with DistanceCache(tmp_path) as cache:
        first, stats = compute(LengthGap(), pairs, cache=cache)
        assert (stats.computed, stats.cached) == (3, 0)
        measure = LengthGap()
        second, stats = compute(measure, pairs, cache=cache)
        assert (stats.computed, stats.cached) == (0, 3) and measure.seen == []
        assert math.isnan(second[("", "")])  # NaN survives the round trip
        assert {k: v for k, v in second.items() if k != ("", "")} == {k: v for k, v in first.items() if k != ("", "")}
        other = LengthGap(scale=2)
        third, stats = compute(other, pairs, cache=cache)
        assert stats.computed == 3 and third[("a", "bb")] == first[("a", "bb")] / 2
    with DistanceCache(tmp_path) as reopened:
        assert reopened.count() == 6


def test_a_changed_text_misses_the_cache(tmp_path):
    with DistanceCache(tmp_path) as cache:
        compute(LengthGap(), [("a", "bb")], cache=cache)
        measure = LengthGap()
        compute(measure, [("a", "bb "), ("a", "bb")], cache=cache)
        assert measure.seen == [("a", "bb ")]


def test_parallel_evaluation_equals_serial(monkeypatch):
    import metaeval.core.measures.distances as distances

    monkeypatch.setattr(distances, "PARALLEL_THRESHOLD", 10)
    rng = np.random.default_rng(7)
    texts = ["x" * int(n) for n in rng.integers(0, 30, size=40)]
    pairs = [(texts[i], texts[j]) for i in range(40) for j in range(0, 40, 3)]
    serial = evaluate(LengthGap(), pairs, workers=1)
    parallel = evaluate(LengthGap(), pairs, workers=2)
    np.testing.assert_array_equal(serial, parallel)


def _pairs(seed: int, size: int = 40) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    texts = ["x" * int(n) for n in rng.integers(0, 30, size=size)]
    return [(texts[i], texts[j]) for i in range(size) for j in range(0, size, 3)]


def test_several_measures_share_one_pool_and_come_back_in_order(monkeypatch):
    """evaluate_many: every job equals its serial evaluation, in job order; a small job and a job of a measure
    that does not run in workers are evaluated here; on_start runs once, before the first result is awaited."""
    import metaeval.core.measures.distances as distances

    monkeypatch.setattr(distances, "PARALLEL_THRESHOLD", 10)
    here = LengthGap(scale=3)
    here.parallel = False  # type: ignore[attr-defined]
    jobs = [(LengthGap(), _pairs(1)), (here, _pairs(2)), (LengthGap(scale=2), _pairs(3)), (LengthGap(), _pairs(4)[:3]),
            (LengthGap(), [])]
    events: list[str] = []
    results = evaluate_many(jobs, workers=2, on_start=lambda: events.append("started"))
    for (measure, pairs), got in zip(jobs, results, strict=True):
        events.append("result")
        np.testing.assert_array_equal(got, evaluate(type(measure)(measure.scale), pairs, workers=1))
    assert events == ["started"] + ["result"] * len(jobs)
    assert here.seen == jobs[1][0].seen and len(here.seen) == len(jobs[1][1])  # evaluated in this process
    assert jobs[0][0].seen == []  # evaluated in the forked workers


def test_a_pool_closed_early_stops_its_workers(monkeypatch):
    import multiprocessing

    import metaeval.core.measures.distances as distances

    monkeypatch.setattr(distances, "PARALLEL_THRESHOLD", 10)
    results = evaluate_many([(LengthGap(), _pairs(5)), (LengthGap(), _pairs(6))], workers=2)
    next(results)
    assert multiprocessing.active_children()
    results.close()  # what run_scores does when scoring fails half-way
    assert not multiprocessing.active_children() and distances._FORK_WORK == []


def test_compute_many_reads_the_cache_then_computes_the_rest_in_one_pool(tmp_path, monkeypatch):
    import metaeval.core.measures.distances as distances

    monkeypatch.setattr(distances, "PARALLEL_THRESHOLD", 10)
    pairs = list(dict.fromkeys(_pairs(8)))
    calls: list[int] = []

    def digests():
        calls.append(1)
        from metaeval.core.measures.cache import pair_digests

        return pair_digests(pairs)

    with DistanceCache(tmp_path) as cache:
        compute(LengthGap(scale=2), pairs[:7], cache=cache)  # the second measure has 7 pairs stored
        first, second = LengthGap(), LengthGap(scale=2)
        out = list(compute_many([first, second], pairs, cache=cache, workers=2, digests=digests, store_later=True))
        cache.flush()
        assert calls == [1]  # the digests taken once for both measures
        assert [stat.cached for _, stat in out] == [0, 7] and [stat.computed for _, stat in out] == [len(pairs),
                                                                                                   len(pairs) - 7]
        for measure, (values, _) in zip((LengthGap(), LengthGap(scale=2)), out, strict=True):
            np.testing.assert_array_equal(values, evaluate(measure, pairs, workers=1))
        again = list(compute_many([LengthGap(), LengthGap(scale=2)], pairs, cache=cache, workers=2))
        assert [stat.cached for _, stat in again] == [len(pairs)] * 2
        np.testing.assert_array_equal(again[0][0], out[0][0])
    assert list(compute_many([LengthGap()], pairs[:5], digests=digests)) and calls == [1]  # no cache: no digests


def test_systems_scored_in_worker_processes_equal_the_serial_scores(monkeypatch):
    """score_systems forks per system on a large corpus: the same SystemScore, detail included, as one process."""
    import metaeval.core.measures.distances as distances
    from metaeval.core.perseval.measure import Params, score_system

    monkeypatch.setattr(distances, "SCORING_PARALLEL_THRESHOLD", 1)
    rng = np.random.default_rng(11)
    docs = []
    for index in range(12):
        readers = [f"r{n}" for n in range(int(rng.integers(2, 5)))]
        summaries = {r: {"user": "u" * int(rng.integers(1, 9)), "S": "s" * int(rng.integers(0, 9)),
                         "T": "t" * int(rng.integers(1, 9))} for r in readers}
        docs.append(Document(f"d{index}", "Head", "b" * int(rng.integers(5, 40)), summaries))
    plan = plan_corpus(Corpus(tuple(docs), ("S", "T")))
    distance, _ = compute(LengthGap(), plan.text_pairs(), workers=1)
    params = Params(beta=1.7)
    seen: dict[str, int] = {}
    parallel = distances.score_systems(plan, distance, params, workers=2,
                                       collect=lambda system, d: seen.__setitem__(system, len(d)))
    assert list(parallel) == ["S", "T"] and seen == {"S": 12, "T": 12}
    for system in ("S", "T"):
        serial = score_system(corpus_doc_pairs(plan, system, distance), params)
        assert repr(parallel[system]) == repr(serial)  # every float bit for bit, NaN included
