"""``Problems`` reports in line order however the checks found them; ``listed`` caps a long list."""
from __future__ import annotations

import pytest

from metaeval.core.io.fileio import ImportFileError, Problems, listed


def test_problems_are_raised_by_file_then_line_in_the_order_found_within_a_line():
    problems = Problems()
    problems.add("b.csv", 4, "shape")
    problems.add("a.jsonl", 9, "late")
    problems.add("b.csv", 2, "value")
    problems.add("b.csv", 4, "second of line 4")
    problems.add("a.jsonl", 1, "early")
    with pytest.raises(ImportFileError) as caught:
        problems.raise_if_any()
    assert caught.value.problems == ["b.csv:2: value", "b.csv:4: shape", "b.csv:4: second of line 4",
                                     "a.jsonl:1: early", "a.jsonl:9: late"]


def test_the_limit_stops_with_the_problems_so_far_in_line_order():
    problems = Problems(limit=3)
    problems.add("f", 5, "x")
    problems.add("f", 1, "y")
    with pytest.raises(ImportFileError) as caught:
        problems.add("f", 3, "z")
    assert caught.value.problems == ["f:1: y", "f:3: z", "f:5: x",
                                     "(stopped after 3 problems; fix these and run again)"]


def test_listed_caps_the_lines_and_says_how_many_more():
    assert listed(["a", "b"], limit=3) == "a\nb"
    assert listed([f"p{i}" for i in range(5)], limit=3) == "p0\np1\np2\n(and 2 more; fix these and run again)"
