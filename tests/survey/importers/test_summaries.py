"""Model summaries parser: CSV and JSON variants, format detection, every error path."""
from __future__ import annotations

import json

import pytest

from survey.importers.records import SummaryRecord
from survey.importers.summaries import check_references, parse_summaries
from tests.survey.importers.helpers import problems_of, write_jsonl

ROWS = [
    {"doc_id": "d1", "reader_id": "u1", "system": "sysC", "text": "c for u1"},
    {"doc_id": "d1", "reader_id": "u2", "system": "sysC", "text": "c for u2"},
]
EXPECTED = [SummaryRecord("d1", "u1", "sysC", "c for u1"), SummaryRecord("d1", "u2", "sysC", "c for u2")]


def test_csv_any_column_order_extra_columns_ignored(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("text,model_version,system,reader_id,doc_id\nc for u1,3,sysC,u1,d1\nc for u2,3,sysC,u2,d1\n")
    records = parse_summaries(path)
    assert records == EXPECTED
    assert [r.line for r in records] == [2, 3]


def test_csv_multiline_text_keeps_line_numbers(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text('doc_id,reader_id,system,text\nd1,u1,sysC,"line one\nline two"\n\nd1,u2,sysC,""\n')
    records_problems = problems_of(parse_summaries, path)
    assert records_problems == ['out.csv:5: field "text" is empty']


def test_jsonl_and_json_array_and_sniffing(tmp_path):
    assert parse_summaries(write_jsonl(tmp_path / "out.jsonl", ROWS)) == EXPECTED
    array = tmp_path / "out.json"
    array.write_text(json.dumps(ROWS, indent=1))
    assert parse_summaries(array) == EXPECTED
    sniffed_json = write_jsonl(tmp_path / "out.txt", ROWS)
    assert parse_summaries(sniffed_json) == EXPECTED
    sniffed_csv = tmp_path / "out.data"
    sniffed_csv.write_text("doc_id,reader_id,system,text\nd1,u1,sysC,c for u1\nd1,u2,sysC,c for u2\n")
    assert parse_summaries(sniffed_csv) == EXPECTED


def test_csv_header_lacks_columns(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("doc_id,reader,system\nd1,u1,sysC\n")
    assert problems_of(parse_summaries, path) == [
        'out.csv:1: header lacks column(s) "reader_id", "text" (needs doc_id,reader_id,system,text)'
    ]


def test_csv_wrong_column_count(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("doc_id,reader_id,system,text\nd1,u1,sysC\nd1,u2,sysC,t,extra\n")
    assert problems_of(parse_summaries, path) == [
        "out.csv:2: expected 4 comma-separated columns, found 3",
        "out.csv:3: expected 4 comma-separated columns, found 5",
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"text": "  "}, 'field "text" is empty'),
        ({"system": ""}, 'field "system" is empty'),
        ({"system": "user"}, 'field "system" is "user", which is reserved for the readers\' own summaries'),
        ({"doc_id": 3}, 'field "doc_id" must be a string, found number'),
        ({"reader_id": None}, 'field "reader_id" must be a string, found null'),
        ({"system": "s" * 101}, 'field "system" is longer than 100 characters'),
    ],
)
def test_field_errors(tmp_path, change, expected):
    path = write_jsonl(tmp_path / "out.jsonl", [ROWS[0], {**ROWS[1], **change}])
    [problem] = problems_of(parse_summaries, path)
    assert problem.startswith(f"out.jsonl:2: {expected}")


def test_missing_key(tmp_path):
    row = dict(ROWS[1])
    del row["text"]
    path = write_jsonl(tmp_path / "out.jsonl", [row])
    assert problems_of(parse_summaries, path) == ['out.jsonl:1: field "text" is missing']


def test_duplicate_triple_names_both_lines(tmp_path):
    path = write_jsonl(tmp_path / "out.jsonl", [ROWS[0], ROWS[1], {**ROWS[0], "text": "other"}])
    assert problems_of(parse_summaries, path) == [
        'out.jsonl:3: duplicate summary for doc_id "d1", reader_id "u1", system "sysC" (first at line 1)'
    ]


def test_jsonl_bad_lines_do_not_hide_later_problems(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n{not json\n[1]\n" + json.dumps({**ROWS[1], "text": ""}) + "\n")
    assert problems_of(parse_summaries, path) == [
        "out.jsonl:2: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
        "out.jsonl:3: expected a JSON object, found array",
        'out.jsonl:4: field "text" is empty',
    ]


def test_empty_file(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("")
    assert problems_of(parse_summaries, path) == ["out.csv:1: no summaries found (the file is empty)"]
    path.write_text("doc_id,reader_id,system,text\n")
    assert problems_of(parse_summaries, path) == ["out.csv:1: no summaries found"]


def test_check_references():
    records = [SummaryRecord("d1", "u1", "s", "t", line=2), SummaryRecord("X", "u9", "s", "t", line=5)]
    check_references(records[:1], file="out.csv", dataset="demo", doc_ids={"d1"}, reader_ids={"u1"})
    known = {"file": "out.csv", "dataset": "demo", "doc_ids": {"d1"}, "reader_ids": {"u1"}}
    assert problems_of(check_references, records, **known) == [
        'out.csv:5: unknown doc_id "X" in dataset "demo"',
        'out.csv:5: unknown reader_id "u9" in dataset "demo"',
    ]
