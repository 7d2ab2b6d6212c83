"""The demo fixture as a study (lexical measures only), shared by the tests of metaeval.core.perseval.studies."""
from __future__ import annotations

import pytest

from metaeval.core.io.loaders import load_corpus, load_ratings
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.core.perseval.studies import StudyData, prepare_study
from tests.metaeval.core.perseval.studies.hand_case import BETA, DEMO


@pytest.fixture(scope="module")
def demo():
    return load_corpus(DEMO / "consolidated.jsonl"), load_ratings(DEMO / "ratings.csv")


@pytest.fixture(scope="module")
def demo_options():
    return RunOptions(measures=["rouge_l", "jsd"], aux=["rouge_l"], params=Params(beta=BETA), workers=1)


@pytest.fixture(scope="module")
def demo_data(demo, demo_options) -> StudyData:
    corpus, ratings = demo
    return prepare_study(corpus, demo_options, ratings=ratings)
