"""Bradley-Terry maximum likelihood on the Elo scale (conventions sec. 17; FastChat's ``compute_mle_elo``).

``wins[i, j]`` = games i won against j plus half of their ties (a tie is half a win each way). The model
P(i beats j) = p_i / (p_i + p_j) is fitted by maximum likelihood (Newton's method on theta = ln p, the gauge
fixed by mean(theta) = 0, every round of a bootstrap at once) and reported as

    bt_i = scale * log_base(p_i), shifted so that the mean over the systems is ``init`` (400, 10, 1000).

The MLE exists only when the comparison graph (an edge i -> j when wins[i, j] > 0; ties give both edges) is
strongly connected. Where it is not, ``regulariser`` virtual games are added between every pair, each counted as
half a win each way (default 0.5: one virtual tie per pair), and the fit says so (:attr:`BTFit.regularised`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from metaeval.core.pairwise.games import GameArrays

__all__ = ["REGULARISER", "BTFit", "fit_bt", "fit_bt_many", "strongly_connected", "win_matrix"]

#: virtual half-wins added each way between every pair when the graph is not strongly connected
REGULARISER = 0.5
TOLERANCE = 1e-12  # max |Newton step| in theta (natural-log units) at convergence
MAX_ITERATIONS = 200
MAX_STEP = 2.0  # a Newton step is shrunk to at most this in any theta


@dataclass(frozen=True)
class BTFit:
    """Ratings on the Elo scale per player (rows: rounds when fitted many at once) and which fits needed the
    regulariser."""

    ratings: np.ndarray
    regularised: np.ndarray
    regulariser: float


def win_matrix(games: GameArrays, weights: np.ndarray | None = None) -> np.ndarray:
    """``wins[i, j]``: i's wins against j plus half their ties (game g counted ``weights[g]`` times when given)."""
    n = len(games.players)
    wins = np.zeros(n * n)
    if weights is None:
        np.add.at(wins, games.a * n + games.b, games.s)
        np.add.at(wins, games.b * n + games.a, 1.0 - games.s)
    else:
        np.add.at(wins, games.a * n + games.b, weights * games.s)
        np.add.at(wins, games.b * n + games.a, weights * (1.0 - games.s))
    return wins.reshape(n, n)


def strongly_connected(wins: np.ndarray) -> np.ndarray:
    """Whether each ``(..., n, n)`` win matrix's graph (i -> j when wins[i, j] > 0) is strongly connected."""
    n = wins.shape[-1]
    reach = ((wins > 0) | np.eye(n, dtype=bool)).astype(np.float64)
    for _ in range(max(1, math.ceil(math.log2(max(n, 2))))):
        reach = (reach @ reach > 0).astype(np.float64)
    return np.asarray(reach.all(axis=(-2, -1)))


def fit_bt(wins: np.ndarray, *, scale: float = 400.0, base: float = 10.0, init: float = 1000.0,
           regulariser: float = REGULARISER) -> BTFit:
    """One fit of an ``(n, n)`` win matrix (see the module docstring); ``ratings`` has shape ``(n,)``."""
    fit = fit_bt_many(wins[None], scale=scale, base=base, init=init, regulariser=regulariser)
    return BTFit(fit.ratings[0], fit.regularised[0], regulariser)


def fit_bt_many(wins: np.ndarray, *, scale: float = 400.0, base: float = 10.0, init: float = 1000.0,
                regulariser: float = REGULARISER) -> BTFit:
    """Fits of ``(rounds, n, n)`` win matrices at once, each regularised only where its graph needs it."""
    wins = np.array(wins, dtype=np.float64)
    rounds, n, _ = wins.shape
    if n < 2:
        return BTFit(np.full((rounds, n), init), np.zeros(rounds, dtype=bool), regulariser)
    regularised = ~strongly_connected(wins)
    if regularised.any():
        wins[regularised] += regulariser * (1.0 - np.eye(n))
    theta = _newton(wins)
    ratings = theta * (scale / math.log(base))
    ratings += init - ratings.mean(axis=1, keepdims=True)
    return BTFit(ratings, regularised, regulariser)


def _newton(wins: np.ndarray) -> np.ndarray:
    """theta (mean 0) maximising sum_ij wins_ij ln sigmoid(theta_i - theta_j), for strongly connected graphs.

    gradient_i = W_i - sum_j N_ij sigma_ij, Hessian = -L with L the Laplacian of N_ij sigma_ij (1 - sigma_ij),
    N = wins + wins^T; the step solves (L + 1 1^T) step = gradient (whose entries sum to 0)."""
    rounds, n, _ = wins.shape
    total = wins + wins.transpose(0, 2, 1)
    row_wins = wins.sum(axis=2)
    theta = np.zeros((rounds, n))
    ones = np.ones((n, n))
    for _ in range(MAX_ITERATIONS):
        sigma = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))  # sigma_ij = P(i beats j)
        gradient = row_wins - (total * sigma).sum(axis=2)
        weight = total * sigma * (1.0 - sigma)
        laplacian = -weight
        laplacian[:, np.arange(n), np.arange(n)] += weight.sum(axis=2)
        step = np.linalg.solve(laplacian + ones, gradient[..., None])[..., 0]
        largest = np.abs(step).max(axis=1, keepdims=True)
        step *= np.minimum(1.0, MAX_STEP / np.maximum(largest, MAX_STEP * 1e-300))
        theta += step
        theta -= theta.mean(axis=1, keepdims=True)
        if largest.max() < TOLERANCE:
            return theta
    raise ArithmeticError(f"Bradley-Terry Newton did not converge in {MAX_ITERATIONS} iterations")
