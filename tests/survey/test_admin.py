"""Every model is curated in the admin: changelists with search and filters, inlines, read-only ratings."""
from __future__ import annotations

import json

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from survey import services
from survey.models import Assignment, Dataset, Document, Rating
from tests.conftest import full_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_logged(db) -> Client:
    User.objects.create_superuser("boss", "boss@example.org", "pw-admin-123")
    client = Client()
    client.force_login(User.objects.get(username="boss"))
    return client


def test_every_survey_model_is_registered():
    from django.apps import apps

    for model in apps.get_app_config("survey").get_models():
        assert admin.site.is_registered(model), model.__name__


def test_changelists_search_and_filters_load(study, admin_client_logged):
    p = services.participant_register(study=study)
    a = services.assignment_claim(participant=p)
    services.ratings_submit(assignment_public_id=a.public_id, participant=p, values=full_answers(a))
    for model in ["dataset", "document", "reader", "system", "summary", "study", "questionnaire", "item",
                  "participant", "assignment", "rating"]:
        r = admin_client_logged.get(f"/admin/survey/{model}/?q=N1")
        assert r.status_code == 200, model
    doc = Document.objects.first()
    page = admin_client_logged.get(f"/admin/survey/document/{doc.pk}/change/").content.decode()
    assert "summaries-TOTAL_FORMS" in page  # summaries inline under the document
    rating = Rating.objects.first()
    assert admin_client_logged.get(f"/admin/survey/rating/{rating.pk}/change/").status_code == 200
    assert admin_client_logged.get("/admin/survey/rating/add/").status_code == 403
    response = admin_client_logged.post(f"/admin/survey/rating/{rating.pk}/change/", {"value": 1})
    assert response.status_code == 403
    assert Rating.objects.get(pk=rating.pk).value == 4
    assert (
        admin_client_logged.get(f"/admin/survey/assignment/{Assignment.objects.first().pk}/change/").status_code == 200
    )


def test_admin_actions_generate_and_open(dataset, admin_client_logged):
    from survey.models import Study, System

    study = Study.objects.create(slug="fromadmin", title="From admin", dataset=dataset, seed=5)
    study.systems.set(System.objects.exclude(name="user"))
    admin_client_logged.post(
        "/admin/survey/study/", {"action": "generate_questionnaires", "_selected_action": [study.pk]}
    )
    assert study.questionnaires.count() == 18
    admin_client_logged.post("/admin/survey/study/", {"action": "open_studies", "_selected_action": [study.pk]})
    study.refresh_from_db()
    assert study.status == "open"


def test_documents_with_incomplete_summaries_are_flagged_and_filtered(dataset, admin_client_logged):
    """A document a run would stop at (a reader without one system's summary) reads "n of m (incomplete)"."""
    from survey.models import Summary

    complete = Document.objects.filter(dataset=dataset).first()
    broken = Document.objects.filter(dataset=dataset).exclude(pk=complete.pk).first()
    Summary.objects.filter(document=broken).exclude(system__name="user").first().delete()
    readers = Summary.objects.filter(document=complete).values("reader").distinct().count()
    systems = Summary.objects.filter(document__dataset=dataset).values("system").distinct().count()
    page = admin_client_logged.get("/admin/survey/document/").content.decode()
    assert f"{readers * systems} of {readers * systems}<" in page
    assert f"{readers * systems - 1} of {readers * systems} (incomplete)" in page
    only = admin_client_logged.get("/admin/survey/document/?summaries=incomplete").content.decode()
    assert broken.external_id in only and f">{complete.external_id}<" not in only
    fine = admin_client_logged.get("/admin/survey/document/?summaries=complete").content.decode()
    assert f">{broken.external_id}<" not in fine and complete.external_id in fine


def _messages(response) -> list[tuple[str, str]]:
    return [(m.level_tag, m.message) for m in response.context["messages"]]


def test_study_form_offers_no_reference_system_and_keeps_status_and_creator(dataset, admin_client_logged):
    """``user`` is not among the selectable systems; status and creator are shown, not edited; the creator is the
    admin who added the study, and a posted status is ignored."""
    import re

    from survey.models import Study, System

    page = admin_client_logged.get("/admin/survey/study/add/").content.decode()
    select = re.search(r'<select name="systems".*?</select>', page, re.S).group(0)
    offered = set(re.findall(r'<option value="(\d+)"', select))
    assert offered == {str(pk) for pk in System.objects.exclude(name="user").values_list("pk", flat=True)}
    assert str(System.objects.get(name="user").pk) not in offered
    assert 'name="status"' not in page and 'name="created_by"' not in page
    form = {
        "slug": "made-here", "title": "Made here", "dataset": dataset.pk, "systems": offered,
        **{f"scale_labels_{point}": label
           for point, label in enumerate(Study._meta.get_field("scale_labels").get_default(), 1)},
        "systems_per_questionnaire": 5, "raters_per_questionnaire": 2, "assignment_timeout_minutes": 60,
        "pair_mode": "all", "seed": 3, "identical_pairs": "show", "attention_checks": 0,
        "kind": "similarity", "criteria-name": [c["name"] for c in Study._meta.get_field("criteria").get_default()],
        "criteria-question": [c["question"] for c in Study._meta.get_field("criteria").get_default()],
        "cases_per_pair": 20, "pairs_per_questionnaire": 3, "pairs_per_topic": 200,
        "examples_shown": 3, "gold_rate": 0, "gold_threshold": "",
        "assignment": "uniform", "stop_rule": "none", "stop_width": 0.2, "stop_alpha": 0.05, "stop_action": "notify",
        "status": "open", "created_by": "",
    }
    response = admin_client_logged.post("/admin/survey/study/add/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    study = Study.objects.get(slug="made-here")
    assert study.created_by.username == "boss" and study.status == "draft"
    change = admin_client_logged.get(f"/admin/survey/study/{study.pk}/change/").content.decode()
    assert "boss" in change and 'name="status"' not in change
    bad = admin_client_logged.post(
        f"/admin/survey/study/{study.pk}/change/", {**form, "systems": [System.objects.get(name="user").pk]}
    )
    assert bad.status_code == 200 and "not one of the available choices" in bad.content.decode()


def test_every_status_action_says_what_it_did(dataset, admin_client_logged):
    from survey.models import Study, System

    study = Study.objects.create(slug="acts", title="Acts", dataset=dataset, seed=5)
    study.systems.set(System.objects.exclude(name="user"))

    def act(action: str) -> list[tuple[str, str]]:
        response = admin_client_logged.post(
            "/admin/survey/study/", {"action": action, "_selected_action": [study.pk]}, follow=True
        )
        study.refresh_from_db()
        return _messages(response)

    assert act("open_studies") == [("error", "acts: study 'acts' has no questionnaires; generate them first")]
    assert study.status == "draft"
    assert act("generate_questionnaires") == [("success", "acts: 18 questionnaires, 0 notes.")]
    assert act("open_studies") == [("success", "acts: open; participants can take part now.")]
    assert study.status == "open"
    [(level, text)] = act("draft_studies")
    assert level == "error" and "only a closed study goes back to draft" in text and study.status == "open"
    [(level, text)] = act("close_studies")
    assert level == "success" and "closed" in text and study.status == "closed"
    [(level, text)] = act("close_studies")
    assert level == "error" and "is not open (closed)" in text
    [(level, text)] = act("draft_studies")
    assert level == "success" and "back to draft" in text and study.status == "draft"
    [(level, text)] = act("icopernicus_preset")
    assert level == "success" and "iCOPERNICUS design set" in text
    assert (study.pair_mode, study.pairs_per_document, study.systems_per_questionnaire,
            study.raters_per_questionnaire, study.reference_first) == ("readers", 3, 9, 1, False)


def test_readers_and_documents_are_labelled_with_their_dataset(study, admin_client_logged):
    summaries = admin_client_logged.get("/admin/survey/summary/").content.decode()
    assert "R0 [tiny]" in summaries and "N0 [tiny]: Headline 0" in summaries
    questionnaires = admin_client_logged.get("/admin/survey/questionnaire/").content.decode()
    assert "R0 [tiny]" in questionnaires or "R1 [tiny]" in questionnaires
    found = admin_client_logged.get(
        "/admin/autocomplete/", {"app_label": "survey", "model_name": "summary", "field_name": "reader", "term": "R1"}
    ).json()
    assert [r["text"] for r in found["results"]] == ["R1 [tiny]"]
    found = admin_client_logged.get(
        "/admin/autocomplete/", {"app_label": "survey", "model_name": "summary", "field_name": "document", "term": "N2"}
    ).json()
    assert [r["text"] for r in found["results"]] == ["N2 [tiny]: Headline 2"]


def test_dataset_import_page_reports_counts_or_the_files_error(tmp_path, admin_client_logged):
    """From the datasets list to the upload page; a good consolidated file reports the importer's counts, a file
    with an error on its second line names it and stores nothing; PENS takes its two files."""
    import re

    from tests.survey.importers.helpers import NEWS_HEADER, TEST_HEADER, doc, news_row, snapshot

    listing = admin_client_logged.get("/admin/survey/dataset/").content.decode()
    link = re.search(r'href="([^"]+)" class="addlink" id="import-dataset"', listing).group(1)
    assert admin_client_logged.get(link).status_code == 200

    good = SimpleUploadedFile("my-news.jsonl", (json.dumps(doc("d1")) + "\n" + json.dumps(doc("d2")) + "\n").encode())
    response = admin_client_logged.post(link, {"kind": "consolidated", "dataset": "", "missing": "error",
                                               "file": good}, follow=True)
    [(level, text)] = _messages(response)
    assert level == "success" and text.startswith("Imported dataset my-news (new): 2 documents (2 created")
    assert Dataset.objects.get(name="my-news").documents.count() == 2

    before = snapshot()
    broken = doc("d3")
    del broken["m_summary_dict"]["u2"]["sysB"]
    bad = SimpleUploadedFile("more.jsonl", (json.dumps(doc("d4")) + "\n" + json.dumps(broken) + "\n").encode())
    response = admin_client_logged.post(link, {"kind": "consolidated", "dataset": "my-news", "missing": "error",
                                               "file": bad}, follow=True)
    [(level, text)] = _messages(response)
    assert level == "error" and text.startswith("Nothing was imported: more.jsonl:2: ")
    assert snapshot() == before

    missing = admin_client_logged.post(link, {"kind": "pens", "dataset": "", "missing": "error"})
    assert missing.status_code == 200 and "Choose a file." in missing.content.decode() and snapshot() == before

    news = "\n".join([NEWS_HEADER] + [news_row(f"N{i}") for i in range(1, 5)]) + "\n"
    test = "\n".join([TEST_HEADER, "U1\tN1 N2\tN2,N1\tT2#TAB#T1", "U2\tN4\tN3\tT3"]) + "\n"
    response = admin_client_logged.post(link, {
        "kind": "pens", "dataset": "pens-upload", "missing": "error",
        "news": SimpleUploadedFile("news.tsv", news.encode()),
        "test": SimpleUploadedFile("personalized_test.tsv", test.encode()),
    }, follow=True)
    [(level, text)] = _messages(response)
    assert level == "success" and "dataset pens-upload (new): 3 documents" in text and "3 summaries" in text


def test_dataset_import_needs_the_add_permission(db):
    User.objects.create_user("viewer", password="pw-viewer-123", is_staff=True)
    client = Client()
    client.force_login(User.objects.get(username="viewer"))
    assert client.get("/admin/survey/dataset/import/").status_code == 403
