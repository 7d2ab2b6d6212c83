"""manage.py metaeval_run with the neural measures: models and unavailable measures stored, the CLI's bytes.

Tiny random-weight models from :mod:`tests.metaeval.core.measures.tiny_models`; the dataset is the small corpus of
:mod:`tests.metaeval.core.test_pipeline_neural`, imported with ``manage.py import_consolidated``.
"""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from metaeval.models import MetaevalRun
from tests.metaeval.core.test_pipeline_neural import SYSTEMS, write_corpus
from tests.metaeval.management.commands.test_metaeval_run import run_cli, run_command

DATASET = "neural"

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("command_corpus"))


@pytest.fixture
def stored(db, corpus_file) -> str:
    call_command("import_consolidated", str(corpus_file), "--dataset", DATASET, stdout=io.StringIO())
    return DATASET




def test_bertscore_run_stores_the_model(stored, tiny_encoder64):
    out, err = run_command("--dataset", stored, "--measures", "bertscore", "--bertscore-model", str(tiny_encoder64),
                           "--measure-option", "bertscore.layer=1", "--device", "cpu", "--no-cache")
    run = MetaevalRun.objects.get()
    assert run.status == "done" and f"stored metaeval run {run.pk}" in err
    assert list(run.measure_models) == ["bertscore"]
    assert str(tiny_encoder64) in run.measure_models["bertscore"] and "local folder" in run.measure_models["bertscore"]
    assert run.unavailable == {}
    assert [(row["system"], row["measure"]) for row in run.scores] == [(system, "bertscore") for system in SYSTEMS]
    assert all(math.isfinite(row["perseval"]) for row in run.scores)
    assert run.parameters["measure_options"] == {
        "bertscore": {"model": str(tiny_encoder64), "device": "cpu", "layer": 1}
    }
    printed = list(csv.DictReader(io.StringIO(out)))
    assert [float(row["perseval"]) for row in printed] == [row["perseval"] for row in run.scores]


def test_unavailable_model_is_stored_when_skipping(stored):
    run_command(
        "--dataset",
        stored,
        "--measures",
        "rouge_l,infolm",
        "--infolm-model",
        "/nonexistent",
        "--skip-unavailable",
        "--no-cache",
    )
    run = MetaevalRun.objects.get()
    assert run.status == "done"
    assert list(run.unavailable) == ["infolm"]
    assert "/nonexistent" in run.unavailable["infolm"] and "--infolm-model" in run.unavailable["infolm"]
    assert {row["measure"] for row in run.scores} == {"rouge_l"}
    assert run.measure_models == {}


def test_unavailable_model_fails_the_run_without_skipping(stored):
    with pytest.raises(CommandError, match=r"--infolm-model PATH.*stored as failed metaeval run"):
        run_command("--dataset", stored, "--measures", "infolm", "--infolm-model", "/nonexistent", "--no-cache")
    run = MetaevalRun.objects.get()
    assert run.status == "failed" and "/nonexistent" in run.error


def test_bad_measure_option_is_a_command_error(stored):
    with pytest.raises(CommandError, match="infolm has no option 'bogus'"):
        run_command("--dataset", stored, "--measures", "infolm", "--measure-option", "infolm.bogus=1", "--no-cache")
    assert not MetaevalRun.objects.exists()


def test_database_run_prints_what_the_cli_prints_on_the_file(stored, corpus_file, tiny_mlm, tiny_encoder64, tmp_path):
    scoring = [
        "--measures",
        "infolm,bertscore",
        "--infolm-model",
        str(tiny_mlm),
        "--bertscore-model",
        str(tiny_encoder64),
        "--measure-option",
        "infolm.max_length=64",
        "--measure-option",
        "infolm.temperature=0.5",
        "--measure-option",
        "bertscore.layer=2",
        "--measure-option",
        "bertscore.idf=true",
        "--device",
        "cpu",
        "--beta",
        "1.7",
    ]
    out, _ = run_command("--dataset", stored, *scoring, "--cache-dir", str(tmp_path / "command-cache"))
    expected = run_cli(str(corpus_file), *scoring, "--no-cache")
    assert out == expected
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(row["system"], row["measure"]) for row in rows] == [
        (system, measure) for measure in ("infolm", "bertscore") for system in SYSTEMS
    ]

    # and the stored run is the CLI's JSON document
    run = MetaevalRun.objects.get()
    document = json.loads(
        run_cli(str(corpus_file), *scoring, "--format", "json", "--cache-dir", str(tmp_path / "cli-cache"))
    )
    assert run.scores == document["scores"] and run.parameters == document["parameters"]
    assert run.measure_models == document["models"] and run.unavailable == document["unavailable"] == {}
