"""Raters per questionnaire from pilot ratings (conventions sec. 27.6), on the demo fixtures."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from metaeval.core.io.corpus import RatingTable
from metaeval.core.io.loaders import load_corpus, load_ratings, ratings_from_rows
from metaeval.core.perseval.pipeline import RunOptions, run_scores
from metaeval.core.planning.hj_power import COLUMNS, hj_power, rater_groups
from metaeval.core.stats.correlation import correlate

DEMO = Path(__file__).resolve().parents[4] / "fixtures" / "demo"
OPTIONS = RunOptions(measures=["jsd"], aux=["rouge_l"], workers=1)


@pytest.fixture(scope="module")
def demo() -> tuple:
    with open(DEMO / "ratings.csv", newline="", encoding="utf-8") as handle:
        extras = list(csv.DictReader(handle))
    return load_corpus(DEMO / "consolidated.jsonl"), load_ratings(DEMO / "ratings.csv"), extras


def test_questionnaires_and_their_raters(demo: tuple) -> None:
    _, ratings, extras = demo
    groups = rater_groups(ratings, extras)
    assert len(groups) == 132
    assert sorted(len(raters) for raters in groups).count(1) == 72 and max(len(r) for r in groups) == 2
    assert sum(len(rows) for raters in groups for rows in raters) == len(ratings.rows)
    first = groups[0]  # questionnaire 0: raters P1 and P13, six ratings each
    assert [{row.rater for row in rows} for rows in first] == [{"P1"}, {"P13"}] and len(first[0]) == 6
    with pytest.raises(ValueError):
        rater_groups(ratings, extras[:-1])


def test_a_pilot_with_one_rater_per_questionnaire_is_scored_as_run_scores_scores_it(demo: tuple) -> None:
    corpus, ratings, extras = demo
    keep, seen = [], {}
    for index, row in enumerate(extras):  # the first rater of each questionnaire only
        if seen.setdefault(row["questionnaire"], row["rater"]) == row["rater"]:
            keep.append(index)
    single = ratings_from_rows([extras[i] for i in keep], source="single")
    single_extras = [extras[i] for i in keep]
    result = hj_power(corpus, single, single_extras, OPTIONS, raters=[1, 2], replicates=3, n_boot=50, seed=5)
    assert result.single_rater_questionnaires == result.questionnaires == 132
    run = run_scores(corpus, OPTIONS, ratings=single)
    scores = run.scores("perseval")
    systems = sorted(scores["hj:rouge_l"])
    expected = correlate([scores["jsd"][s] for s in systems], [scores["hj:rouge_l"][s] for s in systems])
    for row in result.rows:
        assert tuple(row) == COLUMNS
        # every replicate is the pilot itself: the estimate is run_scores' correlation
        assert row["estimate_mean"] == pytest.approx(getattr(expected, str(row["method"])), abs=1e-12)
        assert row["p_excludes_zero"] in (0.0, 1.0) and row["valid"] == 3


def test_demo_pilot_resampled(demo: tuple) -> None:
    corpus, ratings, extras = demo
    result = hj_power(corpus, ratings, extras, OPTIONS, raters=[1, 3], replicates=4, n_boot=60, seed=11)
    assert [(row["raters"], row["method"]) for row in result.rows] == [
        (k, m) for k in (1, 3) for m in ("pearson", "spearman", "kendall")]
    for row in result.rows:
        assert row["auto_measure"] == "jsd" and row["hj_measure"] == "hj:rouge_l"
        assert 0 < row["expected_width"] <= 2 and 0 <= row["p_excludes_zero"] <= 1  # type: ignore[operator]
    again = hj_power(corpus, ratings, extras, OPTIONS, raters=[3], replicates=4, n_boot=60, seed=11)
    assert again.rows == result.rows[3:]  # one count's figures do not depend on the others asked for
    other = hj_power(corpus, ratings, extras, OPTIONS, raters=[3], replicates=4, n_boot=60, seed=12)
    assert other.rows != again.rows


def test_resampled_table_keeps_the_items_and_draws_raters_within_questionnaires(demo: tuple) -> None:
    from metaeval.core.planning.hj_power import _resample

    _, ratings, extras = demo
    groups = rater_groups(ratings, extras)
    table = _resample(groups, 2, np.random.default_rng(0), ratings)
    assert isinstance(table, RatingTable)
    items = {(r.doc_id, r.system, r.uid1, r.uid2) for r in ratings.rows}
    assert {(r.doc_id, r.system, r.uid1, r.uid2) for r in table.rows} == items
    assert len(table.rows) == 2 * sum(len(raters[0]) for raters in groups)


def test_needs_both_kinds_of_measure(demo: tuple) -> None:
    corpus, ratings, extras = demo
    with pytest.raises(ValueError, match="automatic measure"):
        hj_power(corpus, ratings, extras, RunOptions(measures=["jsd"], aux=[]), raters=[1], seed=0)
    with pytest.raises(ValueError, match="at least 1"):
        hj_power(corpus, ratings, extras, OPTIONS, raters=[0], seed=0)

