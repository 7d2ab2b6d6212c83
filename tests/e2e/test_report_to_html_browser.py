"""The notebook API's Report.to_html (metaeval.api) in a real browser with the network off: the file draws every
figure and its coefficient switch works, as the platform's offline download does (tests/e2e/test_report_browser.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

import metaeval
from tests.e2e.conftest import wait_drawn

pytestmark = pytest.mark.e2e
DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"
FIGURES = ("fig-leaderboard", "fig-heatmap", "fig-beta", "fig-stability", "fig-raters", "fig-edins-gamma")


def test_to_html_draws_every_figure_offline(browser, tmp_path) -> None:
    report = metaeval.report(DEMO / "consolidated.jsonl", ratings=DEMO / "ratings.csv", measures="rouge_l,jsd",
                             aux="rouge_l", seed=3, n_boot=100, n_permutations=50, stability_samples=3,
                             cache_dir=tmp_path / "cache")
    path = report.to_html(tmp_path / "report.html")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url)
            if not request.url.startswith(("file:", "data:")) else None)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    assert "consolidated.jsonl" in page.locator("main h1 + p").inner_text()
    for figure in FIGURES:
        wait_drawn(page, figure)
        assert page.locator(f"#{figure} .main-svg").count() > 0, figure
    page.click("#method-switch label:has-text('Kendall')")
    page.wait_for_function("() => document.getElementById('fig-heatmap').layout.title.text.includes('Kendall')")
    page.keyboard.press("Tab")  # the page answers the keyboard (focus moves into it)
    assert page.evaluate("() => document.activeElement !== document.body")
    assert requests == [] and errors == []
    context.close()
