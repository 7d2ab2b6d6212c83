"""Every model is curated in the admin: changelists with search and filters, inlines, read-only ratings."""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client

from survey import services
from survey.models import Assignment, Document, Rating
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
