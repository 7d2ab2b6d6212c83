"""``python -m metaeval consistency``: the pair's games as the pool, the AuPEL checks end to end, errors."""
from __future__ import annotations

import csv
import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from metaeval.cli import main
from metaeval.core.pairwise.consistency import consistency_curve
from metaeval.core.pairwise.games import pair_outcomes, play
from metaeval.core.pairwise.judgments import load_judgments

HEADER = "case_id,criterion,model_a,model_b,winner,judge\n"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse refusals
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path, lines: list[str]) -> str:
    path = tmp_path / "judgments.csv"
    path.write_text(HEADER + "".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_a_pool_of_wins_gives_the_aupel_check_values(tmp_path):
    """Six cases that A wins (each judged twice, sides as shown): N = 5 is never conclusive (p = 0.0625), N = 6
    always is (p = 0.03125), and two draws of 6 always agree."""
    lines = []
    for case in range(6):
        lines.append(f"c{case},quality,A,B,model_a,h1")
        lines.append(f"c{case},quality,B,A,model_b,h2")  # the same verdict with the sides the other way
    lines.append("c0,quality,A,C,model_b,h1")  # another pair: not in the pool
    code, out, err = run("consistency", write(tmp_path, lines), "--models", "A,B", "--sizes", "5,6",
                         "--repetitions", "200", "--seed", "3")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0])[:4] == ["criterion", "n", "sensitivity", "consistency"]
    got = [(r["criterion"], r["n"], float(r["sensitivity"]), float(r["consistency"]), r["pool"]) for r in rows]
    assert got == [("quality", "5", 0.0, 0.0, "6"), ("quality", "6", 1.0, 1.0, "6"),
                   ("overall", "5", 0.0, 0.0, "6"), ("overall", "6", 1.0, 1.0, "6")]
    code, swapped, _ = run("consistency", write(tmp_path, lines), "--models", "B,A", "--sizes", "5,6",
                           "--repetitions", "200", "--seed", "3", "--criterion", "quality")
    assert [(r["sensitivity"], r["consistency"], r["wins_b"]) for r in csv.DictReader(io.StringIO(swapped))] == [
        ("0.0", "0.0", "6"), ("1.0", "1.0", "6")]


def test_games_not_judgments_fill_the_pool(tmp_path):
    """Two judges who split make one tie; a tie judgment beside a win makes a win (sec. 17)."""
    path = write(tmp_path, ["c1,q,A,B,model_a,h1", "c1,q,A,B,model_b,h2",
                            "c2,q,A,B,tie,h1", "c2,q,B,A,model_b,h2",
                            "c3,q,B,A,model_a,h1", "c4,q,A,B,invalid,h1"])
    games = play(load_judgments(path).judgments)
    assert pair_outcomes(games, "A", "B") == ["tie", "a", "b"]
    assert pair_outcomes(games, "B", "A") == ["tie", "b", "a"]


def test_the_command_equals_the_curve_on_the_pair_outcomes(tmp_path):
    lines = []
    for case in range(60):
        winner = "model_a" if case % 5 < 3 else "tie" if case % 10 == 9 else "model_b"
        lines.append(f"c{case},personalization,A,B,{winner},llm")
    path = write(tmp_path, lines)
    code, out, _ = run("consistency", path, "--models", "A,B", "--criterion", "personalization",
                       "--sizes", "10,40,80", "--repetitions", "500", "--seed", "11", "--format", "json")
    assert code == 0
    document = json.loads(out)
    outcomes = pair_outcomes(play(load_judgments(path).judgments), "A", "B")
    expected = consistency_curve(outcomes, [10, 40, 80], repetitions=500, seed=11)
    assert [(r["n"], r["sensitivity"], r["consistency"], r["with_replacement"]) for r in document["rows"]] == [
        (p.n, p.sensitivity, p.consistency, p.with_replacement) for p in expected]
    assert document["parameters"]["seed"] == 11 and document["rows"][0]["wins_a"] == 36
    three = json.loads(run("consistency", path, "--models", "A,B", "--criterion", "personalization", "--sizes",
                           "10", "--repetitions", "500", "--seed", "11", "--three-valued", "--format", "json")[1])
    assert three["rows"][0]["consistency"] == consistency_curve(outcomes, [10], repetitions=500, seed=11,
                                                                three_valued=True)[0].consistency


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--models", "A,B", "--sizes", "5", "--criterion", "fluency"], "no criterion 'fluency'"),
        (["--models", "A,Z", "--sizes", "5"], "A and Z never played each other"),
        (["--models", "A", "--sizes", "5"], "is not two different system names"),
        (["--models", "A,B", "--sizes", "0,5"], "is not a comma-separated list of sample sizes"),
    ],
)
def test_refusals_exit_2_with_a_message(tmp_path, argv, message):
    code, _, err = run("consistency", write(tmp_path, ["c1,q,A,B,model_a,h1"]), *argv)
    assert code == 2 and message in err


def test_a_bad_file_names_its_line(tmp_path):
    code, _, err = run("consistency", write(tmp_path, ["c1,q,A,B,model_a,h1", "c2,q,A,A,model_a,h1"]),
                       "--models", "A,B", "--sizes", "5")
    assert code == 2 and "judgments.csv:3:" in err
