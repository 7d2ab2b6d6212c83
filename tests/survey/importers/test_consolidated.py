"""Consolidated JSON parser: input variants, line numbers, every error path, missing=error|drop."""
from __future__ import annotations

import json

import pytest

from metaeval.core.io.fileio import MAX_PROBLEMS
from survey.importers.consolidated import parse_consolidated
from survey.importers.records import DocumentRecord, ReaderRecord, SummaryRecord
from tests.survey.importers.helpers import doc, problems_of, write_array, write_jsonl, write_pretty

DOCS = [doc("d1"), doc("d2", readers=("u2", "u3"))]


def triples(records) -> list[tuple[str, str, str, str]]:
    return [(s.doc_id, s.reader_id, s.system, s.text) for s in records.summaries]


def test_jsonl_records(tmp_path):
    records = parse_consolidated(write_jsonl(tmp_path / "data.jsonl", DOCS))
    assert records.documents == [
        DocumentRecord("d1", "Headline d1", "Body of d1.", "", ""),
        DocumentRecord("d2", "Headline d2", "Body of d2.", "", ""),
    ]
    assert records.readers == [ReaderRecord("u1"), ReaderRecord("u2"), ReaderRecord("u3")]
    assert records.summaries[:3] == [
        SummaryRecord("d1", "u1", "user", "u1 on d1"),
        SummaryRecord("d1", "u1", "sysA", "sysA for u1 on d1"),
        SummaryRecord("d1", "u1", "sysB", "sysB for u1 on d1"),
    ]
    assert len(records.summaries) == 12
    assert records.systems == ["user", "sysA", "sysB"]
    assert records.system_kinds == {}


@pytest.mark.parametrize("writer", [write_jsonl, write_pretty, write_array], ids=["jsonl", "pretty", "array"])
def test_variants_give_the_same_records(tmp_path, writer):
    expected = parse_consolidated(write_jsonl(tmp_path / "ref.jsonl", DOCS))
    assert parse_consolidated(writer(tmp_path / "data.json", DOCS)) == expected


def test_concatenated_on_one_line_and_single_pretty_object(tmp_path):
    one_line = tmp_path / "one.json"
    one_line.write_text("".join(json.dumps(d) for d in DOCS), encoding="utf-8")
    assert [d.external_id for d in parse_consolidated(one_line).documents] == ["d1", "d2"]
    single = write_pretty(tmp_path / "single.json", [DOCS[0]])
    assert [d.external_id for d in parse_consolidated(single).documents] == ["d1"]


def test_utf8_bom_and_crlf_are_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(json.dumps(d) for d in DOCS).encode())
    assert len(parse_consolidated(path).documents) == 2


def test_category_topic_stored_and_unknown_keys_ignored(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [doc("d1", category="sports", topic="soccer", extra={"x": 1})])
    expected = DocumentRecord("d1", "Headline d1", "Body of d1.", "sports", "soccer")
    assert parse_consolidated(path).documents[0] == expected


def test_pretty_error_reports_line_where_object_starts(tmp_path):
    bad = doc("d2")
    bad["doc_text"] = 5
    path = write_pretty(tmp_path / "data.json", [DOCS[0], bad])
    start = len(json.dumps(DOCS[0], indent=2).split("\n")) + 1
    assert problems_of(parse_consolidated, path) == [
        f'data.json:{start}: field "doc_text" must be a string (doc "d2", found number)'
    ]


def test_array_elements_report_their_own_line(tmp_path):
    path = tmp_path / "data.json"
    path.write_text("[\n" + json.dumps(DOCS[0]) + ",\n\n" + json.dumps({**DOCS[1], "doc_summ": None}) + "\n]\n")
    assert problems_of(parse_consolidated, path) == [
        'data.json:4: field "doc_summ" must be a string (doc "d2", found null)'
    ]


def test_duplicate_doc_id_names_id_and_both_lines(tmp_path):
    path = write_jsonl(tmp_path / "data.jsonl", [doc("d1"), doc("d2"), doc("d1")])
    assert problems_of(parse_consolidated, path) == [
        'data.jsonl:3: field "doc_id": duplicate doc_id "d1" (first at line 1, again at line 3)'
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"doc_id": None}, 'field "doc_id" must be a string, found null'),
        ({"doc_id": 7.5}, 'field "doc_id" must be a string or an integer, found a non-integer number (quote the id)'),
        ({"doc_id": "  "}, 'field "doc_id" must not be empty'),
        ({"doc_id": "x" * 101}, 'field "doc_id" is longer than 100 characters'),
        ({"doc_text": ["a"]}, 'field "doc_text" must be a string (doc "d9", found array)'),
        ({"doc_summ": 1.5}, 'field "doc_summ" must be a string (doc "d9", found number)'),
        ({"category": 3}, 'field "category" must be a string (doc "d9", found number)'),
        ({"topic": "t" * 101}, 'field "topic" is longer than 100 characters (doc "d9")'),
        (
            {"m_summary_dict": []},
            'field "m_summary_dict" must be an object mapping reader ids to {system: text} (doc "d9", found array)',
        ),
        (
            {"m_summary_dict": {"u1": "text"}},
            'field "m_summary_dict" entry for reader "u1" must be an object mapping system names to texts '
            '(doc "d9", found string)',
        ),
        (
            {"m_summary_dict": {"u1": {"user": "a", "sysA": 3}}},
            'field "m_summary_dict" summary of system "sysA" for reader "u1" must be a string (doc "d9", found number)',
        ),
        ({"m_summary_dict": {"": {"user": "a"}}}, 'field "m_summary_dict" has an empty reader id (doc "d9")'),
    ],
)
def test_field_errors_name_line_and_field(tmp_path, change, expected):
    path = write_jsonl(tmp_path / "data.jsonl", [doc("d1"), {**doc("d9"), **change}])
    assert problems_of(parse_consolidated, path) == [f"data.jsonl:2: {expected}"]


@pytest.mark.parametrize("key", ["doc_id", "doc_text", "doc_summ", "m_summary_dict"])
def test_missing_required_field(tmp_path, key):
    record = doc("d9")
    del record[key]
    path = write_jsonl(tmp_path / "data.jsonl", [record])
    [problem] = problems_of(parse_consolidated, path)
    assert problem.startswith(f'data.jsonl:1: field "{key}" ')
    assert "missing" in problem


def test_example_message_from_the_brief(tmp_path):
    path = write_jsonl(tmp_path / "data.jsonl", [doc(f"d{i}") for i in range(6)] + [{**doc("d7"), "m_summary_dict": 1}])
    [problem] = problems_of(parse_consolidated, path)
    assert problem.startswith(
        'data.jsonl:7: field "m_summary_dict" must be an object mapping reader ids to {system: text}'
    )


def test_all_errors_of_a_file_are_listed_in_order(tmp_path):
    records = [doc("d1"), {**doc("d2"), "doc_text": 1}, "oops", doc("d1"), {**doc("d4"), "doc_summ": None}]
    problems = problems_of(parse_consolidated, write_jsonl(tmp_path / "data.jsonl", records))
    assert [p.split(": ")[0] for p in problems] == ["data.jsonl:2", "data.jsonl:3", "data.jsonl:4", "data.jsonl:5"]
    assert problems[1] == "data.jsonl:3: expected a JSON object (one document), found string"


def test_problem_list_is_capped(tmp_path):
    records = [{**doc(f"d{i}"), "doc_text": None} for i in range(50)]
    problems = problems_of(parse_consolidated, write_jsonl(tmp_path / "data.jsonl", records))
    assert len(problems) == MAX_PROBLEMS + 1
    assert problems[-1].startswith("(stopped after 20 problems")


@pytest.mark.parametrize(("content", "expected"), [
    ("", "data.json:1: no records found (the file is empty)"),
    ("  \n\n", "data.json:1: no records found (the file is empty)"),
    ("[]", "data.json:1: no records found"),
    ("[\n]\n", "data.json:1: no records found"),
])
def test_empty_file_or_no_records(tmp_path, content, expected):
    path = tmp_path / "data.json"
    path.write_text(content)
    assert problems_of(parse_consolidated, path) == [expected]


def test_syntax_error_reports_its_line_and_keeps_earlier_problems(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps({**doc("d1"), "doc_text": 1}) + "\n" + json.dumps(doc("d2")) + '\n{"doc_id": "d3",\n')
    problems = problems_of(parse_consolidated, path)
    assert problems[0].startswith("data.jsonl:1: field \"doc_text\"")
    assert problems[1].startswith("data.jsonl:4: invalid JSON: ")


def test_array_with_garbage_after_it(tmp_path):
    path = tmp_path / "data.json"
    path.write_text(json.dumps([doc("d1")]) + "\n{}\n")
    assert problems_of(parse_consolidated, path) == ["data.json:2: unexpected content after the top-level JSON array"]


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes(json.dumps(doc("d1")).encode() + b"\n" + b'{"doc_id": "\xff"}\n')
    [problem] = problems_of(parse_consolidated, path)
    assert problem.startswith("data.jsonl:2: not valid UTF-8 text")


# ------------------------------------------------------------------------------------------- missing summaries

INCOMPLETE = {
    "doc_id": "d1",
    "doc_text": "Body.",
    "doc_summ": "Head.",
    "m_summary_dict": {
        "u1": {"user": "a", "sysA": "b", "sysB": "c"},
        "u2": {"sysA": "d", "sysB": "e"},
        "u3": {"user": "f", "sysA": "g", "sysB": None},
    },
}


def test_missing_error_names_doc_reader_and_system(tmp_path):
    path = write_jsonl(tmp_path / "data.jsonl", [doc("d0"), INCOMPLETE])
    assert problems_of(parse_consolidated, path) == [
        'data.jsonl:2: reader "u2" has no "user" summary in field "m_summary_dict" (doc "d1")',
        'data.jsonl:2: reader "u3" has no summary from system "sysB", which other readers of this document have '
        '(doc "d1")',
    ]


def test_missing_is_error_by_default_and_drop_keeps_what_is_present(tmp_path):
    path = write_jsonl(tmp_path / "data.jsonl", [INCOMPLETE])
    problems_of(parse_consolidated, path)
    records = parse_consolidated(path, missing="drop")
    assert [r.external_id for r in records.readers] == ["u1", "u2", "u3"]
    assert [(s.reader_id, s.system) for s in records.summaries] == [
        ("u1", "user"), ("u1", "sysA"), ("u1", "sysB"), ("u2", "sysA"), ("u2", "sysB"), ("u3", "user"), ("u3", "sysA"),
    ]


def test_drop_still_rejects_wrong_types(tmp_path):
    record = {**INCOMPLETE, "m_summary_dict": {"u1": {"user": "a", "sysA": 1}}}
    [problem] = problems_of(parse_consolidated, write_jsonl(tmp_path / "data.jsonl", [record]), missing="drop")
    assert problem.startswith('data.jsonl:1: field "m_summary_dict" summary of system "sysA" for reader "u1"')


def test_systems_are_per_document(tmp_path):
    """A system only some documents have is not required of the other documents' readers."""
    path = write_jsonl(tmp_path / "d.jsonl", [doc("d1", systems=["sysA"]), doc("d2", systems=[])])
    records = parse_consolidated(path)
    assert records.systems == ["user", "sysA"]


def test_missing_option_is_checked():
    with pytest.raises(ValueError):
        parse_consolidated("x.json", missing="ignore")  # type: ignore[arg-type]


def test_the_core_parser_reads_the_file_and_the_importer_adds_database_limits(tmp_path):
    """One parser: what python -m metaeval refuses, the importer refuses with the same words; the importer adds
    only the database's limits (lengths, text summaries, completeness), reported together with the core's."""
    from metaeval.core.io.fileio import ImportFileError
    from metaeval.core.io.loaders import load_corpus

    bad = [doc("d1"), {**doc("d1")}, {**doc("d2"), "topic": 5}, doc("x" * 101)]
    path = write_jsonl(tmp_path / "bad.jsonl", bad)
    with pytest.raises(ImportFileError) as core:
        load_corpus(path)
    core_lines = str(core.value).splitlines()
    importer_lines = problems_of(parse_consolidated, path)
    assert [line for line in importer_lines if "longer than 100" not in line] == [
        line for line in core_lines if line.startswith("bad.jsonl:")
    ]
    assert any('bad.jsonl:4: field "doc_id" is longer than 100 characters' == line for line in importer_lines)

    good = write_jsonl(tmp_path / "good.jsonl", [{**doc("d1"), "doc_id": 7}, doc("d2", category="news")])
    corpus = load_corpus(good)
    records = parse_consolidated(good)
    assert [d.doc_id for d in corpus.documents] == [d.external_id for d in records.documents] == ["7", "d2"]
    assert corpus.documents[1].category == records.documents[1].category == "news"
