"""Style features of a judgment file: the columns, their values per text, the covariates, and the errors."""
from __future__ import annotations

import pytest

from metaeval.core.io.fileio import ImportFileError
from metaeval.core.judges.cases import JudgeCase
from metaeval.core.pairwise.features import (
    LENGTH,
    StyleData,
    load_style_data,
    parse_style_data,
    style_data_from_cases,
    word_count,
)

HEAD = "case_id,criterion,model_a,model_b,winner"


def csv(text: str) -> StyleData:
    return parse_style_data(text, "j.csv", json_lines=False)


def test_lengths_from_texts_and_the_covariates():
    data = csv(f"{HEAD},text_a,text_b\n"
               "c1,q,A,B,model_a,one two three,one\n"
               "c1,r,B,A,model_b,one,one two three\n"   # the same texts, sides swapped
               "c2,q,A,B,tie,,\n")                     # unknown
    assert data.names == [LENGTH]
    assert data.length("c1", "A") == 3.0 and data.length("c1", "B") == 1.0 and data.length("c2", "A") is None
    assert data.covariate(LENGTH, "c1", "A", "B") == pytest.approx(0.5)    # (3 - 1) / (3 + 1)
    assert data.covariate(LENGTH, "c1", "B", "A") == pytest.approx(-0.5)
    assert data.covariates([LENGTH], "c2", "A", "B") is None
    assert word_count("  a\tb\nc ") == 3 and word_count("") == 0


def test_lengths_features_and_differences():
    data = csv(f"{HEAD},length_a,length_b,feature_lists_a,feature_lists_b,style_bold\n"
               "c1,q,A,B,model_a,10,0,2,1,0.5\n"
               "c1,q,A,C,model_a,10,0,2,,\n"
               "c2,q,B,A,model_a,,,0,3,-1\n")
    assert data.names == [LENGTH, "lists", "bold"]
    assert data.covariates(data.names, "c1", "A", "B") == [1.0, 1.0, 0.5]
    assert data.covariates(data.names, "c1", "B", "A") == [-1.0, -1.0, -0.5]
    assert data.covariate(LENGTH, "c1", "A", "C") == 1.0        # (10 - 0) / 10
    assert data.covariate("lists", "c1", "A", "C") is None      # C's feature unknown
    assert data.covariate("bold", "c2", "A", "B") == 1.0        # given for B against A as -1
    assert data.covariate(LENGTH, "c2", "A", "B") is None


def test_zero_lengths_give_zero_and_length_columns_win_over_texts():
    data = csv(f"{HEAD},text_a,text_b,length_a,length_b\nc1,q,A,B,model_a,a b c,d,0,0\nc2,q,A,B,tie,a b,c,,\n")
    assert data.covariate(LENGTH, "c1", "A", "B") == 0.0
    assert data.covariate(LENGTH, "c2", "A", "B") == pytest.approx(1 / 3)   # texts where lengths are empty


def test_json_lines(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"case_id": "c1", "criterion": "q", "model_a": "A", "model_b": "B", "winner": "tie", '
                    '"text_a": "x y", "text_b": "z"}\n'
                    '{"case_id": 7, "criterion": "q", "model_a": "A", "model_b": "B", "winner": "tie", '
                    '"feature_n_a": 1, "feature_n_b": "2.5"}\n', encoding="utf-8")
    data = load_style_data(path)
    assert data.names == [LENGTH, "n"]
    assert data.length("c1", "A") == 2.0
    assert data.covariate("n", "7", "A", "B") == -1.5


def test_a_file_without_style_columns_is_empty():
    data = csv(f"{HEAD}\nc1,q,A,B,model_a\n")
    assert not data and data.names == []


def test_spreadsheet_safe_text_cells_are_read_back():
    data = csv(f"{HEAD},text_a,text_b\nc1,q,A,B,model_a,'-1 point,x y\n")
    assert data.length("c1", "A") == 2.0


@pytest.mark.parametrize(("text", "message"), [
    (f"{HEAD},text_a\nc1,q,A,B,tie,x\n", 'has the column "text_a" but not "text_b"'),
    (f"{HEAD},feature_n_a\nc1,q,A,B,tie,1\n", 'has the column "feature_n_a" but not "feature_n_b"'),
    (f"{HEAD},length_a,length_b\nc1,q,A,B,tie,x,1\n", r'j.csv:2: field "length_a" must be a number >= 0, found \'x\''),
    (f"{HEAD},length_a,length_b\nc1,q,A,B,tie,-1,1\n", "must be a number >= 0"),
    (f"{HEAD},style_n\nc1,q,A,B,tie,inf\n", 'field "style_n" must be a finite number'),
    (f"{HEAD},feature_length_a,feature_length_b\nc1,q,A,B,tie,1,1\n", '"length" is reserved'),
    (f"{HEAD},feature_n_a,feature_n_b,style_n\nc1,q,A,B,tie,1,1,1\n", "both as feature_n_a/_b and as style_n"),
    (f"{HEAD},text_a,text_b\nc1,q,A,B,tie,x y,z\nc1,r,A,C,tie,x,z\n",
     r'j.csv:3: field "text_a": length 1 of system "A" on case "c1", but 2 on line 2'),
    (f"{HEAD},style_n\nc1,q,A,B,tie,1\nc1,q,B,A,tie,1\n",
     r'j.csv:3: field "style_n": 1 for "B" against "A" on case "c1", but -1 on line 2'),
])
def test_errors_name_the_file_and_line(text, message):
    with pytest.raises(ImportFileError, match=message):
        csv(text)


def test_lengths_from_a_cases_file_and_merging():
    cases = [JudgeCase("c1", "A", "B", "one two", "one", line=1), JudgeCase("c1", "A", "C", "one two", "x y z", line=2)]
    from_cases = style_data_from_cases(cases, "cases.jsonl")
    assert from_cases.length("c1", "C") == 3.0
    with pytest.raises(ImportFileError, match='cases.jsonl:2: field "text_a": length 3 of system "A"'):
        style_data_from_cases([*cases, JudgeCase("c1", "A", "D", "a b c", "d", line=2)], "cases.jsonl")
    from_file = csv(f"{HEAD},length_a,length_b\nc1,q,A,B,tie,5,\n")
    merged = from_file.merged(from_cases)
    assert merged.length("c1", "A") == 5.0   # the judgment file wins
    assert merged.length("c1", "B") == 1.0   # the cases fill in
