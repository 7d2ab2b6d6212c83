"""The pairwise section's judges against people on the report page (conventions sec. 26 item 12): a judgment set
with people and a named judge gets a table of the judge's leaderboard against the people's, with report.json's
numbers in the report's format and the full-precision download; a set without both says why."""
from __future__ import annotations

import csv
import io
import re

import numpy as np
import pytest
from django.test import Client

from metaeval import services
from metaeval.core import display
from metaeval.core.pairwise.judge_accuracy import JUDGE_COLUMNS, judge_accuracy
from metaeval.core.pairwise.judgments import judgments_from_bytes
from tests.metaeval.test_views_report_pairwise import _page, _report, _section, judgments
from tests.metaeval.test_views_runs import isolated, rate_all  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
@pytest.fixture
def client(db) -> Client:
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("judges-reader", password="pw-for-tests-4")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


SYSTEMS = ("Alpha-Model", "Beta-Model", "Gamma-Model", "Delta-Model", "Eta-Model")


def people_and_judge(cases: int = 12, seed: int = 3) -> bytes:
    """Two people and the judge "gpt-judge" on every pair of five systems per case, two criteria: the people
    follow the systems' order with some noise, the judge swaps the middle two more often than not."""
    rng = np.random.default_rng(seed)
    lines = ["case_id,criterion,model_a,model_b,winner,judge,judge_kind"]
    for criterion in ("quality", "personal_fit"):
        for case in range(cases):
            for i, a in enumerate(SYSTEMS):
                for j, b in enumerate(SYSTEMS[i + 1:], start=i + 1):
                    for person in ("p1", "p2"):
                        winner = "model_a" if rng.random() < 0.5 + 0.1 * (j - i) else "model_b"
                        lines.append(f"c{case},{criterion},{a},{b},{winner},{person},human")
                    swapped = {i, j} == {1, 2} and rng.random() < 0.7
                    better_a = rng.random() < 0.5 + 0.1 * (j - i)
                    winner = "tie" if rng.random() < 0.1 else "model_a" if better_a != swapped else "model_b"
                    lines.append(f"c{case},{criterion},{a},{b},{winner},gpt-judge,llm")
    return ("\n".join(lines) + "\n").encode()


def test_a_set_with_people_and_a_judge_shows_the_judge_against_people(client, study) -> None:
    rate_all(study, participants=2)
    data = people_and_judge()
    run = _report(study, services.judgment_set_import(name="people-and-judge", data=data, file_name="pj.csv"))
    rows = run.report["tables"]["pairwise_judge_accuracy"]
    parameters = run.report["parameters"]
    section = run.report["pairwise"]["judge_accuracy"]
    # the section's settings are the report's; its numbers those of the core on the same file
    assert (section["n_boot"], section["n_permutations"]) == (parameters["n_boot"], parameters["n_permutations"])
    _, expected = judge_accuracy(judgments_from_bytes(data, "pj.csv"), n_boot=parameters["n_boot"],
                                 n_permutations=parameters["n_permutations"], confidence=parameters["confidence"],
                                 seed=section["seed"])
    assert rows == [{key: (None if isinstance(v, float) and v != v else v) for key, v in row.items()}
                    for row in expected]
    assert [r["criterion"] for r in rows] == ["personal_fit", "quality", "overall"]
    html = _section(_page(client, run))
    table = html.split('id="judge-accuracy-table"', 1)[1].split("</table>", 1)[0]
    shown = [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", table, re.S)][1:]
    fmt = display.fmt_number
    assert shown == [[
        "gpt-judge", display.criterion_name(r["criterion"]), fmt(r["items"]), fmt(r["documents"]), fmt(r["pairs"]),
        fmt(r["accuracy"]),
        f"{fmt(r['accuracy_low'])} to {fmt(r['accuracy_high'])}", fmt(r["acc_eq"]),
        f"{fmt(r['acc_eq_low'])} to {fmt(r['acc_eq_high'])}", fmt(r["epsilon"]), fmt(r["spa"]),
        f"{fmt(r['spa_low'])} to {fmt(r['spa_high'])}", fmt(r["bt_accuracy"]), fmt(r["bt_acc_eq"])] for r in rows]
    assert "Over the items (case, criterion, pair of systems) that both the people" in html
    # the download keeps every column at full precision (in the stored document's key order: PostgreSQL's jsonb
    # does not keep the order the report wrote them in)
    download = client.get(f"/research/runs/{run.pk}/tables/pairwise_judge_accuracy.csv")
    parsed = list(csv.DictReader(io.StringIO(download.content.decode())))
    assert set(parsed[0]) == set(JUDGE_COLUMNS) and float(parsed[0]["spa"]) == rows[0]["spa"]


def test_a_set_without_named_judges_says_why(client, study) -> None:
    rate_all(study, participants=2)
    run = _report(study, services.judgment_set_import(name="prefs", data=judgments(), file_name="prefs.csv"))
    assert "pairwise_judge_accuracy" not in run.report["tables"]
    note = run.report["pairwise"]["judge_accuracy"]["note"]
    assert note == "Judges against people need both: this set has no named judge of another kind."
    html = _section(_page(client, run))
    assert f'<p class="muted" id="judge-accuracy-note">{note}</p>' in html
    assert 'id="judge-accuracy-table"' not in html


def with_lengths(data: bytes) -> bytes:
    """The judgment file with the texts' lengths: a system's text on every case is as long as its place in
    SYSTEMS (1 to 5 words), so the better systems write shorter texts."""
    lines = data.decode().splitlines()
    out = [lines[0] + ",length_a,length_b"]
    for line in lines[1:]:
        cells = line.split(",")
        out.append(line + f",{SYSTEMS.index(cells[2]) + 1},{SYSTEMS.index(cells[3]) + 1}")
    return ("\n".join(out) + "\n").encode()


def test_the_judges_item_by_item_are_the_cores_numbers_and_on_the_page(client, study) -> None:
    """The pairwise section's judges-vs-people part (issue 32): the tables ``pairwise_judges_*`` are
    :func:`judges_vs_people` of the same file and its lengths, with the report's bootstrap size, seed and
    confidence; the page shows them per criterion, overall open."""
    from metaeval.core.judges.versus import judges_vs_people
    from metaeval.core.pairwise.features import parse_style_data
    from metaeval.core.pairwise.report import VERSUS_TABLES

    rate_all(study, participants=2)
    data = with_lengths(people_and_judge(cases=6))
    run = _report(study, services.judgment_set_import(name="pj-lengths", data=data, file_name="pjl.csv"))
    parameters = run.report["parameters"]
    section = run.report["pairwise"]["judges_vs_people"]
    assert section["judges"] == ["gpt-judge"] and section["n_boot"] == parameters["n_boot"]
    assert section["alpha"] == pytest.approx(1 - parameters["confidence"])
    expected = judges_vs_people(judgments_from_bytes(data, "pjl.csv"), parse_style_data(data.decode(), "pjl.csv",
                                json_lines=False), alpha=section["alpha"], n_boot=section["n_boot"],
                                seed=section["seed"])
    for name, table in VERSUS_TABLES.items():
        if expected["tables"][name]:
            assert run.report["tables"][table] == expected["tables"][name], name
        else:
            assert table not in run.report["tables"]
    agreement = {row["criterion"]: row for row in run.report["tables"]["pairwise_judges_agreement"]}
    assert agreement["overall"]["length_items"] > 0 and agreement["overall"]["ceiling_items"] > 0
    assert {row["source"] for row in run.report["tables"]["pairwise_judges_style"]} == {"people", "gpt-judge"}
    html = _section(_page(client, run))
    assert html.count('class="versus-criterion"') == 3
    assert '<details class="versus-criterion" data-criterion="overall" open>' in html
    for part in ("agreement", "matrix", "alt-test", "ppi"):
        assert f'id="versus-overall-{part}-table"' in html and f'id="versus-quality-{part}-table"' in html
    assert "gpt-judge and the longer text: its mean score" in html
    download = client.get(f"/research/runs/{run.pk}/tables/pairwise_judges_ppi.csv")
    assert download.status_code == 200 and "ppi_plus" in download.content.decode().splitlines()[0]


def test_a_set_without_a_judge_has_no_judges_item_by_item(client, study) -> None:
    rate_all(study, participants=2)
    run = _report(study, services.judgment_set_import(name="prefs-only", data=judgments(), file_name="p.csv"))
    assert not any(name.startswith("pairwise_judges_") for name in run.report["tables"])
    note = run.report["pairwise"]["judges_vs_people"]["note"]
    assert note.startswith("Judges against people need both a judge and people: p.csv: no judge other than")
    assert 'id="judges-vs-people-note"' in _section(_page(client, run))
