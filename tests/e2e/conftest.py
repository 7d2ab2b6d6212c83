"""Browser fixtures: Debian chromium, headless, driven by Playwright."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = Path(settings.BASE_DIR) / "artifacts" / "screenshots"


@pytest.fixture(scope="module")
def _chromium():
    """One chromium per test module (its launch costs a second or more under load); each test gets fresh contexts
    through ``browser``."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (make browser) or set CHROMIUM_PATH")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
            # Queries made while Playwright's sync API is active run in another context and so on
            # their own connection; close them, or PostgreSQL refuses to drop the test database.
            connections.close_all()


@pytest.fixture
def browser(_chromium):
    """The module's chromium; every context (and so page, cookie and storage) a test opened is closed after it, so
    no test sees another's pages, and no page of a finished test keeps polling."""
    yield _chromium
    for context in list(_chromium.contexts):
        context.close()


def wait_drawn(page, figure: str, timeout: int = 20000) -> None:
    """Scroll the report figure ``figure`` (an element id) into view and wait until plotly has drawn it: the report
    page draws a figure when the reader reaches it (metaeval/static/metaeval/report.js)."""
    page.locator(f"#{figure}").scroll_into_view_if_needed()
    page.wait_for_selector(f"#{figure} .main-svg", timeout=timeout)
