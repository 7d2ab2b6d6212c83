"""The judges-vs-people page of a preference study (issue 32): the selector's table is the study's exported
judgment file, each prompt version of a judge is its own column, the result is cached until the judgments change;
the page, its criterion selector and CSV, for researchers only."""
from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from metaeval.core.judges.versus import judges_vs_people
from metaeval.core.pairwise.judgments import parse_judgments
from survey import exporting, selectors
from survey.models import JudgeJudgment, JudgeRun, Participant
from tests.survey.bulk_judgments import add_human_judgments, add_llm_judgments, bulk_preference_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    study = bulk_preference_study("vs")
    add_human_judgments(study, 3 * 9 * 2 * 2)  # every item twice per criterion
    add_llm_judgments(study, 9 * 4 * 2 * 2, repeats=4)
    return study


def _researcher_client() -> Client:
    user = User.objects.create_user("vs-res", password="pw-for-tests-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def _exported(study) -> str:
    rows, names = selectors.study_judgment_file(study=study, exclude_excluded=True)
    out = io.StringIO()
    exporting.write_rows(rows, out, names)
    return out.getvalue()


def test_the_table_is_the_exported_judgment_file(study):
    """The page computes on exactly the judgments a researcher downloads (participants not excluded, then the
    judge runs): the same numbers as the core on the parsed export."""
    first = Participant.objects.filter(study=study).order_by("pk").first()
    Participant.objects.filter(pk=first.pk).update(excluded=True)
    table = selectors.study_judgment_table(study=study)
    parsed = parse_judgments(_exported(study), "export.csv", json_lines=False)
    assert len(table.judgments) == len(parsed.judgments)
    mine, theirs = judges_vs_people(table), judges_vs_people(parsed)
    assert mine["judges"] == theirs["judges"] == ["bulk-judge-0"]
    assert mine["tables"] == theirs["tables"]
    assert mine["human_judgments"] == theirs["human_judgments"] < 3 * 9 * 2 * 2


def test_prompt_versions_are_columns_side_by_side(study):
    """Two runs of one judge name with different prompt SHA-256 are two columns, never pooled; a name with one
    version keeps its plain name."""
    first = JudgeRun.objects.get(study=study)
    JudgeRun.objects.filter(pk=first.pk).update(name="gpt", templates_sha256="a" * 64)
    add_llm_judgments(study, 9 * 4 * 2, repeats=4)
    second = JudgeRun.objects.filter(study=study).exclude(pk=first.pk).get()
    JudgeRun.objects.filter(pk=second.pk).update(name="gpt", templates_sha256="b" * 64)
    columns = selectors.judge_columns(study=study)
    assert [c.column for c in columns] == ["gpt @ aaaaaaaa", "gpt @ bbbbbbbb"]
    assert [c.judgments for c in columns] == [9 * 4 * 2 * 2, 9 * 4 * 2]
    result = selectors.study_versus(study=study)
    assert result["judges"] == ["gpt @ aaaaaaaa", "gpt @ bbbbbbbb"]
    assert result["judge_judgments"] == {"gpt @ aaaaaaaa": 9 * 4 * 2 * 2, "gpt @ bbbbbbbb": 9 * 4 * 2}
    assert [v["templates_sha256"] for v in result["versions"]] == ["a" * 64, "b" * 64]
    assert {row["judge"] for row in result["tables"]["agreement"]} == set(result["judges"])


def test_the_result_is_cached_until_the_judgments_change(study, django_assert_max_num_queries):
    before = selectors.study_versus(study=study)
    with django_assert_max_num_queries(6):  # the fingerprint only: no judgment is read again
        assert selectors.study_versus(study=study) == before
    JudgeJudgment.objects.create(judge_run=JudgeRun.objects.get(study=study),
                                 item=JudgeJudgment.objects.filter(judge_run__study=study).first().item,
                                 criterion=study.criteria[0]["name"], run=99, winner="model_a",
                                 shown_first="model_a")
    after = selectors.study_versus(study=study)
    assert after["judge_judgments"]["bulk-judge-0"] == before["judge_judgments"]["bulk-judge-0"] + 1


def test_no_judge_yet_says_so():
    study = bulk_preference_study("vs-empty")
    add_human_judgments(study, 10)
    result = selectors.study_versus(study=study)
    assert "no judge other than 'human' judgments" in result["error"] and result["tables"] == {}
    html = _researcher_client().get(f"/research/studies/{study.slug}/judges-vs-people/").content.decode()
    assert 'id="versus-error"' in html and "no judge other than" in html


def test_the_page_shows_one_criterion_with_judges_as_columns(study):
    client = _researcher_client()
    url = f"/research/studies/{study.slug}/judges-vs-people/"
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    for part in ('id="criterion"', 'id="agreement-table"', 'id="matrix-table"', 'id="alt-test-table"',
                 'id="ppi-table"', 'id="versions-table"', 'data-style-source="people"',
                 'data-style-source="bulk-judge-0"'):
        assert part in html, part
    assert '<option value="overall" selected>' in html
    criterion = study.criteria[0]["name"]
    html = client.get(url, {"criterion": criterion}).content.decode()
    assert f'<option value="{criterion}" selected>' in html and f"Agreement with the people · {criterion}" in html
    bad = client.get(url, {"criterion": "nope"})
    assert bad.status_code == 400 and b"criterion must be one of" in bad.content
    study_page = client.get(f"/research/studies/{study.slug}/").content.decode()
    judges_page = client.get(f"/research/studies/{study.slug}/judges/").content.decode()
    assert url in study_page and url in judges_page


def test_the_csv_has_every_criterion_of_a_table(study):
    client = _researcher_client()
    url = f"/research/studies/{study.slug}/judges-vs-people.csv"
    response = client.get(url, {"table": "ppi"})
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert {row["criterion"] for row in rows} == {*(c["name"] for c in study.criteria), "overall"}
    assert {"judge", "system", "human", "ppi", "ppi_plus", "ppi_plus_low"} <= set(rows[0])
    default = client.get(url)
    header = b"".join(default.streaming_content).decode().splitlines()[0].split(",")
    assert header[:5] == ["criterion", "judge", "items", "accuracy", "cohen_kappa"]
    assert client.get(url, {"table": "x"}).status_code == 400


def test_only_researchers_see_it(study):
    url = f"/research/studies/{study.slug}/judges-vs-people/"
    assert Client().get(url).status_code == 302
    plain = User.objects.create_user("vs-plain", password="pw-for-tests-1")
    client = Client()
    client.force_login(plain)
    assert client.get(url).status_code == 403
    assert client.get(f"/research/studies/{study.slug}/judges-vs-people.csv").status_code == 403


def test_a_study_over_the_bound_is_not_computed_in_the_request(study, monkeypatch):
    """The page's work is bounded: above MAX_JUDGMENTS judgments it computes nothing and says where the numbers
    are (the commands, a report)."""
    from survey.selectors import versus

    total = 3 * 9 * 2 * 2 + 9 * 4 * 2 * 2
    monkeypatch.setattr(versus, "MAX_JUDGMENTS", total - 1)
    result = selectors.study_versus(study=study)
    assert result["tables"] == {} and result["versions"][0]["column"] == "bulk-judge-0"
    assert result["error"] == (f"study vs: {total} judgments, more than the {total - 1} this page computes while you "
                               "wait; download the judgments (participants and LLM judges) and run python -m "
                               "metaeval agreement, ppi and alt-test on the file, or make a report from a judgment "
                               "set of them (its pairwise section has these tables)")
    html = _researcher_client().get(f"/research/studies/{study.slug}/judges-vs-people/").content.decode()
    assert 'id="versus-error"' in html and "more than the" in html
    monkeypatch.setattr(versus, "MAX_JUDGMENTS", total)
    assert selectors.study_versus(study=study)["error"] is None
