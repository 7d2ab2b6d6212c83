"""A run's progress, counted from its :class:`~metaeval.core.perseval.pipeline.ProgressEvent` stream: the run page's
(the
worker's :class:`metaeval.services.ProgressRecorder` stores it in the run's row) and the command line's
(:class:`TerminalProgress` draws it as a bar on stderr). No Django.

Steps (:func:`planned_steps`): loading the data, one per measure, one per auxiliary measure of the HJ variants and
one for the full report. A step is done at its ``finished`` event (a measure that could not run finishes at once);
an event whose ``counts`` carry ``part`` and ``parts`` (the report's sections) says how far the current step is.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from metaeval.core.perseval.pipeline import Progress, ProgressEvent, RunOptions

__all__ = ["ProgressTracker", "TerminalProgress", "is_terminal", "planned_steps"]


def planned_steps(options: RunOptions, *, hj: bool, report: bool) -> int:
    """How many steps a run counts: loading the data, each measure, each aux measure when there are ratings
    (``hj``), and the full report (``report``)."""
    return 1 + len(options.measures) + (len(options.aux) if hj else 0) + (1 if report else 0)


class ProgressTracker:
    """The pipeline's progress callback: keeps :attr:`state` (``step``: the last message, ``done`` / ``total``
    steps, ``messages``: the last :attr:`keep`) and calls :meth:`changed` after each event; ``forward`` receives
    every event first. A ``with`` block ends in :meth:`finish` (``ok`` unless it raised)."""

    keep = 20

    def __init__(self, total: int, forward: Progress | None = None) -> None:
        self.forward = forward
        self.state: dict[str, object] = {"step": "loading data", "done": 0, "total": total, "messages": []}
        #: the share of the current step done, from the last event's ``part`` / ``parts``
        self.within = 0.0

    def __call__(self, event: ProgressEvent) -> None:
        if self.forward is not None:
            self.forward(event)
        messages = [*self.state["messages"], event.message][-self.keep:]  # type: ignore[misc]
        self.state["messages"] = messages
        self.state["step"] = event.message
        parts = float(event.counts.get("parts") or 0)
        if parts > 0:
            self.within = min(max(float(event.counts.get("part") or 0) / parts, 0.0), 1.0)
        if event.kind == "finished":
            self._advance()
        self.changed(event)

    def data_loaded(self) -> None:
        self._advance()
        self.changed(None)

    def finish(self, *, ok: bool) -> None:
        """The final state: every step done, or ``failed during: <step>``."""
        if ok:
            self.state["done"] = self.state["total"]
            self.state["step"] = "done"
            self.within = 0.0
        else:
            self.state["step"] = f"failed during: {self.state['step']}"

    @property
    def fraction(self) -> float:
        """How much of the run is done, 0 to 1 (the current step's part included)."""
        total = int(self.state["total"])  # type: ignore[call-overload]
        done = int(self.state["done"])  # type: ignore[call-overload]
        return min((done + self.within) / total, 1.0) if total > 0 else 0.0

    def changed(self, event: ProgressEvent | None) -> None:
        """Called after every change of :attr:`state` (``event`` None for the data loaded); for subclasses."""

    def _advance(self) -> None:
        self.state["done"] = min(int(self.state["done"]) + 1, int(self.state["total"]))  # type: ignore[call-overload]
        self.within = 0.0

    def __enter__(self) -> ProgressTracker:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.finish(ok=exc is None)


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that can redraw a line (not a pipe or a file, and ``TERM`` is not dumb)."""
    try:
        return bool(stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d}"


class TerminalProgress(ProgressTracker):
    """Progress as one line redrawn in place on a terminal: ``[#######-----------]  38%  3/8  0:12  jsd: distances``,
    with the elapsed time moving every ``interval`` seconds (a daemon thread) while a long step runs. With ``lines``
    every event's message is also printed above the bar (``-v``). :meth:`finish` leaves the last line (100 %) or,
    for a failed run, clears it so the error reads alone. Use it as a ``with`` block (that starts the clock)."""

    bar_width = 24

    def __init__(
        self, total: int, stream: TextIO, *, lines: bool = False, width: int | None = None, interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(total)
        self.stream = stream
        self.lines = lines
        self.width = width
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = 0

    def __enter__(self) -> TerminalProgress:
        self.started = self.clock()
        self._draw()
        if self.interval > 0:
            self._thread = threading.Thread(target=self._tick, name="metaeval-progress", daemon=True)
            self._thread.start()
        return self

    def changed(self, event: ProgressEvent | None) -> None:
        with self._lock:
            if self.lines and event is not None:
                self._clear()
                self.stream.write(event.message + "\n")
            self._draw(locked=True)

    def finish(self, *, ok: bool) -> None:
        super().finish(ok=ok)
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        with self._lock:
            if ok:
                self._draw(locked=True)
                self.stream.write("\n")
            else:
                self._clear()
            self.stream.flush()
            self._drawn = 0

    def line(self) -> str:
        """The bar as it reads now (no carriage return), cut to the terminal's width."""
        fraction = self.fraction
        filled = int(round(fraction * self.bar_width))
        head = (f"[{'#' * filled}{'-' * (self.bar_width - filled)}] {int(fraction * 100):3d}%  "
                f"{self.state['done']}/{self.state['total']}  {_clock(self.clock() - self.started)}  ")
        step = " ".join(str(self.state["step"]).split())  # one line
        room = self._columns() - 1 - len(head)
        if len(step) > room:
            step = step[: max(room - 3, 0)] + "..." if room > 3 else ""
        return head + step

    def _columns(self) -> int:
        if self.width is not None:
            return self.width
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80  # 0: a terminal of unknown size
        except (AttributeError, OSError, ValueError):
            return 80

    def _draw(self, *, locked: bool = False) -> None:
        if not locked:
            with self._lock:
                self._draw(locked=True)
            return
        text = self.line()
        self.stream.write("\r" + text + " " * max(self._drawn - len(text), 0))
        self.stream.flush()
        self._drawn = len(text)

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self._drawn = 0

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self._draw()
