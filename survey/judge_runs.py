"""Writes for LLM judge runs of a preference study (docs/conventions.md sec. 21): create, launch on a Celery
worker, process (resumable, under a lease), cancel, resume, reclaim after a vanished worker, and import judgments
made elsewhere (the ``file`` judge).

A run asks the judge about every item of the study (``selectors.study_judge_cases``) ``runs`` times per criterion,
half of the runs with each system's text first (``metaeval.core.judges.plan``). Each answer is stored at once as a
:class:`~survey.models.JudgeJudgment`; one that is already stored for (item, criterion, run) is never asked again,
so a run that was cancelled, failed or lost its worker continues where it stopped. A run never blocks a request:
the page and the API only create rows and send the task.
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.utils import timezone

from metaeval import queue
from metaeval.core.io.fileio import Problems
from metaeval.core.judges.base import JudgeConfigError
from metaeval.core.judges.factory import judge_concurrency, judge_name
from metaeval.core.judges.plan import DEFAULT_RUNS, PlanError, plan
from metaeval.core.judges.prompts import (
    DEFAULT_TEMPLATES,
    SENTENCE_TEMPLATES,
    Template,
    TemplateError,
    check_templates,
    templates_from_json,
    templates_json,
    templates_sha256,
)
from metaeval.core.judges.runner import JudgmentRecord, iter_judging
from metaeval.core.pairwise.judgments import judgments_from_bytes
from metaeval.leases import RowLease, claim, reclaim_stale
from survey import selectors
from survey.judge_endpoints import endpoint_find, judge_for_run, run_settings
from survey.models import JudgeJudgment, JudgeRun, Study
from survey.services import SurveyError

log = logging.getLogger(__name__)

__all__ = [
    "JudgeRunError",
    "default_templates",
    "judge_run_cancel",
    "judge_run_create",
    "judge_import_summary",
    "judge_run_import",
    "judge_run_launch",
    "judge_run_process",
    "judge_run_resume",
    "judge_runs_reclaim_stale",
]

#: stored progress is written at most this often (seconds) besides the first and the last judgment
PROGRESS_EVERY = 1.0
#: an import stores this many judgments between two progress reports
IMPORT_BATCH = 10000


class JudgeRunError(SurveyError):
    """A judge run that cannot be created, imported or changed; the message says why."""


class JudgeRunStopped(Exception):
    """The run was cancelled or its lease went to another worker while it ran."""


def _criteria_of(study: Study) -> list[str]:
    return [criterion["name"] for criterion in study.criteria]


def _check_study(study: Study) -> None:
    if study.kind not in (Study.Kind.PREFERENCE, Study.Kind.SENTENCE_PREFERENCE):
        raise JudgeRunError(f"study {study.slug!r} is a {study.kind} study; judges answer preference and sentence "
                            "preference studies")
    if not study.questionnaires.exists():
        raise JudgeRunError(f"study {study.slug!r} has no questionnaires yet: generate them first")


def default_templates(study: Study) -> Mapping[str, Template]:
    """The prompt templates a run uses when none are given: AuPEL's for a preference study, Zopf's question
    (``SENTENCE_TEMPLATES``) for a sentence preference study."""
    return SENTENCE_TEMPLATES if study.kind == Study.Kind.SENTENCE_PREFERENCE else DEFAULT_TEMPLATES


def judge_run_create(
    *, study: Study, endpoint: str, settings: Mapping[str, object] | None = None, kind: str | None = None,
    criteria: Sequence[str] | None = None, runs: int = DEFAULT_RUNS, templates: Mapping[str, object] | None = None,
    user: User | AnonymousUser | None = None, launch: bool = True,
) -> JudgeRun:
    """A queued run over ``study`` on the operator's judge endpoint ``endpoint`` (``survey.judge_endpoints``;
    its kind is the run's: ``kind``, when given, must agree), sent to a worker once the transaction commits when
    ``launch``. ``settings`` are the researcher's sampling settings only (``RESEARCHER_SETTINGS``). ``criteria``
    default to the study's; ``templates`` (JSON ``{criterion: {system, user}}``) to the default ones.
    :class:`JudgeRunError` names every problem: an unknown endpoint, a setting only the operator sets, a bad
    value (``check_judge_settings``), a criterion the study does not ask, a template missing or with an unknown
    placeholder, an odd ``runs``, items without the context a criterion needs. The API key itself is read on the
    worker, never stored."""
    _check_study(study)
    try:
        found = endpoint_find(endpoint)
        if kind is not None and kind != found.kind:
            raise JudgeConfigError(f"kind: endpoint {found.name} is of kind {found.kind}, not {kind}")
        kind = str(found.kind)
        checked = run_settings(found, settings or {})
        chosen = list(dict.fromkeys(criteria or _criteria_of(study)))
        unknown = [name for name in chosen if name not in _criteria_of(study)]
        if unknown:
            raise JudgeRunError(f"criteria: {', '.join(unknown)} not asked by study {study.slug!r} "
                                f"(it asks {', '.join(_criteria_of(study))})")
        parsed = templates_from_json(templates, "templates") if templates else dict(default_templates(study))
        check_templates(parsed, chosen)
        cases = [case for _item, case in selectors.study_judge_cases(study=study)]
        total = len(plan(cases, chosen, runs))
    except (JudgeConfigError, TemplateError, PlanError) as exc:
        raise JudgeRunError(str(exc)) from None
    used = {name: parsed[name] for name in chosen}
    with transaction.atomic():
        run = JudgeRun.objects.create(
            study=study, kind=kind, name=judge_name(kind, checked), judge_settings=checked, criteria=chosen,
            runs=runs, templates=templates_json(used), templates_sha256=templates_sha256(used), total=total,
            created_by=user if user is not None and user.is_authenticated else None,
        )
        if launch:
            transaction.on_commit(lambda: judge_run_launch(run))
    return run


def judge_run_launch(run: JudgeRun) -> None:
    """Send the queued run to a Celery worker (task ``survey.execute_judge_run``; with no broker configured, and
    under tests, Celery runs it here). A broker that does not answer marks the run failed, saying so."""
    try:
        queue.send("survey.execute_judge_run", run.pk)
    except Exception as exc:  # kombu's OperationalError and socket errors
        log.warning("judge run %s: could not reach the task broker", run.pk, exc_info=True)
        JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(
            status=JudgeRun.Status.FAILED, finished_at=timezone.now(),
            error=f"could not queue the run: the task broker did not answer ({type(exc).__name__}: {exc})")
        run.refresh_from_db()


class JudgeRunLease(RowLease):
    """A worker's hold on a running judge run (``metaeval.services.RowLease``, renewed every third of
    ``METAEVAL_RUN_LEASE_SECONDS``); :meth:`check` turns a cancel request or a lost lease into
    :class:`JudgeRunStopped`."""

    def __init__(self, run: JudgeRun, worker: str) -> None:
        super().__init__(JudgeRun, run.pk, worker, f"lease-judge-run-{run.pk}")

    def check(self) -> None:
        if self.lost.is_set():
            raise JudgeRunStopped(f"judge run {self.run_id}: the lease of {self.worker} ran out")
        if self.cancelled.is_set():
            raise JudgeRunStopped(f"judge run {self.run_id} was cancelled")


def _store(run: JudgeRun, item_id: int, record: JudgmentRecord) -> None:
    try:
        with transaction.atomic():
            JudgeJudgment.objects.create(
                judge_run=run, item_id=item_id, criterion=record.criterion, run=record.run, winner=record.winner,
                shown_first=record.shown_first, raw=record.raw[:20000], error=record.error[:2000],
                seconds=round(record.seconds, 6))
    except IntegrityError:  # stored by an earlier worker of this run in the meantime: keep the first
        log.info("judge run %s: %s already stored", run.pk, record.key)


def judge_run_process(run_id: int, *, worker: str = "") -> JudgeRun | None:
    """Take run ``run_id`` (queued, or running under a lease that ran out: :func:`metaeval.leases.claim`, the
    take-over rule the reclaimers follow) and judge what is not stored yet; the run ends ``done`` (every judgment
    stored, ``invalid`` ones included), ``failed`` (the judge cannot be set up, e.g. a missing API key variable
    or model folder, or every call of this attempt failed; or, taken over, no attempt was left) or
    ``cancelled``. None when the run was not taken (ended, or another worker holds a valid lease). A lost lease
    stops without writing the status (the reclaimer or the new worker does)."""
    taken, run = claim(JudgeRun, run_id, worker=worker, event="judge_run", error="", finished_at=None)
    if taken == "skipped":
        return None
    if run.status != JudgeRun.Status.RUNNING:  # ended by the take-over rule
        return run
    try:
        with JudgeRunLease(run, worker) as lease:
            outcome = _judge(run, lease)
    except JudgeRunStopped as exc:
        log.info("%s", exc)
        run.refresh_from_db()
        if run.cancel_requested and run.status == JudgeRun.Status.RUNNING and run.worker == worker:
            _finish(run, worker, JudgeRun.Status.CANCELLED, "cancelled by a researcher")
        return run
    except Exception as exc:
        log.exception("judge run %s failed", run.pk)
        _finish(run, worker, JudgeRun.Status.FAILED, f"{type(exc).__name__}: {exc}")
        return run
    status, error = outcome
    _finish(run, worker, status, error)
    return run


def _judge(run: JudgeRun, lease: JudgeRunLease) -> tuple[str, str]:
    try:
        judge = judge_for_run(run)
    except JudgeConfigError as exc:
        return JudgeRun.Status.FAILED, str(exc)
    templates = templates_from_json(run.templates, f"run {run.pk} templates")
    pairs = selectors.study_judge_cases(study=run.study)
    item_of = {case.key: item for item, case in pairs}
    requests = plan([case for _item, case in pairs], run.criteria, run.runs)
    stored = JudgeJudgment.objects.filter(judge_run=run).values_list("item_id", "criterion", "run")
    case_of = {item: case.key for item, case in pairs}
    done = {(*case_of[item], criterion, number) for item, criterion, number in stored if item in case_of}
    total, written, failed = len(requests), len(done), 0
    JudgeRun.objects.filter(pk=run.pk).update(total=total, done=written)
    last = time.monotonic()
    for record in iter_judging(judge, requests, templates=templates, done=done,
                               concurrency=judge_concurrency(run.kind, run.judge_settings)):
        lease.check()
        _store(run, item_of[(record.case_id, record.model_a, record.model_b)], record)
        written += 1
        failed += bool(record.error)
        if time.monotonic() - last >= PROGRESS_EVERY or written == total:
            JudgeRun.objects.filter(pk=run.pk).update(done=written)
            last = time.monotonic()
    lease.check()
    JudgeRun.objects.filter(pk=run.pk).update(done=JudgeJudgment.objects.filter(judge_run=run).count())
    asked = written - len(done)
    if asked and failed == asked:
        return JudgeRun.Status.FAILED, f"every one of the {asked} judge calls of this attempt failed (each error is " \
            "in its judgment's error field); they are stored as invalid, which a resume skips: fix the settings and " \
            "start a new run"
    return JudgeRun.Status.DONE, ""


def _finish(run: JudgeRun, worker: str, status: str, error: str) -> None:
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING, worker=worker).update(
        status=status, error=error, finished_at=timezone.now(), lease_expires_at=None)
    run.refresh_from_db()


def judge_run_cancel(run: JudgeRun) -> JudgeRun:
    """A queued run ends cancelled at once; a running one is asked to stop (its worker ends it at the next
    judgment, keeping what is stored). Ended runs are left as they are."""
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(
        status=JudgeRun.Status.CANCELLED, finished_at=timezone.now(), error="cancelled by a researcher")
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).update(cancel_requested=True)
    run.refresh_from_db()
    return run


def judge_run_resume(run: JudgeRun) -> JudgeRun:
    """Queue a failed or cancelled ``openai``/``transformers`` run that has judgments left to ask; its worker skips
    what is stored."""
    if run.kind == JudgeRun.Kind.FILE:
        raise JudgeRunError("an imported run has nothing to resume")
    resumable = (JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED)
    stopped = f"judge run {run.pk} is {run.status}; only a failed or cancelled run can resume"
    if run.status not in resumable:
        raise JudgeRunError(stopped)
    if run.total and JudgeJudgment.objects.filter(judge_run=run).count() >= run.total:
        raise JudgeRunError(f"judge run {run.pk} has all its {run.total} judgments stored (invalid ones included), "
                            "so a resume would ask nothing: start a new run")
    if not JudgeRun.objects.filter(pk=run.pk, status__in=resumable).update(
            status=JudgeRun.Status.QUEUED, cancel_requested=False, worker="", error="", finished_at=None,
            attempts=0):
        raise JudgeRunError(stopped)
    run.refresh_from_db()
    transaction.on_commit(lambda: judge_run_launch(run))
    return run


def judge_runs_reclaim_stale(*, now: Any = None) -> dict[str, list[int]]:
    """Running judge runs whose worker stopped renewing the lease, under the take-over rule of scoring runs
    (:func:`metaeval.leases.stale_verdict`): back to the queue (and to Celery) while they have attempts left
    (``METAEVAL_RUN_ATTEMPTS``), else failed saying why (the worker and its last heartbeat); a cancel request ends
    them cancelled. Conditional UPDATEs, so any number of reclaimers never double a retry. Every worker calls it
    every half lease (:mod:`metaeval.reclaimer`)."""
    return reclaim_stale(JudgeRun, requeue=lambda verdict: {"error": verdict.message}, launch=judge_run_launch,
                         event="judge_run", now=now)


def judge_run_import(*, study: Study, data: bytes, file_name: str, user: User | AnonymousUser | None = None,
                     progress: Callable[[str, int, int], None] | None = None,
                     before_commit: Callable[[list[JudgeRun]], None] | None = None) -> list[JudgeRun]:
    """The ``file`` judge: judgments made elsewhere (``python -m metaeval judge`` on an export of the study's
    cases, or any judgment file of conventions sec. 17) stored as one done run per ``judge`` value, all or
    nothing. Each row must name a study item by ``case_id`` (``doc_id/reader_id``) and its two systems, in either
    order (a row with the systems the other way round is turned round: winner and ``shown_first`` follow), and
    a criterion the study asks. ``run`` may be empty: the repeats of an (item, criterion) are then numbered in
    file order. Problems: ``ImportFileError`` listing ``file:line: field ...`` for every bad row. ``progress``
    (step, done, total) hears how many rows are stored (an import job shows it); ``before_commit`` is called with
    the stored runs inside the transaction (an import job marks itself done there; raising rolls all back)."""
    _check_study(study)
    table = judgments_from_bytes(data, file_name)
    items = {case.key: item_id for item_id, case in selectors.study_judge_cases(study=study)}
    asked = set(_criteria_of(study))
    problems = Problems()
    per_judge: dict[str, list[tuple[int, int, str, str, str, int | None]]] = defaultdict(list)
    flip = {"model_a": "model_b", "model_b": "model_a"}
    for judgment in table.judgments:
        winner, shown = judgment.winner, judgment.shown_first
        item = items.get((judgment.case_id, judgment.model_a, judgment.model_b))
        if item is None:
            item = items.get((judgment.case_id, judgment.model_b, judgment.model_a))
            winner, shown = flip.get(winner, winner), flip.get(shown, shown)
        if item is None:
            problems.add(file_name, judgment.line, f'field "case_id": no item of study {study.slug!r} compares '
                            f'{judgment.model_a} and {judgment.model_b} on case "{judgment.case_id}"')
            continue
        if judgment.criterion not in asked:
            problems.add(file_name, judgment.line, f'field "criterion": "{judgment.criterion}" is not asked by study '
                            f'{study.slug!r} ({", ".join(sorted(asked))})')
            continue
        per_judge[judgment.judge or "file"].append((judgment.line, item, judgment.criterion, winner, shown,
                                                    judgment.run))
    rows: dict[str, list[JudgeJudgment]] = {}
    for name, entries in per_judge.items():
        seen: dict[tuple[int, str, int], int] = {}
        counter: dict[tuple[int, str], int] = defaultdict(int)
        for line, item_id, criterion, winner, shown, given in entries:
            if given is None:
                counter[(item_id, criterion)] += 1
            number = counter[(item_id, criterion)] if given is None else given
            key = (item_id, criterion, number)
            if key in seen:
                problems.add(file_name, line, f'field "run": judge "{name}" already judged this item on '
                                f"{criterion} in run {number} (line {seen[key]})")
                continue
            seen[key] = line
            rows.setdefault(name, []).append(JudgeJudgment(item_id=item_id, criterion=criterion, run=number,
                                                           winner=winner, shown_first=shown))
    problems.raise_if_any()
    digest = hashlib.sha256(data).hexdigest()
    created: list[JudgeRun] = []
    now = timezone.now()
    total, written = sum(len(stored) for stored in rows.values()), 0
    with transaction.atomic():
        for name, stored in rows.items():
            criteria = [c for c in _criteria_of(study) if any(row.criterion == c for row in stored)]
            run = JudgeRun.objects.create(
                study=study, kind=JudgeRun.Kind.FILE, name=name, criteria=criteria,
                runs=max(row.run for row in stored), source_file=file_name[:255], source_sha256=digest,
                status=JudgeRun.Status.DONE, total=len(stored), done=len(stored), started_at=now,
                finished_at=now, created_by=user if user is not None and user.is_authenticated else None)
            for row in stored:
                row.judge_run = run
            for start in range(0, len(stored), IMPORT_BATCH):
                JudgeJudgment.objects.bulk_create(stored[start:start + IMPORT_BATCH], batch_size=1000)
                written += len(stored[start:start + IMPORT_BATCH])
                if progress is not None:
                    progress("storing the judgments", written, total)
            created.append(run)
        if before_commit is not None:
            before_commit(created)
    return created


def judge_import_summary(file_name: str, runs: Sequence[JudgeRun]) -> str:
    """What an import of ``file_name`` stored, one line (the page's message and the import job's result)."""
    stored = ", ".join(f"{run.name} ({run.total} judgments)" for run in runs)
    return f"Imported {file_name}: {stored}."

