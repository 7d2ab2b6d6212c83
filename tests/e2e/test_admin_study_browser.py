"""The admin's study form in the browser, clicked through as an admin does: the fieldsets of the chosen kind only,
criteria typed into rows (one added with the button), a system of another dataset refused with a clear error, and
the change form offering only the dataset's systems."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from survey.models import Study, System, default_criteria
from tests.conftest import SYSTEM_NAMES, build_dataset
from tests.e2e.conftest import SHOTS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _fieldset(page: Page, title: str):
    return page.get_by_role("group", name=title, exact=True, include_hidden=True)


def _shows_only(page: Page, *titles: str) -> None:
    every = ("Systems and texts", "Similarity ratings", "Questions (A/B)", "Preference design",
             "Sentence preference design")
    for title in every:
        if title in titles:
            expect(_fieldset(page, title)).to_be_visible()
        else:
            expect(_fieldset(page, title)).to_be_hidden()
    expect(_fieldset(page, "Participants")).to_be_visible()  # every kind's


def test_add_and_change_a_preference_study_in_the_admin(live_server, browser):
    ours = build_dataset(name="ours")
    build_dataset(name="theirs", systems=("OtherSys",))
    User.objects.create_superuser("boss", "boss@example.org", "pw-admin-123")
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.goto(f"{live_server.url}/admin/login/?next=/admin/survey/study/add/")
    page.fill("input[name=username]", "boss")
    page.fill("input[name=password]", "pw-admin-123")
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/survey/study/add/")

    _shows_only(page, "Systems and texts", "Similarity ratings")  # similarity is the default kind
    page.select_option("#id_kind", "sentence_preference")
    _shows_only(page, "Questions (A/B)", "Sentence preference design")
    page.select_option("#id_kind", "preference")
    _shows_only(page, "Systems and texts", "Questions (A/B)", "Preference design")

    page.fill("#id_slug", "ab-admin")
    page.fill("#id_title", "A/B from the admin")
    page.select_option("#id_dataset", str(ours.pk))
    page.select_option("#id_systems_from", label=["SysnameA", "SysnameB", "OtherSys"])
    page.click("#id_systems_add")
    page.fill("#id_raters_per_questionnaire", "3")
    page.fill("#id_assignment_timeout_minutes", "15")
    page.fill("#id_cases_per_pair", "2")
    rows = page.locator("table.criteria-rows tbody tr")
    expect(rows).to_have_count(len(default_criteria()) + 2)
    page.click("button.add-criterion")
    expect(rows).to_have_count(len(default_criteria()) + 3)
    expect(page.locator("table.criteria-rows tbody tr:last-child input.criterion-name")).to_be_focused()
    page.fill("table.criteria-rows tbody tr:last-child input.criterion-name", "clarity")
    page.fill("table.criteria-rows tbody tr:last-child input.criterion-question", "Which headline is clearer?")
    page.click("input[name=_continue]")

    # refused: OtherSys has no summaries in "ours"; the form comes back with the preference fieldsets shown
    expect(page.locator(".errornote")).to_be_visible()
    expect(_fieldset(page, "Systems and texts")).to_contain_text(
        f"not in dataset ours (no summaries there): OtherSys. Its systems: {', '.join(sorted(SYSTEM_NAMES))}.")
    _shows_only(page, "Systems and texts", "Questions (A/B)", "Preference design")
    assert not Study.objects.exists()
    page.select_option("#id_systems_to", label="OtherSys")
    page.click("#id_systems_remove")
    page.click("input[name=_continue]")

    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    study = Study.objects.get(slug="ab-admin")
    assert study.kind == "preference" and study.assignment_timeout_minutes == 15
    assert sorted(study.systems.values_list("name", flat=True)) == ["SysnameA", "SysnameB"]
    assert study.criteria == [*default_criteria(), {"name": "clarity", "question": "Which headline is clearer?"}]

    # the change form: the preference fieldsets, the stored rows, and only the dataset's systems to choose from
    _shows_only(page, "Systems and texts", "Questions (A/B)", "Preference design")
    expect(page.locator("table.criteria-rows tbody tr")).to_have_count(len(default_criteria()) + 1 + 2)
    available = page.locator("#id_systems_from option").all_inner_texts()
    assert sorted(available) == sorted(set(SYSTEM_NAMES) - {"SysnameA", "SysnameB"})
    assert "OtherSys" not in available and System.objects.filter(name="OtherSys").exists()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "admin-study-form.png"), full_page=True)
