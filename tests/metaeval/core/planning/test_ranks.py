"""Ranks with their uncertainty (conventions sec. 27.4)."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.core.planning.ranks import better_from_intervals, competition_ranks, rank_ranges, with_rank_columns


def test_rank_ranges_by_hand() -> None:
    # A [10, 12] lies above C [2, 6] and D [0, 1]; B [5, 11] overlaps A and C; C above D
    low, high = np.array([10.0, 5.0, 2.0, 0.0]), np.array([12.0, 11.0, 6.0, 1.0])
    better = better_from_intervals(low, high)
    assert better.astype(int).tolist() == [[0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]]
    best, worst = rank_ranges(better)
    assert best.tolist() == [1, 1, 2, 4]  # 1 + systems statistically better
    assert worst.tolist() == [2, 3, 3, 4]  # systems - those statistically worse
    assert competition_ranks([3.0, 5.0, 5.0, np.nan]).tolist() == [3, 1, 1, 4]


def test_all_tied_and_contradictions() -> None:
    best, worst = rank_ranges(np.zeros((3, 3), dtype=bool))
    assert best.tolist() == [1, 1, 1] and worst.tolist() == [3, 3, 3]
    with pytest.raises(ValueError):
        rank_ranges(np.array([[False, True], [True, False]]))
    with pytest.raises(ValueError):
        better_from_intervals([1.0], [1.0, 2.0])


def test_columns_per_group() -> None:
    rows = [{"criterion": "q", "system": s, "bt": v, "lo": v - 1, "hi": v + 1}
            for s, v in (("A", 5.0), ("B", 4.5), ("C", 1.0))]
    rows += [{"criterion": "r", "system": "A", "bt": 0.0, "lo": -1.0, "hi": 1.0},
             {"criterion": "r", "system": "B", "bt": 3.0, "lo": 2.0, "hi": 4.0}]
    out = with_rank_columns(rows, group="criterion", value="bt", low="lo", high="hi")
    assert [(r["rank"], r["rank_best"], r["rank_worst"]) for r in out] == [(1, 1, 2), (2, 1, 2), (3, 3, 3), (2, 2, 2),
                                                                           (1, 1, 1)]
    assert list(out[0]) == ["criterion", "system", "bt", "lo", "hi", "rank", "rank_best", "rank_worst"]
    assert "rank" not in rows[0]  # the input is left alone
