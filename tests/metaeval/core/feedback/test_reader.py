"""The axis-evals reader: fields, null axes, and every problem as ``file:line: field`` (docs/conventions.md sec. 25)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from metaeval.core.feedback.reader import read_feedback
from metaeval.core.io.fileio import ImportFileError

FIXTURE = Path(__file__).resolve().parents[3] / "data" / "feedback" / "axis_evals_small.jsonl"


def line(doc: str = "d1", worker: str = "w1", policy: str = "p1", overall: object = 7, **info: object) -> dict:
    record = {"info": {"id": doc, "title": "T", "article": "Body text.", "site": "cnn", **info}, "split": "test",
              "summary": {"text": "A summary.", "policy": policy, "note": None,
                          "axes": {"overall": overall, "accuracy": 5, "coverage": None, "coherence": 6}},
              "worker": worker, "batch": "b1"}
    return record


def write(tmp_path: Path, records: list[object]) -> Path:
    path = tmp_path / "feedback.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def problems(path: Path, **kwargs: object) -> list[str]:
    with pytest.raises(ImportFileError) as info:
        read_feedback(path, **kwargs)  # type: ignore[arg-type]
    return info.value.problems


def test_fixture_fields_and_null_axis() -> None:
    records = read_feedback(FIXTURE)
    assert len(records) == 27
    first = records[0]
    assert (first.line, first.doc_id, first.worker, first.policy, first.rating) == (1, "a1", "w1", "ref", 7.0)
    assert first.title == "Council closes river bridge for six weeks" and first.site == "dailymail"
    assert first.text.startswith("The town council voted")
    assert [r.rating for r in records if r.rating is None] == [None]  # a2, w3, ref: not rated on overall
    post = records[-1]  # the TL;DR record: info.post and subreddit
    assert post.doc_id == "t3_x1" and post.site == "gardening" and post.text.startswith("Every summer")
    assert post.split == "valid2"


def test_other_axis_and_integer_id(tmp_path: Path) -> None:
    path = write(tmp_path, [line(doc=7), line(overall=None)])  # type: ignore[arg-type]
    records = read_feedback(path, axis="coherence")
    assert [r.rating for r in records] == [6.0, 6.0] and records[0].doc_id == "7"
    assert read_feedback(path, axis="coverage")[0].rating is None


def test_errors_name_file_line_and_field(tmp_path: Path) -> None:
    bad_info = line()
    del bad_info["info"]["article"]
    no_worker = line()
    del no_worker["worker"]
    no_axis = line()
    del no_axis["summary"]["axes"]["overall"]
    path = write(tmp_path, [
        line(), bad_info, no_worker, line(overall=8), line(overall=4.5), line(overall="7"), no_axis,
        line(policy=""), {"info": {"id": "d9", "article": "x"}, "worker": "w"}, [1],
    ])
    found = problems(path)
    assert found == [
        'feedback.jsonl:2: field "info.article" (or "info.post") is missing',
        'feedback.jsonl:3: field "worker" is missing',
        'feedback.jsonl:4: field "summary.axes.overall": 8 is not one of the scale points 1..7',
        'feedback.jsonl:5: field "summary.axes.overall": 4.5 is not one of the scale points 1..7',
        'feedback.jsonl:6: field "summary.axes.overall" must be a number 1..7 or null, found string',
        'feedback.jsonl:7: field "summary.axes.overall" is missing (axes here: accuracy, coherence, coverage)',
        'feedback.jsonl:8: field "summary.policy" must not be empty',
        'feedback.jsonl:9: field "summary" is missing',
        "feedback.jsonl:10: expected a JSON object (one rating), found array",
    ]


def test_scale_max_and_document_consistency(tmp_path: Path) -> None:
    path = write(tmp_path, [line(overall=5), line(worker="w2", article="Another body.")])
    assert problems(path, scale_max=4)[0] == (
        'feedback.jsonl:1: field "summary.axes.overall": 5 is not one of the scale points 1..4')
    assert problems(path)[0] == (
        'feedback.jsonl:2: field "info.article / info.post": document "d1" differs from its text at line 1')


def test_empty_file_and_invalid_json(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert problems(empty) == ["empty.jsonl:1: no records found (the file is empty)"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(line()) + "\n{not json\n", encoding="utf-8")
    assert problems(broken)[0].startswith("broken.jsonl:2: invalid JSON")
