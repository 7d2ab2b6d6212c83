"""metaeval.sharding: a run's distances split into shards that helpers and the run's own worker compute into the
shared cache; the scores equal an unsharded run's exactly. Helpers here run in this process (Celery is eager under
tests); real worker processes on separate cache folders sharing a PostgreSQL cache: test_workers.py."""
from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from metaeval import services, sharding
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun, RunShard
from tests.conftest import build_dataset

pytestmark = pytest.mark.django_db
OPTIONS = RunOptions(measures=["rouge_l", "bleu4"], workers=1)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch) -> Path:
    """The run and its helpers share one distance cache under tmp_path."""
    folder = tmp_path / "metaeval-cache"
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(folder))
    monkeypatch.delenv("METAEVAL_CACHE_URL", raising=False)
    return folder


@pytest.fixture
def dataset():
    return build_dataset(name="sharded", docs=4, readers=4, systems=["SysA", "SysB", "SysC"])


def process(dataset, settings, shard_pairs: int, **kwargs) -> MetaevalRun:
    settings.METAEVAL_SHARD_PAIRS = shard_pairs
    run = services.run_enqueue(dataset=dataset, options=OPTIONS)
    return services.run_process(run.pk, worker="coordinator", **kwargs)


def distance_stats(run: MetaevalRun) -> dict[str, dict]:
    return {stat["measure"]: stat for stat in run.distances}


def test_a_sharded_run_scores_exactly_as_an_unsharded_one(dataset, settings, tmp_path):
    single = process(dataset, settings, 0, cache_dir=tmp_path / "single")
    assert single.status == "done" and not RunShard.objects.filter(run=single).exists()
    sharded = process(dataset, settings, 7, cache_dir=tmp_path / "metaeval-cache")
    assert sharded.status == "done", sharded.error
    assert sharded.scores == single.scores  # every stored float, bit for bit
    shards = RunShard.objects.filter(run=sharded)
    pairs = distance_stats(single)["rouge_l"]["pairs"]
    assert shards.filter(measure="rouge_l").count() == -(-pairs // 7) >= 2
    assert set(shards.values_list("status", flat=True)) == {"done"}
    # eager Celery: the helpers ran inside the coordinator's first dispatch and took every shard
    helpers = set(shards.values_list("worker", flat=True))
    assert len(helpers) == 1 and "coordinator" not in helpers and helpers.pop().endswith(f":{os.getpid()}")
    stats = distance_stats(sharded)
    for measure in ("rouge_l", "bleu4"):
        covered = sorted(shards.filter(measure=measure).values_list("start", "stop"))
        assert covered[0][0] == 0 and covered[-1][1] == pairs
        assert all(a[1] == b[0] for a, b in zip(covered, covered[1:], strict=False))  # no gap, no overlap
        assert stats[measure]["cached"] == pairs and stats[measure]["computed"] == 0
        assert stats[measure]["extra"]["shards"] == len(covered) and stats[measure]["extra"]["shard_computed"] == pairs
    assert "shards on 1 workers" in " ".join(sharded.progress["messages"])


def test_with_no_helper_the_run_computes_every_shard_itself(dataset, settings, monkeypatch):
    sent: list[tuple[int, str]] = []
    monkeypatch.setattr(sharding, "_send_helper", lambda run_id, measure: sent.append((run_id, measure)))
    run = process(dataset, settings, 7)
    assert run.status == "done", run.error
    assert sent and {measure for _, measure in sent} == {"rouge_l", "bleu4"}
    assert set(RunShard.objects.filter(run=run).values_list("worker", flat=True)) == {"coordinator"}


def test_a_broker_that_does_not_answer_leaves_the_run_to_its_own_worker(dataset, settings, monkeypatch):
    def broken(run_id: int, measure: str) -> None:
        raise ConnectionError("broker down")

    monkeypatch.setattr(sharding, "_send_helper", broken)
    run = process(dataset, settings, 7)
    assert run.status == "done" and RunShard.objects.filter(run=run, status="done").count() >= 4


def test_a_shard_whose_helper_vanished_is_computed_by_the_run(dataset, settings, monkeypatch):
    """A helper claims a shard and dies (its lease runs out): the run takes the shard back and finishes."""

    def ghost(run_id: int, measure: str) -> None:
        shard = sharding.shard_claim(run_id, measure, worker="ghost", cache="nowhere")
        assert shard is not None
        RunShard.objects.filter(pk=shard.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    monkeypatch.setattr(sharding, "_send_helper", ghost)
    settings.METAEVAL_SHARD_HELPERS = 1
    run = process(dataset, settings, 7)
    assert run.status == "done", run.error
    shards = RunShard.objects.filter(run=run)
    assert set(shards.values_list("worker", flat=True)) == {"coordinator"}
    assert sorted(shards.filter(attempts=2).values_list("index", flat=True)) == [0, 0]  # one per measure


def test_a_helper_verifies_the_pairs_it_rebuilt(dataset, settings):
    settings.METAEVAL_SHARD_PAIRS = 7
    run = services.run_enqueue(dataset=dataset, options=OPTIONS)
    MetaevalRun.objects.filter(pk=run.pk).update(status="running", worker="coordinator")
    RunShard.objects.create(run=run, measure="rouge_l", index=0, start=0, stop=7, checksum="0" * 32)
    assert sharding.shards_process(run.pk, "rouge_l", worker="helper") == "data differs"
    shard = RunShard.objects.get(run=run)
    assert (shard.status, shard.worker) == ("pending", "")  # left for the run's own worker


def test_a_helper_of_a_finished_run_or_with_nothing_pending_does_nothing(dataset, settings):
    run = process(dataset, settings, 7)
    assert sharding.shards_process(run.pk, "rouge_l", worker="late") == "skipped"
    assert sharding.shards_process(10**9, "rouge_l", worker="late") == "skipped"


def test_claims_give_each_shard_to_one_worker(dataset):
    run = services.run_enqueue(dataset=dataset, options=OPTIONS)
    for index in range(2):
        RunShard.objects.create(run=run, measure="m", index=index, start=index, stop=index + 1, checksum="x")
    first = sharding.shard_claim(run.pk, "m", worker="a", cache="c")
    second = sharding.shard_claim(run.pk, "m", worker="b", cache="c")
    assert first is not None and second is not None and first.index == 0 and second.index == 1
    assert sharding.shard_claim(run.pk, "m", worker="c", cache="c") is None
    assert sharding.shards_release_stale(run.pk, "m") == 0
    RunShard.objects.filter(pk=first.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert sharding.shards_release_stale(run.pk, "m") == 1
    again = sharding.shard_claim(run.pk, "m", worker="c", cache="c")
    assert again is not None and again.pk == first.pk and again.attempts == 2
