"""The report document: every section present, numbers equal to the studies they come from, seeded."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from metaeval.core.io.loaders import load_corpus, load_ratings
from metaeval.core.perseval import report, studies
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions, run_scores
from metaeval.core.stats import raters
from metaeval.core.stats.correlation import correlation_grid

ROOT = Path(__file__).resolve().parents[4]
DATASET = ROOT / "fixtures" / "demo" / "consolidated.jsonl"
RATINGS = ROOT / "fixtures" / "demo" / "ratings.csv"
PARAMS = Params(beta=1.7)


@pytest.fixture(scope="module")
def data() -> studies.StudyData:
    options = RunOptions(measures=["rouge_l", "jsd"], aux=["rouge_l"], params=PARAMS)
    return studies.prepare_study(load_corpus(DATASET), options, ratings=load_ratings(RATINGS))


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    with open(RATINGS, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def document(data, rows) -> dict:
    return report.build_report(data, params=PARAMS, seed=11, rating_rows=rows, n_boot=200, n_permutations=200,
                               stability_samples=3)


def test_every_section_is_present_and_strict_json(document) -> None:
    for key in ("parameters", "leaderboard", "correlations", "beta_ablation", "stability", "raters", "tables"):
        assert document[key], key
    for table in ("scores", "table_perseval", "table_egises", "table_p_acc", "correlations", "permutation_tests",
                  "beta_ablation", "borda_kendall", "rank_agreement", "stability", "stability_summary", "raters",
                  "rater_agreement"):
        assert document["tables"][table], table
    json.dumps(document, allow_nan=False)  # NaN/inf were turned into null


def test_leaderboard_and_scores_equal_the_run(document) -> None:
    result = run_scores(load_corpus(DATASET), RunOptions(measures=["rouge_l", "jsd"], aux=["rouge_l"], params=PARAMS),
                        ratings=load_ratings(RATINGS))
    expected = {(row["system"], row["measure"]): row["perseval"] for row in result.table()}
    got = {(row["system"], row["measure"]): row["value"] for row in document["leaderboard"]}
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-15)
    for row in document["leaderboard"]:
        if row["low"] is not None:
            assert row["low"] - 1e-12 <= row["value"] <= row["high"] + 1e-12


def test_correlations_equal_the_grid(document, data) -> None:
    scores = studies.score(data, PARAMS)
    auto = {m: {s: v.perseval for s, v in scores[m].items()} for m in ("rouge_l", "jsd")}
    human = {"hj:rouge_l": {s: v.perseval for s, v in scores["hj:rouge_l"].items()}}
    grid = {(c.auto_measure, c.hj_measure): c.correlation for c in correlation_grid(auto, human)}
    assert len(document["correlations"]) == 2 * 1 * 3
    for cell in document["correlations"]:
        expected = getattr(grid[(cell["auto_measure"], cell["hj_measure"])], cell["method"])
        assert cell["r"] == pytest.approx(expected, abs=1e-12)
        assert cell["low"] <= cell["r"] + 1e-12 and cell["r"] <= cell["high"] + 1e-12


def test_beta_ablation_has_eleven_points_per_pair(document) -> None:
    betas = sorted({row["beta"] for row in document["beta_ablation"]})
    assert betas == pytest.approx([1.0 + 0.1 * k for k in range(11)])
    assert len(document["beta_ablation"]) == 11 * 2 * 1


def test_stability_carries_both_definitions(document) -> None:
    assert {row["definition"] for row in document["stability"]} == {"paper", "authors"}
    assert {row["definition"] for row in document["tables"]["stability"]} == {"paper", "authors"}


def test_raters_match_the_rater_module(document, rows) -> None:
    items = {(row["doc_id"], row["system"], row["uid1"], row["uid2"]) for row in rows}
    identical = raters.identical_text_items(load_corpus(DATASET), items)
    overall = raters.overall_report(rows, n_boot=200, seed=11 + 6, identical=identical)
    assert document["raters"]["alpha"] == pytest.approx(overall["alpha"], abs=1e-15)
    assert len(document["raters"]["per_rater"]) == len({row["rater"] for row in rows})
    # three alphas, each with its interval; the one to quote is over units comparing two different texts
    alphas = {row["texts"]: row for row in document["raters"]["alphas"]}
    assert list(alphas) == ["all", "different", "identical"]
    for name, expected in (("all", overall), *((g, overall["texts"][g]) for g in ("different", "identical"))):
        assert (alphas[name]["alpha"], alphas[name]["low"], alphas[name]["high"]) == \
            (expected["alpha"], expected["low"], expected["high"])
    assert [row["texts"] for row in document["raters"]["alphas"] if row["quote"]] == ["different"]
    assert alphas["all"]["alpha"] > alphas["different"]["alpha"] + 0.15  # identical texts inflate agreement
    table = document["tables"]["rater_agreement"]
    assert [(row["scope"], row["texts"]) for row in table] == [
        (scope, texts) for scope in ("all", "study:demo") for texts in ("all", "different", "identical")
    ]


def test_bootstrap_discards_are_reported(document) -> None:
    summary = document["bootstrap_discarded"]
    assert summary["rule"] == "discard-sample" == document["parameters"]["missing_system"]
    assert summary["cells"] == len(document["tables"]["correlations"]) == 2
    assert summary["total"] == sum(row["n_discarded"] for row in document["tables"]["correlations"])
    for row in document["tables"]["correlations"]:
        assert row["missing_system"] == "discard-sample"
        assert row["pearson_n_valid"] + row["n_discarded"] <= row["n_boot"]


def test_two_sided_permutations_and_bad_settings(data, rows) -> None:
    document = report.build_report(data, params=PARAMS, seed=11, n_boot=50, n_permutations=50, stability_samples=2,
                                   permutation_alternative="two-sided", missing_system="drop-system")
    tests = document["tables"]["permutation_tests"]
    assert {(row["measure_a"], row["measure_b"]) for row in tests} == {("rouge_l", "jsd")}  # one unordered pair
    assert {row["alternative"] for row in tests} == {"two-sided"}
    assert document["parameters"]["permutation_alternative"] == "two-sided"
    assert document["bootstrap_discarded"]["rule"] == "drop-system" and document["bootstrap_discarded"]["total"] == 0
    for name, value in (("missing_system", "keep"), ("permutation_alternative", "less"), ("resample", "cells")):
        with pytest.raises(ValueError, match=f"{name} must be one of"):
            report.build_report(data, params=PARAMS, seed=1, n_boot=10, **{name: value})


def test_same_seed_same_report_other_seed_other_intervals(data, rows, document) -> None:
    again = report.build_report(data, params=PARAMS, seed=11, rating_rows=rows, n_boot=200, n_permutations=200,
                                stability_samples=3)
    assert again == document
    other = report.build_report(data, params=PARAMS, seed=12, rating_rows=rows, n_boot=200, n_permutations=200,
                                stability_samples=3)
    assert [c["low"] for c in other["correlations"]] != [c["low"] for c in document["correlations"]]
    assert other["parameters"]["seed"] == 12


def test_flat_rows_join_lists_and_nest_mappings() -> None:
    assert report._flat({"a": [1, 0.5], "b": {"c": 2}, "d": "x"}) == {"a": "1;0.5", "b.c": 2, "d": "x"}
    assert report.json_safe({"x": float("nan"), "y": [float("inf"), 1.0]}) == {"x": None, "y": [None, 1.0]}
