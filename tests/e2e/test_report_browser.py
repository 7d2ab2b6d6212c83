"""A researcher opens a full report in a real browser: every plotly figure is drawn from static/ (no CDN), and
the downloaded self-contained HTML draws the same figures with the network off.

Screenshots land in artifacts/screenshots/report-*.png for a human to look at.
"""
from __future__ import annotations

import io
import os

import pytest
from django.core.management import call_command

from metaeval.assets import PLOTLY_TRACES
from metaeval.core import display
from metaeval.models import MetaevalRun
from tests.e2e.conftest import SHOTS, wait_drawn

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
RESEARCHER_PASSWORD = "report-browser-pass-1"
FIGURES = ("fig-leaderboard", "fig-heatmap", "fig-beta", "fig-stability", "fig-raters", "fig-edins-gamma")


def _demo_report(tmp_path, monkeypatch) -> MetaevalRun:
    """The demo's accounts and a small seeded report run of its ratings."""
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DEMO_RESEARCHER_PASSWORD", RESEARCHER_PASSWORD)  # DEBUG off: accounts need passwords of
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", RESEARCHER_PASSWORD + "-admin")  # their own (not the published ones)
    call_command("load_demo", participants=8, sets_each=2, stdout=open(os.devnull, "w"))
    call_command("metaeval_report", "--dataset", "demo", "--study", "demo", "--measures", "rouge_l,jsd,bleu4",
                 "--aux", "rouge_l", "--seed", "3", "--n-boot", "200", "--n-permutations", "100",
                 "--stability-samples", "3", stdout=io.StringIO())
    run = MetaevalRun.objects.get(kind="report")
    assert run.status == "done", run.error
    return run


def _log_in(page, live_server, next_url: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", RESEARCHER_PASSWORD)
    page.click("button[type=submit]")


def test_report_figures_render_online_and_offline(live_server, browser, tmp_path, monkeypatch):
    run = _demo_report(tmp_path, monkeypatch)
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    outside: list[str] = []
    page.on("request", lambda request: outside.append(request.url)
            if not request.url.startswith((live_server.url, "data:")) else None)
    blocked: list[str] = []  # Content-Security-Policy violations (an inline script without the nonce, eval, ...)
    page.on("console", lambda message: blocked.append(message.text)
            if "Content Security Policy" in message.text else None)
    _log_in(page, live_server, f"/research/runs/{run.pk}/report/")
    for figure in FIGURES:
        wait_drawn(page, figure)
        assert page.locator(f"#{figure} .main-svg").count() > 0, figure
        page.locator(f"#{figure}").screenshot(path=str(SHOTS / f"report-{figure}.png"))
    assert outside == []  # plotly.js and the script come from our static files
    assert blocked == []  # and the page runs under its Content-Security-Policy
    # the vendored partial bundle registers the trace types metaeval.assets names (the figures' types are checked
    # against that list in tests/metaeval/core/perseval/test_figures.py), no more
    assert sorted(page.evaluate("Object.keys(Plotly.PlotSchema.get().traces)")) == sorted(PLOTLY_TRACES)
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
        wait_drawn(offline, figure)
    # offline the tables travel in the file (as text), put in place all the same
    offline.wait_for_function("() => !document.getElementById('report-tables')", timeout=20000)
    assert offline.locator("#section-tables details table.grid").count() == len(run.report["tables"])
    assert "report-table" not in offline.locator("#section-tables").text_content()  # the markers left no text
    assert offline.locator("#alphas tbody tr").count() == 3
    offline.click("#method-switch label:has-text('Kendall')")  # the coefficient switch works offline too
    offline.wait_for_function("() => document.getElementById('fig-heatmap').layout.title.text.includes('Kendall')")
    assert offline.is_visible("#corr-grid-kendall") and not offline.is_visible("#corr-grid-pearson")
    assert requests == []
    context.close()


def _boxes(page, selector: str) -> list[dict]:
    """Each element's text and its bounding box (left, top, right, bottom) in the page."""
    return page.evaluate("""(selector) => Array.from(document.querySelectorAll(selector)).map((el) => {
        const b = el.getBoundingClientRect();
        return {text: el.textContent, box: [b.left, b.top, b.right, b.bottom]};
    })""", selector)


def _grid(run: MetaevalRun, method: str) -> list[list[float | None]]:
    """The correlations of one coefficient as the heatmap lays them out (a row per HJ measure)."""
    cells = [cell for cell in run.report["correlations"] if cell["method"] == method]
    autos = list(dict.fromkeys(cell["auto_measure"] for cell in cells))
    humans = list(dict.fromkeys(cell["hj_measure"] for cell in cells))
    value = {(cell["auto_measure"], cell["hj_measure"]): cell["r"] for cell in cells}
    return [[value[(a, h)] for a in autos] for h in humans]


def test_report_figures_are_readable(live_server, browser, tmp_path, monkeypatch):
    """Every system name whole and inside the figure, axis titles on every axis, a "How to read this" under each
    figure, the page's numbers in the Python formatter's format, the warnings the grid needs, and a switch between
    Pearson, Spearman and Kendall that redraws the grid."""
    run = _demo_report(tmp_path, monkeypatch)
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    _log_in(page, live_server, f"/research/runs/{run.pk}/report/")
    for figure in FIGURES:
        wait_drawn(page, figure)

    systems_visible(page, run)
    # the heatmap's measure names too (a long HJ name was once cut off on the left)
    heatmap_box = page.locator("#fig-heatmap").bounding_box()
    for label in _boxes(page, "#fig-heatmap .yaxislayer-above .ytick text, #fig-heatmap .xaxislayer-above .xtick text"):
        assert heatmap_box["x"] <= label["box"][0] and label["box"][2] <= heatmap_box["x"] + heatmap_box["width"]
    assert {label["text"] for label in _boxes(page, "#fig-heatmap .yaxislayer-above .ytick text")} == {"HJ (ROUGE-L)"}

    # an axis title on every axis, and one line on how to read each figure
    for figure in FIGURES:
        for axis in ("xtitle", "ytitle"):
            titles = [t["text"].strip() for t in _boxes(page, f"#{figure} .{axis}")]
            assert titles and all(titles), (figure, axis)
        how = page.locator(f"#{figure} ~ p.how").first
        assert how.is_visible() and how.inner_text().startswith("How to read this:"), figure

    # the figures' numbers are the tables' numbers: built with metaeval.core.display's formatter (no second one in
    # the script), the drawn hover texts are the formatter's on the report's values
    board = {(r["system"], r["measure"]): r for r in run.report["leaderboard"]}
    for trace in page.evaluate("() => document.getElementById('fig-leaderboard').data"):
        measure = next(m for m in {r["measure"] for r in run.report["leaderboard"]}
                       if display.measure_name(m) == trace["name"])
        for (system, value, low, high), x in zip(trace["customdata"], trace["x"], strict=True):
            row = board[(system, measure)]
            assert x == row["value"] and [value, low, high] == [display.fmt_number(row[k]) for k in
                                                                ("value", "low", "high")]
    assert page.evaluate("() => typeof window.PerSEvalReport.select") == "function"

    # the grid: Pearson first, with the warnings the numbers call for
    view = display.correlation_view(run.report)
    assert view is not None
    warnings = {entry["method"]: entry["warnings"] for entry in view["methods"]}

    def shows(method: str) -> None:
        heatmap = page.evaluate("() => document.getElementById('fig-heatmap').data[0]")
        assert heatmap["z"] == _grid(run, method)
        first = next(c for c in run.report["correlations"] if c["method"] == method)
        assert heatmap["text"][0][0].startswith(f"<b>{display.fmt_number(first['r'])}</b>")
        assert page.is_visible(f"#corr-grid-{method}")
        assert page.locator(f"#corr-grid-{method} tbody tr td").nth(2).inner_text() == display.fmt_number(first["r"])
        for other in ("pearson", "spearman", "kendall"):
            if other != method:
                assert not page.is_visible(f"#corr-grid-{other}")
        shown = page.locator(".corr-warnings:visible")
        assert shown.count() == (1 if warnings[method] else 0)
        if warnings[method]:
            assert [item.inner_text() for item in shown.locator("li").all()] == warnings[method]
        assert display.method_name(method).split()[0] in (page.text_content("#fig-beta .ytitle") or "")

    shows("pearson")
    page.click("#method-switch label:has-text('Spearman')")
    page.wait_for_function("() => document.getElementById('fig-heatmap').layout.title.text.includes('Spearman')")
    shows("spearman")
    page.locator("#section-correlations").screenshot(path=str(SHOTS / "report-correlations-spearman.png"))
    page.click("#method-switch label:has-text('Pearson')")
    page.wait_for_function("() => document.getElementById('fig-heatmap').layout.title.text.includes('Pearson')")
    shows("pearson")
    # on a phone too: the names stay whole, the legend moves under the plot
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    wait_drawn(page, "fig-leaderboard")
    systems_visible(page, run)
    page.locator("#fig-leaderboard").screenshot(path=str(SHOTS / "report-fig-leaderboard-phone.png"))
    assert errors == []
    context.close()


def systems_visible(page, run: MetaevalRun) -> None:
    """Every system name on the leaderboard's axis: present, whole, inside the figure, left of the plot, apart."""
    figure_box = page.locator("#fig-leaderboard").bounding_box()
    plot_left = page.locator("#fig-leaderboard .nsewdrag").first.bounding_box()["x"]
    labels = _boxes(page, "#fig-leaderboard .yaxislayer-above .ytick text")
    assert sorted(label["text"] for label in labels) == sorted({row["system"] for row in run.report["leaderboard"]})
    for label in labels:
        left, top, right, bottom = label["box"]
        assert right - left > 5 * len(label["text"]), label  # drawn at full length
        assert figure_box["x"] <= left and right <= plot_left + 1, label  # not clipped, not under the plot
        assert figure_box["y"] <= top and bottom <= figure_box["y"] + figure_box["height"], label
    ordered = sorted(labels, key=lambda label: label["box"][1])
    for upper, lower in zip(ordered, ordered[1:], strict=False):
        assert lower["box"][1] >= upper["box"][3] - 0.5, (upper, lower)  # no label over another


#: records, from the first script on, when each figure element first holds a drawn plot (as the benchmark does)
DRAW_ORDER = """
window.__drawn = [];
new MutationObserver(() => {
  document.querySelectorAll("[id^='fig-']").forEach((el) => {
    if (!window.__drawn.includes(el.id) && el.querySelector('.main-svg')) { window.__drawn.push(el.id); }
  });
}).observe(document, {childList: true, subtree: true});
"""


def test_report_draws_the_first_screen_first_then_the_rest_then_the_tables(live_server, browser, tmp_path,
                                                                           monkeypatch):
    """Nothing scrolled: the figures on the first screen are drawn first, the others one at a time top to bottom
    (before the reader reaches them), then the tables (sent as text) are put in place; the keyboard drives the
    switches, and a switch redraws what was drawn."""
    run = _demo_report(tmp_path, monkeypatch)
    context = browser.new_context(viewport={"width": 1280, "height": 700})
    context.add_init_script(DRAW_ORDER)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    _log_in(page, live_server, f"/research/runs/{run.pk}/report/")
    page.wait_for_selector("#fig-leaderboard .main-svg", timeout=20000)
    in_page = page.evaluate("""() => {  // the figure elements with a figure to draw, top to bottom
        const figures = JSON.parse(document.getElementById('report-figures').textContent);
        const key = (id) => Object.keys(figures).find((k) => k.split('@')[0] === id);
        return Array.from(document.querySelectorAll('.fig')).map((el) => el.id).filter((id) => key(id)
            && !(figures[key(id)].layout.meta || {}).empty); }""")
    assert set(FIGURES) <= set(in_page)
    page.wait_for_function("(n) => window.__drawn.length === n", arg=len(in_page), timeout=60000)
    assert page.evaluate("() => window.scrollY") == 0
    order = page.evaluate("() => window.__drawn")
    assert order[0] == "fig-leaderboard" and order == in_page, order  # top to bottom, the first screen first
    # the tables: text until the figures are drawn, then in place (the rater agreement's table among them)
    page.wait_for_function("() => !document.getElementById('report-tables')", timeout=20000)
    tables = page.evaluate("() => document.querySelectorAll('#section-tables details table.grid').length")
    assert tables == len(run.report["tables"]) > 0
    marks = page.evaluate("""() => ['plotly-ready', 'report-tables'].map(
        (name) => performance.getEntriesByName(name)[0].startTime)""")
    assert marks[0] < marks[1]
    # the keyboard: the coefficient switch, then the next coefficient redraws the heatmap and the beta curves
    page.focus("#method-switch input[value=pearson]")
    heatmap = page.evaluate("() => document.getElementById('fig-heatmap').data[0].z")
    assert heatmap == _grid(run, "pearson")
    page.keyboard.press("ArrowRight")  # the next coefficient, by the keyboard
    page.wait_for_function("() => document.getElementById('fig-heatmap').layout.title.text.includes('Spearman')")
    assert page.evaluate("() => document.getElementById('fig-heatmap').data[0].z") == _grid(run, "spearman")
    page.wait_for_function("() => document.getElementById('fig-beta').layout.title.text.includes('Spearman')")
    raters = page.evaluate("() => document.getElementById('fig-raters').data.map((t) => t.y)")
    per_rater = run.report["raters"]["per_rater"]
    assert raters == [[r["agreement"] for r in per_rater], [r["alpha_without"] for r in per_rater]]
    assert errors == []
    context.close()


def test_report_tables_come_at_once_for_a_link_to_one_and_for_printing(live_server, browser, tmp_path, monkeypatch):
    """A link to a table (#table-<name>) puts the tables in place at once, opens that table and shows it; printing
    (beforeprint) puts them in place before the figures are all drawn."""
    run = _demo_report(tmp_path, monkeypatch)
    name = sorted(run.report["tables"])[-1]
    context = browser.new_context(viewport={"width": 1280, "height": 700})
    page = context.new_page()
    _log_in(page, live_server, f"/research/runs/{run.pk}/report/%23table-{name}")
    page.wait_for_selector(f"#table-{name}[open] table.grid", timeout=20000)
    page.wait_for_function(f"() => document.getElementById('table-{name}').getBoundingClientRect().top < 700")
    assert page.evaluate("() => window.scrollY") > 0
    page.close()
    # printing: a page whose plotly.js never arrives still prints its tables
    page = context.new_page()
    page.route("**/vendor/plotly-*", lambda route: route.abort())
    page.goto(f"{live_server.url}/research/runs/{run.pk}/report/")
    page.wait_for_selector("#section-tables")
    assert page.locator("#report-tables").count() == 1 and page.locator("#section-tables table.grid").count() == 0
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    assert page.locator("#report-tables").count() == 0
    assert page.locator("#section-tables table.grid").count() == len(run.report["tables"])
    context.close()


def test_served_tables_are_fetched_once_and_a_failed_fetch_says_so(live_server, browser, tmp_path, monkeypatch):
    """The served page holds no table: report.js fetches the tables' HTML once (report/tables.html) and puts every
    table in place; when that fails (a server error, or a session that ended: the login page), the tables' place
    says so and nothing else is put there."""
    run = _demo_report(tmp_path, monkeypatch)
    context = browser.new_context(viewport={"width": 1280, "height": 700})
    page = context.new_page()
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url) if "/tables.html" in request.url else None)
    _log_in(page, live_server, f"/research/runs/{run.pk}/report/")
    page.wait_for_function("() => !document.getElementById('report-tables')", timeout=30000)
    assert page.locator("#section-tables details table.grid").count() == len(run.report["tables"])
    assert fetched == [f"{live_server.url}/research/runs/{run.pk}/report/tables.html"]
    login = f"{live_server.url}/accounts/login/"
    for answer in ({"status": 500, "body": "boom"}, {"status": 302, "headers": {"Location": login}}):
        failing = context.new_page()
        failing.route("**/report/tables.html", _answer(answer))
        failing.goto(f"{live_server.url}/research/runs/{run.pk}/report/")
        failing.wait_for_function("() => document.getElementById('report-tables').textContent.includes('could not')",
                                  timeout=30000)
        assert failing.locator("#section-tables details").count() == 0
        assert failing.locator("#section-tables input[name=password]").count() == 0, answer
        failing.close()
    context.close()


def _answer(answer: dict):  # type: ignore[no-untyped-def]
    """A route handler that answers every request so."""
    return lambda route: route.fulfill(**answer)
