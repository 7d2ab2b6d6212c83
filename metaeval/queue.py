"""Sending background work to Celery by the task's registered name (``metaeval.execute_run``,
``survey.execute_judge_run`` ...), so that the module that queues work never imports the module that defines the task
(``tasks`` imports the services, never the other way round). ``send`` behaves as the task's ``.delay()``: with
``CELERY_TASK_ALWAYS_EAGER`` (no broker, tests) the task runs here and now."""
from __future__ import annotations

from typing import Any

__all__ = ["send"]


def send(task: str, *args: Any) -> None:
    """Queue Celery task ``task`` (its registered name) with ``args``. Raises the broker's error when it cannot be
    reached (callers turn it into a failed run with a message) and ``KeyError`` for an unknown task name."""
    from celery import current_app

    if task not in current_app.tasks:  # the apps' task modules are imported on first use (Celery's autodiscovery)
        current_app.loader.import_default_modules()
    current_app.tasks[task].delay(*args)
