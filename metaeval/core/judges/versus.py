"""Judges against people on one judgment table: every number of conventions sec. 28-29 for every judge at once, as
JSON-ready plain data (the platform's "judges vs people" page, its API and CSV, and the report's pairwise section).
No Django.

For each judge of the table (a *column*: a judge name, or a judge name and its prompt version when the caller
renamed the judge's rows so) against the people (``judge_kind`` ``human_kind``):

- ``agreement``: :func:`metaeval.core.judges.agreement.agreement_rows` (accuracy, Cohen's kappa, the human-human
  ceiling, position and self-consistency, length bias), one row per criterion and ``overall``, then
  ``people_first_shown_judgments`` and ``people_first_shown`` (the people's share of decisive judgments that prefer
  the text shown first, beside the judge's ``judge_first_shown``);
- ``ppi``: :func:`metaeval.core.judges.ppi.ppi_rows` (human-only, PPI and PPI++ estimates of each system's score);
- ``alt_test``: :func:`metaeval.core.judges.alt_test.alt_test_rows`'s test rows (winning rate omega, verdict);
- ``matrix``: per criterion and ordered pair of sources (``people`` and every judge), the share of the items both
  played on which their games' outcomes agree (the agreement matrix; ``items`` the count);
- ``style``: per source, Bradley-Terry without and with style control (sec. 29) on that source's own games, and
  ``warnings`` where style control changes a source's order.

A judge with no item the people played too still gets its rows (their ``items`` is 0). ``n_boot`` bounds the style
fit's bootstrap; the rest is linear in the judgments.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from metaeval.core.io.records import json_safe
from metaeval.core.judges.agreement import agreement_rows
from metaeval.core.judges.alt_test import DEFAULT_EPSILON, alt_test_rows
from metaeval.core.judges.items import HUMAN_KIND, OUTCOMES, ItemSet, JudgeNotFound, build_items, judges_in
from metaeval.core.judges.ppi import ppi_rows
from metaeval.core.pairwise.features import StyleData
from metaeval.core.pairwise.games import NoGames, play
from metaeval.core.pairwise.judgments import OVERALL, JudgmentTable
from metaeval.core.pairwise.style import StyleFitError, style_leaderboard

__all__ = ["MATRIX_COLUMNS", "PEOPLE", "STYLE_COLUMNS", "TABLES", "judges_vs_people"]

#: the people's name as a source of the agreement matrix and the style leaderboards
PEOPLE = "people"
MATRIX_COLUMNS = ("criterion", "source", "other", "items", "agreement")
STYLE_COLUMNS = ("source", "criterion", "system", "games", "bt_nostyle", "bt_style", "rank_nostyle", "rank_style")
#: the tables of :func:`judges_vs_people` (each a list of rows; the CSV download writes them one after another)
TABLES = ("agreement", "ppi", "alt_test", "matrix", "style")

_Key = tuple[str, str, str, str]


def _sorted_outcomes(items: ItemSet, which: str) -> dict[_Key, str]:
    """Each item's outcome of one source (``human`` or ``judge``) oriented to its sorted pair, by (case, criterion,
    first, second)."""
    flip = {"a": "b", "b": "a", "tie": "tie"}
    out: dict[_Key, str] = {}
    for item in items.items:
        outcome = item.human_outcome if which == "human" else item.judge_outcome
        if outcome is None:
            continue
        if item.model_a <= item.model_b:
            out[(item.case_id, item.criterion, item.model_a, item.model_b)] = outcome
        else:
            out[(item.case_id, item.criterion, item.model_b, item.model_a)] = flip[outcome]
    return out


def _people_first_shown(items: ItemSet, criterion: str) -> dict[str, Any]:
    """The people's position bias beside the judge's: the share of their decisive judgments (of the items of
    ``criterion``, or every item for ``overall``) that prefer the text shown first."""
    first = [float(vote.outcome == vote.first) for item in items.items if criterion in (OVERALL, item.criterion)
             for vote in item.human if vote.first and vote.outcome != "tie"]
    return {"people_first_shown_judgments": len(first), "people_first_shown": sum(first) / len(first) if first
            else None}


def _matrix(outcomes: dict[str, dict[_Key, str]], criteria: Sequence[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for criterion in [*criteria, OVERALL]:
        for source, mine in outcomes.items():
            for other, theirs in outcomes.items():
                shared = [key for key in mine if key in theirs and criterion in (OVERALL, key[1])]
                same = sum(mine[key] == theirs[key] for key in shared)
                rows.append({"criterion": criterion, "source": source, "other": other, "items": len(shared),
                             "agreement": same / len(shared) if shared else None})
    return rows


def _style(table: JudgmentTable, sources: dict[str, str], human_kind: str, style: StyleData, n_boot: int,
           seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    valid = table.valid()
    for source, judge in sources.items():
        judgments = [j for j in valid if (j.judge_kind == human_kind if judge == "" else
                                          (j.judge == judge and j.judge_kind != human_kind))]
        games = play(judgments)
        if not games:
            continue
        try:
            with np.errstate(over="ignore"):  # a bootstrap round's sigmoid saturates: harmless
                board = style_leaderboard(games, style, n_boot=n_boot, seed=seed)
        except (StyleFitError, NoGames, ValueError) as exc:
            warnings.append(f"{source}: no style-controlled leaderboard: {exc}")
            continue
        for (criterion, system), row in board.rows.items():
            rows.append({"source": source, "criterion": criterion, "system": system, "games": row["style_games"],
                         "bt_nostyle": row["bt_nostyle"], "bt_style": row["bt_style"],
                         "rank_nostyle": row["rank_nostyle"], "rank_style": row["rank_style"]})
        warnings += [f"{source}: {line.removeprefix('warning: ')}" for line in board.warnings()]
    return rows, warnings


def judges_vs_people(table: JudgmentTable, style: StyleData | None = None, *, human_kind: str = HUMAN_KIND,
                     alpha: float = 0.05, epsilon: float = DEFAULT_EPSILON, n_boot: int = 200, seed: int = 0,
                     ) -> dict[str, Any]:
    """Every judge of ``table`` against its people (module docstring): ``{"judges", "human_kind", "criteria",
    "alpha", "epsilon", "n_boot", "seed", "labels", "human_judgments", "tables": {name: rows}, "warnings"}``.
    Raises :class:`~metaeval.core.judges.items.JudgeNotFound` when the table has no judge or no people."""
    judges = list(judges_in(table, human_kind))
    if not judges:
        raise JudgeNotFound(f"{table.source or 'the judgments'}: no judge other than {human_kind!r} judgments")
    sets = {judge: build_items(table, judge, human_kind=human_kind) for judge in judges}
    criteria = sorted({criterion for items in sets.values() for criterion in items.criteria()})
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    first = next(iter(sets.values()))
    outcomes: dict[str, dict[_Key, str]] = {PEOPLE: _sorted_outcomes(first, "human")}
    for judge, items in sets.items():
        tables["agreement"] += [{**row, **_people_first_shown(items, row["criterion"])}
                                for row in agreement_rows(items, style)]
        tables["ppi"] += [{"judge": judge, **row} for row in ppi_rows(items, alpha)]
        tables["alt_test"] += alt_test_rows(items, epsilon=epsilon)[0]
        outcomes[judge] = _sorted_outcomes(items, "judge")
    tables["matrix"] = _matrix(outcomes, criteria)
    warnings: list[str] = []
    if style:
        tables["style"], warnings = _style(table, {PEOPLE: "", **{judge: judge for judge in judges}}, human_kind,
                                           style, n_boot, seed)
    return json_safe({  # type: ignore[no-any-return]
        "judges": judges, "human_kind": human_kind, "criteria": criteria, "alpha": alpha, "epsilon": epsilon,
        "n_boot": n_boot, "seed": seed, "labels": list(OUTCOMES), "human_judgments": first.human_judgments,
        "judge_judgments": {judge: items.judge_judgments for judge, items in sets.items()},
        "tables": tables, "warnings": warnings,
    })
