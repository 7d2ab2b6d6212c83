"""Reads for import jobs (``survey.import_jobs``): one job with its files, its state for the job page's poll, and
a study's recent jobs."""
from __future__ import annotations

from survey.models import ImportJob, ImportUpload, Study


def import_job_get(*, pk: int) -> ImportJob:
    """The job with its study and author (``ImportJob.DoesNotExist`` when there is none)."""
    return ImportJob.objects.select_related("study", "created_by").get(pk=pk)


def import_job_uploads(*, job: ImportJob) -> list[ImportUpload]:
    """The job's files: names and sizes (never their bytes)."""
    return list(job.uploads.defer("content"))


def import_job_percent(job: ImportJob) -> float:
    if job.status == ImportJob.Status.DONE:
        return 100.0
    return round(100.0 * job.done / job.total, 1) if job.total else 0.0


def import_job_state(*, job: ImportJob) -> dict[str, object]:
    """What the job page shows and polls: status, step, progress, problems and result."""
    return {"id": job.pk, "kind": job.kind, "status": job.status, "status_label": job.get_status_display(),
            "step": job.step, "done": job.done, "total": job.total, "percent": import_job_percent(job),
            "attempts": job.attempts, "live": job.is_live, "problems": list(job.problems),
            "result": dict(job.result)}


def study_import_jobs(*, study: Study, limit: int = 5) -> list[ImportJob]:
    """The study's latest import jobs (file judges), newest first."""
    return list(ImportJob.objects.filter(study=study).order_by("-created_at", "-id")[:limit])
