"""Meta-evaluation of personalization measures (PerSEval, EGISES, DEGRESS, P-Acc).

``metaeval.core`` is the numeric core and never imports Django; the Django glue lives beside it. The notebook API
(:mod:`metaeval.api`: :func:`~metaeval.api.score`, :func:`~metaeval.api.report` ...) is reachable from here
(``metaeval.score(...)``) and imported on first use, so ``import metaeval`` stays light: no Django, no numeric
stack.
"""
from __future__ import annotations

from typing import Any

from metaeval._version import __version__

#: the notebook API's names, imported from :mod:`metaeval.api` on first use
API = ("score", "correlate", "report", "pairwise", "edins", "probes", "Report")

__all__ = ["__version__", *API]


def __getattr__(name: str) -> Any:
    if name in API:
        from metaeval import api

        return getattr(api, name)
    raise AttributeError(f"module 'metaeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *API})
