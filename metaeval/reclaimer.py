"""Every Celery worker gives back the runs of vanished workers on its own, no beat needed: when the worker is
ready, a daemon thread of its main process (:class:`Reclaimer`, started by ``metaeval.tasks``) calls the
reclaimers (scoring runs: :func:`metaeval.services.runs_reclaim_stale`; LLM judge runs:
:func:`survey.judge_runs.judge_runs_reclaim_stale`; import jobs: :func:`survey.import_jobs.import_jobs_reclaim_stale`)
at once and then every half lease
(``METAEVAL_RUN_LEASE_SECONDS / 2``), closing its database connection after each round. A thread dies with its
process, so a killed worker leaves nothing running behind (``celery worker -B``'s embedded beat is a process of its
own, which outlives a kill -9 of the worker). Any number of workers reclaim at once safely: every change is a
conditional UPDATE (:mod:`metaeval.leases`). So a run whose worker died is queued again, or ended with a message,
within a lease and a half of the worker's last heartbeat while any worker runs."""
from __future__ import annotations

import logging
import threading

from django.db import connection

from metaeval import services
from metaeval.leases import lease_duration
from survey import import_jobs, judge_runs

log = logging.getLogger(__name__)

#: the shortest pause between two rounds (seconds), however short the lease
MIN_INTERVAL = 0.1


def reclaim_interval() -> float:
    """Seconds between two rounds: half the lease."""
    return max(lease_duration().total_seconds() / 2, MIN_INTERVAL)


def reclaim_all() -> dict[str, dict[str, list[int]]]:
    """One round: every reclaimer, each in its own try (one failing does not stop the others)."""
    outcome: dict[str, dict[str, list[int]]] = {}
    reclaimers = (("runs", services.runs_reclaim_stale), ("judge_runs", judge_runs.judge_runs_reclaim_stale),
                  ("import_jobs", import_jobs.import_jobs_reclaim_stale))
    for name, reclaim in reclaimers:
        try:
            outcome[name] = reclaim()
        except Exception:  # the database away for a moment: the next round tries again
            log.warning("reclaiming stale %s failed", name, exc_info=True)
        finally:
            connection.close()
    return outcome


class Reclaimer:
    """A daemon thread that runs :func:`reclaim_all` now and every :func:`reclaim_interval` until :meth:`stop`
    (or the end of its process)."""

    def __init__(self, interval: float | None = None) -> None:
        self.interval = reclaim_interval() if interval is None else interval
        self.rounds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="perseval-reclaimer", daemon=True)

    def start(self) -> Reclaimer:
        self._thread.start()
        return self

    def stop(self, timeout: float = 10) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def _loop(self) -> None:
        while not self._stop.is_set():
            reclaim_all()
            self.rounds += 1
            if self._stop.wait(self.interval):
                break
