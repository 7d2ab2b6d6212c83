"""A researcher cancels a queued run and retries it, clicking the run page's buttons."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from metaeval import services
from metaeval.core.pipeline import RunOptions
from metaeval.models import MetaevalRun
from survey.research_views import RESEARCHER_GROUP
from tests.conftest import build_dataset

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_cancel_then_retry_from_the_run_page(live_server, browser, monkeypatch):
    monkeypatch.setattr("metaeval.tasks.execute_run.delay", lambda run_id: None)  # no worker: runs stay queued
    user = User.objects.create_user("clicker", password="clicker-pass-123")
    user.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    run = services.run_enqueue(dataset=build_dataset(name="clicks"), options=RunOptions(measures=["rouge_l"]))
    page = browser.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/research/runs/{run.pk}/")
    page.fill("input[name=username]", "clicker")
    page.fill("input[name=password]", "clicker-pass-123")
    page.click("button[type=submit]")
    page.click("#cancel-run")
    page.wait_for_selector(f"text=Run {run.pk} cancelled.")
    assert page.inner_text("#run-status") == "Cancelled"
    assert MetaevalRun.objects.get(pk=run.pk).status == "cancelled"
    page.click("text=Retry with these settings")
    page.wait_for_selector(f"text=repeats run {run.pk}")
    retried = MetaevalRun.objects.exclude(pk=run.pk).get()
    assert retried.status == "queued" and retried.parameters == run.parameters
    assert page.url.endswith(f"/research/runs/{retried.pk}/")
