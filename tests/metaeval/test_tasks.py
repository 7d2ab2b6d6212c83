"""Queued runs: RunOptions.from_dict, run_enqueue / run_launch (the Celery task, eager under tests) / run_process,
progress on the row, claims that never double up, failures that keep the parameters, excluded raters, leases,
reclaiming the runs of vanished workers, cancelling. Real worker processes: test_workers.py."""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metaeval import selectors, services
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun
from survey.models import Summary
from tests.conftest import build_dataset, build_study, complete_questionnaires

pytestmark = pytest.mark.django_db

LEXICAL_OPTIONS = {"measures": ["rouge_l", "jsd"], "aux": ["rouge_l"], "params": Params(beta=1.7), "workers": 1}


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch) -> Path:
    """Runs use a distance cache of their own under tmp_path, never the user's."""
    folder = tmp_path / "metaeval-cache"
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(folder))
    return folder


def rate(study, pattern: int, participants: int = 1) -> list[str]:
    """``participants`` raters each complete every questionnaire they can claim, with ratings that vary by pair
    (1..6, shifted by ``pattern``); returns their rater ids."""

    def answers(assignment, index: int) -> dict[str, str]:
        return {
            entry["key"]: str(1 + (number * 7 + pattern * 3 + assignment.questionnaire.position) % 6)
            for number, entry in enumerate(assignment.presentation)
        }

    return [selectors.rater_id(p.pk) for p in complete_questionnaires(study, answers, participants)]


def lexical(**changes) -> RunOptions:
    return RunOptions(**{**LEXICAL_OPTIONS, **changes})


# RunOptions.from_dict -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "options",
    [
        RunOptions(measures=["rouge_l"], aux=[]),
        RunOptions(
            measures=["rouge_l", "jsd", "infolm"], params=Params(alpha=2.5, beta=1.7, gamma=3.0, delta=0.5,
                                                                 pacc_alpha=0.25, pacc_beta=2.0, simplified=True),
            compat=True, missing="drop", aux=["rouge_l", "bleu4"], systems=["A", "B"], preprocess="authors",
            workers=3, measure_options={"infolm": {"model": "/models/x", "temperature": 0.5}}, skip_unavailable=True,
        ),
        RunOptions(measures=[], aux=["jsd"], systems=[], workers=None),
    ],
)
def test_options_round_trip(options):
    """as_dict holds every field (workers and skip_unavailable too): a queued run is rebuilt exactly."""
    assert RunOptions.from_dict(options.as_dict()) == options
    assert RunOptions.from_dict(json.loads(json.dumps(options.as_dict()))) == options  # as stored in a JSONField


def test_options_from_dict_defaults_and_bad_input():
    assert RunOptions.from_dict({}).as_dict() == RunOptions().as_dict()
    with pytest.raises(ValueError, match="not a RunOptions dictionary"):
        RunOptions.from_dict({"beta": "steep"})
    with pytest.raises(ValueError, match="not a RunOptions dictionary"):
        RunOptions.from_dict({"measure_options": ["infolm"]})


# enqueue, launch, process ---------------------------------------------------------------------------------------

def test_enqueue_stores_a_queued_run(study, django_user_model):
    user = django_user_model.objects.create_user("r")
    options = lexical(skip_unavailable=True)
    run = services.run_enqueue(dataset=study.dataset, study=study, options=options, user=user, seed=7,
                               exclude_raters=["P3", "P3"])
    stored = MetaevalRun.objects.get(pk=run.pk)
    assert (stored.status, stored.kind, stored.seed, stored.created_by) == ("queued", "scores", 7, user)
    assert stored.excluded_raters == ["P3"] and stored.started_at is None and stored.finished_at is None
    assert stored.parameters == {**options.as_dict(), "skip_unavailable": True, "workers": 1}
    assert RunOptions.from_dict(stored.parameters) == options


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"options": RunOptions(aux=["rouge_l"])}, "need a study"),
        ({"options": RunOptions(), "exclude_raters": ["P1"]}, "need a study"),
        ({"options": RunOptions(measures=["rouge_l", "nope"])}, "unknown measure 'nope'"),
        ({"options": RunOptions(measures=[])}, "nothing to score"),
    ],
)
def test_enqueue_refuses(dataset, kwargs, message):
    with pytest.raises(ValueError, match=message):
        services.run_enqueue(dataset=dataset, **kwargs)
    assert not MetaevalRun.objects.exists()


def test_enqueue_refuses_a_study_of_another_dataset(study):
    other = build_dataset(name="other", docs=1)
    with pytest.raises(ValueError, match='rates dataset "tiny", not "other"'):
        services.run_enqueue(dataset=other, study=study, options=RunOptions())


def test_processed_run_equals_run_execute(study, settings):
    rate(study, 1, participants=2)
    direct = services.run_execute(dataset=study.dataset, study=study, options=lexical())
    run = services.run_enqueue(dataset=study.dataset, study=study, options=lexical())
    services.run_launch(run)
    run.refresh_from_db()
    assert run.status == "done" and run.error == ""
    assert run.started_at is not None and run.finished_at >= run.started_at
    assert run.scores == direct.scores and run.hj_counts == direct.hj_counts
    assert run.data_hash == direct.data_hash and run.versions == direct.versions
    assert run.parameters == {**direct.parameters, "skip_unavailable": False, "workers": 1}
    assert run.progress["step"] == "done" and run.progress["done"] == run.progress["total"] == 1 + 2 + 1
    assert any("computed" in message for message in run.progress["messages"])


def test_progress_is_written_while_running_and_throttled(study, monkeypatch):
    rate(study, 2)
    run = services.run_enqueue(dataset=study.dataset, study=study, options=lexical())
    seen = []

    def watch(message: str) -> None:  # called before the recorder notes the message: what a poller sees now
        stored = MetaevalRun.objects.get(pk=run.pk)
        seen.append((stored.status, stored.progress["done"], stored.progress["total"], stored.progress["step"]))

    monkeypatch.setattr(services, "PROGRESS_INTERVAL", 0.0)
    services.run_process(run.pk, progress=watch)
    assert {status for status, *_ in seen} == {"running"} and {total for _, _, total, _ in seen} == {4}
    done = [d for _, d, _, _ in seen]
    assert done == sorted(done) and done[0] == 1 and done[-1] == 3  # data loaded first; the HJ step still open
    assert selectors.run_progress(MetaevalRun.objects.get(pk=run.pk))["percent"] == 100.0

    # with the default interval, a quick run writes its progress only a few times, however many messages
    monkeypatch.setattr(services, "PROGRESS_INTERVAL", 60.0)
    again = services.run_enqueue(dataset=study.dataset, study=study, options=lexical())
    with CaptureQueriesContext(connection) as queries:
        services.run_process(again.pk)
    writes = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE") and '"progress"' in q["sql"]]
    assert len(writes) == 2  # the first state, then the final save
    assert len(MetaevalRun.objects.get(pk=again.pk).progress["messages"]) >= 4


def test_claimed_run_is_not_processed_again(dataset):
    run = services.run_enqueue(dataset=dataset, options=lexical(aux=[], systems=["SysnameA"]))
    assert services.run_process(run.pk).status == "done"
    with pytest.raises(services.RunNotQueued, match=f"run {run.pk} is done, not queued"):
        services.run_process(run.pk)
    with pytest.raises(MetaevalRun.DoesNotExist):
        services.run_process(run.pk + 1000)


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_claims_only_one_processes():
    dataset = build_dataset(name="conc", docs=2, readers=3, systems=["SysnameA", "SysnameB"])
    run = services.run_enqueue(dataset=dataset, options=lexical(aux=[]))
    barrier = threading.Barrier(2)
    outcomes: list[object] = []
    lock = threading.Lock()

    def worker() -> None:
        try:
            barrier.wait(timeout=30)
            result: object = services.run_process(run.pk)
        except BaseException as exc:  # collected for the main thread
            result = exc
        finally:
            connections.close_all()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    processed = [o for o in outcomes if isinstance(o, MetaevalRun)]
    refused = [o for o in outcomes if isinstance(o, services.RunNotQueued)]
    assert len(processed) == 1 and len(refused) == 1, outcomes
    stored = MetaevalRun.objects.get(pk=run.pk)
    assert stored.status == "done" and len(stored.scores) == 2 * 2


def test_failing_run_is_stored_with_its_error_and_parameters(dataset):
    Summary.objects.filter(system__name="SysnameB", reader__external_id="R1", document__external_id="N2").delete()
    options = lexical(aux=[], missing="error")
    run = services.run_enqueue(dataset=dataset, options=options)
    queued_parameters = MetaevalRun.objects.get(pk=run.pk).parameters
    result = services.run_process(run.pk)
    stored = MetaevalRun.objects.get(pk=run.pk)
    assert result.status == stored.status == "failed"
    assert 'document "N2" has no "SysnameB" summary for reader "R1"' in stored.error
    assert stored.parameters == queued_parameters and RunOptions.from_dict(stored.parameters) == options
    assert stored.finished_at is not None and stored.scores == [] and stored.data_hash
    assert stored.progress["step"].startswith("failed during")
    state = selectors.run_progress(stored)
    assert state["finished"] and state["error"] == stored.error


def test_unreadable_parameters_fail_the_run(dataset):
    run = services.run_enqueue(dataset=dataset, options=lexical(aux=[]))
    MetaevalRun.objects.filter(pk=run.pk).update(parameters={"measures": ["rouge_l"], "beta": "steep"})
    stored = services.run_process(run.pk)
    assert stored.status == "failed" and "not a RunOptions dictionary" in stored.error
    assert MetaevalRun.objects.get(pk=run.pk).parameters == {"measures": ["rouge_l"], "beta": "steep"}


def test_excluded_raters_change_hj_and_are_recorded(study):
    first, second = rate(study, 1)[0], rate(study, 4)[0]
    options = lexical(measures=["rouge_l"])
    everyone = services.run_enqueue(dataset=study.dataset, study=study, options=options)
    without = services.run_enqueue(dataset=study.dataset, study=study, options=options, exclude_raters=[first])
    everyone, without = services.run_process(everyone.pk), services.run_process(without.pk)
    assert everyone.status == without.status == "done"
    assert without.excluded_raters == [first] and everyone.excluded_raters == []
    hj = {r["system"]: r for r in everyone.scores if r["measure"] == "hj:rouge_l"}
    hj_without = {r["system"]: r for r in without.scores if r["measure"] == "hj:rouge_l"}
    assert set(hj) == set(hj_without) and hj != hj_without
    automatic = [r for r in everyone.scores if r["measure"] == "rouge_l"]
    assert automatic == [r for r in without.scores if r["measure"] == "rouge_l"]  # only the HJ rows depend on it
    corpus = selectors.corpus_from_dataset(dataset=study.dataset)
    only_second = selectors.ratings_for_study(study=study, exclude_raters=[first])
    assert without.data_hash == selectors.data_hash(corpus=corpus, ratings=only_second) != everyone.data_hash
    assert {row.rater for row in only_second.rows} == {second}


def test_launch_sends_the_task_and_an_unreachable_broker_fails_the_run(dataset, monkeypatch):
    from kombu.exceptions import OperationalError

    from metaeval import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.execute_run, "delay", lambda run_id: sent.append(run_id))
    run = services.run_enqueue(dataset=dataset, options=lexical(aux=[]))
    services.run_launch(run)
    assert sent == [run.pk] and MetaevalRun.objects.get(pk=run.pk).status == "queued"  # a worker takes it

    def broken(run_id: int) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.execute_run, "delay", broken)
    services.run_launch(run)
    stored = MetaevalRun.objects.get(pk=run.pk)
    assert stored.status == "failed" and stored.error.startswith("could not queue the run: the task broker did not")


def test_the_task_skips_a_run_that_is_not_queued(dataset):
    from metaeval import tasks

    run = services.run_enqueue(dataset=dataset, options=lexical(aux=[]))
    assert tasks.execute_run.delay(run.pk).get() == "done"
    assert tasks.execute_run.delay(run.pk).get() == "skipped"  # a redelivered message of a finished run
    assert tasks.execute_run.delay(999999).get() == "skipped"
    stored = MetaevalRun.objects.get(pk=run.pk)
    assert stored.attempts == 1 and stored.worker.endswith(f":{os.getpid()}") and stored.lease_expires_at is None


# leases, reclaiming, cancelling ---------------------------------------------------------------------------------

def _running(run: MetaevalRun, *, attempts: int, expired: bool = True, worker: str = "gone@host:1") -> MetaevalRun:
    lease = timezone.now() + timedelta(seconds=-5 if expired else 60)
    MetaevalRun.objects.filter(pk=run.pk).update(status="running", attempts=attempts, worker=worker,
                                                 lease_expires_at=lease, started_at=timezone.now())
    return MetaevalRun.objects.get(pk=run.pk)


def test_a_run_whose_lease_ran_out_is_retried_then_failed(dataset, settings, caplog):
    settings.METAEVAL_RUN_ATTEMPTS = 3
    retried = _running(services.run_enqueue(dataset=dataset, options=lexical(aux=[])), attempts=1)
    alive = _running(services.run_enqueue(dataset=dataset, options=lexical(aux=[])), attempts=1, expired=False)
    spent = _running(services.run_enqueue(dataset=dataset, options=lexical(aux=[])), attempts=3)
    with caplog.at_level(logging.WARNING, logger="metaeval.services"):
        outcome = services.runs_reclaim_stale()
    assert outcome == {"retried": [retried.pk], "failed": [spent.pk], "cancelled": []}
    again = MetaevalRun.objects.get(pk=retried.pk)
    assert again.status == "done" and again.attempts == 2  # sent again (eager here) and scored
    requeued = [r for r in caplog.records if getattr(r, "event", "") == "run.requeued"]
    assert [r.run for r in requeued] == [retried.pk]
    assert "its worker (gone@host:1) stopped answering" in requeued[0].getMessage()
    failed = MetaevalRun.objects.get(pk=spent.pk)
    assert failed.status == "failed" and "stopped answering" in failed.error and "tried 3 times" in failed.error
    assert MetaevalRun.objects.get(pk=alive.pk).status == "running"  # its worker is alive: left alone
    assert services.runs_reclaim_stale() == {"retried": [], "failed": [], "cancelled": []}


def test_cancel_a_queued_run_and_refuse_a_finished_one(dataset):
    run = services.run_enqueue(dataset=dataset, options=lexical(aux=[]))
    assert services.run_cancel(run).status == "cancelled"
    with pytest.raises(services.RunNotQueued):
        services.run_process(run.pk)
    with pytest.raises(ValueError, match="only a queued or running run can be cancelled"):
        services.run_cancel(run)


def _while_loading(dataset, settings, monkeypatch, happen) -> MetaevalRun:
    """A queued run whose data loading first does ``happen(run)``, then lasts longer than a heartbeat (lease 0.3 s)."""
    settings.METAEVAL_RUN_LEASE_SECONDS = 0.3
    run = services.run_enqueue(dataset=dataset, options=lexical(aux=[]))
    original = selectors.corpus_from_dataset

    def slow_load(**kwargs):
        happen(run)
        time.sleep(0.5)
        return original(**kwargs)

    monkeypatch.setattr(selectors, "corpus_from_dataset", slow_load)
    return run


@pytest.mark.django_db(transaction=True)
def test_a_running_run_stops_at_its_next_step_when_cancelled(dataset, settings, monkeypatch):
    """The worker's heartbeat sees the request; the next progress event ends the run as cancelled."""
    run = _while_loading(dataset, settings, monkeypatch,
                         lambda run: services.run_cancel(MetaevalRun.objects.get(pk=run.pk)))  # a click
    done = services.run_process(run.pk, worker="w@test:1")
    assert done.status == "cancelled" and done.error == "cancelled by a researcher while it ran"
    assert done.scores == [] and done.lease_expires_at is None


@pytest.mark.django_db(transaction=True)
def test_a_worker_whose_lease_was_taken_over_writes_nothing(dataset, settings, monkeypatch):
    run = _while_loading(dataset, settings, monkeypatch,  # reclaimed and claimed elsewhere meanwhile
                         lambda run: MetaevalRun.objects.filter(pk=run.pk).update(worker="other@host:2"))
    with pytest.raises(services.RunLeaseLost):
        services.run_process(run.pk, worker="w@test:1")
    stored = MetaevalRun.objects.get(pk=run.pk)
    assert stored.status == "running" and stored.worker == "other@host:2" and stored.scores == []


def test_run_execute_still_records_progress(study):
    rate(study, 3)
    run = services.run_execute(dataset=study.dataset, study=study, options=lexical())
    stored = MetaevalRun.objects.get(pk=run.pk)
    assert stored.status == "done" and stored.started_at is not None
    assert stored.progress["done"] == stored.progress["total"] == 4


@pytest.mark.django_db(transaction=True)
def test_a_command_line_run_holds_a_lease_so_a_killed_command_leaves_nothing_stuck(dataset, settings):
    """run_execute (manage.py metaeval_run) renews a lease as a worker does: a command that dies stops renewing it,
    and the reclaimer hands the run to Celery, which scores it."""
    settings.METAEVAL_RUN_LEASE_SECONDS = 0.3
    seen: list[tuple[str, str, bool]] = []

    def watch(event) -> None:
        row = MetaevalRun.objects.order_by("-pk").first()
        live = row.lease_expires_at is not None and row.lease_expires_at > timezone.now()
        seen.append((row.status, row.worker, live))
        time.sleep(0.15)  # long enough for the heartbeat (every 0.1 s) to have renewed the lease meanwhile

    run = services.run_execute(dataset=dataset, options=lexical(aux=[]), progress=watch)
    assert run.status == "done" and run.lease_expires_at is None and run.attempts == 1
    assert seen and all(status == "running" and "(command line)" in worker and live for status, worker, live in seen)
    assert f":{os.getpid()} (command line)" in run.worker

    class Killed(Exception):
        pass

    def die(event) -> None:
        raise Killed  # the command's process ends here: nothing renews the lease any more

    with pytest.raises(Killed):
        services.run_execute(dataset=dataset, options=lexical(aux=[]), progress=die)
    dead = MetaevalRun.objects.order_by("-pk").first()
    # as kill -9 leaves it: running, its lease no longer renewed
    stale = timezone.now() - timedelta(seconds=1)
    MetaevalRun.objects.filter(pk=dead.pk).update(status="running", error="", lease_expires_at=stale)
    assert services.runs_reclaim_stale()["retried"] == [dead.pk]
    dead.refresh_from_db()
    assert dead.status == "done" and dead.attempts == 2 and dead.scores == run.scores


def test_exclusion_reads_only_the_studys_ratings(dataset):
    """Two studies on one dataset: a run of one reads only its ratings (guards the exclusion filter's scope)."""
    rated, other = build_study(dataset, slug="rated"), build_study(dataset, slug="other")
    rate(rated, 2)
    raters_other = rate(other, 5)
    assert set(selectors.study_raters(study=rated)).isdisjoint(raters_other)
    excluded = selectors.ratings_for_study(study=rated, exclude_raters=raters_other)
    assert excluded.rows == selectors.ratings_for_study(study=rated).rows


def test_runs_log_structured_events(study, settings, caplog):
    """queued, claimed and done are INFO records with fields (JSON lines through config.logformat)."""
    from config.logformat import JsonLinesFormatter

    rate(study, 1, participants=2)
    with caplog.at_level(logging.INFO, logger="metaeval.services"):
        run = services.run_enqueue(dataset=study.dataset, study=study, options=lexical())
        services.run_launch(run)
    events = [record for record in caplog.records if getattr(record, "event", "").startswith("run.")]
    assert [record.event for record in events] == ["run.queued", "run.claimed", "run.done"]
    assert all(record.run == run.pk for record in events)
    line = json.loads(JsonLinesFormatter().format(events[-1]))
    assert line["event"] == "run.done" and line["run"] == run.pk and line["level"] == "INFO"
    assert line["rows"] == len(MetaevalRun.objects.get(pk=run.pk).scores) and "seconds" in line
