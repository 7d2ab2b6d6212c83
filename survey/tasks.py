"""Celery tasks of the survey app: an LLM judge run executed by a worker (:func:`execute_judge_run`), a large
import (:func:`execute_import_job`), and the reclaiming of judge runs and import jobs whose worker vanished (on
Celery beat's schedule and when a worker starts). The work itself is in :mod:`survey.judge_runs` and
:mod:`survey.import_jobs`."""
from __future__ import annotations

import logging
import os
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from survey import import_jobs, judge_runs
from survey.models import ImportJob, JudgeRun

log = logging.getLogger(__name__)


@shared_task(name="survey.execute_judge_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def execute_judge_run(self: Any, run_id: int) -> str:
    """Judge queued run ``run_id`` (:func:`survey.judge_runs.judge_run_process`); its final status, or
    ``skipped`` when it was not queued (another worker has it, or it ended)."""
    worker = f"{self.request.hostname or 'eager'}:{os.getpid()}"
    try:
        run = judge_runs.judge_run_process(run_id, worker=worker)
    except JudgeRun.DoesNotExist:
        return "skipped"
    if run is None:
        log.info("judge run %s skipped: not queued", run_id)
        return "skipped"
    return run.status


@shared_task(name="survey.reclaim_stale_judge_runs")
def reclaim_stale_judge_runs() -> dict[str, list[int]]:
    return judge_runs.judge_runs_reclaim_stale()


@shared_task(name="survey.execute_import_job", bind=True, acks_late=True, reject_on_worker_lost=True)
def execute_import_job(self: Any, job_id: int) -> str:
    """Import job ``job_id`` (:func:`survey.import_jobs.import_job_process`); its final status, or ``skipped``
    when it was not takeable (another worker has it, or it ended)."""
    worker = f"{self.request.hostname or 'eager'}:{os.getpid()}"
    try:
        job = import_jobs.import_job_process(job_id, worker=worker)
    except ImportJob.DoesNotExist:
        return "skipped"
    return "skipped" if job is None else job.status


@shared_task(name="survey.reclaim_stale_import_jobs")
def reclaim_stale_import_jobs() -> dict[str, list[int]]:
    return import_jobs.import_jobs_reclaim_stale()


@worker_ready.connect
def _reclaim_when_a_worker_starts(**_: Any) -> None:
    judge_runs.judge_runs_reclaim_stale()
    import_jobs.import_jobs_reclaim_stale()
