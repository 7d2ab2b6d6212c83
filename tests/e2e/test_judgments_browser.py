"""A researcher uploads a pairwise judgment file through the page (a bad one first), then starts a full report
that adds it, clicking as a person does."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from metaeval.models import JudgmentSet, MetaevalRun
from survey.research_views import RESEARCHER_GROUP
from tests.conftest import build_dataset, build_study, complete_questionnaires, full_answers
from tests.metaeval.test_judgment_sets import judgment_csv

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_upload_a_judgment_file_then_report_with_it(live_server, browser, monkeypatch, tmp_path, settings):
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "cache"))
    settings.METAEVAL_RUN_LAUNCHER = "inline"
    user = User.objects.create_user("uploader", password="uploader-pass-123")
    user.groups.add(Group.objects.get_or_create(name=RESEARCHER_GROUP)[0])
    study = build_study(build_dataset(name="pwdata"), slug="pwstudy")
    complete_questionnaires(
        study, lambda a, i: {k: str(1 + (n + i) % 6) for n, k in enumerate(full_answers(a))}, participants=2
    )
    bad = tmp_path / "bad.csv"
    bad.write_text("case_id,criterion,model_a,model_b,winner\nc1,q,SysnameA,SysnameA,model_a\nc2,q,A,B,nobody\n")
    good = tmp_path / "prefs.csv"
    good.write_bytes(judgment_csv())

    page = browser.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/research/runs/")
    page.fill("input[name=username]", "uploader")
    page.fill("input[name=password]", "uploader-pass-123")
    page.click("button[type=submit]")
    page.click("nav >> text=Pairwise judgments")
    assert "No judgment sets yet." in page.inner_text("#judgment-set-table")
    page.fill("input[name=name]", "pilot")
    page.set_input_files("input[name=file]", str(bad))
    page.click("button:has-text('Store the judgments')")
    problems = page.inner_text("#upload-problems")
    assert "Nothing was stored." in problems
    assert 'bad.csv:2: field "model_b"' in problems and 'bad.csv:3: field "winner"' in problems
    assert not JudgmentSet.objects.exists()
    page.fill("input[name=name]", "pilot")
    page.fill("textarea[name=description]", "two raters, pilot week")
    page.set_input_files("input[name=file]", str(good))
    page.click("button:has-text('Store the judgments')")
    page.wait_for_selector("text=Judgment set pilot stored: 73 judgments (1 invalid), 72 games.")
    row = page.inner_text("#judgment-set-table tr[data-name=pilot]")
    assert "two raters, pilot week" in row and "prefs.csv" in row

    page.click("nav >> text=Runs")
    page.select_option("select[name=dataset]", "pwdata")
    page.select_option("select[name=study]", "pwstudy")
    for box in page.locator("input[name=measures]").all():
        box.uncheck()
    page.check("input[name=measures][value=rouge_l]")
    page.select_option("select[name=judgment_set]", "pilot")
    page.fill("input[name=n_boot]", "30")
    page.fill("input[name=n_permutations]", "20")
    page.fill("input[name=stability_samples]", "2")
    page.click("button:has-text('Start run')")
    page.wait_for_selector("#open-report", timeout=60000)
    run = MetaevalRun.objects.get()
    assert run.status == "done" and run.judgment_set is not None and run.judgment_set.name == "pilot"
    assert run.report["pairwise"]["judgments"]["games"] == 72
    page.click("#open-report")
    page.wait_for_selector("#table-pairwise_ratings")  # the pairwise tables are listed with the others
