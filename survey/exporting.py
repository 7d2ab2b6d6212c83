"""Serialise export rows as CSV or JSON Lines: ratings (``selectors.ratings_export_rows``) and preference judgments
(``selectors.judgment_export_rows``, the judgment-file layout of docs/conventions.md sec. 17)."""
from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TextIO

from metaeval.core.fileio import spreadsheet_safe
from survey.selectors import EXPORT_COLUMNS, JUDGMENT_COLUMNS

if TYPE_CHECKING:
    from django.core.management.base import OutputWrapper

FORMATS = ("csv", "jsonl")


def write_ratings(rows: Iterable[dict[str, object]], out: TextIO | OutputWrapper, fmt: str) -> int:
    """Write rows in ``fmt``; returns the number of rows written. CSV always has the header line and its text cells
    spreadsheet-safe (:func:`metaeval.core.fileio.spreadsheet_safe`); JSON Lines keep the values as they are."""
    return write_export(rows, out, fmt, list(EXPORT_COLUMNS))


def write_judgments(rows: Iterable[dict[str, object]], out: TextIO | OutputWrapper, fmt: str,
                    columns: Sequence[str] = JUDGMENT_COLUMNS) -> int:
    """:func:`write_ratings` for judgment rows (``columns``: ``JUDGMENT_COLUMNS``, or a sentence preference
    study's ``SENTENCE_JUDGMENT_COLUMNS``; ``selectors.study_judgment_file`` gives both rows and columns)."""
    return write_export(rows, out, fmt, list(columns))


def write_export(rows: Iterable[dict[str, object]], out: TextIO | OutputWrapper, fmt: str, columns: list[str]) -> int:
    """Rows in ``fmt`` (CSV with the header line of ``columns``, or JSON Lines); returns how many were written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    count = 0
    if fmt == "csv":
        count = write_rows(rows, out, columns)
    else:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def write_rows(rows: Iterable[dict[str, object]], out: TextIO | OutputWrapper, columns: list[str]) -> int:
    """CSV with a header line of ``columns`` and spreadsheet-safe text cells; returns the number of rows."""
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow({key: spreadsheet_safe(v) if isinstance(v, str) else v for key, v in row.items()})
        count += 1
    return count
