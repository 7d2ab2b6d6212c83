"""Celery tasks: a queued run executed by a worker (:func:`execute_run`), the helpers of a sharded run
(:func:`compute_shards`), and the reclaiming of runs whose worker vanished: every worker's own
:class:`~metaeval.reclaimer.Reclaimer` thread, started when it is ready (no beat needed), and
:func:`reclaim_stale_runs` for operators who run Celery beat anyway. The work itself is in
:mod:`metaeval.services` and :mod:`metaeval.sharding`."""
from __future__ import annotations

import logging
import os
from typing import Any

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown

from metaeval import services
from metaeval.models import MetaevalRun
from metaeval.reclaimer import Reclaimer

log = logging.getLogger(__name__)


def _worker_name(task: Any) -> str:
    """``hostname:pid`` of the Celery worker process running ``task`` (``eager:pid`` when Celery runs it inline)."""
    return f"{task.request.hostname or 'eager'}:{os.getpid()}"


@shared_task(name="metaeval.execute_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def execute_run(self: Any, run_id: int) -> str:
    """Score queued run ``run_id`` (:func:`metaeval.services.run_process`) and return its final status.

    The message is acknowledged when the task ends (``acks_late``) and given back when the worker process dies
    (``reject_on_worker_lost``): another worker then takes the run. A message for a running run whose lease ran out
    (a redelivery after its worker died) takes the run over, or ends it, as the reclaimers would
    (:func:`metaeval.services.run_claim`); a run that ended, or whose worker's lease is valid, is skipped."""
    worker = _worker_name(self)
    try:
        return services.run_process(run_id, worker=worker).status
    except (services.RunNotQueued, MetaevalRun.DoesNotExist) as exc:
        log.info("run %s skipped: %s", run_id, exc)
        return "skipped"
    except services.RunLeaseLost as exc:
        log.warning("%s", exc)
        return "lease lost"


@shared_task(name="metaeval.compute_shards", bind=True, acks_late=True, reject_on_worker_lost=True)
def compute_shards(self: Any, run_id: int, measure: str) -> str:
    """A helper of a sharded run (:func:`metaeval.sharding.shards_process`): computes pending shards of the run's
    ``measure`` into the shared distance cache until none is left. A helper that dies loses nothing: its shard's
    lease runs out and another worker (the run's own, at the latest) computes it."""
    from metaeval.sharding import shards_process

    worker = _worker_name(self)
    return shards_process(run_id, measure, worker=worker)


@shared_task(name="metaeval.reclaim_stale_runs")
def reclaim_stale_runs() -> dict[str, list[int]]:
    return services.runs_reclaim_stale()


#: this worker's reclaimer thread (its main process only), from ``worker_ready`` to ``worker_shutdown``
_reclaimer: Reclaimer | None = None


@worker_ready.connect
def _reclaim_while_the_worker_runs(**_: Any) -> None:
    """A worker that is ready gives back the runs (scoring and LLM judge runs) that vanished workers left running,
    at once and every half lease while it runs (:mod:`metaeval.reclaimer`)."""
    global _reclaimer
    if _reclaimer is None or not _reclaimer.alive:
        _reclaimer = Reclaimer().start()


@worker_shutdown.connect
def _stop_reclaiming(**_: Any) -> None:
    global _reclaimer
    if _reclaimer is not None:
        _reclaimer.stop()
        _reclaimer = None
