"""Writes: scoring runs stored in the database.

Runs take minutes on large datasets, so a request never scores: it queues the run (:func:`run_enqueue`) and
starts a worker process for it (:func:`run_launch`, ``manage.py metaeval_worker --run ID``), which takes it with
:func:`run_process`. ``manage.py metaeval_run`` scores at once with :func:`run_execute`. Both write the row's
``progress`` as the pipeline reports it, so the run page can follow either.
"""
from __future__ import annotations

import logging
import secrets
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.utils import timezone

from metaeval import selectors
from metaeval.core import studies
from metaeval.core.cache import DistanceCache
from metaeval.core.measures.registry import MEASURES
from metaeval.core.pipeline import Progress, ProgressEvent, RunOptions, RunResult, run_scores
from metaeval.core.records import run_document
from metaeval.core.report import build_report
from metaeval.core.report import check_settings as check_report_settings
from metaeval.models import MetaevalRun
from survey.models import Dataset, Study

log = logging.getLogger(__name__)

#: how often a run's progress may be written to its row at most (seconds)
PROGRESS_INTERVAL = 0.5
#: how many progress messages a run keeps
PROGRESS_MESSAGES = 20
#: ``settings.METAEVAL_RUN_LAUNCHER``: "subprocess" (default), "inline" (tests) or "none" (a polling worker)
LAUNCHERS = ("subprocess", "inline", "none")


class RunNotQueued(Exception):
    """The run is not (or no longer) queued: another worker took it, or it never was."""


class ProgressRecorder:
    """The pipeline's progress callback for one run: keeps ``run.progress`` current (step, done/total steps, the
    last messages) and writes it to the row at most every :data:`PROGRESS_INTERVAL` seconds.

    Steps: loading the data, then one per measure and one per auxiliary measure (HJ), each done at its
    ``finished`` :class:`~metaeval.core.pipeline.ProgressEvent` (a measure that could not run finishes at once).
    """

    def __init__(self, run: MetaevalRun, total: int, forward: Progress | None = None) -> None:
        self.run = run
        self.forward = forward
        self.state: dict[str, object] = {"step": "loading data", "done": 0, "total": total, "messages": []}
        self._written = 0.0
        self.run.progress = self.state
        self._write(force=True)

    def __call__(self, event: ProgressEvent) -> None:
        if self.forward is not None:
            self.forward(event)
        messages = [*self.state["messages"], event.message][-PROGRESS_MESSAGES:]  # type: ignore[misc]
        self.state["messages"] = messages
        self.state["step"] = event.message
        if event.kind == "finished":
            self._advance()
        self._write()

    def data_loaded(self) -> None:
        self._advance()
        self._write()

    def finish(self, *, ok: bool) -> None:
        """Final state in ``run.progress`` (the caller saves the row)."""
        if ok:
            self.state["done"] = self.state["total"]
            self.state["step"] = "done"
        else:
            self.state["step"] = f"failed during: {self.state['step']}"
        self.run.progress = dict(self.state)

    def _advance(self) -> None:
        self.state["done"] = min(int(self.state["done"]) + 1, int(self.state["total"]))  # type: ignore[call-overload]

    def _write(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._written < PROGRESS_INTERVAL:
            return
        self._written = now
        self.run.progress = dict(self.state)
        MetaevalRun.objects.filter(pk=self.run.pk).update(progress=self.run.progress)


def _check_study(dataset: Dataset, study: Study | None) -> None:
    if study is not None and study.dataset_id != dataset.pk:
        raise ValueError(f'study "{study.slug}" rates dataset "{study.dataset}", not "{dataset.name}"')


def _execute(
    run: MetaevalRun,
    options: RunOptions,
    *,
    cache: DistanceCache | None,
    progress: Progress | None,
) -> RunResult:
    """Score the run's dataset (HJ from its study minus ``run.excluded_raters``) and finish the row: ``done`` with
    the run document, or ``failed`` with the error (the exception is then re-raised with a note naming the run).
    ``run.parameters`` (the request, written when the row was created) is not changed. Returns the in-memory
    result, whose floats keep NaN."""
    study = run.study if options.aux else None
    full_report = run.kind == MetaevalRun.Kind.REPORT
    steps = 1 + len(options.measures) + (len(options.aux) if study else 0) + (1 if full_report else 0)
    recorder = ProgressRecorder(run, steps, progress)
    try:
        corpus = selectors.corpus_from_dataset(dataset=run.dataset)
        rating_rows = (
            selectors.study_rating_rows(study=study, exclude_raters=run.excluded_raters or ())
            if study is not None
            else None
        )
        ratings = selectors.ratings_for_study(study=study, rows=rating_rows) if study is not None else None
        run.data_hash = selectors.data_hash(corpus=corpus, ratings=ratings)
        recorder.data_loaded()
        if full_report:
            data = studies.prepare_study(corpus, options, ratings=ratings, cache=cache, progress=recorder)
            assert data.result is not None
            result = data.result
            recorder(ProgressEvent("info", "report", "report: studies and statistics"))
            run.report = build_report(
                data, params=options.params, seed=int(run.seed or 0), rating_rows=rating_rows,
                excluded_raters=run.excluded_raters or (), progress=recorder, **_report_settings(run.parameters),
            )
        else:
            result = run_scores(corpus, options, ratings=ratings, cache=cache, progress=recorder)
    except BaseException as exc:
        recorder.finish(ok=False)
        run.status = MetaevalRun.Status.FAILED
        run.error = str(exc) or type(exc).__name__
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "data_hash", "finished_at", "progress"])
        exc.add_note(f"stored as failed metaeval run {run.pk}")
        log.info("run failed", extra={"event": "run.failed", "run": run.pk, "error": run.error})
        raise
    document = run_document(result)
    for name in ("versions", "timings", "scores", "hj_counts", "distances", "unavailable"):
        setattr(run, name, document[name])
    run.measure_models = document["models"]
    run.status = MetaevalRun.Status.DONE
    run.finished_at = timezone.now()
    recorder.finish(ok=True)
    run.save()
    log.info("run done", extra={"event": "run.done", "run": run.pk, "kind": run.kind, "rows": len(run.scores),
                                "seconds": round(result.timings.get("total", 0.0), 3), "data_hash": run.data_hash})
    return result


def _report_settings(parameters: Mapping[str, object]) -> dict[str, Any]:
    """The report settings a run carries in ``parameters["report"]`` (checked when it was queued, and again by
    :func:`~metaeval.core.report.build_report` itself)."""
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
    :func:`metaeval.core.records.run_document` records, or as ``failed`` with the error message, after which the
    exception is re-raised (with a note naming the run). :func:`run_execute_with_result` also returns the
    in-memory :class:`~metaeval.core.pipeline.RunResult`, whose floats keep NaN.
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
    """:func:`run_execute`, returning the stored run and the in-memory result."""
    _check_study(dataset, study)
    now = timezone.now()
    run = MetaevalRun.objects.create(
        dataset=dataset,
        study=study,
        created_by=user if isinstance(user, User) else None,
        parameters=options.as_dict(),
        started_at=now,
    )
    return run, _execute(run, options, cache=cache, progress=progress)


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
) -> MetaevalRun:
    """A ``queued`` run for a worker (:func:`run_launch`, ``manage.py metaeval_worker``).

    ``kind="report"`` also builds the full report (:func:`metaeval.core.report.build_report`: CIs, permutation
    tests, beta ablation, stability, Borda-Kendall, rater agreement) with ``report`` settings (``n_boot``,
    ``resample``, ...); its random draws use ``seed`` (a fresh one is drawn and stored when none is given).

    ``parameters`` is ``options.as_dict()`` plus ``skip_unavailable`` and ``workers`` (so that
    ``RunOptions.from_dict`` rebuilds ``options``). ``exclude_raters`` (ids as exported, e.g. ``"P12"``) are left
    out of the study's ratings. Raises ``ValueError`` for a study of another dataset, auxiliary measures or
    excluded raters without a study, or an unknown measure name.
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
        parameters=parameters,
        seed=seed,
        excluded_raters=list(dict.fromkeys(str(rater) for rater in exclude_raters)),
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
    )


def run_launch(run: MetaevalRun) -> None:
    """Start the queued ``run`` outside the request cycle, as ``settings.METAEVAL_RUN_LAUNCHER`` says:

    * ``"subprocess"`` (default): a detached ``manage.py metaeval_worker --run ID`` (output to
      ``settings.METAEVAL_WORKER_LOG`` when set, else discarded: errors are stored on the run);
    * ``"inline"``: :func:`run_process` right here (tests, debugging);
    * ``"none"``: nothing; a polling ``manage.py metaeval_worker`` takes it.

    A launcher that cannot start marks the run failed.
    """
    launcher = getattr(settings, "METAEVAL_RUN_LAUNCHER", "subprocess")
    if callable(launcher):
        launcher(run)
    elif launcher == "inline":
        run_process(run.pk)
    elif launcher == "none":
        return
    elif launcher == "subprocess":
        try:
            _spawn_worker(run.pk)
        except OSError as exc:
            _fail_queued(run, f"could not start a worker: {exc}")
    else:
        raise ValueError(f"settings.METAEVAL_RUN_LAUNCHER must be one of {', '.join(LAUNCHERS)}, not {launcher!r}")


def _spawn_worker(run_id: int) -> None:
    base = Path(settings.BASE_DIR)
    log_path = getattr(settings, "METAEVAL_WORKER_LOG", None)
    command = [sys.executable, "manage.py", "metaeval_worker", "--run", str(run_id)]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as output:
            subprocess.Popen(  # noqa: S603
                command, cwd=base, start_new_session=True, stdin=subprocess.DEVNULL, stdout=output, stderr=output
            )
    else:
        subprocess.Popen(  # noqa: S603
            command,
            cwd=base,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def _fail_queued(run: MetaevalRun, error: str) -> None:
    MetaevalRun.objects.filter(pk=run.pk, status=MetaevalRun.Status.QUEUED).update(
        status=MetaevalRun.Status.FAILED, error=error, finished_at=timezone.now()
    )
    run.refresh_from_db()


def run_claim(run_id: int) -> MetaevalRun:
    """Take a queued run: one conditional UPDATE (queued -> running), so of two workers exactly one gets it.
    Raises :class:`RunNotQueued` (or ``MetaevalRun.DoesNotExist``) otherwise."""
    now = timezone.now()
    taken = MetaevalRun.objects.filter(pk=run_id, status=MetaevalRun.Status.QUEUED).update(
        status=MetaevalRun.Status.RUNNING, started_at=now
    )
    run = MetaevalRun.objects.select_related("dataset", "study").get(pk=run_id)
    if not taken:
        raise RunNotQueued(f"metaeval run {run_id} is {run.status}, not queued")
    log.info("run claimed", extra={"event": "run.claimed", "run": run.pk, "kind": run.kind})
    return run


def run_process(
    run_id: int, *, cache_dir: str | Path | None = None, use_cache: bool = True, progress: Progress | None = None
) -> MetaevalRun:
    """Take the queued run ``run_id`` (:func:`run_claim`), rebuild its options from the stored parameters and
    score it as :func:`run_execute` does, writing progress to the row as the pipeline reports it.

    Returns the finished run (``done``, or ``failed`` with ``error``; parameters are kept either way). Raises
    :class:`RunNotQueued` when the run is not queued (another worker has it) and re-raises
    ``KeyboardInterrupt``/``SystemExit`` after marking the run failed.
    """
    run = run_claim(run_id)
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
        if use_cache:
            with DistanceCache(cache_dir) as cache:
                _execute(run, options, cache=cache, progress=progress)
        else:
            _execute(run, options, cache=None, progress=progress)
    except Exception as exc:  # stored on the run by _execute (or here, when the cache could not open)
        if run.status != MetaevalRun.Status.FAILED:
            run.status, run.error, run.finished_at = MetaevalRun.Status.FAILED, str(exc), timezone.now()
            run.save(update_fields=["status", "error", "finished_at"])
        log.warning("metaeval run %s failed: %s", run.pk, run.error, exc_info=True)
    return run


def run_process_queued(*, limit: int | None = None, **process: object) -> list[MetaevalRun]:
    """Process queued runs, oldest first, until none is left (or ``limit`` were processed); runs that another
    worker takes meanwhile are skipped. Returns the runs this call processed."""
    processed: list[MetaevalRun] = []
    while limit is None or len(processed) < limit:
        queued = list(
            MetaevalRun.objects.filter(status=MetaevalRun.Status.QUEUED)
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)[:20]
        )
        if not queued:
            break
        for run_id in queued:
            if limit is not None and len(processed) >= limit:
                break
            try:
                processed.append(run_process(run_id, **process))  # type: ignore[arg-type]
            except (RunNotQueued, MetaevalRun.DoesNotExist):
                continue
    return processed
