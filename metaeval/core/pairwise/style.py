"""Style-controlled Bradley-Terry (conventions sec. 29; Chatbot Arena's style control, LMSYS 2024).

Bradley-Terry as a logistic regression over games with style covariates: for a game of a against b with a's
result S (1, 0.5, 0; a draw is half a win each way, as in sec. 17 item 8),

    P(a beats b) = sigmoid(theta_a - theta_b + sum_k beta_k z_k),

z_k the game's covariate k (:mod:`metaeval.core.pairwise.features`: the normalised length difference
(len_a - len_b) / (len_a + len_b), feature differences, ``style_`` columns) divided by its root mean square over
the criterion's games (so a coefficient is per typical difference; no centring, which would make the model depend
on which side is called a). The maximum-likelihood fit maximises sum_g S_g ln sigmoid(eta_g) + (1 - S_g)
ln sigmoid(-eta_g) by Newton's method (theta of the first system fixed at 0 while fitting, a step at most 2 in any
parameter, halved until the likelihood does not fall, until the largest step is below 1e-10); the ratings are
``scale * theta / ln(base)`` shifted to mean ``init``, as :mod:`metaeval.core.pairwise.bradley_terry`. Without
covariates the fit is that module's Bradley-Terry. When the comparison graph is not strongly connected the same
regulariser is added: one virtual draw per pair of systems, with zero covariates.

Bootstrap: the very draws of the leaderboard's (sec. 17 item 7: ``default_rng(seed).integers(0, n, (n, n_boot))``
over the style games), one weighted fit per round started from the point fit; the 2.5 and 97.5 percentiles.
A round whose fit has no maximum (a covariate that separates wins from losses in that sample) is left out and
counted.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metaeval.core.pairwise.bootstrap import PERCENTILES, draw_blocks
from metaeval.core.pairwise.bradley_terry import REGULARISER, fit_bt, strongly_connected, win_matrix
from metaeval.core.pairwise.elo import AUPEL, EloParams
from metaeval.core.pairwise.features import StyleData
from metaeval.core.pairwise.games import Game, GameArrays, criteria_games, encode, systems_in_order

__all__ = ["COEFFICIENT_COLUMNS", "STYLE_COLUMNS", "StyleBoard", "StyleFit", "StyleFitError", "fit_style",
           "style_design", "style_leaderboard"]

#: the columns ``pairwise --style-control`` appends to the ratings table
STYLE_COLUMNS = ("style_games", "bt_nostyle", "bt_style", "bt_style_ci_low", "bt_style_ci_high", "rank_nostyle",
                 "rank_style")
#: ``pairwise --table style``: one row per criterion and covariate
COEFFICIENT_COLUMNS = ("criterion", "feature", "coefficient", "ci_low", "ci_high", "scale", "games")

TOLERANCE = 1e-10  # largest Newton step (natural-log units) at convergence
MAX_ITERATIONS = 200
MAX_STEP = 2.0
RANK_DECIMALS = 6  # ratings equal to 1e-6 Elo points share a rank
COUNT_CELLS = 1 << 23  # resampled game counts held at once (rounds x games); more are drawn again per chunk


_SEPARATION = "the covariates separate wins from losses on these games, so the likelihood has no finite maximum"


class StyleFitError(ArithmeticError):
    """The style-controlled likelihood has no unique maximum (collinear covariates, or separation)."""


@dataclass(frozen=True)
class StyleFit:
    """Ratings on the Elo scale per player, coefficients per (standardised) covariate in log-odds, whether the
    regulariser was used and how many Newton iterations it took."""

    ratings: np.ndarray
    coefficients: np.ndarray
    regularised: bool
    iterations: int


def _virtual_games(n: int, regulariser: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    first, second = np.triu_indices(n, 1)
    return first.astype(np.intp), second.astype(np.intp), np.full(len(first), 2.0 * regulariser)


def _design(a: np.ndarray, b: np.ndarray, z: np.ndarray, n: int) -> np.ndarray:
    """Rows e_a - e_b (without the first system's column) then the covariates."""
    x = np.zeros((len(a), n - 1 + z.shape[1]))
    rows = np.arange(len(a))
    keep_a, keep_b = a > 0, b > 0
    x[rows[keep_a], a[keep_a] - 1] = 1.0
    x[rows[keep_b], b[keep_b] - 1] = -1.0
    x[:, n - 1:] = z
    return x


def _log_likelihood(x: np.ndarray, s: np.ndarray, w: np.ndarray, params: np.ndarray) -> float:
    eta = x @ params
    return float(-(w * (s * np.logaddexp(0.0, -eta) + (1.0 - s) * np.logaddexp(0.0, eta))).sum())


def _newton(x: np.ndarray, s: np.ndarray, w: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, int]:
    params = start.copy()
    current = _log_likelihood(x, s, w, params)
    for iteration in range(1, MAX_ITERATIONS + 1):
        eta = x @ params
        sigma = 1.0 / (1.0 + np.exp(-eta))
        gradient = x.T @ (w * (s - sigma))
        information = (x.T * (w * sigma * (1.0 - sigma))) @ x
        try:
            step = np.linalg.solve(information, gradient)
        except np.linalg.LinAlgError:
            step = np.full(len(params), np.inf)
        largest = float(np.abs(step).max()) if len(step) else 0.0
        if not math.isfinite(largest):  # the design has full rank (checked), so the weights vanished: separation
            raise StyleFitError(_SEPARATION)
        if largest < TOLERANCE:
            return params + step, iteration
        if largest > MAX_STEP:
            step *= MAX_STEP / largest
        size = 1.0
        while True:
            candidate = params + size * step
            value = _log_likelihood(x, s, w, candidate)
            if value >= current - 1e-12 * abs(current) or size < 1e-8:
                break
            size /= 2.0
        params, current = candidate, value
    raise StyleFitError(f"{_SEPARATION} (no convergence in {MAX_ITERATIONS} Newton iterations)")


def fit_style(games: GameArrays, z: np.ndarray, weights: np.ndarray | None = None, *, scale: float = 400.0,
              base: float = 10.0, init: float = 1000.0, regulariser: float = REGULARISER,
              start: np.ndarray | None = None) -> StyleFit:
    """The fit of the module docstring on ``games`` with covariates ``z`` (games x covariates, already
    standardised) and optional per-game ``weights`` (a bootstrap round's counts). ``start``: parameters of an
    earlier fit (first system's theta dropped) to start Newton from."""
    n = len(games.players)
    z = np.asarray(z, dtype=np.float64).reshape(len(games), -1)
    k = z.shape[1]
    w = np.ones(len(games)) if weights is None else np.asarray(weights, dtype=np.float64)
    if n < 2:
        return StyleFit(np.full(n, init), np.zeros(k), False, 0)
    a, b, s = games.a, games.b, games.s
    used = w > 0
    a, b, s, z, w = a[used], b[used], s[used], z[used], w[used]
    regularised = not bool(strongly_connected(win_matrix(GameArrays(games.players, a, b, s), w)))
    if regularised:
        va, vb, vw = _virtual_games(n, regulariser)
        a, b = np.concatenate([a, va]), np.concatenate([b, vb])
        s, w = np.concatenate([s, np.full(len(va), 0.5)]), np.concatenate([w, vw])
        z = np.concatenate([z, np.zeros((len(va), k))])
    x = _design(a, b, z, n)
    if np.linalg.matrix_rank(x.T @ x) < x.shape[1]:
        raise StyleFitError("a style covariate is determined by the systems or by the other covariates on these "
                            "games (e.g. every text of a system has the same length), so style and system cannot "
                            "be told apart")
    params, iterations = _newton(x, s, w, np.zeros(x.shape[1]) if start is None else start)
    theta = np.concatenate([[0.0], params[: n - 1]]) * (scale / math.log(base))
    return StyleFit(theta - theta.mean() + init, params[n - 1:].copy(), regularised, iterations)


def _parameters(fit: StyleFit, scale: float, base: float) -> np.ndarray:
    """A fit's Newton parameters (first theta dropped), to start another fit from."""
    theta = (fit.ratings - fit.ratings[0]) * (math.log(base) / scale)
    return np.concatenate([theta[1:], fit.coefficients])


def style_design(games: Sequence[Game], data: StyleData, names: Sequence[str]) -> tuple[list[Game], np.ndarray]:
    """The games whose covariates ``names`` are all known, and their raw covariates (games x names)."""
    kept: list[Game] = []
    values: list[list[float]] = []
    for game in games:
        row = data.covariates(names, game.case_id, game.model_a, game.model_b)
        if row is not None:
            kept.append(game)
            values.append(row)
    return kept, np.array(values, dtype=np.float64).reshape(len(kept), len(names))


def _ranks(ratings: Sequence[float | None]) -> list[int | None]:
    rounded = [None if r is None else round(r, RANK_DECIMALS) for r in ratings]
    return [None if r is None else 1 + sum(1 for other in rounded if other is not None and other > r)
            for r in rounded]


def _order(systems: Sequence[str], ratings: Sequence[float]) -> list[str]:
    rounded = [round(r, RANK_DECIMALS) for r in ratings]
    return [systems[i] for i in sorted(range(len(systems)), key=lambda i: (-rounded[i], i))]


@dataclass(frozen=True)
class StyleBoard:
    """Rows keyed (criterion, system) with :data:`STYLE_COLUMNS`; coefficient rows; per criterion its notes
    (games left out for unknown covariates, covariates dropped as all zero, regulariser, failed bootstrap rounds,
    an error when the fit has no maximum); and the criteria whose order changes under style control."""

    rows: dict[tuple[str, str], dict[str, Any]]
    coefficients: list[dict[str, Any]]
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    order_changes: list[dict[str, Any]] = field(default_factory=list)

    def warnings(self) -> list[str]:
        """One line per criterion whose order changes, or whose style fit failed."""
        lines = [f"warning: style control changes the order in {change['criterion']}: "
                 f"{' > '.join(change['without'])} without, {' > '.join(change['with'])} with"
                 for change in self.order_changes]
        lines += [f"warning: {criterion}: no style-controlled fit: {note['error']}"
                  for criterion, note in self.notes.items() if note.get("error")]
        return lines


def _counts(n_games: int, n_boot: int, seed: int | None, first: int, last: int) -> np.ndarray:
    """How often each game is drawn in rounds first..last-1 of the leaderboard's draws, (rounds, games)."""
    columns = np.vstack([block[:, first:last] for block in draw_blocks(n_games, n_boot, seed)])
    flat = (columns.T + (np.arange(last - first, dtype=np.intp) * n_games)[:, None]).ravel()
    counts = np.bincount(flat, minlength=(last - first) * n_games).astype(np.uint32)
    return counts.reshape(last - first, n_games)


def _fit_rounds(x: np.ndarray, s: np.ndarray, weights: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Newton's method for many rounds at once (each a weight vector, rows of ``weights``) from ``start``: full
    steps (at most MAX_STEP), the information matrices as one product with the games' outer products x x^T.
    Parameters per round; NaN where a round does not converge (no maximum) or its information is singular."""
    rounds, p = len(weights), x.shape[1]
    outer = (x[:, :, None] * x[:, None, :]).reshape(len(x), p * p)
    params = np.tile(start, (rounds, 1))
    active = np.arange(rounds)
    for _ in range(MAX_ITERATIONS):
        w = weights[active].T  # (games, active)
        eta = x @ params[active].T
        sigma = 1.0 / (1.0 + np.exp(-eta))
        gradient = (x.T @ (w * (s[:, None] - sigma))).T  # (active, p)
        information = ((w * sigma * (1.0 - sigma)).T @ outer).reshape(len(active), p, p)
        try:
            step = np.linalg.solve(information, gradient[..., None])[..., 0]
        except np.linalg.LinAlgError:
            step = np.full((len(active), p), np.nan)
            for k in range(len(active)):
                try:
                    step[k] = np.linalg.solve(information[k], gradient[k])
                except np.linalg.LinAlgError:
                    continue
        largest = np.abs(step).max(axis=1)
        bad = ~np.isfinite(largest)
        params[active[bad]] = np.nan
        step[bad], largest[bad] = 0.0, 0.0
        step *= np.minimum(1.0, MAX_STEP / np.maximum(largest, MAX_STEP * 1e-300))[:, None]
        params[active] += step
        active = active[~bad & (largest >= TOLERANCE)]
        if not len(active):
            return params
    params[active] = np.nan
    return params


#: (rounds x games) weights handled at once by the batched bootstrap fits (about 16 MB per matrix)
ROUND_CELLS = 1 << 21


def _bootstrap(arrays: GameArrays, z: np.ndarray, point: StyleFit, params: EloParams, n_boot: int,
               seed: int | None, regulariser: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Ratings and coefficients of every round (rows; NaN for a failed round) and the number of failed rounds.
    Each round is the weighted fit of :func:`fit_style` (virtual draws where its graph is not strongly connected),
    solved for a chunk of rounds at once (:func:`_fit_rounds`); a round that fails there is fitted again alone
    by :func:`fit_style` (halving steps), and fails only if that fails too."""
    n, k = len(arrays.players), z.shape[1]
    va, vb, vw = _virtual_games(n, regulariser)
    x = _design(np.concatenate([arrays.a, va]), np.concatenate([arrays.b, vb]),
                np.concatenate([z, np.zeros((len(va), k))]), n)
    s = np.concatenate([arrays.s, np.full(len(va), 0.5)])
    start = _parameters(point, params.scale, params.base)
    found = np.full((n_boot, len(start)), np.nan)
    incidence = np.zeros((len(arrays), n * n))  # a round's counts times this: its win matrix (sec. 17 item 8)
    np.add.at(incidence, (np.arange(len(arrays)), arrays.a * n + arrays.b), arrays.s)
    np.add.at(incidence, (np.arange(len(arrays)), arrays.b * n + arrays.a), 1.0 - arrays.s)
    drawn = max(1, COUNT_CELLS // max(len(arrays), 1))  # rounds whose counts are drawn at once
    fitted = max(1, ROUND_CELLS // max(len(arrays), 1))  # rounds fitted at once
    for first in range(0, n_boot, drawn):
        counts = _counts(len(arrays), n_boot, seed, first, min(n_boot, first + drawn))
        for offset in range(0, len(counts), fitted):
            part = counts[offset:offset + fitted].astype(np.float64)
            regularised = ~strongly_connected((part @ incidence).reshape(-1, n, n))
            weights = np.hstack([part, np.outer(regularised, vw)])
            fits = _fit_rounds(x, s, weights, start)
            for row in np.flatnonzero(np.isnan(fits).any(axis=1)):  # full Newton steps failed: the careful fit
                try:
                    retry = fit_style(arrays, z, part[row], scale=params.scale, base=params.base, init=params.init,
                                      regulariser=regulariser, start=start)
                except StyleFitError:
                    continue
                fits[row] = _parameters(retry, params.scale, params.base)
            found[first + offset:first + offset + len(part)] = fits
    theta = np.hstack([np.zeros((n_boot, 1)), found[:, : n - 1]]) * (params.scale / math.log(params.base))
    ratings = theta - theta.mean(axis=1, keepdims=True) + params.init
    failed = int(np.isnan(found).any(axis=1).sum())
    return ratings, found[:, n - 1:], failed


def style_leaderboard(games: Sequence[Game], data: StyleData, names: Sequence[str] | None = None, *,
                      params: EloParams = AUPEL, n_boot: int = 1000, seed: int | None = None,
                      regulariser: float = REGULARISER) -> StyleBoard:
    """Per criterion (sorted, ``overall`` last): Bradley-Terry without and with style control on the games whose
    covariates are known (module docstring), the style fit's bootstrap interval, both ranks, the coefficients."""
    names = list(data.names if names is None else names)
    order = systems_in_order(games)
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    coefficients: list[dict[str, Any]] = []
    notes: dict[str, dict[str, Any]] = {}
    changes: list[dict[str, Any]] = []
    for criterion, played in criteria_games(games).items():
        kept, raw = style_design(played, data, names)
        present = set(systems_in_order(kept))
        players = [name for name in order if name in present]
        scales = np.sqrt((raw ** 2).mean(axis=0)) if len(kept) else np.zeros(len(names))
        used = [k for k in range(len(names)) if scales[k] > 0]
        note: dict[str, Any] = {"games": len(played), "style_games": len(kept),
                                "without_covariates": len(played) - len(kept),
                                "all_zero": [names[k] for k in range(len(names)) if scales[k] == 0]}
        notes[criterion] = note
        empty = {"style_games": 0, "bt_nostyle": None, "bt_style": None, "bt_style_ci_low": None,
                 "bt_style_ci_high": None, "rank_nostyle": None, "rank_style": None}
        for system in systems_in_order(played):
            rows[(criterion, system)] = dict(empty)
        if len(players) < 2:
            continue
        arrays = encode(kept, players)
        z = raw[:, used] / scales[used]
        plain = fit_bt(win_matrix(arrays), scale=params.scale, base=params.base, init=params.init,
                       regulariser=regulariser)
        try:
            point = fit_style(arrays, z, scale=params.scale, base=params.base, init=params.init,
                              regulariser=regulariser)
        except StyleFitError as exc:
            note["error"] = str(exc)
            for i, system in enumerate(players):
                rows[(criterion, system)]["bt_nostyle"] = float(plain.ratings[i])
            continue
        finally:
            counts = np.bincount(arrays.a, minlength=len(players)) + np.bincount(arrays.b, minlength=len(players))
            for i, system in enumerate(players):
                rows[(criterion, system)]["style_games"] = int(counts[i])
        note["regularised"] = point.regularised
        boot_ratings, boot_coefficients, failed = _bootstrap(arrays, z, point, params, n_boot, seed, regulariser)
        note["failed_rounds"] = failed
        low, high = _percentile_pair(boot_ratings)
        ranks_plain = _ranks([float(r) for r in plain.ratings])
        ranks_style = _ranks([float(r) for r in point.ratings])
        for i, system in enumerate(players):
            rows[(criterion, system)].update({
                "bt_nostyle": float(plain.ratings[i]), "bt_style": float(point.ratings[i]),
                "bt_style_ci_low": low[i], "bt_style_ci_high": high[i],
                "rank_nostyle": ranks_plain[i], "rank_style": ranks_style[i]})
        coefficient_low, coefficient_high = _percentile_pair(boot_coefficients)
        for position, k in enumerate(used):
            coefficients.append({"criterion": criterion, "feature": names[k],
                                 "coefficient": float(point.coefficients[position]),
                                 "ci_low": coefficient_low[position], "ci_high": coefficient_high[position],
                                 "scale": float(scales[k]), "games": len(kept)})
        without = _order(players, [float(r) for r in plain.ratings])
        with_style = _order(players, [float(r) for r in point.ratings])
        if without != with_style:
            changes.append({"criterion": criterion, "without": without, "with": with_style})
    return StyleBoard(rows=rows, coefficients=coefficients, notes=notes, order_changes=changes)


def _percentile_pair(samples: np.ndarray) -> tuple[list[float | None], list[float | None]]:
    """The 2.5th and 97.5th percentiles (linear) of each column over the rounds that have a value."""
    low: list[float | None] = []
    high: list[float | None] = []
    for column in samples.T:
        finite = column[np.isfinite(column)]
        if len(finite) == 0:
            low.append(None)
            high.append(None)
            continue
        values = np.percentile(finite, [PERCENTILES[0], PERCENTILES[-1]], method="linear")
        low.append(float(values[0]))
        high.append(float(values[1]))
    return low, high
