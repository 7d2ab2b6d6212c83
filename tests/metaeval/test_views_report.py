"""The full report run (kind="report"): started from the form, executed by the worker, shown with its figures and
tables, downloadable as self-contained HTML, JSON and CSV per table; researchers only."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from metaeval import services
from metaeval.assets import PLOTLY_JS, REPORT_JS
from metaeval.core.perseval import Params
from metaeval.core.pipeline import RunOptions
from metaeval.models import MetaevalRun
from tests.metaeval.test_views_runs import form, isolated, rate_all  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
PASSWORD = "pw-for-tests-2"


@pytest.fixture
def client(db) -> Client:
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("rep", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(User.objects.get(username="rep"))
    return client


@pytest.fixture
def report_run(study) -> MetaevalRun:
    rate_all(study, participants=3)
    options = RunOptions(measures=["rouge_l", "jsd"], aux=["rouge_l"], params=Params(beta=1.7), skip_unavailable=True)
    run = services.run_enqueue(dataset=study.dataset, study=study, options=options, kind="report", seed=5,
                               report={"n_boot": 100, "n_permutations": 100, "stability_samples": 2})
    services.run_launch(run)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


def test_report_run_stores_a_seeded_report_with_every_section(report_run) -> None:
    report = report_run.report
    assert report["parameters"]["seed"] == 5 and report["parameters"]["n_boot"] == 100
    assert report_run.parameters["report"] == {"n_boot": 100, "n_permutations": 100, "stability_samples": 2}
    for key in ("leaderboard", "correlations", "beta_ablation", "stability", "raters", "tables"):
        assert report[key], key
    assert report_run.scores  # the score table is stored as for a scores run
    assert report_run.progress["done"] == report_run.progress["total"]


def test_form_starts_a_report_run_with_a_fresh_stored_seed(client, study) -> None:
    rate_all(study, participants=3)
    response = client.post("/research/runs/", form(study, full_report="on", n_boot="100", resample="systems"))
    assert response.status_code == 302
    run = MetaevalRun.objects.get()
    assert run.kind == "report" and run.status == "done", run.error
    assert run.seed is not None and run.report["parameters"]["seed"] == run.seed
    assert run.report["parameters"]["resample"] == "systems"
    page = client.get(f"/research/runs/{run.pk}/")
    assert f'/research/runs/{run.pk}/report/' in page.content.decode()


def test_report_page_has_every_figure_and_table(client, report_run) -> None:
    page = client.get(f"/research/runs/{report_run.pk}/report/")
    html = page.content.decode()
    assert page.status_code == 200
    for figure in ("fig-leaderboard", "fig-heatmap", "fig-beta", "fig-stability", "fig-raters"):
        assert f'id="{figure}"' in html
    assert f"/static/{PLOTLY_JS}" in html and f"/static/{REPORT_JS}" in html
    assert 'id="report-data"' in html and "cdn" not in html.lower()
    for name in report_run.report["tables"]:
        assert f"/research/runs/{report_run.pk}/tables/{name}.csv" in html
        assert f"/research/runs/{report_run.pk}/tables/{name}.json" in html


def test_standalone_html_inlines_plotly_and_the_data(client, report_run) -> None:
    response = client.get(f"/research/runs/{report_run.pk}/report.html")
    html = response.content.decode()
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    assert "<script src=" not in html and "<link" not in html  # nothing to fetch
    assert "Plotly" in html and 'id="report-data"' in html and len(html) > 1_000_000
    data = html.split('<script id="report-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["parameters"]["seed"] == 5


def test_json_and_csv_downloads(client, report_run) -> None:
    document = json.loads(client.get(f"/research/runs/{report_run.pk}/report.json").content)
    assert document == report_run.report
    for name, rows in report_run.report["tables"].items():
        response = client.get(f"/research/runs/{report_run.pk}/tables/{name}.csv")
        parsed = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert len(parsed) == len(rows), name
        assert json.loads(client.get(f"/research/runs/{report_run.pk}/tables/{name}.json").content) == rows
    assert client.get(f"/research/runs/{report_run.pk}/tables/nope.csv").status_code == 404


def test_report_pages_need_a_finished_report_and_the_researcher_role(client, study, report_run) -> None:
    scores_only = services.run_enqueue(dataset=study.dataset, options=RunOptions(measures=["rouge_l"]))
    assert client.get(f"/research/runs/{scores_only.pk}/report/").status_code == 404
    anonymous = Client()
    assert anonymous.get(f"/research/runs/{report_run.pk}/report/").status_code == 302

    User.objects.create_user("plain", password=PASSWORD)
    plain = Client()
    plain.force_login(User.objects.get(username="plain"))
    for url in ("report/", "report.html", "report.json", "tables/scores.csv", "tables/scores.json"):
        assert plain.get(f"/research/runs/{report_run.pk}/{url}").status_code == 403


def test_enqueue_rejects_unknown_kinds_and_settings(study) -> None:
    with pytest.raises(ValueError, match="kind"):
        services.run_enqueue(dataset=study.dataset, options=RunOptions(measures=["rouge_l"]), kind="nope")
    with pytest.raises(ValueError, match="report setting"):
        services.run_enqueue(dataset=study.dataset, options=RunOptions(measures=["rouge_l"]), kind="report",
                             report={"n_bootstrap": 5})
    with pytest.raises(ValueError, match="missing_system must be one of discard-sample, drop-system"):
        services.run_enqueue(dataset=study.dataset, options=RunOptions(measures=["rouge_l"]), kind="report",
                             report={"missing_system": "keep"})


def test_run_again_regenerates_the_same_report(client, report_run) -> None:
    """The stored parameters, seed and excluded raters are enough to regenerate a report exactly."""
    response = client.post(f"/research/runs/{report_run.pk}/repeat/")
    assert response.status_code == 302
    again = MetaevalRun.objects.exclude(pk=report_run.pk).get()
    assert again.status == "done", again.error
    assert again.kind == "report" and again.seed == report_run.seed
    assert again.data_hash == report_run.data_hash
    assert again.report == report_run.report
    assert again.scores == report_run.scores
    assert client.get(f"/research/runs/{report_run.pk}/repeat/").status_code == 405  # POST only


def test_run_again_needs_csrf_and_the_researcher_role(report_run) -> None:
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("csrf", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(User.objects.get(username="csrf"))
    assert strict.post(f"/research/runs/{report_run.pk}/repeat/").status_code == 403
    User.objects.create_user("plain2", password=PASSWORD)
    plain = Client()
    plain.force_login(User.objects.get(username="plain2"))
    assert plain.post(f"/research/runs/{report_run.pk}/repeat/").status_code == 403
    assert MetaevalRun.objects.count() == 1
