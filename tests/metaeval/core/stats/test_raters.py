"""Tests for metaeval.core.stats.raters: the per-rater quality report, the overall alpha report (by study and by text
group) and rater exclusion."""
from __future__ import annotations

import csv
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from metaeval.core.io.corpus import Corpus, Document, RatingTable
from metaeval.core.io.loaders import load_corpus, load_ratings, ratings_from_rows
from metaeval.core.stats.raters import (
    RaterQuality,
    exclude_raters,
    identical_text_items,
    overall_report,
    parse_time,
    rater_report,
)

DEMO = Path(__file__).resolve().parents[4] / "fixtures" / "demo" / "ratings.csv"
DEMO_CORPUS = DEMO.parent / "consolidated.jsonl"
NAN = np.nan
SCALE = list(range(1, 7))


# --------------------------------------------------------------------------------------------------------------
# Reports on crafted rows
# --------------------------------------------------------------------------------------------------------------

BASE = [1, 2, 3, 4, 5, 6, 2, 3, 5, 6, 1, 4]  # 12 items: 4 documents x 3 systems
SYSTEMS = ("s1", "s2", "s3")
T0 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)


def crafted_rows() -> list[dict[str, object]]:
    """Raters A and B agree (B is off by one on two items), C reverses the scale (7 - A), D rates every item of
    a questionnaire the same. A questionnaire is one document (reader pair U1, U2) with its three systems."""
    values = {
        "A": BASE,
        "B": [v + (1 if i in (2, 7) else 0) for i, v in enumerate(BASE)],
        "C": [7 - v for v in BASE],
        "D": [3, 3, 3, 5, 5, 5, 2, 2, 2, 6, 6, 6],
    }
    rows: list[dict[str, object]] = []
    for r, (rater, ratings) in enumerate(values.items()):
        for doc in range(4):
            claimed = T0 + timedelta(hours=r, minutes=10 * doc)
            completed = claimed + timedelta(seconds=60 * (doc + 1))
            for s, system in enumerate(SYSTEMS):
                rows.append({
                    "doc_id": f"D{doc}", "system": system, "uid1": "U1", "uid2": "U2",
                    "rating": str(ratings[3 * doc + s]), "rater": rater, "study": "crafted",
                    "questionnaire": str(doc), "shown_position": str(2 - s), "swapped": "0",
                    "claimed_at": claimed.isoformat(), "completed_at": completed.isoformat(),
                    "rated_at": completed.isoformat(),
                })
    return rows


def by_rater(report: list[RaterQuality]) -> dict[str, dict[str, object]]:
    return {line.rater: line.as_dict() for line in report}


def test_rater_report_on_crafted_rows() -> None:
    rows = crafted_rows()
    report = by_rater(rater_report(rows))
    assert list(report) == ["A", "B", "C", "D"]
    a, c, d = report["A"], report["C"], report["D"]
    assert (a["n_ratings"], a["n_questionnaires"], a["n_shared_items"], a["studies"]) == (12, 4, 12, ["crafted"])
    # Times: questionnaire k of every rater took 60 * (k + 1) s -> median of 60, 120, 180, 240 = 150.
    assert a["median_seconds"] == 150.0 and a["n_timed"] == 4
    # Straight-lining: D gave one value per questionnaire, the others never did.
    assert d["straightlined_share"] == 1.0 and d["n_straightlined"] == 4 and d["longest_run"] == 3
    assert a["straightlined_share"] == 0.0 and a["longest_run"] == 1
    # Agreement with the others: C reverses the scale -> strongly negative Spearman.
    assert c["spearman_with_others"] < -0.5
    assert a["spearman_with_others"] > 0 and report["B"]["spearman_with_others"] > 0
    # Mean absolute deviation for A on item 0: A=1, others B=1, C=6, D=3 -> mean 10/3 -> |1 - 10/3| = 7/3.
    others = [(b + (7 - x) + dd) / 3 for x, b, dd in zip(BASE, report_values("B"), report_values("D"), strict=True)]
    assert a["mad_from_others"] == pytest.approx(np.mean(np.abs(np.subtract(BASE, others))))
    # Leaving C out raises alpha the most; leaving A or B out lowers it.
    alpha = overall_report(rows, n_boot=10)["alpha"]
    assert c["alpha_without"] > alpha and c["alpha_change"] == pytest.approx(c["alpha_without"] - alpha)
    assert max(report.values(), key=lambda line: line["alpha_change"])["rater"] == "C"
    assert a["alpha_without"] < alpha and report["B"]["alpha_without"] < alpha


def report_values(rater: str) -> list[int]:
    return [int(row["rating"]) for row in crafted_rows() if row["rater"] == rater]


def test_spearman_needs_three_shared_items() -> None:
    rows = [row for row in crafted_rows() if row["rater"] in ("A", "B")]
    rows += [{**row, "rater": "E"} for row in crafted_rows()[:2] if row["rater"] == "A"]  # E shares 2 items
    rows += [{**row, "rater": "F", "doc_id": "X" + str(row["doc_id"])} for row in rows[:5]]  # F shares none
    report = by_rater(rater_report(rows))
    assert report["E"]["n_shared_items"] == 2 and math.isnan(report["E"]["spearman_with_others"])
    assert not math.isnan(report["E"]["mad_from_others"])
    assert report["F"]["n_shared_items"] == 0
    assert math.isnan(report["F"]["spearman_with_others"]) and math.isnan(report["F"]["mad_from_others"])


def test_straight_lining_and_shown_order() -> None:
    def row(q: str, system: str, rating: int, shown: int, rater: str = "S") -> dict[str, object]:
        return {"doc_id": f"D{q}", "system": system, "uid1": "U1", "uid2": "U2", "rating": rating, "rater": rater,
                "study": "s", "questionnaire": q, "shown_position": shown}

    rows = [row("0", f"s{i}", 4, i) for i in range(5)]  # q0: all 4 -> straight-lined, run 5
    # q1 shown order 2, 5, 2, 2 (run 2), but listed 2, 2, 2, 5 (a run of 3 in row order).
    rows += [row("1", "a", 2, 0), row("1", "c", 2, 2), row("1", "d", 2, 3), row("1", "b", 5, 1)]
    rows += [row("2", "only", 3, 0)]  # q2: one rating -- cannot be straight-lined, not counted
    line = by_rater(rater_report(rows))["S"]
    assert line["n_questionnaires"] == 3
    assert line["straightlined_share"] == 0.5 and line["n_straightlined"] == 1
    assert line["longest_run"] == 5
    line = by_rater(rater_report(rows[5:9]))["S"]
    assert line["longest_run"] == 2 and line["straightlined_share"] == 0.0
    # Without shown_position the row order is used.
    plain = [{k: v for k, v in r.items() if k != "shown_position"} for r in rows[5:9]]
    assert by_rater(rater_report(plain))["S"]["longest_run"] == 3
    # Without timing columns the time fields are None.
    assert line["median_seconds"] is None and line["n_timed"] == 0


def test_automatic_rows_count_for_no_rater() -> None:
    """Rows recorded without being shown (``automatic`` 1/true) are left out of rater quality and agreement."""
    rows = crafted_rows()
    extra = [
        {**row, "system": "generic", "rating": "6", "shown_position": "", "automatic": flag}
        for row, flag in zip(rows[::3], ["1", "true", 1, True] * 4, strict=True)
    ]
    plain = [{**row, "automatic": "0"} for row in rows]
    assert by_rater(rater_report(plain + extra)) == by_rater(rater_report(rows))
    assert overall_report(plain + extra) == overall_report(rows)
    counted = [{**row, "automatic": "0"} for row in extra]
    assert by_rater(rater_report(plain + counted))["A"]["n_ratings"] == 16


def test_time_on_task_from_iso_strings() -> None:
    assert parse_time("2026-11-21T20:20:56.821807+00:00") == datetime(
        2026, 11, 21, 20, 20, 56, 821807, tzinfo=UTC
    )
    assert parse_time("2026-11-21T20:20:56Z") == datetime(2026, 11, 21, 20, 20, 56, tzinfo=UTC)
    assert parse_time("") is None and parse_time(None) is None
    with pytest.raises(ValueError):
        parse_time("yesterday")

    def row(q: str, claimed: str, completed: str) -> dict[str, object]:
        return {"doc_id": f"D{q}", "system": "s", "uid1": "U1", "uid2": "U2", "rating": "3", "rater": "T",
                "questionnaire": q, "claimed_at": claimed, "completed_at": completed}

    rows = [
        row("0", "2026-01-01T10:00:00+00:00", "2026-01-01T10:02:30+00:00"),  # 150 s
        row("1", "2026-01-01T10:00:00Z", "2026-01-01T11:01:00+01:00"),  # 10:01 UTC -> 60 s
        row("2", "2026-01-01T09:00:00.500000+00:00", "2026-01-01T09:01:30.500000+00:00"),  # 90 s
        row("3", "2026-01-01T09:00:00+00:00", ""),  # not completed: no time
    ]
    line = by_rater(rater_report(rows))["T"]
    assert line["median_seconds"] == 90.0 and line["n_timed"] == 3
    with pytest.raises(ValueError, match="row 1: not an ISO 8601 time"):
        rater_report([{**rows[0], "claimed_at": "10 o'clock"}])


def test_exclusion_changes_alpha() -> None:
    rows = crafted_rows()
    report = by_rater(rater_report(rows))
    before = overall_report(rows, n_boot=50, seed=3)
    kept = exclude_raters(rows, ["C"])
    assert isinstance(kept, list) and len(kept) == len(rows) - 12 and all(r["rater"] != "C" for r in kept)
    after = overall_report(kept, n_boot=50, seed=3)
    assert after["alpha"] == pytest.approx(report["C"]["alpha_without"], abs=1e-15)
    assert after["alpha"] > before["alpha"]
    assert (after["n_raters"], after["n_ratings"]) == (3, 36)
    # The same on a RatingTable; the type and its metadata are kept, unknown names are ignored.
    table = ratings_from_rows(rows, source="crafted.csv")
    kept_table = exclude_raters(table, {"C", "nobody"})
    assert isinstance(kept_table, RatingTable) and kept_table.source == "crafted.csv" and len(kept_table) == 36
    assert overall_report(kept_table, n_boot=50, seed=3)["alpha"] == pytest.approx(after["alpha"], abs=1e-15)
    assert exclude_raters(rows, []) == rows


def test_overall_report_by_study_duplicates_and_anonymous_rows() -> None:
    rows = crafted_rows()
    other = [{**row, "study": "other", "rater": "X" + str(row["rater"])} for row in rows if row["rater"] != "C"]
    report = overall_report(rows + other, n_boot=200, seed=5)
    assert list(report["studies"]) == ["crafted", "other"]
    crafted, second = report["studies"]["crafted"], report["studies"]["other"]
    assert crafted["alpha"] == pytest.approx(overall_report(rows, n_boot=10)["alpha"])
    assert second["alpha"] == pytest.approx(overall_report(exclude_raters(rows, ["C"]), n_boot=10)["alpha"])
    assert (report["n_items"], report["n_raters"], report["n_ratings"]) == (12, 7, 84)
    assert crafted["low"] <= crafted["alpha"] <= crafted["high"]
    assert "studies" not in overall_report(rows, by_study=False, n_boot=10)
    # A rater's second rating of an item is left out of alpha and counted.
    duplicated = rows + [{**rows[0], "rating": "6"}]
    assert overall_report(duplicated, n_boot=10)["duplicate_ratings"] == 1
    assert overall_report(duplicated, n_boot=10)["alpha"] == overall_report(rows, n_boot=10)["alpha"]
    # Rows without a rater are distinct anonymous raters (the CLI ratings CSV may lack the column).
    anonymous = [{k: v for k, v in row.items() if k != "rater"} for row in rows]
    result = overall_report(anonymous, n_boot=10)
    assert result["alpha"] == pytest.approx(overall_report(rows, n_boot=10)["alpha"])
    assert (result["n_raters"], result["n_anonymous_ratings"], result["duplicate_ratings"]) == (0, 48, 0)
    assert rater_report(anonymous) == []


# --------------------------------------------------------------------------------------------------------------
# Demo fixture end to end
# --------------------------------------------------------------------------------------------------------------


def package_alpha(rows: list[dict[str, str]]) -> float:
    """The krippendorff package's ordinal alpha of ``rows`` (raters x items matrix)."""
    items = sorted({(r["doc_id"], r["system"], r["uid1"], r["uid2"]) for r in rows})
    raters = sorted({r["rater"] for r in rows})
    matrix = np.full((len(raters), len(items)), NAN)
    item_index = {item: i for i, item in enumerate(items)}
    rater_index = {rater: i for i, rater in enumerate(raters)}
    for r in rows:
        matrix[rater_index[r["rater"]], item_index[(r["doc_id"], r["system"], r["uid1"], r["uid2"])]] = float(
            r["rating"]
        )
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=SCALE))


def test_demo_fixture_end_to_end() -> None:
    with DEMO.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    report = overall_report(rows, n_boot=300, seed=0)
    # Golden: the same alpha from the krippendorff package on the raters x items matrix.
    items = {(r["doc_id"], r["system"], r["uid1"], r["uid2"]) for r in rows}
    raters = {r["rater"] for r in rows}
    assert report["alpha"] == pytest.approx(package_alpha(rows), abs=1e-12)
    assert report["low"] <= report["alpha"] <= report["high"]
    assert report["n_ratings"] == len(rows) and report["n_raters"] == len(raters)
    assert report["n_items"] == len(items) and report["duplicate_ratings"] == 0
    assert set(report["studies"]) == {r["study"] for r in rows}

    lines = [line.as_dict() for line in rater_report(rows)]
    assert {line["rater"] for line in lines} == set(raters)
    assert sum(line["n_ratings"] for line in lines) == len(rows)
    for line in lines:
        assert line["median_seconds"] is not None and line["median_seconds"] >= 0
        assert line["n_timed"] == line["n_questionnaires"]
        assert -1 <= line["spearman_with_others"] <= 1
        assert line["longest_run"] >= 1
    # The CLI path: load_ratings keeps only the rating columns and the rater; alpha is the same, times are gone.
    table = load_ratings(DEMO)
    assert overall_report(table, n_boot=10)["alpha"] == pytest.approx(report["alpha"], abs=1e-15)
    assert all(line.median_seconds is None for line in rater_report(table))


# --------------------------------------------------------------------------------------------------------------
# Units comparing two different texts, and a text with itself
# --------------------------------------------------------------------------------------------------------------


def test_identical_text_items_by_hand() -> None:
    summaries = {
        "U1": {"user": "the dog ran home", "Same": "a cat sat", "Spaced": "red  car ", "Differ": "one"},
        "U2": {"user": "The dog ran home", "Same": "a cat sat", "Spaced": " red car", "Differ": "two"},
        "U3": {"user": "the dog ran home"},
    }
    corpus = Corpus(documents=(Document("D1", "h", "b", summaries),), systems=("Same", "Spaced", "Differ"))
    items = [("D1", "user", "U1", "U2"), ("D1", "user", "U1", "U3"), ("D1", "Same", "U1", "U2"),
             ("D1", "Spaced", "U2", "U1"), ("D1", "Differ", "U1", "U2"), ("D1", "Same", "U1", "U3"),
             ("D9", "Same", "U1", "U2")]
    assert identical_text_items(corpus, items) == {
        ("D1", "user", "U1", "U2"): False,  # case counts
        ("D1", "user", "U1", "U3"): True,
        ("D1", "Same", "U1", "U2"): True,
        ("D1", "Spaced", "U2", "U1"): True,  # whitespace does not: a browser shows both the same
        ("D1", "Differ", "U1", "U2"): False,
    }  # U3 has no "Same" summary and D9 does not exist: left out


def test_alpha_on_different_and_identical_text_units_of_the_demo() -> None:
    """The audit's finding: alpha over all demo units is inflated by the 262 ratings of identical texts (a
    non-personalised system gives every reader the same summary); the groups equal the krippendorff package on
    the same subsets."""
    with DEMO.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    items = {(r["doc_id"], r["system"], r["uid1"], r["uid2"]) for r in rows}
    identical = identical_text_items(load_corpus(DEMO_CORPUS), items)
    assert len(identical) == len(items)
    report = overall_report(rows, n_boot=300, seed=2, identical=identical)
    texts = report["texts"]
    same = [r for r in rows if identical[(r["doc_id"], r["system"], r["uid1"], r["uid2"])]]
    different = [r for r in rows if not identical[(r["doc_id"], r["system"], r["uid1"], r["uid2"])]]
    assert (len(same), len(different)) == (262, 890)
    assert report["alpha"] == pytest.approx(package_alpha(rows), abs=1e-12)
    assert texts["different"]["alpha"] == pytest.approx(package_alpha(different), abs=1e-12)
    assert texts["identical"]["alpha"] == pytest.approx(package_alpha(same), abs=1e-12)
    assert (texts["different"]["n_ratings"], texts["identical"]["n_ratings"]) == (890, 262)
    assert 0.7 < report["alpha"] < 0.8 and 0.55 < texts["different"]["alpha"] < 0.65
    for group in ("different", "identical"):
        assert texts[group]["low"] <= texts[group]["alpha"] <= texts[group]["high"]
    assert texts["quote"] == "different" and texts["n_unknown_texts"] == 0
    # per study too
    for study in report["studies"].values():
        assert study["texts"]["different"]["n_ratings"] + study["texts"]["identical"]["n_ratings"] == \
            study["n_ratings"]
    # the bootstrap of a group is the one of alpha_bootstrap_ci on that group alone
    alone = overall_report(different, n_boot=300, seed=2, by_study=False)
    assert (alone["alpha"], alone["low"], alone["high"]) == \
        (texts["different"]["alpha"], texts["different"]["low"], texts["different"]["high"])
    assert "texts" not in overall_report(rows, n_boot=10)
    # the corpus itself may be given: the same groups
    from_corpus = overall_report(rows, n_boot=300, seed=2, identical=load_corpus(DEMO_CORPUS))
    assert from_corpus["texts"] == texts


def test_alpha_groups_quote_all_when_no_unit_compares_different_texts() -> None:
    rows = crafted_rows()
    items = {(r["doc_id"], r["system"], r["uid1"], r["uid2"]) for r in rows}
    every_same = {item: True for item in items}
    report = overall_report(rows, n_boot=20, seed=0, identical=every_same)
    assert math.isnan(report["texts"]["different"]["alpha"]) and report["texts"]["different"]["n_ratings"] == 0
    assert report["texts"]["quote"] == "all"
    assert report["texts"]["identical"]["alpha"] == pytest.approx(report["alpha"], abs=1e-15)
    unknown = overall_report(rows, n_boot=20, seed=0, identical={})
    assert unknown["texts"]["n_unknown_texts"] == len(rows)


def test_rater_ids_sort_naturally_even_with_endless_digits():
    """P9 before P10; an id of more digits than int() converts (4300) sorts as text instead of raising."""
    from metaeval.core.stats.raters import _natural_key

    endless = "P" + "9" * 5000
    assert sorted(["P10", endless, "P9"], key=_natural_key) == ["P9", "P10", endless]
