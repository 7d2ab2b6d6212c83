"""The static assets the report pages need and their one version.

plotly.js is vendored in the package: ``metaeval/static/<PLOTLY_JS>`` is a minified partial bundle of the npm
package ``plotly.js`` with only the trace types the report draws (PLOTLY_TRACES; 1.06 MB where plotly's cartesian
bundle is 1.50 MB and the full bundle of the PyPI ``plotly`` package 4.8 MB), the same plotly.js release as the one
the Python ``plotly`` package (which builds the figures) bundles. It is committed, so neither ``make install`` nor
``make run`` needs npm or a CDN; ``scripts/vendor_plotly.sh`` rebuilds it (``npm ci`` of the pinned plotly.js and
esbuild in ``scripts/plotly_bundle/``) and checks PLOTLY_SHA256. Django's app-directories finder serves it
(runserver, whitenoise, ``collectstatic``), the offline HTML report inlines it, and the system check of
:mod:`metaeval.checks` reports a missing or changed file.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

#: the plotly.js release the report pages are tested with, and the PyPI ``plotly`` release that bundles it (the
#: Python figures are built for that plotly.js)
PLOTLY_VERSION = "4.1.1"
PLOTLY_PYPI_VERSION = "7.1.0"
#: the npm package the vendored bundle is built from (``scripts/plotly_bundle/package.json`` pins it)
PLOTLY_NPM_PACKAGE = "plotly.js"
#: the trace types in the bundle (``scatter`` is plotly.js's core): every figure a page draws uses only these
PLOTLY_TRACES = ("scatter", "bar", "heatmap")
#: SHA-256 of the bundle ``scripts/vendor_plotly.sh`` builds, the vendored file
PLOTLY_SHA256 = "44e2ca35d71994a4cdb659e89163ec0e8d8849c5c42712842a7737de5e5398d0"
#: paths under static/ (the package's ``metaeval/static/``): the bundle and plotly.js's MIT licence
PLOTLY_JS = f"vendor/plotly-report-{PLOTLY_VERSION}.min.js"
PLOTLY_LICENSE = f"vendor/plotly-report-{PLOTLY_VERSION}.LICENSE.txt"
REPORT_JS = "metaeval/report.js"
#: the bundle's first comment names it so (tests and the offline HTML report look for it)
PLOTLY_BANNER = f"plotly.js ({', '.join(PLOTLY_TRACES)} - minified) v{PLOTLY_VERSION}"

STATIC_DIR = Path(__file__).resolve().parent / "static"
PLOTLY_FIX = ("Fix: restore the committed file (`git checkout -- metaeval/static/vendor/`) or re-download it with "
              "`scripts/vendor_plotly.sh` (npm ci and esbuild, checks the SHA-256).")
_HEADER = re.compile(rb"plotly\.js (?:\([^)]*\) )?v(\d+\.\d+\.\d+\S*)")


def plotly_bundle() -> Path:
    """The vendored plotly.js (it may be missing from a broken checkout: see :func:`plotly_problem`)."""
    return STATIC_DIR / PLOTLY_JS


def bundle_version(path: Path) -> str | None:
    """The plotly.js version in the bundle's licence header (``plotly.js (scatter, bar, heatmap - minified) v4.1.1`` or
    ``plotly.js v4.1.1``), or None."""
    with path.open("rb") as handle:
        match = _HEADER.search(handle.read(512))
    return match.group(1).decode("ascii") if match else None


def plotly_problem(path: Path | None = None) -> str | None:
    """What is wrong with the vendored plotly.js (missing, or not the pinned file), or None when it is the one
    tested."""
    path = path or plotly_bundle()
    if not path.is_file():
        return f"{path} is missing, so the report pages have no plotly.js"
    if hashlib.sha256(path.read_bytes()).hexdigest() != PLOTLY_SHA256:
        return (f"{path} is plotly.js {bundle_version(path) or '(no version header)'}, not the tested "
                f"{PLOTLY_BANNER} (its SHA-256 differs from PLOTLY_SHA256)")
    return None
