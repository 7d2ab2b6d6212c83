"""manage.py metaeval_run: the same numbers as `python -m metaeval score` on the files, errors named."""
from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from metaeval import cli
from metaeval.core.perseval.pipeline import HJ_PREFIX
from metaeval.models import MetaevalRun
from survey import services
from survey.exporting import write_ratings
from survey.models import Study, Summary
from survey.selectors import ratings_export_rows
from tests.conftest import build_dataset, full_answers

pytestmark = pytest.mark.django_db

FIXTURES = Path(settings.BASE_DIR) / "fixtures" / "demo"
SCORING = ["--measures", "rouge_l,jsd", "--aux", "rouge_l", "--beta", "1.7", "--no-cache"]


def run_command(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("metaeval_run", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def run_cli(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["score", *args]) == 0
    return out.getvalue()


def automatic(table: str) -> list[str]:
    """The CSV lines of the distance path (not hj:<aux>)."""
    return [line for line in table.splitlines()[1:] if not line.split(",")[1].startswith(HJ_PREFIX)]


@pytest.fixture
def demo(db):
    call_command("load_demo", stdout=io.StringIO())
    return Study.objects.get(slug="demo")


def test_database_run_prints_what_the_cli_prints_on_the_files(demo, tmp_path):
    out, err = run_command("--dataset", "demo", "--study", "demo", *SCORING)
    run = MetaevalRun.objects.get()
    assert f"stored metaeval run {run.pk}" in err and run.status == "done"

    # the study's ratings as the export writes them: the CLI on those files is the reference
    exported = tmp_path / "ratings.csv"
    with open(exported, "w", encoding="utf-8", newline="") as handle:
        write_ratings(ratings_export_rows(study=demo), handle, "csv")
    expected = run_cli(str(FIXTURES / "consolidated.jsonl"), "--ratings", str(exported), *SCORING)
    assert out == expected
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["measure"] for r in rows} == {"rouge_l", "jsd", "hj:rouge_l"}
    assert len(rows) == 3 * 10

    # the simulated ratings are reproducible, so the committed fixture files give the very same table
    on_fixtures = run_cli(str(FIXTURES / "consolidated.jsonl"), "--ratings", str(FIXTURES / "ratings.csv"), *SCORING)
    assert on_fixtures == out and len(automatic(out)) == 2 * 10

    # the stored table is the CLI's JSON table (NaN as null)
    document = json.loads(run_cli(str(FIXTURES / "consolidated.jsonl"), "--ratings", str(exported), *SCORING,
                                  "--format", "json"))
    assert run.scores == document["scores"] and run.hj_counts == document["hj_counts"]
    assert run.parameters == document["parameters"]


def test_json_format_and_out_file(dataset, tmp_path):
    target = tmp_path / "deep" / "run.json"
    out, err = run_command("--dataset", "tiny", "--measures", "rouge_l", "--systems", "SysnameB",
                           "--no-cache", "--format", "json", "--out", str(target))
    assert out == "" and "stored metaeval run" in err
    document = json.loads(target.read_text())
    assert list(document) == [
        "parameters", "versions", "timings", "distances", "scores", "hj_counts", "models", "unavailable",
    ]
    assert [(r["system"], r["measure"]) for r in document["scores"]] == [("SysnameB", "rouge_l")]
    run = MetaevalRun.objects.get()
    assert run.study is None and run.scores == document["scores"] and run.parameters["systems"] == ["SysnameB"]


def test_study_without_aux_scores_hj_with_rouge_l_as_the_cli(study, tmp_path):
    participant = services.participant_register(study=study)
    assignment = services.assignment_claim(participant=participant)
    services.ratings_submit(assignment_public_id=assignment.public_id, participant=participant,
                            values=full_answers(assignment, 3))
    system = assignment.questionnaire.items.exclude(system__name="user").first().system.name
    out, _ = run_command("--dataset", "tiny", "--study", "study", "--systems", system,
                         "--cache-dir", str(tmp_path / "cache"))
    assert [line.split(",")[:2] for line in out.splitlines()[1:]] == [[system, "rouge_l"], [system, "hj:rouge_l"]]
    assert MetaevalRun.objects.get().parameters["aux"] == ["rouge_l"]
    assert (tmp_path / "cache" / "distances.sqlite3").exists()


def test_unknown_dataset_lists_the_known_ones(dataset):
    with pytest.raises(CommandError, match=r"unknown dataset 'nope' \(known: tiny\)"):
        run_command("--dataset", "nope")
    assert not MetaevalRun.objects.exists()


def test_unknown_study_lists_the_studies_of_the_dataset(study):
    with pytest.raises(CommandError, match=r"unknown study 'nope' \(studies of dataset 'tiny': study\)"):
        run_command("--dataset", "tiny", "--study", "nope")


def test_study_of_another_dataset(study):
    build_dataset(name="second")
    with pytest.raises(CommandError, match=r"study of another dataset: 'study' \(studies of dataset 'second': none\)"):
        run_command("--dataset", "second", "--study", "study")


def test_aux_needs_a_study(dataset):
    with pytest.raises(CommandError, match="--aux needs --study"):
        run_command("--dataset", "tiny", "--aux", "rouge_l", "--no-cache")
    assert not MetaevalRun.objects.exists()


def test_unknown_measure_is_a_usage_error(dataset):
    with pytest.raises(CommandError, match="unknown measure 'nope'"):
        run_command("--dataset", "tiny", "--measures", "rouge_l,nope", "--no-cache")
    assert not MetaevalRun.objects.exists()


def test_data_error_is_stored_as_a_failed_run(dataset):
    Summary.objects.filter(system__name="SysnameB").order_by("pk").first().delete()
    with pytest.raises(CommandError, match=r'reader "R0": no "SysnameB" summary.*stored as failed metaeval run'):
        run_command("--dataset", "tiny", "--no-cache")
    run = MetaevalRun.objects.get()
    assert run.status == "failed" and "SysnameB" in run.error
