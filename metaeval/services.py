"""Writes: scoring runs stored in the database.

Runs take minutes on large datasets, so a request never scores: it queues the run (:func:`run_enqueue`) and
sends it to Celery (:func:`run_launch`, task ``metaeval.execute_run``); a worker takes it with :func:`run_process`
and holds a lease on it (:class:`RunLease`: a heartbeat renews ``lease_expires_at``), so a run whose worker
vanished is retried or failed by :func:`runs_reclaim_stale` (every worker calls it every half lease) or by a
redelivered message (:func:`run_claim`), under the one rule of :mod:`metaeval.leases`, never left running.
:func:`run_cancel` stops a queued or running run. ``manage.py metaeval_run`` scores at once with
:func:`run_execute`. Both write the row's ``progress`` as the pipeline reports it, so the run page can follow
either.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import logging
import os
import re
import secrets
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.utils import timezone

from metaeval import leases, queue, selectors
from metaeval.core.io.corpus import MissingSummary
from metaeval.core.io.fileio import ImporterError
from metaeval.core.io.records import run_document
from metaeval.core.measures.cache import DistanceCache, open_cache
from metaeval.core.measures.registry import MEASURES
from metaeval.core.options import SEED_MAX
from metaeval.core.pairwise.features import StyleData
from metaeval.core.pairwise.games import criteria_games, require_games, systems_in_order
from metaeval.core.pairwise.judgments import judgments_from_bytes
from metaeval.core.pairwise.report import build_pairwise_report
from metaeval.core.perseval import studies
from metaeval.core.perseval.pipeline import Distribute, Progress, ProgressEvent, RunOptions, RunResult, run_scores
from metaeval.core.perseval.report import build_report
from metaeval.core.perseval.report import check_settings as check_report_settings
from metaeval.core.progress import ProgressTracker, planned_steps
from metaeval.leases import RunCancelled, RunLease, RunLeaseLost, lease_duration
from metaeval.models import JudgmentSet, MetaevalRun
from survey import exporting
from survey import selectors as survey_selectors
from survey.models import Dataset, Study

log = logging.getLogger(__name__)

#: a judgment set's name
SLUG = re.compile(r"[A-Za-z0-9_-]{1,100}")

#: how often a run's progress may be written to its row at most (seconds)
PROGRESS_INTERVAL = 0.5
#: how many progress messages a run keeps
PROGRESS_MESSAGES = 20
#: the pairwise section's bootstrap seed is the report's seed plus this (its consistency curves: plus one more)
PAIRWISE_SEED_OFFSET = 7


class RunNotQueued(Exception):
    """The run is not (or no longer) queued: another worker took it, or it never was."""


class ProgressRecorder(ProgressTracker):
    """The pipeline's progress callback for one run: a :class:`~metaeval.core.progress.ProgressTracker` (step,
    done/total steps, the last messages; the steps of :func:`~metaeval.core.progress.planned_steps`) that keeps
    ``run.progress`` current and writes it to the row at most every :data:`PROGRESS_INTERVAL` seconds. ``guard``
    runs before each event (a cancelled run, or a lost lease, stops there). The command line counts the same
    steps with :class:`~metaeval.core.progress.TerminalProgress`.
    """

    keep = PROGRESS_MESSAGES

    def __init__(
        self, run: MetaevalRun, total: int, forward: Progress | None = None, guard: Callable[[], None] | None = None
    ) -> None:
        super().__init__(total, forward)
        self.run = run
        self.guard = guard
        self._written = 0.0
        self.run.progress = self.state
        self._write(force=True)

    def __call__(self, event: ProgressEvent) -> None:
        if self.guard is not None:
            self.guard()  # a cancelled run, or a lost lease, stops here
        super().__call__(event)

    def changed(self, event: ProgressEvent | None) -> None:
        self._write()

    def finish(self, *, ok: bool) -> None:
        """Final state in ``run.progress`` (the caller saves the row)."""
        super().finish(ok=ok)
        self.run.progress = dict(self.state)

    def _write(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._written < PROGRESS_INTERVAL:
            return
        self._written = now
        self.run.progress = dict(self.state)
        # only while the row is this process's (a worker that lost its lease leaves the new worker's progress alone)
        MetaevalRun.objects.filter(pk=self.run.pk, worker=self.run.worker).update(progress=self.run.progress)


#: how the stored error of a run that stopped at an incomplete document begins (its page then offers the fix)
INCOMPLETE_DATA = "Incomplete data: "


def failure_message(exc: BaseException) -> str:
    """A failed run's stored error; where the core's message names a command-line flag, the run form's words."""
    if isinstance(exc, MissingSummary):
        return (
            f'{INCOMPLETE_DATA}document "{exc.doc_id}" has no {exc.what} summary for reader "{exc.reader}". '
            f"Add the missing summaries (admin: Documents lists the incomplete ones), or start the run again with "
            f'"A reader without a summary from a system: leave such readers out".'
        )
    return str(exc) or type(exc).__name__


def _check_study(dataset: Dataset, study: Study | None) -> None:
    if study is not None and study.dataset_id != dataset.pk:
        raise ValueError(f'study "{study.slug}" rates dataset "{study.dataset}", not "{dataset.name}"')


def _execute(
    run: MetaevalRun,
    options: RunOptions,
    *,
    cache: DistanceCache | None,
    progress: Progress | None,
    lease: RunLease | None = None,
    distribute: Distribute | None = None,
) -> RunResult:
    """Score the run's dataset (HJ from its study minus ``run.excluded_raters``) and finish the row: ``done`` with
    the run document, or ``failed`` with the error (the exception is then re-raised with a note naming the run).
    ``run.parameters`` (the request, written when the row was created) is not changed. Returns the in-memory
    result, whose floats keep NaN. Under a ``lease`` a cancel request ends the run as ``cancelled`` and a lost lease
    ends it writing nothing (the run belongs to another worker)."""
    study = run.study if options.aux else None
    full_report = run.kind == MetaevalRun.Kind.REPORT
    steps = planned_steps(options, hj=study is not None, report=full_report)
    recorder = ProgressRecorder(run, steps, progress, guard=lease.check if lease is not None else None)
    try:
        corpus = selectors.corpus_from_dataset(dataset=run.dataset)
        rating_rows = (
            selectors.study_rating_rows(study=study, exclude_raters=run.excluded_raters or ())
            if study is not None
            else None
        )
        ratings = selectors.ratings_for_study(study=study, rows=rating_rows) if study is not None else None
        judgment_set = run.judgment_set if full_report else None
        judgments = selectors.judgment_table(judgment_set) if judgment_set is not None else None
        run.data_hash = selectors.data_hash(
            corpus=corpus, ratings=ratings, judgments_sha256=judgment_set.sha256 if judgment_set else None
        )
        recorder.data_loaded()
        if full_report:
            data = studies.prepare_study(corpus, options, ratings=ratings, cache=cache, progress=recorder,
                                         distribute=distribute)
            assert data.result is not None
            result = data.result
            recorder(ProgressEvent("info", "report", "report: studies and statistics"))
            run.report = build_report(
                data, params=options.params, seed=int(run.seed or 0), rating_rows=rating_rows,
                excluded_raters=run.excluded_raters or (), progress=recorder, **_report_settings(run.parameters),
            )
            if judgments is not None:
                recorder(ProgressEvent("info", "report", "report: pairwise judgments"))
                assert judgment_set is not None
                try:
                    style: StyleData | None = selectors.judgment_style(judgment_set)
                except ImporterError as exc:  # the judgments themselves were read: go on without the lengths
                    style = None
                    recorder(ProgressEvent("info", "report", f"report: the judgments' lengths are left out: {exc}"))
                section = build_pairwise_report(
                    judgments, seed=int(run.seed or 0) + PAIRWISE_SEED_OFFSET,
                    n_boot=int(run.report["parameters"]["n_boot"]),
                    n_permutations=int(run.report["parameters"]["n_permutations"]),
                    confidence=float(run.report["parameters"]["confidence"]), style=style,
                )
                run.report["tables"].update(section.pop("tables"))
                run.report["pairwise"] = section
        else:
            result = run_scores(corpus, options, ratings=ratings, cache=cache, progress=recorder, distribute=distribute)
        if lease is not None:
            lease.check()
    except RunLeaseLost:
        log.warning("run %s: lease lost, leaving the run to the worker that has it", run.pk)
        raise
    except BaseException as exc:
        recorder.finish(ok=False)
        cancelled = isinstance(exc, RunCancelled)
        run.status = MetaevalRun.Status.CANCELLED if cancelled else MetaevalRun.Status.FAILED
        run.error = "cancelled by a researcher while it ran" if cancelled else failure_message(exc)
        run.finished_at = timezone.now()
        run.lease_expires_at = None
        if not _store(run, ["status", "error", "data_hash", "finished_at", "progress", "lease_expires_at"], lease):
            raise RunLeaseLost(f"metaeval run {run.pk}: the lease ran out before it could be marked "
                               f"{run.status}; another worker has it") from exc
        exc.add_note(f"stored as {run.status} metaeval run {run.pk}")
        log.info(f"run {run.status}", extra={"event": f"run.{run.status}", "run": run.pk, "error": run.error})
        raise
    document = run_document(result)
    for name in ("versions", "timings", "scores", "hj_counts", "distances", "unavailable"):
        setattr(run, name, document[name])
    run.measure_models = document["models"]
    run.status = MetaevalRun.Status.DONE
    run.finished_at = timezone.now()
    run.lease_expires_at = None
    recorder.finish(ok=True)
    if not _store(run, [*_DONE_FIELDS], lease):
        log.warning("run %s: lease lost before the result was stored, leaving the run to the worker that has it",
                    run.pk)
        raise RunLeaseLost(f"metaeval run {run.pk}: the lease ran out before the result was stored; another worker "
                           "has it")
    log.info("run done", extra={"event": "run.done", "run": run.pk, "kind": run.kind, "rows": len(run.scores),
                                "seconds": round(result.timings.get("total", 0.0), 3), "data_hash": run.data_hash})
    return result


#: what a finished run writes to its row
_DONE_FIELDS = ("versions", "timings", "scores", "hj_counts", "distances", "unavailable", "measure_models", "status",
                "finished_at", "lease_expires_at", "progress", "report", "data_hash", "error")


def _store(run: MetaevalRun, fields: Sequence[str], lease: RunLease | None) -> bool:
    """Write ``fields`` of ``run`` to its row; under a ``lease`` only while the row is still running under the
    lease's worker (one conditional UPDATE), so a worker whose lease ran out never overwrites the run of the
    worker that took it over. False when the row was not this worker's any more."""
    if lease is None:  # a run scored in this process (run_execute): nobody else can have it
        run.save(update_fields=list(fields))
        return True
    values = {name: getattr(run, name) for name in fields}
    return bool(MetaevalRun.objects.filter(pk=run.pk, status=MetaevalRun.Status.RUNNING, worker=lease.worker)
                .update(**values))


def _report_settings(parameters: Mapping[str, object]) -> dict[str, Any]:
    """The report settings a run carries in ``parameters["report"]`` (checked when it was queued, and again by
    :func:`~metaeval.core.perseval.report.build_report` itself)."""
    given = parameters.get("report") or {}
    return dict(given) if isinstance(given, Mapping) else {}


def run_execute(
    *,
    dataset: Dataset,
    study: Study | None = None,
    options: RunOptions,
    user: User | AnonymousUser | None = None,
    cache: DistanceCache | None = None,
    progress: Progress | None = None,
) -> MetaevalRun:
    """Score ``dataset`` (and the HJ variants from ``study``'s ratings when ``options.aux`` names measures) and
    store the run.

    The row is created first (status ``running``) and finished as ``done`` with everything
    :func:`metaeval.core.io.records.run_document` records, or as ``failed`` with the error message, after which the
    exception is re-raised (with a note naming the run). :func:`run_execute_with_result` also returns the
    in-memory :class:`~metaeval.core.perseval.pipeline.RunResult`, whose floats keep NaN.
    """
    return run_execute_with_result(
        dataset=dataset, study=study, options=options, user=user, cache=cache, progress=progress
    )[0]


def run_execute_with_result(
    *,
    dataset: Dataset,
    study: Study | None = None,
    options: RunOptions,
    user: User | AnonymousUser | None = None,
    cache: DistanceCache | None = None,
    progress: Progress | None = None,
) -> tuple[MetaevalRun, RunResult]:
    """:func:`run_execute`, returning the stored run and the in-memory result.

    The row is held under a :class:`RunLease` as a worker's is (``worker`` names this host and process), so a
    command killed mid-run leaves a run that :func:`runs_reclaim_stale` hands to a Celery worker, not one stuck
    running."""
    _check_study(dataset, study)
    now = timezone.now()
    worker = f"{socket.gethostname()}:{os.getpid()} (command line)"
    run = MetaevalRun.objects.create(
        dataset=dataset,
        study=study,
        created_by=user if isinstance(user, User) else None,
        status=MetaevalRun.Status.RUNNING,
        parameters=options.as_dict(),
        started_at=now,
        worker=worker,
        attempts=1,
        lease_expires_at=now + lease_duration(),
    )
    with RunLease(run, worker) as lease:
        return run, _execute(run, options, cache=cache, progress=progress, lease=lease)


def run_enqueue(
    *,
    dataset: Dataset,
    study: Study | None = None,
    options: RunOptions,
    user: User | AnonymousUser | None = None,
    seed: int | None = None,
    exclude_raters: Sequence[str] = (),
    kind: str = "scores",
    report: Mapping[str, object] | None = None,
    study_exclusions: bool = True,
    judgment_set: JudgmentSet | None = None,
) -> MetaevalRun:
    """A ``queued`` run for a Celery worker (:func:`run_launch`) or :func:`run_process` here.

    ``kind="report"`` also builds the full report (:func:`metaeval.core.perseval.report.build_report`: CIs, permutation
    tests, beta ablation, stability, Borda-Kendall, rater agreement) with ``report`` settings (``n_boot``,
    ``resample``, ...); its random draws use ``seed`` (a fresh one is drawn and stored when none is given). A
    ``judgment_set`` (report runs only) adds the pairwise section (conventions sec. 17, item 11).

    ``parameters`` is ``options.as_dict()`` plus ``skip_unavailable`` and ``workers`` (so that
    ``RunOptions.from_dict`` rebuilds ``options``). ``exclude_raters`` (ids as exported, e.g. ``"P12"``) and the
    participants excluded on the study's participants page when ``study_exclusions`` (recorded with the run, so a
    retry scores the same ratings) are left out of the study's ratings. Raises ``ValueError`` for a study of
    another dataset, auxiliary measures or excluded raters without a study, or an unknown measure name.
    """
    _check_study(dataset, study)
    if options.aux and study is None:
        raise ValueError("auxiliary measures (HJ) need a study whose ratings they use")
    if exclude_raters and study is None:
        raise ValueError("excluded raters need a study")
    unknown = [name for name in [*options.measures, *options.aux] if name not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure {unknown[0]!r}; choose from {', '.join(MEASURES)}")
    if not options.measures and not options.aux:
        raise ValueError("nothing to score: no measure and no auxiliary measure")
    if kind not in MetaevalRun.Kind.values:
        raise ValueError(f"unknown run kind {kind!r}; choose from {', '.join(MetaevalRun.Kind.values)}")
    if judgment_set is not None and kind != MetaevalRun.Kind.REPORT:
        raise ValueError("pairwise judgments go with a full report (kind report), not a scores run")
    if seed is not None and not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed must be an integer from 0 to {SEED_MAX}; got {seed}")
    parameters = options.as_dict()
    if kind == MetaevalRun.Kind.REPORT:
        parameters["report"] = check_report_settings(report or {})
        seed = secrets.randbelow(2**31) if seed is None else seed
    run = MetaevalRun.objects.create(
        dataset=dataset,
        study=study,
        created_by=user if isinstance(user, User) else None,
        status=MetaevalRun.Status.QUEUED,
        kind=kind,
        judgment_set=judgment_set,
        parameters=parameters,
        seed=seed,
        excluded_raters=list(dict.fromkeys(
            [str(rater) for rater in exclude_raters]
            + (survey_selectors.excluded_raters(study=study) if study and study_exclusions else [])
        )),
        progress={"step": "queued", "done": 0, "total": 0, "messages": []},
    )
    log.info("run queued", extra={"event": "run.queued", "run": run.pk, "kind": kind, "dataset": dataset.name,
                                  "study": study.slug if study else None, "measures": list(options.measures)})
    return run


def run_repeat(run: MetaevalRun, *, user: User | AnonymousUser | None = None) -> MetaevalRun:
    """A queued copy of ``run``: same dataset, study, options, excluded raters, kind, report settings and seed, so
    on the same data it reproduces the run's numbers (compare the ``data_hash``)."""
    parameters = dict(run.parameters)
    return run_enqueue(
        dataset=run.dataset,
        study=run.study,
        options=RunOptions.from_dict(parameters),
        user=user,
        seed=run.seed,
        exclude_raters=run.excluded_raters or (),
        kind=run.kind,
        report=parameters.get("report") if run.kind == MetaevalRun.Kind.REPORT else None,  # type: ignore[arg-type]
        study_exclusions=False,  # the copy leaves out exactly whom the run left out
        judgment_set=run.judgment_set,
    )


def run_launch(run: MetaevalRun) -> None:
    """Send the queued ``run`` to a Celery worker (task ``metaeval.execute_run``; with no broker configured, and
    under tests, Celery runs it here and now). A broker that does not answer marks the run failed, saying so."""
    try:
        queue.send("metaeval.execute_run", run.pk)
    except Exception as exc:  # kombu's OperationalError and socket errors: the run cannot be queued
        log.warning("run %s: could not reach the task broker", run.pk, exc_info=True)
        _fail_queued(run, f"could not queue the run: the task broker did not answer ({type(exc).__name__}: {exc})")


def _fail_queued(run: MetaevalRun, error: str) -> None:
    MetaevalRun.objects.filter(pk=run.pk, status=MetaevalRun.Status.QUEUED).update(
        status=MetaevalRun.Status.FAILED, error=error, finished_at=timezone.now()
    )
    run.refresh_from_db()


def run_claim(run_id: int, *, worker: str = "") -> MetaevalRun:
    """Take run ``run_id`` for its task message (:func:`metaeval.leases.claim`): a queued run, or a running one
    whose lease ran out (its worker vanished and the broker redelivered the message, or a duplicate came): each
    with one conditional UPDATE, so of two workers exactly one gets it. Returns the run running under ``worker``,
    or ended ``failed`` / ``cancelled`` by the take-over rule (no attempt left, a cancel requested). Raises
    :class:`RunNotQueued` when it is neither (ended, or its worker's lease is valid), or
    ``MetaevalRun.DoesNotExist``."""
    outcome, run = leases.claim(MetaevalRun, run_id, worker=worker, event="run")
    if outcome == "skipped":
        held = f" under a valid lease of {run.worker}" if run.status == MetaevalRun.Status.RUNNING else ""
        raise RunNotQueued(f"metaeval run {run_id} is {run.status}{held}, not queued")
    if run.status == MetaevalRun.Status.RUNNING:
        log.info("run claimed", extra={"event": "run.claimed", "run": run.pk, "kind": run.kind, "worker": worker,
                                       "attempt": run.attempts, "taken_over": outcome == "taken over"})
    return MetaevalRun.objects.select_related("dataset", "study").get(pk=run_id)


def run_process(
    run_id: int, *, worker: str = "", cache_dir: str | Path | None = None, use_cache: bool = True,
    progress: Progress | None = None,
) -> MetaevalRun:
    """Take the queued run ``run_id`` (:func:`run_claim`) as ``worker``, rebuild its options from the stored
    parameters and score it as :func:`run_execute` does under a :class:`RunLease`, writing progress to the row as
    the pipeline reports it.

    A running run whose lease ran out is taken over (or ended) as :func:`run_claim` says. Returns the finished run
    (``done``; ``failed`` with ``error``, parameters kept; ``cancelled``). Raises :class:`RunNotQueued` when the run
    is not queued (another worker holds it, or it ended) and
    :class:`RunLeaseLost` when the run was given to another worker meanwhile; re-raises
    ``KeyboardInterrupt``/``SystemExit`` after marking the run failed.
    """
    run = run_claim(run_id, worker=worker)
    if run.status != MetaevalRun.Status.RUNNING:  # ended by the take-over rule
        return run
    parameters = dict(run.parameters)
    try:
        if run.kind not in (MetaevalRun.Kind.SCORES, MetaevalRun.Kind.REPORT):
            raise ValueError(f"this worker cannot run a {run.kind!r} run")
        options = RunOptions.from_dict(parameters)
    except ValueError as exc:
        run.status, run.error, run.finished_at = MetaevalRun.Status.FAILED, str(exc), timezone.now()
        run.save(update_fields=["status", "error", "finished_at"])
        return run
    try:
        with RunLease(run, worker) as lease:
            if use_cache:
                with open_cache(cache_dir) as cache:
                    from metaeval.sharding import RunDistributor

                    distribute = RunDistributor(run, cache=cache, worker=worker, lease=lease)
                    _execute(run, options, cache=cache, progress=progress, lease=lease, distribute=distribute)
            else:
                _execute(run, options, cache=None, progress=progress, lease=lease)
    except RunLeaseLost:
        raise
    except Exception as exc:  # stored on the run by _execute (or here, when the cache could not open)
        if run.status not in (MetaevalRun.Status.FAILED, MetaevalRun.Status.CANCELLED):
            run.status, run.error, run.finished_at = MetaevalRun.Status.FAILED, str(exc), timezone.now()
            run.save(update_fields=["status", "error", "finished_at"])
        if run.status == MetaevalRun.Status.FAILED:
            log.warning("metaeval run %s failed: %s", run.pk, run.error, exc_info=True)
    return run


def run_cancel(run: MetaevalRun) -> MetaevalRun:
    """Cancel a run: a queued one at once (its task finds it not queued and does nothing); a running one at its
    worker's next progress step (``cancel_requested``; the worker ends it as ``cancelled``). Raises
    ``ValueError`` for a run that has finished."""
    now = timezone.now()
    if MetaevalRun.objects.filter(pk=run.pk, status=MetaevalRun.Status.QUEUED).update(
        status=MetaevalRun.Status.CANCELLED, finished_at=now, error="cancelled by a researcher before it started"
    ):
        log.info("run cancelled", extra={"event": "run.cancelled", "run": run.pk, "while": "queued"})
    elif MetaevalRun.objects.filter(pk=run.pk, status=MetaevalRun.Status.RUNNING).update(cancel_requested=True):
        log.info("run cancel requested", extra={"event": "run.cancel_requested", "run": run.pk})
    else:
        run.refresh_from_db()
        raise ValueError(f"metaeval run {run.pk} is {run.status}: only a queued or running run can be cancelled")
    run.refresh_from_db()
    return run


def runs_reclaim_stale(*, now: Any = None) -> dict[str, list[int]]:
    """Runs whose worker stopped renewing the lease (killed, machine lost), under the take-over rule
    (:func:`metaeval.leases.stale_verdict`): each goes back to the queue and is sent to Celery again while it has
    attempts left (``settings.METAEVAL_RUN_ATTEMPTS`` in all), else it fails with a message saying why (its worker
    and last heartbeat); one whose cancel was requested ends cancelled. Every change is a conditional UPDATE, so
    any number of reclaimers never double a retry. Returns ``{"retried": [...], "failed": [...], "cancelled":
    [...]}``. Every worker calls it every half lease (:mod:`metaeval.reclaimer`); so does Celery beat, if run."""

    def requeue(verdict: leases.StaleVerdict) -> dict[str, Any]:
        return {"progress": {"step": "queued again", "done": 0, "total": 0, "messages": [verdict.message]}}

    return leases.reclaim_stale(MetaevalRun, requeue=requeue, launch=run_launch, event="run", now=now)


def judgment_set_name_check(name: str) -> str:
    """``name`` stripped, when it is a slug that no judgment set has yet; ``ValueError`` (``name "...": ...``)
    otherwise (a large upload is checked so before it is queued as an import job)."""
    name = name.strip()
    if not SLUG.fullmatch(name):
        raise ValueError(f'name "{name}": use letters, digits, "-" and "_" only (1 to 100)')
    if JudgmentSet.objects.filter(name=name).exists():
        raise ValueError(f'name "{name}": a judgment set of that name exists already')
    return name


def judgment_set_import(
    *, name: str, data: bytes, file_name: str, description: str = "", user: User | AnonymousUser | None = None,
    before_commit: Callable[[JudgmentSet], None] | None = None,
) -> JudgmentSet:
    """Store a pairwise judgment file as judgment set ``name`` (a slug, not taken yet), all or nothing.

    The whole file is parsed first (:func:`metaeval.core.pairwise.judgments.judgments_from_bytes`; an
    ``ImportFileError`` lists every ``file:line: field`` problem; the rows it marks excluded are left out, and the
    description says so) and must give at least one game
    (:class:`~metaeval.core.pairwise.games.NoGames` otherwise); only then is a row written. ``ValueError`` for
    a bad or taken name (:func:`judgment_set_name_check`). ``before_commit`` is called with the stored set inside
    the transaction (an import job marks itself done there; raising rolls it back)."""
    name = judgment_set_name_check(name)
    table = judgments_from_bytes(data, file_name)
    games = require_games(table)
    if table.exclusions.left_out:  # the rows the file marks excluded (a study export): said with the set
        left = table.exclusions
        said = (f"{left.rows_left_out} judgments of the raters marked excluded left out: "
                f"{', '.join(left.raters_left_out)}")
        description = f"{description} ({said})" if description else said[:1].upper() + said[1:]
    try:
        with transaction.atomic():
            stored = JudgmentSet.objects.create(
                name=name, description=description, file_name=file_name,
                sha256=hashlib.sha256(data).hexdigest(), content=gzip.compress(data, mtime=0),
                judgments=len(table.judgments), invalid=table.invalid, games=len(games),
                criteria=list(criteria_games(games)), systems=systems_in_order(games),
                created_by=user if isinstance(user, User) else None,
            )
            if before_commit is not None:
                before_commit(stored)
    except IntegrityError:  # a concurrent upload took the name between the check and the insert
        raise ValueError(f'name "{name}": a judgment set of that name exists already') from None
    log.info("judgment set imported", extra={"event": "judgments.imported", "name": name,
                                             "judgments": stored.judgments, "games": stored.games})
    return stored


def judgment_set_summary(stored: JudgmentSet) -> str:
    """What an upload stored, one line (the page's message and the import job's result)."""
    return (f"Judgment set {stored.name} stored: {stored.judgments} judgments ({stored.invalid} invalid), "
            f"{stored.games} games.")


def judgment_set_from_study(*, name: str, study: Study, user: User | AnonymousUser | None = None,
                            source: str = "human") -> JudgmentSet:
    """A preference study's judgments so far (its export of ``source``: ``human``, ``llm`` or ``all``; the
    participants excluded on its participants page left out) stored as judgment set ``name``: the same checks as
    :func:`judgment_set_import`."""
    if study.kind != Study.Kind.PREFERENCE:
        raise ValueError(f'study "{study.slug}" collects ratings, not pairwise judgments')
    out = io.StringIO()
    count = exporting.write_judgments(
        survey_selectors.judgment_export_rows(study=study, exclude_excluded=True, source=source), out, "csv"
    )
    whose = {"human": "participants'", "llm": "LLM judges'", "all": "participants' and LLM judges'"}[source]
    if not count:
        raise ValueError(f'study "{study.slug}" has no {whose} judgments yet')
    return judgment_set_import(
        name=name, data=out.getvalue().encode("utf-8"), file_name=f"{study.slug}-judgments.csv",
        description=f"The {whose} judgments of preference study {study.slug} ({count}), excluded participants left "
        "out", user=user,
    )
