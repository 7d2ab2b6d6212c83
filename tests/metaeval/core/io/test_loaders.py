"""metaeval.core.io.loaders: the consolidated dataset and the ratings CSV (docs/conventions.md sec. 2)."""
from __future__ import annotations

import json
import re

import pytest

from metaeval.core.io.corpus import Corpus, DataError, Rating, RatingTable
from metaeval.core.io.fileio import ImportFileError
from metaeval.core.io.loaders import load_corpus, load_ratings, ratings_from_rows


def record(doc_id="N1", readers=("R1", "R2"), systems=("SysB", "SysA"), **over):
    value = {
        "doc_id": doc_id,
        "doc_text": f"Body of {doc_id}.",
        "doc_summ": f"Headline of {doc_id}",
        "m_summary_dict": {
            uid: {"user": f"gold {doc_id} {uid}", **{s: f"{s} for {uid} on {doc_id}" for s in systems}}
            for uid in readers
        },
    }
    value.update(over)
    return value


RECORDS = [
    record("N2", readers=("R9", "R1", "R5")),
    record("N1", readers=("R2", "R3"), systems=("SysC", "SysA")),
    record("N10", readers=("R1", "R2"), systems=("SysB", "SysD")),
]


def write(tmp_path, text, name="data.json", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def problems_of(excinfo) -> list[str]:
    return excinfo.value.problems


def check_order(corpus: Corpus):
    assert [d.doc_id for d in corpus.documents] == ["N2", "N1", "N10"]  # file order, not sorted
    assert corpus.documents[0].readers == ["R9", "R1", "R5"]  # m_summary_dict order
    assert list(corpus.documents[0].summaries["R9"]) == ["user", "SysB", "SysA"]
    assert corpus.systems == ("SysB", "SysA", "SysC", "SysD")  # first seen, "user" excluded
    doc = corpus.documents[1]
    assert doc.headline == "Headline of N1" and doc.body == "Body of N1."
    assert doc.text == "Headline of N1 Body of N1."
    assert doc.summary("R3", "SysC") == "SysC for R3 on N1"


# ---------------------------------------------------------------------------------------------------- layouts


def test_json_lines(tmp_path):
    path = write(tmp_path, "\n".join(json.dumps(r) for r in RECORDS) + "\n")
    corpus = load_corpus(path)
    check_order(corpus)
    assert [d.line for d in corpus.documents] == [1, 2, 3]
    assert corpus.source == "data.json"


def test_concatenated_objects_without_newlines(tmp_path):
    check_order(load_corpus(write(tmp_path, "".join(json.dumps(r) for r in RECORDS))))


def test_pretty_printed_objects(tmp_path):
    text = "\n".join(json.dumps(r, indent=2) for r in RECORDS)
    corpus = load_corpus(write(tmp_path, text))
    check_order(corpus)
    sizes = [json.dumps(r, indent=2).count("\n") + 1 for r in RECORDS]
    assert [d.line for d in corpus.documents] == [1, 1 + sizes[0], 1 + sizes[0] + sizes[1]]


def test_single_pretty_printed_object(tmp_path):
    corpus = load_corpus(write(tmp_path, json.dumps(RECORDS[0], indent=4)))
    assert [d.doc_id for d in corpus.documents] == ["N2"]
    assert corpus.systems == ("SysB", "SysA")


def test_single_json_array(tmp_path):
    check_order(load_corpus(write(tmp_path, json.dumps(RECORDS, indent=1))))
    check_order(load_corpus(write(tmp_path, json.dumps(RECORDS), name="one-line.json")))


def test_bom_and_file_name_override(tmp_path):
    path = write(tmp_path, "\ufeff" + json.dumps(RECORDS[0]))
    corpus = load_corpus(path, file="upload.jsonl")
    assert corpus.documents[0].doc_id == "N2" and corpus.source == "upload.jsonl"


def test_extra_fields_ignored_and_summaries_kept_as_given(tmp_path):
    value = record("N1", category="news", topic="x")
    value["m_summary_dict"]["R1"]["SysA"] = None
    value["m_summary_dict"]["R2"]["SysB"] = 42
    value["m_summary_dict"]["R2"].pop("user")
    corpus = load_corpus(write(tmp_path, json.dumps(value)))
    doc = corpus.documents[0]
    assert doc.summaries["R1"]["SysA"] is None and doc.summaries["R2"]["SysB"] == 42
    assert doc.summary("R2", "SysB") is None  # a non-string counts as missing, later
    assert doc.readers_for("SysA", "drop") == []  # R1 lacks SysA, R2 lacks user
    with pytest.raises(DataError, match='document "N1", reader "R1"'):
        doc.readers_for("SysA")


def test_numeric_doc_id_becomes_string(tmp_path):
    corpus = load_corpus(write(tmp_path, json.dumps([record(7), record("8")])))
    assert [d.doc_id for d in corpus.documents] == ["7", "8"]
    assert corpus.document("7").doc_id == "7"


def test_numeric_and_string_ids_that_collide_are_duplicates(tmp_path):
    with pytest.raises(ImportFileError) as excinfo:
        load_corpus(write(tmp_path, json.dumps(record(7)) + "\n" + json.dumps(record("7"))))
    assert problems_of(excinfo) == [
        'data.json:2: field "doc_id": duplicate doc_id "7" (first at line 1, again at line 2)'
    ]


def test_empty_m_summary_dict_is_allowed(tmp_path):
    corpus = load_corpus(write(tmp_path, json.dumps(record("N1", readers=()))))
    assert corpus.documents[0].readers == [] and corpus.systems == ()


# ----------------------------------------------------------------------------------------------------- errors


def test_duplicate_doc_id_names_id_and_both_lines(tmp_path):
    lines = [json.dumps(record("A")), json.dumps(record("B")), json.dumps(record("A")), json.dumps(record("A"))]
    with pytest.raises(ImportFileError) as excinfo:
        load_corpus(write(tmp_path, "\n".join(lines)))
    assert problems_of(excinfo) == [
        'data.json:3: field "doc_id": duplicate doc_id "A" (first at line 1, again at line 3)',
        'data.json:4: field "doc_id": duplicate doc_id "A" (first at line 1, again at line 4)',
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"doc_id": None}, 'field "doc_id" must be a string, found null'),
        ({"doc_id": ""}, 'field "doc_id" must not be empty'),
        ({"doc_id": "  "}, 'field "doc_id" must not be empty'),
        ({"doc_id": 1.5}, 'field "doc_id" must be a string or an integer'),
        ({"doc_id": True}, 'field "doc_id" must be a string, found boolean'),
        ({"doc_id": ["x"]}, 'field "doc_id" must be a string, found array'),
        ({"doc_text": 3}, 'field "doc_text" must be a string (doc "N1", found number)'),
        ({"doc_summ": None}, 'field "doc_summ" must be a string (doc "N1", found null)'),
        ({"m_summary_dict": []}, 'field "m_summary_dict" must be an object mapping reader ids'),
        ({"m_summary_dict": {"R1": "text"}}, 'field "m_summary_dict" entry for reader "R1" must be an object'),
        ({"m_summary_dict": {" ": {"user": "t"}}}, 'field "m_summary_dict" has an empty reader id'),
        ({"m_summary_dict": {"R1": {"": "t"}}}, 'field "m_summary_dict" entry for reader "R1" has an empty system'),
    ],
)
def test_field_errors_name_file_line_and_field(tmp_path, change, expected):
    text = json.dumps(record("N0")) + "\n" + json.dumps({**record("N1"), **change})
    with pytest.raises(ImportFileError) as excinfo:
        load_corpus(write(tmp_path, text, name="bad.jsonl"))
    (problem,) = problems_of(excinfo)
    assert problem.startswith("bad.jsonl:2: " + expected), problem


@pytest.mark.parametrize("key", ["doc_id", "doc_text", "doc_summ", "m_summary_dict"])
def test_missing_fields(tmp_path, key):
    value = record("N1")
    del value[key]
    with pytest.raises(ImportFileError) as excinfo:
        load_corpus(write(tmp_path, json.dumps(value)))
    (problem,) = problems_of(excinfo)
    assert problem.startswith(f'data.json:1: field "{key}"') and ("is missing" in problem)


def test_all_problems_collected_across_records(tmp_path):
    records = [record("A"), 5, record("B", doc_text=None, doc_summ=1), record("A"), "text"]
    text = "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]"
    with pytest.raises(ImportFileError) as excinfo:
        load_corpus(write(tmp_path, text))
    assert problems_of(excinfo) == [
        "data.json:3: expected a JSON object (one document), found number",
        'data.json:4: field "doc_text" must be a string (doc "B", found null)',
        'data.json:4: field "doc_summ" must be a string (doc "B", found number)',
        'data.json:5: field "doc_id": duplicate doc_id "A" (first at line 2, again at line 5)',
        "data.json:6: expected a JSON object (one document), found string",
    ]
    assert str(excinfo.value).count("\n") == 4


@pytest.mark.parametrize(("text", "message"), [("", "(the file is empty)"), ("  \n\n", "(the file is empty)"),
                                               ("[]", "no records found")])
def test_empty_file_or_no_records(tmp_path, text, message):
    with pytest.raises(ImportFileError) as excinfo:
        load_corpus(write(tmp_path, text))
    (problem,) = problems_of(excinfo)
    assert problem.startswith("data.json:1: no records found") and message in problem


def test_invalid_json_reports_its_line(tmp_path):
    text = json.dumps(record("A")) + "\n" + '{"doc_id": "B",\n  "doc_text": oops}'
    with pytest.raises(ImportFileError) as excinfo:
        load_corpus(write(tmp_path, text))
    (problem,) = problems_of(excinfo)
    assert problem.startswith("data.json:3: invalid JSON")


def test_invalid_utf8(tmp_path):
    path = write(tmp_path, json.dumps(record("A")).encode() + b"\n\xff\n")
    with pytest.raises(ImportFileError, match=r"^data.json:2: not valid UTF-8"):
        load_corpus(path)


# ---------------------------------------------------------------------------------------------------- ratings

HEADER = "doc_id,system,uid1,uid2,rating"


def test_ratings_basic(tmp_path):
    path = write(tmp_path, HEADER + "\nN1,SysA,R1,R2,4\nN1,user,R2,R1,2.0\n7,SysB,10,11,6\n", name="r.csv")
    table = load_ratings(path)
    assert isinstance(table, RatingTable) and len(table) == 3
    assert table.rows[0] == Rating("N1", "SysA", "R1", "R2", 4.0, rater="", line=2)
    assert table.rows[1].rating == 2.0 and table.rows[1].system == "user"
    assert table.rows[2] == Rating("7", "SysB", "10", "11", 6.0, line=4)  # ids stay strings
    assert table.systems == ["SysA", "SysB"]
    assert (table.source, table.scale_min, table.scale_max) == ("r.csv", 1, 6)


def test_ratings_between_scale_points_are_refused(tmp_path):
    """On the 1..6 scale a rating is a whole number: 3.5 names its line and field; a scale of non-whole bounds
    takes any value inside it."""
    path = write(tmp_path, HEADER + "\nN1,SysA,R1,R2,4\nN1,SysB,R1,R2,3.5\n", name="r.csv")
    with pytest.raises(ImportFileError, match=r'r.csv:3: field "rating": 3.5 is not one of the scale points 1..6'):
        load_ratings(path)
    assert load_ratings(path, scale=(0.5, 6.5)).rows[1].rating == 3.5


def test_a_repeated_row_of_a_named_rater_is_refused(tmp_path):
    """A row that repeats an earlier one field for field, with a rater, is a copy: refused with both lines named
    (nothing silently counted twice). A rater's second rating of the same pair in another questionnaire (the
    survey shows the reference pair in every questionnaire of its document) and identical anonymous rows are
    kept."""
    text = (HEADER + ",rater,questionnaire\nN1,SysA,R1,R2,4,P1,1\nN1,SysA,R1,R2,4,P1,2\nN1,SysA,R1,R2,4,,1\n"
            "N1,SysA,R1,R2,4,,1\nN1,SysA,R1,R2,4,P1,1\n")
    path = write(tmp_path, text, name="r.csv")
    with pytest.raises(ImportFileError, match=r'r.csv:6: repeats line 2 field for field \(rater "P1"') as info:
        load_ratings(path)
    assert len(info.value.problems) == 1
    assert len(load_ratings(write(tmp_path, text.rsplit("\n", 2)[0] + "\n", name="ok.csv"))) == 4


def test_ratings_survey_export_layout_with_rater_and_extra_columns(tmp_path):
    header = HEADER + ",rater,study,questionnaire,shown_position,swapped,claimed_at,completed_at,rated_at"
    row = "N1,SysA,R1,R2,5,P3,s1,0,1,0,2024-01-01T00:00:00,,2024-01-01T00:01:00"
    table = load_ratings(write(tmp_path, "\ufeff" + header + "\r\n" + row + "\r\n\r\n\n", name="r.csv"))
    assert table.rows == (Rating("N1", "SysA", "R1", "R2", 5.0, rater="P3", line=2),)


def test_ratings_columns_found_by_name_extra_anywhere(tmp_path):
    text = "note,rating,uid2,rater,doc_id,uid1,system\nhello,3,R2,P1,N1,R1,SysA\n"
    (row,) = load_ratings(write(tmp_path, text)).rows
    assert row == Rating("N1", "SysA", "R1", "R2", 3.0, rater="P1", line=2)


def test_ratings_quoted_multiline_field_keeps_start_line(tmp_path):
    text = HEADER + ',comment\nN1,SysA,R1,R2,3,"two\nlines"\nN1,SysA,R2,R1,x,\n'
    with pytest.raises(ImportFileError) as excinfo:
        load_ratings(write(tmp_path, text, name="r.csv"))
    assert problems_of(excinfo) == ['r.csv:4: field "rating": not a number: "x"']


def test_ratings_scale(tmp_path):
    text = HEADER + "\nN1,SysA,R1,R2,0\nN1,SysA,R1,R2,7\nN1,SysA,R1,R2,1\nN1,SysA,R1,R2,6\n"
    with pytest.raises(ImportFileError) as excinfo:
        load_ratings(write(tmp_path, text, name="r.csv"))
    assert problems_of(excinfo) == [
        'r.csv:2: field "rating": 0 is outside the scale 1..6',
        'r.csv:3: field "rating": 7 is outside the scale 1..6',
    ]
    table = load_ratings(write(tmp_path, text, name="r.csv"), scale=(0, 7))
    assert [r.rating for r in table.rows] == [0.0, 7.0, 1.0, 6.0] and (table.scale_min, table.scale_max) == (0, 7)
    with pytest.raises(ValueError, match="scale"):
        load_ratings(write(tmp_path, text), scale=(6, 1))


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("N1,SysA,R1,R2,abc", 'field "rating": not a number: "abc"'),
        ("N1,SysA,R1,R2,", 'field "rating" must not be empty'),
        ("N1,SysA,R1,R2,nan", 'field "rating": must be a finite number, found "nan"'),
        ("N1,SysA,R1,R2,inf", 'field "rating": must be a finite number, found "inf"'),
        ("N1,SysA,R1,R2,-Infinity", 'field "rating": must be a finite number'),
        ("N1,SysA,R1,R2,6.5", 'field "rating": 6.5 is outside the scale 1..6'),
        (",SysA,R1,R2,3", 'field "doc_id" must not be empty'),
        ("N1, ,R1,R2,3", 'field "system" must not be empty'),
        ("N1,SysA,,R2,3", 'field "uid1" must not be empty'),
        ("N1,SysA,R1,,3", 'field "uid2" must not be empty'),
        ("N1,SysA,R1,R1,3", 'field "uid2": the same reader as uid1 ("R1")'),
        ("N1,SysA,R1,R2", "expected 5 fields as in the header, found 4"),
        ("N1,SysA,R1,R2,3,extra", "expected 5 fields as in the header, found 6"),
    ],
)
def test_rating_row_errors(tmp_path, row, expected):
    text = HEADER + "\nN0,SysA,R1,R2,3\n" + row + "\n"
    with pytest.raises(ImportFileError) as excinfo:
        load_ratings(write(tmp_path, text, name="r.csv"))
    (problem,) = problems_of(excinfo)
    assert problem.startswith("r.csv:3: " + expected), problem


def test_ratings_all_problems_collected_nothing_returned(tmp_path):
    text = HEADER + "\nN1,SysA,R1,R2,3\n,SysA,R1,R1,9\nN1,SysA,R1,R2,3\nN1,SysA,R2,R3,zz\n"
    with pytest.raises(ImportFileError) as excinfo:
        load_ratings(write(tmp_path, text, name="r.csv"))
    assert problems_of(excinfo) == [
        'r.csv:3: field "doc_id" must not be empty',
        'r.csv:3: field "uid2": the same reader as uid1 ("R1"); a pair needs two readers',
        'r.csv:3: field "rating": 9 is outside the scale 1..6',
        'r.csv:5: field "rating": not a number: "zz"',
    ]


def test_ratings_missing_header_columns_are_named(tmp_path):
    with pytest.raises(ImportFileError) as excinfo:
        load_ratings(write(tmp_path, "doc_id,system,uid_1,uid2,score\nN1,SysA,R1,R2,3\n", name="r.csv"))
    assert problems_of(excinfo) == [
        'r.csv:1: the header lacks the columns "uid1", "rating" (expected at least doc_id,system,uid1,uid2,rating)'
    ]
    with pytest.raises(ImportFileError, match=r'r.csv:1: the header lacks the column "rating" \('):
        load_ratings(write(tmp_path, "doc_id,system,uid1,uid2\n", name="r.csv"))


def test_ratings_duplicate_required_column(tmp_path):
    with pytest.raises(ImportFileError, match='r.csv:1: the header names the column "rating" more than once'):
        load_ratings(write(tmp_path, HEADER + ",rating\nN1,SysA,R1,R2,3,4\n", name="r.csv"))


@pytest.mark.parametrize(("text", "expected"), [
    ("", "r.csv:1: the file is empty"),
    ("\n\n", "r.csv:1: the file is empty"),
    (HEADER + "\n\n", "r.csv:1: no ratings found after the header"),
])
def test_ratings_empty(tmp_path, text, expected):
    with pytest.raises(ImportFileError) as excinfo:
        load_ratings(write(tmp_path, text, name="r.csv"))
    (problem,) = problems_of(excinfo)
    assert problem.startswith(expected)


def test_ratings_blank_lines_skipped_line_numbers_kept(tmp_path):
    table = load_ratings(write(tmp_path, "\n" + HEADER + "\n\nN1,SysA,R1,R2,3\n   \nN1,SysA,R2,R1,4\n\n\n"))
    assert [r.line for r in table.rows] == [4, 6]


def test_ratings_invalid_csv_quote(tmp_path):
    with pytest.raises(ImportFileError) as excinfo:
        load_ratings(write(tmp_path, HEADER + '\nN1,"Sys"A,R1,R2,3\n', name="r.csv"))
    (problem,) = problems_of(excinfo)
    assert re.match(r"r.csv:2: invalid CSV", problem)


# ---------------------------------------------------------------------------------------- ratings_from_rows


def test_ratings_from_rows_like_the_survey_export():
    rows = [
        {"doc_id": "N1", "system": "SysA", "uid1": "R1", "uid2": "R2", "rating": 4, "rater": "P1", "study": "s"},
        {"doc_id": "N1", "system": "user", "uid1": "R1", "uid2": "R2", "rating": "2", "rater": None},
        {"doc_id": 5, "system": "SysB", "uid1": 1, "uid2": 2, "rating": 1.0},
    ]
    table = ratings_from_rows(iter(rows), source="study s", scale=(1, 6))
    assert table.rows == (
        Rating("N1", "SysA", "R1", "R2", 4.0, rater="P1", line=1),
        Rating("N1", "user", "R1", "R2", 2.0, rater="", line=2),
        Rating("5", "SysB", "1", "2", 1.0, rater="", line=3),
    )
    assert table.source == "study s" and table.systems == ["SysA", "SysB"]
    assert len(ratings_from_rows([], source="empty")) == 0


def test_ratings_from_rows_errors_and_lines():
    rows = [
        {"doc_id": "N1", "system": "SysA", "uid1": "R1", "rating": 4},
        {"doc_id": "N1", "system": "SysA", "uid1": "R1", "uid2": "R2", "rating": True},
        {"doc_id": "N1", "system": "SysA", "uid1": "R1", "uid2": "R2", "rating": float("nan")},
        {"doc_id": "N1", "system": 3.5, "uid1": "R1", "uid2": "R2", "rating": None},
    ]
    with pytest.raises(ImportFileError) as excinfo:
        ratings_from_rows(rows, source="db", lines=[10, 20, 30, 40])
    assert problems_of(excinfo) == [
        'db:10: field "uid2" is missing',
        'db:20: field "rating": not a number: True',
        'db:30: field "rating": must be a finite number, found "nan"',
        'db:40: field "system" must be a string, found float',
        'db:40: field "rating" is missing',
    ]
    with pytest.raises(ValueError, match="lines"):
        ratings_from_rows(rows, lines=[1])


def test_loaders_are_fast_on_a_moderate_file(tmp_path):
    records = [record(f"N{i}", readers=[f"R{j}" for j in range(5)], systems=[f"S{k}" for k in range(10)])
               for i in range(300)]
    corpus = load_corpus(write(tmp_path, "\n".join(json.dumps(r) for r in records)))
    assert len(corpus.documents) == 300 and len(corpus.systems) == 10
    text = HEADER + "\n" + "".join(f"N{i},S{i % 10},R1,R2,{1 + i % 6}\n" for i in range(5000))
    assert len(load_ratings(write(tmp_path, text, name="r.csv"))) == 5000


def test_spreadsheet_safe_cells_round_trip():
    from metaeval.core.io.fileio import from_spreadsheet_safe, spreadsheet_safe
    from metaeval.core.io.records import number

    for text in ("=1+1", "+x", "-N1", "@SUM(A1)", "\tx", "\rx"):
        assert spreadsheet_safe(text) == "'" + text and from_spreadsheet_safe(spreadsheet_safe(text)) == text
    for text in ("N1", "'quoted", "a=b", ""):
        assert spreadsheet_safe(text) == text and from_spreadsheet_safe(text) == text
    assert number("-x") == "'-x" and number(-1.5) == "-1.5" and number(-3) == "-3"
