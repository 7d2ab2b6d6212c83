"""Issue 29: no key a participant presses to move about a questionnaire changes an answer. On the similarity (1-6)
and the A/B pages, answered by key and by mouse, every navigation key (arrows, Shift+arrows, Page Up/Down,
Home/End, Space, Tab, Shift+Tab) is pressed after each answer; the answers on the page never change, the stored
ratings and judgments are exactly the ones chosen, and after each answer the keyboard focus and the highlight are
on the same question: the next unanswered one, on screen."""
from __future__ import annotations

import os

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from survey.models import Assignment, Judgment, Rating
from tests.survey.test_preference import preference_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NAVIGATION = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Shift+ArrowUp", "Shift+ArrowDown", "PageUp",
              "PageDown", "Home", "End", "Space", "Tab", "Shift+Tab"]

STATE = """(selector) => {
  const questions = Array.from(document.querySelectorAll(selector));
  const focused = document.activeElement;
  return {
    active: questions.findIndex((q) => q.classList.contains("active")),
    highlighted: questions.filter((q) => q.classList.contains("active")).length,
    focus: questions.findIndex((q) => q.contains(focused)),
    focusOnRadio: !!focused && focused.type === "radio",
    values: questions.map((q) => (q.querySelector("input[type=radio]:checked") || {}).value || null),
  };
}"""

#: whether an element is wholly on screen, below the sticky progress bar
ON_SCREEN = """(el) => {
  const head = document.getElementById("progress-head");
  const top = getComputedStyle(head).position === "sticky" ? Math.max(0, head.getBoundingClientRect().bottom) : 0;
  const box = el.getBoundingClientRect();
  return box.top >= top - 0.5 && box.bottom <= window.innerHeight + 0.5;
}"""


#: scrolls to the top (instantly), then by a pixel, and as soon as that scroll is seen clicks the last pair's texts;
#: waits 400 ms (the page follows a scroll after 150 ms) and says whether that pair's first question is off screen
CLICK_AFTER_SCROLL = """async (selector) => {
  window.scrollTo({ top: 0, behavior: "instant" });
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const scrolled = new Promise((done) => addEventListener("scroll", done, { once: true }));
  window.scrollBy({ top: 1, behavior: "instant" });
  await scrolled;
  const pairs = document.querySelectorAll("[data-pair]");
  const pair = pairs[pairs.length - 1];
  pair.querySelector(".text").click();
  await new Promise((done) => setTimeout(done, 400));
  return pair.querySelector(selector).getBoundingClientRect().top > innerHeight;
}"""


def state(page, selector: str) -> dict:
    return page.evaluate(STATE, selector)


#: resolves once the page has not scrolled for 150 ms and 6 animation frames (keys scroll smoothly, and a scroll may
#: start a frame or two after its key) and has followed its last scroll; false after 20 s. Followed: a scroll
#: listener added (on the first call, once questionnaire.js has added its own) after the page's sets a 150 ms timer,
#: as the page's follow-the-scroll does, after the page's; added, it sets one at once (the page's may be pending)
STILL = """() => new Promise((done) => {
  if (!("__followed" in window)) {
    let timer = null;
    const watch = () => {
      window.__followed = false;
      clearTimeout(timer);
      timer = setTimeout(() => { window.__followed = true; }, 150);
    };
    addEventListener("scroll", watch, { passive: true });
    watch();
  }
  const start = performance.now();
  let y = scrollY, since = start, frames = 0;
  const tick = () => {
    const now = performance.now();
    if (scrollY !== y) { y = scrollY; since = now; frames = 0; } else { frames += 1; }
    if (frames >= 6 && now - since >= 150 && window.__followed) setTimeout(() => done(true), 0);
    else if (now - start > 20000) done(false);
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""


def settle(page) -> None:
    """Wait for the page to stop scrolling (keys scroll smoothly, and go on after the key is up), and for the
    highlight to follow: watched frame by frame in the page, no fixed wait."""
    assert page.evaluate(STILL), "the page never stopped scrolling"


def next_open(values: list, after: int) -> int:
    """The question the page should go to after answering `after`: the next unanswered one, wrapping round."""
    n = len(values)
    return next((j % n for j in range(after + 1, after + n + 1) if values[j % n] is None), after)


def press_navigation_keys(page, selector: str, values: list) -> None:
    """Every navigation key, one after the other: no answer on the page changes, no radio button holds the focus,
    and focus on a question is focus on the highlighted one."""
    for key in NAVIGATION:
        page.keyboard.press(key)
        now = state(page, selector)
        assert now["values"] == values, key
        assert not now["focusOnRadio"], key
        assert now["highlighted"] == 1 and now["focus"] in (-1, now["active"]), (key, now)
    settle(page)
    now = state(page, selector)
    assert now["values"] == values and now["focus"] in (-1, now["active"]), now


def answer(page, selector: str, index: int, value: str, key: str | None, values: list) -> None:
    """Answer question `index` with `value`: by `key` (after moving there with j / k, as a keyboard user would) or,
    when `key` is None, by clicking the option. Then the focus and the highlight are on the next unanswered
    question, which is on screen."""
    question = page.locator(selector).nth(index)
    if key is None:
        question.locator("label.opt", has=page.locator(f"input[value='{value}']")).click()
    else:
        for _ in range(2 * len(values)):
            now = state(page, selector)["active"]
            if now == index:
                break
            page.keyboard.press("j" if now < index else "k")
        assert state(page, selector)["active"] == index
        options = question.locator("[role=radiogroup]")
        settle(page)
        if not page.evaluate(ON_SCREEN, options.element_handle()):
            page.keyboard.press(key)  # an answer key for options off screen only brings them into view
            assert state(page, selector)["values"] == values
            expect(options).to_be_in_viewport(ratio=1)
        page.keyboard.press(key)
    values[index] = value
    after = state(page, selector)
    assert after["values"] == values
    assert after["focus"] == after["active"] == next_open(values, index), after
    expect(page.locator(selector).nth(after["active"])).to_be_in_viewport()


def _open_questionnaire(page, url: str) -> None:
    page.goto(url)
    page.check("#id_consent")
    page.click("text=Agree and continue")
    page.click("button:has-text('Skip')")
    page.click("button:has-text('Start')")


@pytest.mark.parametrize("viewport", [{"width": 1200, "height": 800}, {"width": 390, "height": 844}],
                         ids=["desktop", "phone"])
def test_navigation_keys_never_change_a_rating(live_server, browser, viewport):
    call_command("load_demo", participants=0, sets_each=0, stdout=open(os.devnull, "w"))
    page = browser.new_page(viewport=viewport)
    _open_questionnaire(page, f"{live_server.url}/s/demo/?PROLIFIC_PID=keys")
    selector = "[data-pair]"
    expect(page.locator("#progress-text")).to_have_text("0 of 6 pairs rated")
    if viewport["width"] > 640:  # the keys are listed on the page (not on a phone)
        expect(page.locator("#key-help")).to_be_visible()
        expect(page.locator("#key-help")).to_contain_text("Page Up")
    else:
        expect(page.locator("#key-help")).to_be_hidden()
    values: list = [None] * 6
    first = state(page, selector)
    assert first["active"] == first["focus"] == 0
    # the sequence: 5, then Down (to scroll), after a key answer and after a click
    plan = [("5", "5"), ("2", None), ("6", "6"), ("1", None), ("3", None)]
    for index, (value, key) in enumerate(plan):
        answer(page, selector, index, value, key, values)
        press_navigation_keys(page, selector, values)
    # the browser refuses to submit with pair 6 unrated: pair 6 is highlighted and focused, nothing is stored
    page.click("#submit-ratings")
    expect(page.locator("#progress-text")).to_contain_text("answer the highlighted question")
    missing = state(page, selector)
    assert missing["active"] == missing["focus"] == 5 and missing["values"] == values
    assert not Rating.objects.exists()
    answer(page, selector, 5, "4", "4", values)
    press_navigation_keys(page, selector, values)
    # a deliberate change by click is kept; the keys pressed after it change nothing
    answer(page, selector, 0, "2", None, values)
    press_navigation_keys(page, selector, values)
    page.click("#submit-ratings")
    page.wait_for_selector("#completion-code")
    assignment = Assignment.objects.get(participant__external_id="keys")
    stored = {r.item_id: r.value for r in Rating.objects.filter(assignment=assignment)}
    assert [stored[e["item"]] for e in assignment.presentation] == [int(v) for v in values] == [2, 2, 6, 1, 3, 4]


def test_an_answer_key_for_a_question_off_screen_only_shows_it(live_server, browser):
    """With the article open above the pairs, the first pair's scale is below the fold: a digit brings it into
    view and rates nothing; the next one rates it. Scrolling back to the top leaves the highlight on a pair that
    is on screen."""
    from survey.models import Study

    call_command("load_demo", participants=0, sets_each=0, stdout=open(os.devnull, "w"))
    Study.objects.filter(slug="demo").update(show_article=True)
    page = browser.new_page(viewport={"width": 1200, "height": 600})
    _open_questionnaire(page, f"{live_server.url}/s/demo/")
    selector = "[data-pair]"
    expect(page.locator("#progress-text")).to_have_text("0 of 6 pairs rated")
    scale = page.locator("[data-pair] .scale").first
    assert page.evaluate("(el) => el.getBoundingClientRect().top", scale.element_handle()) > 600  # below the fold
    page.keyboard.press("3")
    expect(scale).to_be_in_viewport(ratio=1)
    assert state(page, selector)["values"] == [None] * 6
    page.keyboard.press("3")
    assert state(page, selector)["values"] == ["3"] + [None] * 5
    page.keyboard.press("End")
    settle(page)  # End scrolls smoothly: a fixed wait could read the highlight mid-scroll on a busy machine
    now = state(page, selector)
    assert now["focus"] == now["active"] and now["active"] >= 1
    expect(page.locator(selector).nth(now["active"])).to_be_in_viewport()


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, {"width": 390, "height": 844}],
                         ids=["desktop", "phone"])
def test_navigation_keys_never_change_an_ab_answer(live_server, browser, viewport):
    study = preference_study(slug="abkeys", raters=1, per_pair=2, per_q=3, docs=2, readers=2, allow_tie=True,
                             instructions="", show_article=False)
    page = browser.new_page(viewport=viewport)
    _open_questionnaire(page, f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=ab-keys")
    selector = "[data-question]"
    count = page.locator(selector).count()
    expect(page.locator("#progress-text")).to_have_text(f"0 of {count} questions answered")
    expect(page.locator("#key-help")).to_contain_text("About the same")  # (shown at desktop widths)
    values: list = [None] * count
    keys = {"a": "a", "b": "b", "tie": "t"}
    choices = ["a", "b", "tie"]
    for index in range(count):
        value = choices[(index * 2 + 1) % 3]
        answer(page, selector, index, value, keys[value] if index % 2 == 0 else None, values)
        press_navigation_keys(page, selector, values)
    # the sequence on the A/B page: a, then Down; and a click on a pair's text puts focus and highlight on
    # that pair's first question
    answer(page, selector, 1, "a", None, values)
    page.keyboard.press("ArrowDown")
    settle(page)  # a person clicks the text once the page has stopped scrolling, not where it was mid-scroll
    page.locator("[data-pair] .text").nth(2).click()
    settle(page)  # and it stays there once the page is still (a scroll just before the click does not move it)
    clicked = state(page, selector)
    assert clicked["values"] == values and clicked["focus"] == clicked["active"] == 3 and count > 3
    # a click on the last pair's texts just after a scroll, from the top of the page, where that pair's questions are
    # off screen: the click is the participant's choice, and the highlight does not then follow the scroll elsewhere
    last_pair = count - len(study.criteria)
    off_screen = page.evaluate(CLICK_AFTER_SCROLL, selector)
    after = state(page, selector)
    assert off_screen and after["values"] == values and after["focus"] == after["active"] == last_pair, after
    page.click("#submit-ratings")
    page.wait_for_selector("#completion-code")
    assignment = Assignment.objects.get(participant__external_id="ab-keys")
    criteria = [c["name"] for c in study.criteria]
    expected = {}
    for position, entry in enumerate(assignment.presentation):
        first, second = ("model_b", "model_a") if entry["swap"] else ("model_a", "model_b")
        for c, criterion in enumerate(criteria):
            value = values[position * len(criteria) + c]
            expected[(entry["pitem"], criterion)] = {"a": first, "b": second, "tie": "tie"}[value]
    stored = {(j.item_id, j.criterion): j.winner for j in Judgment.objects.filter(assignment=assignment)}
    assert stored == expected


def test_without_javascript_the_radios_work_as_the_browser_makes_them(live_server, browser):
    """No script: no keyboard help (no key would work), the radio buttons are the page's controls (the
    questions are not made focusable), and the answers clicked are the answers stored."""
    study = preference_study(slug="abnojs", raters=1, per_pair=2, per_q=2, docs=2, readers=2, instructions="")
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    _open_questionnaire(page, f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=no-js")
    expect(page.locator("#key-help")).to_be_hidden()
    questions = page.locator("[data-question]")
    count = questions.count()
    assert count >= 2 and questions.first.get_attribute("tabindex") is None
    for index in range(count):
        questions.nth(index).locator("label.opt").nth(index % 2).click()
    page.click("#submit-ratings")
    page.wait_for_selector("#completion-code")
    assignment = Assignment.objects.get(participant__external_id="no-js")
    assert Judgment.objects.filter(assignment=assignment).count() == count
    context.close()
