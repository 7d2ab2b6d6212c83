"""``python -m metaeval agreement``: the contract's columns, the hand-worked numbers, json, lengths from a cases
file, and errors (exit 2)."""
from __future__ import annotations

import csv
import io
import json

import pytest

from tests.metaeval.cli_run import run
from tests.metaeval.core.judges.hand_items import csv_text


@pytest.fixture
def judgments(tmp_path):
    path = tmp_path / "judgments.csv"
    path.write_text(csv_text(), encoding="utf-8")
    return str(path)


def test_rows_and_columns(judgments):
    code, out, err = run("agreement", judgments, "--judge", "gpt")
    assert code == 0
    assert out.splitlines()[0].startswith("criterion,judge,items,accuracy,cohen_kappa,")
    rows = {r["criterion"]: r for r in csv.DictReader(io.StringIO(out))}
    assert list(rows) == ["quality", "relevance", "overall"]
    quality = rows["quality"]
    assert (quality["judge"], quality["items"]) == ("gpt", "3")
    assert float(quality["cohen_kappa"]) == pytest.approx(0.5, abs=1e-15)
    assert float(quality["accuracy"]) == pytest.approx(2 / 3)
    assert quality["position_items"] == "3" and float(quality["position_consistency"]) == pytest.approx(1 / 3)
    assert (quality["length_items"], quality["judge_longer"], quality["human_longer"]) == ("2", "0.5", "0.5")
    assert rows["relevance"]["human_human"] == ""  # no item with two people: empty, not 0
    assert "4 items with both games; 9 human and 10 judge judgments, 1 invalid left out" in err


def test_json_has_rows_confusion_and_conventions(judgments):
    code, out, _ = run("agreement", judgments, "--judge", "gpt", "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["judgments"] == {"human": 9, "judge": 10, "invalid": 1}
    assert document["rows"][-1]["criterion"] == "overall"
    assert document["rows"][-1]["cohen_kappa"] == pytest.approx(3 / 11)
    assert document["confusion"][0] == {"criterion": "quality", "labels": ["a", "tie", "b"],
                                        "counts": [[1, 1, 0], [0, 0, 0], [0, 0, 1]]}
    assert "cohen_kappa" in document["conventions"]


def test_lengths_from_a_cases_file(tmp_path):
    path = tmp_path / "judgments.csv"
    path.write_text(csv_text(lengths=False), encoding="utf-8")
    _, out, _ = run("agreement", str(path), "--judge", "gpt")
    assert next(csv.DictReader(io.StringIO(out)))["length_items"] == "0"
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"case_id": "c1", "model_a": "A", "model_b": "B", "text_a": "x y z", "text_b": "x"}\n'
                     '{"case_id": "c2", "model_a": "B", "model_b": "C", "text_a": "x y z", "text_b": "x y"}\n',
                     encoding="utf-8")
    _, out, _ = run("agreement", str(path), "--judge", "gpt", "--cases", str(cases))
    quality = next(csv.DictReader(io.StringIO(out)))
    assert (quality["length_items"], quality["judge_longer"], quality["human_longer"]) == ("2", "0.5", "0.5")


def test_unknown_judge_missing_file_and_no_common_item(judgments, tmp_path):
    code, out, err = run("agreement", judgments, "--judge", "claude")
    assert code == 2 and out == ""
    assert "no valid judgment of judge 'claude' (judges other than 'human' ones: gpt, other)" in err
    code, _, err = run("agreement", judgments, "--judge", "gpt", "--human-kind", "expert")
    assert code == 2 and "no valid judgment of judge_kind 'expert'" in err
    code, _, err = run("agreement", str(tmp_path / "none.csv"), "--judge", "gpt")
    assert code == 2 and "none.csv" in err
    apart = tmp_path / "apart.csv"
    apart.write_text("case_id,criterion,model_a,model_b,winner,judge,judge_kind\nc1,q,A,B,model_a,P1,human\n"
                     "c2,q,A,B,model_a,gpt,llm\n", encoding="utf-8")
    code, _, err = run("agreement", str(apart), "--judge", "gpt")
    assert code == 2 and "no item (case, criterion, system pair) has both a game of the people" in err


def test_a_bad_style_column_names_its_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(csv_text().replace("c2,quality,B,C,model_b,P1,human,,model_a,3,2",
                                       "c2,quality,B,C,model_b,P1,human,,model_a,three,2"), encoding="utf-8")
    code, out, err = run("agreement", str(path), "--judge", "gpt")
    assert code == 2 and out == ""
    assert "bad.csv:9: field \"length_a\" must be a number >= 0, found 'three'" in err
