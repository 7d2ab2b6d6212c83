"""What the endpoints answer: datasets, studies (progress, ratings export), runs (create, detail, results),
validation errors by field, unknown ids, and the OpenAPI schema."""
from __future__ import annotations

import io
import json

import pytest
import yaml
from django.core.management import call_command
from drf_spectacular.validation import validate_schema

from metaeval import selectors, services
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import COLUMNS, RunOptions
from metaeval.models import MetaevalRun
from survey import exporting
from survey.selectors import ratings_export_rows, study_progress
from tests.conftest import build_dataset, build_study

pytestmark = pytest.mark.django_db

PATHS = [
    "/api/token/",
    "/api/datasets/",
    "/api/datasets/{name}/",
    "/api/datasets/{name}/systems/",
    "/api/studies/",
    "/api/studies/{slug}/",
    "/api/studies/{slug}/progress/",
    "/api/studies/{slug}/ratings/",
    "/api/studies/{slug}/judgments/",
    "/api/studies/{slug}/judge-runs/",
    "/api/studies/{slug}/judges-vs-people/",
    "/api/studies/{slug}/judge-runs/{id}/",
    "/api/studies/{slug}/judge-runs/{id}/cancel/",
    "/api/studies/{slug}/judge-runs/{id}/resume/",
    "/api/judge-endpoints/",
    "/api/judgment-sets/",
    "/api/runs/",
    "/api/runs/{id}/",
    "/api/runs/{id}/cancel/",
    "/api/runs/{id}/retry/",
    "/api/runs/{id}/results/",
    "/api/runs/{id}/report/",
]


# ---------------------------------------------------------------------------------------------- datasets


def test_datasets_with_counts_and_systems(researcher_api, dataset):
    build_dataset(name="other", docs=1, readers=2, systems=["SysnameA", "SysnameZ"])
    build_study(dataset, slug="s1")
    listed = researcher_api.get("/api/datasets/").json()
    assert [d["name"] for d in listed] == ["other", "tiny"]
    tiny = researcher_api.get("/api/datasets/tiny/").json()
    assert tiny == listed[1]
    # 3 documents x 3 readers x (10 systems + the readers' own)
    counts = (tiny["documents"], tiny["readers"], tiny["systems"], tiny["summaries"], tiny["studies"])
    assert counts == (3, 3, 10, 99, 1)
    assert (listed[0]["documents"], listed[0]["readers"], listed[0]["systems"], listed[0]["studies"]) == (1, 2, 2, 0)
    systems = researcher_api.get("/api/datasets/other/systems/").json()
    assert systems == [
        {"name": "SysnameA", "kind": "personalized", "variant": "", "description": "", "summaries": 2},
        {"name": "SysnameZ", "kind": "personalized", "variant": "", "description": "", "summaries": 2},
    ]
    assert len(researcher_api.get("/api/datasets/tiny/systems/").json()) == 10


# ----------------------------------------------------------------------------------------------- studies


def test_studies_with_progress(researcher_api, rated_study):
    other = build_study(build_dataset(name="other", docs=1, readers=2, systems=["SysnameA"]), slug="other-study")
    assert {s["slug"] for s in researcher_api.get("/api/studies/").json()} == {"study", "other-study"}
    assert [s["slug"] for s in researcher_api.get("/api/studies/?dataset=other").json()] == [other.slug]
    bad = researcher_api.get("/api/studies/?dataset=nope")
    assert bad.status_code == 400 and "dataset" in bad.json()

    detail = researcher_api.get("/api/studies/study/").json()
    progress = study_progress(rated_study)
    assert detail["dataset"] == "tiny" and detail["status"] == "open" and len(detail["systems"]) == 10
    expected = {
        "questionnaires": progress.questionnaires, "complete": progress.complete,
        "all_slots_taken": progress.all_slots_taken, "with_free_slot": progress.with_free_slot,
        "free_slots": progress.free_slots, "ratings_sets": progress.ratings_sets,
        "ratings_sets_needed": progress.ratings_sets_needed, "participants": progress.participants,
        "percent": progress.percent, "ratings_per_system": progress.ratings_per_system,
        "ranking": None,  # a similarity study has no live ranking
    }
    assert detail["progress"] == expected
    assert progress.participants == 2 and progress.percent == 100.0
    assert researcher_api.get("/api/studies/study/progress/").json() == expected


@pytest.mark.parametrize(
    "query, fmt", [("", "csv"), ("?as=csv", "csv"), ("?as=jsonl", "jsonl"), ("?format=jsonl", "jsonl")]
)
def test_ratings_export_equals_the_exporter(researcher_api, rated_study, query, fmt):
    build_study(rated_study.dataset, slug="unrated")  # other studies' ratings are not included
    response = researcher_api.get(f"/api/studies/study/ratings/{query}")
    assert response.status_code == 200 and response.streaming
    body = b"".join(response.streaming_content).decode("utf-8")
    expected = io.StringIO()
    count = exporting.write_ratings(ratings_export_rows(study=rated_study), expected, fmt)
    assert count > 0 and body == expected.getvalue()
    assert response["Content-Type"] == ("text/csv" if fmt == "csv" else "application/x-ndjson") + "; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="study-ratings.{fmt}"'


def test_ratings_export_of_an_unrated_study_and_bad_format(researcher_api, study):
    body = b"".join(researcher_api.get("/api/studies/study/ratings/?as=csv").streaming_content).decode()
    assert body == ",".join(exporting.EXPORT_COLUMNS) + "\n"
    assert b"".join(researcher_api.get("/api/studies/study/ratings/?as=jsonl").streaming_content) == b""
    bad = researcher_api.get("/api/studies/study/ratings/?as=xlsx")
    assert bad.status_code == 400 and "as" in bad.json()
    assert researcher_api.get("/api/studies/study/ratings/", HTTP_ACCEPT="text/csv").status_code == 200


@pytest.mark.parametrize("fmt", exporting.FORMATS)
def test_ratings_stream_batches_join_to_the_exporter_output(rated_study, fmt):
    rows = list(ratings_export_rows(study=rated_study))
    expected = io.StringIO()
    exporting.write_ratings(rows, expected, fmt)
    pieces = list(exporting.stream_export(rows, fmt, exporting.EXPORT_COLUMNS, batch=7))
    assert len(pieces) > 2 and "".join(pieces) == expected.getvalue()
    assert len(pieces) == (fmt == "csv") + -(-len(rows) // 7)  # the header alone, then 7 rows a piece


# -------------------------------------------------------------------------------------------------- runs


def test_created_run_matches_run_execute(researcher_api, researcher, rated_study):
    body = {
        "dataset": "tiny", "study": "study", "measures": ["rouge_l"], "aux": "rouge_l", "beta": 1.7,
        "systems": ["SysnameA", "SysnameB", "SysnameC"], "missing": "drop",
    }
    response = researcher_api.post("/api/runs/", body, format="json")
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == "done" and created["error"] == ""
    assert (created["dataset"], created["study"], created["created_by"], created["kind"]) == (
        "tiny", "study", "researcher", "scores")
    assert created["results"] == f"http://testserver/api/runs/{created['id']}/results/"

    options = RunOptions(
        measures=["rouge_l"], aux=["rouge_l"], params=Params(beta=1.7), systems=["SysnameA", "SysnameB", "SysnameC"],
        missing="drop",
    )
    reference = services.run_execute(dataset=rated_study.dataset, study=rated_study, options=options)
    results = researcher_api.get(created["results"]).json()
    assert results["status"] == "done" and results["columns"] == list(COLUMNS)
    assert results["scores"] == reference.scores
    assert [list(row) for row in results["scores"]] == [list(COLUMNS)] * len(reference.scores)
    assert results["hj_counts"] == reference.hj_counts
    assert set(results["hj_counts"]["hj:rouge_l"]) == set(body["systems"])
    assert {(row["system"], row["measure"]) for row in results["scores"]} == {
        (system, measure) for system in body["systems"] for measure in ("rouge_l", "hj:rouge_l")
    }

    detail = researcher_api.get(f"/api/runs/{created['id']}/").json()
    assert detail == created
    assert detail["data_hash"] == reference.data_hash
    same = {key: value for key, value in reference.parameters.items() if key != "skip_unavailable"}
    assert {key: detail["parameters"][key] for key in same} == same
    assert detail["parameters"]["skip_unavailable"] is True
    assert detail["progress"]["percent"] == 100.0 and detail["progress"]["step"] == "done"
    assert {"python", "numpy"} <= set(detail["versions"]) and "total" in detail["timings"]
    assert detail["unavailable"] == {} and detail["measure_models"] == {} and detail["seed"] is None
    assert "scores" not in detail  # the table is under /results/


def test_run_defaults_and_excluded_raters(researcher_api, rated_study):
    raters = selectors.study_raters(study=rated_study)
    response = researcher_api.post(
        "/api/runs/", {"dataset": "tiny", "study": "study", "exclude_raters": [raters[0]], "compat": "authors",
                       "systems": "SysnameD"},
        format="json",
    )
    assert response.status_code == 201, response.content
    run = response.json()
    assert run["excluded_raters"] == [raters[0]]
    assert run["parameters"]["aux"] == ["rouge_l"] and run["parameters"]["measures"] == ["rouge_l"]
    assert run["parameters"]["beta"] == 1.0 and run["parameters"]["compat"] == "authors"
    corpus = selectors.corpus_from_dataset(dataset=rated_study.dataset)
    without = selectors.ratings_for_study(study=rated_study, exclude_raters=[raters[0]])
    everyone = selectors.ratings_for_study(study=rated_study)
    assert len(without.rows) < len(everyone.rows)
    assert run["data_hash"] == selectors.data_hash(corpus=corpus, ratings=without)
    assert run["data_hash"] != selectors.data_hash(corpus=corpus, ratings=everyone)


def test_queued_run_has_no_results_until_done(researcher_api, dataset, monkeypatch):
    monkeypatch.setattr("metaeval.tasks.execute_run.delay", lambda run_id: None)  # a worker would take it
    response = researcher_api.post("/api/runs/", {"dataset": "tiny", "systems": ["SysnameA"]}, format="json")
    assert response.status_code == 201
    run = response.json()
    assert run["status"] == "queued" and run["results"] is None and run["progress"]["step"] == "queued"
    pending = researcher_api.get(f"/api/runs/{run['id']}/results/")
    assert pending.status_code == 409 and pending.json()["status"] == "queued"
    services.run_process(run["id"])
    assert researcher_api.get(f"/api/runs/{run['id']}/").json()["status"] == "done"
    assert researcher_api.get(f"/api/runs/{run['id']}/results/").status_code == 200


def test_failed_run_results_conflict_with_the_error(researcher_api, dataset):
    response = researcher_api.post(
        "/api/runs/", {"dataset": "tiny", "systems": ["SysnameA"],
                       "measure_options": {"infolm": {"temperature": 0.5}}},
        format="json",
    )
    assert response.status_code == 201
    run = MetaevalRun.objects.get(pk=response.json()["id"])
    run.status, run.error = MetaevalRun.Status.FAILED, "boom"
    run.save()
    failed = researcher_api.get(f"/api/runs/{run.pk}/results/")
    assert failed.status_code == 409 and "boom" in failed.json()["detail"]


def test_run_list_and_filters(researcher_api, study):
    other = build_dataset(name="other", docs=1, readers=2, systems=["SysnameA"])
    first = services.run_execute(dataset=study.dataset, options=RunOptions(systems=["SysnameA"]))
    second = services.run_execute(dataset=other, options=RunOptions())
    listed = researcher_api.get("/api/runs/").json()
    assert [r["id"] for r in listed] == [second.pk, first.pk]
    assert "scores" not in listed[0] and listed[0]["results"].endswith(f"/api/runs/{second.pk}/results/")
    assert [r["id"] for r in researcher_api.get("/api/runs/?dataset=tiny").json()] == [first.pk]
    assert researcher_api.get("/api/runs/?study=study").json() == []
    assert len(researcher_api.get("/api/runs/?status=done").json()) == 2
    bad = researcher_api.get("/api/runs/?dataset=nope&study=nope&status=sleeping")
    assert bad.status_code == 400 and set(bad.json()) == {"dataset", "study", "status"}


@pytest.mark.parametrize(
    "body, field",
    [
        ({"dataset": "nope"}, "dataset"),
        ({}, "dataset"),
        ({"dataset": "tiny", "study": "nope"}, "study"),
        ({"dataset": "tiny", "study": "elsewhere"}, "study"),
        ({"dataset": "tiny", "measures": ["rouge_l", "nope"]}, "measures"),
        ({"dataset": "tiny", "measures": "rouge_x"}, "measures"),
        ({"dataset": "tiny", "measures": []}, "measures"),
        ({"dataset": "tiny", "study": "study", "aux": ["nope"]}, "aux"),
        ({"dataset": "tiny", "aux": ["rouge_l"]}, "aux"),
        ({"dataset": "tiny", "beta": 10.5}, "beta"),
        ({"dataset": "tiny", "beta": -11}, "beta"),
        ({"dataset": "tiny", "beta": "high"}, "beta"),
        ({"dataset": "tiny", "missing": "ignore"}, "missing"),
        ({"dataset": "tiny", "systems": ["SysnameA", "Nope"]}, "systems"),
        ({"dataset": "tiny", "exclude_raters": ["P1"]}, "exclude_raters"),
        ({"dataset": "tiny", "study": "study", "exclude_raters": ["X1"]}, "exclude_raters"),
        ({"dataset": "tiny", "study": "study", "exclude_raters": ["P99999"]}, "exclude_raters"),
        ({"dataset": "tiny", "measure_options": {"rouge_l": {"x": 1}}}, "measure_options"),
        ({"dataset": "tiny", "measure_options": {"infolm": {"nope": 1}}}, "measure_options"),
    ],
)
def test_validation_errors_name_the_field(researcher_api, study, body, field):
    build_study(build_dataset(name="other", docs=1, readers=2, systems=["SysnameA"]), slug="elsewhere")
    response = researcher_api.post("/api/runs/", body, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert list(errors) == [field], errors
    assert all(isinstance(message, str) and message for message in errors[field])
    assert not MetaevalRun.objects.exists()


def test_validation_messages_say_what_is_wrong(researcher_api, study):
    def error(body, field):
        return researcher_api.post("/api/runs/", body, format="json").json()[field][0]

    assert 'Unknown dataset "nope"' in error({"dataset": "nope"}, "dataset")
    assert "Unknown measure rouge_x" in error({"dataset": "tiny", "measures": "rouge_l,rouge_x"}, "measures")
    assert "need a study" in error({"dataset": "tiny", "aux": "rouge_l"}, "aux")
    # the command line's, the run form's and the API's one check (metaeval.core.perseval.measure.PARAMETERS)
    assert error({"dataset": "tiny", "beta": 12}, "beta") == "beta must be a finite number from -10 to 10; got 12"
    assert "n_boot must be an integer from 1 to 1000000; got 0" in error(
        {"dataset": "tiny", "kind": "report", "report": {"n_boot": 0}}, "report"
    )
    assert "unknown report setting 'nboot'" in error({"dataset": "tiny", "kind": "report", "report": {"nboot": 9}},
                                                       "report")
    assert "close_pairs must increase strictly; got [0.1, 0.05]" in error(
        {"dataset": "tiny", "kind": "report", "report": {"close_pairs": [0.1, 0.05]}}, "report")


@pytest.mark.parametrize(
    "url",
    [
        "/api/datasets/nope/", "/api/datasets/nope/systems/", "/api/studies/nope/", "/api/studies/nope/progress/",
        "/api/studies/nope/ratings/", "/api/studies/nope/ratings/?as=jsonl", "/api/datasets/no.such/",
        "/api/runs/999999/", "/api/runs/999999/results/",
    ],
)
def test_unknown_ids_are_404(researcher_api, url):
    response = researcher_api.get(url)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert "detail" in response.json()


def test_unknown_ids_are_404_for_others_only_after_authentication(api, plain_api):
    assert api.get("/api/runs/999999/").status_code == 401
    assert plain_api.get("/api/runs/999999/").status_code == 403


# ------------------------------------------------------------------------------------------------ schema


def test_schema_is_valid_openapi_with_every_path(researcher_api):
    response = researcher_api.get("/api/schema/")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    schema = json.loads(response.content)
    validate_schema(schema)  # drf-spectacular's OpenAPI 3 JSON-schema check; raises when invalid
    assert schema["openapi"].startswith("3.") and schema["info"]["title"]
    assert sorted(schema["paths"]) == sorted(PATHS)
    assert schema["paths"]["/api/runs/"]["post"]["requestBody"]["content"]["application/json"]
    assert {"tokenAuth", "cookieAuth"} <= set(schema["components"]["securitySchemes"])
    as_yaml = researcher_api.get("/api/schema/?format=yaml")
    assert as_yaml.status_code == 200 and as_yaml["Content-Type"].startswith("application/vnd.oai.openapi;")
    assert yaml.safe_load(as_yaml.content) == schema


def test_spectacular_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    stderr = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out), stderr=stderr)
    assert sorted(yaml.safe_load(out.read_text())["paths"]) == sorted(PATHS)
    assert "Warning" not in stderr.getvalue()


def test_no_swagger_ui_is_served(researcher_api):
    assert researcher_api.get("/api/docs/").status_code == 404  # no CDN: only the schema is served


# ---------------------------------------------------------------------------------------------- report runs


def test_report_run_through_the_api(researcher_api, api, plain_api, rated_study):
    body = {"dataset": rated_study.dataset.name, "study": rated_study.slug, "measures": ["rouge_l", "jsd"],
            "beta": 1.7, "kind": "report", "seed": 9,
            "report": {"n_boot": 100, "n_permutations": 100, "stability_samples": 2}}
    created = researcher_api.post("/api/runs/", body, format="json")
    assert created.status_code == 201, created.json()
    run = created.json()
    assert run["kind"] == "report" and run["status"] == "done" and run["seed"] == 9
    report = researcher_api.get(f"/api/runs/{run['id']}/report/")
    assert report.status_code == 200
    document = report.json()
    assert document["parameters"]["seed"] == 9 and document["parameters"]["n_boot"] == 100
    assert document["tables"]["correlations"] and document["leaderboard"]
    assert api.get(f"/api/runs/{run['id']}/report/").status_code == 401
    assert plain_api.get(f"/api/runs/{run['id']}/report/").status_code == 403
    scores = researcher_api.post("/api/runs/", {**body, "kind": "scores"}, format="json").json()
    assert researcher_api.get(f"/api/runs/{scores['id']}/report/").status_code == 409
    bad = researcher_api.post("/api/runs/", {**body, "report": {"n_bootstrap": 5}}, format="json")
    assert bad.status_code == 400 and "report" in bad.json()
    bad = researcher_api.post("/api/runs/", {**body, "report": {"permutation_alternative": "less"}}, format="json")
    assert bad.status_code == 400 and "permutation_alternative must be one of greater, two-sided" in str(bad.json())
    two_sided = researcher_api.post(
        "/api/runs/", {**body, "report": {"n_boot": 50, "n_permutations": 50, "stability_samples": 2,
                                          "permutation_alternative": "two-sided", "missing_system": "drop-system"}},
        format="json",
    ).json()
    parameters = researcher_api.get(f"/api/runs/{two_sided['id']}/report/").json()["parameters"]
    assert (parameters["permutation_alternative"], parameters["missing_system"]) == ("two-sided", "drop-system")
    bad = researcher_api.post("/api/runs/", {**body, "kind": "other"}, format="json")
    assert bad.status_code == 400 and "kind" in bad.json()


def test_cancel_and_retry_through_the_api(researcher_api, dataset, monkeypatch):
    monkeypatch.setattr("metaeval.tasks.execute_run.delay", lambda run_id: None)  # left queued for a worker
    run = researcher_api.post("/api/runs/", {"dataset": "tiny", "systems": ["SysnameA"]}, format="json").json()
    cancelled = researcher_api.post(f"/api/runs/{run['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = researcher_api.post(f"/api/runs/{run['id']}/cancel/")
    assert again.status_code == 409 and "only a queued or running run" in again.json()["detail"]
    retry = researcher_api.post(f"/api/runs/{run['id']}/retry/")
    assert retry.status_code == 201 and retry.json()["id"] != run["id"] and retry.json()["status"] == "queued"
    assert retry.json()["parameters"] == run["parameters"]
    assert researcher_api.post("/api/runs/999999/cancel/").status_code == 404


def test_a_baseline_path_of_the_researchers_choice_is_refused_before_any_worker_opens_it(researcher_api, study,
                                                                                        tmp_path):
    """Issue 28's review of researcher settings that reach a worker (metaeval.run_policy): BERTScore's baseline
    file was opened by the worker and its first line came back in the run's error message."""
    secret = tmp_path / "environ"
    secret.write_text("SECRET_KEY=the-platform-secret,DATABASE_URL=postgres://u:pw@db/x\n", encoding="utf-8")
    body = {"dataset": "tiny", "measures": ["bertscore"], "measure_options": {"bertscore": {"baseline": str(secret)}}}
    response = researcher_api.post("/api/runs/", body, format="json")
    assert response.status_code == 400
    assert response.json() == {"measure_options": [
        "bertscore.baseline: not a baseline file the operator allows (METAEVAL_ALLOWED_BASELINES)"]}
    assert not MetaevalRun.objects.exists()
    assert "the-platform-secret" not in response.content.decode()
