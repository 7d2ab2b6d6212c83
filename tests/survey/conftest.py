"""Fixtures shared by the survey tests: the demo loaded once per module."""
from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from django.core.management import call_command


@pytest.fixture(scope="module")
def _demo_in_database(django_db_setup, django_db_blocker) -> Iterator[str]:
    """load_demo once for the tests of this module (each test's own changes roll back with its transaction); the
    database is emptied again after the module. Yields what load_demo printed."""
    from django.test.utils import override_settings

    with django_db_blocker.unblock(), override_settings(DEBUG=True):
        out = io.StringIO()
        call_command("load_demo", stdout=out)
    yield out.getvalue()
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


@pytest.fixture
def demo_loaded(_demo_in_database, db, settings) -> str:
    settings.DEBUG = True  # the published demo passwords only in debug mode (make run)
    return _demo_in_database
