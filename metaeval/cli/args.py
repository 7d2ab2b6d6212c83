"""Argument types of the ``python -m metaeval`` commands: one definition each, with the refusal in words."""
from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

from metaeval.core.io.exclusions import Exclusions, RaterChoice

__all__ = ["add_rater_arguments", "at_least", "comma_list", "number", "rater_choice", "say_exclusions"]


def at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """An integer >= ``low`` (and <= ``high`` when given) (argparse ``type``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low or (high is not None and value > high):
            within = f">= {low}" if high is None else f"from {low} to {high}"
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer {within}")
        return value

    return parse


def number(low: float, *, above: bool = False) -> Callable[[str], float]:
    """A finite number >= ``low`` (> ``low`` when ``above``) (argparse ``type``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < low or (above and value == low):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number {'>' if above else '>='} {low:g}")
        return value

    return parse


def comma_list(text: str) -> list[str]:
    """The comma-separated names of an option (``--judge-kind human,llm``, ``--systems A,B``), stripped, blanks
    dropped, in order."""
    return [part.strip() for part in text.split(",") if part.strip()]


def add_rater_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, what: str = "ratings",
                        column: str = "rater") -> None:
    """``--exclude-raters`` and ``--include-excluded``: which raters of a ``what`` file the command reads (by default
    all but those the file marks excluded, as the survey's export does; docs/conventions.md sec. 2)."""
    parser.add_argument("--exclude-raters", metavar="P1,P2", type=comma_list, default=[],
                        help=f"leave out these raters of the {what} file (its {column} column, as written there)")
    parser.add_argument("--include-excluded", action="store_true",
                        help=f"keep the raters the {what} file marks excluded (column excluded = 1, as the survey's "
                        "export writes the participants excluded or rejected on its participants page); by default "
                        "they are left out")


def rater_choice(args: argparse.Namespace) -> RaterChoice:
    """The :class:`RaterChoice` of :func:`add_rater_arguments`' flags."""
    return RaterChoice.of(getattr(args, "exclude_raters", None) or (),
                          include_excluded=bool(getattr(args, "include_excluded", False)))


def say_exclusions(exclusions: Exclusions, source: str) -> None:
    """Tell the user on stderr which raters a reader left out of ``source`` (and kept though excluded)."""
    for line in exclusions.lines(source):
        print(line, file=sys.stderr)
