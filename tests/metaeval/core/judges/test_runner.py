"""The runner: order mapping, invalid answers and failed calls, resuming, plan order under concurrency."""
from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence

import pytest

from metaeval.core.judges.base import JudgeError
from metaeval.core.judges.cases import JudgeCase
from metaeval.core.judges.openai_http import OpenAIJudge
from metaeval.core.judges.plan import plan
from metaeval.core.judges.prompts import DEFAULT_TEMPLATES, Template, TemplateError
from metaeval.core.judges.runner import JudgmentRecord, iter_judging, run_judging, winner_of

CASES = [
    JudgeCase("c1", "good", "bad", "GOOD text", "BAD text", "Q", ("u",), "d1", "r1"),
    JudgeCase("c2", "bad", "good", "BAD text", "GOOD text", "Q", ("u",), "d2", "r2"),
]


class Scripted:
    """A judge answering from a function of the user message; records the calls' threads."""

    def __init__(self, answer, name: str = "scripted", delay=None) -> None:
        self.answer, self.name, self.delay = answer, name, delay
        self.calls: list[str] = []
        self.threads: set[str] = set()
        self.lock = threading.Lock()

    def describe(self) -> dict[str, object]:
        return {"kind": "scripted"}

    def complete(self, messages: Sequence[Mapping[str, str]]) -> str:
        user = messages[-1]["content"]
        with self.lock:
            self.calls.append(user)
            self.threads.add(threading.current_thread().name)
        if self.delay:
            time.sleep(self.delay(user))
        return self.answer(user)


def prefers_good(user: str) -> str:
    return "A" if user.index("GOOD") < user.index("BAD") else "B"


def test_winner_mapping_under_both_orders():
    assert winner_of("A", "model_a") == "model_a" and winner_of("B", "model_a") == "model_b"
    assert winner_of("A", "model_b") == "model_b" and winner_of("B", "model_b") == "model_a"
    assert winner_of(None, "model_b") == "invalid"


def test_good_system_wins_in_both_orders():
    records = run_judging(Scripted(prefers_good), plan(CASES, ["quality", "relevance"], runs=4),
                          templates=DEFAULT_TEMPLATES)
    assert len(records) == 2 * 2 * 4
    for record in records:
        case = next(c for c in CASES if c.case_id == record.case_id)
        assert getattr(case, record.winner) == "good"
        assert record.raw in ("A", "B") and record.error == "" and record.judge == "scripted"
        assert record.judge_kind == "llm" and record.seconds >= 0
    # the raw letter flips with the order, the winner does not
    c1 = [(r.shown_first, r.raw, r.winner) for r in records if r.case_id == "c1" and r.criterion == "quality"]
    assert c1 == [("model_a", "A", "model_a"), ("model_b", "B", "model_a")] * 2
    assert records[0].doc_id == "d1" and records[0].reader_id == "r1"


def test_position_biased_judge_gives_balanced_wins():
    records = run_judging(Scripted(lambda user: "A"), plan(CASES, ["quality"], runs=6), templates=DEFAULT_TEMPLATES)
    for case in CASES:
        assert Counter(r.winner for r in records if r.case_id == case.case_id) == {"model_a": 3, "model_b": 3}


def test_unparseable_and_failed_calls_are_invalid_and_the_run_goes_on():
    def answer(user: str) -> str:
        if "GOOD text" in user.split("Text A:")[1][:12]:
            raise JudgeError("HTTP 500: gone")
        return "A or B"

    records = run_judging(Scripted(answer), plan(CASES[:1], ["quality"], runs=4), templates=DEFAULT_TEMPLATES)
    assert [r.winner for r in records] == ["invalid"] * 4
    assert [r.error for r in records] == ["HTTP 500: gone", "", "HTTP 500: gone", ""]
    assert [r.raw for r in records] == ["", "A or B", "", "A or B"]


def test_resume_skips_done_keys_and_progress_counts():
    requests = plan(CASES, ["quality"], runs=4)
    done = {("c1", "good", "bad", "quality", 1), ("c1", "good", "bad", "quality", 3), ("c2", "x", "y", "quality", 2)}
    judge = Scripted(prefers_good)
    seen: list[tuple[int, int]] = []
    records = run_judging(judge, requests, templates=DEFAULT_TEMPLATES, done=done,
                          progress=lambda d, t: seen.append((d, t)))
    assert [(r.case_id, r.run) for r in records] == [("c1", 2), ("c1", 4), ("c2", 1), ("c2", 2), ("c2", 3),
                                                      ("c2", 4)]
    assert len(judge.calls) == 6 and seen[0] == (0, 6) and seen[-1] == (6, 6) and len(seen) == 7


def test_plan_order_whatever_the_completion_order():
    # early requests are slow, late ones fast: completion order is reversed, output order is not
    calls = Counter[str]()

    def delay(user: str) -> float:
        calls[user] += 1
        return 0.05 if calls[user] == 1 else 0.0

    judge = Scripted(prefers_good, delay=delay)
    requests = plan(CASES, ["quality", "relevance"], runs=4)
    got: list[JudgmentRecord] = []
    records = run_judging(judge, requests, templates=DEFAULT_TEMPLATES, concurrency=4, on_result=got.append)
    assert [r.key for r in records] == [r.key for r in requests] == [r.key for r in got]
    assert len(judge.threads) > 1


def test_window_is_bounded_by_concurrency():
    judge = Scripted(prefers_good)
    iterator = iter_judging(judge, plan(CASES, ["quality"], runs=8), templates=DEFAULT_TEMPLATES, concurrency=2)
    next(iterator)
    time.sleep(0.05)
    assert len(judge.calls) == 2  # the one handed out and the next; not all 16
    iterator.close()


def test_checks_templates_and_concurrency():
    requests = plan(CASES, ["quality"], runs=2)
    with pytest.raises(TemplateError, match="no template for the criterion quality"):
        run_judging(Scripted(prefers_good), requests, templates={"other": Template("", "{first}{second}")})
    with pytest.raises(ValueError, match="concurrency"):
        run_judging(Scripted(prefers_good), requests, templates=DEFAULT_TEMPLATES, concurrency=0)


def test_http_judge_end_to_end_with_exhausted_retries(stub):
    stub.script.extend([("status", 500, {}, "down")] * 3)  # the first request fails all its tries
    judge = OpenAIJudge(stub.url, "stub", retries=2, sleep=lambda s: None, timeout=2)
    records = run_judging(judge, plan(CASES, ["quality"], runs=2), templates=DEFAULT_TEMPLATES, concurrency=1)
    assert records[0].winner == "invalid" and "3 attempts failed; last: HTTP 500: down" in records[0].error
    assert [getattr(CASES[i // 2], r.winner) for i, r in enumerate(records) if i] == ["good"] * 3
