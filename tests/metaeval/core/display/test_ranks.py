"""Rank ranges on the pages: ``1-3`` text, tied bands, leaderboards best first (conventions sec. 27.4)."""
from __future__ import annotations

import math

from metaeval.core.display.numbers import MISSING
from metaeval.core.display.ranks import leaderboard_view, rank_range, ranked_rows, tied_bands
from metaeval.core.planning.ranks import with_rank_columns


def test_rank_range_text():
    assert rank_range(1, 3) == "1-3"
    assert rank_range(2, 2) == "2"
    assert rank_range(None, 2) == MISSING


def test_bands_join_overlapping_ranges_and_split_separated_ones():
    rows = [{"rank_best": 1, "rank_worst": 1}, {"rank_best": 2, "rank_worst": 3}, {"rank_best": 2, "rank_worst": 4},
            {"rank_best": 4, "rank_worst": 4}, {"rank_best": 5, "rank_worst": 5}]
    # 1 alone; 2-3, 2-4 and 4 chain (4 lies within 2-4); 5 alone
    assert tied_bands(rows) == [1, 2, 2, 2, 3]


def test_ranked_rows_from_intervals_best_first():
    rows = [
        {"m": "x", "system": "B", "v": 0.5, "lo": 0.45, "hi": 0.55},
        {"m": "x", "system": "A", "v": 0.9, "lo": 0.85, "hi": 0.95},
        {"m": "x", "system": "C", "v": 0.48, "lo": 0.40, "hi": 0.56},
    ]
    shown = ranked_rows(with_rank_columns(rows, group="m", value="v", low="lo", high="hi"), value="v", low="lo",
                        high="hi")
    assert [(r["system"], r["rank"], r["tied"], r["band"]) for r in shown] == [
        ("A", "1", False, 1), ("B", "2-3", True, 2), ("C", "2-3", True, 2)]
    assert shown[0]["interval"] == "0.8500 to 0.9500" and shown[0]["value"] == "0.9000"
    # a system without an interval could be anywhere: it widens every range it is not known to be beaten in
    rows.append({"m": "x", "system": "D", "v": math.nan, "lo": math.nan, "hi": math.nan})
    shown = ranked_rows(with_rank_columns(rows, group="m", value="v", low="lo", high="hi"), value="v", low="lo",
                        high="hi")
    assert [(r["system"], r["rank"]) for r in shown] == [("A", "1-2"), ("B", "2-4"), ("C", "2-4"), ("D", "1-4")]
    assert shown[-1]["interval"] == MISSING and {r["band"] for r in shown} == {1}


def test_leaderboard_view_per_measure_and_old_reports():
    board = with_rank_columns([
        {"system": "s1", "measure": "jsd", "value": 0.2, "low": 0.1, "high": 0.3},
        {"system": "s2", "measure": "jsd", "value": 0.8, "low": 0.7, "high": 0.9},
        {"system": "s1", "measure": "rouge_l", "value": 0.5, "low": 0.4, "high": 0.6},
        {"system": "s2", "measure": "rouge_l", "value": 0.55, "low": 0.45, "high": 0.65},
    ], group="measure", value="value", low="low", high="high")
    view = leaderboard_view({"leaderboard": board})
    assert [b["measure"] for b in view] == ["JSD", "ROUGE-L"]
    assert [(r["system"], r["rank"]) for r in view[0]["rows"]] == [("s2", "1"), ("s1", "2")]
    assert [(r["system"], r["rank"], r["tied"]) for r in view[1]["rows"]] == [("s2", "1-2", True), ("s1", "1-2", True)]
    # a report stored before rank ranges has no ranking to show
    assert leaderboard_view({"leaderboard": [{k: v for k, v in row.items() if not k.startswith("rank")}
                                             for row in board]}) == []
