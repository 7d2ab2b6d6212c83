"""The judge-run endpoints (/api/studies/{slug}/judge-runs/...) and the judgments export's ``source``: who may call
them, a run started over HTTP against a local stub, refused settings, cancel/resume, 404/409."""
from __future__ import annotations

import csv
import io

import pytest

from metaeval.core.judges.cases import parse_cases
from survey import judge_runs
from survey.models import JudgeEndpoint, JudgeRun, PreferenceItem
from tests.survey.test_judge_runs import RankStub, ranked_study, run_settings, stub_endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def stub():
    server = RankStub()
    yield server
    server.close()


def test_only_researchers_see_or_start_judge_runs(api, plain_api, stub):
    study = ranked_study()
    body = {"endpoint": stub_endpoint(stub).name, "settings": run_settings(), "runs": 2}
    for client, code in ((api, 401), (plain_api, 403)):
        assert client.get(f"/api/studies/{study.slug}/judge-runs/").status_code == code
        assert client.post(f"/api/studies/{study.slug}/judge-runs/", body, format="json").status_code == code
    assert not JudgeRun.objects.exists() and not stub.requests


def test_a_run_started_over_http_and_its_judgments(researcher_api, stub, django_capture_on_commit_callbacks):
    study = ranked_study()
    items = PreferenceItem.objects.filter(questionnaire__study=study).count()
    body = {"endpoint": stub_endpoint(stub).name, "kind": "openai", "settings": run_settings(), "runs": 2,
            "criteria": ["quality"]}
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_api.post(f"/api/studies/{study.slug}/judge-runs/", body, format="json")
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == "queued" and created["total"] == items * 2 and created["name"] == "stub-judge"
    detail = researcher_api.get(f"/api/studies/{study.slug}/judge-runs/{created['id']}/").json()
    assert detail["status"] == "done" and detail["done"] == items * 2
    assert detail["settings"]["endpoint"] == "stub" and len(detail["templates_sha256"]) == 64
    listed = researcher_api.get(f"/api/studies/{study.slug}/judge-runs/").json()
    assert [run["id"] for run in listed] == [created["id"]]
    text = b"".join(researcher_api.get(f"/api/studies/{study.slug}/judgments/?source=llm").streaming_content)
    rows = list(csv.DictReader(io.StringIO(text.decode())))
    assert len(rows) == items * 2 and {row["judge_kind"] for row in rows} == {"llm"}
    human = b"".join(researcher_api.get(f"/api/studies/{study.slug}/judgments/?source=human").streaming_content)
    assert human.decode().count("\n") == 1  # the header only: nobody has answered
    bad = researcher_api.get(f"/api/studies/{study.slug}/judgments/?source=robots")
    assert bad.status_code == 400 and "source" in bad.json()
    # done: nothing to resume, 409; cancel leaves a finished run as it is
    resume = researcher_api.post(f"/api/studies/{study.slug}/judge-runs/{created['id']}/resume/")
    assert resume.status_code == 409 and "only a failed or cancelled run" in resume.json()["detail"]
    cancel = researcher_api.post(f"/api/studies/{study.slug}/judge-runs/{created['id']}/cancel/")
    assert cancel.status_code == 200 and cancel.json()["status"] == "done"


def test_refusals_name_the_problem(researcher_api, stub):
    study = ranked_study()
    url = f"/api/studies/{study.slug}/judge-runs/"
    response = researcher_api.post(url, {"kind": "openai", "settings": {"model": "m"}}, format="json")
    assert response.status_code == 400 and response.json()["endpoint"] == ["This field is required."]
    stub_endpoint(stub)
    response = researcher_api.post(url, {"endpoint": "stub", "settings": {"model": "m"}}, format="json")
    assert response.status_code == 400
    assert "model: 'm' is not offered by endpoint stub" in response.json()["non_field_errors"][0]
    response = researcher_api.post(url, {"endpoint": "stub", "kind": "llama", "settings": {}}, format="json")
    assert response.status_code == 400 and "kind" in response.json()
    assert researcher_api.get("/api/studies/nope/judge-runs/").status_code == 404
    assert researcher_api.get(f"{url}999/").status_code == 404
    assert not JudgeRun.objects.exists()


def test_a_similarity_study_has_no_judge_runs(researcher_api, study):
    response = researcher_api.get(f"/api/studies/{study.slug}/judge-runs/")
    assert response.status_code == 409 and "collects ratings" in response.json()["detail"]


def test_cancel_then_resume_a_queued_run(researcher_api, stub, django_capture_on_commit_callbacks):
    study = ranked_study()
    run = judge_runs.judge_run_create(study=study, endpoint=stub_endpoint(stub).name, settings=run_settings(),
                                      runs=2, criteria=["quality"], launch=False)
    cancelled = researcher_api.post(f"/api/studies/{study.slug}/judge-runs/{run.pk}/cancel/").json()
    assert cancelled["status"] == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        resumed = researcher_api.post(f"/api/studies/{study.slug}/judge-runs/{run.pk}/resume/")
    assert resumed.status_code == 200 and resumed.json()["status"] == "queued"
    run.refresh_from_db()
    assert run.status == "done" and run.done == run.total


def test_the_cases_download_is_a_cases_file_of_the_judge_command(client, researcher):
    study = ranked_study()
    client.force_login(researcher)
    response = client.get(f"/research/studies/{study.slug}/judge-cases.jsonl")
    assert response.status_code == 200
    cases = parse_cases(response.content.decode(), "cases.jsonl")
    assert len(cases) == PreferenceItem.objects.filter(questionnaire__study=study).count()
    assert all(case.context.startswith("Body of article") and case.examples for case in cases)
    assert client.get(f"/research/studies/{study.slug}/judgments.csv?source=x").status_code == 400


def test_the_probes_exfiltration_body_is_refused_over_http(researcher_api, stub, monkeypatch):
    """Issue 28's request, verbatim: a free base URL and SECRET_KEY as the key variable. 400, no run, no request."""
    monkeypatch.setenv("SECRET_KEY", "the-platform-secret")
    study = ranked_study()
    url = f"/api/studies/{study.slug}/judge-runs/"
    attack = {"kind": "openai", "runs": 2,
              "settings": {"base_url": stub.url, "model": "x", "api_key_env": "SECRET_KEY"}}
    response = researcher_api.post(url, attack, format="json")
    assert response.status_code == 400 and response.json() == {"endpoint": ["This field is required."]}
    stub_endpoint(stub)
    response = researcher_api.post(url, {**attack, "endpoint": "stub"}, format="json")
    problems = response.json()["non_field_errors"][0]
    assert response.status_code == 400
    assert "base_url: set by the operator" in problems and "api_key_env: set by the operator" in problems
    assert not JudgeRun.objects.exists() and not stub.requests


def test_researchers_list_the_endpoints_without_their_address_or_key(researcher_api, api, stub):
    stub_endpoint(stub, api_key_env="STUB_API_KEY", description="local stub")
    JudgeEndpoint.objects.create(name="off", base_url="https://example.org/v1", model_choices="m", enabled=False)
    assert api.get("/api/judge-endpoints/").status_code == 401
    listed = researcher_api.get("/api/judge-endpoints/").json()
    assert listed == [{"name": "stub", "kind": "openai", "description": "local stub", "models": ["stub-judge"],
                       "max_concurrency": 4}]
