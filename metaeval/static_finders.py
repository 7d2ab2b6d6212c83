"""A staticfiles finder for plotly.js from the ``plotly`` Python package (see :mod:`metaeval.assets`).

It answers exactly one name, ``vendor/plotly-<PLOTLY_VERSION>.min.js``, with the package's ``plotly.min.js``, so
``runserver``, whitenoise (with finders in debug and tests) and ``collectstatic`` (production, hashed and
compressed) all serve the same file, and the offline HTML report inlines it. Its ``check()`` (run by Django's
system checks: ``manage.py check``, runserver, migrate) reports a missing package or a bundle of another version.
"""
from __future__ import annotations

import builtins
import hashlib
import posixpath
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.contrib.staticfiles.finders import BaseFinder, searched_locations
from django.core import checks
from django.core.files.storage import FileSystemStorage

from metaeval.assets import (
    PLOTLY_FIX,
    PLOTLY_JS,
    PLOTLY_PYPI_VERSION,
    PLOTLY_SHA256,
    PLOTLY_VERSION,
    bundle_version,
    plotly_bundle,
)


class _BundleStorage(FileSystemStorage):
    """The package's folder, read under the versioned name: ``path(<basename of PLOTLY_JS>)`` is the bundle."""

    def __init__(self, bundle: Path) -> None:
        super().__init__(location=str(bundle.parent))
        self.bundle = bundle
        self.prefix = posixpath.dirname(PLOTLY_JS)  # collectstatic and whitenoise put the name under this folder

    def path(self, name: str) -> str:
        if name != posixpath.basename(PLOTLY_JS):
            raise FileNotFoundError(name)
        return str(self.bundle)


class PlotlyFinder(BaseFinder):
    """Finds ``PLOTLY_JS`` in the installed ``plotly`` package."""

    # the stubs say None for a miss, but finders.find() collects a miss that is not a list (None would be a hit)
    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> str | list[str]:  # type: ignore[override]
        """The bundle's path for ``PLOTLY_JS`` (in a list with ``find_all``); ``[]`` when not found, as Django's
        own finders answer."""
        bundle = plotly_bundle() if path == PLOTLY_JS else None
        if bundle is None:
            return []
        if str(bundle.parent) not in searched_locations:
            searched_locations.append(str(bundle.parent))
        return [str(bundle)] if find_all else str(bundle)

    def list(self, ignore_patterns: Any) -> Iterator[tuple[str, FileSystemStorage]]:
        bundle = plotly_bundle()
        if bundle is not None:
            yield posixpath.basename(PLOTLY_JS), _BundleStorage(bundle)

    def check(self, **kwargs: Any) -> builtins.list[checks.CheckMessage]:
        bundle = plotly_bundle()
        if bundle is None:
            return [checks.Error(
                f"the Python package plotly is not installed, so the report pages have no plotly.js ({PLOTLY_JS})",
                hint=PLOTLY_FIX, id="metaeval.E001")]
        if hashlib.sha256(bundle.read_bytes()).hexdigest() != PLOTLY_SHA256:
            return [checks.Error(
                f"{bundle} is plotly.js {bundle_version(bundle) or '(no version header)'}, not the tested "
                f"{PLOTLY_VERSION} of plotly {PLOTLY_PYPI_VERSION}", hint=PLOTLY_FIX, id="metaeval.E002")]
        return []
