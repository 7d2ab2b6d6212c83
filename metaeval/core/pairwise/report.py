"""The pairwise section of a researcher report (conventions sec. 17-18), as JSON-ready plain data (no Django).

:func:`build_pairwise_report` turns a judgment table into what the report page draws and offers for download:

- ``ratings``: the leaderboard of ``python -m metaeval pairwise`` (online Elo, its bootstrap median and 95 %
  interval, Bradley-Terry with its 95 % interval, the game record, then ``rank``, ``rank_best`` and ``rank_worst``
  from the Bradley-Terry intervals, conventions sec. 27.4), one row per (criterion, system);
- ``wtl``: win/tie/loss per criterion and system pair, in percent of cases (``--table wtl``);
- ``win_fraction``: per criterion, ordered system pair (``system`` against ``opponent``) the share of their games
  that ``system`` won, a tie counting half: (wins + ties / 2) / games; the heatmap's cells;
- ``consistency``: per criterion, sensitivity and consistency (AuPEL sec. 5.2) of each pair of systems adjacent in
  that criterion's Bradley-Terry ranking (the pairs a reader asks "can we tell them apart?" of), at the sample
  sizes of ``sizes`` not above the pair's number of games (the pool; the pool itself when every size is above it).

- ``judge_accuracy``: each judge's leaderboard against the people's where the set has both
  (:mod:`metaeval.core.pairwise.judge_accuracy`; the table ``pairwise_judge_accuracy`` when there are rows).
- ``judges_vs_people``: where the set has both a judge and people, every judge against the people item by item
  (:func:`metaeval.core.judges.versus.judges_vs_people`: agreement, the agreement matrix, PPI, the alternative
  annotator test, style-controlled boards where ``style`` gives the texts' lengths), the tables
  :data:`VERSUS_TABLES`; otherwise ``{"note": why}`` and no table. Alpha = 1 - ``confidence``.

Seeds: the bootstrap uses ``seed``; the consistency curves ``seed + 1`` (one generator per curve, in row order);
the judges against people ``seed`` (bootstrap over cases) and its first spawned child (the permutation signs);
the judges-vs-people style fits ``seed``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metaeval.core.io.records import json_safe
from metaeval.core.judges.items import JudgeNotFound
from metaeval.core.judges.versus import TABLES as VERSUS_SOURCE_TABLES
from metaeval.core.judges.versus import judges_vs_people
from metaeval.core.pairwise.bootstrap import PERCENTILES
from metaeval.core.pairwise.bradley_terry import REGULARISER
from metaeval.core.pairwise.consistency import consistency_curve
from metaeval.core.pairwise.elo import AUPEL, EloParams
from metaeval.core.pairwise.features import StyleData
from metaeval.core.pairwise.games import (
    Game,
    NoGames,
    criteria_games,
    pair_outcomes,
    require_games,
    systems_in_order,
    win_tie_loss,
)
from metaeval.core.pairwise.judge_accuracy import judge_accuracy
from metaeval.core.pairwise.judgments import JudgmentTable
from metaeval.core.pairwise.leaderboard import leaderboard
from metaeval.core.planning.ranks import with_rank_columns

__all__ = ["CONSISTENCY_SIZES", "TABLES", "VERSUS_TABLES", "NoGames", "build_pairwise_report", "versus_section",
           "win_fractions"]

#: sample sizes of the report's consistency curves (those not above a pair's pool)
CONSISTENCY_SIZES = (5, 10, 20, 50, 100, 200, 500)
#: the report tables this section adds (report["tables"] names; the last only when a judge meets people)
TABLES = ("pairwise_ratings", "pairwise_wtl", "pairwise_win_fraction", "pairwise_consistency",
          "pairwise_judge_accuracy")
#: the judges-vs-people tables (report["tables"] names), by the name of the core's table
VERSUS_TABLES = {name: f"pairwise_judges_{name}" for name in VERSUS_SOURCE_TABLES}


def win_fractions(games: Sequence[Game]) -> list[dict[str, Any]]:
    """Per criterion (sorted, ``overall`` last) and ordered pair of systems that played each other, in order of
    first appearance: ``win_fraction`` = (wins + ties / 2) / games of ``system`` against ``opponent``."""
    order = systems_in_order(games)
    rows: list[dict[str, Any]] = []
    for criterion, played in criteria_games(games).items():
        record: dict[tuple[str, str], list[float]] = {}
        for game in played:
            for system, opponent in ((game.model_a, game.model_b), (game.model_b, game.model_a)):
                entry = record.setdefault((system, opponent), [0.0, 0])
                entry[0] += game.score_of(system)
                entry[1] += 1
        for system in order:
            for opponent in order:
                if (system, opponent) in record:
                    points, count = record[(system, opponent)]
                    rows.append({"criterion": criterion, "system": system, "opponent": opponent,
                                 "win_fraction": points / count, "games": int(count)})
    return rows


def _adjacent_pairs(ratings: Sequence[dict[str, Any]], criterion: str) -> list[tuple[str, str]]:
    board = sorted((row for row in ratings if row["criterion"] == criterion), key=lambda row: -float(row["bt"]))
    return [(board[i]["system"], board[i + 1]["system"]) for i in range(len(board) - 1)]


def _consistency(games: Sequence[Game], ratings: Sequence[dict[str, Any]], *, sizes: Sequence[int],
                 repetitions: int, seed: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    curve_seed = seed
    for criterion, played in criteria_games(games).items():
        for model_a, model_b in _adjacent_pairs(ratings, criterion):
            outcomes = pair_outcomes(played, model_a, model_b)
            if not outcomes:
                continue
            pool = len(outcomes)
            grid = [size for size in sizes if size <= pool] or [pool]
            for point in consistency_curve(outcomes, grid, repetitions=repetitions, seed=curve_seed):
                rows.append({"criterion": criterion, "model_a": model_a, "model_b": model_b, "n": point.n,
                             "sensitivity": point.sensitivity, "consistency": point.consistency,
                             "repetitions": point.repetitions, "pool": pool,
                             "wins_a": outcomes.count("a"), "wins_b": outcomes.count("b"),
                             "ties": outcomes.count("tie")})
            curve_seed += 1
    return rows


def versus_section(table: JudgmentTable, style: StyleData | None, *, n_boot: int, confidence: float, seed: int
                   ) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """``(section, tables)`` of the judges against people item by item (module docstring)."""
    try:
        result = judges_vs_people(table, style, alpha=1.0 - confidence, n_boot=n_boot, seed=seed)
    except JudgeNotFound as exc:
        return {"note": f"Judges against people need both a judge and people: {exc}"}, {}
    tables = {VERSUS_TABLES[name]: rows for name, rows in result.pop("tables").items() if rows}
    return result, tables


def build_pairwise_report(
    table: JudgmentTable,
    *,
    seed: int,
    params: EloParams = AUPEL,
    n_boot: int = 1000,
    repetitions: int = 1000,
    sizes: Sequence[int] = CONSISTENCY_SIZES,
    n_permutations: int = 1000,
    confidence: float = 0.95,
    style: StyleData | None = None,
) -> dict[str, Any]:
    """The pairwise section (module docstring): ``{"judgments", "parameters", "regularised", "ratings", "wtl",
    "win_fraction", "consistency", "judge_accuracy", "judges_vs_people", "tables"}``; ``tables`` maps :data:`TABLES`
    and :data:`VERSUS_TABLES`' values to their rows. ``style``: the texts' lengths (and other style features) for
    the judges' length bias and the style-controlled boards.
    ``n_permutations`` and ``confidence``: the judges against people's soft pairwise accuracy and intervals. Raises
    :class:`NoGames` when no judgment makes a game."""
    games = require_games(table)
    board = leaderboard(games, params, n_boot=n_boot, seed=seed, regulariser=REGULARISER)
    ratings = with_rank_columns(board.rows, group="criterion", value="bt", low="bt_ci_low", high="bt_ci_high")
    wtl = [row.as_row() for row in win_tie_loss(games)]
    fractions = win_fractions(games)
    consistency = _consistency(games, board.rows, sizes=sizes, repetitions=repetitions, seed=seed + 1)
    by_criterion = criteria_games(games)
    section = {
        "judgments": {"source": table.source, "read": len(table.judgments), "invalid": table.invalid,
                      "games": len(games), "criteria": list(by_criterion),
                      "systems": systems_in_order(games)},
        "parameters": {"k": params.k, "scale": params.scale, "base": params.base, "init": params.init,
                       "n_boot": n_boot, "seed": seed, "percentiles": list(PERCENTILES),
                       "consistency_repetitions": repetitions, "consistency_sizes": list(sizes),
                       "consistency_alpha": 0.05, "consistency_seed": seed + 1},
        "regularised": board.regularised,
        "ratings": ratings,
        "wtl": wtl,
        "win_fraction": fractions,
        "consistency": consistency,
    }
    section["judge_accuracy"], judge_rows = judge_accuracy(table, n_boot=n_boot, n_permutations=n_permutations,
                                                           confidence=confidence, seed=seed, params=params)
    tables: dict[str, Any] = {"pairwise_ratings": ratings, "pairwise_wtl": wtl,
                              "pairwise_win_fraction": fractions, "pairwise_consistency": consistency}
    if judge_rows:
        tables["pairwise_judge_accuracy"] = judge_rows
    section["judges_vs_people"], versus_tables = versus_section(table, style, n_boot=n_boot, confidence=confidence,
                                                                seed=seed)
    tables.update(versus_tables)
    section["tables"] = tables
    return json_safe(section)  # type: ignore[no-any-return]
