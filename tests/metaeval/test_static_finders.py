"""plotly.js from the plotly package (metaeval.assets, metaeval.static_finders): found, listed for collectstatic,
checked (missing package, another bundle), and named in the offline report's error when missing."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command

from metaeval import selectors, static_finders
from metaeval.assets import PLOTLY_JS, PLOTLY_PYPI_VERSION, PLOTLY_SHA256, PLOTLY_VERSION, bundle_version, plotly_bundle


def test_the_installed_package_bundles_the_tested_plotly_js() -> None:
    bundle = plotly_bundle()
    assert bundle is not None and bundle.name == "plotly.min.js" and bundle.parent.name == "package_data"
    assert bundle_version(bundle) == PLOTLY_VERSION
    assert hashlib.sha256(bundle.read_bytes()).hexdigest() == PLOTLY_SHA256
    requirements = (Path(__file__).resolve().parents[2] / "requirements.txt").read_text(encoding="utf-8")
    assert f"\nplotly=={PLOTLY_PYPI_VERSION}\n" in requirements  # the one pin, and assets.py names it


def test_static_finders_find_it_under_the_versioned_name_only() -> None:
    assert finders.find(PLOTLY_JS) == str(plotly_bundle())
    assert static_finders.PlotlyFinder().find(PLOTLY_JS, find_all=True) == [str(plotly_bundle())]
    assert static_finders.PlotlyFinder().find("vendor/plotly.min.js") == []
    assert finders.find("vendor/plotly.min.js") is None
    assert static_finders.PlotlyFinder().find("vendor/widgetbundle.js", find_all=True) == []
    assert static_finders.PlotlyFinder().check() == []


def test_collectstatic_copies_it_under_the_versioned_name(tmp_path, settings) -> None:
    settings.STATIC_ROOT = str(tmp_path)
    listed = [(path, storage.prefix) for path, storage in static_finders.PlotlyFinder().list(None)]
    assert listed == [(PLOTLY_JS.split("/")[-1], "vendor")]
    call_command("collectstatic", "--noinput", "-v0")
    copied = tmp_path / PLOTLY_JS
    assert copied.read_bytes() == plotly_bundle().read_bytes()  # type: ignore[union-attr]
    assert not (tmp_path / "vendor" / "plotly.min.js").exists()
    assert not (tmp_path / "vendor" / "widgetbundle.js").exists()


def test_check_names_the_fix_when_the_package_is_missing_or_another_version(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(static_finders, "plotly_bundle", lambda: None)
    [missing] = static_finders.PlotlyFinder().check()
    assert missing.id == "metaeval.E001" and f"pip install plotly=={PLOTLY_PYPI_VERSION}" in missing.hint
    other = tmp_path / "plotly.min.js"
    other.write_text("/**\n* plotly.js v3.7.0\n*/\n", encoding="utf-8")
    monkeypatch.setattr(static_finders, "plotly_bundle", lambda: other)
    [wrong] = static_finders.PlotlyFinder().check()
    assert wrong.id == "metaeval.E002" and "is plotly.js 3.7.0, not the tested 4.1.1" in wrong.msg


def test_offline_report_says_how_to_get_it_when_missing(monkeypatch) -> None:
    monkeypatch.setattr(static_finders, "plotly_bundle", lambda: None)
    monkeypatch.setattr("metaeval.assets.plotly_bundle", lambda: None)
    with pytest.raises(FileNotFoundError, match=rf"vendor/plotly-{PLOTLY_VERSION}.min.js is missing. Fix: .*pip"):
        selectors.static_text(PLOTLY_JS)


def test_served_in_debug_and_tests_and_a_missing_name_is_404(client) -> None:
    """whitenoise with finders (debug, tests): the bundle under the versioned name; a name no finder has is 404,
    not an error (a finder answers [] for a miss)."""
    response = client.get(f"/static/{PLOTLY_JS}")
    assert response.status_code == 200
    assert b"".join(response.streaming_content).startswith(f"/**\n* plotly.js v{PLOTLY_VERSION}\n".encode())
    assert client.get("/static/vendor/no-such-file.js").status_code == 404
