"""Judges against people (conventions sec. 26 item 12): a hand-worked set, the rows equal to the meta-accuracy
core on the per-case scores, the Bradley-Terry leaderboards' agreement, and the sets where it does not apply."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.core.pairwise.bradley_terry import fit_bt
from metaeval.core.pairwise.judge_accuracy import JUDGE_COLUMNS, PEOPLE, judge_accuracy
from metaeval.core.pairwise.judgments import Judgment, JudgmentTable
from metaeval.core.pairwise.report import build_pairwise_report
from metaeval.core.stats.meta_accuracy import DocumentValues, meta_accuracy_rows

SETTINGS = {"n_boot": 50, "n_permutations": 64, "confidence": 0.9, "seed": 7}


def hand_table() -> JudgmentTable:
    """Systems A, B, C on cases c1 and c2 (criterion q), every pair, by two people (agreeing) and the judge "gpt".

    People: c1 A>B, B>C, A>C; c2 A>B, C>B, A=C (one person says A, the other C: a tie).
    Judge:  c1 B>A, B>C, A>C; c2 A>B, C>B, A>C.  An item only people judged (c3, A-B) is left out."""
    rows: list[Judgment] = []

    def add(case: str, a: str, b: str, winner: str, judge: str, kind: str) -> None:
        rows.append(Judgment(case, "q", a, b, winner, len(rows) + 2, judge=judge, judge_kind=kind))

    for person in ("p1", "p2"):
        add("c1", "A", "B", "model_a", person, "human")
        add("c1", "B", "C", "model_a", person, "human")
        add("c1", "A", "C", "model_a", person, "human")
        add("c2", "A", "B", "model_a", person, "human")
        add("c2", "C", "B", "model_a", person, "human")
        add("c3", "A", "B", "model_b", person, "human")
    add("c2", "A", "C", "model_a", "p1", "human")
    add("c2", "A", "C", "model_b", "p2", "human")
    for case, games in (("c1", (("A", "B", "model_b"), ("B", "C", "model_a"), ("A", "C", "model_a"))),
                        ("c2", (("A", "B", "model_a"), ("C", "B", "model_a"), ("A", "C", "model_a")))):
        for a, b, winner in games:
            add(case, a, b, winner, "gpt", "llm")
    return JudgmentTable(tuple(rows), source="hand.csv")


def test_the_hand_worked_set() -> None:
    section, rows = judge_accuracy(hand_table(), **SETTINGS)
    assert section["judges"] == [{"judge": "gpt", "items": 6}] and section["note"] == ""
    # criterion q, then overall (the same items)
    assert [r["criterion"] for r in rows] == ["q", "overall"]
    system = rows[0]
    assert list(system) == list(JUDGE_COLUMNS) and "level" not in system
    assert (system["judge"], system["human"], system["items"], system["pairs"], system["documents"]) == (
        "gpt", PEOPLE, 6, 3, 2)
    # mean game scores per case, then over cases: people A 0.875, B 0.25, C 0.375 (A > C > B); judge A 0.75,
    # B 0.5, C 0.25 (A > B > C): (A, B) and (A, C) ordered alike, (B, C) not
    assert system["accuracy"] == pytest.approx(2 / 3) and system["acc_eq"] == pytest.approx(2 / 3)
    assert system["epsilon"] == 0.0 and (system["concordant"], system["discordant"]) == (2, 1)
    # Bradley-Terry on the same games: people A > C > B, judge A > B > C: 2 of 3 pairs
    assert system["bt_accuracy"] == pytest.approx(2 / 3) and system["bt_acc_eq"] == pytest.approx(2 / 3)
    assert rows[1] == {**rows[0], "criterion": "overall"}


def test_rows_are_the_meta_accuracy_core_on_the_per_case_scores() -> None:
    _, rows = judge_accuracy(hand_table(), **SETTINGS)
    systems, cases = ("A", "B", "C"), ("c1", "c2")
    people = DocumentValues(systems, cases, np.array([[1.0, 0.75], [0.5, 0.0], [0.0, 0.75]]))
    judge = DocumentValues(systems, cases, np.array([[0.5, 1.0], [1.0, 0.0], [0.0, 0.5]]))
    expected = meta_accuracy_rows("gpt", PEOPLE, dict(zip(systems, judge.values.mean(axis=1), strict=True)),
                                  dict(zip(systems, people.values.mean(axis=1), strict=True)),
                                  metric_documents=judge, human_documents=people, tie_calibration=True, **SETTINGS)
    assert [row["level"] for row in expected] == ["system", "document"]  # the per-case row is left out
    shared = [key for key in expected[0] if key not in ("level", "bucket_low", "bucket_high")]
    assert {key: rows[0][key] for key in shared} == {key: expected[0][key] for key in shared}
    assert 0 <= rows[0]["spa"] <= 1 and rows[0]["spa_low"] <= rows[0]["spa_high"]
    # the Bradley-Terry orders the docstring gives
    wins_people = np.array([[0, 2, 1.5], [0, 0, 1], [0.5, 1, 0]])  # i's wins over j plus half the ties
    wins_judge = np.array([[0, 1, 2], [1, 0, 1], [0, 1, 0]])
    assert list(np.argsort(-fit_bt(wins_people).ratings)) == [0, 2, 1]
    assert list(np.argsort(-fit_bt(wins_judge).ratings)) == [0, 1, 2]


def test_sets_without_people_or_judges_say_so() -> None:
    people_only = JudgmentTable(tuple(j for j in hand_table().judgments if j.judge_kind == "human"), source="p.csv")
    section, rows = judge_accuracy(people_only, **SETTINGS)
    assert rows == [] and section["note"] == ("Judges against people need both: this set has no named judge of "
                                              "another kind.")
    unnamed = JudgmentTable(tuple(Judgment(j.case_id, j.criterion, j.model_a, j.model_b, j.winner, j.line,
                                           judge_kind=j.judge_kind) for j in hand_table().judgments))
    assert judge_accuracy(unnamed, **SETTINGS)[0]["note"].endswith("no named judge of another kind.")
    apart = JudgmentTable(tuple(j if j.judge_kind == "human" else Judgment(
        "x" + j.case_id, j.criterion, j.model_a, j.model_b, j.winner, j.line, judge="gpt", judge_kind="llm")
        for j in hand_table().judgments))
    section, rows = judge_accuracy(apart, **SETTINGS)
    assert rows == [] and section["note"] == "No item was judged by both the people and a judge."


def test_the_pairwise_section_carries_the_judges_against_people() -> None:
    section = build_pairwise_report(hand_table(), seed=7, n_boot=50, repetitions=20, n_permutations=64,
                                    confidence=0.9)
    _, rows = judge_accuracy(hand_table(), **SETTINGS)
    assert section["tables"]["pairwise_judge_accuracy"] == rows
    assert section["judge_accuracy"]["judges"] == [{"judge": "gpt", "items": 6}]
    assert section["judge_accuracy"]["seed"] == 7 and section["judge_accuracy"]["n_permutations"] == 64


def test_the_demo_judgment_set_as_the_guide_reads_it() -> None:
    """docs/guide/meta-evaluation.md: the demo's LLM judge against its six people (point values; the guide's
    intervals are those of 1000 samples with seed 2033)."""
    from pathlib import Path

    from metaeval.core.pairwise.judgments import load_judgments

    path = Path(__file__).resolve().parents[4] / "fixtures" / "demo" / "judgments.csv"
    section, rows = judge_accuracy(load_judgments(path), n_boot=20, n_permutations=50, confidence=0.95, seed=2033)
    assert section["judges"] == [{"judge": "demo-llm", "items": 479}]
    got = {r["criterion"]: (r["items"], r["pairs"], r["documents"], round(r["accuracy"] * 45),
                            round(r["bt_accuracy"] * 45)) for r in rows}
    assert got == {"personalization": (160, 45, 40, 35, 40), "quality": (160, 45, 40, 32, 37),
                   "relevance": (159, 45, 40, 34, 35), "overall": (479, 45, 40, 41, 41)}
