"""The bootstrap: the documented draws, Elo and BT of the same resampled games, seeded percentiles."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.core.pairwise import bootstrap as module
from metaeval.core.pairwise.bootstrap import bootstrap, bootstrap_bt, draw_blocks, percentiles
from metaeval.core.pairwise.bradley_terry import fit_bt, win_matrix
from metaeval.core.pairwise.elo import online_elo
from metaeval.core.pairwise.games import GameArrays


def random_games(n=120, players=5, seed=3):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, players, n)
    b = (a + rng.integers(1, players, n)) % players
    return GameArrays(tuple("ABCDEFG"[:players]), a, b, rng.choice([0.0, 0.5, 1.0], n))


def test_blocks_are_the_rows_of_one_draw(monkeypatch):
    monkeypatch.setattr(module, "BLOCK_CELLS", 7 * 30)
    blocks = list(draw_blocks(50, 30, seed=5))
    assert len(blocks) > 1
    assert np.array_equal(np.vstack(blocks), np.random.default_rng(5).integers(0, 50, size=(50, 30)))


def test_each_round_is_elo_and_bt_of_its_resampled_games(monkeypatch):
    monkeypatch.setattr(module, "BLOCK_CELLS", 40 * 25)
    table = random_games()
    boot = bootstrap(table, n_boot=25, seed=9)
    draws = np.random.default_rng(9).integers(0, len(table), size=(len(table), 25))
    for r in range(25):
        order = draws[:, r]
        sample = GameArrays(table.players, table.a[order], table.b[order], table.s[order])
        assert boot.elo[r] == pytest.approx(online_elo(sample), abs=1e-9)
        assert boot.bt.ratings[r] == pytest.approx(fit_bt(win_matrix(sample)).ratings, abs=1e-8)
    assert np.array_equal(bootstrap_bt(table, n_boot=25, seed=9).ratings, boot.bt.ratings)


def test_seeded_and_percentiles_are_numpys_linear_ones():
    table = random_games()
    first, again = bootstrap(table, n_boot=50, seed=1), bootstrap(table, n_boot=50, seed=1)
    assert np.array_equal(first.elo, again.elo) and np.array_equal(first.bt.ratings, again.bt.ratings)
    assert not np.array_equal(first.elo, bootstrap(table, n_boot=50, seed=2).elo)
    low, median, high = percentiles(first.elo)
    column = np.sort(first.elo[:, 0])  # linear: rank (n - 1) q / 100 interpolated between neighbours
    assert low[0] == pytest.approx(column[1] + 0.225 * (column[2] - column[1]))
    assert median[0] == pytest.approx((column[24] + column[25]) / 2)
    assert high[0] == pytest.approx(column[47] + 0.775 * (column[48] - column[47]))
