"""Online Elo over a game list (conventions sec. 17; AuPEL appendix A.1, FastChat's ``compute_online_elo``).

For a game of a against b with a's result S in {1, 0.5, 0}:

    E_a = 1 / (1 + base^((R_b - R_a) / scale)),   R_a += K (S - E_a),   R_b -= K (S - E_a)

both from the ratings before the game (so E_b = 1 - E_a and the sum of the ratings stays init * players). Games
are played in list order; every player starts at ``init``. Defaults: K = 4, scale 400, base 10, init 1000 (AuPEL).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from metaeval.core.pairwise.games import GameArrays

__all__ = ["AUPEL", "EloParams", "expected_score", "online_elo", "online_elo_rounds"]


@dataclass(frozen=True)
class EloParams:
    k: float = 4.0
    scale: float = 400.0
    base: float = 10.0
    init: float = 1000.0

    def __post_init__(self) -> None:
        for name in ("k", "scale", "init"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"Elo {name} must be finite, not {getattr(self, name)!r}")
        if self.scale <= 0 or not self.base > 1 or self.k <= 0:
            raise ValueError(f"Elo needs k > 0, scale > 0 and base > 1, not {self}")


#: AuPEL's parameters (appendix A.1)
AUPEL = EloParams()


def expected_score(rating: float, opponent: float, params: EloParams = AUPEL) -> float:
    """E = 1 / (1 + base^((R_opponent - R) / scale))."""
    return 1.0 / (1.0 + params.base ** ((opponent - rating) / params.scale))


def online_elo(games: GameArrays, params: EloParams = AUPEL) -> np.ndarray:
    """Ratings of ``games.players`` after playing ``games`` in order."""
    ratings = [params.init] * len(games.players)
    k, base, scale = params.k, params.base, params.scale
    for a, b, s in zip(games.a.tolist(), games.b.tolist(), games.s.tolist(), strict=True):
        ra, rb = ratings[a], ratings[b]
        delta = k * (s - 1.0 / (1.0 + base ** ((rb - ra) / scale)))
        ratings[a] = ra + delta
        ratings[b] = rb - delta
    return np.array(ratings, dtype=np.float64)


def online_elo_rounds(
    games: GameArrays, blocks: Iterable[np.ndarray], n_rounds: int, params: EloParams = AUPEL
) -> np.ndarray:
    """Online Elo of ``n_rounds`` game lists at once: ``blocks`` are consecutive ``(steps, n_rounds)`` arrays of
    game indexes (row t, column r: round r's t-th game). Sequential over t, vectorised over rounds.
    Returns ``(n_rounds, players)`` ratings. E is computed as 1 / (1 + exp(ln(base)/scale * (R_b - R_a)))."""
    players = len(games.players)
    ratings = np.full(n_rounds * players, params.init, dtype=np.float64)
    offsets = np.arange(n_rounds, dtype=np.intp) * players
    c = math.log(params.base) / params.scale
    k = params.k
    pair = np.empty((2, n_rounds))  # R_a, R_b of every round
    delta = np.empty(n_rounds)
    for block in blocks:
        both = np.stack([games.a[block] + offsets, games.b[block] + offsets], axis=1)  # (steps, 2, rounds)
        ks = games.s[block] * k
        for t in range(block.shape[0]):
            index = both[t]
            np.take(ratings, index, out=pair)
            np.subtract(pair[1], pair[0], out=delta)
            delta *= c
            np.exp(delta, out=delta)
            delta += 1.0
            np.divide(-k, delta, out=delta)  # -K E_a
            delta += ks[t]  # K (S - E_a)
            pair[0] += delta
            pair[1] -= delta
            ratings[index] = pair
    return ratings.reshape(n_rounds, players)
