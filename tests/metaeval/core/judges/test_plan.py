"""The order-balanced plan (conventions sec. 20, item 2)."""
from __future__ import annotations

from collections import Counter

import pytest

from metaeval.core.judges.cases import JudgeCase
from metaeval.core.judges.plan import DEFAULT_RUNS, PlanError, plan

CASES = [JudgeCase("c1", "x", "y", "a", "b", "Q", ("u",)), JudgeCase("c2", "y", "z", "a", "b", "Q", ("u",))]


def test_default_plan_is_balanced_and_in_order():
    requests = plan(CASES, ["quality", "relevance", "personalization"])
    assert DEFAULT_RUNS == 40 and len(requests) == 2 * 3 * 40
    sides = Counter((r.case.case_id, r.criterion, r.shown_first) for r in requests)
    assert set(sides.values()) == {20} and len(sides) == 2 * 3 * 2
    assert [(r.case.case_id, r.criterion, r.run, r.shown_first) for r in requests[:3]] == [
        ("c1", "quality", 1, "model_a"), ("c1", "quality", 2, "model_b"), ("c1", "quality", 3, "model_a")]
    assert [r.criterion for r in requests[38:42]] == ["quality", "quality", "relevance", "relevance"]
    assert requests[-1].key == ("c2", "y", "z", "personalization", 40)
    assert plan(CASES, ["quality"], runs=2) == plan(CASES, ["quality"], runs=2)  # deterministic


@pytest.mark.parametrize("runs", [0, 1, 3, 41, -2, True])
def test_runs_must_be_even(runs):
    with pytest.raises(PlanError, match="even"):
        plan(CASES, ["quality"], runs=runs)


def test_criteria_checks_and_missing_inputs():
    with pytest.raises(PlanError, match="no criteria"):
        plan(CASES, [])
    with pytest.raises(PlanError, match="more than once: quality"):
        plan(CASES, ["quality", "quality"])
    bare = [JudgeCase("c9", "x", "y", "a", "b", line=3)]
    assert len(plan(bare, ["quality"], runs=2)) == 2
    with pytest.raises(PlanError) as info:
        plan(bare, ["relevance", "personalization"], runs=2)
    assert str(info.value) == ('line 3: case "c9" has no context, which relevance needs\n'
                               'line 3: case "c9" has no examples, which personalization needs')
