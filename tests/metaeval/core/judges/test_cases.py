"""Judge cases: the JSON Lines loader and its file:line problems."""
from __future__ import annotations

import json

import pytest

from metaeval.core.io.fileio import ImportFileError
from metaeval.core.judges.cases import JudgeCase, load_cases, parse_cases


def line(**fields: object) -> str:
    base: dict[str, object] = {"case_id": "c1", "model_a": "x", "model_b": "y", "text_a": "ta", "text_b": "tb"}
    base.update(fields)
    return json.dumps({key: value for key, value in base.items() if value is not ...})


def test_load_full_case(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text(line(context="Q", examples=["u1", "u2"], doc_id="d1", reader_id=7) + "\n"
                    + line(case_id=2) + "\n", encoding="utf-8")
    first, second = load_cases(path)
    assert first == JudgeCase("c1", "x", "y", "ta", "tb", "Q", ("u1", "u2"), "d1", "7", 1)
    assert second.case_id == "2" and second.examples == () and second.context == "" and second.line == 2
    assert first.text_of("model_b") == "tb"
    with pytest.raises(ValueError):
        first.text_of("b")


def test_every_problem_is_named_with_its_line():
    text = "\n".join([
        line(case_id=...),                      # 1: missing
        line(text_a=3),                         # 2: wrong type
        line(model_b="x"),                      # 3: a system against itself
        line(case_id="k"),                      # 4: fine
        line(case_id="k"),                      # 5: duplicate
        line(case_id="k2", examples="u"),       # 6: examples not an array
        line(case_id="k3", examples=["u", 1]),  # 7: item not a string
        "[1]",                                  # 8: not an object
        line(case_id="  "),                     # 9: empty id
    ])
    with pytest.raises(ImportFileError) as info:
        parse_cases(text, "cases.jsonl")
    problems = info.value.problems
    assert problems == [
        'cases.jsonl:1: field "case_id" is missing',
        'cases.jsonl:2: field "text_a" must be a string, found number',
        'cases.jsonl:3: field "model_b": the same system as model_a ("x"); a system cannot be compared with itself',
        'cases.jsonl:5: field "model_b": the case ("k", "x", "y") is already on line 4',
        'cases.jsonl:6: field "examples" must be an array of strings, found string',
        'cases.jsonl:7: field "examples": item 2 must be a string, found number',
        "cases.jsonl:8: expected a JSON object (one case), found array",
        'cases.jsonl:9: field "case_id" must not be empty',
    ]


def test_same_case_other_pair_is_allowed_and_empty_file_is_an_error():
    cases = parse_cases(line() + "\n" + line(model_b="z"), "f")
    assert [case.key for case in cases] == [("c1", "x", "y"), ("c1", "x", "z")]
    with pytest.raises(ImportFileError, match=r"f:1: no cases \(the file is empty\)"):
        parse_cases("", "f")
    with pytest.raises(ImportFileError, match="f:2: invalid JSON"):
        parse_cases(line() + "\n{oops", "f")
