"""Two participants complete a preference (A/B) study in a real browser, one with the keyboard on a desktop and one
by tapping on a phone; the pages are blind, and the stored winners follow the sides each participant saw."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from survey.models import Assignment, Judgment
from tests.e2e.conftest import SHOTS
from tests.survey.test_preference import SYSTEMS, preference_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _consent(page, url: str) -> None:
    page.goto(url)
    page.check("#id_consent")
    page.click("text=Agree and continue")
    page.click("button:has-text('Skip')")
    assert "How to answer" in page.inner_text("h1")
    page.click("button:has-text('Start')")


def test_two_participants_complete_a_preference_study(live_server, browser):
    study = preference_study(slug="ab", raters=2, per_pair=2, per_q=3, docs=2, readers=2,
                             instructions="", show_article=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    # no smooth scroll to the next question after each key (scrolling is tested in test_questionnaire_keys_browser):
    # on a busy machine a key pressed while the page still moved only brought its question into view
    page = browser.new_page(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    _consent(page, f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=desk")
    page.wait_for_selector("[data-question][tabindex='0']")  # questionnaire.js has started: the keys are its
    progress = page.locator("#progress-text")
    questions = page.locator("[data-question]").count()
    expect(progress).to_have_text(f"0 of {questions} questions answered")
    html = page.content()
    for name in [*SYSTEMS, "model_a", "model_b", "pitem"]:
        assert name not in html, name
    assert page.locator("#examples li").count() >= 1 and page.is_visible("#article .article-body")
    page.screenshot(path=str(SHOTS / "preference.png"), full_page=True)
    # keyboard: a, b, b, a ... one key per question, each moving to the next; the arrow keys only scroll
    keys = ["a", "b", "b", "a"] * questions
    for key in keys[:questions]:
        page.keyboard.press(key)
        page.keyboard.press("ArrowRight")
    expect(progress).to_have_text(f"{questions} of {questions} questions answered")
    page.click("#submit-ratings")
    page.wait_for_selector("#completion-code")
    assignment = Assignment.objects.get(participant__external_id="desk")
    chosen = {"a": "a", "b": "b"}
    criteria = [c["name"] for c in study.criteria]
    expected = []
    for entry in assignment.presentation:
        first = "model_b" if entry["swap"] else "model_a"
        second = "model_a" if entry["swap"] else "model_b"
        for criterion in criteria:
            key = keys[len(expected)]
            expected.append((entry["pitem"], criterion, first if chosen[key] == "a" else second, first))
    stored = [(j.item_id, j.criterion, j.winner, j.shown_first)
              for j in Judgment.objects.filter(assignment=assignment).order_by("shown_position", "id")]
    by_item = {(pitem, criterion): (winner, first) for pitem, criterion, winner, first in stored}
    assert all(by_item[(p, c)] == (w, f) for p, c, w, f in expected) and len(stored) == len(expected)

    # the second participant on a phone: the texts stack, answers by tapping, a missing answer is refused first
    phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    _consent(phone, f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=phone")
    boxes = phone.locator(".texts").first.locator(".text")
    first_box, second_box = boxes.nth(0).bounding_box(), boxes.nth(1).bounding_box()
    assert first_box and second_box and second_box["y"] > first_box["y"] + first_box["height"] - 1  # stacked
    labels = phone.locator("[data-question] .ab")
    asked = labels.count()
    for i in range(asked - 1):
        labels.nth(i).locator("label").last.click()  # Text B
    phone.evaluate("document.getElementById('ab-form').noValidate = true")  # let the server refuse it
    phone.click("#submit-ratings")
    expect(phone.locator(".field-error")).to_have_count(1)
    assert not Judgment.objects.filter(assignment__participant__external_id="phone").exists()
    phone.locator("[data-question] .ab").last.locator("label").first.click()  # Text A for the last one
    phone.screenshot(path=str(SHOTS / "preference-phone.png"), full_page=True)
    phone.click("#submit-ratings")
    phone.wait_for_selector("#completion-code")
    assert Judgment.objects.filter(assignment__participant__external_id="phone").count() == asked


def test_the_demo_ab_study_in_the_browser(live_server, browser):
    """The demo A/B study as a participant meets it (the docs' screenshot): real headlines, the reader's own
    headlines for other articles, three questions per pair, nothing that names a system."""
    import os

    from django.core.management import call_command

    call_command("load_demo", participants=2, sets_each=1, stdout=open(os.devnull, "w"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    _consent(page, f"{live_server.url}/s/demo-ab/")
    expect(page.locator("#progress-text")).to_have_text("0 of 9 questions answered")
    html = page.content()
    for name in ["PersonaPointer", "HistoryFusionT5", "GenericBARTx", "LeadLineBaseline", "model_a", "pitem",
                 "reference"]:
        assert name not in html.lower() if name == "reference" else name not in html, name
    assert page.locator("#examples li").count() == 3
    page.locator("#article summary").click()  # fold the article, as a reader who has read it would
    page.screenshot(path=str(SHOTS / "preference-demo.png"), full_page=True)


def test_a_researcher_reviews_a_preference_study_and_stores_its_judgments(live_server, browser):
    """Design preview, the participants page's gold exclusion, and *From a preference study*, clicked through."""
    from django.contrib.auth.models import Group, User

    from metaeval.models import JudgmentSet
    from survey import services
    from tests.survey.test_preference import answers

    study = preference_study(slug="review", raters=2, gold_rate=0.34, gold_threshold=0.5)
    for name, wrong in (("good", False), ("sloppy", True)):
        participant = services.participant_register(study=study, external_id=name)
        while True:
            try:
                assignment = services.assignment_claim(participant=participant)
            except services.NoQuestionnaireAvailable:
                break
            services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                      values=answers(assignment, lambda e, c, w=wrong: (
                                          {"a": "b", "b": "a"}[e["answer"]] if w else e["answer"]) if "gold" in e
                                          else "ab"[(e["swap"] + len(c)) % 2]))
    user = User.objects.create_user("reviewer", password="reviewer-pass-123")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/?next=/research/studies/{study.slug}/")
    page.fill("input[name=username]", "reviewer")
    page.fill("input[name=password]", "reviewer-pass-123")
    page.click("button[type=submit]")
    page.click("#study-design-link")
    assert page.inner_text("[data-design=pairs]") == "12" and page.inner_text("[data-design=answers]") == "72"
    assert page.is_visible("#design-locked")
    page.go_back()
    page.click("#study-participants-link")
    sloppy = page.locator("tr", has_text="sloppy")
    assert "below the study's threshold 0.5" in sloppy.inner_text()
    page.click("#exclude-below-gold")
    page.wait_for_selector("text=1 participant below the gold threshold excluded from scoring.")
    assert "excluded" in page.locator("tr", has_text="sloppy").locator("[data-scoring]").inner_text()
    page.click("nav >> text=Pairwise judgments")
    page.fill("input[name=set_name]", "review-set")
    page.select_option("select[name=study]", study.slug)
    page.click("button:has-text(\"Store the study's judgments\")")
    # the good participant's answers only: 12 pairs x 3 criteria, one game each
    page.wait_for_selector("text=Judgment set review-set stored: 36 judgments, 36 games.")
    stored = JudgmentSet.objects.get(name="review-set")
    assert (stored.judgments, stored.games) == (36, 36)
    assert page.is_visible("#judgment-set-table tr[data-name=review-set]")
