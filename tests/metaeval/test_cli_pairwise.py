"""``python -m metaeval pairwise``: the two tables' columns, full precision, json conventions, errors (exit 2)."""
from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

from tests.metaeval.cli_run import run

JUDGMENTS = """case_id,criterion,model_a,model_b,winner,judge_kind
c1,quality,A,B,model_a,human
c1,quality,B,A,model_a,human
c2,quality,A,C,model_a,llm
c1,relevance,A,B,model_a,llm
c2,relevance,B,C,model_a,llm
c3,relevance,C,A,tie,llm
c4,relevance,C,B,invalid,llm
"""
RATING_COLUMNS = ("criterion,system,elo,elo_median,elo_ci_low,elo_ci_high,bt,bt_ci_low,bt_ci_high,"
                  "wins,ties,losses,games,rank,rank_best,rank_worst")


@pytest.fixture
def judgments(tmp_path):
    path = tmp_path / "judgments.csv"
    path.write_text(JUDGMENTS, encoding="utf-8")
    return str(path)


def test_ratings_table(judgments):
    code, out, err = run("pairwise", judgments, "--seed", "3", "--n-boot", "200")
    assert code == 0 and "seed 3" in err and "1 invalid" in err
    assert out.splitlines()[0] == RATING_COLUMNS
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["criterion"], r["system"]) for r in rows] == [
        ("quality", "A"), ("quality", "B"), ("quality", "C"), ("relevance", "A"), ("relevance", "B"),
        ("relevance", "C"), ("overall", "A"), ("overall", "B"), ("overall", "C")]
    relevance = {r["system"]: r for r in rows if r["criterion"] == "relevance"}
    # relevance games in file order: A beats B, B beats C, C draws A (worked by hand in the Elo tests)
    assert float(relevance["A"]["elo"]) == pytest.approx(1001.9769084, abs=1e-6)
    assert float(relevance["C"]["elo"]) == pytest.approx(998.0115788, abs=1e-6)
    assert (relevance["A"]["wins"], relevance["A"]["ties"], relevance["A"]["losses"], relevance["A"]["games"]) == (
        "1", "1", "0", "2")
    for row in rows:
        assert repr(float(row["elo"])) == row["elo"]  # full precision
        assert float(row["elo_ci_low"]) <= float(row["elo_median"]) <= float(row["elo_ci_high"])
        assert float(row["bt_ci_low"]) <= float(row["bt_ci_high"])
        assert 1 <= int(row["rank_best"]) <= int(row["rank_worst"]) <= 3 and 1 <= int(row["rank"]) <= 3
    for criterion in ("quality", "relevance", "overall"):
        elo = [float(r["elo"]) for r in rows if r["criterion"] == criterion]
        bt = [float(r["bt"]) for r in rows if r["criterion"] == criterion]
        assert sum(elo) == pytest.approx(1000 * len(elo), abs=1e-9)
        assert sum(bt) / len(bt) == pytest.approx(1000.0, abs=1e-9)
        board = [r for r in rows if r["criterion"] == criterion]
        for r in board:  # Chatbot Arena's rank range from the BT intervals
            above = sum(float(o["bt_ci_low"]) > float(r["bt_ci_high"]) for o in board)
            below = sum(float(o["bt_ci_high"]) < float(r["bt_ci_low"]) for o in board)
            assert (int(r["rank_best"]), int(r["rank_worst"])) == (1 + above, len(board) - below)
            assert int(r["rank"]) == 1 + sum(float(o["bt"]) > float(r["bt"]) for o in board)
    # seeded: the same seed prints the same table
    assert run("pairwise", judgments, "--seed", "3", "--n-boot", "200")[1] == out


def test_parameters_reach_elo(judgments):
    _, out, _ = run("pairwise", judgments, "--seed", "1", "--n-boot", "5", "--k", "32", "--init", "1500")
    overall_a = next(r for r in csv.DictReader(io.StringIO(out)) if r["criterion"] == "quality" and r["system"] == "A")
    # quality: A-B split humans (a tie at equal ratings: no change), then A beats C at 1500/1500: +16
    assert float(overall_a["elo"]) == 1516.0


def test_wtl_table(judgments):
    code, out, _ = run("pairwise", judgments, "--table", "wtl")
    assert code == 0
    assert out.splitlines()[0].startswith("criterion,model_a,model_b,win,tie,loss,cases")
    # pairs oriented and listed as first seen in the file: A-B, A-C, B-C (C-A's draw reads as A's tie)
    rows = [(r["criterion"], r["model_a"], r["model_b"], float(r["win"]), float(r["tie"]), float(r["loss"]),
             int(r["cases"])) for r in csv.DictReader(io.StringIO(out))]
    assert rows == [("quality", "A", "B", 0.0, 100.0, 0.0, 1), ("quality", "A", "C", 100.0, 0.0, 0.0, 1),
                    ("relevance", "A", "B", 100.0, 0.0, 0.0, 1), ("relevance", "A", "C", 0.0, 100.0, 0.0, 1),
                    ("relevance", "B", "C", 100.0, 0.0, 0.0, 1),
                    ("overall", "A", "B", 50.0, 50.0, 0.0, 2), ("overall", "A", "C", 50.0, 50.0, 0.0, 2),
                    ("overall", "B", "C", 100.0, 0.0, 0.0, 1)]


def test_json_has_rows_and_conventions(judgments):
    code, out, _ = run("pairwise", judgments, "--format", "json", "--seed", "4", "--n-boot", "20",
                       "--judge-kind", "llm")
    assert code == 0
    document = json.loads(out)
    assert document["parameters"] == {"k": 4.0, "scale": 400.0, "base": 10.0, "init": 1000.0, "n_boot": 20,
                                      "seed": 4}
    assert document["judgments"] == {"read": 7, "kept": 5, "invalid": 1, "judge_kind": "llm", "games": 4}
    assert document["conventions"]["regulariser"]["used"]["quality"]["point"] is True  # A beat C only
    assert document["conventions"]["regulariser"]["used"]["relevance"]["point"] is False  # a cycle with a draw
    assert [row["system"] for row in document["rows"] if row["criterion"] == "quality"] == ["A", "C"]
    assert all(math.isfinite(row["bt"]) for row in document["rows"])


def test_bad_file_stops_with_file_line_field_and_status_2(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("case_id,criterion,model_a,model_b,winner\nc1,q,A,A,model_a\nc2,q,A,B,A\n", encoding="utf-8")
    code, out, err = run("pairwise", str(path))
    assert code == 2 and out == ""
    assert 'bad.csv:2: field "model_b": the same system as model_a ("A")' in err
    assert 'bad.csv:3: field "winner": unknown value "A"' in err


def test_empty_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("", encoding="utf-8")
    code, _, err = run("pairwise", str(path))
    assert code == 2 and "empty.csv:1: no judgments" in err


def test_a_file_of_invalid_judgments_only_is_an_error(tmp_path):
    path = tmp_path / "invalid.csv"
    path.write_text("case_id,criterion,model_a,model_b,winner\nc1,q,A,B,invalid\nc2,q,B,A,invalid\n",
                    encoding="utf-8")
    for table in ("ratings", "wtl"):
        code, out, err = run("pairwise", str(path), "--table", table)
        assert code == 2 and out == ""
        assert "invalid.csv: no valid judgment (2 invalid), so there is no game to rate" in err


def test_a_judge_kind_filter_that_keeps_nothing(judgments):
    code, out, err = run("pairwise", judgments, "--judge-kind", "crowd")
    assert code == 2 and out == "" and "no judgments with judge_kind crowd" in err


@pytest.mark.parametrize("flag", [("--n-boot", "0"), ("--k", "0"), ("--base", "1"), ("--init", "nan")])
def test_bad_parameters_are_usage_errors(judgments, flag):
    with pytest.raises(SystemExit) as caught:
        run("pairwise", judgments, *flag)
    assert caught.value.code == 2


@pytest.fixture
def length_biased(tmp_path):
    """Judgments of a judge that likes long texts: A writes long ones but is the weakest (see test_style)."""
    from tests.metaeval.core.pairwise.test_style import length_biased_judgments

    games, data = length_biased_judgments(np.random.default_rng(7), n_cases=150)
    lines = ["case_id,criterion,model_a,model_b,winner,text_a,text_b"]
    for game in games:
        texts = [" ".join(["w"] * int(data.length(game.case_id, s))) for s in (game.model_a, game.model_b)]
        winner = "model_a" if game.score == 1.0 else "model_b"
        lines.append(f"{game.case_id},{game.criterion},{game.model_a},{game.model_b},{winner},{texts[0]},{texts[1]}")
    path = tmp_path / "biased.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_style_control_columns_and_the_order_warning(length_biased):
    code, out, err = run("pairwise", length_biased, "--style-control", "--seed", "2", "--n-boot", "50")
    assert code == 0
    assert out.splitlines()[0] == (RATING_COLUMNS + ",style_games,bt_nostyle,bt_style,bt_style_ci_low,"
                                   "bt_style_ci_high,rank_nostyle,rank_style")
    rows = {(r["criterion"], r["system"]): r for r in csv.DictReader(io.StringIO(out))}
    assert rows[("quality", "A")]["rank_nostyle"] == "1" and rows[("quality", "A")]["rank_style"] == "3"
    assert rows[("quality", "A")]["bt"] == rows[("quality", "A")]["bt_nostyle"]  # every game has its lengths
    assert "warning: style control changes the order in quality: A > " in err
    assert err.rstrip().endswith("seed 2, 50 bootstrap rounds, 0 invalid judgments left out")


def test_style_table_and_json(length_biased):
    code, out, _ = run("pairwise", length_biased, "--table", "style", "--seed", "2", "--n-boot", "20")
    assert code == 0
    assert out.splitlines()[0] == "criterion,feature,coefficient,ci_low,ci_high,scale,games"
    assert [(r["criterion"], r["feature"]) for r in csv.DictReader(io.StringIO(out))] == [
        ("quality", "length"), ("overall", "length")]
    code, out, _ = run("pairwise", length_biased, "--style-control", "--seed", "2", "--n-boot", "20",
                       "--format", "json", "--style-features", "length")
    document = json.loads(out)
    assert document["style"]["features"] == ["length"]
    assert document["style"]["order_changes"][0]["with"] == ["C", "B", "A"]
    assert "bt_style" in document["rows"][0]


def test_style_control_errors(length_biased, judgments):
    code, out, err = run("pairwise", judgments, "--style-control", "--seed", "1", "--n-boot", "5")
    assert code == 2 and out == "" and "no style features" in err
    code, _, err = run("pairwise", length_biased, "--style-control", "--style-features", "bold", "--seed", "1")
    assert code == 2 and "--style-features: no feature bold (the file has length)" in err
    code, _, err = run("pairwise", length_biased, "--style-control", "--table", "wtl")
    assert code == 2 and "--style-control goes with --table ratings or style" in err
