"""Style-controlled Bradley-Terry: without covariates it is the project's Bradley-Terry; with them it equals
scikit-learn's unpenalised logistic regression and statsmodels' binomial GLM on the same design; a length-biased
judge's order is corrected and the change is reported."""
from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from sklearn.linear_model import LogisticRegression

from metaeval.core.pairwise.bootstrap import draw_blocks
from metaeval.core.pairwise.bradley_terry import fit_bt, win_matrix
from metaeval.core.pairwise.features import LENGTH, StyleData
from metaeval.core.pairwise.games import Game, GameArrays
from metaeval.core.pairwise.style import StyleFitError, fit_style, style_leaderboard

SCALE = 400 / math.log(10)


def random_games(rng, n_games, strengths, ties=0.15, k=2, beta=(0.8, -0.5)):
    n = len(strengths)
    a = rng.integers(0, n, n_games)
    b = (a + rng.integers(1, n, n_games)) % n
    z = rng.normal(size=(n_games, k))
    eta = np.asarray(strengths)[a] - np.asarray(strengths)[b] + z @ np.asarray(beta[:k])
    s = np.where(rng.random(n_games) < ties, 0.5, (rng.random(n_games) < 1 / (1 + np.exp(-eta))).astype(float))
    return GameArrays(tuple("ABCDEFGH"[:n]), a, b, s), z


def design(games, z):
    n = len(games.players)
    x = np.zeros((len(games), n))
    x[np.arange(len(games)), games.a] = 1.0
    x[np.arange(len(games)), games.b] = -1.0
    return np.hstack([x[:, 1:], z])


def as_ratings(theta_rest):
    theta = np.concatenate([[0.0], theta_rest]) * SCALE
    return theta - theta.mean() + 1000


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_without_covariates_it_is_bradley_terry(seed):
    rng = np.random.default_rng(seed)
    games, _ = random_games(rng, 400, [0.0, 0.5, 1.0, -0.3])
    fit = fit_style(games, np.zeros((len(games), 0)))
    reference = fit_bt(win_matrix(games))
    assert fit.ratings == pytest.approx(reference.ratings, abs=1e-9)
    assert fit.coefficients.shape == (0,) and not fit.regularised


def test_without_covariates_and_not_strongly_connected_it_is_the_regularised_bradley_terry():
    chain = GameArrays(("A", "B", "C"), np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([1.0, 1.0, 1.0]))
    fit = fit_style(chain, np.zeros((3, 0)))
    reference = fit_bt(win_matrix(chain))
    assert fit.regularised and bool(reference.regularised)
    assert fit.ratings == pytest.approx(reference.ratings, abs=1e-9)


@pytest.mark.parametrize("seed", [3, 4])
def test_with_covariates_it_equals_unpenalised_logistic_regression(seed):
    rng = np.random.default_rng(seed)
    games, z = random_games(rng, 600, [0.0, 0.4, 0.9, 1.4, -0.2])
    fit = fit_style(games, z)
    x = design(games, z)
    # a game of score S is a win with weight S and a loss with weight 1 - S
    rows, outcomes = np.vstack([x, x]), np.r_[np.ones(len(games)), np.zeros(len(games))]
    weights = np.r_[games.s, 1 - games.s]
    model = LogisticRegression(C=np.inf, fit_intercept=False, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    model.fit(rows, outcomes, sample_weight=weights)
    n = len(games.players)
    assert fit.ratings == pytest.approx(as_ratings(model.coef_[0][: n - 1]), abs=1e-6)
    assert fit.coefficients == pytest.approx(model.coef_[0][n - 1:], abs=1e-8)
    glm = sm.GLM(outcomes, rows, family=sm.families.Binomial(), freq_weights=weights).fit(tol=1e-14)
    assert fit.ratings == pytest.approx(as_ratings(glm.params[: n - 1]), abs=1e-8)
    assert fit.coefficients == pytest.approx(glm.params[n - 1:], abs=1e-10)


def test_weights_are_repeated_games():
    rng = np.random.default_rng(5)
    games, z = random_games(rng, 200, [0.0, 0.7, 1.1])
    weights = rng.integers(0, 4, len(games)).astype(float)
    repeat = np.repeat(np.arange(len(games)), weights.astype(int))
    expanded = GameArrays(games.players, games.a[repeat], games.b[repeat], games.s[repeat])
    weighted, plain = fit_style(games, z, weights), fit_style(expanded, z[repeat])
    assert weighted.ratings == pytest.approx(plain.ratings, abs=1e-9)
    assert weighted.coefficients == pytest.approx(plain.coefficients, abs=1e-12)


def test_a_covariate_determined_by_the_systems_and_separation_are_errors():
    rng = np.random.default_rng(6)
    games, _ = random_games(rng, 100, [0.0, 0.5, 1.0], k=0, beta=())
    # A's texts are always 2 longer: the covariate is a function of the pair
    length = np.where(games.a == 0, 1.0, 0.0) - np.where(games.b == 0, 1.0, 0.0)
    with pytest.raises(StyleFitError, match="determined by the systems"):
        fit_style(games, length[:, None])
    # the longer text always wins: no finite maximum
    separating = np.where(games.s == 1.0, 1.0, np.where(games.s == 0.0, -1.0, 0.0)) * rng.uniform(0.5, 1, len(games))
    with pytest.raises(StyleFitError, match="separate wins from losses"):
        fit_style(games, separating[:, None])


def length_biased_judgments(rng, n_cases=300):
    """Three systems of true strength C > B > A (theta 0.6, 0.3, 0); A writes much longer texts, and the judge
    adds 1.5 log-odds per unit of normalised length difference: a plain fit ranks A first."""
    strength = {"A": 0.0, "B": 0.3, "C": 0.6}
    mean_length = {"A": 30, "B": 12, "C": 10}
    games, lengths = [], {}
    line = 2
    for case in range(n_cases):
        for system in strength:
            lengths[(f"c{case}", system)] = float(max(1, rng.poisson(mean_length[system])))
        for a, b in (("A", "B"), ("B", "C"), ("C", "A")):
            la, lb = lengths[(f"c{case}", a)], lengths[(f"c{case}", b)]
            eta = strength[a] - strength[b] + 1.5 * (la - lb) / (la + lb) / 0.5
            score = 1.0 if rng.random() < 1 / (1 + math.exp(-eta)) else 0.0
            games.append(Game(f"c{case}", "quality", a, b, score, line, 1))
            line += 1
    return games, StyleData(side={LENGTH: lengths})


def test_style_control_corrects_a_length_biased_order_and_says_so():
    rng = np.random.default_rng(7)
    games, data = length_biased_judgments(rng)
    board = style_leaderboard(games, data, n_boot=100, seed=3)
    quality = {system: board.rows[("quality", system)] for system in "ABC"}
    assert quality["A"]["rank_nostyle"] == 1                                     # length wins without control
    assert [quality[s]["rank_style"] for s in "CBA"] == [1, 2, 3]                # the true order with it
    assert [c["criterion"] for c in board.order_changes] == ["quality", "overall"]
    change = board.order_changes[0]
    assert change["without"][0] == "A" and change["with"] == ["C", "B", "A"]
    assert any("changes the order in quality" in line for line in board.warnings())
    length = next(c for c in board.coefficients if c["criterion"] == "quality")
    assert length["feature"] == LENGTH and length["coefficient"] > 0.5
    assert length["ci_low"] < length["coefficient"] < length["ci_high"]
    for system in "ABC":
        row = quality[system]
        assert row["style_games"] == 600
        assert row["bt_style_ci_low"] <= row["bt_style"] <= row["bt_style_ci_high"]
    # the plain fit on the style games is the plain Bradley-Terry
    arrays = GameArrays(("A", "B", "C"), np.array([("ABC".index(g.model_a)) for g in games]),
                        np.array([("ABC".index(g.model_b)) for g in games]), np.array([g.score for g in games]))
    plain = fit_bt(win_matrix(arrays)).ratings
    assert [quality[s]["bt_nostyle"] for s in "ABC"] == pytest.approx(plain, abs=1e-9)
    assert board.notes["quality"]["failed_rounds"] == 0


@pytest.mark.parametrize(("cases", "n_boot"), [(40, 30), (3, 60)])
def test_the_bootstrap_uses_the_leaderboards_draws(cases, n_boot):
    # 40 cases: every round has a fit; 3 cases (9 games): some rounds need the regulariser, some have no maximum
    rng = np.random.default_rng(8)
    games, data = length_biased_judgments(rng, n_cases=cases)
    board = style_leaderboard(games, data, n_boot=n_boot, seed=11)
    # round r plays column r of default_rng(seed).integers(0, n, (n, n_boot)), n = the criterion's style games
    draws = np.vstack(list(draw_blocks(len(games), n_boot, 11)))
    arrays = GameArrays(("A", "B", "C"), np.array(["ABC".index(g.model_a) for g in games]),
                        np.array(["ABC".index(g.model_b) for g in games]), np.array([g.score for g in games]))
    raw = np.array([[data.covariate(LENGTH, g.case_id, g.model_a, g.model_b)] for g in games])
    z = raw / np.sqrt((raw ** 2).mean())
    point = fit_style(arrays, z)
    start = np.concatenate([(point.ratings[1:] - point.ratings[0]) / SCALE, point.coefficients])
    ratings, failed, regularised = [], 0, 0
    for r in range(n_boot):
        counts = np.bincount(draws[:, r], minlength=len(games)).astype(float)
        try:
            fit = fit_style(arrays, z, counts, start=start)
        except StyleFitError:
            failed += 1
            continue
        ratings.append(fit.ratings)
        regularised += fit.regularised
    low, high = np.percentile(np.array(ratings), [2.5, 97.5], axis=0, method="linear")
    row = board.rows[("quality", "A")]
    assert board.notes["quality"]["failed_rounds"] == failed
    assert (row["bt_style_ci_low"], row["bt_style_ci_high"]) == (pytest.approx(low[0], abs=1e-7),
                                                                 pytest.approx(high[0], abs=1e-7))
    if cases == 3:
        assert failed > 0 and regularised > 0


def test_games_without_covariates_are_left_out_and_counted():
    rng = np.random.default_rng(9)
    games, data = length_biased_judgments(rng, n_cases=60)
    extra = [Game("unknown", "quality", "A", "B", 1.0, 10_000, 1)]
    board = style_leaderboard([*games, *extra], data, n_boot=10, seed=1)
    assert board.notes["quality"]["without_covariates"] == 1
    assert board.rows[("quality", "A")]["style_games"] == 120
