"""The Celery application: background work (scoring and report runs) on workers started with
``celery -A config worker`` (docs/guide/workers.md). Settings are the ``CELERY_*`` ones in config/settings.py."""
from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("perseval")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
