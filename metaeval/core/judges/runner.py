"""Run a judge over a plan: prompts, calls (bounded thread pool), answers mapped back to systems (conventions
sec. 20, items 3-5).

Request r shows ``r.shown_first``'s text as Text A; answer ``A`` makes that side the winner and ``B`` the other
side. An answer that :func:`~metaeval.core.judges.parse.parse_answer` cannot read, and a call that fails after
the judge's retries (:class:`~metaeval.core.judges.base.JudgeError`, its message kept in ``error``), give winner
``invalid``; the run goes on. Requests whose key is in ``done`` are skipped (resuming). Results come out in plan
order whatever order the calls finish in; at most ``concurrency`` requests are started and not yet handed out,
so a killed run loses at most those.
"""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass

from metaeval.core.pairwise.judgments import OPTIONAL_COLUMNS, REQUIRED_COLUMNS

from .base import Judge, JudgeError
from .parse import parse_answer
from .plan import JudgeRequest, RequestKey
from .prompts import Template, check_templates, render

__all__ = ["COLUMNS", "JUDGE_KIND", "JudgmentRecord", "iter_judging", "judge_one", "run_judging"]

JUDGE_KIND = "llm"
#: the judgment file's columns: the judgment table's (conventions sec. 17, item 1), then ``raw`` (the reply),
#: ``error`` (why a call failed) and ``seconds`` (the call's wall time), which ``load_judgments`` ignores
COLUMNS = (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS, "raw", "error", "seconds")


@dataclass(frozen=True, slots=True)
class JudgmentRecord:
    """One judge call's judgment as a judgment-table row (winner ``model_a``, ``model_b`` or ``invalid``)."""

    case_id: str
    criterion: str
    model_a: str
    model_b: str
    winner: str
    judge: str
    judge_kind: str
    run: int
    shown_first: str
    doc_id: str
    reader_id: str
    raw: str
    error: str
    seconds: float

    @property
    def key(self) -> RequestKey:
        return (self.case_id, self.model_a, self.model_b, self.criterion, self.run)

    def as_row(self) -> dict[str, object]:
        return asdict(self)


def winner_of(answer: str | None, shown_first: str) -> str:
    """The side an answer picks: ``A`` = ``shown_first``, ``B`` = the other side, None = ``invalid``."""
    if answer is None:
        return "invalid"
    other = "model_b" if shown_first == "model_a" else "model_a"
    return shown_first if answer == "A" else other


def judge_one(judge: Judge, request: JudgeRequest, templates: Mapping[str, Template]) -> JudgmentRecord:
    """Ask ``judge`` one request; a :class:`JudgeError` becomes an ``invalid`` record with its message."""
    messages = render(templates[request.criterion], request.case, request.shown_first)
    start = time.perf_counter()
    raw, error = "", ""
    try:
        raw = judge.complete(messages)
    except JudgeError as exc:
        error = str(exc) or type(exc).__name__
    seconds = time.perf_counter() - start
    case = request.case
    return JudgmentRecord(
        case_id=case.case_id, criterion=request.criterion, model_a=case.model_a, model_b=case.model_b,
        winner="invalid" if error else winner_of(parse_answer(raw), request.shown_first), judge=judge.name,
        judge_kind=JUDGE_KIND, run=request.run, shown_first=request.shown_first, doc_id=case.doc_id,
        reader_id=case.reader_id, raw=raw, error=error, seconds=seconds,
    )


def iter_judging(
    judge: Judge, requests: Iterable[JudgeRequest], *, templates: Mapping[str, Template],
    done: Collection[RequestKey] = frozenset(), concurrency: int = 4,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[JudgmentRecord]:
    """The records of the requests not in ``done``, in plan order; ``progress(done, total)`` after each."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, not {concurrency}")
    todo = [request for request in requests if request.key not in done]
    check_templates(templates, dict.fromkeys(request.criterion for request in todo))
    total = len(todo)
    if progress is not None:
        progress(0, total)
    if not total:
        return
    with ThreadPoolExecutor(max_workers=min(concurrency, total), thread_name_prefix="judge") as pool:
        window: deque[Future[JudgmentRecord]] = deque()
        pending = iter(todo)
        finished = 0
        try:
            for request in pending:
                window.append(pool.submit(judge_one, judge, request, templates))
                if len(window) < concurrency:
                    continue
                finished += 1
                yield _next(window, finished, total, progress)
            while window:
                finished += 1
                yield _next(window, finished, total, progress)
        finally:
            for future in window:
                future.cancel()


def _next(window: deque[Future[JudgmentRecord]], finished: int, total: int,
          progress: Callable[[int, int], None] | None) -> JudgmentRecord:
    record = window.popleft().result()
    if progress is not None:
        progress(finished, total)
    return record


def run_judging(
    judge: Judge, requests: Iterable[JudgeRequest], *, templates: Mapping[str, Template],
    done: Collection[RequestKey] = frozenset(), concurrency: int = 4,
    on_result: Callable[[JudgmentRecord], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[JudgmentRecord]:
    """Every record of :func:`iter_judging`, in plan order; ``on_result(record)`` is called on each as it comes
    (e.g. to append it to a file at once)."""
    records: list[JudgmentRecord] = []
    for record in iter_judging(judge, requests, templates=templates, done=done, concurrency=concurrency,
                               progress=progress):
        if on_result is not None:
            on_result(record)
        records.append(record)
    return records
