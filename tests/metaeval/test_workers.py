"""Real Celery workers (separate processes, the Redis broker at 127.0.0.1:6379, the test database): a worker killed
mid-run (kill -9) leaves a run that another worker completes within the lease, with beat and without (every
worker reclaims on its own, scoring and LLM judge runs); a worker started as `make run` starts it leaves nothing
running when its main process is killed; SIGTERM lets the running run finish
before the worker exits; the concurrency cap holds; two workers (two "machines": separate cache folders, one
PostgreSQL cache) share a sharded run and score it as one process does. Each test has its own queue and cache."""
from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings as django_settings
from django.db import connection
from django.db.models import Count
from django.utils import timezone

from metaeval import services
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun, RunShard
from survey.models import JudgeRun
from tests.conftest import build_dataset
from tests.survey.test_preference import preference_study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.heavy]
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
        self, name: str, *, slow: float = 0.0, concurrency: int = 1, beat: bool = False, env: dict | None = None,
        options: Sequence[str] = (),
    ) -> subprocess.Popen:
        args = [sys.executable, "-m", "tests.metaeval.worker_harness", "-n", f"{name}@%h",
                "--concurrency", str(concurrency), "-Q", self.queue, *options]
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
        pytest.fail(f"Redis at {REDIS} does not answer ({exc}); start it (see docs/guide/workers.md)")
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


def test_without_beat_a_run_whose_worker_is_killed_ends_within_two_leases(workers):
    """Issue 28: plain workers, no beat. Worker b starts while worker a holds the run, so b's start-up reclaim finds
    the lease valid; a is then killed (kill -9) and the broker would redeliver a's message only after its visibility
    timeout (an hour). b's own reclaimer, every half lease, gives the run back once the lease runs out."""
    run = _run("nobeat")
    a = workers.start("a", slow=60)
    workers.send(run)
    _wait(run, lambda r: r.status == "running" and r.worker.startswith("a@"), 60, "started on worker a", workers)
    workers.start("b")  # no beat anywhere
    workers.wait_ready("b")
    run.refresh_from_db()
    assert run.status == "running" and run.worker.startswith("a@") and run.attempts == 1  # b's start left it alone
    os.killpg(a.pid, signal.SIGKILL)
    a.wait(timeout=30)
    killed_at = timezone.now()
    done = _wait(run, lambda r: r.status in ("done", "failed"), 2 * LEASE + 60, "ended", workers)
    assert done.status == "done" and done.worker.startswith("b@") and done.attempts == 2, done.error
    # the bound: b took the run back within two leases of the kill (then scored it), not after an hour
    assert (done.started_at - killed_at).total_seconds() < 2 * LEASE
    direct = services.run_execute(dataset=done.dataset, options=RunOptions(measures=["rouge_l", "jsd"], workers=1))
    assert done.scores == direct.scores


def test_without_beat_judge_runs_left_running_by_a_dead_worker_end_with_a_message(workers):
    """The same for LLM judge runs: rows a vanished worker left running under a lease that is valid when worker b is
    ready, one without attempts left, one whose cancel was requested; b's reclaimer ends them within two leases, the
    message naming the dead worker and its last heartbeat (not the lease's expiry)."""
    study = preference_study(slug="judged")
    workers.start("b")
    workers.wait_ready("b")
    beat = timezone.now()

    def left_running(**fields) -> JudgeRun:
        return JudgeRun.objects.create(
            study=study, kind="openai", name="gone", criteria=["quality"], runs=2, status="running",
            worker="a@gone:1", started_at=beat, lease_expires_at=beat + timedelta(seconds=LEASE), **fields)

    spent, cancelled = left_running(attempts=3), left_running(attempts=1, cancel_requested=True)
    for row, status in ((spent, "failed"), (cancelled, "cancelled")):
        ended = _wait(row, lambda r, status=status: r.status == status, 2 * LEASE + 60, status, workers,
                      names=("b",))
        assert (ended.finished_at - beat).total_seconds() < 2 * LEASE
        assert f"its worker (a@gone:1) stopped answering (no heartbeat since {beat:%Y-%m-%d %H:%M:%S} UTC)" in \
            ended.error, ended.error
    assert "tried 3 times, the limit (METAEVAL_RUN_ATTEMPTS)" in JudgeRun.objects.get(pk=spent.pk).error


def _make_run_worker_options(tmp: Path) -> list[str]:
    """The options `make run` starts its Celery worker with (the Makefile's ``run`` recipe), with any file path
    moved under ``tmp``, less its log level (the harness logs INFO, where the worker says it is ready)."""
    makefile = (Path(django_settings.BASE_DIR) / "Makefile").read_text()
    recipe = makefile.split("\nrun: demo\n", 1)[1].split("\n\n", 1)[0].replace("\\\n", " ")
    options = shlex.split(re.search(r"celery -A config worker(.*?)&", recipe).group(1))
    return [str(tmp / Path(o).name) if "/" in o else o for o in options if not o.startswith("--loglevel")]


def _processes_of_session(session: int) -> list[str]:
    """The live (not zombie) processes whose session is ``session``, as ``pid cmdline``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == session and fields[0] != "Z":
            found.append(f"{entry.name} {cmdline[:120]}")
    return found


def test_a_worker_started_as_make_run_does_leaves_nothing_running_when_killed(workers):
    """Issue 28: kill -9 of the main process of a worker started with -B left its beat running as an orphan that
    kept queueing reclaim messages. `make run`'s worker (its options read from the Makefile) reclaims in a thread of
    its main process, which dies with it; its pool children exit too."""
    worker = workers.start("a", options=_make_run_worker_options(workers.tmp))
    workers.wait_ready("a")
    assert len(_processes_of_session(worker.pid)) >= 2  # the main process and its pool child
    os.kill(worker.pid, signal.SIGKILL)  # the main process only, as the issue did
    worker.wait(timeout=30)
    deadline = time.monotonic() + 30
    while (left := _processes_of_session(worker.pid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], left


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
