"""The readers of rater files leave out the raters the file marks excluded (the survey export's review columns)
and those named, keep the marked ones when told, check every row all the same, and say whom they left out
(docs/conventions.md sec. 2, 17 and 18)."""
from __future__ import annotations

import json

import pytest

from metaeval.core.io.exclusions import DEFAULT_CHOICE, RaterChoice, RaterFilter, excluded_cell
from metaeval.core.io.fileio import ImportFileError
from metaeval.core.io.loaders import load_ratings
from metaeval.core.pairwise.judgments import load_judgments, parse_judgments
from metaeval.core.pairwise.zopf_files import Topic
from metaeval.core.pairwise.zopf_files import load_judgments as load_sentence_judgments

HEADER = "doc_id,system,uid1,uid2,rating,rater,study,review,excluded,review_note\n"
ROWS = [
    "D1,user,U1,U2,2,P1,s,approved,0,\n",
    "D1,A,U1,U2,5,P1,s,approved,0,\n",
    "D1,user,U1,U2,6,P2,s,rejected,1,'-straight-lined\n",
    "D1,A,U1,U2,6,P2,s,rejected,1,'-straight-lined\n",
    "D1,user,U1,U2,3,P3,s,pending,1,\"fast, twice\"\n",
    "D1,A,U1,U2,1,P4,s,pending,0,\n",
]


def ratings_file(tmp_path, rows=ROWS, header=HEADER, name="ratings.csv"):
    path = tmp_path / name
    path.write_text(header + "".join(rows), encoding="utf-8")
    return path


def kept(table) -> list[tuple[str, int]]:
    return [(row.rater, row.line) for row in table.rows]


@pytest.mark.parametrize(("cell", "flag"), [("1", True), ("0", False), ("", False), (None, False), (" TRUE ", True),
                                            ("no", False), (1, True), (0, False), (True, True), (False, False),
                                            ("2", None), ("excluded", None), (2, None), (1.0, None)])
def test_excluded_cell(cell, flag):
    assert excluded_cell(cell) is flag


def test_the_raters_marked_excluded_are_left_out_by_default(tmp_path):
    table = load_ratings(ratings_file(tmp_path))
    assert kept(table) == [("P1", 2), ("P1", 3), ("P4", 7)]
    left = table.exclusions
    assert left.raters_left_out == ["P2", "P3"] and left.rows_left_out == 3 and (left.rows, left.raters) == (6, 4)
    assert [(e.rater, e.rows, e.why, e.review, e.note) for e in left.left_out] == [
        ("P2", 2, "marked", "rejected", "-straight-lined"), ("P3", 1, "marked", "pending", "fast, twice")]
    assert left.lines("ratings.csv") == [
        'ratings.csv: left out 2 of 4 raters (3 of 6 rows): P2 (2 rows; rejected, excluded on the participants '
        'page; note: "-straight-lined"), P3 (1 row; excluded on the participants page; note: "fast, twice") '
        "(--include-excluded keeps those excluded on the participants page)"]


def test_include_excluded_keeps_them_and_says_so(tmp_path):
    table = load_ratings(ratings_file(tmp_path), raters=RaterChoice.of(include_excluded=True))
    assert len(table.rows) == 6 and not table.exclusions.left_out
    assert table.exclusions.lines("r.csv") == [
        'r.csv: kept 2 raters excluded on the participants page (--include-excluded): P2 (2 rows; rejected, '
        'excluded on the participants page; note: "-straight-lined"), P3 (1 row; excluded on the participants '
        'page; note: "fast, twice")']


def test_raters_named_are_left_out_too(tmp_path):
    table = load_ratings(ratings_file(tmp_path), raters=RaterChoice.of(["P4", " P1 ", ""]))
    assert kept(table) == []
    assert [(e.rater, e.rows, e.why) for e in table.exclusions.left_out] == [
        ("P1", 2, "named"), ("P2", 2, "marked"), ("P3", 1, "marked"), ("P4", 1, "named")]
    both = load_ratings(ratings_file(tmp_path), raters=RaterChoice.of(["P4"], include_excluded=True))
    assert [row.rater for row in both.rows] == ["P1", "P1", "P2", "P2", "P3"]
    assert both.exclusions.raters_left_out == ["P4"]
    assert "P4 (1 row; --exclude-raters)" in both.exclusions.lines("r.csv")[0]


def test_a_file_without_the_column_is_read_whole(tmp_path):
    path = ratings_file(tmp_path, rows=["D1,user,U1,U2,2,P1\n", "D1,A,U1,U2,5,P2\n"],
                       header="doc_id,system,uid1,uid2,rating,rater\n")
    table = load_ratings(path)
    assert len(table.rows) == 2 and table.exclusions.lines("x") == []
    assert [row.rater for row in load_ratings(path, raters=RaterChoice.of(["P2"])).rows] == ["P1"]


def test_a_named_rater_the_file_lacks_is_an_error(tmp_path):
    with pytest.raises(ImportFileError) as info:
        load_ratings(ratings_file(tmp_path), raters=RaterChoice.of(["P9", "P1"]))
    assert info.value.problems == ["ratings.csv:1: --exclude-raters: no rater P9 in this file "
                                   "(its raters: P1, P2, P3, P4)"]
    path = ratings_file(tmp_path, rows=["D1,user,U1,U2,2\n"], header="doc_id,system,uid1,uid2,rating\n",
                        name="bare.csv")
    with pytest.raises(ImportFileError, match=r"bare.csv:1: --exclude-raters P1: the file has no rater column"):
        load_ratings(path, raters=RaterChoice.of(["P1"]))


def test_every_row_is_checked_excluded_or_not(tmp_path):
    rows = [*ROWS, "D1,A,U1,U2,9,P2,s,rejected,1,\n", "D1,A,U1,U2,2,P5,s,pending,maybe,\n"]
    with pytest.raises(ImportFileError) as info:
        load_ratings(ratings_file(tmp_path, rows=rows))
    assert sorted(info.value.problems) == [
        'ratings.csv:8: field "rating": 9 is outside the scale 1..6',
        "ratings.csv:9: field \"excluded\": expected 1 (excluded) or 0, or empty; found 'maybe'",
    ]


def judgments_csv(rows: list[str]) -> str:
    return ("case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,shown_first,doc_id,reader_id,review,"
            "excluded,review_note\n" + "".join(rows))


JUDGMENTS = [
    "c1,quality,A,B,model_a,P1,human,,model_a,D1,U1,approved,0,\n",
    "c1,quality,A,B,model_b,P2,human,,model_b,D1,U1,rejected,1,'=bot\n",
    "c2,quality,A,B,model_b,P2,human,,model_a,D2,U1,rejected,1,'=bot\n",
    "c1,quality,A,B,tie,gpt,llm,1,model_a,D1,U1,,,\n",
]


def test_judgments_csv_and_json_lines_leave_out_the_same_judges(tmp_path):
    text = judgments_csv(JUDGMENTS)
    table = parse_judgments(text, "j.csv", json_lines=False)
    assert [(j.judge, j.line) for j in table.judgments] == [("P1", 2), ("gpt", 5)]
    assert [(e.rater, e.rows, e.review, e.note) for e in table.exclusions.left_out] == [("P2", 2, "rejected", "=bot")]
    assert table.exclusions.raters == 3
    # the same rows as JSON Lines, as the JSON Lines export writes them (excluded a number, empty for a judge run)
    header = text.splitlines()[0].split(",")
    lines = []
    for row in JUDGMENTS:
        cells = dict(zip(header, row.rstrip("\n").split(","), strict=True))
        cells["excluded"] = int(cells["excluded"]) if cells["excluded"] else ""
        cells["review_note"] = cells["review_note"].lstrip("'")
        lines.append(json.dumps(cells))
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    json_table = load_judgments(path)
    assert [(j.judge, j.line) for j in json_table.judgments] == [("P1", 1), ("gpt", 4)]
    assert json_table.exclusions.left_out == table.exclusions.left_out
    every = load_judgments(path, raters=RaterChoice.of(["gpt"], include_excluded=True))
    assert [j.judge for j in every.judgments] == ["P1", "P2", "P2"]
    with pytest.raises(ImportFileError, match=r"j.jsonl:1: --exclude-raters: no rater P7 in this file"):
        load_judgments(path, raters=RaterChoice.of(["P7"]))


def test_a_bad_excluded_cell_in_a_judgment_file_is_named(tmp_path):
    bad = JUDGMENTS[0].replace(",approved,0,", ",approved,yes please,")
    with pytest.raises(ImportFileError) as info:
        parse_judgments(judgments_csv([bad, *JUDGMENTS[1:]]), "j.csv", json_lines=False)
    assert info.value.problems == [
        "j.csv:2: field \"excluded\": expected 1 (excluded) or 0, or empty; found 'yes please'"]


def test_sentence_judgments_leave_out_the_same_way(tmp_path):
    topics = {"t1": Topic("t1", ["s0", "s1", "s2"], "pre-split", [], 1)}
    path = tmp_path / "sentences.csv"
    path.write_text("topic,sentence_a,sentence_b,winner,judge,shown_first,criterion,review,excluded,review_note\n"
                    "t1,0,1,a,P1,a,importance,pending,0,\n"
                    "t1,0,2,b,P2,b,importance,rejected,1,random\n"
                    "t1,1,2,a,P3,a,importance,approved,0,\n", encoding="utf-8")
    assert [j.line for j in load_sentence_judgments(path, topics)] == [2, 4]
    chooser = RaterFilter(RaterChoice.of(["P3"], include_excluded=True), "sentences.csv")
    assert [j.line for j in load_sentence_judgments(path, topics, raters=chooser)] == [2, 3]
    assert [(e.rater, e.why) for e in chooser.exclusions.left_out] == [("P3", "named")]
    assert [(e.rater, e.note) for e in chooser.exclusions.kept_excluded] == [("P2", "random")]
    with pytest.raises(ImportFileError, match=r"sentences.csv:1: --exclude-raters: no rater P8"):
        load_sentence_judgments(path, topics, raters=RaterFilter(RaterChoice.of(["P8"]), "sentences.csv"))


def test_the_one_rule_on_raw_cells():
    assert DEFAULT_CHOICE.keeps_cells("P1", "0") and DEFAULT_CHOICE.keeps_cells("P1", None)
    assert not DEFAULT_CHOICE.keeps_cells("P1", "1")
    assert RaterChoice.of(include_excluded=True).keeps_cells("P1", "1")
    assert not RaterChoice.of(["=x"]).keeps_cells("'=x", "0")  # the cell as a spreadsheet-safe export writes it
