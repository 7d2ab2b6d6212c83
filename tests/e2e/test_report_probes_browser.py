"""A report of MODEL:STYLE systems in a real browser: the prompt-probes grid is drawn (every model and style on
its axes, the cells the section's EGISES), the adversarial worsening and e-DINS-HJ are on the page."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from metaeval.models import MetaevalRun
from tests.e2e.conftest import SHOTS, wait_drawn
from tests.metaeval.test_views_report_probes import styled_run  # noqa: F401 (fixture)
from tests.metaeval.test_views_runs import isolated  # noqa: F401 (fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_probe_grid_is_drawn(live_server, browser, styled_run: MetaevalRun):  # noqa: F811 (fixture)
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("prober", password="prober-pass-123")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/?next=/research/runs/{styled_run.pk}/report/")
    page.fill("input[name=username]", "prober")
    page.fill("input[name=password]", "prober-pass-123")
    page.click("button[type=submit]")
    wait_drawn(page, "fig-probes-grid")
    section = styled_run.report["probes"]
    ticks = page.evaluate("""() => ['x', 'y'].map((axis) => Array.from(document.querySelectorAll(
        `#fig-probes-grid .${axis}axislayer-above .${axis}tick text`)).map((el) => el.textContent))""")
    assert ticks[0] == section["styles"] and sorted(ticks[1]) == sorted(section["models"])  # y drawn top down
    assert page.evaluate("() => document.getElementById('fig-probes-grid').data[0].y") == section["models"]
    assert section["styles"][-1] == "c-0-shot-adversarial"
    drawn = page.evaluate("() => document.getElementById('fig-probes-grid').data[0].z")
    for cell in section["grid"]:
        row, column = section["models"].index(cell["model"]), section["styles"].index(cell["style"])
        assert drawn[row][column] == pytest.approx(cell["egises"], abs=1e-12), cell
    missing = {(m, s) for m in section["models"] for s in section["styles"]} - {
        (cell["model"], cell["style"]) for cell in section["grid"]}
    assert missing and all(drawn[section["models"].index(m)][section["styles"].index(s)] is None for m, s in missing)
    # darker = lower EGISES, as the title and the reading note say: the colour at the scale's low end is the darker
    scale = page.evaluate("""() => { const t = document.getElementById('fig-probes-grid')._fullData[0];
        return {scale: t.colorscale, reversed: !!t.reversescale}; }""")
    ends = [scale["scale"][0][1], scale["scale"][-1][1]]
    if scale["reversed"]:
        ends.reverse()
    low, high = ([int(v) for v in colour[colour.index("(") + 1:-1].split(",")[:3]] for colour in ends)
    assert sum(low) < sum(high), scale
    for axis in ("xtitle", "ytitle"):
        expect(page.locator(f"#fig-probes-grid .{axis}")).not_to_be_empty()
    expect(page.locator("#fig-probes-grid ~ p.how").first).to_contain_text("How to read this:")
    expect(page.locator("#probes-adversarial tbody tr")).to_have_count(1)
    expect(page.locator("#probes-adversarial tbody tr th")).to_have_text("m2")
    expect(page.locator("#edins-hj-agreement")).to_contain_text("e-DINS-HJ")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#section-probes").screenshot(path=str(SHOTS / "report-probes.png"))
    assert errors == []
