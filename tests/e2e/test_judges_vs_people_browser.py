"""A researcher opens the demo A/B study's judges-vs-people page in a real browser: the simulated judge's known
biases (it prefers the text shown first and the longer text; survey.demo) show against the simulated people, style
control's warning names the judge, and the criterion selector works from the keyboard. Screenshot:
artifacts/screenshots/judges-vs-people.png."""
from __future__ import annotations

import os
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from tests.e2e.conftest import SHOTS
from tests.e2e.test_report_browser import RESEARCHER_PASSWORD, _log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _shares(text: str, pattern: str) -> tuple[int, int]:
    match = re.search(pattern, text)
    assert match, text
    return int(match.group(1)), int(match.group(2))


def test_the_demo_judges_biases_show_and_the_criterion_is_chosen_by_keyboard(live_server, browser, monkeypatch):
    monkeypatch.setenv("DEMO_RESEARCHER_PASSWORD", RESEARCHER_PASSWORD)
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", RESEARCHER_PASSWORD + "-admin")
    call_command("load_demo", participants=4, sets_each=1, stdout=open(os.devnull, "w"))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    _log_in(page, live_server, "/research/studies/demo-ab/")
    page.click("#study-versus-link")
    expect(page.locator("h1")).to_contain_text("Judges vs people")
    bias = page.text_content("#versus-bias") or ""
    first_judge, first_people = _shares(bias, r"demo-llm-judge prefers the text shown first in (\d+) %.*?; the "
                                              r"people in (\d+) %")
    longer_judge, longer_people = _shares(bias, r"demo-llm-judge and the longer text: .*? is (\d+) % with the judge, "
                                                r"(\d+) % with the people")
    assert first_judge > first_people and longer_judge >= longer_people + 10
    # the agreement table's columns: the people, then the judge; its bias rows beside the people's
    headers = page.locator("#agreement-table thead th").all_text_contents()
    assert headers == ["Measure", "People", "demo-llm-judge"]
    row = page.locator("#agreement-table tr[data-metric=judge_longer] td").all_text_contents()
    assert abs(float(row[1]) - longer_judge / 100) < 0.006
    # style control moves the judge's board (the baseline's long texts), and the page says so
    expect(page.locator("[data-warning]").filter(has_text="demo-llm-judge: style control changes the order in "
                                                          "overall")).to_have_count(1)
    expect(page.locator("table[data-style-source='demo-llm-judge'] caption")).to_contain_text("order changes")
    expect(page.locator("#matrix-table tbody tr")).to_have_count(2)
    # every judged item has people too (no PPI), and no item has three people (no test): the page says why
    expect(page.locator("[data-note=ppi]")).to_contain_text("only the people-only estimates")
    expect(page.locator("[data-note=alt-test]")).to_contain_text("untested")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "judges-vs-people.png"), full_page=True)
    # the keyboard: Tab to the criterion selector, pick a criterion by typing, Tab to Show, Enter
    page.locator("body").focus()
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.id") == "criterion":
            break
    assert page.evaluate("() => document.activeElement.id") == "criterion"
    page.keyboard.type("qu")
    assert page.input_value("#criterion") == "quality"
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.id") == "criterion-show"
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"criterion=quality"))
    expect(page.locator("h2").filter(has_text="Agreement with the people · quality")).to_have_count(1)
    assert page.input_value("#criterion") == "quality"
    # the CSV link of every criterion
    href = page.get_attribute("#versus-downloads a >> nth=0", "href")
    assert href and href.endswith("judges-vs-people.csv?table=agreement")
    assert not errors
