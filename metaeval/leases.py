"""Leases on the rows that workers run (scoring runs, LLM judge runs, shards) and the one rule for a row whose lease
ran out.

A worker that takes a row holds a lease: ``lease_expires_at``, which a :class:`Heartbeat` renews to now plus
``METAEVAL_RUN_LEASE_SECONDS`` every third of that. A running row whose lease ran out belongs to a worker that
vanished (kill -9, a lost machine). :func:`stale_verdict` says what becomes of it, the same for the reclaimers
(:func:`reclaim_stale`: ``metaeval.services.runs_reclaim_stale``, ``survey.judge_runs.judge_runs_reclaim_stale``)
and for a worker that receives the row's task message again (:func:`claim`: a broker's redelivery or a duplicate):
attempts left (``METAEVAL_RUN_ATTEMPTS`` in all): another attempt; none left: failed, saying why; a cancel
requested: cancelled. Every change is one conditional UPDATE on the row as it was read (:func:`stale_row`), so of
any number of reclaimers and workers acting at once exactly one changes it.

Rows have the fields ``status`` (``queued``, ``running``, ``failed``, ``cancelled``, ...), ``worker``,
``attempts``, ``started_at``, ``finished_at``, ``lease_expires_at``, ``cancel_requested`` and ``error``.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Self

from django.conf import settings
from django.db import connection
from django.db.models import F, QuerySet
from django.utils import timezone

from metaeval.models import MetaevalRun

log = logging.getLogger(__name__)

QUEUED, RUNNING, FAILED, CANCELLED = "queued", "running", "failed", "cancelled"


def lease_duration() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "METAEVAL_RUN_LEASE_SECONDS", 60)))


def attempts_allowed() -> int:
    """How many times a run may be taken in all (``METAEVAL_RUN_ATTEMPTS``)."""
    return int(getattr(settings, "METAEVAL_RUN_ATTEMPTS", 3))


class Heartbeat:
    """While the ``with`` block lasts, a daemon thread calls :meth:`renew` every third of the lease (the lease
    itself is what subclasses renew); it stops early when :attr:`lost` is set. A heartbeat that cannot write lets
    the lease run out, which is the safe outcome."""

    def __init__(self, name: str) -> None:
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=name, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def renew(self) -> None:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def interval(self) -> float:
        """Seconds between two renewals: a third of the lease."""
        return lease_duration().total_seconds() / 3

    def _beat(self) -> None:
        interval = self.interval()
        try:
            while not self._stop.wait(interval):
                self.renew()
                if self.lost.is_set():
                    break
        except Exception:
            log.warning("%s: heartbeat failed", self._thread.name, exc_info=True)
        finally:
            connection.close()


class RowLease(Heartbeat):
    """A worker's hold on a running row of ``model`` (a scoring run, an LLM judge run): while the ``with`` block
    lasts, a daemon thread renews ``lease_expires_at`` (to now + the lease) every third of the lease, as long as the
    row is still ``running`` under this ``worker``; it sets :attr:`cancelled` on a cancel request and :attr:`lost`
    when the row is gone to another worker, which subclasses' ``check`` turn into exceptions."""

    def __init__(self, model: type[Any], pk: int, worker: str, name: str) -> None:
        super().__init__(name)
        self.model = model
        self.run_id = pk
        self.worker = worker
        self.cancelled = threading.Event()

    def renew(self) -> None:
        """One heartbeat (also what the thread does)."""
        row = self.model.objects.filter(pk=self.run_id, status=RUNNING, worker=self.worker)
        if not row.update(lease_expires_at=timezone.now() + lease_duration()):
            self.lost.set()
        elif row.filter(cancel_requested=True).exists():
            self.cancelled.set()


def last_heartbeat(run: Any) -> datetime | None:
    """When the row's worker last renewed its lease. Derived, not stored: the claim and every heartbeat set
    ``lease_expires_at`` to their time plus :func:`lease_duration`, so it is the expiry less the lease (exact while
    every process runs with the same ``METAEVAL_RUN_LEASE_SECONDS``)."""
    return run.lease_expires_at - lease_duration() if run.lease_expires_at is not None else None


def is_stale(run: Any, now: datetime) -> bool:
    """Whether ``run`` is running under a lease that ran out before ``now``."""
    return run.status == RUNNING and run.lease_expires_at is not None and run.lease_expires_at < now


@dataclass(frozen=True)
class StaleVerdict:
    """What becomes of a running row whose lease ran out (:func:`stale_verdict`)."""

    action: Literal["retry", "fail", "cancel"]
    #: why, in words: its worker, and when it last renewed the lease
    lost: str
    #: attempts made so far, and allowed in all
    attempts: int
    allowed: int

    @property
    def status(self) -> str:
        """The status a ``fail`` or ``cancel`` verdict ends the row with."""
        return CANCELLED if self.action == "cancel" else FAILED

    @property
    def message(self) -> str:
        """The row's error when the verdict ends it; for ``retry``, the note of the next attempt."""
        if self.action == "cancel":
            return f"cancelled by a researcher; {self.lost}"
        if self.action == "fail":
            return f"{self.lost}; tried {self.attempts} times, the limit (METAEVAL_RUN_ATTEMPTS)"
        return f"retrying: {self.lost} (attempt {self.attempts} of {self.allowed})"


def stale_verdict(run: Any) -> StaleVerdict:
    """The one rule for a running row whose lease ran out: ended cancelled when a cancel was requested, another
    attempt while it has attempts left, else failed with a message naming its worker and its last heartbeat."""
    beat = last_heartbeat(run)
    since = beat.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if beat is not None else "?"
    lost = f"its worker ({run.worker or 'unknown'}) stopped answering (no heartbeat since {since} UTC)"
    allowed = attempts_allowed()
    action: Literal["retry", "fail", "cancel"] = (
        "cancel" if run.cancel_requested else "retry" if run.attempts < allowed else "fail"
    )
    return StaleVerdict(action, lost, run.attempts, allowed)


def stale_row(run: Any, now: datetime) -> QuerySet[Any]:
    """The row of ``run`` only while it is still as read (running, the same worker and attempt) with its lease run
    out before ``now``: the condition of every UPDATE that acts on a stale row."""
    return type(run).objects.filter(pk=run.pk, status=RUNNING, worker=run.worker, attempts=run.attempts,
                                    lease_expires_at__lt=now)


#: the fields that say why a row ended (:func:`claim`, :func:`reclaim_stale`): a run's ``error``, by default
Ended = Callable[[StaleVerdict], Mapping[str, Any]]


def error_fields(verdict: StaleVerdict) -> dict[str, Any]:
    """A run's or judge run's reason for ending: its ``error``."""
    return {"error": verdict.message}


def _end(run: Any, verdict: StaleVerdict, now: datetime, ended: Ended) -> bool:
    return bool(stale_row(run, now).update(status=verdict.status, finished_at=now, lease_expires_at=None,
                                           **ended(verdict)))


def _taken(worker: str, now: datetime) -> dict[str, Any]:
    return {"status": RUNNING, "worker": worker, "started_at": now, "lease_expires_at": now + lease_duration(),
            "attempts": F("attempts") + 1}


ClaimOutcome = Literal["claimed", "taken over", "failed", "cancelled", "skipped"]


def claim(model: type[Any], pk: int, *, worker: str, event: str, now: datetime | None = None,
          ended: Ended = error_fields, **fields: Any) -> tuple[ClaimOutcome, Any]:
    """A worker takes row ``pk`` of ``model`` for its task message: a queued row (queued -> running under
    ``worker`` with a fresh lease and one more attempt, plus ``fields``), or a running row whose lease ran out,
    under :func:`stale_verdict`: ``taken over`` as the next attempt (the same changes), ``failed`` when no attempt is
    left or ``cancelled`` when a cancel was requested (with the message saying why). ``skipped`` otherwise: ended,
    or running under a lease that is still valid (its worker is alive), or taken by another worker meanwhile.
    Logs a take-over or an end as ``event``.taken_over / .failed / .cancelled; ``ended`` gives the fields that say
    why a row ended (:func:`error_fields` by default). Returns the outcome and the row as it is now; raises
    ``model.DoesNotExist``."""
    now = now or timezone.now()
    if model.objects.filter(pk=pk, status=QUEUED).update(**_taken(worker, now), **fields):
        return "claimed", model.objects.get(pk=pk)
    run = model.objects.get(pk=pk)
    if not is_stale(run, now):
        return "skipped", run
    verdict = stale_verdict(run)
    if verdict.action == "retry":
        if not stale_row(run, now).update(**_taken(worker, now), **fields):
            return "skipped", model.objects.get(pk=pk)
        log.warning("%s %s taken over by %s: %s", event, pk, worker, verdict.lost,
                    extra={"event": f"{event}.taken_over", "run": pk, "worker": worker})
        return "taken over", model.objects.get(pk=pk)
    if not _end(run, verdict, now, ended):
        return "skipped", model.objects.get(pk=pk)
    log.warning("%s %s %s: %s", event, pk, verdict.status, verdict.message,
                extra={"event": f"{event}.{verdict.status}", "run": pk})
    return "failed" if verdict.action == "fail" else "cancelled", model.objects.get(pk=pk)


def reclaim_stale(
    model: type[Any], *, requeue: Callable[[StaleVerdict], Mapping[str, Any]], launch: Callable[[Any], None],
    event: str, now: datetime | None = None, ended: Ended = error_fields,
    after_end: Callable[[Any], None] | None = None,
) -> dict[str, list[int]]:
    """Every running row of ``model`` whose lease ran out before ``now``, under :func:`stale_verdict`: queued
    again (``worker`` cleared, plus the fields ``requeue(verdict)`` gives) and sent to Celery with ``launch``, or
    ended failed or cancelled (with the fields ``ended(verdict)`` gives, then ``after_end(row)``). Logs each change
    as ``event``.requeued / .failed / .cancelled. Returns ``{"retried": [...], "failed": [...], "cancelled":
    [...]}``."""
    now = now or timezone.now()
    outcome: dict[str, list[int]] = {"retried": [], "failed": [], "cancelled": []}
    for run in model.objects.filter(status=RUNNING, lease_expires_at__lt=now).order_by("pk"):
        verdict = stale_verdict(run)
        if verdict.action == "retry":
            if stale_row(run, now).update(status=QUEUED, worker="", lease_expires_at=None, **requeue(verdict)):
                outcome["retried"].append(run.pk)
                log.warning("%s %s requeued: %s", event, run.pk, verdict.lost,
                            extra={"event": f"{event}.requeued", "run": run.pk})
                run.refresh_from_db()
                launch(run)
        elif _end(run, verdict, now, ended):
            outcome["cancelled" if verdict.action == "cancel" else "failed"].append(run.pk)
            if after_end is not None:
                after_end(run)
            log.warning("%s %s %s: %s", event, run.pk, verdict.status, verdict.message,
                        extra={"event": f"{event}.{verdict.status}", "run": run.pk})
    return outcome


class RunCancelled(Exception):
    """A researcher cancelled the run while it ran (:func:`run_cancel`)."""


class RunLeaseLost(Exception):
    """This worker's lease on the run ran out and the run was given to another worker: stop, write nothing."""


class RunLease(RowLease):
    """A worker's hold on a running scoring run (:class:`RowLease`); :meth:`check` raises :class:`RunCancelled` /
    :class:`RunLeaseLost` at the pipeline's next progress event."""

    def __init__(self, run: MetaevalRun, worker: str) -> None:
        super().__init__(MetaevalRun, run.pk, worker, f"lease-run-{run.pk}")

    def check(self) -> None:
        if self.lost.is_set():
            raise RunLeaseLost(f"metaeval run {self.run_id}: the lease of {self.worker} ran out; another worker has it")
        if self.cancelled.is_set():
            raise RunCancelled(f"metaeval run {self.run_id} was cancelled")
