"""The judges page's live runs table in a real browser (issue 29): a run that turns Done while the page is open
loses its Cancel button, its status and counts follow it; a failed run whose every judgment is stored (its message
says "start a new run") offers no Resume; a stopped run with judgments left does."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from survey.models import JudgeJudgment, JudgeRun, PreferenceItem
from tests.survey.test_judge_runs_page import ALL_FAILED, judge_run
from tests.survey.test_preference import preference_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_live_runs_table_follows_status_and_offers_only_what_applies(live_server, browser):
    study = preference_study(slug="live-judges")
    running = judge_run(study, status=JudgeRun.Status.RUNNING, total=4, stored=2, invalid=1, done=0)
    failed = judge_run(study, status=JudgeRun.Status.FAILED, total=4, stored=4, invalid=4, done=4, error=ALL_FAILED)
    stopped = judge_run(study, status=JudgeRun.Status.CANCELLED, total=4, stored=1, done=1,
                        error="cancelled by a researcher")
    user = User.objects.create_user("live-judger", password="live-judger-pass-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    page.clock.install()  # the page's timers on a clock the test can move on: its 2 s poll need not be waited out
    page.goto(f"{live_server.url}/accounts/login/?next=/research/studies/{study.slug}/judges/")
    page.fill("input[name=username]", "live-judger")
    page.fill("input[name=password]", "live-judger-pass-1")
    page.click("button[type=submit]")

    def row(run: JudgeRun):
        return page.locator(f"#judge-run-table tr[data-run='{run.pk}']")

    live = row(running)
    expect(live.locator("[data-field=status]")).to_have_text("Running")
    expect(live.locator("button:has-text('Cancel')")).to_be_visible()
    expect(live.locator("button:has-text('Resume')")).to_be_hidden()
    expect(live.locator("[data-field=done]")).to_have_text("2")  # the stored judgments, not the worker's last write
    expect(live.locator("[data-field=invalid]")).to_have_text("1")
    expect(row(failed).locator("[data-field=status]")).to_contain_text("start a new run")
    expect(row(failed).locator("button:has-text('Resume')")).to_be_hidden()
    expect(row(failed).locator("button:has-text('Cancel')")).to_be_hidden()
    expect(row(stopped).locator("button:has-text('Resume')")).to_be_visible()

    # the run finishes while the page is open: the table follows without a reload
    items = list(PreferenceItem.objects.filter(questionnaire__study=study).order_by("pk"))
    JudgeJudgment.objects.bulk_create([
        JudgeJudgment(judge_run=running, item=items[1], criterion="quality", run=r, winner="model_b",
                      shown_first="model_a") for r in (1, 2)])
    JudgeRun.objects.filter(pk=running.pk).update(status=JudgeRun.Status.DONE, done=4)
    page.clock.run_for(2000)  # the next poll, now
    expect(live.locator("[data-field=status]")).to_have_text("Done", timeout=10000)
    expect(live.locator("button:has-text('Cancel')")).to_be_hidden()
    expect(live.locator("button:has-text('Resume')")).to_be_hidden()
    expect(live.locator("[data-field=done]")).to_have_text("4")
    expect(page.locator("#judge-live")).to_be_visible()
