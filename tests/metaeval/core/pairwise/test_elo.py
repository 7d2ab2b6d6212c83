"""Online Elo: AuPEL's check values, a 3-player list worked by hand, parameters, the rounds version."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.core.pairwise.elo import EloParams, expected_score, online_elo, online_elo_rounds
from metaeval.core.pairwise.games import GameArrays


def games(players, *triples):
    a, b, s = zip(*triples, strict=True)
    return GameArrays(tuple(players), np.array(a), np.array(b), np.array(s, dtype=float))


@pytest.mark.parametrize(("scores", "expected"), [
    ((1.0,), (1002.0, 998.0)),
    ((1.0, 1.0), (1003.976975, 996.023025)),
    ((1.0, 0.5), (1001.976975, 998.023025)),
])
def test_check_values(scores, expected):
    ratings = online_elo(games("AB", *((0, 1, s) for s in scores)))
    assert ratings == pytest.approx(expected, abs=5e-7)
    assert ratings.sum() == pytest.approx(2000.0, abs=1e-9)


def test_three_players_by_hand():
    # A beats B: 1002 / 998. B beats C: E_B = 1/(1 + 10^(2/400)) = 0.4971218, B += 4 (1 - E_B) = 2.0115128.
    # C draws A: E_C = 1/(1 + 10^(4.0115128/400)) = 0.4942271, C += 4 (0.5 - E_C) = 0.0230916, A -= the same.
    ratings = online_elo(games("ABC", (0, 1, 1.0), (1, 2, 1.0), (2, 0, 0.5)))
    assert ratings == pytest.approx([1001.9769084, 1000.0115128, 998.0115788], abs=1e-6)
    assert ratings.sum() == pytest.approx(3000.0, abs=1e-9)


def test_parameters():
    params = EloParams(k=32, scale=200, base=2, init=1500)
    # E = 1/(1 + 2^0) = 1/2 at equal ratings: the winner gains K/2
    assert online_elo(games("AB", (0, 1, 0.0)), params).tolist() == [1484.0, 1516.0]
    assert expected_score(1600, 1400, params) == pytest.approx(1 / (1 + 2 ** (-200 / 200)))
    with pytest.raises(ValueError):
        EloParams(base=1.0)


def test_rounds_replay_each_index_list_like_the_sequential_version():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 40)
    b = (a + rng.integers(1, 4, 40)) % 4
    table = GameArrays(tuple("ABCD"), a, b, rng.choice([0.0, 0.5, 1.0], 40))
    order = rng.integers(0, 40, size=(40, 5))
    together = online_elo_rounds(table, [order[:13], order[13:]], 5)
    for r in range(5):
        alone = online_elo(GameArrays(table.players, a[order[:, r]], b[order[:, r]], table.s[order[:, r]]))
        assert together[r] == pytest.approx(alone, abs=1e-9)
        assert together[r].sum() == pytest.approx(4000.0, abs=1e-9)
