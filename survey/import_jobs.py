"""Writes for import jobs: an upload over ``IMPORT_INLINE_MAX_BYTES`` is not imported inside the web request but
stored (gzip'd, :class:`~survey.models.ImportUpload`) and imported by a Celery worker (task
``survey.execute_import_job``) with the SAME importer the request would call: a file judge's judgments
(``judge_runs.judge_run_import``), a judgment set (``metaeval.services.judgment_set_import``) or a dataset file
(:func:`dataset_import_files`, the admin's). The job page follows it.

All or nothing, exactly once: the importer calls back inside its own transaction (``before_commit``) and the job's
``done`` mark is made there, a conditional UPDATE (still ``running`` under this worker), so the import and the mark
commit together and an attempt whose job went to another worker rolls back (a dataset import, an idempotent
upsert, is marked after it). The file is read and checked outside any transaction.

A worker holds the job under a lease (``metaeval.leases.RowLease``, renewed with the progress every
:data:`PROGRESS_EVERY` seconds); a job whose worker vanished is taken over, under the runs' rule
(:mod:`metaeval.leases`), by the redelivered message or by :func:`import_jobs_reclaim_stale` (every worker's
reclaimer, :mod:`metaeval.reclaimer`) while it has attempts left (``METAEVAL_RUN_ATTEMPTS``), else it fails saying
why: never left running.
"""
from __future__ import annotations

import gzip
import io
import logging
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from metaeval import leases, queue
from metaeval import services as metaeval_services
from metaeval.core.io.fileio import ImporterError
from metaeval.leases import RowLease, lease_duration
from survey import judge_runs
from survey.importers import files as import_files
from survey.importers.consolidated import Missing
from survey.models import ImportJob, ImportUpload, Study

log = logging.getLogger(__name__)

#: a running job's progress (and lease) is written this often (seconds)
PROGRESS_EVERY = 1.0

#: the dataset file formats of the admin's import and the upload roles each needs
DATASET_FORMATS = {"consolidated": ("file",), "pens": ("news", "test")}

class ImportJobStopped(Exception):
    """The job went to another worker while this one imported it: this attempt rolls back."""


def runs_inline(*uploads: UploadedFile) -> bool:
    """Whether uploads of this size (all together) are imported inside the request (``IMPORT_INLINE_MAX_BYTES``)."""
    return sum(upload.size or 0 for upload in uploads) <= int(settings.IMPORT_INLINE_MAX_BYTES)


def _gzip(upload: UploadedFile) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=1) as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return buffer.getvalue()


def import_job_create(*, kind: str, uploads: Mapping[str, UploadedFile], study: Study | None = None,
                      options: Mapping[str, Any] | None = None,
                      user: User | AnonymousUser | None = None) -> ImportJob:
    """A queued job of ``kind`` holding ``uploads`` (role -> file) gzip'd, sent to a worker once the transaction
    commits. ``study``: a file judge's study; ``options``: the form's other fields."""
    with transaction.atomic():
        job = ImportJob.objects.create(
            kind=kind, study=study, options=dict(options or {}), step="waiting for a worker",
            created_by=user if isinstance(user, User) else None)
        for role, upload in uploads.items():
            ImportUpload.objects.create(job=job, role=role, name=Path(upload.name or role).name[:255],
                                        size=upload.size or 0, content=_gzip(upload))
        transaction.on_commit(lambda: import_job_launch(job))
    log.info("import job queued", extra={"event": "import.queued", "job": job.pk, "kind": kind,
                                         "bytes": sum(upload.size or 0 for upload in uploads.values())})
    return job


def import_job_launch(job: ImportJob) -> None:
    """Send the queued job to a Celery worker (with no broker, and under tests, Celery runs it here); a broker that
    does not answer fails the job, saying so."""
    try:
        queue.send("survey.execute_import_job", job.pk)
    except Exception as exc:  # kombu's OperationalError and socket errors
        log.warning("import job %s: could not reach the task broker", job.pk, exc_info=True)
        if ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.QUEUED).update(
                status=ImportJob.Status.FAILED, finished_at=timezone.now(), step="",
                problems=[f"could not queue the import: the task broker did not answer ({type(exc).__name__}: "
                          f"{exc}). Nothing was stored."]):
            _empty(job)
        job.refresh_from_db()


class ImportJobLease(RowLease):
    """A worker's hold on a running job (``RowLease``), renewed every :data:`PROGRESS_EVERY` seconds together with
    the progress that :meth:`report` keeps."""

    def __init__(self, job: ImportJob, worker: str) -> None:
        super().__init__(ImportJob, job.pk, worker, f"lease-import-{job.pk}")
        self.step, self.done, self.total = "starting", 0, 0

    def interval(self) -> float:
        return min(PROGRESS_EVERY, super().interval())

    def report(self, step: str, done: int, total: int) -> None:
        self.step, self.done, self.total = step[:200], done, total

    def renew(self) -> None:
        row = ImportJob.objects.filter(pk=self.run_id, status=ImportJob.Status.RUNNING, worker=self.worker)
        if not row.update(lease_expires_at=timezone.now() + lease_duration(), step=self.step, done=self.done,
                          total=self.total):
            self.lost.set()


def _ended(verdict: leases.StaleVerdict) -> dict[str, Any]:
    """Why a job whose worker vanished ended (``leases``' rule): its problems, which say nothing was stored."""
    return {"problems": [f"{verdict.message}. Nothing was stored."], "step": ""}


def _claim(job_id: int, worker: str) -> ImportJob | None:
    """Take the job for its task message under the runs' take-over rule (:func:`metaeval.leases.claim`): queued,
    or running under a lease that ran out (the message came back after its worker vanished) with attempts left;
    a job with no attempt left fails saying why. None when not taken."""
    outcome, job = leases.claim(ImportJob, job_id, worker=worker, event="import", ended=_ended, step="starting",
                                done=0, total=0)
    if outcome in ("failed", "cancelled"):
        _empty(job)
    if outcome not in ("claimed", "taken over"):
        return None
    job = ImportJob.objects.select_related("study", "created_by").get(pk=job_id)
    log.info("import job claimed", extra={"event": "import.claimed", "job": job.pk, "worker": worker,
                                          "attempt": job.attempts})
    return job


def import_job_process(job_id: int, *, worker: str = "") -> ImportJob | None:
    """Take job ``job_id`` (see :func:`_claim`) and import its files under a lease: ``done`` with the importer's
    result, or ``failed`` with its problems (``file:line: ...``) and nothing stored. None when the job was not
    takeable (another worker has it, or it ended)."""
    job = _claim(job_id, worker)
    if job is None:
        return None
    problems: list[str] = []
    try:
        with ImportJobLease(job, worker) as lease:
            _import(job, lease)
    except ImportJobStopped as exc:
        log.warning("%s", exc)
    except ImporterError as exc:
        problems = list(getattr(exc, "problems", None) or str(exc).splitlines())
    except (ValueError, judge_runs.JudgeRunError) as exc:  # a taken name, no games, a study without items
        problems = [str(exc)]
    except (OSError, UnicodeDecodeError, gzip.BadGzipFile) as exc:
        problems = [f"cannot read the file ({exc})"]
    except Exception as exc:
        log.exception("import job %s failed", job.pk)
        problems = [f"the import stopped: {type(exc).__name__}: {exc}"]
    if problems:
        if ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.RUNNING, worker=worker).update(
                status=ImportJob.Status.FAILED, problems=problems, step="", finished_at=timezone.now(),
                lease_expires_at=None):
            _empty(job)
        log.info("import job failed", extra={"event": "import.failed", "job": job.pk, "problems": len(problems)})
    job.refresh_from_db()
    return job


def _import(job: ImportJob, lease: ImportJobLease) -> None:
    uploads = {upload.role: upload for upload in job.uploads.all()}
    lease.report(f"reading and checking {', '.join(upload.name for upload in uploads.values())}", 0, 0)
    IMPORTERS[job.kind](job, uploads, lease)
    _empty(job)
    log.info("import job done", extra={"event": "import.done", "job": job.pk, "kind": job.kind})


def _mark_done(job: ImportJob, lease: ImportJobLease, message: str, links: list[list[str]]) -> None:
    """The job ends ``done`` with its result, if it is still this worker's (else :class:`ImportJobStopped`); called
    inside the importer's transaction, so the import and this mark commit together or not at all."""
    if not ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.RUNNING, worker=lease.worker).update(
            status=ImportJob.Status.DONE, result={"message": message, "links": links}, step="", done=lease.total,
            total=lease.total, finished_at=timezone.now(), lease_expires_at=None):
        raise ImportJobStopped(f"import job {job.pk}: another worker has it; this attempt is rolled back")


def _empty(job: ImportJob) -> None:
    """An ended job keeps its files' names and sizes, not their bytes."""
    ImportUpload.objects.filter(job_id=job.pk).update(content=b"")


def _content(upload: ImportUpload) -> bytes:
    return gzip.decompress(bytes(upload.content))


def _judge_file(job: ImportJob, uploads: Mapping[str, ImportUpload], lease: ImportJobLease) -> None:
    upload, study = uploads["file"], job.study
    assert study is not None
    links = [["The study's LLM judges", reverse("research:study_judges", args=[study.slug])]]
    judge_runs.judge_run_import(
        study=study, data=_content(upload), file_name=upload.name, user=job.created_by, progress=lease.report,
        before_commit=lambda runs: _mark_done(job, lease, judge_runs.judge_import_summary(upload.name, runs), links))


def _judgment_set(job: ImportJob, uploads: Mapping[str, ImportUpload], lease: ImportJobLease) -> None:
    upload = uploads["file"]
    links = [["Judgment sets", reverse("runs:judgments")]]
    metaeval_services.judgment_set_import(
        name=job.options.get("name", ""), data=_content(upload), file_name=upload.name,
        description=job.options.get("description", ""), user=job.created_by,
        before_commit=lambda stored: _mark_done(job, lease, metaeval_services.judgment_set_summary(stored), links))


def _dataset(job: ImportJob, uploads: Mapping[str, ImportUpload], lease: ImportJobLease) -> None:
    """A dataset import is an idempotent upsert, so the job is marked done after it (a second attempt of a job
    that went to another worker meanwhile changes nothing)."""
    files = {role: (upload.name, [_content(upload)]) for role, upload in uploads.items()}
    summary = dataset_import_files(fmt=job.options.get("format", "consolidated"), files=files,
                                   dataset=job.options.get("dataset", ""), missing=job.options.get("missing", "error"))
    _mark_done(job, lease, f"Imported {summary}", [["Datasets", reverse("admin:survey_dataset_changelist")]])


IMPORTERS: dict[str, Callable[[ImportJob, Mapping[str, ImportUpload], ImportJobLease], None]] = {
    ImportJob.Kind.JUDGE_FILE: _judge_file,
    ImportJob.Kind.JUDGMENT_SET: _judgment_set,
    ImportJob.Kind.DATASET: _dataset,
}


def dataset_import_files(*, fmt: str, files: Mapping[str, tuple[str, Iterable[bytes]]], dataset: str = "",
                         missing: str = "error") -> str:
    """Import a dataset from uploaded files (``fmt`` ``consolidated``: role ``file``; ``pens``: ``news`` and
    ``test``; each ``(name, chunks)``), written under their own base names (which the importers' messages quote as
    ``file:line``) to a temporary folder; the import's one-line report, or ``ImporterError`` (nothing stored)."""
    with tempfile.TemporaryDirectory(prefix="dataset-upload-") as tmp:
        paths: dict[str, Path] = {}
        for role, (name, chunks) in files.items():
            folder = Path(tmp) / role
            folder.mkdir()
            paths[role] = folder / (Path(name).name or "upload")
            with paths[role].open("wb") as out:
                for chunk in chunks:
                    out.write(chunk)
        if fmt == "pens":
            result = import_files.pens_import(paths["news"], paths["test"],
                                              dataset=dataset or import_files.PENS_DEFAULT_DATASET)
        else:
            result = import_files.consolidated_import(paths["file"], dataset=dataset, missing=cast(Missing, missing))
    return result.describe()


def import_jobs_reclaim_stale(*, now: Any = None) -> dict[str, list[int]]:
    """Running jobs whose worker stopped renewing the lease, under the runs' take-over rule
    (:func:`metaeval.leases.reclaim_stale`): back to the queue (and to Celery) while they have attempts left
    (``METAEVAL_RUN_ATTEMPTS``), else failed saying why and that nothing was stored. Conditional UPDATEs, so any
    number of reclaimers never double a retry. Every worker calls it every half lease (:mod:`metaeval.reclaimer`)."""

    def requeue(verdict: leases.StaleVerdict) -> dict[str, Any]:
        return {"step": f"queued again: {verdict.message}"[:200]}

    return leases.reclaim_stale(ImportJob, requeue=requeue, launch=import_job_launch, event="import", now=now,
                                ended=_ended, after_end=_empty)
