"""Items that a judge and people both judged: the shared input of agreement, PPI and the alternative annotator test
(conventions sec. 28).

An *item* is one (case, criterion, unordered system pair). Two sources judge items: the **people** (the valid
judgments whose ``judge_kind`` is the human kind, ``human`` by default) and the **judge** (the valid judgments
whose ``judge`` is the judge's name and whose kind is not the human kind). Each source's game on an item is
built from that source's judgments alone, by the game rule of sec. 17 item 3 (:func:`play`): a judge's runs are
pooled the way two people are, the side with more winning runs wins and equal counts (``tie`` runs counting for
neither side) are a draw.

An item is oriented as the first valid judgment of either source names its pair (the file line order), and its
outcomes are ``a`` (that first-named system wins), ``tie`` or ``b``. Items are listed in that order too.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from metaeval.core.pairwise.games import Game, majority_score, play
from metaeval.core.pairwise.judgments import Judgment, JudgmentTable

__all__ = ["HUMAN_KIND", "OUTCOMES", "Item", "ItemSet", "JudgeNotFound", "Vote", "build_items", "judges_in",
           "outcome_of", "pooled_outcome", "score_of"]

HUMAN_KIND = "human"
#: an item's outcomes: its first-named system wins, a draw, its second-named system wins
OUTCOMES = ("a", "tie", "b")
_SCORES = {"a": 1.0, "tie": 0.5, "b": 0.0}


class JudgeNotFound(ValueError):
    """The judgment table has no valid judgment of the judge, or none of people; the message names what it has."""


@dataclass(frozen=True, slots=True)
class Vote:
    """One valid judgment of an item, oriented: ``outcome`` in :data:`OUTCOMES`; ``first`` = ``a`` or ``b``, the
    side shown first ("" when the row does not say); ``judge`` the row's judge id; ``run`` its repeat."""

    outcome: str
    first: str
    judge: str
    run: int | None
    line: int


@dataclass(frozen=True)
class Item:
    """One (case, criterion, pair) in its orientation, the people's and the judge's votes and games."""

    case_id: str
    criterion: str
    model_a: str
    model_b: str
    line: int
    human: tuple[Vote, ...]
    judge: tuple[Vote, ...]
    human_outcome: str | None
    judge_outcome: str | None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.case_id, self.criterion, self.model_a, self.model_b

    def people(self) -> dict[str, str]:
        """Each person's own game on the item (their votes pooled by the game rule), by judge id; votes without a
        judge id are left out (they cannot be told apart)."""
        by_person: dict[str, list[Vote]] = {}
        for vote in self.human:
            if vote.judge:
                by_person.setdefault(vote.judge, []).append(vote)
        return {person: pooled_outcome(votes) for person, votes in by_person.items()}


@dataclass(frozen=True)
class ItemSet:
    """The items of one judge against the people: ``items`` in order; the counts of judgments each source has."""

    judge: str
    human_kind: str
    items: tuple[Item, ...]
    human_judgments: int
    judge_judgments: int
    invalid: int
    source: str = ""

    def criteria(self) -> list[str]:
        return sorted({item.criterion for item in self.items})


def outcome_of(score: float) -> str:
    """The outcome of a game score of the first-named side (1, 0.5, 0)."""
    return "a" if score == 1.0 else "b" if score == 0.0 else "tie"


def score_of(outcome: str, side: str = "a") -> float:
    """The score (1 win, 0.5 draw, 0 loss) that ``outcome`` gives ``side`` (``a`` or ``b``)."""
    score = _SCORES[outcome]
    return score if side == "a" else 1.0 - score


def pooled_outcome(votes: Iterable[Vote]) -> str:
    """The game rule (sec. 17 item 3) on oriented votes: more ``a`` than ``b`` votes is ``a``, fewer is ``b``,
    equal is ``tie``."""
    wins_a = wins_b = 0
    for vote in votes:
        wins_a += vote.outcome == "a"
        wins_b += vote.outcome == "b"
    return outcome_of(majority_score(wins_a, wins_b))


def _vote(judgment: Judgment, first_named: str) -> Vote:
    if judgment.winner == "tie":
        outcome = "tie"
    else:
        winner = judgment.model_a if judgment.winner == "model_a" else judgment.model_b
        outcome = "a" if winner == first_named else "b"
    first = ""
    if judgment.shown_first:
        shown = judgment.model_a if judgment.shown_first == "model_a" else judgment.model_b
        first = "a" if shown == first_named else "b"
    return Vote(outcome, first, judgment.judge, judgment.run, judgment.line)


def _key(judgment: Judgment) -> tuple[str, str, str, str]:
    a, b = judgment.model_a, judgment.model_b
    return (judgment.case_id, judgment.criterion, *((a, b) if a < b else (b, a)))


def build_items(table: JudgmentTable, judge: str, *, human_kind: str = HUMAN_KIND) -> ItemSet:
    """Every item that the people or the judge played (module docstring). :class:`JudgeNotFound` when the table
    has no valid judgment of the judge or none of the human kind."""
    valid = table.valid()
    humans = [j for j in valid if j.judge_kind == human_kind]
    judged = [j for j in valid if j.judge == judge and j.judge_kind != human_kind]
    source = table.source or "the judgments"
    if not judged:
        names = sorted({j.judge for j in valid if j.judge and j.judge_kind != human_kind})
        raise JudgeNotFound(f"{source}: no valid judgment of judge {judge!r} (judges other than {human_kind!r} "
                            f"ones: {', '.join(names) if names else 'none'})")
    if not humans:
        kinds = sorted({j.judge_kind for j in valid if j.judge_kind})
        raise JudgeNotFound(f"{source}: no valid judgment of judge_kind {human_kind!r} (kinds: "
                            f"{', '.join(kinds) if kinds else 'none'})")
    first: dict[tuple[str, str, str, str], Judgment] = {}
    for judgment in sorted((*humans, *judged), key=lambda j: j.line):
        first.setdefault(_key(judgment), judgment)
    human_games = {_key_of_game(game): game for game in play(humans)}
    judge_games = {_key_of_game(game): game for game in play(judged)}
    votes: dict[tuple[str, str, str, str], tuple[list[Vote], list[Vote]]] = {key: ([], []) for key in first}
    for group, judgments in ((0, humans), (1, judged)):
        for judgment in judgments:
            key = _key(judgment)
            votes[key][group].append(_vote(judgment, first[key].model_a))
    items = []
    for key, opener in first.items():
        name_a, name_b = opener.model_a, opener.model_b
        human_game, judge_game = human_games.get(key), judge_games.get(key)
        items.append(Item(
            case_id=opener.case_id, criterion=opener.criterion, model_a=name_a, model_b=name_b, line=opener.line,
            human=tuple(votes[key][0]), judge=tuple(votes[key][1]),
            human_outcome=None if human_game is None else outcome_of(human_game.score_of(name_a)),
            judge_outcome=None if judge_game is None else outcome_of(judge_game.score_of(name_a)),
        ))
    return ItemSet(judge=judge, human_kind=human_kind, items=tuple(items), human_judgments=len(humans),
                   judge_judgments=len(judged), invalid=table.invalid, source=table.source)


def _key_of_game(game: Game) -> tuple[str, str, str, str]:
    a, b = game.model_a, game.model_b
    return (game.case_id, game.criterion, *((a, b) if a < b else (b, a)))


def judges_in(table: JudgmentTable, human_kind: str = HUMAN_KIND) -> Sequence[str]:
    """The judge names of the table's valid judgments whose kind is not the human kind, in file order."""
    return list(dict.fromkeys(j.judge for j in table.valid() if j.judge and j.judge_kind != human_kind))
