"""Bootstrap of the game list for Elo and Bradley-Terry (conventions sec. 17; AuPEL sec. 5.3 and appendix A.6).

Round r plays the game list ``games[draws[:, r]]`` with ``draws = rng.integers(0, n, size=(n, n_boot))`` and
``rng = numpy.random.default_rng(seed)``: n games drawn with replacement, which also reorders them. The matrix is
drawn in blocks of rows (the same numbers, never all in memory). Online Elo replays each resampled list in order;
Bradley-Terry fits each list's win matrix (order-free), so both use the very same resampled games. Intervals are
``numpy.percentile(..., [2.5, 50, 97.5], method="linear")`` over the rounds (the median is the 50th).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from metaeval.core.pairwise.bradley_terry import REGULARISER, BTFit, fit_bt_many
from metaeval.core.pairwise.elo import AUPEL, EloParams, online_elo_rounds
from metaeval.core.pairwise.games import GameArrays

__all__ = ["PERCENTILES", "Bootstrap", "bootstrap", "bootstrap_bt", "draw_blocks", "percentiles"]

PERCENTILES = (2.5, 50.0, 97.5)
BLOCK_CELLS = 1 << 20  # draws per block (about 8 MB of indexes)


def draw_blocks(n_games: int, n_boot: int, seed: int | None) -> Iterator[np.ndarray]:
    """Consecutive row blocks of ``default_rng(seed).integers(0, n_games, size=(n_games, n_boot))``."""
    rng = np.random.default_rng(seed)
    rows = max(1, BLOCK_CELLS // max(n_boot, 1))
    for start in range(0, n_games, rows):
        yield rng.integers(0, n_games, size=(min(rows, n_games - start), n_boot))


@dataclass(frozen=True)
class Bootstrap:
    """Per round (rows) and player (columns): online Elo and Bradley-Terry ratings of the resampled games."""

    elo: np.ndarray
    bt: BTFit


class _ResampledWins:
    """Win matrices of the resampled game lists, counted block by block: a game adds s to wins[a, b] and 1 - s
    to wins[b, a], so it is enough to count the drawn games per (round, kind of game)."""

    def __init__(self, games: GameArrays, n_boot: int) -> None:
        self.players = len(games.players)
        self.kinds, self.kind_of_game = np.unique(
            (games.a * self.players + games.b) * 3 + (2 * games.s).astype(np.intp), return_inverse=True)
        self.n_boot = n_boot
        self.counts = np.zeros(n_boot * len(self.kinds))
        self.offsets = np.arange(n_boot, dtype=np.intp) * len(self.kinds)

    def add(self, block: np.ndarray) -> None:
        self.counts += np.bincount((self.kind_of_game[block] + self.offsets).ravel(), minlength=len(self.counts))

    def wins(self) -> np.ndarray:
        players = self.players
        per_kind = self.counts.reshape(self.n_boot, len(self.kinds))
        pair, twice_s = np.divmod(self.kinds, 3)
        a, b = np.divmod(pair, players)
        wins = np.zeros((self.n_boot, players * players))
        for j, s in enumerate(twice_s / 2.0):
            wins[:, a[j] * players + b[j]] += per_kind[:, j] * s
            wins[:, b[j] * players + a[j]] += per_kind[:, j] * (1.0 - s)
        return wins.reshape(self.n_boot, players, players)


def bootstrap(games: GameArrays, params: EloParams = AUPEL, *, n_boot: int = 1000, seed: int | None = None,
              regulariser: float = REGULARISER) -> Bootstrap:
    """Elo and BT of ``n_boot`` resampled game lists, drawn once (see the module docstring)."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, not {n_boot}")
    counter = _ResampledWins(games, n_boot)

    def blocks() -> Iterator[np.ndarray]:
        for block in draw_blocks(len(games), n_boot, seed):
            counter.add(block)
            yield block

    elo = online_elo_rounds(games, blocks(), n_boot, params)
    bt = fit_bt_many(counter.wins(), scale=params.scale, base=params.base, init=params.init, regulariser=regulariser)
    return Bootstrap(elo=elo, bt=bt)


def bootstrap_bt(games: GameArrays, params: EloParams = AUPEL, *, n_boot: int = 1000, seed: int | None = None,
                 regulariser: float = REGULARISER) -> BTFit:
    """Only the Bradley-Terry part of :func:`bootstrap` (the same draws, no Elo replay)."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, not {n_boot}")
    counter = _ResampledWins(games, n_boot)
    for block in draw_blocks(len(games), n_boot, seed):
        counter.add(block)
    return fit_bt_many(counter.wins(), scale=params.scale, base=params.base, init=params.init, regulariser=regulariser)


def percentiles(samples: np.ndarray) -> np.ndarray:
    """``(3, players)``: the 2.5th percentile, median and 97.5th percentile over the rounds (linear)."""
    return np.percentile(samples, PERCENTILES, axis=0, method="linear")
