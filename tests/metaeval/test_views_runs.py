"""Researcher pages for runs (/research/runs/) and the live study progress: access, CSRF, starting a run from the
form (validated), the run page, status.json, downloads, and progress.json against selectors.study_progress."""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import asdict

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from metaeval import selectors, services
from metaeval.core.io.records import write_csv
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import COLUMNS, RunOptions
from metaeval.models import MetaevalRun
from survey import selectors as survey_selectors
from survey import services as survey_services
from tests.conftest import build_dataset, build_study, complete_questionnaires, full_answers

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-1"
FORM = {"measures": ["rouge_l", "jsd"], "aux": ["rouge_l"], "beta": "1.7", "missing": "error"}


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch, settings):
    """Runs use a cache under tmp_path and execute inline (no worker process)."""
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "metaeval-cache"))
    settings.METAEVAL_RUN_LAUNCHER = "inline"


@pytest.fixture
def researcher(db) -> User:
    user = User.objects.create_user("res", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    return user


@pytest.fixture
def client(researcher) -> Client:
    client = Client()
    client.force_login(User.objects.get(username="res"))
    return client


def rate_all(study, value: int = 4, participants: int = 2) -> list[str]:
    """Ratings that vary by pair and rater, so that leaving a rater out matters; returns the rater ids."""

    def answers(assignment, index: int) -> dict[str, str]:
        keys = full_answers(assignment, value)
        return {key: str(1 + (number + value * (index + 1)) % 6) for number, key in enumerate(keys)}

    return [selectors.rater_id(p.pk) for p in complete_questionnaires(study, answers, participants)]


def form(of, **changes) -> dict:
    """The start form for study ``of`` (its dataset), with ``changes``."""
    return {"dataset": of.dataset.name, "study": of.slug, **FORM, **changes}


def test_pages_need_login_and_the_researcher_role(study):
    run = services.run_enqueue(dataset=study.dataset, options=RunOptions(measures=["rouge_l"]))
    urls = ["/research/runs/", f"/research/runs/{run.pk}/", f"/research/runs/{run.pk}/status.json",
            f"/research/runs/{run.pk}/scores.csv", f"/research/runs/{run.pk}/run.json",
            f"/research/studies/{study.slug}/progress.json"]
    anonymous = Client()
    for url in urls:
        response = anonymous.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url
    assert anonymous.post("/research/runs/", form(study)).status_code == 302
    User.objects.create_user("plain", password="pw-for-tests-2")
    plain = Client()
    plain.force_login(User.objects.get(username="plain"))
    for url in urls:
        assert plain.get(url).status_code == 403, url
    assert plain.post("/research/runs/", form(study)).status_code == 403
    User.objects.create_user("staff", password="pw-for-tests-3", is_staff=True)  # staff without the group
    staff = Client()
    staff.force_login(User.objects.get(username="staff"))
    for url in urls:
        assert staff.get(url).status_code == 200, url
    assert MetaevalRun.objects.count() == 1


def test_post_without_csrf_token_is_rejected(study, researcher):
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.get(username="res"))
    assert client.post("/research/runs/", form(study)).status_code == 403
    assert not MetaevalRun.objects.exists()
    page = client.get("/research/runs/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    response = client.post("/research/runs/", {**form(study, aux=[], study=""), "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and MetaevalRun.objects.get().status == "done"


def test_list_page_shows_runs_and_the_form(client, study):
    done = services.run_execute(dataset=study.dataset, options=RunOptions(measures=["rouge_l", "jsd"]))
    queued = services.run_enqueue(dataset=study.dataset, study=study, options=RunOptions(aux=["rouge_l"]))
    html = client.get("/research/runs/").content.decode()
    assert f'href="/research/runs/{done.pk}/"' in html and f'href="/research/runs/{queued.pk}/"' in html
    assert "rouge_l, jsd" in html and "Queued" in html and "Done" in html
    assert 'value="1.7"' in html  # beta default
    for name in ("rouge_l", "rouge_su4", "bleu4", "jsd"):  # the lexical measures are checked by default
        assert re.search(rf'name="measures" value="{name}"[^>]*checked', html), name
    assert not re.search(r'name="measures" value="meteor"[^>]*checked', html)
    assert f'<option value="{study.slug}" data-dataset="{study.dataset.name}"' in html
    assert "<script src=" not in html  # no external scripts
    prefilled = client.get(f"/research/runs/?dataset={study.dataset.name}&study={study.slug}").content.decode()
    assert f'<option value="{study.slug}" data-dataset="{study.dataset.name}" selected>' in prefilled


def test_start_a_run_from_the_page(client, study, researcher):
    rate_all(study)
    response = client.post("/research/runs/", form(study))
    run = MetaevalRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/research/runs/{run.pk}/"
    assert (run.status, run.created_by, run.study, run.excluded_raters) == ("done", researcher, study, [])

    # the same numbers as scoring at once with the same options
    options = RunOptions(measures=["rouge_l", "jsd"], aux=["rouge_l"], params=Params(beta=1.7), skip_unavailable=True)
    direct, direct_result = services.run_execute_with_result(dataset=study.dataset, study=study, options=options)
    assert run.scores == direct.scores and run.hj_counts == direct.hj_counts and run.data_hash == direct.data_hash
    assert RunOptions.from_dict(run.parameters) == options

    page = client.get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200 and f"Run {run.pk} started." in html
    assert "hj:rouge_l" in html and "SysnameA" in html and run.data_hash in html
    assert "status.json" not in html  # finished: no polling
    assert "&quot;beta&quot;: 1.7" in html and "rouge-score" in html and "total" in html  # params, versions, timings

    scores = client.get(f"/research/runs/{run.pk}/scores.csv")
    assert scores["Content-Disposition"] == f'attachment; filename="run-{run.pk}-scores.csv"'
    expected = io.StringIO()
    write_csv(direct_result.table(), COLUMNS, expected)
    assert scores.content.decode() == expected.getvalue()  # what `python -m metaeval score` prints

    record = client.get(f"/research/runs/{run.pk}/run.json").json()
    assert record["id"] == run.pk and record["status"] == "done" and record["study"] == study.slug
    assert record["scores"] == run.scores and record["parameters"] == run.parameters
    assert record["data_hash"] == run.data_hash and record["created_by"] == "res"


def test_a_study_without_aux_measures_gets_rouge_l(client, study):
    rate_all(study)
    client.post("/research/runs/", form(study, aux=[], measures=["jsd"]))
    run = MetaevalRun.objects.get()
    assert run.parameters["aux"] == ["rouge_l"] and {r["measure"] for r in run.scores} == {"jsd", "hj:rouge_l"}


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"study": "elsewhere"}, "study", 'rates dataset "other", not "tiny"'),
        ({"study": "no-such-study"}, "study", "Select a valid choice"),
        ({"study": ""}, "aux", "Aux measures (HJ) need a study"),
        ({"beta": "steep"}, "beta", "beta must be a finite number from -10 to 10"),
        ({"beta": "nan"}, "beta", "beta must be a finite number from -10 to 10"),
        ({"beta": "100"}, "beta", "beta must be a finite number from -10 to 10"),
        ({"measures": [], "aux": [], "study": ""}, "measures", "Choose at least one measure"),
        ({"measures": ["rouge_l", "bogus"]}, "measures", "Select a valid choice"),
        ({"exclude_raters": "P1, x7"}, "exclude_raters", "not a rater id: x7"),
        ({"exclude_raters": "P999999"}, "exclude_raters", "Not a rater of study: P999999"),
        ({"exclude_raters": "P1", "study": "", "aux": []}, "exclude_raters", "Excluding raters needs a study"),
    ],
)
def test_form_errors_are_shown(client, study, changes, field, message):
    build_study(build_dataset(name="other", docs=1), slug="elsewhere")
    response = client.post("/research/runs/", form(study, **changes))
    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert message.replace('"', "&quot;") in response.content.decode()
    assert not MetaevalRun.objects.exists()


def test_excluded_raters_from_the_form_are_recorded_and_change_hj(client, study):
    first, second = rate_all(study)
    client.post("/research/runs/", form(study, measures=["rouge_l"]))
    client.post("/research/runs/", form(study, measures=["rouge_l"], exclude_raters=first.removeprefix("P")))
    everyone, without = MetaevalRun.objects.order_by("pk")
    assert everyone.excluded_raters == [] and without.excluded_raters == [first]
    hj = [r for r in everyone.scores if r["measure"] == "hj:rouge_l"]
    hj_without = [r for r in without.scores if r["measure"] == "hj:rouge_l"]
    assert len(hj) == len(hj_without) and hj != hj_without
    html = client.get(f"/research/runs/{without.pk}/").content.decode()
    assert f"Excluded raters: {first}" in html
    assert client.get(f"/research/runs/{without.pk}/run.json").json()["excluded_raters"] == [first]


def test_status_json_follows_a_queued_run(client, study, settings, monkeypatch):
    monkeypatch.setattr("metaeval.tasks.execute_run.delay", lambda run_id: None)  # left for a worker
    monkeypatch.setattr(services, "PROGRESS_INTERVAL", 0.0)  # every message written at once
    rate_all(study)
    client.post("/research/runs/", form(study))
    run = MetaevalRun.objects.get()
    state = client.get(f"/research/runs/{run.pk}/status.json").json()
    assert (state["status"], state["finished"], state["percent"], state["step"]) == ("queued", False, 0.0, "queued")
    html = client.get(f"/research/runs/{run.pk}/").content.decode()
    assert f"/research/runs/{run.pk}/status.json" in html and "1500" in html and "Queued" in html
    assert "scores.csv" not in html

    polled = []

    def poll(message: str) -> None:
        polled.append(client.get(f"/research/runs/{run.pk}/status.json").json())

    services.run_process(run.pk, progress=poll)
    assert polled and all(p["status"] == "running" and p["total"] == 4 and not p["finished"] for p in polled)
    assert polled[0]["done"] >= 1 and polled[0]["started_at"]
    state = client.get(f"/research/runs/{run.pk}/status.json").json()
    assert (state["status"], state["finished"], state["percent"], state["done"]) == ("done", True, 100.0, 4)
    assert state["messages"] and state["finished_at"]


def test_failed_run_page_shows_the_error(client, dataset):
    from survey.models import Summary

    Summary.objects.filter(system__name="SysnameB", reader__external_id="R1", document__external_id="N2").delete()
    response = client.post("/research/runs/", {"dataset": "tiny", **FORM, "aux": []})
    run = MetaevalRun.objects.get()
    assert response.status_code == 302 and run.status == "failed"
    html = client.get(f"/research/runs/{run.pk}/").content.decode()
    assert "Failed" in html and "no &quot;SysnameB&quot; summary" in html
    assert client.get(f"/research/runs/{run.pk}/status.json").json()["error"] == run.error
    assert client.get("/research/runs/12345/").status_code == 404


def test_unavailable_measures_and_models_are_listed(client, dataset):
    run = services.run_enqueue(dataset=dataset, options=RunOptions(measures=["rouge_l"]))
    MetaevalRun.objects.filter(pk=run.pk).update(
        status="done",
        unavailable={"infolm": "no masked LM in the cache"},
        measure_models={"bertscore": "tiny, 3 layers"},
    )
    html = client.get(f"/research/runs/{run.pk}/").content.decode()
    assert "no masked LM in the cache" in html and "tiny, 3 layers" in html


def test_study_progress_json_matches_the_selector(client, study):
    rate_all(study, participants=1)
    participant = survey_services.participant_register(study=study)
    survey_services.assignment_claim(participant=participant)  # one questionnaire in progress
    data = client.get(f"/research/studies/{study.slug}/progress.json").json()
    progress = survey_selectors.study_progress(study)
    assert data == {
        "study": study.slug,
        "status": study.status,
        **json.loads(json.dumps(asdict(progress))),
        "percent": progress.percent,
        "ranking": None,  # a live ranking belongs to preference studies only (issue 31)
    }
    assert data["complete"] + data["all_slots_taken"] + data["with_free_slot"] == data["questionnaires"]
    assert data["free_slots"] >= 1 and sum(data["ratings_per_system"].values()) > 0
    html = client.get(f"/research/studies/{study.slug}/").content.decode()
    assert f"/research/studies/{study.slug}/progress.json" in html and "5000" in html
    assert f"/research/runs/?dataset={study.dataset.name}&amp;study={study.slug}" in html


def test_csv_columns_of_an_empty_score_table(client, dataset):
    run = services.run_enqueue(dataset=dataset, options=RunOptions(measures=["rouge_l"]))
    rows = list(csv.reader(io.StringIO(client.get(f"/research/runs/{run.pk}/scores.csv").content.decode())))
    assert rows == [list(COLUMNS)]


def test_the_form_offers_every_option_of_the_api(client, study):
    """Every setting of an API run request has its input on the page, grouped, with its default filled in
    (the neural measures' own options excepted: API and command line only)."""
    from api.serializers import RunCreateSerializer
    from metaeval.core.perseval.measure import PARAMETERS
    from metaeval.core.perseval.report import REPORT_OPTIONS

    html = client.get("/research/runs/").content.decode()
    names = set(re.findall(r'name="([a-z_]+)"', html))
    api_fields = set(RunCreateSerializer().get_fields()) - {"measure_options", "kind", "report"}
    expected = api_fields | {"full_report"} | {o.name for o in REPORT_OPTIONS} | {o.name for o in PARAMETERS}
    assert expected <= names, expected - names
    for legend in ("Data", "Measures", "PerSEval parameters", "Report"):
        assert f"<legend>{legend}</legend>" in html
    assert re.search(r'name="full_report"[^>]*checked', html) or re.search(r'checked[^>]*name="full_report"', html)
    assert 'name="n_boot" value="1000"' in html and 'name="alpha" value="3.0"' in html


def test_a_full_report_with_its_settings_from_the_form(client, study):
    rate_all(study)
    response = client.post("/research/runs/", form(
        study, measures=["rouge_l"], full_report="on", seed="11", n_boot="40", n_permutations="30",
        stability_samples="2", confidence="0.9", alpha="2.5", systems="", preprocess="none",
    ))
    assert response.status_code == 302
    run = MetaevalRun.objects.get()
    assert run.kind == "report" and run.status == "done", run.error
    assert run.seed == 11 and run.parameters["alpha"] == 2.5
    assert run.report["parameters"]["n_boot"] == 40 and run.report["parameters"]["confidence"] == 0.9
    assert run.report["parameters"]["n_permutations"] == 30 and run.report["parameters"]["seed"] == 11
    page = client.get(f"/research/runs/{run.pk}/").content.decode()
    assert 'id="open-report"' in page


def test_scores_only_when_full_report_is_unchecked_and_systems_are_checked(client, study):
    bad = client.post("/research/runs/", form(study, systems="NoSuchSystem"))
    assert bad.status_code == 400 and "Not a system of dataset" in bad.content.decode()
    assert not MetaevalRun.objects.exists()
    first = study.systems.exclude(name="user").order_by("name").first().name
    assert client.post("/research/runs/", form(study, systems=first)).status_code == 302
    run = MetaevalRun.objects.get()
    assert run.kind == "scores" and run.status == "done", run.error
    assert {row["system"] for row in run.scores} == {first}


def test_an_incomplete_document_is_explained_in_the_forms_words_with_the_fix(client, study):
    """A document added later (as in the admin) with summaries from some systems only."""
    from survey.models import Document, Summary

    rate_all(study)
    some = Summary.objects.filter(document__dataset=study.dataset).select_related("reader", "system")
    reader = some.first().reader
    systems = sorted({s.system for s in some}, key=lambda system: system.name)
    added = Document.objects.create(dataset=study.dataset, external_id="N-added", body="A later article.")
    lacking = next(system for system in systems if system.name != "user")
    for system in systems:
        if system != lacking:
            Summary.objects.create(document=added, reader=reader, system=system, text=f"{system.name} text")
    assert client.post("/research/runs/", form(study, measures=["rouge_l"])).status_code == 302
    run = MetaevalRun.objects.get()
    assert run.status == "failed"
    assert run.error.startswith("Incomplete data: ") and "--missing" not in run.error
    assert '"N-added"' in run.error and f'"{lacking.name}"' in run.error
    page = client.get(f"/research/runs/{run.pk}/").content.decode()
    fix = re.search(r'id="run-fix" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert "missing=drop" in fix
    again = client.get(fix).content.decode()
    assert re.search(r'<option value="drop" selected>', again)
    assert client.post("/research/runs/", form(study, measures=["rouge_l"], missing="drop")).status_code == 302
    assert MetaevalRun.objects.latest("pk").status == "done"


def test_the_run_page_shows_numbers_as_the_report_does(client, dataset):
    """Issue 29: 6.9e-08 showed as 0.0000 on the run page where the report says < 0.0001. The score table's cells
    are metaeval.core.display.fmt_number's: 4 decimals, < 0.0001 / > -0.0001 for a tiny value, – for a missing one."""
    from metaeval.core import display

    run = services.run_enqueue(dataset=dataset, options=RunOptions(measures=["rouge_l"]))
    row = {"system": "SysnameA", "measure": "rouge_l", "egises": 6.9e-08, "degress": -2.5e-07, "perseval": 0.54745,
           "accuracy": None, "p_acc": 0.0, "egises_accuracy": 1.0, "documents": 3, "readers": 3, "rows": 9,
           "rated_pairs": 0, "skipped_pairs": 0}
    MetaevalRun.objects.filter(pk=run.pk).update(status="done", scores=[row])
    html = client.get(f"/research/runs/{run.pk}/").content.decode()
    cells = re.findall(r'<td class="num">([^<]*)</td>', html)
    shown = [display.fmt_number(row[key]) for key in ("perseval", "degress", "egises", "accuracy", "p_acc",
                                                      "documents", "readers", "rated_pairs", "skipped_pairs")]
    assert shown[1:5] == ["> -0.0001", "< 0.0001", "–", "0.0000"]
    assert [c.replace("&lt;", "<").replace("&gt;", ">") for c in cells[:9]] == shown
