"""The full report run (kind="report"): started from the form, executed by the worker, shown with its figures and
tables, downloadable as self-contained HTML, JSON and CSV per table; researchers only."""
from __future__ import annotations

import csv
import gzip
import io
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from metaeval import services
from metaeval.assets import PLOTLY_BANNER, PLOTLY_JS, REPORT_JS, plotly_bundle
from metaeval.core.perseval.figures import figures_json, report_figures
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions
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


def page_with_tables(client: Client, run: MetaevalRun) -> str:
    """The report page as the reader ends up with it: the page, its tables' HTML fetched from the element's data-src
    (as report.js does) in that element's place."""
    page = client.get(f"/research/runs/{run.pk}/report/")
    assert page.status_code == 200
    html = page.content.decode()
    element = f'<div id="report-tables" data-src="/research/runs/{run.pk}/report/tables.html"></div>'
    assert html.count(element) == 1 and "<!--report-table-->" not in html
    tables = client.get(f"/research/runs/{run.pk}/report/tables.html")
    assert tables.status_code == 200
    return html.replace(element, tables.content.decode())


def test_report_page_has_every_figure_and_table(client, report_run) -> None:
    page = client.get(f"/research/runs/{report_run.pk}/report/")
    html = page.content.decode()
    assert page.status_code == 200
    for figure in ("fig-leaderboard", "fig-heatmap", "fig-beta", "fig-stability", "fig-raters"):
        assert f'id="{figure}"' in html
    assert f"/static/{PLOTLY_JS}" in html and f"/static/{REPORT_JS}" in html
    # plotly.js async from the head, report.js async after the figures' data, then the tables' element: their HTML
    # is fetched (the page stays small), not in the page
    head, body = html.split("</head>", 1)
    assert f'<script id="plotly-js" src="/static/{PLOTLY_JS}" async></script>' in head
    assert page["Link"] == f"</static/{PLOTLY_JS}>; rel=preload; as=script"  # the same URL, asked for sooner
    tables_url = f"/research/runs/{report_run.pk}/report/tables.html"
    assert body.index('id="report-figures"') < body.index(f'<script src="/static/{REPORT_JS}" async></script>') \
        < body.index(f'<div id="report-tables" data-src="{tables_url}"></div>')
    assert 'id="table-' not in html and "/tables/scores.csv" not in html
    assert 'id="report-figures"' in html and 'id="report-data"' not in html and "cdn" not in html.lower()
    tables = client.get(tables_url).content.decode()
    assert tables.count("<!--report-table-->") == tables.count("<details") == len(report_run.report["tables"])
    assert tables.index("<details open id=\"table-") < tables.index("<details id=\"table-")  # the first one open
    for name in report_run.report["tables"]:
        assert f'id="table-{name}"' in tables
        assert f"/research/runs/{report_run.pk}/tables/{name}.csv" in tables
        assert f"/research/runs/{report_run.pk}/tables/{name}.json" in tables


def test_the_tables_fragment_is_the_researchers_revalidated_and_compressed(client, study, report_run) -> None:
    """The page's tables (fetched by report.js): researchers only, like the page; an ETag per run, revalidated at
    every use (``private, no-cache``) and answered 304 while it holds; gzip when the browser takes it."""
    url = f"/research/runs/{report_run.pk}/report/tables.html"
    first = client.get(url)
    assert first.status_code == 200 and first["Content-Type"] == "text/html; charset=utf-8"
    assert first["Cache-Control"] == "private, no-cache" and "Cookie" in first["Vary"]
    etag = first["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 10
    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    assert client.get(url, headers={"If-None-Match": '"another"'}).status_code == 200
    zipped = client.get(url, headers={"Accept-Encoding": "gzip"})
    assert zipped["Content-Encoding"] == "gzip" and gzip.decompress(zipped.content) == first.content
    assert client.get(url, headers={"Accept-Encoding": "gzip", "If-None-Match": zipped["ETag"]}).status_code == 304
    # another run's tables have another ETag
    other = services.run_repeat(report_run)
    services.run_launch(other)
    other.refresh_from_db()
    assert client.get(f"/research/runs/{other.pk}/report/tables.html")["ETag"] != etag
    # as the page: a finished report, the researcher role
    scores_only = services.run_enqueue(dataset=study.dataset, options=RunOptions(measures=["rouge_l"]))
    assert client.get(f"/research/runs/{scores_only.pk}/report/tables.html").status_code == 404
    assert Client().get(url).status_code == 302
    User.objects.create_user("plain-tables", password=PASSWORD)
    plain = Client()
    plain.force_login(User.objects.get(username="plain-tables"))
    assert plain.get(url).status_code == 403 and plain.get(url, headers={"If-None-Match": etag}).status_code == 403


def test_standalone_html_inlines_plotly_and_the_data(client, report_run) -> None:
    response = client.get(f"/research/runs/{report_run.pk}/report.html")
    html = response.content.decode()
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    assert "<script src=" not in html and "<link" not in html  # nothing to fetch
    assert "Plotly" in html and 'id="report-figures"' in html and len(html) > 1_000_000
    assert plotly_bundle().read_text(encoding="utf-8") in html and html.count(PLOTLY_BANNER) == 1  # the vendored file
    assert html.index(PLOTLY_BANNER) < html.index('<script id="report-tables" type="text/html">')
    data = html.split('<script id="report-figures" type="application/json">', 1)[1].split("</script>", 1)[0]
    built = report_figures(report_run.report)
    assert json.loads(data)["fig-leaderboard"] == json.loads(built["fig-leaderboard"].to_json())
    assert json.loads(data) == json.loads(figures_json(report_run.report))  # every figure, inline
    # every table inline too (the served page fetches them; a file has nowhere to fetch from)
    tables = html.split('<script id="report-tables" type="text/html">', 1)[1].split("</script>", 1)[0]
    assert tables.count("<\\!--report-table-->") == len(report_run.report["tables"]) > 0  # "<!--", escaped inline
    assert all(f'id="table-{name}"' in tables for name in report_run.report["tables"])
    assert '<div id="report-tables"' not in html and "/report/tables.html" not in html


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


def _json_script(html: str, element_id: str) -> object:
    return json.loads(html.split(f'<script id="{element_id}" type="application/json">', 1)[1].split("</script>", 1)[0])


def test_report_page_reads_in_words_and_one_number_format(client, report_run) -> None:
    """Tables with captions and headings in words, numbers in one format (never 1e-12), a "How to read this" under
    each figure, and the document itself embedded unchanged (display only)."""
    import re

    from django.utils.html import escape

    from metaeval.core import display

    html = page_with_tables(client, report_run)
    tables = report_run.report["tables"]
    # every table, the grid per coefficient, the alphas, the e-DINS section's table, the pairwise-accuracy view's
    # three (system level, per document, close pairs), and the leaderboard's ranking per measure (rank ranges)
    measures = list(dict.fromkeys(row["measure"] for row in report_run.report["leaderboard"]))
    assert html.count("<caption>") == len(tables) + 3 + 1 + 1 + 3 + len(measures)
    for index, measure in enumerate(measures):
        board = [row for row in report_run.report["leaderboard"] if row["measure"] == measure]
        table = html.split(f'id="leaderboard-ranks-{index}"')[1].split("</table>")[0]
        best = min(board, key=lambda row: row["rank"])
        shown = display.rank_range(best["rank_best"], best["rank_worst"])
        assert re.search(rf"<td>{re.escape(shown)}</td><th scope=\"row\">{re.escape(escape(best['system']))}</th>",
                         table), measure
    for name in tables:
        assert f"<caption><strong>{escape(display.caption(name)[0])}</strong></caption>" in html, name
    headings = re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", html, re.S)
    assert headings and not [h for h in headings if "_" in h]  # no snake_case heading
    assert 'title="CSV column perseval_low"' in html and ">PerSEval, lower bound</th>" in html
    cells = re.findall(r"<td(?:\s[^>]*)?>(.*?)</td>", html, re.S)
    assert not [c for c in cells if re.search(r"\d[eE][-+]?\d", c)]  # no exponent anywhere
    assert not [c for c in cells if re.fullmatch(r"-?\d+\.\d{5,}", c.strip())]  # no raw full-precision float
    numbers = [c.strip() for c in cells if re.fullmatch(r"-?\d+\.\d+", c.strip())]
    parameters = report_run.report["parameters"]
    settings = {f"{value:g}" for value in [*parameters["betas"], parameters["confidence"]]}  # shown as typed
    decimals = {len(n.split(".")[1]) for n in numbers if n not in settings}
    assert 4 in decimals and decimals <= {3, 4}  # 4 decimals, p-values 3 (the data may give only "< 0.001")
    # every cell of a p-value column: 3 decimals, "< 0.001" or missing (the data may leave a coefficient undefined)
    p_cells = []
    for table in re.findall(r'<table class="grid">(.*?)</table>', html, re.S):
        keys = re.findall(r'<th title="CSV column ([^"]+)"', table)
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[-1], re.S):
            values = re.findall(r"<td(?:\s[^>]*)?>(.*?)</td>", row, re.S)
            p_cells += [v.strip() for k, v in zip(keys, values, strict=False) if display.is_p_column(k)]
    assert p_cells and all(re.fullmatch(r"&lt; 0\.001|[01]\.\d{3}|–", c) for c in p_cells), p_cells
    assert html.count("How to read this:") == 8  # the pairwise-accuracy view's reading note and close pairs
    # the page's figures: every figure of metaeval.core.perseval.figures, the repeated plain ids left out
    assert _json_script(html, "report-figures") == json.loads(figures_json(report_run.report))


def test_correlations_have_a_coefficient_switch_and_their_warnings(client, report_run) -> None:
    from django.utils.html import escape

    from metaeval.core import display

    html = client.get(f"/research/runs/{report_run.pk}/report/").content.decode()
    view = display.correlation_view(report_run.report)
    assert view is not None
    for entry in view["methods"]:
        method = entry["method"]
        assert f'<input type="radio" name="method" value="{method}"' in html
        grid = html.split(f'id="corr-grid-{method}"', 1)[1].split("</table>", 1)[0]
        assert grid.count("<tr>") == 1 + len(entry["rows"])
        assert (' hidden' in html.split(f'id="corr-grid-{method}"', 1)[1][:20]) is (method != "pearson")
        for text in entry["warnings"]:
            assert escape(text) in html
    figures = _json_script(html, "report-figures")
    assert isinstance(figures, dict) and "fig-heatmap" not in figures  # one figure per coefficient
    for entry in view["methods"]:
        heatmap = figures[f"fig-heatmap@{entry['method']}"]
        assert heatmap["layout"]["title"]["text"].endswith(entry["name"])
        flagged = {key for key, flags in entry["flags"].items() if flags}
        assert sum("⚠" in cell for row in heatmap["data"][0]["text"] for cell in row) == len(flagged)
        assert "HJ (ROUGE-L)" in heatmap["data"][0]["y"]
    standalone = client.get(f"/research/runs/{report_run.pk}/report.html").content.decode()
    assert _json_script(standalone, "report-figures") == figures


def test_few_systems_and_degenerate_correlations_are_flagged_on_the_page(client, report_run) -> None:
    """A grid over fewer than 8 systems, or whose coefficients are all +-1, says so above the grid and in the cells
    (the warnings come from the stored numbers; here the stored cells are made so)."""
    from metaeval.core import display

    html = client.get(f"/research/runs/{report_run.pk}/report/").content.decode()
    for entry in display.correlation_view(report_run.report)["methods"]:  # type: ignore[index]
        assert ('class="warnings corr-warnings" role="note" data-method="' + entry["method"] + '"' in html) is bool(
            entry["warnings"])
    degenerate = dict(report_run.report)
    degenerate["correlations"] = [{**c, "n": 5, "r": 1.0 if c["method"] == "pearson" else c["r"]}
                                  for c in report_run.report["correlations"]]
    MetaevalRun.objects.filter(pk=report_run.pk).update(report=degenerate)
    html = client.get(f"/research/runs/{report_run.pk}/report/").content.decode()
    pearson = html.split('class="warnings corr-warnings" role="note" data-method="pearson"', 1)[1].split("</div>", 1)[0]
    assert "Few systems: every correlation rests on fewer than 8 systems (n = 5)" in pearson
    assert "intervals are wide" in pearson
    assert "Degenerate: every Pearson r is ±1" in pearson
    grid = html.split('id="corr-grid-pearson"', 1)[1].split("</table>", 1)[0]
    assert "⚠ few systems (n = 5), ±1" in grid


def test_runs_list_marks_full_reports(client, study, report_run) -> None:
    scores_only = services.run_enqueue(dataset=study.dataset, options=RunOptions(measures=["rouge_l"]))
    html = client.get("/research/runs/").content.decode()
    assert "<th>Kind</th>" in html

    def row(pk: int) -> str:
        return html.split(f'href="/research/runs/{pk}/">#{pk}</a>', 1)[1].split("</tr>", 1)[0]

    assert 'class="badge report"' in row(report_run.pk) and ">Report</span>" in row(report_run.pk)
    assert f'href="/research/runs/{report_run.pk}/report/">open</a>' in row(report_run.pk)
    assert ">Scores</span>" in row(scores_only.pk) and "/report/" not in row(scores_only.pk)


def test_the_close_pair_buckets_are_a_report_setting_of_the_form(client, study) -> None:
    """``close_pairs`` (the pairwise-accuracy view's bucket edges) comes from the run form as the other settings
    do; edges that do not increase are the field's error and start nothing."""
    rate_all(study, participants=3)
    bad = client.post("/research/runs/", form(study, full_report="on", n_boot="30", close_pairs="0.1,0.05"))
    assert bad.status_code == 400 and "close_pairs must increase strictly; got &#x27;0.1,0.05&#x27;" in \
        bad.content.decode()
    assert not MetaevalRun.objects.exists()
    response = client.post("/research/runs/", form(study, full_report="on", n_boot="30", n_permutations="20",
                                                   stability_samples="2", close_pairs="0, 0.02"))
    assert response.status_code == 302
    run = MetaevalRun.objects.get()
    assert run.status == "done", run.error
    assert run.parameters["report"]["close_pairs"] == [0.0, 0.02]
    assert run.report["parameters"]["close_pairs"] == [0.0, 0.02]
    assert {(r["bucket_low"], r["bucket_high"]) for r in run.report["tables"]["close_pairs"]} == {
        (0.0, 0.02), (0.02, None)}
    page = client.get(f"/research/runs/{run.pk}/report/").content.decode()
    assert "close-pair buckets from 0, 0.02." in page and 'id="fig-pair-accuracy"' in page


def test_the_figures_and_tables_are_built_once_per_report(client, report_run, monkeypatch) -> None:
    """A report never changes once stored: its figures JSON and tables' HTML are built at the first view and read
    from the cache after (issue 34); the standalone HTML has its own tables (no links) but the same figures."""
    from django.core.cache import cache

    from metaeval.core import display
    from metaeval.core.perseval import figures

    built: list[str] = []
    real_figures, real_table = figures.figures_json, display.table_view
    monkeypatch.setattr(figures, "figures_json", lambda report: built.append("figures") or real_figures(report))
    monkeypatch.setattr(display, "table_view", lambda name, rows: built.append(name) or real_table(name, rows))
    cache.clear()
    url = f"/research/runs/{report_run.pk}/report/"
    pages = [client.get(url).content.decode() for _ in range(3)]
    tables = [client.get(f"{url}tables.html").content.decode() for _ in range(3)]
    assert built.count("figures") == 1 and built.count("scores") == 1
    assert all(_json_script(page, "report-figures") == _json_script(pages[0], "report-figures") for page in pages)
    assert len(set(tables)) == 1 and "/tables/scores.csv" in tables[0]
    standalone = client.get(f"/research/runs/{report_run.pk}/report.html").content.decode()
    assert built.count("figures") == 1 and built.count("scores") == 2
    assert "/tables/scores.csv" not in standalone.split('id="section-tables"', 1)[1]
    assert _json_script(standalone, "report-figures") == _json_script(pages[0], "report-figures")
