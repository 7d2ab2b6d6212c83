"""``python -m metaeval`` with the neural measures: model flags, --measure-option, unavailable models, reports.

Tiny random-weight models from :mod:`tests.metaeval.core.measures.tiny_models`; every run uses ``--cache-dir``
under tmp_path or ``--no-cache``, never the user's cache, and nothing touches a model hub.
"""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from metaeval.cli import main
from tests.metaeval.core.test_pipeline_neural import SYSTEMS, write_corpus

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "fixtures" / "demo" / "consolidated.jsonl")
DEMO_RATINGS = str(ROOT / "fixtures" / "demo" / "ratings.csv")

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> str:
    return str(write_corpus(tmp_path_factory.mktemp("cli_corpus")))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_score_with_a_local_infolm_model(capsys, dataset, tiny_mlm, tmp_path):
    code, out, err = run(capsys, "score", dataset, "--measures", "infolm", "--infolm-model", str(tiny_mlm),
                         "--measure-option", "infolm.max_length=64", "--device", "cpu",
                         "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert out.splitlines()[0].startswith("system,measure,egises,degress,perseval,accuracy,")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(row["system"], row["measure"]) for row in rows] == [(system, "infolm") for system in SYSTEMS]
    for row in rows:
        assert math.isfinite(float(row["perseval"])) and math.isfinite(float(row["accuracy"]))
        assert repr(float(row["perseval"])) == row["perseval"]  # full precision, as for the lexical measures
    assert (tmp_path / "cache" / "distances.sqlite3").exists()


def test_json_records_models_options_and_vector_cache(capsys, dataset, tiny_mlm, tiny_encoder64, tmp_path):
    argv = ["score", dataset, "--measures", "infolm,bertscore", "--infolm-model", str(tiny_mlm),
            "--bertscore-model", str(tiny_encoder64), "--measure-option", "infolm.max_length=64",
            "--measure-option", "bertscore.layer=2", "--measure-option", "bertscore.idf=true", "--device", "cpu",
            "--format", "json", "--cache-dir", str(tmp_path)]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    document = json.loads(out)
    options = document["parameters"]["measure_options"]
    assert options["infolm"] == {"model": str(tiny_mlm), "device": "cpu", "max_length": 64}
    assert options["bertscore"] == {"model": str(tiny_encoder64), "device": "cpu", "layer": 2, "idf": True}
    assert str(tiny_mlm) in document["models"]["infolm"] and str(tiny_encoder64) in document["models"]["bertscore"]
    assert document["unavailable"] == {}
    assert {row["measure"] for row in document["scores"]} == {"infolm", "bertscore"}
    first = {stat["measure"]: stat for stat in document["distances"]}
    assert first["infolm"]["extra"]["texts_encoded"] > 0

    # changing only the AB-divergence's alpha reuses every cached text distribution
    code, out, err = run(capsys, *argv, "--measure-option", "infolm.alpha=0.5")
    assert code == 0, err
    again = {stat["measure"]: stat for stat in json.loads(out)["distances"]}
    assert again["infolm"]["computed"] == first["infolm"]["pairs"]
    assert again["infolm"]["extra"]["texts_encoded"] == 0
    assert again["infolm"]["extra"]["texts_from_cache"] == first["infolm"]["extra"]["texts_encoded"]
    assert again["bertscore"]["computed"] == 0 and again["bertscore"]["cached"] == first["bertscore"]["pairs"]


@pytest.mark.parametrize(
    "option, words",
    [
        ("infolm.bogus=1", ["bogus", "temperature"]),  # names the option and lists the accepted ones
        ("oops", ["oops", "NAME.KEY=VALUE"]),
        ("infolm.=1", ["NAME.KEY=VALUE"]),
        ("rouge_l.model=x", ["rouge_l", "only"]),
    ],
)
def test_bad_measure_option_is_a_one_line_usage_error(capsys, dataset, option, words):
    code, out, err = run(capsys, "score", dataset, "--measures", "infolm", "--measure-option", option, "--no-cache")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    for word in words:
        assert word in err


def test_missing_model_says_how_to_provide_it(capsys, dataset):
    code, out, err = run(capsys, "score", dataset, "--measures", "infolm", "--infolm-model", "/nonexistent",
                         "--no-cache")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "/nonexistent" in err
    assert "--infolm-model PATH" in err and "METAEVAL_INFOLM_MODEL" in err
    assert "Traceback" not in err


def test_skip_unavailable_lists_the_measure(capsys, dataset):
    code, out, err = run(capsys, "score", dataset, "--measures", "rouge_l,infolm", "--infolm-model", "/nonexistent",
                         "--skip-unavailable", "--format", "json", "--no-cache")
    assert code == 0, err
    document = json.loads(out)
    assert list(document["unavailable"]) == ["infolm"]
    assert "/nonexistent" in document["unavailable"]["infolm"] and "--infolm-model" in document["unavailable"]["infolm"]
    assert {row["measure"] for row in document["scores"]} == {"rouge_l"}
    assert document["models"] == {}


def test_report_lists_unavailable_measures(capsys, tmp_path):
    folder = tmp_path / "report"
    code, out, err = run(capsys, "report", DEMO, "--measures", "rouge_l,infolm", "--infolm-model", "/nonexistent",
                         "--ratings", DEMO_RATINGS, "--aux", "rouge_l", "--out-dir", str(folder),
                         "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert "Unavailable measures" in out
    unavailable_block = out.split("Unavailable measures", 1)[1]
    assert "infolm:" in unavailable_block and "/nonexistent" in unavailable_block
    document = json.loads((folder / "run.json").read_text())
    assert list(document["unavailable"]) == ["infolm"] and "--infolm-model" in document["unavailable"]["infolm"]
    rows = list(csv.DictReader(io.StringIO((folder / "scores.csv").read_text())))
    assert {row["measure"] for row in rows} == {"rouge_l", "hj:rouge_l"}
    assert len(document["correlations"]) == 1


def test_report_names_the_models_it_used(capsys, dataset, tiny_encoder64, tmp_path):
    folder = tmp_path / "report"
    code, out, err = run(capsys, "report", dataset, "--measures", "bertscore", "--bertscore-model", str(tiny_encoder64),
                         "--measure-option", "bertscore.layer=1", "--device", "cpu", "--out-dir", str(folder),
                         "--no-cache")
    assert code == 0, err
    models_block = out.split("\nModels\n", 1)[1]
    assert f"bertscore: {tiny_encoder64}" in models_block
    assert "Unavailable measures" not in out
    document = json.loads((folder / "run.json").read_text())
    assert str(tiny_encoder64) in document["models"]["bertscore"] and document["unavailable"] == {}


def test_compat_infolm_score_equals_the_authors_pipeline_on_torchmetrics(dataset, tiny_mlm, tmp_path):
    """`python -m metaeval score --measures infolm --compat authors` (a new process, torch's default threads)
    equals the authors' pipeline fed with their InfoLM distance: torchmetrics' ``infolm`` (AB-divergence,
    alpha = beta = 1, T = 0.25, idf off, max_length 20) on one pair at a time, ``round(score, 5)``."""
    import subprocess
    import sys

    from torchmetrics.functional.text import infolm as tm_infolm

    from metaeval.core.io.loaders import load_corpus
    from tests.reference.straightforward import reference_scores

    result = subprocess.run(
        [sys.executable, "-m", "metaeval", "score", dataset, "--measures", "infolm", "--compat", "authors",
         "--infolm-model", str(tiny_mlm), "--device", "cpu", "--cache-dir", str(tmp_path / "cache")],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )
    assert result.returncode == 0, result.stderr
    rows = {row["system"]: row for row in csv.DictReader(io.StringIO(result.stdout))}
    memo: dict[tuple[str, str], float] = {}

    def authors_infolm(a: str, b: str) -> float:  # calculate_infoLM of the authors' evaluation script
        if (a, b) not in memo:
            score = tm_infolm(preds=[a], target=[b], model_name_or_path=str(tiny_mlm), temperature=0.25,
                              information_measure="ab_divergence", idf=False, alpha=1.0, beta=1.0, device="cpu",
                              max_length=20, verbose=False)
            memo[(a, b)] = round(score.item(), 5)
        return memo[(a, b)]

    expected = reference_scores(load_corpus(dataset), authors_infolm)
    assert set(rows) == set(expected) == set(SYSTEMS)
    for system, values in expected.items():
        for key in ("egises", "degress", "perseval", "accuracy", "egises_accuracy"):
            assert float(rows[system][key]) == pytest.approx(values[key], abs=1e-12), (system, key)
    assert len(memo) > 40
