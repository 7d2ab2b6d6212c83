"""Helpers shared by the import management commands."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.core.management.base import CommandError

from metaeval.core.io.fileio import ImporterError


def existing_file(value: str) -> Path:
    """The path if it names a file, else a CommandError naming it."""
    path = Path(value)
    if not path.exists():
        raise CommandError(f"file not found: {path}")
    if not path.is_file():
        raise CommandError(f"not a file: {path}")
    return path


@contextmanager
def command_errors() -> Iterator[None]:
    """Turn import and file-system errors into CommandError (exit status 1, message printed)."""
    try:
        yield
    except ImporterError as exc:
        raise CommandError(str(exc)) from exc
    except OSError as exc:
        raise CommandError(f"cannot read {exc.filename or 'the file'}: {exc.strerror or exc}") from exc
