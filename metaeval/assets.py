"""The static assets the report pages need and their one version.

plotly.js comes from the Python package ``plotly`` (pinned in requirements.txt), which ships the minified bundle
as ``plotly/package_data/plotly.min.js``: no npm and no CDN. :class:`metaeval.static_finders.PlotlyFinder` serves
that file as ``static/<PLOTLY_JS>`` (runserver, whitenoise, ``collectstatic`` and the offline HTML report read it
through the staticfiles finders) and its system check names the fix when the package is missing or bundles
another plotly.js than PLOTLY_VERSION.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

#: the plotly.js release the report pages are tested with, and the PyPI ``plotly`` release that bundles it
PLOTLY_VERSION = "4.1.1"
PLOTLY_PYPI_VERSION = "7.1.0"
#: SHA-256 of ``plotly/package_data/plotly.min.js`` in plotly 7.1.0's wheel
PLOTLY_SHA256 = "3b6e15d45dbb7fca5bd2094291e961ddc5472cd887009e6009a56dab668d721f"
#: path under static/
PLOTLY_JS = f"vendor/plotly-{PLOTLY_VERSION}.min.js"
REPORT_JS = "metaeval/report.js"

PLOTLY_FIX = f"Fix: `.venv/bin/python -m pip install plotly=={PLOTLY_PYPI_VERSION}` (or `make install`)."
_HEADER = re.compile(rb"plotly\.js v(\d+\.\d+\.\d+\S*)")


def plotly_bundle() -> Path | None:
    """The installed ``plotly`` package's ``plotly.min.js`` (plotly is not imported), or None when it is absent."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "package_data" / "plotly.min.js"
        if path.is_file():
            return path
    return None


def bundle_version(path: Path) -> str | None:
    """The plotly.js version in the bundle's licence header (``plotly.js v4.1.1``), or None."""
    with path.open("rb") as handle:
        match = _HEADER.search(handle.read(512))
    return match.group(1).decode("ascii") if match else None
