"""``python -m metaeval simulate preference``: tables, seeding and refusals."""
from __future__ import annotations

import csv
import io
import json
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from metaeval.cli import main
from tests.metaeval.cli_run import run

TRUTH = str(Path(__file__).resolve().parents[2] / "fixtures" / "planning" / "aupel_gaps.csv")
BASE = ("simulate", "preference", "--truth", TRUTH, "--repetitions", "20", "--seed", "7", "--tie-rate", "0.04",
        "--batch", "100")


def test_summary_row() -> None:
    code, out, _ = run(*BASE, "--policy", "adaptive", "--focus", "adjacent", "--stop", "separated")
    assert code == 0
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert (row["policy"], row["focus"], row["stop"], row["repetitions"], row["seed"]) == (
        "adaptive", "adjacent", "separated", "20", "7")
    assert float(row["stopped"]) == 1.0 and float(row["false_separation_rate"]) <= 0.05
    assert 0 < float(row["judgments_mean"]) < 100_000
    assert run(*BASE, "--policy", "adaptive", "--focus", "adjacent", "--stop", "separated")[1] == out


def test_systems_and_curve_tables_and_json() -> None:
    code, out, _ = run(*BASE, "--policy", "uniform", "--stop", "width:0.3", "--table", "systems")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["system"] for r in rows] == [f"S{i:02d}" for i in range(1, 11)]
    assert list(rows[0]) == ["system", "elo", "true_rank", "rank_best_mean", "rank_worst_mean",
                             "range_covers_true_rank"]
    code, out, _ = run(*BASE, "--policy", "uniform", "--stop", "none", "--max-judgments", "300", "--table", "curve")
    assert [r["judgments"] for r in csv.DictReader(io.StringIO(out))] == ["100.0", "200.0", "300.0"]
    code, out, _ = run(*BASE, "--policy", "uniform", "--stop", "none", "--max-judgments", "300", "--format", "json")
    document = json.loads(out)
    assert document["summary"]["judgments_mean"] == 300 and len(document["systems"]) == 10


@pytest.mark.parametrize(("argv", "message"), [
    (["--policy", "uniform", "--stop", "width:2"], "is not a stopping rule"),
    (["--policy", "greedy", "--stop", "none"], "invalid choice: 'greedy'"),
    (["--policy", "uniform", "--stop", "none", "--tie-rate", "1"], "is not a number >= 0 and below 1"),
    (["--policy", "uniform", "--stop", "none", "--alpha", "1.5"], "error: --alpha must be below 1"),
])
def test_refusals(argv: list[str], message: str) -> None:
    err = io.StringIO()
    with redirect_stderr(err):
        try:
            code = main([*BASE, *argv])
        except SystemExit as exc:
            code = int(exc.code or 0)
    assert code == 2 and message in err.getvalue()


def test_truth_problems_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "truth.csv"
    bad.write_text("system,elo\nA,1\nB,high\n", encoding="utf-8")
    code, out, err = run("simulate", "preference", "--truth", str(bad), "--policy", "uniform", "--stop", "none",
                         "--repetitions", "1", "--seed", "1")
    assert (code, out) == (2, "") and err == "error: truth.csv:3: elo 'high' is not a finite number\n"
    code, _, err = run("simulate", "preference", "--truth", str(tmp_path / "none.csv"), "--policy", "uniform",
                       "--stop", "none", "--repetitions", "1", "--seed", "1")
    assert code == 2 and err.startswith("error:") and "none.csv" in err
