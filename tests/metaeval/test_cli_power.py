"""``python -m metaeval power`` (pairwise, elo, hj): the CSV contract and the refusals in words."""
from __future__ import annotations

import csv
import io
import json
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from metaeval.cli import main
from tests.metaeval.cli_run import run

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"
HEADER = "win_rate,alpha,power,decisive,achieved_power,judgments"


def test_pairwise_rows_per_win_rate() -> None:
    code, out, err = run("power", "pairwise", "--win-rate", "0.6", "0.55", "--win-rate", "0.4", "--tie-rate", "0.1")
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith(HEADER + ",")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["win_rate"], r["decisive"], r["judgments"]) for r in rows] == [
        ("0.6", "199", "222"), ("0.55", "786", "874"), ("0.4", "199", "222")]
    assert float(rows[0]["achieved_power"]) == pytest.approx(0.80371, abs=5e-6)
    assert (rows[0]["alpha"], rows[0]["power"], rows[0]["tie_rate"]) == ("0.05", "0.8", "0.1")


def test_elo_gap_and_json() -> None:
    code, out, _ = run("power", "elo", "--gap", "70.4", "--alpha", "0.01", "--power", "0.9", "--format", "json")
    assert code == 0
    row = json.loads(out)["rows"][0]
    assert row["win_rate"] == pytest.approx(1 / (1 + 10 ** (-70.4 / 400)), rel=1e-15)
    assert row["elo_gap"] == 70.4 and row["alpha"] == 0.01 and row["achieved_power"] >= 0.9
    code, out, _ = run("power", "elo", "--gap", "-70.4", "--alpha", "0.01", "--power", "0.9")
    assert code == 0 and list(csv.DictReader(io.StringIO(out)))[0]["decisive"] == str(row["decisive"])
    assert out.splitlines()[0] == HEADER + ",tie_rate,elo_gap"


@pytest.mark.parametrize(("argv", "message"), [
    (["pairwise", "--win-rate", "0.5"], "error: --win-rate 0.5: a win rate of 0.5 is no difference"),
    (["elo", "--gap", "0"], "error: --gap 0.0: a win rate of 0.5 is no difference"),
    (["pairwise", "--win-rate", "1.2"], "argument --win-rate: '1.2' is not a number strictly between 0 and 1"),
    (["pairwise", "--win-rate", "0.6", "--tie-rate", "1"], "argument --tie-rate: '1' is not a number >= 0 and below"),
    (["hj", "--dataset", "x.jsonl", "--pilot", "y.csv", "--raters", "0..2"], "argument --raters: '0..2' is not 1..K"),
])
def test_refusals(argv: list[str], message: str) -> None:
    err = io.StringIO()
    with redirect_stderr(err):
        try:
            code = main(["power", *argv])
        except SystemExit as exc:  # argparse's own refusals of a bad value
            code = int(exc.code or 0)
    assert code == 2 and message in err.getvalue() and "Traceback" not in err.getvalue()


def test_hj_on_the_demo_pilot(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run("power", "hj", "--dataset", str(DEMO / "consolidated.jsonl"), "--pilot",
                         str(DEMO / "ratings.csv"), "--raters", "1,2", "--replicates", "2", "--n-boot", "40",
                         "--measures", "jsd", "--seed", "4", "--no-cache", "--workers", "1")
    assert code == 0
    assert out.splitlines()[0].startswith("raters,auto_measure,hj_measure,method,expected_width,p_excludes_zero")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["raters"], r["hj_measure"], r["method"]) for r in rows][:3] == [
        ("1", "hj:rouge_l", "pearson"), ("1", "hj:rouge_l", "spearman"), ("1", "hj:rouge_l", "kendall")]
    assert len(rows) == 6 and "seed 4; pilot: 132 questionnaires, 72 rated by one rater" in err
    code, again, _ = run("power", "hj", "--dataset", str(DEMO / "consolidated.jsonl"), "--pilot",
                         str(DEMO / "ratings.csv"), "--raters", "1,2", "--replicates", "2", "--n-boot", "40",
                         "--measures", "jsd", "--seed", "4", "--no-cache", "--workers", "1")
    assert again == out


def test_hj_missing_file_is_one_line() -> None:
    code, out, err = run("power", "hj", "--dataset", str(DEMO / "consolidated.jsonl"), "--pilot", "nope.csv",
                         "--no-cache")
    assert code == 2 and out == "" and err.startswith("error:") and "nope.csv" in err and "Traceback" not in err
