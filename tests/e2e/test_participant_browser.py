"""A participant completes a questionnaire in a real browser (Debian chromium, headless, via Playwright).

Screenshots land in artifacts/screenshots/ (desktop and phone widths) for a human to look at.
"""
from __future__ import annotations

import os

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from survey.models import Assignment, Rating
from tests.e2e.conftest import SHOTS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def rate_active_pair(page, key: str, done: int) -> None:
    """Press ``key`` as a person does: once the highlighted pair's scale is on screen (a key pressed while it is not
    only brings it into view, by design; on a loaded machine the smooth scroll to the next pair can take a while),
    then see the count go up."""
    expect(page.locator("[data-pair].active .scale")).to_be_in_viewport(ratio=1)
    page.keyboard.press(key)
    expect(page.locator("#progress-text")).to_have_text(f"{done} of 6 pairs rated")


def test_participant_completes_questionnaire_with_keyboard(live_server, browser):
    call_command("load_demo", participants=4, sets_each=1, stdout=open(os.devnull, "w"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{live_server.url}/s/demo/?PROLIFIC_PID=e2e-worker")
    page.check("#id_consent")
    page.click("text=Agree and continue")
    page.select_option("#id_occupation", "grad")
    page.click("button:has-text('Continue')")
    assert "How to rate" in page.inner_text("h1")
    page.click("button:has-text('Start')")
    progress = page.locator("#progress-text")
    expect(progress).to_have_text("0 of 6 pairs rated")  # waits for the deferred script
    page.screenshot(path=str(SHOTS / "questionnaire.png"), full_page=True)

    # rate with the keyboard: each key rates the active pair and moves to the next one
    keys = ["6", "2", "5", "1", "4", "3"]
    for done, key in enumerate(keys, start=1):
        rate_active_pair(page, key, done)
    expect(progress).to_have_text("6 of 6 pairs rated")
    page.click("#submit-ratings")
    page.wait_for_selector("#completion-code")
    code = page.inner_text("#completion-code")

    assignment = Assignment.objects.get(participant__external_id="e2e-worker")
    assert assignment.completion_code == code and assignment.completed_at is not None
    stored = {r.item_id: r.value for r in Rating.objects.filter(assignment=assignment)}
    assert [stored[e["item"]] for e in assignment.presentation] == [int(k) for k in keys]
    page.screenshot(path=str(SHOTS / "done.png"))

    # a phone-sized participant sees the same questionnaire layout stacked
    phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    phone.goto(f"{live_server.url}/s/demo/")
    phone.check("#id_consent")
    phone.click("text=Agree and continue")
    phone.click("button:has-text('Skip')")
    phone.click("button:has-text('Start')")
    expect(phone.locator("#progress-text")).to_have_text("0 of 6 pairs rated")
    phone.screenshot(path=str(SHOTS / "questionnaire-phone.png"))


def test_article_local_deadline_and_back_after_submitting(live_server, browser):
    """A participant in Tokyo sees the article above the pairs (collapsible), the deadline in their own time, and
    Back after submitting shows the thank-you page, not the old form (that the pages are sent "no-store" is
    checked in tests/survey/test_views.py)."""
    from datetime import timedelta

    from survey.models import Study

    call_command("load_demo", participants=0, sets_each=0, stdout=open(os.devnull, "w"))
    Study.objects.filter(slug="demo").update(show_article=True)
    context = browser.new_context(timezone_id="Asia/Tokyo", locale="en-US", viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}/s/demo/")
    page.check("#id_consent")
    page.click("text=Agree and continue")
    page.click("button:has-text('Skip')")
    page.click("button:has-text('Start')")
    expect(page.locator("#progress-text")).to_have_text("0 of 6 pairs rated")
    assignment = Assignment.objects.get(participant__study__slug="demo", completed_at__isnull=True)
    document = assignment.questionnaire.document

    article = page.locator("#article")
    expect(article.locator("h2")).to_have_text(document.headline)
    page.click("#article > summary")  # collapses, and opens again
    expect(article.locator("h2")).to_be_hidden()
    page.click("#article > summary")
    expect(article.locator("h2")).to_be_visible()

    deadline = page.locator("#deadline time")
    expect(deadline).to_have_attribute("data-localized", "")
    tokyo = assignment.expires_at + timedelta(hours=9)
    assert deadline.inner_text() == f"{tokyo.hour % 12 or 12}:{tokyo:%M} {'AM' if tokyo.hour < 12 else 'PM'} GMT+9"
    page.screenshot(path=str(SHOTS / "questionnaire-article.png"), full_page=True)

    page.keyboard.press("3")  # pair 1's scale is below the article: the first key only brings it into view
    expect(page.locator("[data-pair] .scale").first).to_be_in_viewport(ratio=1)
    expect(page.locator("#progress-text")).to_have_text("0 of 6 pairs rated")
    for done, key in enumerate(["3", "3", "4", "4", "5", "5"], start=1):
        rate_active_pair(page, key, done)
    page.click("#submit-ratings")
    page.wait_for_selector("#completion-code")
    expect(page.locator("main time")).to_have_attribute("data-localized", "")
    page.go_back()
    expect(page.locator("h1")).to_have_text("Thank you!")
    assert page.locator("#ratings-form").count() == 0
    assert Rating.objects.filter(assignment=assignment).count() == 6
    context.close()
