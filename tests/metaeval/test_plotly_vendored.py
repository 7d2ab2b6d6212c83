"""The vendored plotly.js (metaeval.assets, metaeval.checks): the pinned file with its licence, the plotly.js the
Python figures are built for, found by the app-directories finder, collected, served, checked (missing, changed)
and named in the offline report's error when missing."""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import plotly
import pytest
from django.contrib.staticfiles import finders
from django.core import checks
from django.core.management import call_command

from metaeval import assets, selectors
from metaeval.assets import (
    PLOTLY_BANNER,
    PLOTLY_JS,
    PLOTLY_LICENSE,
    PLOTLY_PYPI_VERSION,
    PLOTLY_SHA256,
    PLOTLY_TRACES,
    PLOTLY_VERSION,
    bundle_version,
    plotly_bundle,
)
from metaeval.checks import plotly_vendored

ROOT = Path(__file__).resolve().parents[2]


def test_the_vendored_file_is_the_pinned_partial_bundle_with_its_licence() -> None:
    bundle = plotly_bundle()
    assert bundle == ROOT / "metaeval" / "static" / PLOTLY_JS and bundle.is_file()
    body = bundle.read_bytes()
    assert hashlib.sha256(body).hexdigest() == PLOTLY_SHA256
    assert body.startswith(f"/**\n* {PLOTLY_BANNER}\n".encode()) and bundle_version(bundle) == PLOTLY_VERSION
    assert 900_000 < len(body) < 1_200_000  # the report's trace types, not the cartesian (1.5 MB) or full (4.8 MB)
    assert PLOTLY_BANNER == f"plotly.js (scatter, bar, heatmap - minified) v{PLOTLY_VERSION}"
    licence = (ROOT / "metaeval" / "static" / PLOTLY_LICENSE).read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "Plotly" in licence
    assert assets.plotly_problem() is None


def test_the_python_figures_are_built_for_the_vendored_plotly_js() -> None:
    """The Python ``plotly`` (pinned) bundles the same plotly.js release: the figures' JSON is for that release."""
    assert plotly.__version__ == PLOTLY_PYPI_VERSION
    assert plotly.offline.get_plotlyjs_version() == PLOTLY_VERSION
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert f"\nplotly=={PLOTLY_PYPI_VERSION}\n" in requirements  # the one pin, and assets.py names it


def test_the_vendor_script_builds_what_assets_pins() -> None:
    """scripts/vendor_plotly.sh reads the package, version, traces and hash from metaeval.assets (one definition) and
    builds with the plotly.js and esbuild that scripts/plotly_bundle/ pins (exact versions, a lockfile)."""
    script = (ROOT / "scripts" / "vendor_plotly.sh").read_text(encoding="utf-8")
    assert "from metaeval import assets as a" in script and "a.PLOTLY_SHA256" in script and "a.PLOTLY_TRACES" in script
    assert "npm ci --ignore-scripts" in script and '!= "$sha"' in script and '!= "$version"' in script
    result = subprocess.run(["bash", "-n", str(ROOT / "scripts" / "vendor_plotly.sh")], capture_output=True)
    assert result.returncode == 0, result.stderr
    folder = ROOT / "scripts" / "plotly_bundle"
    pins = json.loads((folder / "package.json").read_text(encoding="utf-8"))["dependencies"]
    assert pins["plotly.js"] == PLOTLY_VERSION and re.fullmatch(r"\d+\.\d+\.\d+", pins["esbuild"])
    locked = json.loads((folder / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    assert locked["node_modules/plotly.js"]["version"] == PLOTLY_VERSION
    assert locked["node_modules/esbuild"]["version"] == pins["esbuild"]
    assert all(trace.isidentifier() for trace in PLOTLY_TRACES) and PLOTLY_TRACES[0] == "scatter"  # plotly's core


def test_found_in_the_app_and_collected_under_its_versioned_name(tmp_path, settings) -> None:
    assert finders.find(PLOTLY_JS) == str(plotly_bundle())
    assert finders.find("vendor/plotly.min.js") is None
    settings.STATIC_ROOT = str(tmp_path)
    call_command("collectstatic", "--noinput", "-v0")
    assert (tmp_path / PLOTLY_JS).read_bytes() == plotly_bundle().read_bytes()
    assert (tmp_path / PLOTLY_LICENSE).is_file()


def test_the_check_passes_and_is_registered() -> None:
    assert plotly_vendored() == []
    assert plotly_vendored in checks.registry.registry.get_checks()


def test_the_check_names_the_fix_when_the_file_is_missing_or_changed(tmp_path, monkeypatch) -> None:
    missing_path = tmp_path / "plotly-report.min.js"
    monkeypatch.setattr(assets, "plotly_bundle", lambda: missing_path)
    [missing] = plotly_vendored()
    assert missing.id == "metaeval.E001" and "is missing" in missing.msg
    assert "scripts/vendor_plotly.sh" in missing.hint and "git checkout" in missing.hint
    missing_path.write_text("/**\n* plotly.js v3.7.0\n*/\n", encoding="utf-8")
    [wrong] = plotly_vendored()
    assert wrong.id == "metaeval.E002" and f"is plotly.js 3.7.0, not the tested {PLOTLY_BANNER}" in wrong.msg


def test_offline_report_says_how_to_get_it_when_missing(settings) -> None:
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]
    settings.STATICFILES_DIRS = []
    with pytest.raises(FileNotFoundError, match=rf"{PLOTLY_JS} is missing. Fix: .*vendor_plotly.sh"):
        selectors.static_text(PLOTLY_JS)


def test_served_in_debug_and_tests_is_the_vendored_file(client) -> None:
    """whitenoise with finders (debug, tests): the vendored bytes, with the pinned hash; another name is 404."""
    response = client.get(f"/static/{PLOTLY_JS}")
    assert response.status_code == 200
    assert hashlib.sha256(b"".join(response.streaming_content)).hexdigest() == PLOTLY_SHA256
    assert client.get("/static/vendor/no-such-file.js").status_code == 404
