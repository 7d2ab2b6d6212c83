"""The pairwise judgments page (upload all or nothing, every problem listed), the run form's judgment set, and
the same through the API; researchers only."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from metaeval.models import JudgmentSet, MetaevalRun
from tests.metaeval.test_judgment_sets import judgment_csv
from tests.metaeval.test_views_runs import form, isolated, rate_all  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
PASSWORD = "pw-for-judgments-1"


@pytest.fixture
def client(db) -> Client:
    user = User.objects.create_user("judge-res", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def upload(client: Client, name: str, data: bytes, file_name: str = "prefs.csv", **extra):
    return client.post("/research/runs/judgments/", {
        "name": name, "description": "pilot", "file": SimpleUploadedFile(file_name, data, "text/csv"), **extra})


def test_upload_stores_the_set_and_lists_it(client):
    response = upload(client, "pilot-1", judgment_csv())
    assert response.status_code == 302 and response["Location"] == "/research/runs/judgments/"
    page = client.get("/research/runs/judgments/").content.decode()
    assert "Judgment set pilot-1 stored: 73 judgments (1 invalid), 72 games." in page
    row = page.split('data-name="pilot-1"', 1)[1].split("</tr>", 1)[0]
    assert "prefs.csv" in row and "<td>73</td><td>1</td><td>72</td>" in row
    assert "personalization, quality, overall" in row and "SysnameA, SysnameB, SysnameC" in row
    assert JudgmentSet.objects.get().created_by.username == "judge-res"


def test_a_bad_file_lists_every_problem_and_stores_nothing(client):
    upload(client, "kept", judgment_csv())
    bad = b"case_id,criterion,model_a,model_b,winner\nc1,q,A,A,model_a\nc2,overall,A,B,model_b\nc3,q,A,B,left\n"
    response = upload(client, "bad", bad, "bad.csv")
    assert response.status_code == 400
    page = response.content.decode()
    assert "Nothing was stored." in page
    problems = page.split('id="upload-problems"', 1)[1].split("</ul>", 1)[0]
    assert problems.count("<li>") == 3
    assert "bad.csv:2: field &quot;model_b&quot;" in problems and "bad.csv:4: field &quot;winner&quot;" in problems
    assert list(JudgmentSet.objects.values_list("name", flat=True)) == ["kept"]


def test_a_taken_name_or_no_game_is_a_field_error(client):
    upload(client, "once", judgment_csv())
    taken = upload(client, "once", judgment_csv())
    assert taken.status_code == 400 and "exists already" in taken.content.decode()
    invalid = upload(client, "nothing", b"case_id,criterion,model_a,model_b,winner\nc1,q,A,B,invalid\n", "i.csv")
    assert invalid.status_code == 400 and "i.csv: no valid judgment (1 invalid)" in invalid.content.decode()
    spaces = upload(client, "two words", judgment_csv())
    assert spaces.status_code == 400 and JudgmentSet.objects.count() == 1


def test_the_page_needs_a_researcher_and_csrf():
    anonymous = Client()
    assert anonymous.get("/research/runs/judgments/").status_code == 302  # to the login page
    plain = User.objects.create_user("plain-j", password=PASSWORD)
    client = Client()
    client.force_login(plain)
    assert client.get("/research/runs/judgments/").status_code == 403
    researcher = User.objects.create_user("csrf-j", password=PASSWORD)
    researcher.groups.add(Group.objects.get_or_create(name="researcher")[0])
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(researcher)
    assert upload(strict, "x", judgment_csv()).status_code == 403
    assert not JudgmentSet.objects.exists()


def test_the_run_form_adds_a_judgment_set_to_a_full_report(client, study):
    rate_all(study, participants=2)
    upload(client, "prefs", judgment_csv())
    page = client.get("/research/runs/").content.decode()
    assert '<option value="prefs">' in page.split('name="judgment_set"', 1)[1].split("</select>", 1)[0]
    scores_only = form(study, judgment_set="prefs")
    response = client.post("/research/runs/", scores_only)
    assert response.status_code == 400 and "Pairwise judgments go with a full report" in response.content.decode()
    assert not MetaevalRun.objects.exists()
    response = client.post("/research/runs/", form(study, judgment_set="prefs", full_report="on", n_boot="30",
                                                   n_permutations="10", stability_samples="2"))
    assert response.status_code == 302
    run = MetaevalRun.objects.get()
    assert run.status == "done", run.error
    assert run.judgment_set.name == "prefs" and run.report["pairwise"]["judgments"]["games"] == 72
    unknown = client.post("/research/runs/", form(study, judgment_set="nope", full_report="on"))
    assert unknown.status_code == 400 and MetaevalRun.objects.count() == 1


def test_the_api_lists_sets_and_runs_a_report_with_one(study):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from metaeval import services

    rate_all(study, participants=2)
    user = User.objects.create_user("api-j", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    services.judgment_set_import(name="prefs", data=judgment_csv(), file_name="prefs.csv")
    listed = api.get("/api/judgment-sets/").json()
    assert [(s["name"], s["judgments"], s["games"], s["systems"]) for s in listed] == [
        ("prefs", 73, 72, ["SysnameA", "SysnameB", "SysnameC"])]
    assert "content" not in listed[0]
    request = {"dataset": study.dataset.name, "study": study.slug, "measures": ["rouge_l"], "kind": "report",
               "judgment_set": "prefs", "report": {"n_boot": 30, "n_permutations": 10, "stability_samples": 2}}
    created = api.post("/api/runs/", request, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["judgment_set"] == "prefs" and created.json()["status"] == "done"
    report = api.get(f"/api/runs/{created.json()['id']}/report/").json()
    assert report["pairwise"]["judgments"]["games"] == 72
    # rank ranges in both leaderboards' rows (conventions sec. 27.4); at their end, except on PostgreSQL, whose jsonb
    # keeps no key order (a stored report's rows come back with their keys sorted by length)
    ordered = connection.vendor != "postgresql"
    for rows in (report["pairwise"]["ratings"], report["tables"]["pairwise_ratings"], report["tables"]["scores"],
                 report["leaderboard"]):
        if ordered:
            assert list(rows[0])[-3:] == ["rank", "rank_best", "rank_worst"]
        assert {"rank", "rank_best", "rank_worst"} <= set(rows[0])
        assert all(1 <= row["rank_best"] <= row["rank"] <= row["rank_worst"] for row in rows)
    wrong = api.post("/api/runs/", {**request, "judgment_set": "nope"}, format="json")
    assert wrong.status_code == 400 and 'Unknown judgment set "nope" (known: prefs).' in wrong.json()["judgment_set"][0]
    scores = api.post("/api/runs/", {**request, "kind": "scores"}, format="json")
    assert scores.status_code == 400 and "full report" in str(scores.json())
    assert MetaevalRun.objects.count() == 1
    assert Client().get("/api/judgment-sets/").status_code in (401, 403)
