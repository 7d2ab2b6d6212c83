"""Project configuration. The Celery app is loaded with Django so that tasks find it (``@shared_task``)."""
from config.celery import app as celery_app

__all__ = ["celery_app"]
