"""The surrogate builder (perseval-tmlr sec. 6.2; docs/conventions.md sec. 25) on the hand-made axis-evals fixture:
combined gold (text and order), repetition counts, threshold, filters, duplicates and the kept / dropped report."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metaeval.core.feedback.reader import read_feedback
from metaeval.core.feedback.surrogates import SurrogateOptions, build_surrogates, repetitions
from metaeval.core.io.fileio import ImportFileError

FIXTURE = Path(__file__).resolve().parents[3] / "data" / "feedback" / "axis_evals_small.jsonl"
A, B, S, R = "sup4_ppo_rm3_kl10", "sup4_6b_ppo_rm4_6b_kl14", "sup4_6b", "ref"
TEXT = {  # the a1 summaries of the fixture
    R: "Council shuts the river bridge for repairs; traffic moves north.",
    S: "The bridge is closed.",
    A: "The river bridge closes for six weeks of repairs and shops fear fewer visitors.",
    B: "A Monday vote closes the bridge; drivers use the north crossing.",
}


def build(**options: Any) -> Any:
    return build_surrogates(read_feedback(FIXTURE), SurrogateOptions(**options), source=FIXTURE.name)


def article(result: Any, doc_id: str) -> dict[str, Any]:
    return next(item for item in result.report["articles"] if item["doc_id"] == doc_id)


def annotator(result: Any, doc_id: str, worker: str) -> dict[str, Any]:
    return next(item for item in article(result, doc_id)["annotators"] if item["worker"] == worker)


def record(result: Any, doc_id: str) -> dict[str, Any]:
    return next(item for item in result.records if item["doc_id"] == doc_id)


def test_combined_gold_text_and_policy_order() -> None:
    result = build()
    a1 = record(result, "a1")
    assert list(a1["m_summary_dict"]) == ["w1", "w2"]  # w3 rated nothing 7: no gold
    # w1 rated ref 7 and A 7: gold = ref then A (policy-name order), one space between
    assert a1["m_summary_dict"]["w1"]["user"] == f"{TEXT[R]} {TEXT[A]}"
    # w2 rated B 7 (line 5) and sup4_6b 7 (line 7): by name sup4_6b < sup4_6b_ppo_...
    assert a1["m_summary_dict"]["w2"]["user"] == f"{TEXT[S]} {TEXT[B]}"
    assert [g["policy"] for g in annotator(result, "a1", "w2")["gold"]] == [S, B]
    assert (a1["doc_summ"], a1["category"]) == ("Council closes river bridge for six weeks", "dailymail")
    assert a1["doc_text"].startswith("The town council")


def test_gold_order_file_and_separator() -> None:
    result = build(gold_order="file", separator="\n")
    w2 = record(result, "a1")["m_summary_dict"]["w2"]
    assert w2["user"] == f"{TEXT[B]}\n{TEXT[S]}"  # file order: line 5 before line 7
    assert w2[S] == "\n".join([TEXT[S]] * 2)
    assert [g["line"] for g in annotator(result, "a1", "w2")["gold"]] == [5, 7]


def test_repetition_counts_k_plus_rmax_minus_r() -> None:
    result = build()
    # w1: k = 2; ref 7 -> 2, sup4_6b 5 -> 4, B 4 -> 5, A 7 -> 2
    assert annotator(result, "a1", "w1")["repetitions"] == {R: 2, S: 4, B: 5, A: 2}
    # w2: k = 2; ref 6 -> 3, sup4_6b 7 -> 2, B 7 -> 2, A 3 -> 6
    assert annotator(result, "a1", "w2")["repetitions"] == {R: 3, S: 2, B: 2, A: 6}
    w1 = record(result, "a1")["m_summary_dict"]["w1"]
    assert w1[B] == " ".join([TEXT[B]] * 5) and w1[A] == " ".join([TEXT[A]] * 2)
    # a2, w3: k = 1 (B 7); A 2 -> 1 + 5 = 6
    assert annotator(result, "a2", "w3")["repetitions"] == {A: 6, B: 1}
    assert repetitions(3, 1, 7) == 9 and repetitions(1, 7, 7) == 1


@pytest.mark.parametrize(("rating", "copies"), [
    # the rating is rounded half up first (floor(r + 0.5)), then k + (r_max - rating): k = 1, r_max = 7
    (3.5, 4), (3.4, 5), (3.6, 4), (6.5, 1), (5.5, 2), (1.5, 6), (1.4, 7), (6.4, 2), (4.0, 4), (7.0, 1), (1.0, 7),
    (2.5, 5), (4.5, 3),  # half up, never to even: 2.5 -> 3 and 4.5 -> 5 (Python's round() would give 2 and 4)
])
def test_mean_rating_enters_rounded_half_up(rating: float, copies: int) -> None:
    assert repetitions(1, rating, 7) == copies
    assert repetitions(3, rating, 7) == copies + 2  # k adds one copy per gold summary


def test_duplicates_mean_of_three_and_four_writes_four_copies(tmp_path: Path) -> None:
    """conventions sec. 25 item 7: ratings 4 and 3 of one summary average 3.5, which counts as 4: 1 + 7 - 4 = 4."""
    def line(policy: str, text: str, rating: int) -> str:
        return json.dumps({"info": {"id": "d1", "title": "T", "article": "Body."},
                           "summary": {"text": text, "policy": policy, "axes": {"overall": rating}}, "worker": "w1"})

    path = tmp_path / "dup.jsonl"
    path.write_text("\n".join([line("gold", "Gold text.", 7), line("p", "Sum.", 4), line("p", "Sum.", 3),
                               line("q", "Other.", 2), line("q", "Other.", 2)]) + "\n", encoding="utf-8")
    result = build_surrogates(read_feedback(path), SurrogateOptions(duplicates="mean", min_annotators=1),
                              source=path.name)
    assert annotator(result, "d1", "w1")["repetitions"] == {"gold": 1, "p": 4, "q": 6}
    assert record(result, "d1")["m_summary_dict"]["w1"]["p"] == " ".join(["Sum."] * 4)
    # the ratings file keeps the mean unrounded
    assert {"doc_id": "d1", "reader": "w1", "system": "p", "rating": 3.5, "gold_mean": 7.0,
            "scale_max": 7} in result.ratings


def test_threshold_is_inclusive() -> None:
    result = build(gold_min=6)
    w2 = annotator(result, "a1", "w2")  # ref 6 now enters: k = 3
    assert w2["k"] == 3 and [g["policy"] for g in w2["gold"]] == [R, S, B]
    assert w2["gold_mean"] == pytest.approx(20 / 3, abs=1e-15)
    assert annotator(result, "a1", "w3")["kept"]  # A 6 is a gold now
    assert w2["repetitions"] == {R: 4, S: 3, B: 3, A: 7}
    assert annotator(result, "a3", "w1")["k"] == 2  # ref 7 and A 6
    assert annotator(result, "a3", "w2")["reason"] == "no_gold"  # ref 4 and A 5: still none
    assert article(result, "a3")["reason"] == "too_few_annotators"


def test_kept_and_dropped_report() -> None:
    result = build()
    totals = result.report["totals"]
    assert totals == {
        "records": 27, "ratings": 26, "null_axis": 1, "duplicates": 1, "articles_read": 4, "articles_kept": 3,
        "articles_dropped_by_reason": {"too_few_annotators": 1}, "annotators_kept": 5,
        "annotator_entries_kept": 7, "annotators_dropped_by_reason": {"no_gold": 3}, "surrogates": 17, "gaps": 4,
    }
    a3 = article(result, "a3")
    assert (a3["kept"], a3["reason"], a3["usable_annotators"]) == (False, "too_few_annotators", 1)
    assert annotator(result, "a1", "w3") | {"gold": None} == {
        "worker": "w3", "kept": False, "reason": "no_gold", "k": 0, "gold": None, "gold_mean": None, "repetitions": {}}
    a2 = article(result, "a2")
    assert a2["systems"] == [S, B, A]
    assert a2["gaps"] == [{"worker": "w1", "policy": S}, {"worker": "w3", "policy": S},
                          {"worker": "w2", "policy": B}, {"worker": "w2", "policy": A}]
    assert [item["doc_id"] for item in result.records] == ["a1", "a2", "t3_x1"]
    assert result.report["policies"]["seen"] == {R: 5, S: 3, B: 8, A: 10}
    assert "3 kept, dropped: 1 too_few_annotators" in result.summary()


def test_min_annotators() -> None:
    assert article(build(min_annotators=1), "a3")["kept"]
    assert [item["doc_id"] for item in build(min_annotators=3).records] == ["a2"]


def test_ratings_rows() -> None:
    rows = build().ratings
    assert rows[:2] == [
        {"doc_id": "a1", "reader": "w1", "system": R, "rating": 7.0, "gold_mean": 7.0, "scale_max": 7},
        {"doc_id": "a1", "reader": "w1", "system": S, "rating": 5.0, "gold_mean": 7.0, "scale_max": 7},
    ]
    assert len(rows) == 17 and {row["doc_id"] for row in rows} == {"a1", "a2", "t3_x1"}


def test_policy_pattern_with_gold_from_all_and_kept() -> None:
    result = build(policy_pattern="ppo")
    assert result.report["policies"]["kept"] == [B, A]
    assert result.report["policies"]["filtered_out"] == {R: 5, S: 3}
    w1 = record(result, "a1")["m_summary_dict"]["w1"]
    assert set(w1) == {"user", A, B} and w1["user"] == f"{TEXT[R]} {TEXT[A]}"  # gold from every policy
    assert annotator(result, "a2", "w2")["reason"] == "no_kept_policy"  # its gold (sup4_6b) is no system
    kept = build(policy_pattern="ppo", gold_from="kept")
    w2 = annotator(kept, "a1", "w2")
    assert [g["policy"] for g in w2["gold"]] == [B] and w2["repetitions"] == {B: 1, A: 5}
    assert record(kept, "a1")["m_summary_dict"]["w1"]["user"] == TEXT[A]


def test_policies_names_and_union_with_pattern() -> None:
    only_ref = build(policies=("ref", "missing_policy"))
    assert only_ref.report["policies"]["kept"] == [R]
    assert only_ref.report["policies"]["not_found"] == ["missing_policy"]
    assert [item["doc_id"] for item in only_ref.records] == ["a1"]
    assert article(only_ref, "a2")["reason"] == "too_few_annotators"
    both = build(policies=("ref",), policy_pattern="kl14$")
    assert both.report["policies"]["kept"] == [R, B]


def test_duplicates_first_mean_error() -> None:
    first = build()
    assert first.report["duplicates"] == [{"doc_id": "a2", "worker": "w1", "policy": B, "lines": [11, 17],
                                           "ratings": [7.0, 5.0], "rating_used": 7.0}]
    assert annotator(first, "a2", "w1")["k"] == 2
    mean = build(duplicates="mean")
    w1 = annotator(mean, "a2", "w1")  # B's mean 6 < 7 leaves the gold: k = 1; B repeated 1 + (7 - 6) = 2
    assert w1["k"] == 1 and w1["repetitions"] == {B: 2, A: 1}
    assert {"doc_id": "a2", "reader": "w1", "system": B, "rating": 6.0, "gold_mean": 7.0,
            "scale_max": 7} in mean.ratings
    with pytest.raises(ImportFileError) as info:
        build(duplicates="error")
    assert info.value.problems == [
        'axis_evals_small.jsonl:17: field "summary.policy": "sup4_6b_ppo_rm4_6b_kl14" rated again by worker "w1" '
        'for document "a2" (first at line 11; use --duplicates first or mean)'
    ]


def test_invalid_options() -> None:
    with pytest.raises(ValueError, match="gold_min"):
        SurrogateOptions(gold_min=8)
    with pytest.raises(ValueError, match="regular expression"):
        SurrogateOptions(policy_pattern="(")
