"""The pairwise report section: win fractions worked by hand, and every other part equal to the function that
defines it (leaderboard, win/tie/loss, consistency curve) on the same games and seeds."""
from __future__ import annotations

import pytest

from metaeval.core.pairwise.consistency import consistency_curve
from metaeval.core.pairwise.elo import EloParams
from metaeval.core.pairwise.games import pair_outcomes, play, win_tie_loss
from metaeval.core.pairwise.judgments import Judgment, JudgmentTable
from metaeval.core.pairwise.leaderboard import leaderboard
from metaeval.core.pairwise.report import TABLES, NoGames, build_pairwise_report, win_fractions


def j(line, case, a, b, winner, criterion="q"):
    return Judgment(case_id=case, criterion=criterion, model_a=a, model_b=b, winner=winner, line=line)


def table() -> JudgmentTable:
    rows = []
    line = 1
    # A beats B in 7 of 10 cases (2 ties), B beats C in 6 of 10, A beats C in 9 of 10; two criteria
    for criterion in ("quality", "relevance"):
        for case in range(10):
            for a, b, wins, ties in (("A", "B", 7, 2), ("B", "C", 6, 1), ("A", "C", 9, 0)):
                winner = "model_a" if case < wins else "tie" if case < wins + ties else "model_b"
                rows.append(j(line, f"c{case}", a, b, winner, criterion))
                line += 1
    rows.append(j(line, "c0", "A", "B", "invalid", "quality"))
    return JudgmentTable(tuple(rows), source="t.csv")


def test_win_fractions_by_hand():
    games = play([j(1, "c1", "A", "B", "model_a"), j(2, "c2", "B", "A", "tie"), j(3, "c3", "A", "B", "model_b"),
                  j(4, "c4", "C", "A", "model_a")])
    rows = {(r["criterion"], r["system"], r["opponent"]): (r["win_fraction"], r["games"]) for r in win_fractions(games)}
    # A vs B: a win, a tie, a loss -> (1 + 0.5) / 3; C beat A once
    assert rows[("q", "A", "B")] == (pytest.approx(0.5), 3)
    assert rows[("q", "B", "A")] == (pytest.approx(0.5), 3)
    assert rows[("q", "C", "A")] == (1.0, 1) and rows[("q", "A", "C")] == (0.0, 1)
    assert ("q", "B", "C") not in rows  # never played
    assert rows[("overall", "A", "B")] == (pytest.approx(0.5), 3)
    # ordered by first appearance: A, B, C
    assert [(r["system"], r["opponent"]) for r in win_fractions(games) if r["criterion"] == "q"] == [
        ("A", "B"), ("A", "C"), ("B", "A"), ("C", "A")]


def test_the_section_equals_the_functions_that_define_it():
    params = EloParams(k=4, scale=400, base=10, init=1000)
    section = build_pairwise_report(table(), seed=11, params=params, n_boot=50, repetitions=200, sizes=(5, 10, 50))
    games = play(table().judgments)
    board = leaderboard(games, params, n_boot=50, seed=11).rows
    # the leaderboard's columns, then the rank range from the BT intervals (conventions sec. 27.4) at the end
    assert [{k: v for k, v in row.items() if k not in ("rank", "rank_best", "rank_worst")}
            for row in section["ratings"]] == board
    assert list(section["ratings"][0])[-3:] == ["rank", "rank_best", "rank_worst"]
    assert section["tables"]["pairwise_ratings"] == section["ratings"]
    for row in section["ratings"]:
        same = [r for r in section["ratings"] if r["criterion"] == row["criterion"]]
        above = sum(r["bt_ci_low"] > row["bt_ci_high"] for r in same)
        below = sum(r["bt_ci_high"] < row["bt_ci_low"] for r in same)
        assert (row["rank_best"], row["rank_worst"]) == (1 + above, len(same) - below)
        assert row["rank"] == 1 + sum(r["bt"] > row["bt"] for r in same)
    assert section["wtl"] == [row.as_row() for row in win_tie_loss(games)]
    assert section["judgments"] == {"source": "t.csv", "read": 61, "invalid": 1, "games": 60,
                                    "criteria": ["quality", "relevance", "overall"], "systems": ["A", "B", "C"]}
    # no human judgment in this set: no judges-against-people table, and the section says why
    assert set(section["tables"]) == set(TABLES) - {"pairwise_judge_accuracy"}
    assert section["judge_accuracy"]["note"].startswith("Judges against people need both: this set has no valid "
                                                        "judgment of judge_kind 'human'")
    # adjacent pairs in each criterion's BT ranking: A > B > C, so (A, B) then (B, C); sizes up to the pool
    curves = [(r["criterion"], r["model_a"], r["model_b"]) for r in section["consistency"]]
    assert list(dict.fromkeys(curves)) == [("quality", "A", "B"), ("quality", "B", "C"), ("relevance", "A", "B"),
                                           ("relevance", "B", "C"), ("overall", "A", "B"), ("overall", "B", "C")]
    first = [r for r in section["consistency"] if (r["criterion"], r["model_a"]) == ("quality", "A")]
    assert [r["n"] for r in first] == [5, 10] and first[0]["pool"] == 10
    expected = consistency_curve(pair_outcomes([g for g in games if g.criterion == "quality"], "A", "B"), [5, 10],
                                 repetitions=200, seed=12)  # seed + 1, the first curve
    assert [(r["sensitivity"], r["consistency"]) for r in first] == [(p.sensitivity, p.consistency) for p in expected]
    overall = [r for r in section["consistency"] if r["criterion"] == "overall" and r["model_a"] == "A"]
    assert [r["n"] for r in overall] == [5, 10]  # 20 games: 50 is above the pool
    assert (overall[0]["wins_a"], overall[0]["wins_b"], overall[0]["ties"]) == (14, 2, 4)


def test_a_pool_smaller_than_every_size_is_drawn_at_its_own_size():
    judgments = JudgmentTable((j(1, "c1", "A", "B", "model_a"), j(2, "c2", "A", "B", "model_a")), source="s")
    section = build_pairwise_report(judgments, seed=0, n_boot=5, repetitions=10)
    assert [r["n"] for r in section["consistency"] if r["criterion"] == "q"] == [2]


def test_no_valid_judgment_is_an_error_naming_the_file():
    with pytest.raises(NoGames, match=r"t\.csv: no valid judgment \(2 invalid\)"):
        build_pairwise_report(JudgmentTable((j(1, "c", "A", "B", "invalid"), j(2, "c", "A", "B", "invalid")),
                                            source="t.csv"), seed=0)
