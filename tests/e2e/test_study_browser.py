"""A study in the browser: the design preview and generation, a participant of an ``identical_pairs=auto`` study,
and crowd review on the participants page, each clicked through as a person does."""
from __future__ import annotations

import csv
import os

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from playwright.sync_api import Page, expect

from survey import services
from survey.models import Participant, Rating, Study, System
from survey.research_views import RESEARCHER_GROUP
from tests.conftest import build_dataset, build_study, complete_questionnaires, full_answers, make_generic
from tests.e2e.conftest import SHOTS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _sign_in(browser, live_server, next_url: str) -> Page:
    user = User.objects.create_user("reviewer", password="reviewer-pass-123")
    user.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", "reviewer")
    page.fill("input[name=password]", "reviewer-pass-123")
    page.click("button[type=submit]")
    return page


def test_design_preview_then_generate(live_server, browser):
    dataset = make_generic(build_dataset(name="previewed"))
    study = Study.objects.create(slug="previewed", title="Previewed", dataset=dataset, seed=4, identical_pairs="auto")
    study.systems.set(System.objects.exclude(name="user"))
    page = _sign_in(browser, live_server, f"/research/studies/{study.slug}/")
    page.click("#study-design-link")
    table = page.locator("#design-counts")
    expect(table).to_contain_text("Questionnaires")
    assert page.inner_text("[data-design=questionnaires]") == "18"
    # 3 documents x 3 reader pairs, each with the 2 generic systems' identical pairs: 18 of 108 pairs
    assert page.inner_text("[data-design=identical]") == "18"
    assert page.inner_text("[data-design=shown_pairs]") == "90"
    assert page.inner_text("[data-design=ratings_needed]") == "180"
    # how long a set started and left holds its slot (the study's assignment timeout; 60 minutes by default)
    expect(page.locator("#design-hold")).to_contain_text("holds its slot for 60 minutes")
    page.fill("input[name=price_per_hour]", "9.50")
    page.click("button:has-text('Estimate cost')")
    # 180 ratings x 20 s (assumed) = 60 minutes = 1 h x 9.50 = 9.50
    expect(page.locator("[data-design=cost]")).to_have_text("9.50")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "design-preview.png"), full_page=True)
    page.click("#design-generate button")
    expect(page.locator(".messages")).to_contain_text("Generated 18 questionnaires")
    assert study.questionnaires.count() == 18


def test_a_participant_of_an_auto_study_never_sees_an_identical_pair(live_server, browser):
    dataset = make_generic(build_dataset(name="autodata"))
    study = build_study(dataset, slug="autostudy", identical_pairs="auto", raters=1)
    page = browser.new_page(reduced_motion="reduce")  # no smooth scroll to wait out after each answer: not under test
    page.goto(f"{live_server.url}/s/{study.slug}/")
    page.check("#id_consent")
    page.click("text=Agree and continue")
    page.click("button:has-text('Skip')")
    page.click("button:has-text('Start')")
    sets = 0
    while page.locator("#ratings-form").count():
        pairs = page.locator("fieldset[data-pair]")
        assert pairs.count() >= 4  # 6 pairs, less the generic systems' (0, 1 or 2 in a group)
        # every pair's two texts as the browser shows them (innerText), read in one round trip
        shown = pairs.evaluate_all(
            "sets => sets.map(s => Array.from(s.querySelectorAll('blockquote.text'), b => b.innerText))")
        assert len(shown) == pairs.count()
        for n, texts in enumerate(shown):
            first, second = (texts[i].removeprefix("Text A").removeprefix("Text B") for i in (0, 1))
            assert first.split() != second.split()
            pairs.nth(n).locator("label.opt").nth(2).click()
        page.click("#submit-ratings")
        page.wait_for_selector("#completion-code")
        sets += 1
        page.click("button:has-text('Rate another set')")
    assert sets == study.questionnaires.count() == 18
    participant = Participant.objects.get(study=study)
    automatic = Rating.objects.filter(assignment__participant=participant, automatic=True)
    assert automatic.count() == 18 and set(automatic.values_list("value", flat=True)) == {6}
    assert Rating.objects.filter(assignment__participant=participant, automatic=False).count() == 90


def test_participants_page_flags_the_demo_careless_raters(live_server, browser):
    """On the demo study the straight-liner and the random clicker are flagged, the careful raters are not."""
    call_command("load_demo", stdout=open(os.devnull, "w"))
    study = Study.objects.get(slug="demo")
    page = _sign_in(browser, live_server, f"/research/studies/{study.slug}/")
    page.click("#study-participants-link")
    rows = page.locator("#participants-table tbody tr")
    expect(rows).to_have_count(study.participants.filter(assignments__completed_at__isnull=False).distinct().count())
    by_crowd_id = {p.external_id: f"P{p.pk}" for p in study.participants.all()}

    def flags(crowd_id: str) -> str:
        return page.inner_text(f"tr[data-rater='{by_crowd_id[crowd_id]}'] [data-flags]")

    assert "straight-lined" in flags("sim-05")
    assert "low agreement" in flags("sim-17")
    careful = [cid for cid in by_crowd_id if cid not in {"sim-05", "sim-11", "sim-17"}]
    assert careful and all(flags(cid) == "—" for cid in careful)
    page.locator(f"tr[data-rater='{by_crowd_id['sim-05']}'] details summary").click()
    codes = page.locator(f"tr[data-rater='{by_crowd_id['sim-05']}'] details code")
    expect(codes).to_have_count(8)
    expect(codes.first).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "participants-demo.png"), full_page=True)


def test_participants_page_approve_and_exclude(live_server, browser):
    study = build_study(build_dataset(name="crowd"), slug="crowd", raters=3)
    complete_questionnaires(study, lambda a, i: full_answers(a, 3 + i), participants=3)
    first, second, third = study.participants.order_by("pk")
    page = _sign_in(browser, live_server, f"/research/studies/{study.slug}/")
    page.click("#study-participants-link")
    rows = page.locator("#participants-table tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0).locator("[data-flags]")).to_contain_text("straight-lined")
    page.check(f"#pick-{first.pk}")
    page.check(f"#pick-{second.pk}")
    page.fill("#review-note", "paid")
    page.click("button:has-text('Approve')")
    expect(page.locator(".messages")).to_contain_text("2 participants approved.")
    page.check(f"#pick-{third.pk}")
    page.click("button:has-text('Exclude from scoring')")
    expect(page.locator(".messages")).to_contain_text("1 participant excluded from scoring.")
    expect(page.locator(f"tr[data-rater='P{third.pk}'] [data-scoring]")).to_have_text("excluded")
    expect(page.locator(f"tr[data-rater='P{first.pk}'] [data-decision]")).to_contain_text("Approved")
    page.screenshot(path=str(SHOTS / "participants.png"), full_page=True)
    first.refresh_from_db(), third.refresh_from_db()
    assert (first.review, first.review_note, first.excluded) == ("approved", "paid", False)
    assert third.excluded and services.participants_review  # excluded participants are what runs leave out
    with page.expect_download() as download:
        page.click("#approvals-csv")
    lines = open(download.value.path(), encoding="utf-8").read().splitlines()
    assert lines[0] == "crowd_id,crowd_source,rater,completion_codes,sets,decision,excluded,note"
    assert len(lines) == 4 and lines[1].endswith(",approved,0,paid")
    # the page says what the downloads do with an excluded participant, and the ratings download marks them
    expect(page.locator("#participants")).to_contain_text("python -m metaeval leaves those rows out too")
    page.goto(f"{live_server.url}/research/studies/{study.slug}/")
    with page.expect_download() as download:
        page.click("a.button:has-text('CSV')")
    with open(download.value.path(), newline="", encoding="utf-8") as handle:
        ratings = list(csv.DictReader(handle))
    marks = {(row["rater"], row["review"], row["excluded"], row["review_note"]) for row in ratings}
    assert marks == {(f"P{first.pk}", "approved", "0", "paid"), (f"P{second.pk}", "approved", "0", "paid"),
                     (f"P{third.pk}", "pending", "1", "")}
