"""Names in the report's figures are text, never markup: plotly.js reads some HTML in the strings it draws (``<a
href>`` becomes a clickable link, ``<b>`` bold), so a system, criterion or rater name that holds such tags must show
literally, in the axis labels, the legends and the hover labels of every figure."""
from __future__ import annotations

import csv
import io
import itertools

import pytest

from metaeval import services
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun
from tests.conftest import build_dataset, build_study
from tests.e2e.conftest import wait_drawn
from tests.metaeval.test_views_runs import rate_all

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
LINK = '<a href="https://example.org">x</a>'
BOLD = "Tom & <b>Jerry</b>"
SYSTEMS = (LINK, BOLD, "PlainSystem")
CRITERION = "<i>tone</i>"
PASSWORD = "names-report-pass-1"
FIGURES = ("fig-leaderboard", "fig-raters", "fig-pairwise-forest", "fig-pairwise-heatmap",
           "fig-pairwise-consistency")


def _judgments() -> bytes:
    """A pairwise judgment file of the three systems under the criterion named with tags."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["case_id", "criterion", "model_a", "model_b", "winner"])
    rows = 0
    for case in range(12):
        for a, b in itertools.combinations(SYSTEMS, 2):
            writer.writerow([f"c{case}", CRITERION, a, b, "model_a" if (case + rows) % 3 else "model_b"])
            rows += 1
    return out.getvalue().encode()


def _report(tmp_path, monkeypatch) -> MetaevalRun:
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "cache"))
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("names-researcher", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    study = build_study(build_dataset(name="names", docs=3, readers=3, systems=SYSTEMS), per_q=3)
    rate_all(study, participants=3)
    judgment_set = services.judgment_set_import(name="names", data=_judgments(), file_name="names.csv")
    run = services.run_enqueue(
        dataset=study.dataset, study=study, options=RunOptions(measures=["rouge_l"], aux=["rouge_l"]), kind="report",
        seed=3, report={"n_boot": 50, "n_permutations": 20, "stability_samples": 2}, judgment_set=judgment_set)
    services.run_launch(run)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


TEXTS = "els => els.map(e => e.textContent)"


def _squeezed(text: str) -> str:
    return "".join(text.split())


def test_html_in_names_shows_as_text_in_every_figure(live_server, browser, tmp_path, monkeypatch, settings):
    """A system named with a link and one with bold tags, and a criterion in italics: no <a>, <b> or <i> element in
    any figure, and the names read literally on the axes, in the legend, the titles and a hover label."""
    settings.METAEVAL_RUN_LAUNCHER = "inline"
    run = _report(tmp_path, monkeypatch)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/?next=/research/runs/{run.pk}/report/")
    page.fill("input[name=username]", "names-researcher")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    for figure in FIGURES:
        wait_drawn(page, figure)
    assert errors == []
    # no link, bold or italic element anywhere in a figure's drawing
    assert page.locator(".js-plotly-plot svg a").count() == 0
    for figure in ("fig-leaderboard", "fig-pairwise-forest", "fig-pairwise-heatmap"):
        ticks = page.eval_on_selector_all(f"#{figure} .yaxislayer-above .ytick text", TEXTS)
        assert sorted(_squeezed(t) for t in ticks) == sorted(_squeezed(s) for s in SYSTEMS), (figure, ticks)
    legend = page.eval_on_selector_all("#fig-pairwise-consistency .legendtext", TEXTS)
    assert any(LINK in text for text in legend) and any(BOLD in text for text in legend), legend
    # the criterion switch: the pairwise figures of the criterion named with tags carry it in their titles
    page.check(f"#criterion-switch input[value='{CRITERION}']")
    page.wait_for_function("(c) => document.querySelector('#fig-pairwise-forest .gtitle').textContent.includes(c)",
                           arg=CRITERION)
    assert page.locator(".js-plotly-plot svg a, .js-plotly-plot svg text i").count() == 0
    # the hover label of the leaderboard's first point names the system literally
    page.hover("#fig-leaderboard .points path >> nth=0", force=True)  # plotly's drag layer takes the events
    page.wait_for_selector("#fig-leaderboard .hoverlayer .hovertext", timeout=5000)
    hover = page.eval_on_selector("#fig-leaderboard .hoverlayer .hovertext", "e => e.textContent")
    assert any(name in hover for name in SYSTEMS), hover
    assert page.locator("#fig-leaderboard .hoverlayer a").count() == 0
