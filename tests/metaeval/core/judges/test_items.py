"""Items of a judge and people: sources, orientation, each source's game by the rule of sec. 17, errors."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.core.judges.items import JudgeNotFound, build_items, judges_in, pooled_outcome
from metaeval.core.pairwise.games import play
from metaeval.core.pairwise.judgments import Judgment, JudgmentTable
from tests.metaeval.core.judges.hand_items import table


def test_items_sources_and_games_by_hand():
    items = build_items(table(), "gpt")
    assert (items.human_judgments, items.judge_judgments, items.invalid) == (9, 10, 1)
    got = {(i.case_id, i.criterion): (i.model_a, i.model_b, i.human_outcome, i.judge_outcome) for i in items.items}
    assert got == {
        ("c1", "quality"): ("A", "B", "a", "a"),      # people 2-1 for A; judge runs 3-1 for A
        ("c2", "quality"): ("B", "C", "b", "b"),      # people C 1-0 (a tie counts for nobody); judge C 2-0
        ("c3", "quality"): ("A", "C", None, "tie"),   # judge 1-1
        ("c4", "quality"): ("A", "B", "a", None),
        ("c5", "quality"): ("B", "C", "tie", "a"),    # the invalid run is left out
        ("c1", "relevance"): ("A", "B", "b", "a"),    # judge "other" is not ours
    }
    assert [i.case_id for i in items.items] == ["c1", "c2", "c3", "c4", "c5", "c1"]  # first judgment's line
    assert items.criteria() == ["quality", "relevance"]


def test_votes_are_oriented_to_the_item():
    c1 = build_items(table(), "gpt").items[0]
    # P3's row names the pair B, A and picks model_a = B: the item's second system
    assert [(v.judge, v.outcome, v.first) for v in c1.human] == [("P1", "a", "a"), ("P2", "a", "b"), ("P3", "b", "b")]
    assert [(v.run, v.outcome, v.first) for v in c1.judge] == [(1, "a", "a"), (2, "b", "b"), (3, "a", "a"),
                                                               (4, "a", "b")]
    c2 = build_items(table(), "gpt").items[1]
    # the judge's rows name the pair C, B: C (model_a) shown first in run 2 is the item's side b
    assert [(v.outcome, v.first) for v in c2.judge] == [("b", "a"), ("b", "b")]
    assert c1.people() == {"P1": "a", "P2": "a", "P3": "b"}


def test_pooled_votes_equal_the_games_of_play_on_random_tables():
    rng = np.random.default_rng(5)
    systems = ["A", "B", "C"]
    rows = []
    for line in range(2, 600):
        a, b = rng.choice(systems, 2, replace=False)
        kind = "human" if rng.random() < 0.5 else "llm"
        rows.append(Judgment(case_id=f"c{rng.integers(0, 15)}", criterion=str(rng.choice(["q", "r"])), model_a=a,
                             model_b=b, winner=str(rng.choice(["model_a", "model_b", "tie", "invalid"])), line=line,
                             judge="J" if kind == "llm" else f"P{rng.integers(0, 4)}", judge_kind=kind))
    items = build_items(JudgmentTable(tuple(rows)), "J")
    for item in items.items:
        assert (pooled_outcome(item.human) if item.human else None) == item.human_outcome
        assert (pooled_outcome(item.judge) if item.judge else None) == item.judge_outcome
    assert len(items.items) == len(play(j for j in rows if j.judge_kind == "human" or j.judge == "J"))


def test_unknown_judge_and_missing_people_are_named():
    with pytest.raises(JudgeNotFound, match=r"no valid judgment of judge 'gemini' .*: gpt, other"):
        build_items(table(), "gemini")
    with pytest.raises(JudgeNotFound, match=r"judge_kind 'expert' \(kinds: human, llm\)"):
        build_items(table(), "gpt", human_kind="expert")
    assert judges_in(table()) == ["gpt", "other"]


def test_a_person_named_like_the_judge_stays_a_person():
    rows = [Judgment("c", "q", "A", "B", "model_a", 2, judge="gpt", judge_kind="human"),
            Judgment("c", "q", "A", "B", "model_b", 3, judge="gpt", judge_kind="llm")]
    item = build_items(JudgmentTable(tuple(rows)), "gpt").items[0]
    assert (item.human_outcome, item.judge_outcome) == ("a", "b")
