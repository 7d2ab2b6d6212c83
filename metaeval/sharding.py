"""Runs sharded across workers: one run's distance work split into shards that any number of Celery workers, on any
number of machines, compute into the shared distance cache.

How a run is sharded (docs/guide/workers.md):

1. The worker that took the run (the *coordinator*, :class:`RunDistributor`) plans it as usual; for each measure
   whose missing distances are at least two shards (``METAEVAL_SHARD_PAIRS`` pairs each, default 50,000; 0 turns
   sharding off), it writes one :class:`~metaeval.models.RunShard` row per contiguous range ``start:stop`` of the
   measure's unique text pairs (plan order) and sends up to ``METAEVAL_SHARD_HELPERS`` tasks
   ``metaeval.compute_shards`` to Celery.
2. Every helper task (:func:`shards_process`) and the coordinator itself claim pending shards one at a time (a
   conditional UPDATE: exactly one worker gets each), compute them under a lease into the cache, and mark them
   done. A helper rebuilds the run's pairs from the database and checks each shard's ``checksum`` (the BLAKE2b of
   its pair digests) before computing. The coordinator never waits idle while shards are pending, so a run
   finishes even when no other worker is free; a shard whose worker vanished (lease run out) goes back to pending.
3. When every shard is done the run reads all its distances from the cache and scores as a single process does:
   the floats are the ones each worker's measure computed, stored and returned bit for bit, so the scores are
   identical to an unsharded run's. A helper writing to another cache (no shared ``METAEVAL_CACHE_URL``) costs
   only time: the coordinator computes what it cannot find.
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping, Sequence

from django.conf import settings
from django.db.models import Count, F, Sum
from django.utils import timezone

from metaeval import queue, selectors
from metaeval.core.measures.base import Measure
from metaeval.core.measures.cache import DistanceCache, open_cache, pair_digests
from metaeval.core.measures.distances import compute
from metaeval.core.perseval.pipeline import RunOptions, plan_run, prepare_measure
from metaeval.leases import Heartbeat, RunLease, lease_duration
from metaeval.models import MetaevalRun, RunShard

log = logging.getLogger(__name__)

TextPair = tuple[str, str]
#: seconds between the coordinator's looks at shards other workers hold
POLL_SECONDS = 0.25


class ShardMismatch(Exception):
    """The pairs this worker rebuilt are not the shard's (the data changed since the run planned it)."""


def shard_pairs() -> int:
    """Pairs per shard (``METAEVAL_SHARD_PAIRS``); 0 or less: runs are not sharded."""
    return int(getattr(settings, "METAEVAL_SHARD_PAIRS", 50_000))


def shard_checksum(digests: Sequence[bytes]) -> str:
    """BLAKE2b (16 bytes, hex) of a shard's pair digests, in order."""
    return hashlib.blake2b(b"".join(digests), digest_size=16).hexdigest()


class ShardLease(Heartbeat):
    """A worker's hold on a running shard, renewed by a heartbeat; :attr:`lost` when it went back to pending."""

    def __init__(self, shard: RunShard, worker: str) -> None:
        super().__init__(f"lease-shard-{shard.pk}")
        self.shard_id = shard.pk
        self.worker = worker

    def renew(self) -> None:
        row = RunShard.objects.filter(pk=self.shard_id, status=RunShard.Status.RUNNING, worker=self.worker)
        if not row.update(lease_expires_at=timezone.now() + lease_duration()):
            self.lost.set()


def shard_claim(run_id: int, measure: str, *, worker: str, cache: str) -> RunShard | None:
    """The first pending shard of the run's ``measure`` that this ``worker`` could take (a conditional UPDATE per
    candidate, so of two workers exactly one gets a shard), or None when none is pending."""
    pending = RunShard.objects.filter(run_id=run_id, measure=measure, status=RunShard.Status.PENDING)
    for pk in pending.order_by("index").values_list("pk", flat=True)[:50]:
        taken = RunShard.objects.filter(pk=pk, status=RunShard.Status.PENDING).update(
            status=RunShard.Status.RUNNING, worker=worker, cache=cache[:300],
            lease_expires_at=timezone.now() + lease_duration(), attempts=F("attempts") + 1,
        )
        if taken:
            return RunShard.objects.get(pk=pk)
    return None


def shards_release_stale(run_id: int, measure: str) -> int:
    """Shards whose worker stopped renewing the lease go back to pending; returns how many."""
    stale = RunShard.objects.filter(
        run_id=run_id, measure=measure, status=RunShard.Status.RUNNING, lease_expires_at__lt=timezone.now()
    )
    released = stale.update(status=RunShard.Status.PENDING, worker="", lease_expires_at=None)
    if released:
        log.warning("run %s %s: %s shard(s) of a vanished worker back to pending", run_id, measure, released)
    return released


def shard_compute(
    shard: RunShard,
    measure: Measure,
    pairs: Sequence[TextPair],
    digests: Sequence[bytes],
    *,
    cache: DistanceCache,
    worker: str,
    workers: int | None,
) -> bool:
    """Compute one claimed shard into ``cache`` under a :class:`ShardLease` and mark it done. Returns False when
    the lease was lost meanwhile (another worker has the shard; what this one stored is the same numbers). Raises
    :class:`ShardMismatch` (the shard released) when ``digests`` are not the shard's."""
    part = slice(shard.start, shard.stop)
    if shard.stop > len(digests) or shard_checksum(digests[part]) != shard.checksum:
        RunShard.objects.filter(pk=shard.pk, worker=worker).update(
            status=RunShard.Status.PENDING, worker="", lease_expires_at=None
        )
        raise ShardMismatch(f"run {shard.run_id} {shard.measure} shard {shard.index}: the pairs rebuilt here differ")
    with ShardLease(shard, worker) as lease:
        _, stat = compute(measure, pairs[part], cache=cache, workers=workers, digests=digests[part])
    if lease.lost.is_set():
        return False
    return bool(RunShard.objects.filter(pk=shard.pk, status=RunShard.Status.RUNNING, worker=worker).update(
        status=RunShard.Status.DONE, computed=stat.computed, seconds=round(stat.seconds, 3), lease_expires_at=None
    ))


class RunDistributor:
    """The coordinator's ``distribute`` hook (:data:`~metaeval.core.perseval.pipeline.Distribute`) for one run: shards a
    measure's missing distances, sends helpers, works through pending shards itself and returns when all are done,
    with the figures ``shards``, ``shard_workers`` and ``shard_computed`` for the measure's compute stats."""

    def __init__(
        self, run: MetaevalRun, *, cache: DistanceCache, worker: str, lease: RunLease | None = None
    ) -> None:
        self.run = run
        self.cache = cache
        self.worker = worker
        self.lease = lease
        self.workers = RunOptions.from_dict(run.parameters).workers

    def __call__(
        self, name: str, measure: Measure, pairs: Sequence[TextPair], digests: Sequence[bytes]
    ) -> Mapping[str, float] | None:
        size = shard_pairs()
        if size <= 0 or len(pairs) < 2 * size:
            return None
        missing = len(pairs)
        if self.cache.has_measure(measure.cache_key):
            missing = int((~self.cache.get(self.cache.keys(measure.cache_key, digests))[1]).sum())
        if missing < 2 * size:
            return None
        RunShard.objects.filter(run=self.run, measure=name).delete()  # an earlier attempt's shards
        bounds = list(range(0, len(pairs), size)) + [len(pairs)]
        RunShard.objects.bulk_create([
            RunShard(run=self.run, measure=name, index=index, start=start, stop=stop,
                     checksum=shard_checksum(digests[start:stop]))
            for index, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:], strict=True))
        ])
        shards = len(bounds) - 1
        helpers = min(shards - 1, int(getattr(settings, "METAEVAL_SHARD_HELPERS", 8)))
        log.info("run sharded", extra={"event": "run.sharded", "run": self.run.pk, "measure": name,
                                       "missing": missing, "shards": shards, "helpers": helpers})
        for _ in range(helpers):
            try:
                _send_helper(self.run.pk, name)
            except Exception:  # no broker: this worker computes every shard itself
                log.warning("run %s: could not send shard helpers", self.run.pk, exc_info=True)
                break
        described = self.cache.describe()
        while True:
            if self.lease is not None:
                self.lease.check()  # a cancelled run, or a lost lease, stops here
            shard = shard_claim(self.run.pk, name, worker=self.worker, cache=described)
            if shard is not None:
                shard_compute(shard, measure, pairs, digests, cache=self.cache, worker=self.worker,
                              workers=self.workers)
                continue
            shards_release_stale(self.run.pk, name)
            if not RunShard.objects.filter(run=self.run, measure=name).exclude(status=RunShard.Status.DONE).exists():
                break
            time.sleep(POLL_SECONDS)
        done = RunShard.objects.filter(run=self.run, measure=name)
        figures = done.aggregate(computed=Sum("computed"), workers=Count("worker", distinct=True))
        foreign = done.exclude(cache=described).values_list("cache", flat=True).distinct()
        for other in foreign:
            log.warning("run %s: a helper wrote to another distance cache (%s, not %s): set the same "
                        "METAEVAL_CACHE_URL on every worker", self.run.pk, other, described)
        return {"shards": shards, "shard_workers": figures["workers"] or 0, "shard_computed": figures["computed"] or 0}


def _send_helper(run_id: int, measure: str) -> None:
    queue.send("metaeval.compute_shards", run_id, measure)


#: the last run whose pairs this process rebuilt: (run id, its measures' pairs and digests)
_PAIRS: dict[int, tuple[list[TextPair], list[bytes]]] = {}


def _run_pairs(run: MetaevalRun, options: RunOptions) -> tuple[list[TextPair], list[bytes]]:
    """The run's unique text pairs and their digests, as its coordinator planned them (kept for the run's next
    shard in this process)."""
    if run.pk not in _PAIRS:
        _PAIRS.clear()
        corpus = selectors.corpus_from_dataset(dataset=run.dataset)
        pairs = plan_run(corpus, options).text_pairs()
        _PAIRS[run.pk] = (pairs, pair_digests(pairs))
    return _PAIRS[run.pk]


def shards_process(run_id: int, measure_name: str, *, worker: str, cache_location: str | None = None) -> str:
    """A helper's work: claim and compute pending shards of the run's ``measure_name`` until none is left. Returns
    what it did, in words (``skipped`` when the run is not running or nothing is pending)."""
    run = MetaevalRun.objects.select_related("dataset").filter(pk=run_id).first()
    pending = RunShard.objects.filter(run_id=run_id, measure=measure_name, status=RunShard.Status.PENDING)
    if run is None or run.status != MetaevalRun.Status.RUNNING or not pending.exists():
        return "skipped"
    options = RunOptions.from_dict(run.parameters)
    pairs, digests = _run_pairs(run, options)
    measure = prepare_measure(measure_name, options, pairs)
    computed = 0
    with open_cache(cache_location) as cache:
        described = cache.describe()
        while (shard := shard_claim(run_id, measure_name, worker=worker, cache=described)) is not None:
            try:
                computed += shard_compute(shard, measure, pairs, digests, cache=cache, worker=worker,
                                          workers=options.workers)
            except ShardMismatch as exc:
                log.warning("%s", exc)
                _PAIRS.clear()
                return "data differs"
    log.info("shards computed", extra={"event": "run.shards", "run": run_id, "measure": measure_name,
                                       "worker": worker, "shards": computed})
    return f"{computed} shard(s)"
