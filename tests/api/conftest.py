"""API fixtures: the accounts of the permission matrix, a rated study, clients, runs inline, a private cache."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from survey.research_views import RESEARCHER_GROUP
from tests.conftest import build_study, complete_questionnaires, full_answers

PASSWORD = "a-long-test-password-1"


@pytest.fixture(autouse=True)
def _private_cache_and_inline_runs(monkeypatch, tmp_path, settings):
    """No user cache is touched; POST /api/runs/ scores in the request (METAEVAL_RUN_LAUNCHER = "inline")."""
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "metaeval-cache"))
    settings.METAEVAL_RUN_LAUNCHER = "inline"


def rate_all(study, values=(4, 2)) -> None:
    """One participant per value completes every questionnaire it can claim, rating every pair ``value``."""
    complete_questionnaires(study, lambda assignment, index: full_answers(assignment, values[index]), len(values))


@pytest.fixture
def rated_study(dataset):
    study = build_study(dataset)
    rate_all(study)
    return study


@pytest.fixture
def researcher(django_user_model):
    user = django_user_model.objects.create_user("researcher", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    return user


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("staffer", password=PASSWORD, is_staff=True)


@pytest.fixture
def plain_user(django_user_model):
    return django_user_model.objects.create_user("someone", password=PASSWORD)


@pytest.fixture
def api() -> APIClient:
    """An anonymous client."""
    return APIClient()


@pytest.fixture
def researcher_api(researcher) -> APIClient:
    """The researcher, by token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


@pytest.fixture
def staff_api(staff) -> APIClient:
    """A staff member, by session."""
    client = APIClient()
    client.force_login(staff)
    return client


@pytest.fixture
def plain_api(plain_user) -> APIClient:
    """An account without the researcher role, by token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=plain_user).key}")
    return client
