"""Pairwise study designs: balance of pairs, cases and sides; sentence pairs; the reader's example texts."""
from __future__ import annotations

import itertools
from collections import Counter

import pytest

from survey.pairwise_design import preference_design, reader_examples, sentence_pairs, side_counts

CASES = [(f"D{d}", f"U{u}") for d in range(6) for u in range(4)]  # 24 cases


@pytest.mark.parametrize(("n_systems", "per_pair"), [(2, 1), (3, 4), (4, 5), (5, 3), (10, 7), (6, 24)])
def test_every_pair_gets_its_cases_and_sides_balance(n_systems, per_pair):
    systems = [f"S{i}" for i in range(n_systems)]
    items = preference_design(CASES, systems, cases_per_pair=per_pair, seed=3)
    pairs = Counter(frozenset((i.model_a, i.model_b)) for i in items)
    assert set(pairs) == {frozenset(p) for p in itertools.combinations(systems, 2)}
    assert set(pairs.values()) == {per_pair}
    # a pair never sees one case twice
    for pair in pairs:
        cases = [i.case_id for i in items if frozenset((i.model_a, i.model_b)) == pair]
        assert len(set(cases)) == len(cases)
    # sides: equal for an even count or an odd number of systems, otherwise within one
    gaps = {abs(a - b) for a, b in side_counts(items).values()}
    if per_pair % 2 == 0 or n_systems % 2 == 1:
        assert gaps == {0}
    else:
        assert gaps == {1}
    # cases are dealt evenly: use counts differ by at most one
    uses = Counter(i.case_id for i in items)
    total = len(items)
    if total >= len(CASES):
        assert max(uses.values()) - min(uses.values()) <= 1 and len(uses) == len(CASES)


def test_the_design_is_seeded():
    systems = ["A", "B", "C"]
    first = preference_design(CASES, systems, cases_per_pair=5, seed=1)
    assert first == preference_design(CASES, systems, cases_per_pair=5, seed=1)
    assert first != preference_design(CASES, systems, cases_per_pair=5, seed=2)


def test_sides_by_hand():
    """Two systems, three cases: sides alternate A-B, B-A, then the tournament's winner (the first) first."""
    items = preference_design([("D1", "U1"), ("D2", "U2"), ("D3", "U3")], ["x", "y"], cases_per_pair=3, seed=0)
    assert [(i.model_a, i.model_b) for i in items] == [("x", "y"), ("y", "x"), ("x", "y")]
    assert side_counts(items) == {"x": (2, 1), "y": (1, 2)}  # two systems: an even number, off by one


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"systems": ["A"]}, "at least two systems"),
    ({"systems": ["A", "A"]}, "named twice"),
    ({"cases": []}, "no case"),
    ({"cases": [("D", "U"), ("D", "U")]}, "listed twice"),
    ({"cases_per_pair": 0}, "between 1 and the number of cases"),
    ({"cases_per_pair": 25}, r"between 1 and the number of cases \(24\)"),
])
def test_bad_designs_are_refused(kwargs, message):
    arguments = {"cases": CASES, "systems": ["A", "B"], "cases_per_pair": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        preference_design(arguments.pop("cases"), arguments.pop("systems"), seed=0, **arguments)


def test_sentence_pairs_are_distinct_unordered_and_seeded():
    pairs = sentence_pairs(30, pairs_per_topic=200, seed=4)
    assert len(pairs) == 200 == len(set(pairs))
    assert all(0 <= i < j < 30 for i, j in pairs)
    assert pairs == sentence_pairs(30, pairs_per_topic=200, seed=4) != sentence_pairs(30, pairs_per_topic=200, seed=5)
    assert sorted(sentence_pairs(5, pairs_per_topic=200, seed=0)) == list(itertools.combinations(range(5), 2))
    with pytest.raises(ValueError, match="at least two sentences"):
        sentence_pairs(1, seed=0)


def test_reader_examples_newest_history_first_never_the_case():
    own = {"D1": "one", "D2": "two", "D3": "three", "D5": "five", "D6": "six"}
    picked = reader_examples(own_texts=own, history=["D1", "D2", "D3", "D4"], documents=["D1", "D2", "D3", "D4",
                             "D5", "D6"], exclude="D3", k=3)
    # history newest first: D4 (no own text), D3 (the case), D2, D1; then outside the history: D5
    assert picked == [("D2", "two"), ("D1", "one"), ("D5", "five")]
    assert reader_examples(own_texts=own, history=[], documents=["D6", "D1"], exclude="D1", k=3) == [("D6", "six")]
    assert reader_examples(own_texts=own, history=["D1"], documents=["D1"], exclude="D9", k=0) == []


def test_pairs_per_case_gathers_a_questionnaire_worth_per_case():
    systems = ["A", "B", "C", "D"]  # 6 pairs
    items = preference_design(CASES, systems, cases_per_pair=6, pairs_per_case=3, seed=2)
    per_case = Counter(i.case_id for i in items)
    assert len(per_case) == 12 and set(per_case.values()) == {3}  # 36 items on ceil(36 / 3) = 12 cases
    assert Counter(frozenset((i.model_a, i.model_b)) for i in items) == {
        frozenset(p): 6 for p in itertools.combinations(systems, 2)}
    # never fewer cases than a pair needs: 2 systems, 5 cases each, 3 per case -> 5 cases, not 2
    few = preference_design(CASES, ["A", "B"], cases_per_pair=5, pairs_per_case=3, seed=2)
    assert len({i.case_id for i in few}) == 5
    with pytest.raises(ValueError, match="pairs per case"):
        preference_design(CASES, systems, cases_per_pair=2, pairs_per_case=0, seed=0)
