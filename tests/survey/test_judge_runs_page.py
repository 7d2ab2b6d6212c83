"""The judges page's runs table and its live state (judges.json), issue 29: the invalid count never exceeds the
progress count, a run with every judgment stored (the message says "start a new run") offers no Resume and cannot
be resumed, one with judgments left can, and the buttons follow the status."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from survey import judge_runs
from survey.models import JudgeJudgment, JudgeRun, PreferenceItem, Study
from tests.survey.test_preference import preference_study

pytestmark = pytest.mark.django_db
ALL_FAILED = ("every one of the 4 judge calls of this attempt failed (each error is in its judgment's error field); "
              "they are stored as invalid, which a resume skips: fix the settings and start a new run")


@pytest.fixture
def client(db) -> Client:
    user = User.objects.create_user("judges-res", password="pw-for-tests-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def judge_run(study: Study, *, status: str, total: int, stored: int, invalid: int = 0, done: int = 0,
              error: str = "") -> JudgeRun:
    """A run of the openai judge with `stored` judgments stored (the first `invalid` of them invalid) and `done`
    as its worker last wrote it."""
    run = JudgeRun.objects.create(study=study, kind=JudgeRun.Kind.OPENAI, name="judge-x", criteria=["quality"],
                                  runs=2, status=status, total=total, done=done, error=error)
    items = list(PreferenceItem.objects.filter(questionnaire__study=study).order_by("pk"))
    JudgeJudgment.objects.bulk_create(
        JudgeJudgment(judge_run=run, item=items[n // 2], criterion="quality", run=1 + n % 2,
                      winner="invalid" if n < invalid else "model_a", shown_first="model_a",
                      error="HTTP 401: no" if n < invalid else "")
        for n in range(stored))
    return run


def state(client: Client, study: Study, run: JudgeRun) -> dict:
    runs = client.get(f"/research/studies/{study.slug}/judges.json").json()["runs"]
    return next(r for r in runs if r["id"] == run.pk)


def test_the_invalid_count_never_exceeds_the_progress_count(client):
    """While a run runs its worker writes ``done`` at most once a second, but each judgment is stored at once:
    progress and invalid are both counted from the stored judgments, in one query."""
    study = preference_study(slug="live")
    run = judge_run(study, status=JudgeRun.Status.RUNNING, total=8, stored=3, invalid=2, done=0)
    now = state(client, study, run)
    assert (now["done"], now["invalid"], now["total"]) == (3, 2, 8) and now["percent"] == 37.5
    html = client.get(f"/research/studies/{study.slug}/judges/").content.decode()
    row = html.split(f'data-run="{run.pk}"')[1].split("</tr>")[0]
    assert '<span data-field="done">3</span>' in row and '<td data-field="invalid">2</td>' in row


def test_a_run_whose_every_call_failed_offers_no_resume(client, django_capture_on_commit_callbacks):
    study = preference_study(slug="failed")
    run = judge_run(study, status=JudgeRun.Status.FAILED, total=4, stored=4, invalid=4, done=4, error=ALL_FAILED)
    now = state(client, study, run)
    assert now["resumable"] is False and now["cancellable"] is False and now["status_display"] == "Failed"
    html = client.get(f"/research/studies/{study.slug}/judges/").content.decode()
    row = html.split(f'data-run="{run.pk}"')[1].split("</tr>")[0]
    assert re.search(r'<form method="post" data-action="resume" hidden>', row)
    with pytest.raises(judge_runs.JudgeRunError, match="a resume would ask nothing: start a new run"):
        judge_runs.judge_run_resume(run)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/research/studies/{study.slug}/judges/", {"action": "resume", "run": run.pk},
                               follow=True)
    assert "start a new run" in response.content.decode()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and run.error == ALL_FAILED


@pytest.mark.parametrize("status", [JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED])
def test_a_stopped_run_with_judgments_left_offers_resume(client, status):
    study = preference_study(slug="stopped")
    run = judge_run(study, status=status, total=4, stored=1, done=1, error="the judge is not set up")
    assert state(client, study, run)["resumable"] is True
    html = client.get(f"/research/studies/{study.slug}/judges/").content.decode()
    row = html.split(f'data-run="{run.pk}"')[1].split("</tr>")[0]
    assert '<form method="post" data-action="resume">' in row
    assert '<form method="post" data-action="cancel" hidden>' in row


def test_the_buttons_follow_the_status(client):
    study = preference_study(slug="buttons")
    run = judge_run(study, status=JudgeRun.Status.RUNNING, total=4, stored=2, done=2)
    assert (state(client, study, run)["cancellable"], state(client, study, run)["resumable"]) == (True, False)
    JudgeRun.objects.filter(pk=run.pk).update(cancel_requested=True)
    assert state(client, study, run)["cancellable"] is False
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.DONE, cancel_requested=False, done=4)
    judge_run_done = state(client, study, run)
    assert (judge_run_done["cancellable"], judge_run_done["resumable"], judge_run_done["status_display"]) == \
        (False, False, "Done")
