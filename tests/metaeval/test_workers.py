"""Real Celery workers (separate processes, the Redis broker at 127.0.0.1:6379, the test database): a worker killed
mid-run (kill -9) leaves a run that another worker completes within the lease; SIGTERM lets the running run finish
before the worker exits; the concurrency cap holds; two workers (two "machines": separate cache folders, one
PostgreSQL cache) share a sharded run and score it as one process does. Each test has its own queue and cache."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings as django_settings
from django.db import connection
from django.db.models import Count

from metaeval import services
from metaeval.core.pipeline import RunOptions
from metaeval.models import MetaevalRun, RunShard
from tests.conftest import build_dataset

pytestmark = pytest.mark.django_db(transaction=True)
REDIS = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
LEASE = 3.0


def _test_database_url() -> str:
    sd = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{sd['NAME']}"
    password = f":{sd['PASSWORD']}" if sd.get("PASSWORD") else ""
    return f"postgres://{sd['USER']}{password}@{sd['HOST'] or '127.0.0.1'}:{sd['PORT'] or 5432}/{sd['NAME']}"


class Workers:
    """Starts harness workers on one queue and sends runs to it; stops whatever is left at the end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.queue = f"test-{uuid.uuid4().hex[:10]}"
        self.client = Celery(broker=REDIS, set_as_current=False)  # the project's app stays the current one
        self.processes: list[subprocess.Popen] = []
        self.env = {
            **os.environ, "DATABASE_URL": _test_database_url(), "SECRET_KEY": "worker-test-" + "s" * 40,
            "CELERY_BROKER_URL": REDIS, "CELERY_EAGER": "0", "CELERY_QUEUE": self.queue,
            "METAEVAL_RUN_LEASE_SECONDS": str(LEASE), "METAEVAL_CACHE_DIR": str(tmp / "cache"),
            "LOG_LEVEL": "WARNING", "NLTK_DATA": os.environ.get(
                "NLTK_DATA", str(Path(django_settings.BASE_DIR) / ".venv" / "nltk_data")),
        }
        self.env.pop("DJANGO_SETTINGS_MODULE", None)

    def start(
        self, name: str, *, slow: float = 0.0, concurrency: int = 1, beat: bool = False, env: dict | None = None
    ) -> subprocess.Popen:
        args = [sys.executable, "-m", "tests.metaeval.worker_harness", "-n", f"{name}@%h",
                "--concurrency", str(concurrency), "-Q", self.queue]
        if beat:
            args += ["-B", "-s", str(self.tmp / f"beat-{name}")]
        log = open(self.tmp / f"{name}.log", "wb")
        process = subprocess.Popen(args, env={**self.env, "HARNESS_SLOW_SECONDS": str(slow), **(env or {})},
                                   cwd=django_settings.BASE_DIR, stdout=log, stderr=log, start_new_session=True)
        self.processes.append(process)
        return process

    def send(self, run: MetaevalRun) -> None:
        self.client.send_task("metaeval.execute_run", args=[run.pk], queue=self.queue)

    def wait_ready(self, name: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if b" ready." in (self.tmp / f"{name}.log").read_bytes():
                return
            time.sleep(0.2)
        pytest.fail(f"worker {name} never became ready:\n{self.log(name)}")

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text(errors="replace")[-3000:]

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        with self.client.connection_for_write() as conn:
            conn.default_channel.queue_purge(self.queue)
        self.client.close()


@pytest.fixture
def workers(tmp_path):
    pool = Workers(tmp_path)
    try:
        with pool.client.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as exc:  # the machine's Redis is part of the test environment (.ci/run starts it)
        pytest.fail(f"Redis at {REDIS} does not answer ({exc}); start it (see README: Background work)")
    yield pool
    pool.close()


def _run(name: str) -> MetaevalRun:
    dataset = build_dataset(name=name, docs=2, readers=3, systems=["SysnameA", "SysnameB"])
    return services.run_enqueue(dataset=dataset, options=RunOptions(measures=["rouge_l", "jsd"], workers=1))


def _wait(run: MetaevalRun, until, timeout: float, what: str, workers: Workers, names=("a", "b")) -> MetaevalRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if until(run):
            return run
        time.sleep(0.2)
    logs = "\n".join(f"--- {name}:\n{workers.log(name)}" for name in names if (workers.tmp / f"{name}.log").exists())
    pytest.fail(f"run {run.pk} never {what} (status {run.status}, worker {run.worker!r}, error {run.error!r})\n{logs}")


def test_a_run_whose_worker_is_killed_completes_on_another_worker(workers):
    run = _run("killed")
    a = workers.start("a", slow=60)
    workers.send(run)
    _wait(run, lambda r: r.status == "running" and r.worker.startswith("a@"), 60, "started on worker a", workers)
    os.killpg(a.pid, signal.SIGKILL)  # the whole worker, pool children included: no goodbye, no ack
    a.wait(timeout=30)
    killed_at = time.monotonic()
    workers.start("b", beat=True)  # beat reclaims runs whose lease ran out
    done = _wait(run, lambda r: r.status == "done", 90, "finished on worker b", workers)
    assert done.worker.startswith("b@") and done.attempts == 2 and done.error == ""
    assert time.monotonic() - killed_at < 60  # the lease (3 s) and beat, not Redis' visibility timeout (1 h)
    direct = services.run_execute(dataset=done.dataset, options=RunOptions(measures=["rouge_l", "jsd"], workers=1))
    assert done.scores == direct.scores  # the retried run's numbers are the ones of an undisturbed run


def test_sigterm_lets_the_running_run_finish_then_the_worker_exits(workers):
    run = _run("sigterm")
    a = workers.start("a", slow=4)
    workers.send(run)
    _wait(run, lambda r: r.status == "running", 60, "started", workers, names=("a",))
    a.send_signal(signal.SIGTERM)  # warm shutdown: finish what runs, take nothing new
    assert a.wait(timeout=90) == 0
    run.refresh_from_db()
    assert run.status == "done" and run.attempts == 1, (run.status, run.error, workers.log("a"))


def test_a_worker_runs_no_more_runs_at_once_than_its_concurrency(workers):
    runs = [_run(f"cap{i}") for i in range(3)]
    workers.start("a", slow=1.5, concurrency=1)
    for run in runs:
        workers.send(run)
    for run in runs:
        _wait(run, lambda r: r.status == "done", 120, "finished", workers, names=("a",))
    spans = sorted((run.started_at, run.finished_at) for run in runs)
    assert all(earlier[1] <= later[0] for earlier, later in zip(spans, spans[1:], strict=False)), spans


def test_two_workers_share_a_sharded_run_and_score_it_exactly_as_one_process(workers, pg_cache_url, tmp_path):
    dataset = build_dataset(name="shared", docs=4, readers=4, systems=["SysnameA", "SysnameB", "SysnameC"])
    options = RunOptions(measures=["rouge_l", "bleu4"], workers=1)
    run = services.run_enqueue(dataset=dataset, options=options)
    shared = {"METAEVAL_SHARD_PAIRS": "7", "METAEVAL_CACHE_URL": pg_cache_url, "HARNESS_SLOW_SHARD_SECONDS": "0.3"}
    for name in ("a", "b"):  # two machines: each its own cache folder (unused), one PostgreSQL cache
        workers.start(name, env={**shared, "METAEVAL_CACHE_DIR": str(tmp_path / f"cache-{name}")})
    for name in ("a", "b"):
        workers.wait_ready(name)
    workers.send(run)
    done = _wait(run, lambda r: r.status in ("done", "failed"), 180, "finished", workers)
    assert done.status == "done", done.error
    shards = RunShard.objects.filter(run=done)
    by_worker = {worker.split("@")[0]: count for worker, count in
                 shards.values_list("worker").annotate(count=Count("pk")).values_list("worker", "count")}
    assert set(by_worker) == {"a", "b"} and shards.exclude(status="done").count() == 0, by_worker
    assert set(shards.values_list("cache", flat=True)) == {f"postgresql:{pg_cache_url}"}
    single = services.run_execute(dataset=dataset, options=options)  # one process, no shards, no cache
    assert done.scores == single.scores
