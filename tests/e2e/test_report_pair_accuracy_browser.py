"""A researcher reads Table 2's pairwise-accuracy view of the demo report in a real browser (issue 33): the two
figures built in Python are drawn with report.json's numbers, the tables show report.json's values in the report's
number format, the reading note says which statistic answers which question, and the downloaded HTML shows the
same offline. Screenshot: artifacts/screenshots/report-pair-accuracy.png."""
from __future__ import annotations

import pytest

from metaeval.core import display
from tests.e2e.conftest import SHOTS, wait_drawn
from tests.e2e.test_report_browser import _demo_report, _log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
SCREENSHOT = SHOTS / "report-pair-accuracy.png"


def _cells(page, selector: str) -> list[list[str]]:
    return page.evaluate("""(selector) => Array.from(document.querySelectorAll(selector + ' tbody tr')).map(
        (tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.innerText.trim()))""", selector)


def _interval(row: dict, name: str) -> str:
    return f"{display.fmt_number(row[f'{name}_low'])} to {display.fmt_number(row[f'{name}_high'])}"


def _check_view(page, report: dict) -> None:
    """The view's tables and figures against report.json."""
    tables = report["tables"]
    systems = [r for r in tables["pair_accuracy"] if r["level"] == "system"]
    documents = [r for r in tables["pair_accuracy"] if r["level"] == "document"]
    fmt = display.fmt_number
    assert _cells(page, "#pair-accuracy-table") == [[
        display.measure_name(r["metric"]), display.measure_name(r["human"]), fmt(r["pairs"]), fmt(r["accuracy"]),
        _interval(r, "accuracy"), fmt(r["acc_eq"]), _interval(r, "acc_eq"), fmt(r["epsilon"]), fmt(r["spa"]),
        _interval(r, "spa"), ""] for r in systems]
    assert _cells(page, "#pair-accuracy-documents") == [[
        display.measure_name(r["metric"]), display.measure_name(r["human"]), fmt(r["documents"]), fmt(r["pairs"]),
        fmt(r["accuracy"]), _interval(r, "accuracy"), fmt(r["acc_eq"]), _interval(r, "acc_eq"), fmt(r["epsilon"])]
        for r in documents]
    assert _cells(page, "#close-pairs-table") == [[
        display.measure_name(r["metric"]), display.measure_name(r["human"]),
        display.bucket_name(r["bucket_low"], r["bucket_high"]), fmt(r["pairs"]), fmt(r["accuracy"]),
        fmt(r["acc_eq"]), fmt(r["pearson"]), fmt(r["spearman"]), fmt(r["kendall"])] for r in tables["close_pairs"]]
    for figure in ("fig-pair-accuracy", "fig-close-pairs"):
        wait_drawn(page, figure)
        for axis in ("xtitle", "ytitle"):
            assert page.text_content(f"#{figure} .{axis}").strip(), (figure, axis)
    drawn = page.evaluate("() => document.getElementById('fig-pair-accuracy').data.map((t) => ({name: t.name, "
                          "x: t.x, minus: t.error_x.arrayminus}))")
    assert [t["name"] for t in drawn] == ["Pairwise accuracy", "acc<sub>eq</sub> (tie-calibrated)",
                                          "Soft pairwise accuracy"]
    assert drawn[0]["x"] == [r["accuracy"] for r in systems] and drawn[2]["x"] == [r["spa"] for r in systems]
    assert drawn[1]["minus"] == pytest.approx([r["acc_eq"] - r["acc_eq_low"] for r in systems])
    lines = page.evaluate("() => document.getElementById('fig-close-pairs').data.map((t) => t.y)")
    per_line = len(report["pair_accuracy"]["close_pairs"]) - 1
    assert lines == [[r["accuracy"] for r in tables["close_pairs"][k:k + per_line]]
                     for k in range(0, len(tables["close_pairs"]), per_line)]


def test_the_pairwise_accuracy_view_shows_report_json(live_server, browser, tmp_path, monkeypatch):
    run = _demo_report(tmp_path, monkeypatch)
    report = run.report
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    _log_in(page, live_server, f"/research/runs/{run.pk}/report/#pair-accuracy")
    page.wait_for_selector("#pair-accuracy")
    page.locator("#pair-accuracy h3").scroll_into_view_if_needed()
    assert page.locator("#pair-accuracy h3").is_visible()
    assert page.locator("#section-correlations #pair-accuracy").count() == 1  # inside Table 2's section
    _check_view(page, report)
    # the reading note: each statistic with the question it answers
    note = page.locator("#pair-accuracy-note").inner_text()
    assert note.startswith("How to read this: which statistic answers which question.")
    for statistic, question in (
            ("Pairwise accuracy", "if you pick the better of two systems by this measure, how often do you pick the "
                                  "one people prefer?"),
            ("acceq and ε", "does the measure also know when two systems are as good as each other?"),
            ("Soft pairwise accuracy", "is the measure as sure as people?"),
            ("Close pairs", "does the measure still agree when the systems are close?"),
            ("Per document (group-by-item)", "does it order the systems' summaries of one document as people do?")):
        assert f"{statistic}: {question}" in note.replace("\n", " "), statistic
    # the settings and the command that writes the same rows
    about = page.locator("#pair-accuracy > p.muted").first.inner_text()
    assert f"seed {report['parameters']['seed']}" in about and "close-pair buckets from 0, 0.05, 0.1" in about
    command = page.locator("#pair-accuracy-command").inner_text()
    for human in report["parameters"]["hj_measures"]:
        assert report["pair_accuracy"]["commands"][human] in command
    # the whole-report tables list carries the two tables, headed in words
    assert page.locator("#table-pair_accuracy summary").inner_text().startswith(
        "Table 2 · Pairwise accuracy, acc-eq and soft pairwise accuracy")
    assert page.locator("#table-close_pairs th[title='CSV column accuracy']").text_content() == "Pairwise accuracy"
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.locator("#pair-accuracy").screenshot(path=str(SCREENSHOT))
    assert errors == []
    # the downloaded report, offline: the same view
    download = page.request.get(f"{live_server.url}/research/runs/{run.pk}/report.html")
    assert download.ok
    standalone = tmp_path / "report.html"
    standalone.write_bytes(download.body())
    context.set_offline(True)
    offline = context.new_page()
    offline.on("pageerror", lambda error: errors.append(str(error)))
    offline.goto(standalone.as_uri())
    _check_view(offline, report)
    assert errors == []
    context.close()
