"""Large imports run as import jobs (survey.import_jobs): an upload over IMPORT_INLINE_MAX_BYTES is stored and
imported by a worker (Celery, eager under tests) with the same importer as a small one, all or nothing, with its
problems as file:line on the job page; a job whose worker vanished is taken over or failed, never left running;
an upload over UPLOAD_MAX_MB is refused with a message (a form error; JSON 413 under /api/)."""
from __future__ import annotations

import gzip
import json
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from metaeval.models import JudgmentSet
from survey import import_jobs, judge_runs
from survey.models import Dataset, ImportJob, ImportUpload, JudgeJudgment, JudgeRun, PreferenceItem
from survey.tasks import execute_import_job
from tests.survey.test_judge_runs import cli_file, ranked_study

pytestmark = pytest.mark.django_db(transaction=True)  # the job's lease writes from its own thread and connection


@pytest.fixture
def researcher() -> User:
    user = User.objects.create_user("importer", password="importer-pass-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    return user


@pytest.fixture
def client(researcher) -> Client:
    client = Client()
    client.force_login(researcher)
    return client


@pytest.fixture
def small_inline(settings):
    """Files over 200 bytes go to a job."""
    settings.IMPORT_INLINE_MAX_BYTES = 200
    return settings


def _stored(study) -> list[tuple]:
    """Every stored file-judge judgment of ``study``, as comparable values."""
    return sorted(JudgeJudgment.objects.filter(judge_run__study=study).values_list(
        "judge_run__name", "judge_run__kind", "judge_run__status", "judge_run__total", "item_id", "criterion", "run",
        "winner", "shown_first"))


def _upload(client: Client, study, data: bytes, name: str = "judged.csv"):
    return client.post(f"/research/studies/{study.slug}/judges/",
                       {"action": "import", "file": SimpleUploadedFile(name, data, content_type="text/csv")})


def test_a_large_judge_file_is_imported_by_a_job_and_stores_what_an_inline_import_stores(client, settings):
    study = ranked_study()
    data = cli_file(study, swap=True)
    assert len(data) > 1000
    inline = _upload(client, study, data)
    assert inline.status_code == 302 and inline["Location"] == f"/research/studies/{study.slug}/judges/"
    assert not ImportJob.objects.exists()
    expected = _stored(study)
    assert len(expected) == 2 * PreferenceItem.objects.filter(questionnaire__study=study).count()
    JudgeRun.objects.filter(study=study).delete()

    settings.IMPORT_INLINE_MAX_BYTES = 1000
    response = _upload(client, study, data)
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/research/imports/{job.pk}/"
    assert (job.kind, job.status, job.study, job.attempts, job.created_by.username) == (
        "judge_file", "done", study, 1, "importer")
    assert _stored(study) == expected  # the same rows as the inline import
    assert job.done == job.total == len(expected) and job.problems == []
    assert job.result["message"] == f"Imported judged.csv: gpt-x ({len(expected)} judgments)."
    upload = ImportUpload.objects.get(job=job)
    assert (upload.name, upload.size, bytes(upload.content)) == ("judged.csv", len(data), b"")  # bytes dropped
    page = client.get(response["Location"]).content.decode()
    assert 'id="import-status" class="status-done">Done<' in page and "gpt-x (" in page
    assert f'href="/research/studies/{study.slug}/judges/"' in page and "import-live" not in page
    state = client.get(f"/research/imports/{job.pk}.json").json()
    assert (state["status"], state["percent"], state["live"], state["result"]["message"]) == (
        "done", 100.0, False, job.result["message"])
    judges = client.get(f"/research/studies/{study.slug}/judges/").content.decode()
    assert f'href="/research/imports/{job.pk}/">Import {job.pk}</a>: done' in judges


def test_a_bad_large_file_fails_with_file_line_problems_and_stores_nothing(client, small_inline):
    study = ranked_study()
    bad = cli_file(study, judge="other", extra="N9/R0,quality,SysnameA,SysnameB,model_a,other,llm,1,\n"
                                              "N0/R0,fluency,SysnameA,SysnameB,model_a,other,llm,1,\n")
    lines = bad.decode().count("\n")
    response = _upload(client, study, bad, name="bad.csv")
    job = ImportJob.objects.get()
    assert response["Location"] == f"/research/imports/{job.pk}/" and job.status == "failed"
    assert job.problems[0].startswith(f'bad.csv:{lines - 1}: field "case_id": no item of study')
    assert job.problems[1].startswith(f'bad.csv:{lines}: field "criterion": "fluency" is not asked')
    assert not JudgeRun.objects.exists() and not JudgeJudgment.objects.exists()
    assert bytes(ImportUpload.objects.get(job=job).content) == b""
    page = client.get(response["Location"]).content.decode()
    assert "Nothing was stored" in page and f"bad.csv:{lines - 1}: field &quot;case_id&quot;" in page
    assert client.get(f"/research/imports/{job.pk}.json").json()["problems"] == job.problems


def test_a_large_judgment_set_is_a_job_and_a_taken_name_is_refused_before_it_queues(client, small_inline):
    study = ranked_study()
    data = cli_file(study)
    form = {"name": "offline", "description": "from elsewhere"}
    response = client.post("/research/runs/judgments/", {**form, "file": SimpleUploadedFile("j.csv", data)})
    job = ImportJob.objects.get()
    assert response["Location"] == f"/research/imports/{job.pk}/" and job.status == "done"
    stored = JudgmentSet.objects.get(name="offline")
    assert stored.description == "from elsewhere" and stored.judgments == data.decode().count("\n") - 1
    assert job.result["message"].startswith(f"Judgment set offline stored: {stored.judgments} judgments")
    again = client.post("/research/runs/judgments/", {**form, "file": SimpleUploadedFile("j.csv", data)})
    assert again.status_code == 400 and "a judgment set of that name exists already" in again.content.decode()
    assert ImportJob.objects.count() == 1


def test_a_large_dataset_upload_in_the_admin_is_a_job(small_inline):
    from tests.survey.importers.helpers import doc

    User.objects.create_superuser("boss", "boss@example.org", "pw-admin-123")
    admin = Client()
    admin.force_login(User.objects.get(username="boss"))
    good = "".join(json.dumps(doc(f"d{i}")) + "\n" for i in range(3)).encode()
    response = admin.post("/admin/survey/dataset/import/", {"kind": "consolidated", "dataset": "", "missing": "error",
                                                            "file": SimpleUploadedFile("big-news.jsonl", good)})
    job = ImportJob.objects.get()
    assert response["Location"] == f"/research/imports/{job.pk}/" and job.status == "done", job.problems
    assert job.result["message"].startswith("Imported dataset big-news (new): 3 documents")
    assert Dataset.objects.get(name="big-news").documents.count() == 3
    assert "/admin/survey/dataset/" in admin.get(response["Location"]).content.decode()
    broken = doc("d9")
    del broken["m_summary_dict"]["u2"]["sysB"]
    bad = (json.dumps(doc("d8")) + "\n" + json.dumps(broken) + "\n" + json.dumps(doc("d7")) + "\n").encode()
    admin.post("/admin/survey/dataset/import/", {"kind": "consolidated", "dataset": "other", "missing": "error",
                                                 "file": SimpleUploadedFile("more.jsonl", bad)})
    failed = ImportJob.objects.latest("id")
    assert failed.status == "failed" and failed.problems[0].startswith("more.jsonl:2: ")
    assert not Dataset.objects.filter(name="other").exists()
    # a researcher without the permission to add datasets does not see a dataset import
    viewer = User.objects.create_user("viewer", password="viewer-pass-1")
    viewer.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(viewer)
    assert client.get(f"/research/imports/{job.pk}/").status_code == 403
    assert Client().get(f"/research/imports/{job.pk}/").status_code == 302  # to the login page


def _running(job: ImportJob, *, attempts: int, worker: str = "gone:1") -> None:
    """The job as a worker that vanished left it: running, its lease run out."""
    ImportJob.objects.filter(pk=job.pk).update(status="running", worker=worker, attempts=attempts,
                                               lease_expires_at=timezone.now() - timedelta(seconds=5))


def _queued_job(study, data: bytes, user=None) -> ImportJob:
    """A job stored as the page stores it, not yet sent to a worker."""
    job = ImportJob.objects.create(kind="judge_file", study=study, created_by=user)
    ImportUpload.objects.create(job=job, role="file", name="judged.csv", size=len(data), content=gzip.compress(data))
    return job


def test_a_redelivered_message_takes_over_a_job_whose_worker_vanished(settings):
    study = ranked_study()
    job = _queued_job(study, cli_file(study))
    _running(job, attempts=1)
    assert execute_import_job.apply(args=(job.pk,)).get() == "done"  # the message the broker gave back
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("done", 2) and JudgeRun.objects.filter(study=study).count() == 1
    # a job whose last allowed attempt's worker vanished fails saying so, nothing stored
    other = _queued_job(study, cli_file(study, judge="late"))
    _running(other, attempts=settings.METAEVAL_RUN_ATTEMPTS)
    assert execute_import_job.apply(args=(other.pk,)).get() == "skipped"
    other.refresh_from_db()
    assert other.status == "failed" and "stopped answering (no heartbeat since " in other.problems[0]
    assert other.problems[0].endswith("; tried 3 times, the limit (METAEVAL_RUN_ATTEMPTS). Nothing was stored.")
    assert "Nothing was stored" in other.problems[0] and not JudgeRun.objects.filter(name="late").exists()
    # a live lease is left alone
    live = _queued_job(study, cli_file(study, judge="busy"))
    ImportJob.objects.filter(pk=live.pk).update(status="running", worker="busy:1", attempts=1,
                                                lease_expires_at=timezone.now() + timedelta(seconds=60))
    assert execute_import_job.apply(args=(live.pk,)).get() == "skipped"
    assert ImportJob.objects.get(pk=live.pk).status == "running"


def test_the_reclaimer_requeues_a_stale_job_and_it_ends_done():
    study = ranked_study()
    job = _queued_job(study, cli_file(study))
    _running(job, attempts=1)
    outcome = import_jobs.import_jobs_reclaim_stale()
    job.refresh_from_db()
    assert outcome == {"retried": [job.pk], "failed": [], "cancelled": []}  # and sent to Celery again (eager): done
    assert job.status == "done" and job.attempts == 2 and JudgeRun.objects.filter(study=study).count() == 1


def test_an_attempt_whose_job_went_to_another_worker_rolls_back(monkeypatch):
    """Exactly once: while this worker imports, its lease ran out and another worker took the job; this attempt's
    rows are rolled back with it."""
    study = ranked_study()
    job = _queued_job(study, cli_file(study))
    real = judge_runs.judge_run_import

    def import_losing_the_job(*, before_commit, **kwargs):
        def taken_over(runs):  # the reclaimer requeued the job and another worker took it meanwhile
            ImportJob.objects.filter(pk=job.pk).update(worker="other:2")
            before_commit(runs)

        return real(**kwargs, before_commit=taken_over)

    monkeypatch.setattr(judge_runs, "judge_run_import", import_losing_the_job)
    assert import_jobs.import_job_process(job.pk, worker="me:1").status == "running"
    assert not JudgeRun.objects.exists()


# ------------------------------------------------------------------------------------------ size limit


def test_an_upload_over_the_limit_is_a_form_error_and_nothing_is_kept(client, settings):
    study = ranked_study()
    settings.UPLOAD_MAX_MB = 0.01  # 10 KiB
    data = cli_file(study) * 8
    assert len(data) > 0.01 * 1024 * 1024
    response = _upload(client, study, data, name="huge.csv")
    page = response.content.decode()
    assert 'id="judge-file-problems"' in page
    assert re.search(r"The upload is 1\d\.\d KB; uploads are limited to 0\.01 MB \(UPLOAD_MAX_MB\)\. Nothing was "
                     r"stored\.", page)  # the request's size: the file and the form's other fields
    assert not JudgeRun.objects.exists() and not ImportJob.objects.exists()
    # the judgment set form and the admin's dataset import say the same
    sets = client.post("/research/runs/judgments/", {"name": "big", "file": SimpleUploadedFile("j.csv", data)})
    assert sets.status_code == 400 and "uploads are limited to 0.01 MB" in sets.content.decode()
    User.objects.create_superuser("boss", "boss@example.org", "pw-admin-123")
    admin = Client()
    admin.force_login(User.objects.get(username="boss"))
    refused = admin.post("/admin/survey/dataset/import/", {"kind": "consolidated", "dataset": "", "missing": "error",
                                                           "file": SimpleUploadedFile("big.jsonl", data)})
    assert refused.status_code == 200 and "uploads are limited to 0.01 MB" in refused.content.decode()
    assert not Dataset.objects.filter(name="big").exists() and not JudgmentSet.objects.exists()


def test_the_discarding_handler_keeps_no_byte(settings, rf):
    from django.test.client import encode_multipart

    from config.uploads import DiscardedUpload, UploadLimitMiddleware

    settings.UPLOAD_MAX_MB = 0.001
    body = encode_multipart("BoUnDaRy", {"name": "x", "file": SimpleUploadedFile("f.csv", b"a,b\n" * 1000)})
    request = rf.post("/research/runs/judgments/", body, content_type="multipart/form-data; boundary=BoUnDaRy")
    seen = {}

    def view(request):
        seen["file"], seen["name"] = request.FILES["file"], request.POST["name"]
        return None

    UploadLimitMiddleware(view)(request)
    assert isinstance(seen["file"], DiscardedUpload) and seen["file"].read() == b"" and seen["name"] == "x"
    assert seen["file"].request_size == len(body)


def test_a_body_over_the_limit_is_a_json_413_under_the_api_and_a_page_elsewhere(researcher, settings, client):
    settings.UPLOAD_MAX_MB = 0.01
    api = Client()
    token = Token.objects.create(user=researcher)
    response = api.post("/api/runs/", json.dumps({"dataset": "x", "pad": "y" * 20000}), content_type="application/json",
                        HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 413 and response["Content-Type"] == "application/json"
    assert response.json()["detail"].startswith("The upload is 19.6 KB; uploads are limited to 0.01 MB (UPLOAD_MAX_MB)")
    page = client.post("/research/studies/x/judges/", "pad=" + "y" * 20000,
                       content_type="application/x-www-form-urlencoded")
    assert page.status_code == 413 and "uploads are limited to 0.01 MB" in page.content.decode()
