"""Judgments -> games -> win/tie/loss (conventions sec. 17; AuPEL sec. 3.4 and 5.3).

A **game** is one (case, criterion, unordered system pair): all its non-``invalid`` judgments vote, the side with
more wins wins the game, equal counts are a tie (a ``tie`` judgment counts for neither side, so {A, tie} is a win
for A and two humans who disagree make a tie). A group of only ``invalid`` judgments is no game. A game's
**position** is the file line of its first non-``invalid`` judgment; games are ordered by it, and its sides are
named as in that judgment. The criterion ``overall`` holds the games of every criterion in that same order.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from metaeval.core.pairwise.judgments import OVERALL, Judgment, JudgmentTable, gc_paused

__all__ = ["Game", "GameArrays", "NoGames", "WinTieLoss", "criteria_games", "encode", "majority_score",
           "pair_outcomes", "play", "require_games", "systems_in_order", "win_tie_loss"]


@dataclass(frozen=True, slots=True)
class Game:
    """One game; ``score`` is model_a's result S in {1, 0.5, 0}; ``line`` its position (first judgment's line)."""

    case_id: str
    criterion: str
    model_a: str
    model_b: str
    score: float
    line: int
    judgments: int

    def score_of(self, system: str) -> float:
        return self.score if system == self.model_a else 1.0 - self.score


def majority_score(wins_a: int, wins_b: int) -> float:
    """The game rule: side a's result S from its winning judgments against side b's (``tie`` judgments count for
    neither): 1 when a has more, 0 when b has more, 0.5 when equal."""
    return 1.0 if wins_a > wins_b else 0.0 if wins_a < wins_b else 0.5


class NoGames(ValueError):
    """The judgments give no game (empty, or only ``invalid`` judgments)."""


def require_games(table: JudgmentTable) -> list[Game]:
    """The games of ``table`` (:func:`play`); :class:`NoGames`, naming the file, when there is none."""
    games = play(table.judgments)
    if not games:
        raise NoGames(f"{table.source or 'the judgments'}: no valid judgment ({table.invalid} invalid), "
                      "so there is no game to rate")
    return games


def play(judgments: Iterable[Judgment]) -> list[Game]:
    """The games of ``judgments`` (file order), ordered by position; ``invalid`` judgments are left out."""
    with gc_paused():
        return _play(judgments)


def _play(judgments: Iterable[Judgment]) -> list[Game]:
    groups: dict[tuple[str, str, str, str], list] = {}  # key -> [first judgment, wins of model_a side, of b, n]
    for judgment in judgments:
        if not judgment.is_valid:
            continue
        a, b = judgment.model_a, judgment.model_b
        key = (judgment.case_id, judgment.criterion, *((a, b) if a < b else (b, a)))
        group = groups.get(key)
        if group is None:
            group = groups[key] = [judgment, 0, 0, 0]
        group[3] += 1
        if judgment.winner != "tie":
            winner = a if judgment.winner == "model_a" else b
            group[1 if winner == group[0].model_a else 2] += 1
    games = []
    for first, wins_a, wins_b, count in groups.values():  # dict order = order of first valid judgment
        games.append(Game(first.case_id, first.criterion, first.model_a, first.model_b,
                          majority_score(wins_a, wins_b), first.line, count))
    return games


def criteria_games(games: Sequence[Game]) -> dict[str, list[Game]]:
    """Games per criterion, criteria sorted, then ``overall`` (every game, in position order)."""
    out: dict[str, list[Game]] = {}
    for game in games:
        out.setdefault(game.criterion, []).append(game)
    ordered = {criterion: out[criterion] for criterion in sorted(out)}
    ordered[OVERALL] = list(games)
    return ordered


def pair_outcomes(games: Sequence[Game], model_a: str, model_b: str) -> list[str]:
    """Per game of the pair {model_a, model_b}, in position order: ``a`` when model_a won, ``b``, or ``tie``."""
    out = []
    for game in games:
        if {game.model_a, game.model_b} != {model_a, model_b}:
            continue
        score = game.score_of(model_a)
        out.append("a" if score == 1.0 else "b" if score == 0.0 else "tie")
    return out


def systems_in_order(games: Iterable[Game]) -> list[str]:
    """Systems in order of first appearance (model_a before model_b of each game)."""
    return list(dict.fromkeys(name for game in games for name in (game.model_a, game.model_b)))


@dataclass(frozen=True)
class GameArrays:
    """Games as arrays for the numeric code: player indexes ``a``, ``b`` into ``players`` and a's score ``s``."""

    players: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    s: np.ndarray

    def __len__(self) -> int:
        return len(self.s)


def encode(games: Sequence[Game], players: Sequence[str] | None = None) -> GameArrays:
    """``games`` as :class:`GameArrays` (players default to :func:`systems_in_order`)."""
    players = tuple(players if players is not None else systems_in_order(games))
    index = {name: i for i, name in enumerate(players)}
    a = np.fromiter((index[g.model_a] for g in games), dtype=np.intp, count=len(games))
    b = np.fromiter((index[g.model_b] for g in games), dtype=np.intp, count=len(games))
    s = np.fromiter((g.score for g in games), dtype=np.float64, count=len(games))
    return GameArrays(players, a, b, s)


@dataclass(frozen=True)
class WinTieLoss:
    """model_a's record against model_b in one criterion; percentages of ``cases`` (games), unrounded."""

    criterion: str
    model_a: str
    model_b: str
    wins: int
    ties: int
    losses: int

    @property
    def cases(self) -> int:
        return self.wins + self.ties + self.losses

    @property
    def win(self) -> float:
        return 100.0 * self.wins / self.cases

    @property
    def tie(self) -> float:
        return 100.0 * self.ties / self.cases

    @property
    def loss(self) -> float:
        return 100.0 * self.losses / self.cases

    def as_row(self) -> dict[str, object]:
        return {"criterion": self.criterion, "model_a": self.model_a, "model_b": self.model_b, "win": self.win,
                "tie": self.tie, "loss": self.loss, "cases": self.cases, "wins": self.wins, "ties": self.ties,
                "losses": self.losses}


def win_tie_loss(games: Sequence[Game]) -> list[WinTieLoss]:
    """W/T/L per criterion (sorted, ``overall`` last) and pair; a pair is oriented as its first game in
    ``games`` names it, and pairs are listed in that order (AuPEL sec. 5.3, Table 3)."""
    orientation: dict[frozenset[str], tuple[str, str]] = {}
    for game in games:
        orientation.setdefault(frozenset((game.model_a, game.model_b)), (game.model_a, game.model_b))
    rows: list[WinTieLoss] = []
    for criterion, played in criteria_games(games).items():
        counts: dict[tuple[str, str], list[int]] = {pair: [0, 0, 0] for pair in orientation.values()}
        for game in played:
            first, second = orientation[frozenset((game.model_a, game.model_b))]
            score = game.score_of(first)
            counts[(first, second)][0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
        rows.extend(WinTieLoss(criterion, a, b, *record) for (a, b), record in counts.items() if sum(record))
    return rows
