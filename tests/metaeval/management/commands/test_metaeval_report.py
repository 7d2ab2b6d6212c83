"""manage.py metaeval_report: builds a seeded report run in-process, or only queues it; bad input is a CommandError."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from metaeval.models import MetaevalRun
from tests.metaeval.test_views_runs import rate_all

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "cache"))


def test_builds_a_report_run_and_prints_its_page(study) -> None:
    rate_all(study, participants=3)
    out = io.StringIO()
    call_command("metaeval_report", "--dataset", study.dataset.name, "--study", study.slug, "--measures",
                 "rouge_l,jsd", "--seed", "8", "--n-boot", "100", "--n-permutations", "50",
                 "--stability-samples", "2", "--exclude-raters", "", "--bootstrap-missing", "drop-system",
                 "--permutation-alternative", "two-sided", stdout=out)
    run = MetaevalRun.objects.get()
    assert run.kind == "report" and run.status == "done" and run.seed == 8
    assert run.report["parameters"]["missing_system"] == "drop-system"
    assert run.report["parameters"]["permutation_alternative"] == "two-sided"
    assert f"/research/runs/{run.pk}/report/" in out.getvalue()
    assert run.report["parameters"]["n_boot"] == 100 and run.report["parameters"]["beta"] == 1.7
    assert run.parameters["aux"] == ["rouge_l"]  # a study without --aux: HJ with ROUGE-L


def test_queue_sends_it_to_a_worker(study, monkeypatch) -> None:
    sent: list[int] = []
    monkeypatch.setattr("metaeval.tasks.execute_run.delay", sent.append)
    out = io.StringIO()
    call_command("metaeval_report", "--dataset", study.dataset.name, "--measures", "rouge_l", "--queue", stdout=out)
    run = MetaevalRun.objects.get()
    assert run.status == "queued" and run.seed is not None and f"queued report run {run.pk}" in out.getvalue()
    assert sent == [run.pk]


def test_bad_input_is_a_command_error(study) -> None:
    with pytest.raises(CommandError, match="unknown dataset"):
        call_command("metaeval_report", "--dataset", "nope")
    with pytest.raises(CommandError, match="excluded raters need a study"):
        call_command("metaeval_report", "--dataset", study.dataset.name, "--exclude-raters", "P1")
    assert not MetaevalRun.objects.exists()


def test_unless_exists_reuses_a_finished_report(study) -> None:
    rate_all(study, participants=3)
    args = ["metaeval_report", "--dataset", study.dataset.name, "--study", study.slug, "--measures", "rouge_l",
            "--seed", "3", "--n-boot", "100", "--n-permutations", "20", "--stability-samples", "1", "--unless-exists"]
    call_command(*args, stdout=io.StringIO())
    out = io.StringIO()
    call_command(*args, stdout=out)
    run = MetaevalRun.objects.get()
    assert f"report run {run.pk} exists" in out.getvalue()
    call_command(*[a if a != "3" else "4" for a in args], stdout=io.StringIO())  # another seed: a new run
    assert MetaevalRun.objects.count() == 2
