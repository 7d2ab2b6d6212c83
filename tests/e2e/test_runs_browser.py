"""A researcher cancels a queued run and retries it, clicking the run page's buttons."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from metaeval import services
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun
from survey.research_views import RESEARCHER_GROUP
from tests.conftest import build_dataset
from tests.e2e.conftest import wait_drawn

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


def test_a_full_report_started_from_the_run_form(live_server, browser, monkeypatch, tmp_path, settings):
    """The researcher fills in the form as a person does (dataset, study, a measure, the report's settings) and
    reaches the finished report from the run page."""
    from tests.conftest import build_study, complete_questionnaires, full_answers

    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "cache"))
    settings.METAEVAL_RUN_LAUNCHER = "inline"
    user = User.objects.create_user("former", password="former-pass-123")
    user.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    study = build_study(build_dataset(name="formdata"), slug="formstudy")
    complete_questionnaires(
        study, lambda a, i: {k: str(1 + (n + i) % 6) for n, k in enumerate(full_answers(a))}, participants=2
    )
    page = browser.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/research/runs/")
    page.fill("input[name=username]", "former")
    page.fill("input[name=password]", "former-pass-123")
    page.click("button[type=submit]")
    page.select_option("select[name=dataset]", "formdata")
    page.select_option("select[name=study]", "formstudy")
    for box in page.locator("input[name=measures]").all():
        box.uncheck()
    page.check("input[name=measures][value=rouge_l]")
    assert page.is_checked("input[name=full_report]")
    assert page.is_visible("input[name=n_boot]")
    page.uncheck("input[name=full_report]")
    assert not page.is_visible("input[name=n_boot]")  # the report's settings hide with it
    page.check("input[name=full_report]")
    page.fill("input[name=seed]", "5")
    page.fill("input[name=n_boot]", "30")
    page.fill("input[name=n_permutations]", "20")
    page.fill("input[name=stability_samples]", "2")
    page.click("button:has-text('Start run')")
    page.wait_for_selector("#open-report", timeout=60000)
    run = MetaevalRun.objects.get()
    assert run.kind == "report" and run.status == "done" and run.seed == 5
    assert run.report["parameters"]["n_boot"] == 30
    page.click("#open-report")
    wait_drawn(page, "fig-leaderboard")
    assert page.url.endswith(f"/research/runs/{run.pk}/report/")
