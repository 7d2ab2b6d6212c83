"""``python -m metaeval zopf`` on files made in tmp_path: outputs, hand-checked values and ``file:line`` errors."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from metaeval.core.pairwise.zopf import bradley_terry, comparison_matrix, punkt_available, similarity, summary_utility
from tests.metaeval.cli_run import run

SENTENCES = [
    "The storm destroyed hundreds of homes on the coast.",
    "Officials said the storm killed twelve people.",
    "A local bakery reopened on Tuesday.",
    "The weather was mild the week before.",
]


def write_jsonl(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    topics = write_jsonl(tmp_path / "topics.jsonl", [
        {"topic": "storm", "sentences": SENTENCES,
         "references": [["The storm killed twelve people and destroyed homes."]]},
        {"topic": "empty", "sentences": ["Only one sentence here.", "And a second one."],
         "references": [["Only one sentence here."]]},
    ])
    judgments = tmp_path / "judgments.csv"
    judgments.write_text(
        "topic,sentence_a,sentence_b,winner,annotator\n"
        "storm,0,2,a,x\nstorm,3,1,b,x\nstorm,1,2,a,y\nstorm,0,3,a,y\n", encoding="utf-8")
    summaries = write_jsonl(tmp_path / "summaries.jsonl", [
        {"topic": "storm", "summary_id": "good", "sentences": [SENTENCES[1], SENTENCES[0]], "human": 5},
        {"topic": "storm", "summary_id": "bad", "sentences": [SENTENCES[2]], "human": 1},
        {"topic": "storm", "summary_id": "twice", "sentences": [SENTENCES[2], SENTENCES[2]], "human": 2},
        {"topic": "storm", "summary_id": "unrated", "sentences": [SENTENCES[3]]},
    ])
    return {"topics": topics, "judgments": str(judgments), "summaries": summaries, "dir": str(tmp_path)}


def test_json_document_matches_the_core_functions(files: dict[str, str]) -> None:
    code, out, err = run("zopf", files["topics"], "--judgments", files["judgments"], "--summaries", files["summaries"])
    assert code == 0, err
    document = json.loads(out)
    storm = document["topics"][0]
    assert (storm["topic"], storm["splitting"], storm["judgments"], storm["simulated"]) == ("storm", "pre-split", 4, 0)
    sim = similarity(SENTENCES, SENTENCES, SENTENCES)
    fit = bradley_terry(comparison_matrix([(0, 2), (1, 3), (1, 2), (0, 3)], 4, sim))
    assert [row["strength"] for row in storm["strengths"]] == pytest.approx(fit.strengths.tolist())
    utilities = {row["summary_id"]: row["utility"] for row in storm["summaries"]}
    assert utilities["good"] == pytest.approx(summary_utility([SENTENCES[1], SENTENCES[0]], SENTENCES, fit.strengths))
    assert utilities["twice"] == pytest.approx(utilities["bad"] / 2)
    # human good 5 > twice 2 > bad 1; the metric orders good > bad > twice: 2 of 3 pairs agree
    assert utilities["good"] > utilities["bad"] > utilities["twice"]
    assert (storm["pairs"], storm["agreement"], storm["summaries_rated"]) == (3, pytest.approx(2 / 3), 3)
    empty = document["topics"][1]
    assert empty["agreement"] is None and empty["fit"]["regularised"] == [0, 1]
    assert document["macro_agreement"] == pytest.approx(2 / 3)
    assert document["conventions"]["matrix"] == "smoothed"


def test_csv_tables(files: dict[str, str], tmp_path: Path) -> None:
    target = tmp_path / "agreement.csv"
    base = ["zopf", files["topics"], "--judgments", files["judgments"], "--summaries", files["summaries"]]
    assert run(*base, "--format", "csv", "--out", str(target))[0] == 0
    rows = list(csv.DictReader(target.open(encoding="utf-8")))
    assert [row["topic"] for row in rows] == ["storm", "empty", "*"]
    assert float(rows[-1]["agreement"]) == pytest.approx(2 / 3) and rows[1]["agreement"] == ""
    code, out, _ = run(*base, "--format", "csv", "--table", "strengths", "--raw")
    strengths = list(csv.DictReader(io.StringIO(out)))
    assert len(strengths) == 6 and strengths[0]["sentence"] == SENTENCES[0]
    raw = bradley_terry(comparison_matrix([(0, 2), (1, 3), (1, 2), (0, 3)], 4)).strengths
    assert [float(row["strength"]) for row in strengths[:4]] == pytest.approx(raw.tolist())
    code, out, _ = run(*base, "--format", "csv", "--table", "utilities")
    assert [row["summary_id"] for row in csv.DictReader(io.StringIO(out))] == ["good", "bad", "twice", "unrated"]


def test_simulated_labels_are_seeded(files: dict[str, str]) -> None:
    base = ["zopf", files["topics"], "--simulate", "6", "--summaries", files["summaries"]]
    first, second = run(*base, "--seed", "3"), run(*base, "--seed", "3")
    assert first[0] == 0 and first[1] == second[1]
    storm = json.loads(first[1])["topics"][0]
    assert storm["judgments"] == 0 and 0 < storm["simulated"] <= 6
    assert json.loads(first[1])["conventions"]["simulated"] == {"per_topic": 6, "ties": "skip", "seed": 3}


def test_errors_name_file_line_and_field(files: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("topic,sentence_a,sentence_b,winner\nstorm,0,9,a\nnope,0,1,a\nstorm,1,1,b\nstorm,0,1,tie\n",
                   encoding="utf-8")
    code, _, err = run("zopf", files["topics"], "--judgments", str(bad))
    assert code == 2
    assert 'bad.csv:2: sentence_b: "9" is not a sentence index 0..3 of topic "storm"' in err
    assert 'bad.csv:3: topic: unknown topic "nope"' in err
    assert "bad.csv:4: sentence_b: the same sentence as sentence_a" in err
    assert 'bad.csv:5: winner: "tie" is not a or b' in err
    summaries = write_jsonl(tmp_path / "s.jsonl", [
        {"topic": "storm", "summary_id": "x", "sentences": ["ok"], "human": "high"},
        {"topic": "storm", "summary_id": "x", "sentences": []},
    ])
    code, _, err = run("zopf", files["topics"], "--judgments", files["judgments"], "--summaries", summaries)
    assert code == 2
    assert 's.jsonl:1: field "human" must be a number or null (found string)' in err
    assert 's.jsonl:2: field "sentences" must be a non-empty array of strings' in err
    twice = [{"topic": "a", "sentences": ["x."]}, {"topic": "a", "sentences": ["y."]}]
    topics = write_jsonl(tmp_path / "t.jsonl", twice)
    code, _, err = run("zopf", topics, "--simulate", "2")
    assert code == 2 and 't.jsonl:2: field "topic": duplicate topic "a" (first at line 1)' in err
    odd = write_jsonl(tmp_path / "odd.jsonl", [{"topic": "a", "sentences": ["x.", "y."], "references": "text"},
                                                {"topic": "b", "sentences": ["x.", 3]}])
    code, _, err = run("zopf", odd, "--simulate", "1")
    assert code == 2 and 'odd.jsonl:1: field "references" must be an array (found string)' in err
    assert 'odd.jsonl:2: field "sentences": entry 1 is not a non-empty string' in err
    code, _, err = run("zopf", files["topics"])
    assert code == 2 and "--judgments FILE and/or --simulate N" in err


def test_unsplit_text_needs_punkt(tmp_path: Path) -> None:
    topics = write_jsonl(tmp_path / "t.jsonl", [
        {"topic": "a", "documents": ["First sentence here. Second sentence there."]}])
    judgments = tmp_path / "j.csv"
    judgments.write_text("topic,sentence_a,sentence_b,winner\na,0,1,a\n", encoding="utf-8")
    code, out, err = run("zopf", topics, "--judgments", str(judgments))
    if punkt_available():
        assert code == 0 and json.loads(out)["topics"][0]["splitting"] == "punkt"
    else:
        assert code == 2 and 't.jsonl:1: field "documents": NLTK\'s Punkt data' in err
        assert 'give "sentences" pre-split' in err
