"""The commands that read a ratings or judgment file leave out the raters it marks excluded by default, take
``--exclude-raters`` and ``--include-excluded``, and say on stderr whom they left out (docs/conventions.md sec. 2
and 17): the same numbers as the file without those rows."""
from __future__ import annotations

import csv
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from metaeval.cli import main
from tests.metaeval.cli_run import run

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"
DATASET = str(DEMO / "consolidated.jsonl")
SCORE = ("--measures", "jsd", "--aux", "jsd", "--no-cache")
#: the demo's straight-liner and random clicker (fixtures/demo/README.md)
CARELESS = {"P5": ("rejected", "straight-lined"), "P17": ("pending", "random clicks, fast")}


def _rows() -> tuple[list[str], list[dict[str, str]]]:
    with open(DEMO / "ratings.csv", newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def _write(path: Path, columns: list[str], rows: list[dict[str, str]]) -> str:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return str(path)


@pytest.fixture
def files(tmp_path) -> dict[str, str]:
    """The demo ratings with P5 rejected and P17 excluded (``marked``), the same without their rows (``without``),
    and the demo file unchanged (``all``, nobody marked)."""
    columns, rows = _rows()
    assert {"P5", "P17"} <= {row["rater"] for row in rows}
    marked = [{**row, "review": CARELESS[row["rater"]][0], "excluded": "1", "review_note": CARELESS[row["rater"]][1]}
              if row["rater"] in CARELESS else row for row in rows]
    return {"marked": _write(tmp_path / "marked.csv", columns, marked),
            "without": _write(tmp_path / "without.csv", columns, [r for r in rows if r["rater"] not in CARELESS]),
            "all": str(DEMO / "ratings.csv")}


def test_score_leaves_out_the_raters_marked_excluded_and_says_so(files):
    code, marked, err = run("score", DATASET, "--ratings", files["marked"], *SCORE)
    assert code == 0, err
    assert err.splitlines() == [
        'marked.csv: left out 2 of 24 raters (96 of 1152 rows): P5 (48 rows; rejected, excluded on the participants '
        'page; note: "straight-lined"), P17 (48 rows; excluded on the participants page; note: "random clicks, '
        'fast") (--include-excluded keeps those excluded on the participants page)']
    code, without, err = run("score", DATASET, "--ratings", files["without"], *SCORE)
    assert code == 0 and err == ""
    assert marked == without
    code, every, _ = run("score", DATASET, "--ratings", files["all"], *SCORE)
    assert code == 0 and every != marked  # leaving them out changes the HJ rows


def test_include_excluded_keeps_them_and_exclude_raters_names_others(files):
    code, kept, err = run("score", DATASET, "--ratings", files["marked"], *SCORE, "--include-excluded")
    assert code == 0 and "kept 2 raters excluded on the participants page (--include-excluded): P5 (48 rows;" in err
    assert kept == run("score", DATASET, "--ratings", files["all"], *SCORE)[1]
    code, named, err = run("score", DATASET, "--ratings", files["all"], *SCORE, "--exclude-raters", "P5,P17")
    assert code == 0 and "left out 2 of 24 raters (96 of 1152 rows): P5 (48 rows; --exclude-raters), P17" in err
    assert named == run("score", DATASET, "--ratings", files["without"], *SCORE)[1]


@pytest.mark.parametrize(("argv", "message"), [
    (["--ratings", "{all}", "--exclude-raters", "P5,P99", *SCORE],
     "error: ratings.csv:1: --exclude-raters: no rater P99 in this file (its raters: P1, P2, P3,"),
    (["--exclude-raters", "P5", "--measures", "jsd", "--no-cache"], "error: --exclude-raters needs --ratings"),
])
def test_a_rater_the_file_lacks_is_an_error(files, argv, message):
    code, out, err = run("score", DATASET, *[arg.format(**files) for arg in argv])
    assert code == 2 and out == "" and err.startswith(message)


def test_report_full_records_whom_it_left_out(files, tmp_path):
    settings = ("--full", "--seed", "3", "--n-boot", "20", "--n-permutations", "20", "--stability-samples", "2")
    folders = {name: tmp_path / name for name in ("marked", "without")}
    for name, folder in folders.items():
        code, _, err = run("report", DATASET, "--ratings", files[name], "--measures", "jsd", "--aux", "jsd",
                           "--no-cache", *settings, "--out-dir", str(folder))
        assert code == 0, err
    marked, without = (json.loads((folders[name] / "report.json").read_text()) for name in ("marked", "without"))
    assert marked["parameters"].pop("excluded_raters") == ["P5", "P17"]
    assert without["parameters"].pop("excluded_raters") == []
    assert marked["edins"]["human"].pop("ratings") == "marked.csv"  # the file's name
    assert without["edins"]["human"].pop("ratings") == "without.csv"
    assert marked == without  # the rater section included: it reads the same rows
    assert {row["rater"] for row in marked["tables"]["raters"]} == {f"P{n}" for n in range(1, 25)} - {"P5", "P17"}
    for name in ("scores.csv", "correlations.csv"):
        assert (folders["marked"] / name).read_bytes() == (folders["without"] / name).read_bytes()


def test_edins_and_power_read_the_same_raters(files):
    def edins(*argv: str) -> tuple[int, str, str]:
        code, out, err = run("edins", DATASET, *argv, "--format", "json")
        for name in ("marked", "without", "ratings"):  # the file's name, said in the document
            out = out.replace(f'"{name}.csv"', '"FILE"')
        return code, out, err

    marked = edins("--ratings", files["marked"])
    assert marked[0] == 0 and "left out 2 of 24 raters" in marked[2] and '"FILE"' in marked[1]
    assert marked[1] == edins("--ratings", files["without"])[1] != edins("--ratings", files["all"])[1]
    assert edins("--ratings", files["all"], "--exclude-raters", "P5,P17")[1] == marked[1]
    power = ("--raters", "1,2", "--replicates", "3", "--n-boot", "20", "--seed", "1", *SCORE)
    pilot = run("power", "hj", "--dataset", DATASET, "--pilot", files["marked"], *power)
    assert pilot[0] == 0 and "left out 2 of 24 raters" in pilot[2]
    assert pilot[1] == run("power", "hj", "--dataset", DATASET, "--pilot", files["without"], *power)[1]


JUDGMENTS = ("case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,shown_first,doc_id,reader_id,review,"
             "excluded,review_note\n")


def _judgment_rows() -> list[str]:
    """Six cases of three systems judged by P1 (approved: A > B > C), P5 and P6 (rejected: C beats everyone, so
    with them C wins every game it plays) and an LLM judge (ties)."""
    rows = []
    for case in range(6):
        for a, b in (("A", "B"), ("B", "C"), ("A", "C")):
            for judge in (1, 5, 6):
                winner = "model_b" if judge != 1 and b == "C" else "model_a"
                review = "approved,0," if judge == 1 else "rejected,1,bot"
                rows.append(f"c{case},quality,{a},{b},{winner},P{judge},human,,model_a,D{case},U1,{review}\n")
            rows.append(f"c{case},quality,{a},{b},tie,gpt,llm,1,model_b,D{case},U1,,,\n")
    return rows


def test_pairwise_consistency_and_accuracy_leave_out_the_marked_judges(tmp_path):
    rows = _judgment_rows()
    marked, without = tmp_path / "marked.csv", tmp_path / "without.csv"
    marked.write_text(JUDGMENTS + "".join(rows), encoding="utf-8")
    without.write_text(JUDGMENTS + "".join(row for row in rows if ",rejected," not in row), encoding="utf-8")
    board = ("--seed", "2", "--n-boot", "50")
    code, out, err = run("pairwise", str(marked), *board)
    assert code == 0 and ("marked.csv: left out 2 of 4 raters (36 of 72 rows): P5 (18 rows; rejected, excluded on "
                          'the participants page; note: "bot"), P6 (18 rows; rejected,') in err
    assert out == run("pairwise", str(without), *board)[1] != run("pairwise", str(marked), *board,
                                                                   "--include-excluded")[1]
    document = json.loads(run("pairwise", str(marked), *board, "--format", "json")[1])
    assert document["judgments"]["left_out"] == 36 and document["judgments"]["raters_left_out"] == ["P5", "P6"]
    assert run("pairwise", str(marked), *board, "--include-excluded", "--exclude-raters", "P5,P6,gpt")[1] == run(
        "pairwise", str(without), *board, "--judge-kind", "human")[1]
    consistency = ("--models", "A,B", "--sizes", "2,4", "--repetitions", "50", "--seed", "1")
    assert run("consistency", str(marked), *consistency)[1] == run("consistency", str(without), *consistency)[1]
    accuracy = ("--truth", "A,B,C", "--n-boot", "50", "--seed", "1")
    got = run("accuracy", str(marked), *accuracy)
    assert got[0] == 0 and "left out 2 of 4 raters" in got[2]
    assert got[1] == run("accuracy", str(without), *accuracy)[1] != run("accuracy", str(marked), *accuracy,
                                                                         "--include-excluded")[1]


def test_zopf_leaves_out_the_marked_judges(tmp_path):
    topics = tmp_path / "topics.jsonl"
    topics.write_text(json.dumps({"topic": "t1", "sentences": ["a b", "c d", "e f"]}) + "\n", encoding="utf-8")
    header = "topic,sentence_a,sentence_b,winner,judge,shown_first,criterion,review,excluded,review_note\n"
    rows = ["t1,0,1,a,P1,a,importance,pending,0,\n", "t1,1,2,a,P1,a,importance,pending,0,\n",
            "t1,0,2,b,P2,a,importance,rejected,1,\n", "t1,0,1,b,P2,a,importance,rejected,1,\n"]
    marked, without = tmp_path / "marked.csv", tmp_path / "without.csv"
    marked.write_text(header + "".join(rows), encoding="utf-8")
    without.write_text(header + "".join(rows[:2]), encoding="utf-8")
    code, out, err = run("zopf", str(topics), "--judgments", str(marked))
    assert code == 0 and "marked.csv: left out 1 of 2 raters (2 of 4 rows): P2 (2 rows; rejected," in err
    assert out == run("zopf", str(topics), "--judgments", str(without))[1]
    assert json.loads(run("zopf", str(topics), "--judgments", str(marked), "--include-excluded")[1])[
        "topics"][0]["judgments"] == 4


def test_help_names_the_flags():
    for argv in (["score"], ["report"], ["edins"], ["pairwise"], ["consistency"], ["accuracy"], ["agreement"],
                 ["ppi"], ["alt-test"], ["zopf"], ["power", "hj"]):
        out = io.StringIO()
        with redirect_stdout(out), pytest.raises(SystemExit):
            main([*argv, "--help"])
        assert "--exclude-raters" in out.getvalue() and "--include-excluded" in out.getvalue(), argv
