"""Bad input on the pages (researcher pages, participant pages, the admin): a 400 (413 for a body over the limit)
with a message naming the field or ``file:line``, never a 500, nothing stored; on SQLite and PostgreSQL alike
(PostgreSQL refuses NUL characters and integers beyond a bigint, where SQLite kept or overflowed them). One test per
class: NUL characters, nesting depth, integer range, field length, body size. The admin answers a refused form with
its own page (200) naming the field."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from metaeval.core.jsonsafe import MAX_JSON_DEPTH
from metaeval.core.options import SEED_MAX
from metaeval.models import JudgmentSet, MetaevalRun
from survey.models import JudgeEndpoint, JudgeRun, Participant, Reader, Study, System
from tests.conftest import build_dataset, build_study
from tests.metaeval.test_judgment_sets import judgment_csv
from tests.metaeval.test_views_runs import FORM
from tests.survey.importers.helpers import doc, snapshot
from tests.survey.test_judge_runs import cli_file, ranked_study

pytestmark = pytest.mark.django_db
DEEP = "[" * 50_000 + "]" * 50_000


@pytest.fixture
def researcher_client(db) -> Client:
    user = User.objects.create_user("bad-input-res", password="bad-input-pass-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin_client(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("bad-input-boss", "boss@example.org", "bad-input-boss-1"))
    return client


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path, settings):
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "cache"))
    settings.METAEVAL_RUN_LAUNCHER = "inline"


def _judge_upload(client: Client, slug: str, data: bytes, name: str = "judged.csv"):
    return client.post(f"/research/studies/{slug}/judges/",
                       {"action": "import", "file": SimpleUploadedFile(name, data, "text/csv")})


def test_a_refused_file_judge_upload_is_a_400_like_the_judgment_set_upload(researcher_client):
    """The LLM judges page's file upload: a bad file answers 400 with its problems on the page and stores nothing
    (it answered 200); a good one is stored and redirects."""
    study = ranked_study()
    bad = _judge_upload(researcher_client, study.slug, cli_file(study, extra="c-unknown,quality,x,y,model_a\n"),
                        "bad.csv")
    assert bad.status_code == 400
    assert "bad.csv:" in bad.content.decode() and not JudgeRun.objects.exists()
    empty = _judge_upload(researcher_client, study.slug, b"", "empty.csv")
    assert empty.status_code == 400 and not JudgeRun.objects.exists()
    good = _judge_upload(researcher_client, study.slug, cli_file(study))
    assert good.status_code == 302 and JudgeRun.objects.count() == 1


def _judgment_set_upload(client: Client, name: str, data: bytes, file_name: str = "prefs.csv"):
    return client.post("/research/runs/judgments/", {"name": name, "description": "",
                                                      "file": SimpleUploadedFile(file_name, data, "text/csv")})


def _dataset_import(client: Client, data: bytes, file_name: str = "upload.jsonl", dataset: str = "") -> list[str]:
    response = client.post("/admin/survey/dataset/import/", {
        "kind": "consolidated", "dataset": dataset, "missing": "error",
        "file": SimpleUploadedFile(file_name, data)}, follow=True)
    return [message.message for message in response.context["messages"]]


def _study_form(dataset, **changes) -> dict:
    """The admin's add-study form (as tests/survey/test_admin.py fills it)."""
    criteria = Study._meta.get_field("criteria").get_default()
    return {
        "slug": "added", "title": "Added", "dataset": dataset.pk,
        "systems": [pk for pk in System.objects.exclude(name="user").values_list("pk", flat=True)],
        **{f"scale_labels_{point}": label
           for point, label in enumerate(Study._meta.get_field("scale_labels").get_default(), 1)},
        "systems_per_questionnaire": 5, "raters_per_questionnaire": 2, "assignment_timeout_minutes": 60,
        "pair_mode": "all", "seed": 3, "identical_pairs": "show", "attention_checks": 0, "kind": "similarity",
        "criteria-name": [c["name"] for c in criteria], "criteria-question": [c["question"] for c in criteria],
        "cases_per_pair": 20, "pairs_per_questionnaire": 3, "pairs_per_topic": 200, "examples_shown": 3,
        "gold_rate": 0, "gold_threshold": "", **changes,
    }


def _reader_form(reader: Reader, **changes) -> dict:
    return {"dataset": reader.dataset_id, "external_id": reader.external_id, "history": json.dumps(reader.history),
            "profile": reader.profile, **changes}


def _consented(slug: str) -> Client:
    client = Client()
    assert client.post(f"/s/{slug}/", {"consent": "on"}).status_code == 302
    return client


def test_nul_characters(researcher_client, admin_client):
    """In an address (%00: a DataError on PostgreSQL before), a form's text, an uploaded file (raw, or escaped as
    \\u0000 in JSON) and the admin's JSON fields."""
    study = ranked_study()
    for client, url in ((Client(), f"/s/{study.slug}/?PROLIFIC_PID=a%00"), (Client(), "/s/a%00b/"),
                        (researcher_client, f"/research/studies/{study.slug}%00/"),
                        (researcher_client, "/research/runs/?dataset=%00"),
                        (admin_client, "/admin/survey/study/?q=%00")):
        page = client.get(url)
        assert page.status_code == 400 and "NUL character" in page.content.decode(), url
    about = _consented(study.slug).post(f"/s/{study.slug}/about/", {"name": "Ada\x00", "gender": "", "occupation": ""})
    assert about.status_code == 400 and "Null characters are not allowed." in about.content.decode()
    assert Participant.objects.get().name == ""
    uploaded = _judgment_set_upload(researcher_client, "nul", judgment_csv() + b"c9,quality,A\x00,B,model_a\n")
    assert uploaded.status_code == 400 and "prefs.csv:75: NUL character" in uploaded.content.decode()
    row = {"case_id": "c1", "criterion": "quality", "model_a": "A\x00", "model_b": "B", "winner": "model_a"}
    uploaded = _judgment_set_upload(researcher_client, "nul", (json.dumps(row) + "\n").encode(), "prefs.jsonl")
    assert uploaded.status_code == 400 and "prefs.jsonl:1: NUL character in &quot;model_a&quot;" in \
        uploaded.content.decode()
    judged = _judge_upload(researcher_client, study.slug, cli_file(study, judge="gpt\x00x"))
    assert judged.status_code == 400 and "judged.csv:2: NUL character" in judged.content.decode()
    before = snapshot()
    escaped = doc("d1", doc_text="Body\x00")
    assert _dataset_import(admin_client, (json.dumps(escaped) + "\n").encode()) == [
        'Nothing was imported: upload.jsonl:1: NUL character in "doc_text"']
    reader = Reader.objects.filter(dataset=study.dataset).first()
    refused = admin_client.post(f"/admin/survey/reader/{reader.pk}/change/",
                                _reader_form(reader, history='["N1\\u0000"]'))
    assert refused.status_code == 200 and 'Enter valid JSON: NUL character in &quot;[0]&quot;.' in \
        refused.content.decode()
    for change, message in (({"scale_labels_3": "some\x00what"}, "scale label 3 holds a NUL character"),
                            ({"kind": "preference", "criteria-name": ["fit"], "criteria-question": ["Fits?\x00"]},
                             "criterion 1: the question holds a NUL character")):
        added = admin_client.post("/admin/survey/study/add/", _study_form(study.dataset, **change))
        assert added.status_code == 200 and message in added.content.decode(), change
    assert not Study.objects.filter(slug="added").exists()
    assert snapshot() == before and not JudgmentSet.objects.exists() and not JudgeRun.objects.exists()


def test_json_nested_too_deeply(researcher_client, admin_client):
    """Uploaded JSON files and the admin's JSON fields nested beyond MAX_JSON_DEPTH (RecursionError: a 500)."""
    too_deep = f"nested deeper than {MAX_JSON_DEPTH} levels"
    uploaded = _judgment_set_upload(researcher_client, "deep", DEEP.encode(), "prefs.jsonl")
    assert uploaded.status_code == 400 and f"prefs.jsonl:1: {too_deep}" in uploaded.content.decode()
    study = ranked_study()
    judged = _judge_upload(researcher_client, study.slug, DEEP.encode(), "judged.jsonl")
    assert judged.status_code == 400 and f"judged.jsonl:1: {too_deep}" in judged.content.decode()
    before = snapshot()
    assert _dataset_import(admin_client, (json.dumps(doc("d1")) + "\n" + DEEP).encode()) == [
        f"Nothing was imported: upload.jsonl:2: {too_deep}"]
    reader = Reader.objects.filter(dataset=study.dataset).first()
    refused = admin_client.post(f"/admin/survey/reader/{reader.pk}/change/", _reader_form(reader, history=DEEP))
    assert refused.status_code == 200 and f"Enter valid JSON: {too_deep}." in refused.content.decode()
    assert snapshot() == before
    assert not JudgmentSet.objects.exists() and not JudgeRun.objects.exists()


def test_integers_beyond_their_column(researcher_client, admin_client):
    """A seed beyond what its bigint column holds (2**70: "bigint out of range" on PostgreSQL, OverflowError on
    SQLite): the run form and the admin's study form name the field."""
    study = build_study(build_dataset(name="ints"), slug="ints")
    for seed in (2**70, SEED_MAX + 1):
        page = researcher_client.post("/research/runs/", {"dataset": study.dataset.name, "study": study.slug, **FORM,
                                                          "full_report": "on", "seed": str(seed)})
        assert page.status_code == 400 and f"less than or equal to {SEED_MAX}" in page.content.decode()
    for seed in (2**70, 2**63):
        added = admin_client.post("/admin/survey/study/add/", _study_form(study.dataset, seed=str(seed)))
        assert added.status_code == 200 and f"less than or equal to {2**63 - 1}" in added.content.decode()
    assert not MetaevalRun.objects.exists() and not Study.objects.filter(slug="added").exists()
    # a file judge's repeat number is a smallint column ("smallint out of range" on PostgreSQL before)
    ranked = ranked_study()
    judged = _judge_upload(researcher_client, ranked.slug, cli_file(ranked).replace(b",llm,2,", b",llm,40000,"))
    assert judged.status_code == 400 and "field &quot;run&quot; must be an integer from 1 to 32767" in \
        judged.content.decode()
    assert not JudgeRun.objects.exists()


def test_names_longer_than_their_column(researcher_client, admin_client):
    """A name longer than its column: an error naming the field (never a varchar overflow)."""
    long = "x" * 50_000
    page = _judgment_set_upload(researcher_client, long[:101], judgment_csv())
    assert page.status_code == 400 and "at most 100 characters" in page.content.decode()
    assert "Ensure this value has at most 100 characters" in admin_client.post(
        "/admin/survey/dataset/import/", {"kind": "consolidated", "dataset": long, "missing": "error",
                                          "file": SimpleUploadedFile("d.jsonl", json.dumps(doc("d1")).encode())},
    ).content.decode()
    assert _dataset_import(admin_client, (json.dumps(doc(long[:101])) + "\n").encode()) == [
        'Nothing was imported: upload.jsonl:1: field "doc_id" is longer than 100 characters']
    study = build_study(build_dataset(name="names"), slug="names")
    reader = Reader.objects.filter(dataset=study.dataset).first()
    refused = admin_client.post(f"/admin/survey/reader/{reader.pk}/change/", _reader_form(reader, external_id=long))
    assert refused.status_code == 200 and "Ensure this value has at most 100 characters" in refused.content.decode()
    ranked = ranked_study()
    judged = _judge_upload(researcher_client, ranked.slug, cli_file(ranked, judge="g" * 201))
    assert judged.status_code == 400 and "judged.csv:2: field &quot;judge&quot; is longer than 200 characters" in \
        judged.content.decode()  # a file judge's name ("value too long" on PostgreSQL before)
    assert not JudgeRun.objects.exists()
    about = _consented(study.slug).post(f"/s/{study.slug}/about/", {"name": long, "gender": "", "occupation": ""})
    assert about.status_code == 400 and "at most 200 characters" in about.content.decode()
    assert Reader.objects.get(pk=reader.pk).external_id == reader.external_id
    # a preference criterion's name is stored with every judgment (varchar(50)): refused at the study, not at the
    # first participant's submit
    added = admin_client.post("/admin/survey/study/add/", _study_form(
        study.dataset, kind="preference", **{"criteria-name": ["c" * 51], "criteria-question": ["Which?"]}))
    assert added.status_code == 200 and "criterion 1: the name is longer than 50 characters" in added.content.decode()
    assert not Study.objects.filter(slug="added").exists()
    assert not JudgmentSet.objects.exists() and Participant.objects.get().name == ""


def test_a_form_over_the_body_limit_is_a_413_page(researcher_client, settings):
    """A form body over DATA_UPLOAD_MAX_MEMORY_SIZE: a page saying so with 413 (Django's bare 400 page before)."""
    study = build_study(build_dataset(name="big"), slug="big")
    big = {"dataset": study.dataset.name, **FORM, "systems": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)}
    page = researcher_client.post("/research/runs/", big)
    assert page.status_code == 413 and "larger than this server accepts" in page.content.decode()
    assert page["Content-Type"].startswith("text/html")
    assert not MetaevalRun.objects.exists()


def test_a_rater_id_of_endless_digits_is_no_rater(researcher_client):
    """The run form's excluded raters: digits beyond any participant id are "not a rater id" (a bare ValueError
    from int() past 4300 digits before)."""
    study = build_study(build_dataset(name="raters"), slug="raters")
    page = researcher_client.post("/research/runs/", {"dataset": study.dataset.name, "study": study.slug, **FORM,
                                                      "exclude_raters": "P" + "9" * 5000})
    assert page.status_code == 400 and "not a rater id: P9999" in page.content.decode()
    assert not MetaevalRun.objects.exists()


def test_judge_templates_too_deep_or_with_endless_numbers(researcher_client):
    """The LLM judges page's templates box is JSON: nested too deeply (RecursionError) or with a number longer than
    Python converts (a bare ValueError) it was a 500; now an error of the field (the start form's errors answer
    200, as its other errors do), nothing stored."""
    study = ranked_study()
    JudgeEndpoint.objects.create(name="nowhere", kind="openai", base_url="https://judge.example.org/v1",
                                 model_choices="m1")  # the start form shows once an endpoint is configured
    for text, message in ((DEEP, f"nested deeper than {MAX_JSON_DEPTH} levels"),
                          ('{"quality": ' + "9" * 5000 + "}", "a number of more than 4300 digits"),
                          ('{"quality": {"system": "s\\u0000", "user": "u"}}', "NUL character in")):
        page = researcher_client.post(f"/research/studies/{study.slug}/judges/",
                                      {"action": "start", "runs": 2, "templates": text})
        assert page.status_code == 200 and f"JSON refused: {message}" in page.content.decode(), message
    assert not JudgeRun.objects.exists()
