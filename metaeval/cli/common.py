"""Shared by the commands: the usage error, the output file, the scores file reader and how numbers are printed in
plain text."""
from __future__ import annotations

import csv
import math
import sys
from pathlib import Path
from typing import TextIO

from metaeval.core.display import ascii_text, fmt_number, fmt_p


class UsageError(Exception):
    """A command line that cannot run; the message says why."""


def open_out(path: str | None) -> TextIO:
    if path is None or path == "-":
        return sys.stdout
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115


def read_scores(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        if list(header[:2]) != ["system", "measure"]:
            raise UsageError(f"{path}: not a scores file (expected a header starting system,measure,...)")
        return list(reader)


def sortable(value: object) -> float:
    return float(value) if isinstance(value, float) and not math.isnan(value) else -math.inf


def fmt_cell(value: object) -> str:
    """A number as the report shows it (:func:`~metaeval.core.display.fmt_number`), in ASCII."""
    return ascii_text(fmt_number(value, missing="n/a"))


def with_p(r: object, p: object) -> str:
    """``0.9387 (p < 0.001)``, ``0.4120 (p = 0.236)``; ``n/a`` for an undefined coefficient."""
    if r is None or (isinstance(r, float) and math.isnan(r)):
        return "n/a"
    p_text = fmt_p(p, missing="n/a")
    return f"{fmt_cell(r)} (p {p_text if p_text.startswith('<') else '= ' + p_text})"

