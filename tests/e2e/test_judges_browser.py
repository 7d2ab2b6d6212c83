"""A researcher runs an LLM judge over a preference study in a real browser: from the study page to the LLM judges
page, a refused setting, a run against a local OpenAI-compatible stub (127.0.0.1), its judgments downloaded, and a
judgment file made elsewhere imported (refused first, naming the line)."""
from __future__ import annotations

import csv
import io

import pytest
from playwright.sync_api import expect

from survey.models import JudgeJudgment, JudgeRun, PreferenceItem
from tests.e2e.conftest import SHOTS
from tests.survey.test_judge_runs import RankStub, ranked_study, stub_endpoint

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_researcher_runs_an_llm_judge_and_imports_a_file_judge(live_server, browser):
    from django.contrib.auth.models import Group, User

    stub = RankStub()
    try:
        study = ranked_study(slug="judged")
        items = PreferenceItem.objects.filter(questionnaire__study=study).count()
        user = User.objects.create_user("judger", password="judger-pass-123")
        user.groups.add(Group.objects.get_or_create(name="researcher")[0])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{live_server.url}/accounts/login/?next=/research/studies/{study.slug}/")
        page.fill("input[name=username]", "judger")
        page.fill("input[name=password]", "judger-pass-123")
        page.click("button[type=submit]")
        page.click("#study-judges-link")
        expect(page.locator("h1")).to_have_text(f"LLM judges: {study.title}")
        # no endpoint configured yet: the page says who sets one up, and offers no form
        expect(page.locator("#no-judge-endpoints")).to_contain_text("administrator sets up in the admin")
        assert page.locator("#judge-run-form").count() == 0
        stub_endpoint(stub, description="the test stub")
        page.reload()
        # a researcher picks an endpoint and model; there is no field for an address, a key variable or a path
        for field in ("base_url", "api_key_env", "model_path", "model", "kind"):
            assert page.locator(f"#judge-run-form [name={field}]").count() == 0
        expect(page.locator("select[name=judge] option")).to_have_text(["stub: stub-judge (the test stub)"])
        page.select_option("select[name=judge]", label="stub: stub-judge (the test stub)")
        # an odd number of runs is refused, nothing is queued
        page.fill("input[name=runs]", "3")
        page.click("button:has-text('Start the run')")
        expect(page.locator("#judge-run-problems")).to_contain_text("runs must be an even number")
        assert not JudgeRun.objects.exists()
        page.fill("input[name=runs]", "2")
        page.fill("input[name=retries]", "0")
        page.uncheck("input[name=criteria][value=relevance]")
        page.click("button:has-text('Start the run')")
        total = items * 2 * 2
        expect(page.locator(".messages, [role=status]").first).to_contain_text(f"{total} judgments to ask")
        row = page.locator("#judge-run-table tr[data-run]").first
        expect(row.locator("[data-field=status]")).to_contain_text("Done")
        expect(row.locator("[data-field=done]")).to_have_text(str(total))
        run = JudgeRun.objects.get()
        assert (run.status, run.done, run.criteria) == ("done", total, ["quality", "personalization"])
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#judge-runs").screenshot(path=str(SHOTS / "judges.png"))
        with page.expect_download() as download:
            page.click("#llm-judgments-csv")
        rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
        assert len(rows) == total and {r["judge_kind"] for r in rows} == {"llm"}
        assert {r["judge"] for r in rows} == {"stub-judge"}
        # a file judge: the same rows under another judge name, with one unknown case added
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows({**r, "judge": "offline-judge"} for r in rows)
        good = out.getvalue()
        bad = good + "N99/R0,quality,SysnameA,SysnameB,model_a,offline-judge,llm,1,model_a,N99,R0\n"
        page.set_input_files("#judge-file-form input[type=file]", files=[
            {"name": "offline.csv", "mimeType": "text/csv", "buffer": bad.encode()}])
        page.click("button:has-text('Import the judgments')")
        expect(page.locator("#judge-file-problems")).to_contain_text(f"offline.csv:{total + 2}: field \"case_id\"")
        assert JudgeRun.objects.count() == 1
        page.set_input_files("#judge-file-form input[type=file]", files=[
            {"name": "offline.csv", "mimeType": "text/csv", "buffer": good.encode()}])
        page.click("button:has-text('Import the judgments')")
        expect(page.locator(".messages, [role=status]").first).to_contain_text(
            f"Imported offline.csv: offline-judge ({total} judgments)")
        imported = JudgeRun.objects.get(kind="file")
        assert JudgeJudgment.objects.filter(judge_run=imported).count() == total
        html = page.content()
        assert "sk-" not in html
    finally:
        stub.close()
