"""Import errors: every problem in an input file is reported as ``<file>:<line>: <what is wrong>``."""
from __future__ import annotations

from collections.abc import Sequence

MAX_PROBLEMS = 20


class ImporterError(Exception):
    """An import that cannot proceed (bad input, unknown dataset); nothing has been written."""


class ImportFileError(ImporterError):
    """One or more problems in input files; the message lists them one per line."""

    def __init__(self, problems: Sequence[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class Problems:
    """Collects ``file:line: message`` problems; raises once ``limit`` is reached or on :meth:`raise_if_any`."""

    def __init__(self, limit: int = MAX_PROBLEMS) -> None:
        self.limit = limit
        self.items: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, file: str, line: int, message: str) -> None:
        self.items.append(f"{file}:{line}: {message}")
        if len(self.items) >= self.limit:
            raise ImportFileError([*self.items, f"(stopped after {self.limit} problems; fix these and run again)"])

    def raise_if_any(self) -> None:
        if self.items:
            raise ImportFileError(self.items)
