"""What every judge is: a named chat completer whose settings can be recorded (conventions sec. 20, item 6)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Judge", "JudgeConfigError", "JudgeError"]


class JudgeError(Exception):
    """A judge call that failed (transport, HTTP status, malformed reply, generation error), after any retries;
    the runner records the message and an ``invalid`` judgment."""


class JudgeConfigError(ValueError):
    """A judge that cannot be set up (missing API key variable, no model folder); the message says what to do."""


@runtime_checkable
class Judge(Protocol):
    """``name`` goes into the ``judge`` column; ``describe()`` the settings to record (never a secret);
    ``complete(messages)`` the raw reply text to chat messages, or :class:`JudgeError`. It may be called from
    several threads at once."""

    name: str

    def describe(self) -> dict[str, object]: ...

    def complete(self, messages: Sequence[Mapping[str, str]]) -> str: ...
