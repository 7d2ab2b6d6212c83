"""The parser class of ``python -m metaeval`` and the one-line message of a file that cannot be read (kept out of
:mod:`metaeval.cli`, which only imports them; light: the standard library only)."""
from __future__ import annotations

import argparse
import os
from typing import NoReturn

__all__ = ["CommandLineParser", "os_error_text"]


class CommandLineParser(argparse.ArgumentParser):
    """The parser of ``python -m metaeval`` and (as ``add_subparsers`` makes every subparser of its parent's class)
    of each command: a bad command line prints one short usage line and the error, not argparse's usage of
    every option (``--help`` still prints them all)::

        usage: python -m metaeval score DATASET [options] (see --help)
        python -m metaeval score: error: argument --beta: beta must be a finite number from -10 to 10; got '11'
    """

    def format_usage(self) -> str:
        """``usage: PROG POSITIONAL... [--required X...] [options] (see --help)``: the positional arguments and the
        required options, the others summed up."""
        words = [self.prog]
        for action in self._actions:
            if action.option_strings:
                if action.required:
                    name = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
                    words.append(max(action.option_strings, key=len) + ("" if action.nargs == 0 else f" {name}"))
                continue
            if isinstance(action, argparse._SubParsersAction):
                words.append("COMMAND")
                continue
            name = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
            words.append(f"[{name}]" if action.nargs == "?" else f"{name} ..." if action.nargs in ("*", "+")
                         else name)
        return f"usage: {' '.join(words)} [options] (see --help)\n"

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.format_usage()}{self.prog}: error: {message}\n")


def os_error_text(exc: OSError) -> str:
    """An unreadable or unwritable path as one line that names it (``data.jsonl: no such file or folder``), not
    Python's ``[Errno 2] No such file or directory: 'data.jsonl'``."""
    if exc.filename is None:
        return str(exc)
    reasons: tuple[tuple[type[OSError], str], ...] = (
        (FileNotFoundError, "no such file or folder"),
        (IsADirectoryError, "is a folder, not a file"),
        (NotADirectoryError, "a part of the path is a file, not a folder"),
        (PermissionError, "permission denied"),
    )
    reason = next((text for kind, text in reasons if isinstance(exc, kind)), exc.strerror or type(exc).__name__)
    return f"{os.fsdecode(exc.filename)}: {reason}"
