"""metaeval.core.perseval.human: ratings -> distances -> HJ rows (conventions sec. 7)."""
from __future__ import annotations

import pytest

from metaeval.core.io.corpus import Corpus, DataError, Document, Rating, RatingTable
from metaeval.core.perseval.human import human_doc_pairs, pair_distances, plan_human, rating_distance


def test_rating_distance_compat_truncates_and_rounds():
    # round(1 - (int(r) - 1)/5, 5): 6 -> 0, 1 -> 1, 4.9 -> int 4 -> 0.4
    assert rating_distance(6, compat=True) == 0.0
    assert rating_distance(1, compat=True) == 1.0
    assert rating_distance(4.9, compat=True) == 0.4
    assert rating_distance(3, compat=True) == 0.6


def test_rating_distance_default_is_linear_and_unrounded():
    # (6 - r) / (6 - 1)
    assert rating_distance(4.9, compat=False) == pytest.approx(1.1 / 5, abs=1e-15)
    assert rating_distance(2, compat=False) == 0.8
    assert rating_distance(4, compat=False, scale=(1, 5)) == 0.25


def table(*rows: tuple[str, str, str, str, float]) -> RatingTable:
    return RatingTable(tuple(Rating(*row, line=i + 2) for i, row in enumerate(rows)), source="r.csv")


def test_duplicates_are_averaged_and_compat_keeps_the_stored_order():
    ratings = table(("d", "S", "a", "b", 6), ("d", "S", "a", "b", 4), ("d", "S", "b", "c", 1))
    compat = pair_distances(ratings, compat=True)
    # 6 -> 0.0 and 4 -> 1 - 3/5 = 0.4, mean 0.2
    assert compat == {("d", "S", "a", "b"): pytest.approx(0.2), ("d", "S", "b", "c"): 1.0}
    default = pair_distances(ratings, compat=False)
    # each rating counts for both orders: (a,b) and (b,a) both average 0 and 0.4
    assert default[("d", "S", "a", "b")] == default[("d", "S", "b", "a")] == pytest.approx(0.2)
    assert default[("d", "S", "c", "b")] == 1.0


def test_symmetric_default_merges_both_orders():
    ratings = table(("d", "S", "a", "b", 6), ("d", "S", "b", "a", 1))
    default = pair_distances(ratings, compat=False)
    assert default[("d", "S", "a", "b")] == default[("d", "S", "b", "a")] == 0.5
    compat = pair_distances(ratings, compat=True)
    assert compat[("d", "S", "a", "b")] == 0.0 and compat[("d", "S", "b", "a")] == 1.0


def corpus() -> Corpus:
    summaries = {uid: {"user": f"user {uid}", "S": f"system {uid}"} for uid in ("a", "b", "c")}
    return Corpus((Document("d", "Head", "Body", summaries),), ("S",))


def test_unknown_reader_or_document_names_the_line():
    with pytest.raises(DataError, match=r'r.csv:3: document "d" has no reader "zz"'):
        plan_human(corpus(), table(("d", "S", "a", "b", 3), ("d", "S", "a", "zz", 3)), compat=True)
    with pytest.raises(DataError, match=r'r.csv:2: document "nope" is not in the dataset'):
        plan_human(corpus(), table(("nope", "S", "a", "b", 3)), compat=True)


def test_rows_need_a_user_pair_and_counts_say_why_not():
    ratings = table(
        ("d", "user", "a", "b", 2), ("d", "S", "a", "b", 5), ("d", "S", "a", "c", 4), ("d", "user", "b", "c", 1)
    )
    plan = plan_human(corpus(), ratings, compat=True)
    aux = {pair: 0.5 for pair in plan.text_pairs()}
    docs, counts = human_doc_pairs(plan, "S", aux)
    assert counts.rated_pairs == 2 and counts.rows == 1 and counts.skipped_no_user_pair == 1
    [doc] = docs
    assert doc.user_pairs == {("a", "b"): 0.8, ("b", "c"): 1.0}
    assert doc.system_pairs == {("a", "b"): 0.2, ("a", "c"): 0.4}
    # sigma(., d) and accuracy are borrowed from the auxiliary measure for every rated reader
    assert set(doc.user_doc) == {"a", "b", "c"} and doc.accuracy == {"a": 0.5, "b": 0.5, "c": 0.5}
