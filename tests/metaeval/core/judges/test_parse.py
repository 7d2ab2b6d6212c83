"""The answer parsing rule (conventions sec. 20, item 4)."""
from __future__ import annotations

import pytest

from metaeval.core.judges.parse import parse_answer


@pytest.mark.parametrize(("raw", "answer"), [
    ("A", "A"), ("B", "B"), ("a", "A"), ("b\n", "B"), ("  A  ", "A"), ("\n\n  B\nA", "B"),
    ("Text A", "A"), ("TEXT b", "B"), ("Response B", "B"), ("Option A.", "A"),
    ("(A)", "A"), ("[B]", "B"), ("( A )", "A"), ("A)", "A"), ("A.", "A"), ("B:", "B"), ("A!", "A"),
    ("**A**", "A"), ("`B`", "B"), ('"A"', "A"), ("__B__", "B"),
    ("Answer: B", "B"), ("answer: a", "A"), ("Final answer: **B**", "B"), ("The answer is A", "A"),
    ("Answer - A", "A"), ("Winner: Text B", "B"), ("Better text: A", "A"), ("Choice: (B)", "B"),
    ("A. It reads more smoothly.", "A"), ("B) because it is shorter", "B"), ("A - more fluent", "A"),
    ("A: it has a clear flow", "A"), ("Text B is better", "B"), ("(A) is more fluent", "A"),
    ("B\nBecause text A rambles.", "B"),
])
def test_accepted(raw, answer):
    assert parse_answer(raw) == answer


@pytest.mark.parametrize("raw", [
    None, "", "   \n\t\n", "A or B", "A/B", "A,B", "A and B", "Text A is better than Text B", "(A) not (B)",
    "B. A clearer text", "A, not b", "A better one is B", "A is better", "Apple", "Text Apple", "About B",
    "Tie", "tie", "Both", "Neither", "I cannot decide between the two texts.", "I'm sorry, I can't help with that.",
    "C", "(A", "1", "Answer:", "The first one",
])
def test_invalid(raw):
    assert parse_answer(raw) is None
