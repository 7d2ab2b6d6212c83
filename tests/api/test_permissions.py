"""Who may call what: every endpoint for anonymous (401), a non-researcher (403), a researcher (token) and staff
(session); token and session authentication; CSRF on session POSTs; the token endpoint."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from metaeval import services
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun
from tests.api.conftest import PASSWORD

pytestmark = pytest.mark.django_db

RUN_BODY = {"dataset": "tiny", "measures": ["rouge_l"], "systems": ["SysnameA"]}


@pytest.fixture
def done_run(dataset):
    return services.run_execute(dataset=dataset, options=RunOptions(systems=["SysnameB"]))


def endpoints(run_id: int) -> list[tuple[str, str]]:
    return [
        ("get", "/api/datasets/"),
        ("get", "/api/datasets/tiny/"),
        ("get", "/api/datasets/tiny/systems/"),
        ("get", "/api/studies/"),
        ("get", "/api/studies/study/"),
        ("get", "/api/studies/study/progress/"),
        ("get", "/api/studies/study/ratings/"),
        ("get", "/api/studies/study/ratings/?as=jsonl"),
        ("get", "/api/runs/"),
        ("post", "/api/runs/"),
        ("get", f"/api/runs/{run_id}/"),
        ("get", f"/api/runs/{run_id}/results/"),
        ("get", "/api/schema/"),
        ("get", "/api/schema/?format=yaml"),
    ]


def call(client: APIClient, method: str, url: str):
    if method == "post":
        return client.post(url, RUN_BODY, format="json")
    return client.get(url)


@pytest.mark.parametrize(
    "who, expected",
    [("api", {401}), ("plain_api", {403}), ("researcher_api", {200, 201}), ("staff_api", {200, 201})],
)
def test_permission_matrix(request, who, expected, study, done_run):
    client = request.getfixturevalue(who)
    runs_before = MetaevalRun.objects.count()
    for method, url in endpoints(done_run.pk):
        response = call(client, method, url)
        assert response.status_code in expected, (who, method, url, response.status_code)
        if response.status_code == 401:
            assert response["WWW-Authenticate"] == "Token"  # anonymous: told how to authenticate
        if response.status_code in (401, 403) and "yaml" not in url:
            assert "detail" in response.json()
        if method == "post" and response.status_code == 201:
            assert response.json()["status"] == "done"
    created = MetaevalRun.objects.count() - runs_before
    assert created == (1 if 201 in expected else 0)  # refused requests queue nothing


def test_inactive_researcher_and_bad_token_are_refused(researcher, dataset):
    token = Token.objects.create(user=researcher)
    researcher.is_active = False
    researcher.save()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/datasets/").status_code == 401  # DRF refuses a token of an inactive user
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert client.get("/api/datasets/").status_code == 401


def test_session_post_without_csrf_token_is_rejected(researcher, dataset):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(User.objects.get(username="researcher"))
    assert client.get("/api/datasets/").status_code == 200  # safe methods need no CSRF token
    response = client.post("/api/runs/", RUN_BODY, format="json")
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]
    assert not MetaevalRun.objects.exists()
    # with the CSRF cookie's token in the header the same request goes through
    client.get("/accounts/login/")
    csrf = client.cookies["csrftoken"].value
    response = client.post("/api/runs/", RUN_BODY, format="json", HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 201, response.content


def test_token_auth_needs_no_csrf(researcher, dataset):
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    assert client.post("/api/runs/", RUN_BODY, format="json").status_code == 201


def test_token_endpoint_gives_researchers_their_token(researcher, dataset):
    client = APIClient()
    response = client.post("/api/token/", {"username": "researcher", "password": PASSWORD}, format="json")
    assert response.status_code == 200
    key = response.json()["token"]
    assert key == Token.objects.get(user=researcher).key
    again = client.post("/api/token/", {"username": "researcher", "password": PASSWORD})  # form data works too
    assert again.status_code == 200 and again.json()["token"] == key
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/datasets/tiny/").json()["name"] == "tiny"


def test_token_endpoint_refuses_wrong_passwords_and_non_researchers(plain_user, researcher):
    client = APIClient()
    wrong = client.post("/api/token/", {"username": "researcher", "password": "nope"}, format="json")
    assert wrong.status_code == 400 and "non_field_errors" in wrong.json()
    refused = client.post("/api/token/", {"username": "someone", "password": PASSWORD}, format="json")
    assert refused.status_code == 403
    assert not Token.objects.exists()


def test_drf_create_token_command(researcher, capsys):
    call_command("drf_create_token", "researcher")
    key = Token.objects.get(user=researcher).key
    assert key in capsys.readouterr().out
