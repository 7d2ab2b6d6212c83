"""Each judge's leaderboard against the people's (conventions sec. 26 item 12): the pairwise-accuracy view of
Table 2 applied to a judgment set with human and judge rows. No Django.

For every judge (the valid judgments with a ``judge`` name whose kind is not the human kind, file order) and
criterion (sorted, then ``overall``, all criteria pooled) the **items both judged**: the (case, criterion, pair)
on which the people and the judge each have a game (:func:`metaeval.core.judges.items.build_items`: each
source's judgments pooled by the game rule of sec. 17 item 3). Both leaderboards are built from those items only,
so they rank the same comparisons:

* a system's **score on a case** is the mean of its game scores (1 win, 0.5 tie, 0 loss) over that case's items,
  and its **leaderboard value** the mean of those over its cases (each case weighs the same, as each document does
  in PerSEval). These per-case values are the "documents" of
  :func:`metaeval.core.stats.meta_accuracy.meta_accuracy_rows`, which gives its system-level row: pairwise
  accuracy, acc_eq with tie calibration, soft pairwise accuracy (permutation tests over cases) and bootstrap
  intervals over cases, the judge as the metric and the people as the human side. Its per-case (group-by-item) row
  is left out: in a case that compares a few pairs it would set side by side systems that met different opponents,
  and whether the judge agrees with the people item by item is what ``agreement`` answers (sec. 28);
* ``bt_accuracy``, ``bt_acc_eq``, ``bt_epsilon``: the same accuracy and tie-calibrated acc_eq between the two
  sources' Bradley-Terry ratings (sec. 17 item 8, on the items both judged; epsilon in Elo points), point values
  only: a Bradley-Terry rating is no mean over cases, so it has no per-case values to resample or to test.

A table with no human judgment or no judge has no rows; the section says why (``note``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from metaeval.core.judges.items import HUMAN_KIND, Item, build_items, judges_in, score_of
from metaeval.core.pairwise.bradley_terry import REGULARISER, fit_bt, win_matrix
from metaeval.core.pairwise.elo import AUPEL, EloParams
from metaeval.core.pairwise.games import Game, encode
from metaeval.core.pairwise.judgments import OVERALL, JudgmentTable
from metaeval.core.stats.meta_accuracy import COLUMNS, DocumentValues, meta_accuracy_rows, pairwise_agreement
from metaeval.core.stats.resampling import system_scores

__all__ = ["JUDGE_COLUMNS", "PEOPLE", "judge_accuracy"]

#: the human side's name in the rows' ``human`` column
PEOPLE = "people"
#: the ``pairwise_judge_accuracy`` table's columns: judge, criterion, the items both judged, the command's columns
#: of a system-level row (``documents``: the cases) and the Bradley-Terry leaderboards' agreement
JUDGE_COLUMNS = ("judge", "criterion", "items",
                 *(column for column in COLUMNS if column not in ("level", "bucket_low", "bucket_high")),
                 "bt_accuracy", "bt_acc_eq", "bt_epsilon")


def _criteria(items: Sequence[Item]) -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {}
    for item in items:
        out.setdefault(item.criterion, []).append(item)
    return {**{criterion: out[criterion] for criterion in sorted(out)}, OVERALL: list(items)}


def _outcome(item: Item, source: str) -> str:
    """The game of ``source`` (``human`` or ``judge``) on an item both judged."""
    outcome = item.human_outcome if source == "human" else item.judge_outcome
    if outcome is None:
        raise ValueError(f"item {item.key} has no game of {source}")
    return outcome


def _case_scores(items: Sequence[Item], source: str, systems: Sequence[str]) -> DocumentValues:
    """Per system and case the mean game score of ``source`` (``human`` or ``judge``) over the case's items."""
    cells: dict[tuple[str, str], list[float]] = {}
    for item in items:
        outcome = _outcome(item, source)
        for system, side in ((item.model_a, "a"), (item.model_b, "b")):
            cells.setdefault((system, item.case_id), []).append(score_of(outcome, side))
    cases = list(dict.fromkeys(item.case_id for item in items))
    values = np.full((len(systems), len(cases)), np.nan)
    row, col = {s: k for k, s in enumerate(systems)}, {c: k for k, c in enumerate(cases)}
    for (system, case), scores in cells.items():
        values[row[system], col[case]] = sum(scores) / len(scores)
    return DocumentValues(tuple(systems), tuple(cases), values)


def _bradley_terry(items: Sequence[Item], source: str, systems: Sequence[str], params: EloParams) -> np.ndarray:
    games = [Game(item.case_id, item.criterion, item.model_a, item.model_b,
                  score_of(_outcome(item, source)), item.line, 1)
             for item in items]
    fit = fit_bt(win_matrix(encode(games, systems)), scale=params.scale, base=params.base, init=params.init,
                 regulariser=REGULARISER)
    return np.asarray(fit.ratings)


def _row(judge: str, criterion: str, items: Sequence[Item], *, params: EloParams,
         **settings: Any) -> dict[str, Any]:
    systems = list(dict.fromkeys(name for item in items for name in (item.model_a, item.model_b)))
    judged, people = _case_scores(items, "judge", systems), _case_scores(items, "human", systems)
    rows = meta_accuracy_rows(
        judge, PEOPLE, dict(zip(systems, system_scores(judged.values), strict=True)),
        dict(zip(systems, system_scores(people.values), strict=True)), metric_documents=judged,
        human_documents=people, tie_calibration=True, **settings)
    bt = pairwise_agreement(_bradley_terry(items, "judge", systems, params),
                            _bradley_terry(items, "human", systems, params), tie_calibration=True)
    system = next(row for row in rows if row["level"] == "system")
    merged = {"judge": judge, "criterion": criterion, "items": len(items), **system, "bt_accuracy": bt.accuracy,
              "bt_acc_eq": bt.acc_eq, "bt_epsilon": bt.epsilon}
    return {column: merged[column] for column in JUDGE_COLUMNS}


def judge_accuracy(
    table: JudgmentTable, *, n_boot: int, n_permutations: int, confidence: float, seed: int,
    human_kind: str = HUMAN_KIND, params: EloParams = AUPEL,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(section, rows)``: the settings (and a ``note`` when no judge meets people) and one row of
    :data:`JUDGE_COLUMNS` per judge and criterion (module docstring)."""
    section: dict[str, Any] = {"human_kind": human_kind, "judges": [], "tie_calibration": True, "n_boot": n_boot,
                               "n_permutations": n_permutations, "confidence": confidence, "seed": seed, "note": ""}
    people = sum(1 for j in table.valid() if j.judge_kind == human_kind)
    judges = judges_in(table, human_kind)
    if not people or not judges:
        missing = [*([f"no valid judgment of judge_kind {human_kind!r}"] if not people else []),
                   *(["no named judge of another kind"] if not judges else [])]
        section["note"] = f"Judges against people need both: this set has {' and '.join(missing)}."
        return section, []
    rows: list[dict[str, Any]] = []
    for judge in judges:
        shared = [item for item in build_items(table, judge, human_kind=human_kind).items
                  if item.human_outcome is not None and item.judge_outcome is not None]
        section["judges"].append({"judge": judge, "items": len(shared)})
        for criterion, items in (_criteria(shared).items() if shared else ()):
            rows.append(_row(judge, criterion, items, params=params, n_boot=n_boot, n_permutations=n_permutations,
                             confidence=confidence, seed=seed))
    if not rows:
        section["note"] = "No item was judged by both the people and a judge."
    return section, rows
