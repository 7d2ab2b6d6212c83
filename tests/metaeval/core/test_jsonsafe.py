"""metaeval.core.jsonsafe: the one JSON rule (at most MAX_JSON_DEPTH levels, no NUL character), and the file readers'
use of it (fileio: file:line, the other values still read and their problems listed)."""
from __future__ import annotations

import json

import pytest

from metaeval.core import jsonsafe
from metaeval.core.io.fileio import ImportFileError, Problems, decode_bytes, iter_json_values
from metaeval.core.jsonsafe import MAX_JSON_DEPTH, JSONInputError


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_depth_up_to_the_limit_is_read_beyond_it_refused():
    assert jsonsafe.loads(_nested(MAX_JSON_DEPTH)) is not None
    for depth in (MAX_JSON_DEPTH + 1, 990, 100_000):  # below and beyond Python's own recursion limit
        with pytest.raises(JSONInputError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
            jsonsafe.loads(_nested(depth))
    deep = {"a": json.loads(_nested(MAX_JSON_DEPTH))}
    problem = jsonsafe.check_value(deep)
    assert problem.startswith(f'nested deeper than {MAX_JSON_DEPTH} levels at "a[0][0]') and problem.endswith('..."')


def test_a_nul_character_anywhere_is_named_by_its_place():
    assert jsonsafe.check_value({"a": [1, {"b": "x\x00"}]}) == 'NUL character in "a[1].b"'
    assert jsonsafe.check_value({"a": {"k\x00": 1}}) == 'NUL character in a key of "a"'
    assert jsonsafe.check_value("\x00") == "NUL character"
    with pytest.raises(JSONInputError, match='NUL character in "name"'):
        jsonsafe.loads('{"name": "a\\u0000b"}')
    assert jsonsafe.loads('"a\\\\u0000b"') == "a\\u0000b"  # an escaped backslash: no NUL
    with pytest.raises(json.JSONDecodeError):
        jsonsafe.loads("{")


def test_files_name_the_line_and_keep_reading():
    text = "\n".join([json.dumps({"id": 1}), json.dumps({"id": "x\x00"}), _nested(MAX_JSON_DEPTH + 1),
                      json.dumps({"id": 4})]) + "\n"
    problems = Problems()
    values = [value for _, value in iter_json_values(text, "f.jsonl", problems)]
    assert values == [{"id": 1}, {"id": 4}]
    assert problems.items[0] == 'f.jsonl:2: NUL character in "id"'
    assert problems.items[1].startswith(f'f.jsonl:3: nested deeper than {MAX_JSON_DEPTH} levels at "[0][0]')
    problems = Problems()
    assert list(iter_json_values("[" + json.dumps({"id": 1}) + ",\n" + _nested(5000) + "]", "a.json", problems)) \
        == [(1, {"id": 1})]
    # 5000 levels: the parser's recursion limit stops it (no path), or, where the limit is higher (pytest-xdist's
    # workers raise it), the decoded value is refused with the path where it goes too deep
    assert len(problems.items) == 1
    assert problems.items[0].startswith(f"a.json:2: nested deeper than {MAX_JSON_DEPTH} levels")
    with pytest.raises(ImportFileError, match=r"^f.csv:3: NUL character \(a text file has none"):
        decode_bytes(b"a,b\n1,2\n3,\x00\n", "f.csv")
