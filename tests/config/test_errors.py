"""config/errors.py: JSON errors under /api/, friendly pages elsewhere, the health check; HEAD on pages."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from config import errors
from tests.conftest import build_dataset, build_study

pytestmark = pytest.mark.django_db


def test_unknown_api_address_answers_json_and_a_page_address_html():
    client = Client()
    api = client.get("/api/no-such-thing/")
    assert api.status_code == 404 and api["Content-Type"] == "application/json"
    assert json.loads(api.content) == {"detail": "Not found."}
    page = client.get("/no-such-page/")
    assert page.status_code == 404 and "Page not found" in page.content.decode()


def test_a_server_error_is_json_on_the_api_and_a_friendly_page_elsewhere(monkeypatch):
    """A lost database (or any uncaught error): the API client gets JSON, a participant a page that says the
    answers are saved; neither shows the error itself."""
    from api import views as api_views
    from survey import views as survey_views

    def broken(*args, **kwargs):
        raise RuntimeError("database at 10.0.0.5 went away")

    monkeypatch.setattr(api_views.DatasetList, "get", broken)
    monkeypatch.setattr(survey_views, "_study_or_404", broken)
    client = Client(raise_request_exception=False)
    client.force_login(_researcher())
    api = client.get("/api/datasets/")
    assert api.status_code == 500 and api["Content-Type"] == "application/json"
    assert "Server error" in json.loads(api.content)["detail"] and "10.0.0.5" not in api.content.decode()
    page = Client(raise_request_exception=False).get("/s/anything/")
    assert page.status_code == 500 and "Your earlier answers are saved" in page.content.decode()
    assert "10.0.0.5" not in page.content.decode()


def _researcher():
    from django.contrib.auth.models import Group, User

    from survey.research_views import RESEARCHER_GROUP

    user = User.objects.create_user("res-errors", password="pw-errors-123")
    user.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    return user


def test_healthz_reports_the_database_and_fails_with_503(monkeypatch):
    client = Client()
    ok = client.get("/healthz")
    assert ok.status_code == 200 and json.loads(ok.content)["database"] == "ok"
    assert json.loads(ok.content)["status"] == "ok"
    assert client.head("/healthz").status_code == 200

    def down() -> str:
        raise ConnectionError("could not connect to server at 10.0.0.5")

    monkeypatch.setattr(errors, "_check_database", down)
    bad = client.get("/healthz")
    body = json.loads(bad.content)
    assert bad.status_code == 503 and body["status"] == "error" and body["database"] == "error: ConnectionError"
    assert "10.0.0.5" not in bad.content.decode()


def test_head_is_allowed_on_participant_and_research_pages():
    study = build_study(build_dataset(name="head"), slug="head")
    client = Client()
    assert client.head(f"/s/{study.slug}/").status_code == 200
    assert client.head("/accounts/login/").status_code == 200
    client.force_login(_researcher())
    assert client.head("/research/runs/").status_code == 200


def test_a_signed_in_non_researcher_gets_a_page_that_says_why_and_a_way_out():
    """The 403 page names the account and what is missing, logs out by POST (CSRF checked) back to the login page
    for the same address, and links home; the API answers JSON as before."""
    import re

    from django.contrib.auth.models import User

    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.create_user("plain-403", password="pw-plain-403"))
    for url in ["/research/", "/research/runs/"]:
        page = client.get(url)
        html = page.content.decode()
        assert page.status_code == 403 and page["Content-Type"].startswith("text/html"), url
        assert "This page is for researchers; you are signed in as" in html and ">plain-403</strong>" in html
        assert 'action="/accounts/logout/"' in html and 'name="csrfmiddlewaretoken"' in html
        assert 'href="/"' in html and "Go to the home page" in html
    api = client.get("/api/studies/")
    assert api.status_code == 403 and api["Content-Type"] == "application/json" and "detail" in api.json()

    page = client.get("/research/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    follow = re.search(r'name="next" value="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert client.post("/accounts/logout/", {"next": follow}).status_code == 403  # no token: refused
    out = client.post("/accounts/logout/", {"next": follow, "csrfmiddlewaretoken": token})
    assert out.status_code == 302 and out["Location"] == "/accounts/login/?next=/research/"
    assert client.get("/research/")["Location"].startswith("/accounts/login/")  # signed out


def test_the_403_page_for_another_reason_names_it(rf):
    from django.contrib.auth.models import AnonymousUser
    from django.core.exceptions import PermissionDenied

    request = rf.get("/somewhere/")
    request.user = AnonymousUser()
    page = errors.permission_denied(request, PermissionDenied("x"))
    html = page.content.decode()
    assert page.status_code == 403 and "You may not open this page." in html
    assert 'href="/accounts/login/?next=/somewhere/"' in html and "researchers" not in html
    assert errors.permission_denied(rf.get("/api/x/"), PermissionDenied()).status_code == 403
