"""Pure design functions: coverage, grouping, pair sampling, determinism, per-participant order."""
from __future__ import annotations

import itertools
from collections import Counter

import pytest

from survey import design

SYSTEMS = [f"S{i:02d}" for i in range(10)]


def complete(doc_readers):
    return lambda d, r, s: r in doc_readers[d]


def test_groups_are_balanced():
    assert [len(g) for g in design.split_into_groups(SYSTEMS, 5)] == [5, 5]
    assert [len(g) for g in design.split_into_groups(SYSTEMS, 4)] == [4, 3, 3]
    assert [len(g) for g in design.split_into_groups(SYSTEMS, 10)] == [10]
    assert [len(g) for g in design.split_into_groups(SYSTEMS[:9], 9)] == [9]  # iCOPERNICUS: 9 in one set
    assert design.split_into_groups([], 5) == []
    with pytest.raises(ValueError):
        design.split_into_groups(SYSTEMS, 0)


def test_every_pair_covers_every_system_once_with_reference_in_each_questionnaire():
    docs = {"d1": ["a", "b", "c", "d"], "d2": ["a", "c", "e"]}
    report = design.design_study(docs, SYSTEMS, complete(docs), systems_per_questionnaire=5, seed=3)
    by_pair = {}
    for q in report.questionnaires:
        assert q.systems[0] == "user"
        assert len(q.model_systems) == 5
        by_pair.setdefault((q.doc_id, q.reader_j, q.reader_k), []).extend(q.model_systems)
    expected_pairs = {("d1", j, k) for j, k in itertools.combinations(docs["d1"], 2)} | {
        ("d2", j, k) for j, k in itertools.combinations(docs["d2"], 2)
    }
    assert set(by_pair) == expected_pairs
    for systems in by_pair.values():
        assert Counter(systems) == Counter(SYSTEMS)  # every system exactly once per reader pair
    assert len(report.questionnaires) == 2 * len(expected_pairs)
    assert report.skipped == []


def test_same_seed_same_design_other_seed_other_grouping():
    docs = {f"d{i}": ["a", "b", "c"] for i in range(6)}
    one = design.design_study(docs, SYSTEMS, complete(docs), seed=42).questionnaires
    again = design.design_study(docs, SYSTEMS, complete(docs), seed=42).questionnaires
    other = design.design_study(docs, SYSTEMS, complete(docs), seed=43).questionnaires
    assert one == again
    assert [q.systems for q in one] != [q.systems for q in other]


def test_sample_mode_draws_m_pairs_per_document_deterministically():
    docs = {f"d{i}": ["a", "b", "c", "d", "e"] for i in range(5)}
    report = design.design_study(
        docs, SYSTEMS, complete(docs), pair_mode="sample", pairs_per_document=2, seed=9
    )
    pairs = Counter((q.doc_id, q.reader_j, q.reader_k) for q in report.questionnaires)
    per_doc = Counter(doc for doc, _, _ in pairs)
    assert set(per_doc.values()) == {2}
    assert all(count == 2 for count in pairs.values())  # two system groups per sampled pair
    again = design.design_study(docs, SYSTEMS, complete(docs), pair_mode="sample", pairs_per_document=2, seed=9)
    assert again.questionnaires == report.questionnaires
    with pytest.raises(ValueError):
        design.design_study(docs, SYSTEMS, complete(docs), pair_mode="sample", pairs_per_document=None)
    with pytest.raises(ValueError):
        design.design_study(docs, SYSTEMS, complete(docs), pair_mode="every")


def test_missing_summaries_are_skipped_and_reported():
    docs = {"d1": ["a", "b", "c"], "d2": ["a"]}

    def has(d, r, s):
        if s == "user":
            return not (d == "d1" and r == "c")  # reader c wrote no reference for d1
        return not (r == "b" and s == "S03")  # system S03 has no summary for reader b

    report = design.design_study(docs, SYSTEMS, has, seed=1)
    assert {(q.reader_j, q.reader_k) for q in report.questionnaires} == {("a", "b")}
    covered = [s for q in report.questionnaires for s in q.model_systems]
    assert sorted(covered) == sorted(s for s in SYSTEMS if s != "S03")
    assert any("reader c has no reference" in m for m in report.skipped)
    assert any("d2" in m and "fewer than two" in m for m in report.skipped)
    assert any("S03 lacks a summary" in m for m in report.skipped)


def test_duplicate_systems_rejected():
    with pytest.raises(ValueError, match="duplicate"):
        design.design_study({"d": ["a", "b"]}, ["X", "X"], lambda *a: True)


def test_presentation_order_is_a_seeded_permutation_with_both_sides_used():
    items = list(range(100, 106))
    first = design.presentation_order(items, 5)
    assert sorted(p.item for p in first) == items
    assert design.presentation_order(items, 5) == first
    orders = {tuple(p.item for p in design.presentation_order(items, s)) for s in range(40)}
    assert len(orders) > 30  # shuffled per participant
    swaps = [p.swap for s in range(40) for p in design.presentation_order(items, s)]
    assert 0.35 < sum(swaps) / len(swaps) < 0.65
