"""The leaderboard rows: order, records, and the bootstrap each criterion gets (the same seed)."""
from __future__ import annotations

import pytest

from metaeval.core.pairwise.bootstrap import bootstrap, percentiles
from metaeval.core.pairwise.games import Game, encode
from metaeval.core.pairwise.leaderboard import COLUMNS, leaderboard

GAMES = [Game("1", "rel", "B", "A", 1.0, 2, 1), Game("1", "qual", "A", "C", 0.5, 3, 2),
         Game("2", "qual", "C", "B", 0.0, 4, 1), Game("3", "rel", "A", "B", 1.0, 5, 1),
         Game("2", "rel", "C", "A", 1.0, 6, 1)]


def test_rows_order_and_records():
    board = leaderboard(GAMES, n_boot=30, seed=5)
    assert [(r["criterion"], r["system"]) for r in board.rows] == [
        ("qual", "B"), ("qual", "A"), ("qual", "C"), ("rel", "B"), ("rel", "A"), ("rel", "C"),
        ("overall", "B"), ("overall", "A"), ("overall", "C")]
    assert all(tuple(row) == COLUMNS for row in board.rows)
    records = {(r["criterion"], r["system"]): (r["wins"], r["ties"], r["losses"], r["games"]) for r in board.rows}
    assert records[("qual", "C")] == (0, 1, 1, 2)
    assert records[("rel", "A")] == (1, 0, 2, 3)
    assert records[("overall", "A")] == (1, 1, 2, 4)
    assert board.regularised["qual"]["point"] is True  # B beat C, A-C drew: nobody beat B


def test_every_criterion_is_bootstrapped_with_the_same_seed():
    board = leaderboard(GAMES, n_boot=40, seed=8)
    overall = [r for r in board.rows if r["criterion"] == "overall"]
    boot = bootstrap(encode(GAMES, ["B", "A", "C"]), n_boot=40, seed=8)
    low, median, high = percentiles(boot.elo)
    assert [r["elo_median"] for r in overall] == pytest.approx(median.tolist(), abs=1e-12)
    assert [r["elo_ci_low"] for r in overall] == pytest.approx(low.tolist(), abs=1e-12)
    bt_low, _, bt_high = percentiles(boot.bt.ratings)
    assert [r["bt_ci_high"] for r in overall] == pytest.approx(bt_high.tolist(), abs=1e-12)
