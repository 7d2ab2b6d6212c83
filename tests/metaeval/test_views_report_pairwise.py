"""The pairwise section of the report page (conventions sec. 17 item 11): shown only for a run with a judgment set,
its settings in words, a criterion switch that works without JavaScript (the overall win/tie/loss table shown, the
others hidden), headings in words, one number format, and full precision in the downloads."""
from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.test import Client
from django.utils.html import escape

from metaeval import services
from metaeval.core import display
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import JudgmentSet, MetaevalRun
from tests.metaeval.test_views_report import page_with_tables
from tests.metaeval.test_views_runs import isolated, rate_all  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
PAIRWISE_TABLES = ("pairwise_ratings", "pairwise_wtl", "pairwise_win_fraction", "pairwise_consistency")


def judgments(cases: int = 14) -> bytes:
    """Four systems, two criteria. ``quality``: a chain A-B-C-D with A-C, each pair won both ways (strongly
    connected); ``personal_fit``: Alpha-Model never loses (Bradley-Terry needs regularising). Alpha-Model and
    Delta-Model never meet (a blank heatmap cell). One invalid judgment."""
    a, b, c, d = "Alpha-Model", "Beta-Model", "Gamma-Model", "Delta-Model"
    lines = ["case_id,criterion,model_a,model_b,winner,judge_kind"]
    for case in range(cases):
        for x, y in ((a, b), (b, c), (c, d), (a, c)):
            quality = "model_a" if case % 3 else "model_b" if case % 6 else "tie"
            lines.append(f"c{case},quality,{x},{y},{quality},human")
            fit = "model_a" if x == a else ("tie" if case % 4 == 0 else "model_a" if case % 2 else "model_b")
            lines.append(f"c{case},personal_fit,{x},{y},{fit},llm")
    lines.append(f"c0,quality,{a},{b},invalid,llm")
    return ("\n".join(lines) + "\n").encode()


def _report(study, judgment_set: JudgmentSet | None) -> MetaevalRun:
    run = services.run_enqueue(
        dataset=study.dataset, study=study, options=RunOptions(measures=["rouge_l"], aux=["rouge_l"]), kind="report",
        seed=4, report={"n_boot": 40, "n_permutations": 10, "stability_samples": 2}, judgment_set=judgment_set,
    )
    services.run_launch(run)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


@pytest.fixture
def client(db) -> Client:
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("pairwise-reader", password="pw-for-tests-3")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def pairwise_run(study) -> MetaevalRun:
    rate_all(study, participants=2)
    judgment_set = services.judgment_set_import(name="prefs-pilot", data=judgments(), file_name="prefs.csv")
    return _report(study, judgment_set)


def _page(client: Client, run: MetaevalRun) -> str:
    response = client.get(f"/research/runs/{run.pk}/report/")
    assert response.status_code == 200
    return response.content.decode()


def _section(html: str) -> str:
    return html.split('<section class="card" id="section-pairwise">', 1)[1].split("</section>", 1)[0]


def test_the_section_is_shown_only_with_a_judgment_set(client, study, pairwise_run) -> None:
    plain = _report(study, None)
    html = _page(client, plain)
    assert "section-pairwise" not in html and "criterion-switch" not in html
    assert html.count("How to read this:") == 8  # e-DINS and pairwise accuracy: in every report
    html = _page(client, pairwise_run)
    section = _section(html)
    # after the leaderboard, before the correlations
    assert html.index('id="section-leaderboard"') < html.index('id="section-pairwise"') < html.index(
        'id="section-correlations"')
    assert "<h2>Pairwise judgments</h2>" in html
    assert html.count("How to read this:") == 11
    for figure in ("fig-pairwise-forest", "fig-pairwise-heatmap", "fig-pairwise-consistency"):
        div = re.search(rf'<div id="{figure}" class="fig" role="img" aria-label="([^"]+)"></div>\s*'
                        r'<p class="how"><strong>How to read this:</strong> ([^<]+)', section)
        assert div and div.group(1) and len(div.group(2)) > 80, figure
    counts = pairwise_run.report["pairwise"]["judgments"]
    assert "<strong>prefs-pilot</strong>" in section and "<code>prefs.csv</code>" in section
    assert f"{counts['read']} read, {counts['invalid']} invalid (left out), {counts['games']} games" in section
    assert (counts["read"], counts["invalid"]) == (14 * 8 + 1, 1)
    assert "Personal fit, Quality, Overall (all criteria)" in section
    parameters = pairwise_run.report["pairwise"]["parameters"]
    assert f"K = {parameters['k']:g}, scale {parameters['scale']:g}" in section
    assert f"{parameters['n_boot']} bootstrap rounds" in section and "2.5th to the 97.5th percentile" in section
    assert f"{parameters['seed']} (bootstrap), {parameters['seed'] + 1} (consistency curves)" in section


def test_a_regularised_bradley_terry_fit_is_noted(client, pairwise_run) -> None:
    regularised = pairwise_run.report["pairwise"]["regularised"]
    assert regularised["personal_fit"]["point"] and not regularised["quality"]["point"]
    section = _section(_page(client, pairwise_run))
    note = section.split('id="pairwise-regularised"', 1)[1].split("</div>", 1)[0]
    assert "Personal fit: Bradley-Terry was regularised in the point fit" in note
    assert "Quality:" not in note or regularised["quality"]["bootstrap_rounds"]
    rounds = regularised["personal_fit"]["bootstrap_rounds"]
    assert (f"{rounds} of 40 bootstrap rounds" in note) is bool(rounds)


def test_every_criterion_has_its_win_tie_loss_table_and_a_radio(client, pairwise_run) -> None:
    section = _section(_page(client, pairwise_run))
    criteria = pairwise_run.report["pairwise"]["judgments"]["criteria"]
    assert criteria == ["personal_fit", "quality", "overall"]
    radios = re.findall(r'<input type="radio" name="criterion" value="([^"]+)"( checked)?>', section)
    assert radios == [(c, " checked" if c == "overall" else "") for c in criteria]
    assert 'role="radiogroup" aria-label="Criterion" id="criterion-switch"' in section
    for index, criterion in enumerate(criteria):
        opening = re.search(rf'<div class="scroll pairwise-wtl" data-criterion="{criterion}" '
                            rf'id="pairwise-wtl-{index}"( hidden)?>', section)
        assert opening, criterion
        assert bool(opening.group(1)) is (criterion != "overall")  # shown without JavaScript: overall only
        table = section[opening.end():].split("</table>", 1)[0]
        assert f"<caption><strong>Win/tie/loss, {escape(display.criterion_name(criterion))}</strong>" in table
        stored = [row for row in pairwise_run.report["pairwise"]["wtl"] if row["criterion"] == criterion]
        shown = [re.findall(r"<td(?:\s[^>]*)?>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
                 if "<td" in row]
        assert len(shown) == len(stored) == 4
        for cells, row in zip(shown, stored, strict=True):
            assert cells == [row["model_a"], row["model_b"], *(display.fmt_number(row[key]) for key in (
                "win", "tie", "loss", "cases", "wins", "ties", "losses"))]
            assert abs(sum(float(cell) for cell in cells[2:5]) - 100) < 0.001
            assert int(cells[5]) == int(cells[6]) + int(cells[7]) + int(cells[8])
    figures = json.loads(_page(client, pairwise_run).split('<script id="report-figures" type="application/json">', 1)[1]
                         .split("</script>", 1)[0])
    for criterion, name in (("personal_fit", "Personal fit"), ("quality", "Quality"),
                            ("overall", "Overall (all criteria)")):
        for figure in ("forest", "heatmap", "consistency"):
            assert figures[f"fig-pairwise-{figure}@{criterion}"]["layout"]["title"]["text"].endswith(f"· {name}")


def test_every_criterion_has_its_ranking_with_rank_ranges_and_tied_bands(client, pairwise_run) -> None:
    """Per criterion a ranking table (overall shown without JavaScript): best first, the Bradley-Terry rating, its
    interval and the rank range as ``1-3`` computed from the stored intervals; tied rows marked."""
    section = _section(_page(client, pairwise_run))
    for index, criterion in enumerate(pairwise_run.report["pairwise"]["judgments"]["criteria"]):
        opening = re.search(rf'<div class="scroll pairwise-ranking" data-criterion="{criterion}" '
                            rf'id="pairwise-ranking-{index}"( hidden)?>', section)
        assert opening and bool(opening.group(1)) is (criterion != "overall"), criterion
        table = section[opening.end():].split("</table>", 1)[0]
        stored = sorted((row for row in pairwise_run.report["pairwise"]["ratings"] if row["criterion"] == criterion),
                        key=lambda row: (row["rank"], row["system"]))
        shown = re.findall(r'<tr data-band="(\d+)"( data-tied="true")?><td>([^<]*)</td><th scope="row">([^<]*)</th>'
                           r'<td class="num">([^<]*)</td>', table)
        assert [(rank, system, value) for _, _, rank, system, value in shown] == [
            (f"{row['rank_best']}" if row["rank_best"] == row["rank_worst"] else
             f"{row['rank_best']}-{row['rank_worst']}", escape(row["system"]), display.fmt_number(row["bt"]))
            for row in stored]
        for row, (_, tied, *_rest) in zip(stored, shown, strict=True):
            others = [r for r in stored if r is not row]
            overlaps = any(r["rank_best"] <= row["rank_worst"] and row["rank_best"] <= r["rank_worst"]
                           for r in others)
            assert bool(tied) is overlaps  # a range that overlaps another's is in a tied band, and only such


def test_headings_in_words_and_one_number_format(client, pairwise_run) -> None:
    html = page_with_tables(client, pairwise_run)
    for name in PAIRWISE_TABLES:
        assert f"<caption><strong>{escape(display.caption(name)[0])}</strong></caption>" in html, name
        assert f"/research/runs/{pairwise_run.pk}/tables/{name}.csv" in html
    headings = re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", html, re.S)
    assert headings and not [h for h in headings if "_" in h]
    for column, heading in (("elo_ci_low", "Elo, 2.5th percentile"), ("bt_ci_high", "Bradley-Terry, 97.5th percentile"),
                            ("win_fraction", "Win fraction (a tie counts half)")):
        assert f'title="CSV column {column}" scope="col">{heading}</th>' in html
    consistency = html.split('id="table-pairwise_consistency"', 1)[1].split("</table>", 1)[0]
    assert ">Sample size (games)</th>" in consistency and "n (systems)" not in consistency
    cells = re.findall(r"<td(?:\s[^>]*)?>(.*?)</td>", html, re.S)
    assert not [c for c in cells if re.search(r"\d[eE][-+]?\d", c)]
    assert not [c for c in cells if re.fullmatch(r"-?\d+\.\d{5,}", c.strip())]
    ratings = html.split('id="table-pairwise_ratings"', 1)[1].split("</table>", 1)[0]
    first = pairwise_run.report["tables"]["pairwise_ratings"][0]
    assert f'<td class="num">{display.fmt_number(first["elo_median"])}</td>' in ratings
    assert re.fullmatch(r"-?\d+\.\d{4}", display.fmt_number(first["elo_median"]))


def test_pairwise_downloads_keep_full_precision(client, pairwise_run) -> None:
    for name in PAIRWISE_TABLES:
        rows = pairwise_run.report["tables"][name]
        assert rows, name
        response = client.get(f"/research/runs/{pairwise_run.pk}/tables/{name}.csv")
        assert response.status_code == 200
        parsed = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert len(parsed) == len(rows), name
        for got, row in zip(parsed, rows, strict=True):
            for key, value in row.items():
                if isinstance(value, float):
                    assert float(got[key]) == value, (name, key)  # every digit, not the page's 4 decimals
                else:
                    assert got[key] == str(value), (name, key)
        assert json.loads(client.get(f"/research/runs/{pairwise_run.pk}/tables/{name}.json").content) == rows
    precise = [v for row in pairwise_run.report["tables"]["pairwise_ratings"] for v in row.values()
               if isinstance(v, float) and round(v, 4) != v]
    assert precise  # the comparison above did test digits beyond the fourth


def test_the_downloaded_html_report_has_the_section(client, pairwise_run) -> None:
    response = client.get(f"/research/runs/{pairwise_run.pk}/report.html")
    html = response.content.decode()
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    section = _section(html)
    assert "<strong>prefs-pilot</strong>" in section and 'id="criterion-switch"' in section
    assert section.count('class="scroll pairwise-wtl"') == 3
    assert "selectCriterion" in html  # the drawing script, inlined
    data = json.loads(html.split('<script id="report-figures" type="application/json">', 1)[1].split("</script>", 1)[0])
    ratings = [r for r in pairwise_run.report["pairwise"]["ratings"] if r["criterion"] == "overall"]
    forest = data["fig-pairwise-forest@overall"]["data"]
    assert sorted(forest[1]["x"]) == sorted(r["bt"] for r in ratings)  # Bradley-Terry, best first
