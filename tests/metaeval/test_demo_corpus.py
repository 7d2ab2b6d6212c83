"""The demo corpus teaches: it is the output of scripts/make_demo.py, its systems spread over personalization and
accuracy, and its report shows measures that disagree (Table 2 not all 1), an interval that excludes 0 and a beta
ablation that moves.

Lexical measures only (no model, no WordNet). The ratings' side (the careless raters, the database load) is
tests/survey/test_demo.py.
"""
from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from metaeval.core.io.loaders import load_corpus, load_ratings
from metaeval.core.perseval import studies
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.core.stats import resampling
from metaeval.core.stats.correlation import correlation_grid

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "demo"
MEASURES = ["rouge_l", "rouge_su4", "bleu4", "jsd"]
AUX = ["rouge_l", "rouge_su4", "jsd"]
PARAMS = Params(beta=1.7)


def make_demo():
    """scripts/make_demo.py as a module (scripts/ is not a package)."""
    if "make_demo" not in sys.modules:
        spec = importlib.util.spec_from_file_location("make_demo", ROOT / "scripts" / "make_demo.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["make_demo"] = module  # before running it: its dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules["make_demo"]


@pytest.fixture(scope="module")
def data() -> studies.StudyData:
    options = RunOptions(measures=MEASURES, aux=AUX, params=PARAMS, workers=1)
    return studies.prepare_study(load_corpus(DEMO / "consolidated.jsonl"), options,
                                 ratings=load_ratings(DEMO / "ratings.csv"))


@pytest.fixture(scope="module")
def scores(data) -> studies.Scores:
    return studies.score(data, PARAMS)


# --------------------------------------------------------------------------------------------- the generator


def test_the_generator_is_deterministic_and_made_the_committed_texts() -> None:
    generator = make_demo()
    made = generator.texts()
    assert made == generator.texts()  # the same seed, the same files
    for name in ("consolidated.jsonl", "systems.json"):
        assert made[name] == (DEMO / name).read_text(encoding="utf-8"), f"{name}: run scripts/make_demo.py"
    other = generator.texts(seed=7)
    assert other["consolidated.jsonl"] != made["consolidated.jsonl"]  # the seed matters...
    assert other["systems.json"] == made["systems.json"]  # ...to the texts only


def test_the_systems_follow_their_design() -> None:
    """Each system's share of reader-specific headlines is its personalization degree; at most two are generic."""
    generator = make_demo()
    documents = [json.loads(line) for line in (DEMO / "consolidated.jsonl").read_text().splitlines()]
    sources = {doc["doc_id"]: doc for doc in generator.load_sources()}
    systems = json.loads((DEMO / "systems.json").read_text())
    assert [s["name"] for s in systems] == [s.name for s in generator.SYSTEMS] == \
        [name for name in documents[0]["m_summary_dict"]["U05"] if name != "user"]
    slots = sum(len(doc["m_summary_dict"]) for doc in documents)
    degrees = []
    for system in systems:
        design = system["design"]
        shared = sum(
            text == generator.STYLES[design["style"]](sources[doc["doc_id"]]["shared"][design["shared"]])
            for doc in documents for text in (m[system["name"]] for m in doc["m_summary_dict"].values())
        )
        # a reader-specific headline may coincide with the shared one (an extract of the lead sentence)
        assert slots - shared == pytest.approx(design["personalization"] * slots, abs=1), system["name"]
        degrees.append(design["personalization"])
    assert sum(d == 0 for d in degrees) <= 2 and len(set(degrees)) >= 5
    generic = [doc for doc in documents if all(len({m[s["name"]] for m in doc["m_summary_dict"].values()}) == 1
                                               for s in systems if s["design"]["personalization"] == 0)]
    assert generic == documents  # the generic systems give every reader of a document the same headline


# --------------------------------------------------------------------------------------------- what the report shows


def test_perseval_spreads_over_the_systems(scores) -> None:
    values = sorted((score.perseval for score in scores["rouge_l"].values()), reverse=True)
    assert values[0] > 0.45 and sum(v > 0.1 for v in values) >= 6  # most systems are visible on the leaderboard
    assert len({round(v, 2) for v in values if v > 0.1}) == sum(v > 0.1 for v in values)  # and differ
    egises = [score.egises for score in scores["rouge_l"].values()]
    assert sum(e > 0.99 for e in egises) <= 2 and min(egises) < 0.1 and any(0.3 < e < 0.7 for e in egises)


def test_table_2_differs_between_measures(scores) -> None:
    """The old demo gave r = 1.00 in every cell; now the cells differ, and every one is still positive."""
    auto = {m: {s: v.perseval for s, v in scores[m].items()} for m in MEASURES}
    human = {f"hj:{a}": {s: v.perseval for s, v in scores[f"hj:{a}"].items()} for a in AUX}
    pearson = [cell.as_dict()["pearson"] for cell in correlation_grid(auto, human)]
    assert len(pearson) == len(MEASURES) * len(AUX)
    assert all(0 < r < 1 for r in pearson)
    assert sum(round(r, 2) < 1 for r in pearson) >= len(pearson) // 2
    assert max(pearson) - min(pearson) > 0.15


def test_a_bootstrap_interval_excludes_zero_and_another_is_wide(scores) -> None:
    def cell(auto: str, human: str) -> dict:
        _, _, values, weights = resampling.align(studies.document_matrix(scores, auto),
                                                 studies.document_matrix(scores, human))
        return resampling.correlation_with_ci(values[0], values[1], n_boot=300, seed=2026,
                                              auto_weights=weights[0], human_weights=weights[1])

    same = cell("rouge_l", "hj:rouge_l")
    assert 0.9 < same["pearson_low"] <= same["pearson"] <= same["pearson_high"]
    across = cell("bleu4", "hj:rouge_l")
    assert across["pearson_high"] - across["pearson_low"] > 0.3


def test_the_beta_ablation_moves(data) -> None:
    rows = studies.beta_ablation(data, betas=[1.0, 1.5, 2.0])
    curves: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        curves.setdefault((row["auto_measure"], row["hj_measure"]), []).append(row["pearson"])
    spans = {key: max(values) - min(values) for key, values in curves.items()}
    assert all(not math.isnan(span) for span in spans.values())
    assert max(spans.values()) > 0.03  # the old demo's curves were flat at 1
    # and beta changes the systems themselves, not only the correlations
    low, high = (studies.score(data, Params(beta=b))["rouge_l"] for b in (1.0, 2.0))
    assert max(low[s].perseval - high[s].perseval for s in low) > 0.05
