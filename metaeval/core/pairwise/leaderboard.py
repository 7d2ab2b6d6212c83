"""One row per (criterion, system): online Elo, its bootstrap median and interval, Bradley-Terry with its interval,
and the system's game record (conventions sec. 17).

Criteria sorted, ``overall`` last; within a criterion the systems that play in it, in order of first appearance
in the whole game list. Every criterion is bootstrapped with the same seed.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from metaeval.core.pairwise.bootstrap import bootstrap, percentiles
from metaeval.core.pairwise.bradley_terry import REGULARISER, fit_bt, win_matrix
from metaeval.core.pairwise.elo import AUPEL, EloParams, online_elo
from metaeval.core.pairwise.games import Game, criteria_games, encode, systems_in_order

__all__ = ["COLUMNS", "Leaderboard", "leaderboard"]

COLUMNS = ("criterion", "system", "elo", "elo_median", "elo_ci_low", "elo_ci_high", "bt", "bt_ci_low", "bt_ci_high",
           "wins", "ties", "losses", "games")


@dataclass(frozen=True)
class Leaderboard:
    rows: list[dict[str, object]]
    #: per criterion: whether the point BT fit was regularised, and in how many bootstrap rounds
    regularised: dict[str, dict[str, object]] = field(default_factory=dict)


def leaderboard(games: Sequence[Game], params: EloParams = AUPEL, *, n_boot: int = 1000,
                seed: int | None = None, regulariser: float = REGULARISER) -> Leaderboard:
    """The rows of every criterion (see the module docstring)."""
    order = systems_in_order(games)
    rows: list[dict[str, object]] = []
    regularised: dict[str, dict[str, object]] = {}
    for criterion, played in criteria_games(games).items():
        present = set(systems_in_order(played))
        arrays = encode(played, [name for name in order if name in present])
        elo = online_elo(arrays, params)
        wins = win_matrix(arrays)
        point = fit_bt(wins, scale=params.scale, base=params.base, init=params.init, regulariser=regulariser)
        boot = bootstrap(arrays, params, n_boot=n_boot, seed=seed, regulariser=regulariser)
        elo_low, elo_median, elo_high = percentiles(boot.elo)
        bt_low, _, bt_high = percentiles(boot.bt.ratings)
        regularised[criterion] = {"point": bool(point.regularised), "bootstrap_rounds": int(boot.bt.regularised.sum())}
        n = len(arrays.players)
        won = np.bincount(arrays.a, arrays.s == 1.0, n) + np.bincount(arrays.b, arrays.s == 0.0, n)
        tied = np.bincount(arrays.a, arrays.s == 0.5, n) + np.bincount(arrays.b, arrays.s == 0.5, n)
        played_count = np.bincount(arrays.a, minlength=n) + np.bincount(arrays.b, minlength=n)
        for i, system in enumerate(arrays.players):
            record = [int(won[i]), int(tied[i]), int(played_count[i] - won[i] - tied[i])]
            rows.append({
                "criterion": criterion, "system": system, "elo": float(elo[i]), "elo_median": float(elo_median[i]),
                "elo_ci_low": float(elo_low[i]), "elo_ci_high": float(elo_high[i]), "bt": float(point.ratings[i]),
                "bt_ci_low": float(bt_low[i]), "bt_ci_high": float(bt_high[i]), "wins": record[0],
                "ties": record[1], "losses": record[2], "games": sum(record),
            })
    return Leaderboard(rows=rows, regularised=regularised)

