"""The one rule for a run whose lease ran out (metaeval.leases), for scoring runs and LLM judge runs alike: a task
message for such a run (a broker's redelivery after its worker died, or a duplicate) takes it over as the next
attempt, or ends it failed (no attempt left) or cancelled (cancel requested), exactly as the reclaimers do; a run
under a valid lease is skipped. The reclaim message names the last heartbeat. Any number of reclaimers and
redelivered messages at once act once. Real worker processes: test_workers.py."""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connections
from django.utils import timezone

from metaeval import leases, services
from metaeval import tasks as metaeval_tasks
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun
from survey import judge_runs
from survey import tasks as survey_tasks
from survey.models import JudgeRun
from tests.conftest import build_dataset
from tests.survey.test_judge_runs import RankStub, ranked_study, run_settings, stub_endpoint

pytestmark = pytest.mark.django_db
DEAD = "a@gone:1"


@pytest.fixture
def stub() -> Iterator[RankStub]:
    server = RankStub()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "metaeval-cache"))


@pytest.fixture(autouse=True)
def attempts(settings) -> None:
    settings.METAEVAL_RUN_ATTEMPTS = 3
    settings.METAEVAL_RUN_LEASE_SECONDS = 60


@dataclass
class Kind:
    """A kind of run: how to make a queued one, its model, its task and its reclaimer."""

    model: type[Any]
    make: Callable[[], Any]
    task: Any
    reclaim: Callable[..., dict[str, list[int]]]
    launcher: tuple[Any, str]  # (module, name) of the function that sends a run to Celery




@pytest.fixture(params=["scoring", "judge"])
def kind(request, stub) -> Kind:
    if request.param == "scoring":
        dataset = build_dataset(name="lease", docs=2, readers=3, systems=["SysnameA", "SysnameB"])

        def scoring() -> MetaevalRun:
            return services.run_enqueue(dataset=dataset, options=RunOptions(measures=["rouge_l", "jsd"], workers=1))

        return Kind(MetaevalRun, scoring, metaeval_tasks.execute_run, services.runs_reclaim_stale,
                    (services, "run_launch"))
    study = ranked_study()

    def make() -> JudgeRun:
        return judge_runs.judge_run_create(study=study, endpoint=stub_endpoint(stub).name, settings=run_settings(),
                                           runs=2, criteria=["quality"], launch=False)

    return Kind(JudgeRun, make, survey_tasks.execute_judge_run, judge_runs.judge_runs_reclaim_stale,
                (judge_runs, "judge_run_launch"))


def _left_running(kind: Kind, *, attempts: int, expires_in: float, **fields: Any) -> Any:
    """A run as a worker that was killed leaves it: running under ``DEAD``, its lease expiring in ``expires_in``."""
    run = kind.make()
    kind.model.objects.filter(pk=run.pk).update(
        status="running", worker=DEAD, attempts=attempts, started_at=timezone.now(),
        lease_expires_at=timezone.now() + timedelta(seconds=expires_in), **fields)
    return kind.model.objects.get(pk=run.pk)


def _redeliver(kind: Kind, run: Any) -> str:
    """The run's task message comes again (eager under tests, as a worker runs it)."""
    return kind.task.delay(run.pk).get()


def test_a_message_for_a_run_under_a_valid_lease_is_skipped(kind):
    run = _left_running(kind, attempts=1, expires_in=30)
    assert _redeliver(kind, run) == "skipped"
    after = kind.model.objects.get(pk=run.pk)
    assert (after.status, after.worker, after.attempts, after.lease_expires_at) == (
        "running", DEAD, 1, run.lease_expires_at)


def test_a_message_for_a_run_whose_lease_ran_out_takes_it_over_as_the_next_attempt(kind, caplog):
    run = _left_running(kind, attempts=1, expires_in=-1)
    assert _redeliver(kind, run) == "done"  # before issue 28: "skipped", and the run stayed running
    after = kind.model.objects.get(pk=run.pk)
    assert after.status == "done" and after.attempts == 2 and after.error == ""
    assert after.worker != DEAD and after.worker.endswith(f":{os.getpid()}")
    taken = [r for r in caplog.records if getattr(r, "event", "").endswith(".taken_over")]
    assert len(taken) == 1 and f"its worker ({DEAD}) stopped answering" in taken[0].getMessage()


def test_a_message_for_a_run_without_attempts_left_fails_it_with_a_message(kind):
    run = _left_running(kind, attempts=3, expires_in=-1)
    assert _redeliver(kind, run) == "failed"
    after = kind.model.objects.get(pk=run.pk)
    assert after.status == "failed" and after.attempts == 3 and after.finished_at is not None
    assert after.error.startswith(f"its worker ({DEAD}) stopped answering (no heartbeat since ")
    assert after.error.endswith("; tried 3 times, the limit (METAEVAL_RUN_ATTEMPTS)")


def test_a_message_for_a_run_whose_cancel_was_requested_cancels_it(kind):
    run = _left_running(kind, attempts=1, expires_in=-1, cancel_requested=True)
    assert _redeliver(kind, run) == "cancelled"
    after = kind.model.objects.get(pk=run.pk)
    assert after.status == "cancelled" and after.attempts == 1 and after.lease_expires_at is None
    assert after.error.startswith(f"cancelled by a researcher; its worker ({DEAD}) stopped answering")


def test_the_reclaimer_follows_the_same_rule(kind, monkeypatch):
    sent: list[int] = []
    monkeypatch.setattr(*kind.launcher, lambda run: sent.append(run.pk))
    alive = _left_running(kind, attempts=1, expires_in=30)
    retried = _left_running(kind, attempts=1, expires_in=-1)
    spent = _left_running(kind, attempts=3, expires_in=-1)
    cancelled = _left_running(kind, attempts=2, expires_in=-1, cancel_requested=True)
    assert kind.reclaim() == {"retried": [retried.pk], "failed": [spent.pk], "cancelled": [cancelled.pk]}
    assert sent == [retried.pk]
    rows = {row.pk: row for row in kind.model.objects.all()}
    assert rows[alive.pk].status == "running" and rows[retried.pk].status == "queued"
    assert rows[spent.pk].status == "failed" and rows[cancelled.pk].status == "cancelled"
    # the messages are the take-over's (one rule)
    assert rows[spent.pk].error.startswith(f"its worker ({DEAD}) stopped answering (no heartbeat since ")
    assert rows[spent.pk].error.endswith("; tried 3 times, the limit (METAEVAL_RUN_ATTEMPTS)")
    assert rows[cancelled.pk].error.startswith(f"cancelled by a researcher; its worker ({DEAD}) stopped answering")
    assert kind.reclaim() == {"retried": [], "failed": [], "cancelled": []}  # nothing stale is left


SINCE = re.compile(r"no heartbeat since (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC")


@pytest.mark.parametrize("path", ["reclaimer", "message"])
def test_the_message_names_the_last_heartbeat_not_the_lease_expiry(kind, path, monkeypatch):
    """Issue 28: the reclaim message's "no heartbeat since" printed the lease's expiry (a minute after the worker
    last answered, with the default lease)."""
    monkeypatch.setattr(*kind.launcher, lambda run: None)
    run = _left_running(kind, attempts=3, expires_in=-3600)  # long dead...
    before = timezone.now()
    leases.RowLease(kind.model, run.pk, DEAD, "test-heartbeat").renew()  # ...no: it answered once more, now
    after = timezone.now()
    later = after + timedelta(seconds=61)  # its lease (60 s) ran out a second ago
    if path == "reclaimer":
        assert kind.reclaim(now=later)["failed"] == [run.pk]
    else:
        assert leases.claim(kind.model, run.pk, worker="b@here:2", event="run", now=later)[0] == "failed"
    error = kind.model.objects.get(pk=run.pk).error
    since = datetime.strptime(SINCE.search(error).group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert before.replace(microsecond=0) <= since <= after, error
    expiry = (after + timedelta(seconds=60)).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert expiry not in error


# at once: any number of reclaimers and redelivered messages act once -------------------------------------------

def _at_once(count: int, work: Callable[[int], Any]) -> list[Any]:
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def thread(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = work(index)
        except BaseException as exc:  # collected for the main thread
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=thread, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert not [r for r in results if isinstance(r, BaseException)], results
    return results


@pytest.mark.django_db(transaction=True)
def test_several_reclaimers_at_once_retry_fail_and_cancel_each_run_once(kind, monkeypatch):
    sent: list[int] = []
    lock = threading.Lock()

    def launch(run: Any) -> None:
        with lock:
            sent.append(run.pk)

    monkeypatch.setattr(*kind.launcher, launch)
    retried = [_left_running(kind, attempts=1, expires_in=-1).pk for _ in range(3)]
    spent = _left_running(kind, attempts=3, expires_in=-1).pk
    cancelled = _left_running(kind, attempts=1, expires_in=-1, cancel_requested=True).pk
    outcomes = _at_once(4, lambda _: kind.reclaim())
    merged = {key: sorted(pk for outcome in outcomes for pk in outcome[key]) for key in outcomes[0]}
    assert merged == {"retried": retried, "failed": [spent], "cancelled": [cancelled]}
    assert sorted(sent) == retried  # each sent to Celery once
    assert set(kind.model.objects.filter(pk__in=retried).values_list("status", "attempts")) == {("queued", 1)}


@pytest.mark.django_db(transaction=True)
def test_several_redelivered_messages_at_once_take_a_run_over_once(kind):
    run = _left_running(kind, attempts=1, expires_in=-1)
    outcomes = _at_once(4, lambda i: leases.claim(kind.model, run.pk, worker=f"w{i}@host:{i}", event="run")[0])
    assert sorted(outcomes) == ["skipped", "skipped", "skipped", "taken over"]
    after = kind.model.objects.get(pk=run.pk)
    winner = outcomes.index("taken over")
    assert after.status == "running" and after.attempts == 2 and after.worker == f"w{winner}@host:{winner}"
    assert kind.reclaim() == {"retried": [], "failed": [], "cancelled": []}  # its lease is fresh: nothing to do
