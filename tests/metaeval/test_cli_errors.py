"""``python -m metaeval`` errors (issue 29): an unreadable file in one line that names it, a short usage line on a
bad value, every problem of bad input files at once and in line order."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from metaeval.cli import main
from tests.metaeval.cli_run import run

ROOT = Path(__file__).resolve().parents[2]
DATASET = str(ROOT / "fixtures" / "demo" / "consolidated.jsonl")
RATINGS = str(ROOT / "fixtures" / "demo" / "ratings.csv")


def refused(*argv: str) -> tuple[int, list[str]]:
    """The exit status and stderr lines of a command line that argparse refuses."""
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as stop:
        main(list(argv))
    return int(stop.value.code or 0), err.getvalue().splitlines()


def write_dataset(path: Path, records: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return str(path)


def record(doc_id: str, summaries: dict[str, dict[str, str]]) -> dict[str, object]:
    return {"doc_id": doc_id, "doc_text": "the text", "doc_summ": "the headline", "m_summary_dict": summaries}


# --- a file that cannot be read -------------------------------------------------------------------------------------

MISSING = "{missing}"
COMMAND_LINES = [
    ["score", MISSING],
    ["score", DATASET, "--ratings", MISSING],
    ["score", DATASET, "--feedback-ratings", MISSING],
    ["correlate", MISSING],
    ["report", MISSING],
    ["zopf", MISSING, "--simulate", "1"],
    ["pairwise", MISSING],
    ["consistency", MISSING, "--models", "a,b", "--sizes", "5"],
    ["accuracy", MISSING, "--truth", "a,b"],
    ["meta-accuracy", MISSING, "--human", "hj:rouge_l"],
    ["edins", MISSING],
    ["prompts", MISSING, "--out", "{tmp}/prompts.jsonl"],
    ["probes", MISSING],
    ["surrogates", MISSING, "--out", "{tmp}/surrogates.jsonl"],
    ["power", "hj", "--dataset", DATASET, "--pilot", MISSING],
    ["simulate", "preference", "--truth", MISSING, "--policy", "uniform", "--stop", "none", "--repetitions", "1",
     "--seed", "1"],
    ["agreement", MISSING, "--judge", "j"],
    ["ppi", MISSING, "--judge", "j"],
    ["alt-test", MISSING, "--judge", "j"],
    ["judge", MISSING, "--judge", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
     "--out", "{tmp}/judgments.csv"],
]


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=lambda argv: " ".join(w for w in argv if "/" not in w))
def test_a_missing_file_is_one_line_naming_it(tmp_path, argv):
    missing = str(tmp_path / "no-such-file.csv")
    code, out, err = run(*(word.format(missing=missing, tmp=tmp_path) for word in argv))
    assert (code, out, err) == (2, "", f"error: {missing}: no such file or folder\n")


def test_a_folder_given_as_a_file_is_named(tmp_path):
    code, _, err = run("score", str(tmp_path))
    assert (code, err) == (2, f"error: {tmp_path}: is a folder, not a file\n")


# --- a bad value: a short usage line ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "usage", "error"), [
    (["score", DATASET, "--beta", "11"], "usage: python -m metaeval score DATASET [options] (see --help)",
     "python -m metaeval score: error: argument --beta: beta must be a finite number from -10 to 10; got '11'"),
    (["report", DATASET, "--full", "--n-boot", "0"], "usage: python -m metaeval report DATASET [options] (see --help)",
     "python -m metaeval report: error: argument --n-boot: n_boot must be an integer from 1 to 1000000; got '0'"),
    (["pairwise", "j.csv", "--k", "0"], "usage: python -m metaeval pairwise JUDGMENTS [options] (see --help)",
     "python -m metaeval pairwise: error: argument --k: '0' is not a number > 0"),
    (["consistency", "j.csv", "--models", "a", "--sizes", "5"],
     "usage: python -m metaeval consistency JUDGMENTS --models A,B --sizes N,N,... [options] (see --help)",
     "python -m metaeval consistency: error: argument --models: 'a' is not two different system names A,B"),
    (["probes", "--n-boot", "0"], "usage: python -m metaeval probes [SCORES] [options] (see --help)",
     "python -m metaeval probes: error: argument --n-boot: '0' is not an integer >= 1"),
    (["power", "elo"], "usage: python -m metaeval power elo --gap G [options] (see --help)",
     "python -m metaeval power elo: error: the following arguments are required: --gap"),
    (["nope"], "usage: python -m metaeval COMMAND [options] (see --help)", None),
])
def test_a_bad_value_prints_a_short_usage_line_and_the_error(argv, usage, error):
    code, lines = refused(*argv)
    assert code == 2 and len(lines) == 2 and lines[0] == usage
    if error is not None:
        assert lines[1] == error
    else:
        assert lines[1].startswith("python -m metaeval: error: argument command: invalid choice: 'nope'")


def test_help_still_prints_every_option(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["score", "--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and out.startswith("usage: python -m metaeval score [-h]")
    assert "--beta X" in out and "--feedback-scale-max R_MAX" in out and "see --help" not in out


# --- bad files: every problem, in line order -------------------------------------------------------------------------

def test_a_ratings_file_lists_its_problems_in_line_order(tmp_path):
    """Line 3's shape is checked while reading, the values of lines 2 and 6 and the copy on line 5 after it."""
    bad = tmp_path / "r.csv"
    bad.write_text("doc_id,system,uid1,uid2,rating,rater\nD01,user,U01,U02,9,P1\nD01,user,U01\n"
                   "D01,user,U01,U02,3,P1\nD01,user,U01,U02,3,P1\nD01,user,U01,U01,x,P2\n", encoding="utf-8")
    code, _, err = run("score", DATASET, "--ratings", str(bad), "--no-cache")
    assert code == 2
    assert err.splitlines() == [
        'error: r.csv:2: field "rating": 9 is outside the scale 1..6',
        "r.csv:3: expected 6 fields as in the header, found 3",
        'r.csv:5: repeats line 4 field for field (rater "P1", doc_id "D01", system "user"): remove the copy',
        'r.csv:6: field "uid2": the same reader as uid1 ("U01"); a pair needs two readers',
        'r.csv:6: field "rating": not a number: "x"',
    ]


def test_every_reader_lacking_a_summary_is_listed_at_once(tmp_path):
    full = {"U1": {"user": "a b", "S": "b c", "T": "c d"}, "U2": {"user": "d e", "S": "e f", "T": "f g"}}
    dataset = write_dataset(tmp_path / "data.jsonl", [
        record("d1", full),
        record("d2", {"U1": {"S": "b c", "T": "c d"}, "U2": full["U2"]}),
        record("d3", full),
        record("d4", {"U1": full["U1"], "U2": {"user": "d e", "T": 7}, "U3": {"user": "x y", "S": "y z"}}),
    ])
    code, out, err = run("score", dataset, "--no-cache")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        'error: data.jsonl:2: document "d2", reader "U1": no "user" summary',
        'data.jsonl:4: document "d4", reader "U2": no "S" and "T" summary',
        'data.jsonl:4: document "d4", reader "U3": no "T" summary',
        "(use --missing drop to leave such readers out)",
    ]
    assert run("score", dataset, "--no-cache", "--missing", "drop")[0] == 0
    one = write_dataset(tmp_path / "one.jsonl", [record("d1", {"U1": {"S": "b c"}, "U2": full["U2"]})])
    code, _, err = run("score", one, "--no-cache", "--systems", "S")
    assert (code, err) == (2, 'error: one.jsonl:1: document "d1", reader "U1": no "user" summary '
                              "(use --missing drop to leave such readers out)\n")


def test_the_problems_of_the_dataset_and_the_ratings_are_listed_together(tmp_path):
    dataset = write_dataset(tmp_path / "data.jsonl", [
        record("d1", {"U1": {"user": "a", "S": "b"}, "U2": {"user": "c", "S": "d"}}),
        {"doc_id": "d2", "doc_summ": "h", "m_summary_dict": {}},
        record("d1", {"U1": {"user": "a", "S": "b"}}),
    ])
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("doc_id,system,uid1,uid2,rating\nd1,S,U1,U2,0\n", encoding="utf-8")
    code, _, err = run("report", dataset, "--ratings", str(ratings), "--no-cache", "--out-dir", str(tmp_path / "r"))
    assert code == 2
    assert err.splitlines() == [
        'error: data.jsonl:2: field "doc_text" is missing (doc "d2")',
        'data.jsonl:3: field "doc_id": duplicate doc_id "d1" (first at line 1, again at line 3)',
        'ratings.csv:2: field "rating": 0 is outside the scale 1..6',
    ]


def test_ratings_of_documents_and_readers_not_in_the_dataset_are_all_named(tmp_path):
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("doc_id,system,uid1,uid2,rating\nD01,user,U01,U02,2\nX1,user,U01,U02,3\n"
                       "D01,user,U01,U99,4\nX2,user,U01,U02,5\n", encoding="utf-8")
    code, _, err = run("score", DATASET, "--ratings", str(ratings), "--no-cache")
    assert code == 2
    assert err.splitlines() == [
        'error: ratings.csv:3: document "X1" is not in the dataset',
        'ratings.csv:4: document "D01" has no reader "U99" in the dataset',
        'ratings.csv:5: document "X2" is not in the dataset',
    ]


def test_the_command_line_lists_the_same_file_problems_as_the_admin_import(tmp_path):
    """Both read a dataset with :func:`metaeval.core.io.loaders.load_corpus` (the admin adds database checks)."""
    from metaeval.core.io.fileio import ImportFileError
    from survey.importers.consolidated import parse_consolidated

    dataset = write_dataset(tmp_path / "data.jsonl", [
        {"doc_id": 1.5, "doc_text": "t", "doc_summ": "h", "m_summary_dict": {}},
        "not an object",
        {"doc_id": "d3", "doc_text": 3, "doc_summ": "h", "m_summary_dict": {"U1": []}},
    ])
    with pytest.raises(ImportFileError) as caught:
        parse_consolidated(dataset)
    code, _, err = run("score", dataset, "--no-cache")
    assert code == 2 and len(caught.value.problems) == 4
    assert err == "error: " + "\n".join(caught.value.problems) + "\n"
