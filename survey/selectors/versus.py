"""Judges against people on a preference study (issue 32; docs/conventions.md sec. 28 items 9-11): the study's stored
judgments as one judgment table, each judge *and prompt version* a column, and every number of
:func:`metaeval.core.judges.versus.judges_vs_people` on it.

A judge run's rows carry the run's name; where one name has runs with two or more prompt versions (their
``templates_sha256``) each version is its own column, ``name @ sha[:8]`` (``name @ no prompt`` for a run without
templates, e.g. a file judge), so two prompt versions are compared side by side and never pooled. Participants
excluded on the participants page are left out. The result is cached (Django's cache) under a fingerprint of the
study's judgments (counts and largest ids of both kinds, the excluded participants, the runs' versions), so a page
view reads the stored judgments at most once per change.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max

from metaeval.core.judges.items import JudgeNotFound
from metaeval.core.judges.versus import judges_vs_people
from metaeval.core.pairwise.features import StyleData, style_data_from_cases
from metaeval.core.pairwise.judgments import Judgment, JudgmentTable
from survey.models import JudgeJudgment, JudgeRun, Participant, Study
from survey.models import Judgment as HumanJudgment
from survey.selectors.exports import _item_cells, judgment_export_rows
from survey.selectors.judges import study_judge_cases

__all__ = ["NO_PROMPT", "JudgeColumn", "judge_columns", "study_judgment_table", "study_versus"]

NO_PROMPT = "no prompt"
#: how long a result is kept at most (a judgment edited in place, which the platform never does, shows after this)
CACHE_SECONDS = 600
#: the most judgments (participants' and judges', invalid ones included) the page computes in the request:
#: about 8 s at 46,000 judgments on 2 busy cores (docs/conventions.md sec. 28 item 10); above it the page says
#: how to get the numbers (the commands, or a report run on a worker)
MAX_JUDGMENTS = 50_000
#: the style fit's bootstrap rounds on the page (bounded work per view)
PAGE_N_BOOT = 100


@dataclass(frozen=True)
class JudgeColumn:
    """One judge and prompt version: its column name, the runs' name, kind, prompt SHA-256 and run ids."""

    column: str
    name: str
    kind: str
    templates_sha256: str
    runs: tuple[int, ...]
    judgments: int


def judge_columns(*, study: Study) -> list[JudgeColumn]:
    """The study's judge columns (module docstring), oldest run first."""
    runs = list(JudgeRun.objects.filter(study=study).annotate(n=Count("judgments")).order_by("created_at", "id")
                .values_list("pk", "name", "kind", "templates_sha256", "n"))
    versions: dict[str, set[str]] = {}
    for _pk, name, _kind, sha, _n in runs:
        versions.setdefault(name, set()).add(sha)
    columns: dict[str, dict[str, Any]] = {}
    for pk, name, kind, sha, n in runs:
        column = name if len(versions[name]) == 1 else f"{name} @ {sha[:8] if sha else NO_PROMPT}"
        entry = columns.setdefault(column, {"name": name, "kind": kind, "sha": sha, "runs": [], "n": 0})
        entry["runs"].append(pk)
        entry["n"] += n
    return [JudgeColumn(column, e["name"], e["kind"], e["sha"], tuple(e["runs"]), e["n"])
            for column, e in columns.items()]


def study_judgment_table(*, study: Study, columns: list[JudgeColumn] | None = None) -> JudgmentTable:
    """The study's judgments as one table: the participants' (not excluded) then every judge run's, the judge
    column named as in :func:`judge_columns`. Line numbers count rows from 2, as in the exported file."""
    columns = judge_columns(study=study) if columns is None else columns
    column_of = {pk: column.column for column in columns for pk in column.runs}
    judgments: list[Judgment] = []
    line = 1
    for row in judgment_export_rows(study=study, exclude_excluded=True, source="human"):
        line += 1
        judgments.append(Judgment(
            case_id=str(row["case_id"]), criterion=str(row["criterion"]), model_a=str(row["model_a"]),
            model_b=str(row["model_b"]), winner=str(row["winner"]), line=line, judge=str(row["judge"]),
            judge_kind="human", shown_first=str(row["shown_first"]), doc_id=str(row["doc_id"]),
            reader_id=str(row["reader_id"])))
    cells = _item_cells(study)
    rows = (JudgeJudgment.objects.filter(judge_run__study=study)
            .order_by("judge_run__created_at", "judge_run_id", "item_id", "criterion", "run")
            .values_list("judge_run_id", "item_id", "criterion", "run", "winner", "shown_first"))
    for run_id, item_id, criterion, number, winner, shown_first in rows.iterator(chunk_size=2000):
        line += 1
        case_id, model_a, model_b, doc_id, reader_id = cells[item_id]
        judgments.append(Judgment(
            case_id=case_id, criterion=criterion, model_a=model_a, model_b=model_b, winner=winner, line=line,
            judge=column_of[run_id], judge_kind="llm", run=number, shown_first=shown_first, doc_id=doc_id,
            reader_id=reader_id))
    return JudgmentTable(judgments=tuple(judgments), source=f"study {study.slug}")


def study_style_data(*, study: Study) -> StyleData:
    """The lengths of the study's texts (words), from its items as judge cases."""
    return style_data_from_cases([case for _item, case in study_judge_cases(study=study)], file=f"study {study.slug}")


def _fingerprint(study: Study, columns: list[JudgeColumn]) -> tuple[str, int]:
    """The fingerprint of the study's judgments (module docstring) and how many there are."""
    human = HumanJudgment.objects.filter(assignment__questionnaire__study=study,
                                         assignment__completed_at__isnull=False).aggregate(n=Count("id"), m=Max("id"))
    judged = JudgeJudgment.objects.filter(judge_run__study=study).aggregate(n=Count("id"), m=Max("id"))
    excluded = list(Participant.objects.filter(study=study, excluded=True).order_by("pk").values_list("pk", flat=True))
    state = [human, judged, excluded, [(c.column, c.templates_sha256, c.runs) for c in columns],
             [c["name"] for c in study.criteria]]
    digest = hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()[:32]
    return digest, int(human["n"] or 0) + int(judged["n"] or 0)


def study_versus(*, study: Study, n_boot: int = PAGE_N_BOOT) -> dict[str, Any]:
    """Every judge column of ``study`` against its people (:func:`judges_vs_people`) with ``versions`` (the
    columns' runs and prompt SHA-256) and ``error`` (why there is nothing to compare, else None); cached under
    the study's judgment fingerprint. A study with more than :data:`MAX_JUDGMENTS` judgments is not computed: its
    ``error`` says how to get the numbers."""
    columns = judge_columns(study=study)
    fingerprint, judgments = _fingerprint(study, columns)
    versions = [{"column": c.column, "name": c.name, "kind": c.kind, "templates_sha256": c.templates_sha256,
                 "runs": list(c.runs), "judgments": c.judgments} for c in columns]
    if judgments > MAX_JUDGMENTS:
        return {"error": f"study {study.slug}: {judgments} judgments, more than the {MAX_JUDGMENTS} this page "
                         "computes while you wait; download the judgments (participants and LLM judges) and run "
                         "python -m metaeval agreement, ppi and alt-test on the file, or make a report from a "
                         "judgment set of them (its pairwise section has these tables)",
                "judges": [], "criteria": [], "tables": {}, "warnings": [], "versions": versions}
    key = f"judges-vs-people:{study.pk}:{n_boot}:{fingerprint}"
    cached = cache.get(key)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    result: dict[str, Any]
    try:
        table = study_judgment_table(study=study, columns=columns)
        result = judges_vs_people(table, study_style_data(study=study), n_boot=n_boot, seed=study.seed)
        result["error"] = None
    except JudgeNotFound as exc:
        result = {"error": str(exc), "judges": [], "criteria": [], "tables": {}, "warnings": []}
    result["versions"] = versions
    cache.set(key, result, CACHE_SECONDS)
    return result
