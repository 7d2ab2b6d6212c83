"""A researcher imports large judgment files on the LLM judges page in a real browser: a file over the (lowered)
inline limit goes to a background job whose page follows it live, from queued to failed with its file:line
problems (nothing stored) and, for a good file, to done with the result and a link back; a file over the upload
limit is refused on the form."""
from __future__ import annotations

import threading

import pytest
from django.db import connection
from playwright.sync_api import expect

from survey import import_jobs
from survey.models import ImportJob, JudgeJudgment, JudgeRun, PreferenceItem
from tests.e2e.conftest import SHOTS
from tests.survey.test_judge_runs import cli_file, ranked_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


class HeldWorker:
    """Stands in for the broker: a queued job is sent to Celery (eager here) from a thread once :meth:`release` is
    called, so the page is seen while the job waits and then while it ends."""

    def __init__(self) -> None:
        self.gate = threading.Semaphore(0)
        self.threads: list[threading.Thread] = []
        self.launch = import_jobs.import_job_launch

    def __call__(self, job: ImportJob) -> None:
        def work() -> None:
            try:
                if self.gate.acquire(timeout=60):
                    self.launch(job)
            finally:
                connection.close()

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        self.threads.append(thread)

    def release(self) -> None:
        self.gate.release()

    def join(self) -> None:
        for thread in self.threads:
            self.gate.release()
            thread.join(timeout=30)


def test_a_large_file_import_is_followed_on_its_job_page(live_server, browser, settings, monkeypatch):
    from django.contrib.auth.models import Group, User

    settings.IMPORT_INLINE_MAX_BYTES = 1000
    worker = HeldWorker()
    monkeypatch.setattr(import_jobs, "import_job_launch", worker)
    study = ranked_study(slug="bigimport")
    items = PreferenceItem.objects.filter(questionnaire__study=study).count()
    user = User.objects.create_user("bulk", password="bulk-pass-123")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{live_server.url}/accounts/login/?next=/research/studies/{study.slug}/judges/")
        page.fill("input[name=username]", "bulk")
        page.fill("input[name=password]", "bulk-pass-123")
        page.click("button[type=submit]")
        expect(page.locator("#file-judge")).to_contain_text("is imported by a background worker")

        good = cli_file(study, judge="offline-judge")
        bad = good + b"N99/R0,quality,SysnameA,SysnameB,model_a,offline-judge,llm,3,model_a\n"
        assert len(good) > 1000
        bad_line = good.count(b"\n") + 1
        page.set_input_files("#judge-file-form input[type=file]", files=[
            {"name": "offline.csv", "mimeType": "text/csv", "buffer": bad}])
        page.click("button:has-text('Import the judgments')")
        expect(page.locator("h1")).to_have_text(f"Import {ImportJob.objects.get().pk}: Judgments made elsewhere "
                                                "(file judge)")
        expect(page.locator("#import-status")).to_have_text("Queued")
        expect(page.locator("#import-live")).to_be_visible()
        worker.release()
        expect(page.locator("#import-status")).to_have_text("Failed", timeout=20000)
        expect(page.locator("#import-problems")).to_contain_text(
            f'offline.csv:{bad_line}: field "case_id": no item of study')
        expect(page.locator(".error-box")).to_contain_text("Nothing was stored.")
        assert not JudgeRun.objects.exists()

        page.goto(f"{live_server.url}/research/studies/{study.slug}/judges/")
        page.set_input_files("#judge-file-form input[type=file]", files=[
            {"name": "offline.csv", "mimeType": "text/csv", "buffer": good}])
        page.click("button:has-text('Import the judgments')")
        expect(page.locator("#import-status")).to_have_text("Queued")
        worker.release()
        expect(page.locator("#import-status")).to_have_text("Done", timeout=20000)
        expect(page.locator("#import-result")).to_have_text(
            f"Imported offline.csv: offline-judge ({2 * items} judgments).")
        expect(page.locator("#import-bar-fill")).to_have_attribute("style", "width:100.0%")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#import-job").screenshot(path=str(SHOTS / "import-job.png"))
        page.click("text=The study's LLM judges")
        row = page.locator("#judge-run-table tr[data-run]").first
        expect(row).to_contain_text("offline-judge")
        expect(page.locator("#import-jobs")).to_contain_text("done")
        assert JudgeJudgment.objects.filter(judge_run__name="offline-judge").count() == 2 * items

        # over the upload limit: the form says so, and nothing is queued
        settings.UPLOAD_MAX_MB = 0.05
        huge = good * (1 + 60000 // len(good))
        page.set_input_files("#judge-file-form input[type=file]", files=[
            {"name": "huge.csv", "mimeType": "text/csv", "buffer": huge}])
        page.click("button:has-text('Import the judgments')")
        expect(page.locator("#judge-file-problems")).to_contain_text(
            "uploads are limited to 0.05 MB (UPLOAD_MAX_MB). Nothing was stored.")
        assert ImportJob.objects.count() == 2
    finally:
        worker.join()
