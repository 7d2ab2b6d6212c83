"""The system check for the vendored plotly.js (:mod:`metaeval.assets`), registered by the app (``manage.py
check``, runserver, migrate, collectstatic): a missing file or one that is not the pinned bundle is an error that
names the fix."""
from __future__ import annotations

from typing import Any

from django.core import checks

from metaeval import assets


def plotly_vendored(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``metaeval.E001`` when ``static/<PLOTLY_JS>`` is missing, ``metaeval.E002`` when its SHA-256 is not
    PLOTLY_SHA256."""
    path = assets.plotly_bundle()
    problem = assets.plotly_problem(path)
    if problem is None:
        return []
    code = "metaeval.E002" if path.is_file() else "metaeval.E001"
    return [checks.Error(problem, hint=assets.PLOTLY_FIX, id=code)]
