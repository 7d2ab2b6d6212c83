"""A participant completes a sentence preference (Zopf) set in a real browser with the keyboard: two sentences
per pair, one forced choice each, nothing but the sentences on the page; the stored winners follow the sides
shown."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from survey.models import Assignment, Judgment
from tests.e2e.conftest import SHOTS
from tests.e2e.test_questionnaire_keys_browser import answer, press_navigation_keys
from tests.survey.test_sentence_preference import sentence_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_participant_completes_a_sentence_study(live_server, browser, tmp_path):
    study = sentence_study(tmp_path, slug="zopf-ui", per_topic=3, per_q=3)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=zopf-person")
    page.check("#id_consent")
    page.click("text=Agree and continue")
    page.click("button:has-text('Skip')")
    expect(page.locator("main")).to_contain_text("more important information")
    page.click("button:has-text('Start')")
    expect(page.locator("h1")).to_have_text("Which sentence is more important?")
    expect(page.locator("#progress-text")).to_have_text("0 of 3 questions answered")
    html = page.content()
    for word in ("Text A", "model_a", "pitem", "sentence_a", "#article"):
        assert word not in html, word
    assert page.locator("#article").count() == 0
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "sentence-preference.png"), full_page=True)
    keys = ["b", "a", "b"]
    values: list = [None] * len(keys)
    for index, key in enumerate(keys):  # each letter answers and moves on; the navigation keys change nothing
        answer(page, "[data-question]", index, key, key, values)
        press_navigation_keys(page, "[data-question]", values)
    expect(page.locator("#progress-text")).to_have_text("3 of 3 questions answered")
    page.click("#submit-ratings")
    page.wait_for_selector("#completion-code")
    assignment = Assignment.objects.get(participant__external_id="zopf-person")
    stored = {j.item_id: (j.winner, j.shown_first) for j in Judgment.objects.filter(assignment=assignment)}
    for entry, key in zip(assignment.presentation, keys, strict=True):
        first = "model_b" if entry["swap"] else "model_a"
        second = "model_a" if entry["swap"] else "model_b"
        assert stored[entry["pitem"]] == ((first if key == "a" else second), first)
