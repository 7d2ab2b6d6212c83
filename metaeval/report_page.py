"""The report page (``research/report.html``): its context and its self-contained offline rendering, one definition
for the platform's views (``metaeval.views.run_report`` and the "Download the report (HTML)" view) and the
notebook API's :meth:`metaeval.api.Report.to_html`.

The page's template (``metaeval/templates/research/``) and what it inlines (``metaeval/static/``: the drawing script,
the site's style sheet and the vendored plotly.js of :mod:`metaeval.assets`) ship inside the package, so a ``pip
install 'metaeval[html]'`` renders it without the repository. Django is imported inside the functions only:
:func:`standalone_report_html` configures a minimal Django in-process (these templates and static files, no
database) when no settings are configured; under the platform's settings (``DJANGO_SETTINGS_MODULE``) it renders
with those, which find the same files (the metaeval app's folders).
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metaeval.assets import PLOTLY_FIX, PLOTLY_JS, REPORT_JS

__all__ = ["ReportHeader", "report_context", "report_tables", "standalone_html", "standalone_report_html",
           "static_text"]

#: the package's folders the page is rendered from (the platform finds them as the metaeval app's)
PACKAGE = Path(__file__).resolve().parent
TEMPLATES_DIR = PACKAGE / "templates"
STATIC_DIR = PACKAGE / "static"
TEMPLATE = "research/report.html"


@dataclass
class ReportHeader:
    """What the page's header says about the run, for a report made outside the platform (the notebook API): the
    fields the template reads from a ``MetaevalRun``."""

    dataset_name: str = ""
    data_hash: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    measure_models: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    finished_at: datetime.datetime = field(default_factory=lambda: datetime.datetime.now(datetime.UTC))
    pk: int | None = None
    study: None = None
    judgment_set: None = None

    @property
    def dataset(self) -> Mapping[str, str]:
        return {"name": self.dataset_name}


def static_text(path: str) -> str:
    """The text of a static file (for inlining into a self-contained download); a missing vendored file says how
    to get it."""
    from django.contrib.staticfiles import finders

    found = finders.find(path)
    if not found:
        raise FileNotFoundError(f"static file {path} is missing. {PLOTLY_FIX}" if path == PLOTLY_JS
                                else f"static file {path} is missing")
    with open(found, encoding="utf-8") as handle:
        return handle.read()


def _percent(share: object) -> str:
    """A confidence level as people write it: 0.95 -> "95 %"."""
    return f"{float(share) * 100:g} %" if isinstance(share, (int, float)) else "–"


def _alpha_rows(report: Mapping[str, Any]) -> list[dict[str, object]]:
    """The rater section's alphas, formatted as every number of the report is."""
    from metaeval.core import display

    rows = (report.get("raters") or {}).get("alphas") or []
    return [{**row, "alpha_text": "undefined" if row.get("alpha") is None else display.fmt_number(row["alpha"]),
             "interval": display.MISSING if row.get("low") is None
             else f"{display.fmt_number(row['low'])} to {display.fmt_number(row.get('high'))}"} for row in rows]


def _inline_script(text: str) -> str:
    """Script text safe inside <script>...</script> (no closing tag can end it early)."""
    return text.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def _report_key(report: Mapping[str, Any], run: Any) -> str:
    """The cache key of what a report's page shows. A stored run's: its id and the moment it finished, to the
    microsecond (a run's report is written once, when it finishes; the time keeps a database that reuses a run's id
    from reading another run's cached page parts; no digest of the report, whose serialisation costs a tenth of a
    second per request). A report of the notebook API (no run id): a digest of the report."""
    pk, finished = getattr(run, "pk", None), getattr(run, "finished_at", None)
    if pk is not None and finished is not None:
        return f"{pk}:{finished.isoformat()}"
    digest = hashlib.blake2b(json.dumps(report, separators=(",", ":")).encode(), digest_size=16).hexdigest()
    return f"none:{digest}"


def _cached(key: str, build: Callable[[], str]) -> str:
    from django.core.cache import cache

    text = cache.get(key)
    if text is None:
        text = build()
        cache.set(key, text, timeout=REPORT_CACHE_SECONDS)
    return str(text)


#: how long a report's built figures and tables stay in the cache (they never change; the bound only frees memory)
REPORT_CACHE_SECONDS = 7 * 24 * 3600


def _report_figures(report: Mapping[str, Any], key: str) -> str:
    """The report's figures as the page embeds them (:func:`metaeval.core.perseval.figures.figures_json`), built once
    per stored report and figures' version, then read from the cache."""
    from metaeval.core.perseval.figures import FIGURES_VERSION, figures_json  # plotly: only where a report is drawn

    return _cached(f"metaeval:report-figures:{FIGURES_VERSION}:{key}", lambda: figures_json(report))


def _report_tables(report: Mapping[str, Any], run: Any, key: str, *, standalone: bool) -> str:
    """Every report table in words (:func:`metaeval.core.display.table_view`: captions, column headings, one number
    format) as the page's HTML, rendered once per stored report (tens of thousands of cells), then cached."""
    from django.template.loader import render_to_string

    from metaeval.core import display

    def build() -> str:
        tables = [display.table_view(name, rows) for name, rows in report.get("tables", {}).items()]
        return render_to_string("research/report_tables.html", {"tables": tables, "run": run,
                                                                "standalone": standalone})

    return _cached(f"metaeval:report-tables:{TABLES_VERSION}:{int(standalone)}:{key}", build)


#: bump when the tables' HTML (report_tables.html, display.table_view) changes: the cache is keyed by it
TABLES_VERSION = 2


def report_tables(report: Mapping[str, Any], run: Any) -> tuple[str, str]:
    """The served page's tables (:func:`_report_tables`, fetched by ``report.js`` after the figures: the page itself
    stays small) and their ETag: the tables of a stored run never change, so the ETag is its cache key's digest."""
    key = _report_key(report, run)
    etag = hashlib.blake2b(f"{TABLES_VERSION}:{key}".encode(), digest_size=12).hexdigest()
    return _report_tables(report, run, key, standalone=False), f'"{etag}"'


def report_context(report: Mapping[str, Any], run: Any, *, standalone: bool) -> dict[str, object]:
    """The report page's context: the document, the tables' HTML offline (:func:`_report_tables`; the served page
    fetches it from the view of :func:`report_tables`), the correlation grid per coefficient with its warnings, the
    pairwise section when the run had a judgment set (:func:`metaeval.core.display.pairwise_view`), Table 2's
    pairwise-accuracy view, and every figure built in Python (``figures``: compact plotly JSON by element id, see
    :func:`_report_figures`), which ``report.js`` draws as the reader reaches it. Both cached strings are our own
    markup and JSON with ``<``, ``>``, ``&`` escaped. ``run``: the ``MetaevalRun`` (or a :class:`ReportHeader`) the
    header describes; ``standalone``: inline the scripts, the tables and the style sheet."""
    from django.utils.safestring import mark_safe

    from metaeval.core import display

    key = _report_key(report, run)
    context: dict[str, object] = {
        "run": run, "report": report, "parameters": report.get("parameters", {}),
        "tables_html": mark_safe(_inline_script(_report_tables(report, run, key, standalone=True))) if standalone
        else "",
        "correlation": display.correlation_view(report), "display": display.figure_texts(report),
        "pairwise": display.pairwise_view(report), "probes": display.probes_view(report),
        "leaderboard_ranks": display.leaderboard_view(report), "versus": display.judges_vs_people_view(report),
        "edins": display.edins_view(report), "pairs": display.pair_accuracy_view(report),
        "judge_accuracy": display.judge_accuracy_view(report), "figures": mark_safe(_report_figures(report, key)),
        "alphas": _alpha_rows(report), "confidence": _percent(report.get("parameters", {}).get("confidence")),
        "standalone": standalone, "base_template": "research/base.html",
        "plotly_src": PLOTLY_JS, "report_src": REPORT_JS,
    }
    if standalone:
        context.update(
            base_template="research/report_standalone_base.html",
            site_css=static_text("survey/site.css"),
            plotly_js=_inline_script(static_text(PLOTLY_JS)),
            report_js=_inline_script(static_text(REPORT_JS)),
        )
    return context


def standalone_html(report: Mapping[str, Any], run: Any, request: Any = None) -> str:
    """The self-contained report page (plotly.js, the drawing script, the style sheet and the data inlined; works
    offline): what the platform's download sends (with its ``request``: the CSP nonce) and ``Report.to_html``
    writes."""
    from django.template.loader import render_to_string

    return render_to_string(TEMPLATE, report_context(report, run, standalone=True), request=request)


def _configure_django() -> None:
    """A minimal in-process Django (the package's templates and static files, no database, no apps of ours) unless
    settings are configured or named by ``DJANGO_SETTINGS_MODULE``."""
    import django
    from django.apps import apps
    from django.conf import settings

    if not settings.configured and not os.environ.get("DJANGO_SETTINGS_MODULE"):
        settings.configure(
            DEBUG=False, USE_TZ=True, TIME_ZONE="UTC",
            INSTALLED_APPS=["django.contrib.staticfiles"],
            TEMPLATES=[{"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [TEMPLATES_DIR]}],
            STATIC_URL="static/", STATICFILES_DIRS=[STATIC_DIR],
            STATICFILES_FINDERS=["django.contrib.staticfiles.finders.FileSystemFinder"],
        )
    if not apps.ready:
        django.setup()


def standalone_report_html(report: Mapping[str, Any], run: Mapping[str, Any] | None = None,
                           dataset_name: str = "") -> str:
    """:func:`standalone_html` for a report made outside the platform: ``report`` is ``report.json``'s document,
    ``run`` ``run.json``'s (versions, models, unavailable measures for the header)."""
    _configure_django()
    run = run or {}
    header = ReportHeader(dataset_name=dataset_name, versions=dict(run.get("versions") or {}),
                          measure_models=dict(run.get("models") or {}), unavailable=dict(run.get("unavailable") or {}))
    return standalone_html(report, header)
