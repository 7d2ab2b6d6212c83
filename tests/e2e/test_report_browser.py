"""A researcher opens a full report in a real browser: every plotly figure is drawn from static/ (no CDN), and
the downloaded self-contained HTML draws the same figures with the network off.

Screenshots land in artifacts/screenshots/report-*.png for a human to look at.
"""
from __future__ import annotations

import io
import os

import pytest
from django.core.management import call_command

from metaeval.models import MetaevalRun
from tests.e2e.conftest import SHOTS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
FIGURES = ("fig-leaderboard", "fig-heatmap", "fig-beta", "fig-stability", "fig-raters")


def test_report_figures_render_online_and_offline(live_server, browser, tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DEMO_RESEARCHER_PASSWORD", "researcher-demo-pass")  # accounts with DEBUG off need them
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "admin-demo-pass")
    call_command("load_demo", participants=8, sets_each=2, stdout=open(os.devnull, "w"))
    call_command("metaeval_report", "--dataset", "demo", "--study", "demo", "--measures", "rouge_l,jsd,bleu4",
                 "--aux", "rouge_l", "--seed", "3", "--n-boot", "200", "--n-permutations", "100",
                 "--stability-samples", "3", stdout=io.StringIO())
    run = MetaevalRun.objects.get(kind="report")
    assert run.status == "done", run.error
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    outside: list[str] = []
    page.on("request", lambda request: outside.append(request.url)
            if not request.url.startswith((live_server.url, "data:")) else None)
    blocked: list[str] = []  # Content-Security-Policy violations (an inline script without the nonce, eval, ...)
    page.on("console", lambda message: blocked.append(message.text)
            if "Content Security Policy" in message.text else None)
    page.goto(f"{live_server.url}/accounts/login/?next=/research/runs/{run.pk}/report/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "researcher-demo-pass")
    page.click("button[type=submit]")
    for figure in FIGURES:
        page.wait_for_selector(f"#{figure} .main-svg", timeout=20000)
        assert page.locator(f"#{figure} .main-svg").count() > 0, figure
        page.locator(f"#{figure}").screenshot(path=str(SHOTS / f"report-{figure}.png"))
    assert outside == []  # plotly.js and the script come from our static files
    assert blocked == []  # and the page runs under its Content-Security-Policy
    # rater agreement: alpha over all units, over pairs of different texts (the one to quote), over identical texts
    rows = page.locator("#alphas tbody tr")
    assert rows.count() == 3
    assert [rows.nth(i).locator("td").first.inner_text() for i in range(3)] == [
        "all units", "units comparing two different texts · quote this one", "units comparing a text with itself"]
    page.locator("#alphas").screenshot(path=str(SHOTS / "report-alphas.png"))
    alphas = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(3)]
    # 8 participants: no identical-text pair was rated twice, so its alpha is undefined (and the others equal)
    assert alphas[2] == "undefined" and -1 <= float(alphas[0]) == float(alphas[1]) <= 1, alphas
    assert "discarded (SacreROUGE's rule)" in page.locator("#bootstrap-discarded").inner_text()
    download = page.request.get(f"{live_server.url}/research/runs/{run.pk}/report.html")
    assert download.ok
    standalone = tmp_path / "report.html"
    standalone.write_bytes(download.body())
    context.set_offline(True)
    offline = context.new_page()
    requests: list[str] = []
    offline.on("request", lambda request: requests.append(request.url)
               if not request.url.startswith(("file:", "data:")) else None)
    offline.goto(standalone.as_uri())
    for figure in FIGURES:
        offline.wait_for_selector(f"#{figure} .main-svg", timeout=20000)
    assert offline.locator("#alphas tbody tr").count() == 3
    assert requests == []
    context.close()
