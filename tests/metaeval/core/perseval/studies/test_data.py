"""metaeval.core.perseval.studies: StudyData, prepare_study and score: rescoring equals the run."""
from __future__ import annotations

import pytest

from metaeval.core.perseval.measure import Params, score_system
from metaeval.core.perseval.pipeline import run_scores
from metaeval.core.perseval.studies import score
from tests.metaeval.core.perseval.studies.hand_case import Y, hand_value, proportion, tiny_data


def test_prepare_study_keeps_the_run_and_rescoring_is_identical(demo, demo_options, demo_data):
    corpus, ratings = demo
    independent = run_scores(corpus, demo_options, ratings=ratings)  # no collect hook
    assert demo_data.result.table() == independent.table()  # the hook changes nothing (no NaN in the demo)
    assert demo_data.measures == ["rouge_l", "jsd"] and demo_data.hj == ["hj:rouge_l"]
    assert demo_data.doc_ids == [d.doc_id for d in corpus.documents]
    rescored = score(demo_data)
    assert list(rescored) == ["rouge_l", "jsd", "hj:rouge_l"]
    for row in independent.rows:
        ours = rescored[row.measure][row.system]
        assert repr(ours) == repr(row.score), f"{row.measure}/{row.system}"  # bit for bit, details included
        assert ours.per_document and ours.per_reader


def test_rescoring_other_params_equals_score_system_on_the_same_docpairs(demo_data):
    params = Params(alpha=2.0, beta=1.3, gamma=3.0, simplified=True)
    rescored = score(demo_data, params)
    for label in ("jsd", "hj:rouge_l"):
        for system, docs in demo_data.docs[label].items():
            assert repr(rescored[label][system]) == repr(score_system(docs, params))
    assert rescored["jsd"]["PersonaPointer"].perseval != score(demo_data)["jsd"]["PersonaPointer"].perseval


def test_score_on_the_hand_case():
    scores = score(tiny_data())
    for system in Y:
        expected = (hand_value(system, 0) + hand_value(system, 1)) / 2
        assert scores["m"][system].perseval == pytest.approx(expected, abs=1e-15)
        assert scores["m"][system].egises == pytest.approx(
            1 - (proportion(Y[system][0], 0.5) + proportion(Y[system][1], 0.5)) / 2, abs=1e-15)
