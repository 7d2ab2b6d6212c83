"""Progress counted from a run's events (the run page's recorder and the command line's bar share it)."""
from __future__ import annotations

import io

import pytest

from metaeval.core.perseval.pipeline import ProgressEvent, RunOptions
from metaeval.core.progress import ProgressTracker, TerminalProgress, is_terminal, planned_steps


def test_planned_steps() -> None:
    options = RunOptions(measures=["rouge_l", "jsd"], aux=["rouge_l"])
    assert planned_steps(options, hj=True, report=True) == 1 + 2 + 1 + 1
    assert planned_steps(options, hj=False, report=False) == 1 + 2


def test_tracker_counts_finished_steps_and_report_sections() -> None:
    seen: list[str] = []
    tracker = ProgressTracker(4, forward=lambda event: seen.append(event.message))
    assert tracker.fraction == 0.0 and tracker.state["step"] == "loading data"
    tracker.data_loaded()
    tracker(ProgressEvent("started", "rouge_l", "rouge_l: distances"))
    assert tracker.state["done"] == 1 and tracker.fraction == pytest.approx(0.25)
    tracker(ProgressEvent("finished", "rouge_l", "rouge_l: done"))
    tracker(ProgressEvent("finished", "hj:rouge_l", "hj: done"))
    assert tracker.state["done"] == 3
    tracker(ProgressEvent("info", "report", "report: beta ablation", {"part": 2, "parts": 4}))
    assert tracker.fraction == pytest.approx((3 + 0.5) / 4) and tracker.state["step"] == "report: beta ablation"
    tracker(ProgressEvent("finished", "report", "report: 13 tables in 2.0 s", {"part": 4, "parts": 4}))
    assert tracker.state["done"] == 4 and tracker.fraction == 1.0
    tracker(ProgressEvent("finished", "extra", "more than planned"))
    assert tracker.state["done"] == 4  # never past the total
    assert seen[0] == "rouge_l: distances" and len(tracker.state["messages"]) == 6


def test_a_with_block_finishes_the_tracker() -> None:
    with ProgressTracker(3) as tracker:
        pass
    assert tracker.state["step"] == "done" and tracker.state["done"] == 3
    with pytest.raises(RuntimeError), ProgressTracker(3) as failing:
        failing(ProgressEvent("started", "jsd", "jsd: distances"))
        raise RuntimeError("boom")
    assert failing.state["step"] == "failed during: jsd: distances" and failing.state["done"] == 0


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_terminal_bar_redraws_one_line() -> None:
    stream, clock = io.StringIO(), FakeClock()
    with TerminalProgress(4, stream, width=72, interval=0, clock=clock) as bar:
        bar.data_loaded()
        clock.now += 75
        bar(ProgressEvent("started", "bertscore", "bertscore: distances of a great many text pairs indeed"))
        line = bar.line()
        assert line.startswith("[######------------------]  25%  1/4  1:15  bertscore: distances")
        assert len(line) <= 71 and line.endswith("...")  # cut to the terminal's width
    text = stream.getvalue()
    assert "\n" not in text.rstrip("\n") and text.count("\r") >= 3  # redrawn in place, one final newline
    assert text.endswith("\n") and text.rstrip().endswith("100%  4/4  1:15  done")


def test_the_terminal_bar_prints_lines_above_it_with_verbose_and_clears_itself_on_failure() -> None:
    stream = io.StringIO()
    with pytest.raises(ValueError), TerminalProgress(2, stream, lines=True, width=80, interval=0) as bar:
        bar(ProgressEvent("finished", "rouge_l", "rouge_l: 5 computed"))
        raise ValueError("bad input")
    text = stream.getvalue()
    assert "rouge_l: 5 computed\n" in text
    last = text.rsplit("\r", 2)
    assert text.endswith("\r") and last[-2].strip() == ""  # the bar is wiped: the error reads alone


def test_the_clock_moves_while_a_long_step_runs() -> None:
    import threading

    drawn = threading.Event()

    class Stream(io.StringIO):
        def write(self, text: str) -> int:
            if "0:00" not in text and "[" in text:
                drawn.set()
            return super().write(text)

    clock = FakeClock()
    with TerminalProgress(3, Stream(), width=80, interval=0.01, clock=clock):
        clock.now += 3
        assert drawn.wait(5)  # the ticker redrew the bar with the new elapsed time


def test_only_a_real_terminal_gets_a_bar(monkeypatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert not is_terminal(io.StringIO())
    monkeypatch.setenv("TERM", "xterm")
    assert is_terminal(Tty())
    monkeypatch.setenv("TERM", "dumb")
    assert not is_terminal(Tty())
