"""Argument types of the ``python -m metaeval`` commands: one definition each, with the refusal in words."""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["at_least", "comma_list", "number"]


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
