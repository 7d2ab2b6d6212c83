"""The stored judgment-sets table stays inside its card (issue 29: at 1360 px the demo's set, ten systems and a
long description, spilled out of it): at 1360 px it fits whole; at narrower widths it scrolls inside the card,
and the page does not scroll sideways."""
from __future__ import annotations

import os

import pytest
from django.core.management import call_command

from metaeval.models import JudgmentSet
from tests.e2e.test_report_browser import RESEARCHER_PASSWORD, _log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

EDGES = """() => {
  const card = document.getElementById("judgment-sets");
  const style = getComputedStyle(card);
  const box = card.getBoundingClientRect();
  const table = document.getElementById("judgment-set-table").getBoundingClientRect();
  const frame = document.getElementById("judgment-set-table").parentElement.getBoundingClientRect();
  return {inner: box.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth),
          table: table.right, frame: frame.right,
          page: document.documentElement.scrollWidth, window: window.innerWidth};
}"""


def test_the_judgment_sets_table_stays_in_its_card(live_server, browser, monkeypatch):
    monkeypatch.setenv("DEMO_RESEARCHER_PASSWORD", RESEARCHER_PASSWORD)  # DEBUG off: not the published ones
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", RESEARCHER_PASSWORD + "-admin")
    call_command("load_demo", participants=0, sets_each=0, stdout=open(os.devnull, "w"))
    assert len(JudgmentSet.objects.get(name="demo").systems) >= 10
    for width in (1360, 1024, 390):
        page = browser.new_page(viewport={"width": width, "height": 900})
        _log_in(page, live_server, "/research/runs/judgments/")
        page.wait_for_selector("#judgment-set-table tr[data-name=demo]")
        edges = page.evaluate(EDGES)
        assert edges["frame"] <= edges["inner"] + 0.5, (width, edges)
        if width >= 1024:  # (on a phone the page's help texts are wider than the window, the table is not)
            assert edges["page"] <= edges["window"], (width, edges)
        if width >= 1360:
            assert edges["table"] <= edges["inner"] + 0.5, (width, edges)  # whole, no scrolling needed
        page.close()
