"""Every worker's own reclaimer (metaeval.reclaimer): started when a worker is ready, it ends or requeues stale
scoring and LLM judge runs every half lease with no beat, survives a failing round, and stops with the worker;
`make` starts no beat. Real worker processes: test_workers.py."""
from __future__ import annotations

import logging
import re
import shlex
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import OperationalError
from django.utils import timezone

from metaeval import reclaimer, services
from metaeval import tasks as metaeval_tasks
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun
from survey import judge_runs
from survey.models import JudgeRun
from tests.conftest import build_dataset
from tests.survey.test_preference import preference_study

pytestmark = pytest.mark.django_db(transaction=True)


def _stale_scoring_run(**fields) -> MetaevalRun:
    dataset = build_dataset(name=f"reclaim-{MetaevalRun.objects.count()}", docs=2, readers=2,
                            systems=["SysnameA", "SysnameB"])
    run = services.run_enqueue(dataset=dataset, options=RunOptions(measures=["rouge_l"], workers=1))
    MetaevalRun.objects.filter(pk=run.pk).update(status="running", worker="a@gone:1", started_at=timezone.now(),
                                                 lease_expires_at=timezone.now() - timedelta(seconds=1), **fields)
    return run


def _stale_judge_run(**fields) -> JudgeRun:
    return JudgeRun.objects.create(
        study=preference_study(slug="reclaimed"), kind="openai", name="gone", criteria=["quality"], runs=2,
        status="running", worker="a@gone:1", started_at=timezone.now(),
        lease_expires_at=timezone.now() - timedelta(seconds=1), **fields)


def _until(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.05)


def test_the_interval_is_half_the_lease(settings):
    settings.METAEVAL_RUN_LEASE_SECONDS = 60
    assert reclaimer.reclaim_interval() == 30
    settings.METAEVAL_RUN_LEASE_SECONDS = 0.01
    assert reclaimer.reclaim_interval() == reclaimer.MIN_INTERVAL


def test_a_ready_worker_reclaims_both_kinds_every_half_lease_until_it_shuts_down(settings):
    """worker_ready starts the thread, worker_shutdown stops it; in between it keeps reclaiming, so a run that goes
    stale after the worker started is reclaimed too (the issue: only the start-up reclaim ran without beat)."""
    settings.METAEVAL_RUN_LEASE_SECONDS = 0.4  # a round every 0.2 s
    settings.METAEVAL_RUN_ATTEMPTS = 1
    metaeval_tasks._reclaim_while_the_worker_runs()
    thread = metaeval_tasks._reclaimer
    try:
        assert thread is not None and thread.alive and thread.interval == pytest.approx(0.2)
        _until(lambda: thread.rounds >= 1)
        scoring = _stale_scoring_run(attempts=1)  # stale after the first round: only a later round ends it
        judge = _stale_judge_run(attempts=1, cancel_requested=True)
        _until(lambda: MetaevalRun.objects.get(pk=scoring.pk).status == "failed"
               and JudgeRun.objects.get(pk=judge.pk).status == "cancelled")
        metaeval_tasks._reclaim_while_the_worker_runs()  # a second ready signal starts no second thread
        assert metaeval_tasks._reclaimer is thread
    finally:
        metaeval_tasks._stop_reclaiming()
    assert not thread.alive and metaeval_tasks._reclaimer is None
    rounds = thread.rounds
    later = _stale_scoring_run(attempts=1)
    time.sleep(1.0)  # five intervals
    assert thread.rounds == rounds and MetaevalRun.objects.get(pk=later.pk).status == "running"  # it stopped


def test_a_failing_reclaimer_does_not_stop_the_other_or_the_next_round(monkeypatch, caplog):
    judge = _stale_judge_run(attempts=3)

    def down(**_) -> dict:
        raise OperationalError("the database went away for a moment")

    monkeypatch.setattr(services, "runs_reclaim_stale", down)
    with caplog.at_level(logging.WARNING, logger="metaeval.reclaimer"):
        outcome = reclaimer.reclaim_all()
    assert outcome == {"judge_runs": {"retried": [], "failed": [judge.pk], "cancelled": []},
                       "import_jobs": {"retried": [], "failed": [], "cancelled": []}}
    assert "reclaiming stale runs failed" in caplog.text
    monkeypatch.undo()
    scoring = _stale_scoring_run(attempts=3)
    assert reclaimer.reclaim_all()["runs"]["failed"] == [scoring.pk]
    assert judge_runs.judge_runs_reclaim_stale() == {"retried": [], "failed": [], "cancelled": []}


def test_no_make_target_starts_celery_beat():
    """Issue 28: `make run` started its worker with -B, whose beat outlived a kill -9 of the worker. Workers
    reclaim on their own; a beat would only be a second, optional, reclaimer."""
    makefile = (Path(django_settings.BASE_DIR) / "Makefile").read_text().replace("\\\n", " ")
    commands = [line for line in makefile.splitlines() if re.search(r"\bcelery\b.*\b(worker|beat)\b", line)]
    assert any("worker" in line for line in commands)
    for line in commands:
        words = shlex.split(line.split("&")[0])
        assert "beat" not in words and not {"-B", "--beat"} & set(words), line
