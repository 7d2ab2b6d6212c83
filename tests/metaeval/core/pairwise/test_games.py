"""Judgments -> games: the aggregation rules worked by hand, positions, ``overall``, win/tie/loss."""
from __future__ import annotations

import pytest

from metaeval.core.pairwise.games import Game, criteria_games, play, win_tie_loss
from metaeval.core.pairwise.judgments import Judgment


def j(line, case, a, b, winner, criterion="q"):
    return Judgment(case_id=case, criterion=criterion, model_a=a, model_b=b, winner=winner, line=line)


def outcome(games):
    return [(g.case_id, g.criterion, g.model_a, g.model_b, g.score, g.line, g.judgments) for g in games]


def test_two_humans_who_disagree_make_a_tie():
    assert outcome(play([j(1, "c", "A", "B", "model_a"), j(2, "c", "B", "A", "model_a")])) == [
        ("c", "q", "A", "B", 0.5, 1, 2)]


def test_a_tie_judgment_counts_for_neither_side():
    assert outcome(play([j(1, "c", "A", "B", "tie"), j(2, "c", "A", "B", "model_a")])) == [
        ("c", "q", "A", "B", 1.0, 1, 2)]
    # sides swapped in the second judgment: B wins it, so B wins 1-0 (score of A = 0)
    assert outcome(play([j(1, "c", "A", "B", "tie"), j(2, "c", "B", "A", "model_a")]))[0][4] == 0.0


def test_invalid_judgments_are_left_out_and_an_invalid_only_group_is_no_game():
    games = play([j(1, "c1", "A", "B", "invalid"), j(2, "c1", "A", "B", "invalid"),
                  j(3, "c2", "B", "A", "invalid"), j(4, "c2", "A", "B", "model_b"), j(5, "c2", "B", "A", "tie")])
    # c1: no game; c2: positioned at its first valid judgment (line 4), sides named as there, B wins 1-0
    assert outcome(games) == [("c2", "q", "A", "B", 0.0, 4, 2)]


def test_games_are_ordered_by_position_and_overall_pools_every_criterion():
    judgments = [j(1, "c1", "A", "B", "invalid", "rel"), j(2, "c2", "A", "C", "model_b", "qual"),
                 j(3, "c1", "A", "B", "model_a", "qual"), j(4, "c1", "B", "A", "model_a", "rel"),
                 j(5, "c2", "A", "C", "model_a", "qual")]
    games = play(judgments)
    assert [(g.case_id, g.criterion, g.line, g.score) for g in games] == [
        ("c2", "qual", 2, 0.5), ("c1", "qual", 3, 1.0), ("c1", "rel", 4, 1.0)]
    by = criteria_games(games)
    assert list(by) == ["qual", "rel", "overall"]
    assert [g.line for g in by["overall"]] == [2, 3, 4]
    assert [g.line for g in by["rel"]] == [4]


def test_win_tie_loss_check_110_88_13_of_211():
    games = [Game(str(i), "q", "A", "B", 1.0 if i < 110 else 0.5 if i < 198 else 0.0, i + 1, 1) for i in range(211)]
    (row, overall) = win_tie_loss(games)
    assert (row.wins, row.ties, row.losses, row.cases) == (110, 88, 13, 211)
    assert [round(row.win, 2), round(row.tie, 2), round(row.loss, 2)] == [52.13, 41.71, 6.16]
    assert row.win + row.tie + row.loss == pytest.approx(100.0, abs=1e-12)
    assert overall.criterion == "overall" and overall.win == row.win


def test_win_tie_loss_orientation_is_the_pair_as_first_seen_in_the_file():
    games = [Game("1", "rel", "B", "A", 1.0, 1, 1), Game("1", "qual", "A", "B", 1.0, 2, 1),
             Game("2", "qual", "B", "A", 0.5, 3, 1), Game("3", "qual", "C", "A", 0.0, 4, 1)]
    rows = [(r.criterion, r.model_a, r.model_b, r.wins, r.ties, r.losses) for r in win_tie_loss(games)]
    assert rows == [("qual", "B", "A", 0, 1, 1), ("qual", "C", "A", 0, 0, 1), ("rel", "B", "A", 1, 0, 0),
                    ("overall", "B", "A", 1, 1, 1), ("overall", "C", "A", 0, 0, 1)]
