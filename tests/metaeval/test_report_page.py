"""The offline report (metaeval.report_page): the platform's "Download the report (HTML)" and the notebook API's
Report.to_html are one page, rendered from one template by one function; outside the platform a minimal in-process
Django renders it the same; without Django, to_html names the extra to install."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.api import Report
from metaeval.core.perseval.figures import figures_json
from metaeval.models import MetaevalRun
from metaeval.report_page import standalone_report_html
from tests.metaeval.test_views_report import client, report_run  # noqa: F401 (fixtures)
from tests.metaeval.test_views_runs import isolated  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]

#: what differs between two renderings of one report: the run's header (number, dataset, study, time, data hash)
#: and the request's CSP nonce
RUN_SPECIFIC = [
    (re.compile(r"<title>.*?</title>", re.S), "<title/>"),
    (re.compile(r"<h1>Meta-evaluation report.*?</h1>"), "<h1/>"),
    (re.compile(r"<p>Dataset <strong>.*?</p>", re.S), "<p>Dataset</p>"),
    (re.compile(r"<dt>Data hash</dt><dd>.*?</dd>"), "<dt>Data hash</dt>"),
    (re.compile(r' nonce="[^"]*"'), ""),
]


def without_run_specifics(html: str) -> str:
    for pattern, replacement in RUN_SPECIFIC:
        html, count = pattern.subn(replacement, html)
        assert count >= 1 or "nonce" in pattern.pattern, pattern.pattern
    return html


#: the header's "finished YYYY-MM-DD HH:MM." stamp
FINISHED = re.compile(r"finished \d{4}-\d\d-\d\d \d\d:\d\d\.</p>")


def without_render_time(html: str) -> str:
    return FINISHED.sub("finished <time>.</p>", html)


def run_json(run: MetaevalRun) -> dict:
    return {"versions": run.versions, "models": run.measure_models, "unavailable": run.unavailable}


def test_to_html_is_the_platforms_offline_download(client, report_run, tmp_path) -> None:  # noqa: F811
    download = client.get(f"/research/runs/{report_run.pk}/report.html")
    assert download.status_code == 200
    page = download.content.decode()
    report = Report(tables={}, json=report_run.report, run=run_json(report_run), dataset=report_run.dataset.name)
    written = report.to_html(tmp_path / "out" / "report.html")
    html = written.read_text(encoding="utf-8")
    assert len(html) > 1_000_000 and "<script src=" not in html  # self-contained
    assert f"run {report_run.pk}" in page and f"run {report_run.pk}" not in html  # no platform run to name
    assert without_run_specifics(html) == without_run_specifics(page)
    data = html.split('<script id="report-figures" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert data == figures_json(report_run.report)  # every figure, from the one definition


def test_outside_the_platform_a_minimal_django_renders_the_same_page(report_run, tmp_path) -> None:  # noqa: F811
    (tmp_path / "report.json").write_text(json.dumps(report_run.report), encoding="utf-8")
    (tmp_path / "run.json").write_text(json.dumps(run_json(report_run)), encoding="utf-8")
    script = (
        "import json, sys; from pathlib import Path; from metaeval.report_page import standalone_report_html; "
        "folder = Path(sys.argv[1]); "
        "html = standalone_report_html(json.loads((folder / 'report.json').read_text()), "
        "json.loads((folder / 'run.json').read_text()), 'demo'); "
        "assert 'survey' not in sys.modules and 'config' not in sys.modules; "
        "(folder / 'page.html').write_text(html, encoding='utf-8')"
    )
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          env=env, check=False)
    assert done.returncode == 0, done.stderr
    here = standalone_report_html(report_run.report, run_json(report_run), "demo")
    # the header's "finished" is when each page was rendered (now, outside the platform): the two renderings may
    # fall in different minutes, and only that stamp may differ
    there = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert without_render_time(there) == without_render_time(here)
    assert len(FINISHED.findall(there)) == len(FINISHED.findall(here)) == 1


def test_without_django_to_html_names_the_extra() -> None:
    script = ("import sys; sys.modules['django'] = None; from metaeval.api import Report\n"
              "try:\n    Report(tables={}, json={}, run={}).to_html('x.html')\n"
              "except ImportError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
    assert "pip install 'metaeval[html]'" in done.stdout
    assert not (ROOT / "x.html").exists()
