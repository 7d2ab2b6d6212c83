"""A Celery worker for test_workers.py, started as ``python -m tests.metaeval.worker_harness [celery worker args]``.

``HARNESS_SLOW_SECONDS`` makes each run wait that long while loading its data (the heartbeat keeps running), so a
test can kill or stop the worker in the middle of a run; ``HARNESS_SLOW_SHARD_SECONDS`` makes each shard of a
sharded run take that long more, so that two workers both get some. Everything else is the project's own worker.
"""
from __future__ import annotations

import os
import sys
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

SLOW = float(os.environ.get("HARNESS_SLOW_SECONDS", "0"))
if SLOW:
    from metaeval import selectors

    _load = selectors.corpus_from_dataset

    def _slow_load(**kwargs):  # type: ignore[no-untyped-def]
        time.sleep(SLOW)
        return _load(**kwargs)

    selectors.corpus_from_dataset = _slow_load  # type: ignore[assignment]

SLOW_SHARD = float(os.environ.get("HARNESS_SLOW_SHARD_SECONDS", "0"))
if SLOW_SHARD:
    from metaeval import sharding

    _compute = sharding.shard_compute

    def _slow_compute(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(SLOW_SHARD)
        return _compute(*args, **kwargs)

    sharding.shard_compute = _slow_compute  # type: ignore[assignment]

from config.celery import app  # noqa: E402

if __name__ == "__main__":
    app.worker_main(["worker", "--loglevel=INFO", "--without-gossip", "--without-mingle", *sys.argv[1:]])
