"""Ranks with their uncertainty (conventions sec. 27.4): as Chatbot Arena ranks its leaderboard, a system's best
rank is 1 + the number of systems statistically better than it, and its worst rank is the number of systems minus
the number statistically worse. Tied systems (none better than the other) share ranks, so they show as tied.

"Statistically better" comes either from a matrix (``better[i, j]``: i is better than j, e.g. the confidence
sequence of the pair excludes 1/2) or from intervals of a score (:func:`better_from_intervals`: i's interval lies
wholly above j's, Chatbot Arena's rule for its leaderboard). ``rank`` is the competition rank of the point
estimates (1 + the number of systems with a strictly higher one).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["RANK_COLUMNS", "better_from_intervals", "competition_ranks", "rank_ranges", "with_rank_columns"]

#: the columns :func:`with_rank_columns` appends
RANK_COLUMNS = ("rank", "rank_best", "rank_worst")


def better_from_intervals(low: Sequence[float] | np.ndarray, high: Sequence[float] | np.ndarray) -> np.ndarray:
    """``better[..., i, j]``: i's interval lies wholly above j's (``low_i > high_j``). NaN bounds compare false."""
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    if low.shape != high.shape:
        raise ValueError("low and high differ in shape")
    return np.asarray(low[..., :, None] > high[..., None, :])


def rank_ranges(better: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(best, worst)`` ranks per system from ``better[..., i, j]`` (module docstring); the diagonal is ignored.
    ValueError when some i is better than j and j better than i."""
    better = np.asarray(better, dtype=bool)
    n = better.shape[-1]
    better = better & ~np.eye(n, dtype=bool)
    if (better & np.swapaxes(better, -1, -2)).any():
        raise ValueError("a system cannot be both better and worse than another")
    best = 1 + better.sum(axis=-2)  # systems better than it (column sums)
    worst = n - better.sum(axis=-1)  # minus the systems it is better than (row sums)
    return best, worst


def competition_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """1 + the number of systems with a strictly higher value (ties share the best rank; NaN ranks last)."""
    values = np.asarray(values, dtype=np.float64)
    filled = np.where(np.isnan(values), -np.inf, values)
    return 1 + (filled[..., None, :] > filled[..., :, None]).sum(axis=-1)


def with_rank_columns(rows: Sequence[dict[str, object]], *, group: str, value: str, low: str,
                      high: str) -> list[dict[str, object]]:
    """``rows`` with :data:`RANK_COLUMNS` appended, ranked within each ``group`` value (e.g. a criterion) from the
    ``value`` column and the ``low``/``high`` interval columns."""
    groups: dict[object, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(row[group], []).append(index)
    out = [dict(row) for row in rows]
    for members in groups.values():
        def column(name: str, members: list[int] = members) -> np.ndarray:
            return np.array([float(rows[i][name]) for i in members])  # type: ignore[arg-type]

        best, worst = rank_ranges(better_from_intervals(column(low), column(high)))
        ranks = competition_ranks(column(value))
        for position, i in enumerate(members):
            out[i].update(rank=int(ranks[position]), rank_best=int(best[position]), rank_worst=int(worst[position]))
    return out
