"""The judgment table loader: layout, every problem at once as ``file:line: field``, the judge_kind filter."""
from __future__ import annotations

import json

import pytest

from metaeval.core.io.fileio import ImportFileError
from metaeval.core.pairwise.judgments import load_judgments, with_judge_kind

HEADER = "case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,shown_first,doc_id,reader_id\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_rows_with_their_lines_and_optional_fields(tmp_path):
    path = write(tmp_path, "j.csv", HEADER + "c1,quality,A,B,model_a,h1,human,,model_b,d1,r1\n\n"
                 "c1,quality,A,B,invalid,gpt,llm,2,,,\n")
    table = load_judgments(path)
    first, second = table.judgments
    assert (first.case_id, first.winner, first.judge_kind, first.run, first.shown_first, first.line) == (
        "c1", "model_a", "human", None, "model_b", 2)
    assert (second.winner, second.run, second.line) == ("invalid", 2, 4)
    assert table.invalid == 1 and table.valid() == [first]


def test_only_the_required_columns_in_any_order(tmp_path):
    path = write(tmp_path, "j.csv", "winner,model_b,model_a,criterion,case_id,extra\ntie,B,A,q,7,x\n")
    (judgment,) = load_judgments(path).judgments
    assert (judgment.case_id, judgment.model_a, judgment.model_b, judgment.winner) == ("7", "A", "B", "tie")


def test_jsonl_by_extension(tmp_path):
    lines = [{"case_id": 3, "criterion": "q", "model_a": "A", "model_b": "B", "winner": "model_b", "run": 1},
             {"case_id": "4", "criterion": "q", "model_a": "B", "model_b": "A", "winner": "tie"}]
    path = write(tmp_path, "j.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n")
    first, second = load_judgments(path).judgments
    assert (first.case_id, first.run, first.line, second.line) == ("3", 1, 1, 2)


def test_every_problem_is_listed_with_file_line_and_field(tmp_path):
    path = write(tmp_path, "bad.csv", HEADER
                 + "c1,q,A,B,A wins,,,,,,\n"  # 2: unknown winner
                 + "c1,q,A,A,tie,,,,,,\n"  # 3: a model playing itself
                 + "c1,q,A,B,tie,,,0,left,,\n"  # 4: run < 1, shown_first unknown
                 + ",overall,A,B,tie,,,,,,\n")  # 5: empty case_id, reserved criterion
    with pytest.raises(ImportFileError) as caught:
        load_judgments(path)
    problems = caught.value.problems
    assert problems[0] == 'bad.csv:2: field "winner": unknown value "A wins" (expected model_a|model_b|tie|invalid)'
    assert problems[1].startswith('bad.csv:3: field "model_b": the same system as model_a ("A")')
    assert problems[2].startswith('bad.csv:4: field "shown_first": unknown value "left"')
    assert problems[3] == "bad.csv:4: field \"run\" must be an integer from 1 to 32767, found '0'"
    assert problems[4] == 'bad.csv:5: field "case_id" must not be empty'
    assert problems[5].startswith('bad.csv:5: field "criterion": "overall" is reserved')
    assert len(problems) == 6


def test_missing_required_column(tmp_path):
    path = write(tmp_path, "j.csv", "case_id,criterion,model_a,winner\nc,q,A,tie\n")
    with pytest.raises(ImportFileError, match=r'^j.csv:1: the header lacks the column "model_b"'):
        load_judgments(path)


def test_jsonl_missing_field(tmp_path):
    path = write(tmp_path, "j.jsonl", '{"case_id": "c", "criterion": "q", "model_a": "A", "winner": "tie"}\n')
    with pytest.raises(ImportFileError, match=r'^j.jsonl:1: field "model_b" is missing$'):
        load_judgments(path)


@pytest.mark.parametrize("text", ["", HEADER])
def test_no_judgments(tmp_path, text):
    path = write(tmp_path, "j.csv", text)
    with pytest.raises(ImportFileError, match=r"^j.csv:1: no judgments"):
        load_judgments(path)


def test_judge_kind_filter(tmp_path):
    path = write(tmp_path, "j.csv", HEADER + "c1,q,A,B,model_a,h,human,,,,\nc1,q,A,B,model_b,m,llm,1,,,\n"
                 "c2,q,A,B,invalid,m,llm,1,,,\n")
    table = load_judgments(path)
    assert [j.line for j in with_judge_kind(table, "llm").judgments] == [3, 4]
    assert with_judge_kind(table, "llm").invalid == 1
    assert [j.line for j in with_judge_kind(table, ["human", "llm"]).judgments] == [2, 3, 4]


def test_spreadsheet_safe_cells_are_read_back(tmp_path):
    path = write(tmp_path, "j.csv", "case_id,criterion,model_a,model_b,winner\nc,q,'=A,'-B,model_a\n")
    (judgment,) = load_judgments(path).judgments
    assert (judgment.model_a, judgment.model_b) == ("=A", "-B")


def test_a_row_with_a_wrong_field_count(tmp_path):
    path = write(tmp_path, "j.csv", "case_id,criterion,model_a,model_b,winner\nc,q,A,B\n")
    with pytest.raises(ImportFileError, match=r"^j.csv:2: expected 5 fields as in the header, found 4$"):
        load_judgments(path)
