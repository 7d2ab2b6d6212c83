"""Judge endpoints (survey.judge_endpoints, conventions sec. 21 item 8): a researcher's judge run can no longer
make a worker send its secrets to a server of the researcher's choice (issue 28, item 1). Each test reproduces the
probe's attack first, then shows what the platform does instead."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.exceptions import ValidationError

from survey import judge_policy, judge_runs
from survey.models import JudgeEndpoint, JudgeJudgment, JudgeRun
from survey.research_views import RESEARCHER_GROUP
from tests.survey.test_judge_runs import RankStub, create, ranked_study, run_settings, stub_endpoint

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def stub():
    server = RankStub()
    yield server
    server.close()


def _platform_env_names() -> set[str]:
    """Every environment variable the platform's own code reads (config, metaeval, survey, api)."""
    pattern = re.compile(r'(?:environ(?:\.get)?[\[(]|_env_bool\(|_env_list\(|getenv\(|_ENV = )"([A-Z][A-Z0-9_]+)"')
    names: set[str] = set()
    for folder in ("config", "metaeval", "survey", "api"):
        for path in (ROOT / folder).rglob("*.py"):
            names.update(pattern.findall(path.read_text(encoding="utf-8")))
    return names | {"DATABASE_URL"}  # read by dj_database_url.config() in config/settings.py


def test_the_probes_exfiltration_request_is_refused_and_nothing_reaches_the_server(stub, monkeypatch):
    """The probe's settings: a base URL of the researcher's choice and SECRET_KEY as the key variable."""
    monkeypatch.setenv("SECRET_KEY", "the-platform-secret")
    study = ranked_study()
    stub_endpoint(stub)  # an endpoint exists; the attack does not use it
    attack = {"base_url": stub.url, "model": "x", "api_key_env": "SECRET_KEY"}
    with pytest.raises(judge_runs.JudgeRunError) as refused:
        judge_runs.judge_run_create(study=study, endpoint="stub", settings=attack, launch=False)
    assert "base_url: set by the operator on the judge endpoint" in str(refused.value)
    assert "api_key_env: set by the operator on the judge endpoint" in str(refused.value)
    assert not JudgeRun.objects.exists() and not stub.requests


def test_every_variable_the_platform_reads_is_refused_as_a_key_whatever_the_pattern(settings):
    names = _platform_env_names()
    assert {"SECRET_KEY", "CELERY_BROKER_URL", "CACHE_URL", "DEMO_ADMIN_PASSWORD", "METAEVAL_INFOLM_MODEL"} <= names
    settings.JUDGE_API_KEY_ENV_PATTERN = ".*"  # an operator's careless pattern changes nothing for these
    for name in sorted(names):
        assert judge_policy.key_env_problem(name), name
    assert judge_policy.key_env_problem("AWS_SECRET_ACCESS_KEY")
    assert judge_policy.key_env_problem("OPENAI_API_KEY") is None


def test_the_default_pattern_takes_only_api_key_variables():
    assert judge_policy.key_env_problem("OPENAI_API_KEY") is None
    assert judge_policy.key_env_problem("TOGETHER_API_KEY") is None
    for name, why in [("HOME", "platform's own"), ("GITHUB_TOKEN", "does not end in _API_KEY"),
                      ("lower_API_KEY", "does not match the allowed pattern"),
                      ("DB_PASSWORD_API_KEY", "PASSWORD"), ("X; rm -rf /", "not an environment variable name")]:
        assert why in (judge_policy.key_env_problem(name) or ""), name


def test_an_endpoint_naming_a_platform_secret_cannot_be_saved_and_cannot_be_used(stub, monkeypatch,
                                                                             django_capture_on_commit_callbacks):
    monkeypatch.setenv("SECRET_KEY", "the-platform-secret")
    endpoint = JudgeEndpoint(name="evil", base_url=stub.url, model_choices="x", api_key_env="SECRET_KEY",
                             allow_private=True)
    with pytest.raises(ValidationError) as invalid:
        endpoint.full_clean()
    assert "one of the platform's own settings" in str(invalid.value.message_dict["api_key_env"])
    # stored around the admin's checks (a database edit): runs are refused, then the worker refuses too
    endpoint.save()
    study = ranked_study()
    with pytest.raises(judge_runs.JudgeRunError, match="endpoint evil: api_key_env: SECRET_KEY is one of"):
        judge_runs.judge_run_create(study=study, endpoint="evil", launch=False)
    JudgeEndpoint.objects.filter(pk=endpoint.pk).update(api_key_env="")
    run = judge_runs.judge_run_create(study=study, endpoint="evil", settings=run_settings(), runs=2, launch=False)
    JudgeEndpoint.objects.filter(pk=endpoint.pk).update(api_key_env="SECRET_KEY")
    judge_runs.judge_run_launch(run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and "SECRET_KEY is one of the platform's own settings" in run.error
    assert not stub.requests and not JudgeJudgment.objects.exists()


def test_an_endpoint_on_a_private_address_needs_the_operators_permission(stub, django_capture_on_commit_callbacks):
    endpoint = JudgeEndpoint(name="inside", base_url=stub.url, model_choices="stub-judge")
    with pytest.raises(ValidationError) as invalid:
        endpoint.full_clean()
    assert "127.0.0.1 is at 127.0.0.1, a loopback, private" in str(invalid.value.message_dict["base_url"])
    endpoint.save()  # stored around the admin's checks: the worker refuses before any request
    study = ranked_study()
    run = create(study, stub, django_capture_on_commit_callbacks, runs=2, endpoint="inside")
    assert run.status == JudgeRun.Status.FAILED and "a loopback, private, link-local" in run.error
    assert not stub.requests and not JudgeJudgment.objects.exists()
    JudgeEndpoint.objects.filter(pk=endpoint.pk).update(allow_private=True)
    run = create(study, stub, django_capture_on_commit_callbacks, runs=2, endpoint="inside", criteria=["quality"])
    assert run.status == JudgeRun.Status.DONE and stub.requests


def test_a_disabled_or_deleted_endpoint_stops_its_runs_with_a_message(stub, django_capture_on_commit_callbacks):
    study = ranked_study()
    endpoint = stub_endpoint(stub)
    run = judge_runs.judge_run_create(study=study, endpoint="stub", settings=run_settings(), runs=2, launch=False)
    JudgeEndpoint.objects.filter(pk=endpoint.pk).update(enabled=False)
    judge_runs.judge_run_launch(run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and "no enabled judge endpoint 'stub'" in run.error
    with pytest.raises(judge_runs.JudgeRunError, match="none is configured yet"):
        judge_runs.judge_run_create(study=study, endpoint="stub", launch=False)
    assert not stub.requests


def test_a_run_stored_with_free_settings_before_endpoints_fails_saying_what_to_do(stub):
    study = ranked_study()
    old = JudgeRun.objects.create(study=study, kind="openai", name="x", criteria=["quality"], runs=2, total=4,
                                  judge_settings={"base_url": stub.url, "model": "x", "api_key_env": "SECRET_KEY"})
    judge_runs.judge_run_launch(old)
    old.refresh_from_db()
    assert old.status == JudgeRun.Status.FAILED and "start a new run on one of the operator's judge endpoints" \
        in old.error
    assert not stub.requests


def test_the_judges_page_takes_no_address_key_variable_or_path(client, stub, monkeypatch):
    """The probe's attack through the page's form: the posted fields are ignored and no run starts."""
    monkeypatch.setenv("SECRET_KEY", "the-platform-secret")
    study = ranked_study()
    user = User.objects.create_user("r1", password="a-long-test-password-1")
    user.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    client.force_login(user)
    url = f"/research/studies/{study.slug}/judges/"
    attack = {"action": "start", "kind": "openai", "base_url": stub.url, "model": "x", "api_key_env": "SECRET_KEY",
              "runs": "2"}
    response = client.post(url, attack)
    assert response.status_code == 200 and b"No judge endpoint is configured yet" in response.content
    stub_endpoint(stub)
    response = client.post(url, attack)
    assert response.status_code == 200 and "This field is required." in response.content.decode()
    response = client.post(url, {**attack, "judge": f"stub|{stub.url}"})
    assert "Select a valid choice" in response.content.decode()
    assert not JudgeRun.objects.exists() and not stub.requests


def test_only_staff_with_the_permission_edit_endpoints_in_the_admin(client, stub):
    researcher = User.objects.create_user("r2", password="a-long-test-password-1", is_staff=True)
    researcher.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    client.force_login(researcher)
    assert client.get("/admin/survey/judgeendpoint/add/").status_code == 403
    researcher.user_permissions.add(*Permission.objects.filter(codename__in=["add_judgeendpoint",
                                                                            "view_judgeendpoint"]))
    fields = {"name": "evil", "kind": "openai", "enabled": "on", "base_url": stub.url, "model_choices": "x",
              "api_key_env": "DATABASE_URL", "allow_private": "on", "max_concurrency": "4", "device": "cpu"}
    response = client.post("/admin/survey/judgeendpoint/add/", fields)
    assert response.status_code == 200 and "DATABASE_URL is one of the platform&#x27;s own settings" in \
        response.content.decode()
    assert not JudgeEndpoint.objects.exists()
    response = client.post("/admin/survey/judgeendpoint/add/", {**fields, "api_key_env": "STUB_API_KEY"})
    assert response.status_code == 302 and JudgeEndpoint.objects.get().api_key_env == "STUB_API_KEY"
