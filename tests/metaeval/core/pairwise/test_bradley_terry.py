"""Bradley-Terry on the Elo scale: by hand, against choix, and the regulariser when the graph is not strongly
connected."""
from __future__ import annotations

import math

import choix
import numpy as np
import pytest

from metaeval.core.pairwise.bradley_terry import fit_bt, fit_bt_many, strongly_connected, win_matrix
from metaeval.core.pairwise.games import GameArrays


def test_two_players_by_hand():
    # 3 wins to 1: p_A / p_B = 3, so bt_A - bt_B = 400 log10 3, centred on 1000
    fit = fit_bt(np.array([[0.0, 3.0], [1.0, 0.0]]))
    half = 200 * math.log10(3)
    assert fit.ratings == pytest.approx([1000 + half, 1000 - half], abs=1e-9)
    assert not fit.regularised


def test_ties_are_half_a_win_each_way():
    # A: one win and two ties against B -> wins 2 to 1 -> ratio 2
    table = GameArrays(("A", "B"), np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([1.0, 0.5, 0.5]))
    wins = win_matrix(table)
    assert wins.tolist() == [[0.0, 2.0], [1.0, 0.0]]
    ratings = fit_bt(wins).ratings
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(2), abs=1e-9)


def test_a_balanced_cycle_is_uniform():
    wins = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)
    assert fit_bt(wins).ratings == pytest.approx([1000.0] * 3, abs=1e-9)


def choix_ratings(wins, n):
    """choix's MLE for integer-valued doubled win counts (a half win -> one comparison, a win -> two)."""
    data = [(i, j) for i in range(n) for j in range(n) for _ in range(round(2 * wins[i, j]))]
    theta = choix.ilsr_pairwise(n, data, alpha=0.0, tol=1e-14, max_iter=100_000)
    ratings = 400 / math.log(10) * np.asarray(theta)
    return ratings + 1000 - ratings.mean()


def test_against_choix_on_random_games():
    rng = np.random.default_rng(11)
    strength = np.array([0.0, 0.4, 0.9, 1.5, 2.5])
    a = rng.integers(0, 5, 400)
    b = (a + rng.integers(1, 5, 400)) % 5
    p = 1 / (1 + np.exp(strength[b] - strength[a]))
    s = np.where(rng.random(400) < 0.15, 0.5, (rng.random(400) < p).astype(float))
    wins = win_matrix(GameArrays(tuple("ABCDE"), a, b, s))
    fit = fit_bt(wins)
    assert not fit.regularised
    assert fit.ratings == pytest.approx(choix_ratings(wins, 5), abs=1e-6)
    assert fit.ratings.mean() == pytest.approx(1000.0, abs=1e-9)


def test_not_strongly_connected_is_regularised_and_recorded():
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=float)  # A > B > C, nobody beats A
    assert not strongly_connected(chain)
    fit = fit_bt(chain)
    assert fit.regularised and fit.regulariser == 0.5
    # the same as the MLE of the data with one virtual tie (half a win each way) between every pair
    assert fit.ratings == pytest.approx(choix_ratings(chain + 0.5 * (1 - np.eye(3)), 3), abs=1e-6)
    assert fit.ratings[0] > fit.ratings[1] > fit.ratings[2]


def test_many_fits_regularise_only_where_needed():
    connected = np.array([[0, 2, 1], [1, 0, 1], [1, 1, 0]], dtype=float)
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=float)
    fit = fit_bt_many(np.stack([connected, chain]))
    assert fit.regularised.tolist() == [False, True]
    assert fit.ratings[0] == pytest.approx(fit_bt(connected).ratings, abs=1e-9)
    assert fit.ratings[1] == pytest.approx(fit_bt(chain).ratings, abs=1e-9)


def test_strong_connectivity():
    assert strongly_connected(np.array([[0, 0.5], [0.5, 0]]))  # a tie links both ways
    assert not strongly_connected(np.zeros((2, 2)))
    four = np.zeros((4, 4))
    four[0, 1] = four[1, 2] = four[2, 3] = four[3, 0] = 1
    assert strongly_connected(four)
    four[3, 0] = 0
    assert not strongly_connected(four)


def test_lopsided_counts_converge_to_the_closed_form():
    # 1000 wins to 1: p_A / p_B = 1000, so bt_A - bt_B = 400 log10 1000 = 1200 (Newton steps are shrunk, still exact)
    ratings = fit_bt(np.array([[0.0, 1000.0], [1.0, 0.0]])).ratings
    assert ratings == pytest.approx([1600.0, 400.0], abs=1e-6)


def test_weighted_win_matrix_counts_each_game_its_weight():
    table = GameArrays(("A", "B"), np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([1.0, 0.5, 0.5]))
    assert win_matrix(table, np.array([2.0, 0.0, 1.0])).tolist() == [[0.0, 2.5], [0.5, 0.0]]
    assert win_matrix(table, np.ones(3)).tolist() == win_matrix(table).tolist()
