"""Celery tasks of the survey app: an LLM judge run executed by a worker (:func:`execute_judge_run`), a large
import (:func:`execute_import_job`), and the reclaiming of judge runs and import jobs whose worker vanished (for
Celery beat, if run; every worker reclaims them on its own: :mod:`metaeval.reclaimer`). The work itself is in
:mod:`survey.judge_runs` and :mod:`survey.import_jobs`."""
from __future__ import annotations

import logging
import os
from typing import Any

from celery import shared_task

from survey import import_jobs, judge_runs
from survey.models import ImportJob, JudgeRun

log = logging.getLogger(__name__)


@shared_task(name="survey.execute_judge_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def execute_judge_run(self: Any, run_id: int) -> str:
    """Judge run ``run_id`` (:func:`survey.judge_runs.judge_run_process`: a queued run, or a running one whose
    lease ran out, which it takes over or ends as the reclaimers would); its final status, or ``skipped`` when it
    was not taken (it ended, or another worker holds a valid lease)."""
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

