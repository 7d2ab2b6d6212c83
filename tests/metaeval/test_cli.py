"""``python -m metaeval``: the output contract, full precision, the report folder and clear errors."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from metaeval.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATASET = str(ROOT / "fixtures" / "demo" / "consolidated.jsonl")
RATINGS = str(ROOT / "fixtures" / "demo" / "ratings.csv")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_score_csv_contract_and_full_precision(tmp_path):
    code, out, _ = run("score", DATASET, "--measures", "rouge_l,jsd", "--ratings", RATINGS, "--aux", "rouge_l",
                       "--beta", "1.7", "--cache-dir", str(tmp_path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("system,measure,egises,degress,perseval,accuracy,")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {row["measure"] for row in rows} == {"rouge_l", "jsd", "hj:rouge_l"}
    assert len([row for row in rows if row["measure"] == "rouge_l"]) == 10
    for row in rows:
        # repr() round-trips: the printed text is the float itself
        assert repr(float(row["perseval"])) == row["perseval"]
        assert float(row["egises"]) == pytest.approx(1 - float(row["degress"]), abs=1e-15)
    hj = [row for row in rows if row["measure"] == "hj:rouge_l"]
    assert all(int(row["rated_pairs"]) > 0 for row in hj)


def test_second_run_is_served_from_the_cache(tmp_path):
    first = run("score", DATASET, "--measures", "jsd", "--format", "json", "--cache-dir", str(tmp_path))
    second = run("score", DATASET, "--measures", "jsd", "--format", "json", "--cache-dir", str(tmp_path))
    a, b = json.loads(first[1]), json.loads(second[1])
    assert a["distances"][0]["computed"] > 0 and b["distances"][0]["computed"] == 0
    assert b["distances"][0]["cached"] == a["distances"][0]["pairs"]
    assert a["scores"] == b["scores"]
    assert b["parameters"]["measures"] == ["jsd"] and "numpy" in b["versions"]


def test_correlate_reads_the_score_file(tmp_path):
    scores = tmp_path / "scores.csv"
    code, _, _ = run("score", DATASET, "--measures", "rouge_l", "--ratings", RATINGS, "--aux", "rouge_l,jsd",
                     "--out", str(scores), "--no-cache")
    assert code == 0
    code, out, _ = run("correlate", str(scores))
    assert code == 0
    grid = list(csv.DictReader(io.StringIO(out)))
    assert [(cell["auto_measure"], cell["hj_measure"]) for cell in grid] == [
        ("rouge_l", "hj:rouge_l"), ("rouge_l", "hj:jsd")
    ]
    assert all(int(cell["n"]) == 10 and -1 <= float(cell["kendall"]) <= 1 for cell in grid)


def test_report_writes_every_table(tmp_path):
    code, out, _ = run("report", DATASET, "--ratings", RATINGS, "--measures", "rouge_l,jsd", "--aux", "rouge_l",
                       "--out-dir", str(tmp_path / "r"), "--no-cache")
    assert code == 0
    assert "PerSEval beta=1.7" in out and "Human-judgment correlation" in out
    for name in ("scores.csv", "correlations.csv", "documents.csv", "readers.csv", "run.json"):
        assert (tmp_path / "r" / name).stat().st_size > 0
    document = json.loads((tmp_path / "r" / "run.json").read_text())
    assert document["parameters"]["beta"] == 1.7 and len(document["correlations"]) == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", DATASET, "--measures", "nope"], "unknown measure 'nope'"),
        (["score", DATASET, "--aux", "rouge_l"], "--aux needs ratings"),
        (["score", "/no/such/file.jsonl"], "No such file"),
        (["correlate", DATASET], "not a scores file"),
    ],
)
def test_errors_are_one_clear_line(argv, message):
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert message in err and err.startswith("error: ")


def test_bad_ratings_file_names_the_line(tmp_path):
    bad = tmp_path / "r.csv"
    bad.write_text("doc_id,system,uid1,uid2,rating\nD01,user,U01,U02,9\n")
    code, _, err = run("score", DATASET, "--ratings", str(bad), "--no-cache")
    assert code == 2 and "r.csv:2" in err and "rating" in err


def test_module_entry_point_runs():
    result = subprocess.run(
        [sys.executable, "-m", "metaeval", "score", DATASET, "--measures", "bleu4", "--systems", "TextRankHead",
         "--no-cache", "--compat", "authors"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1].startswith("TextRankHead,bleu4,")
