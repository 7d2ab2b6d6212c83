"""Serialise export rows as CSV or JSON Lines: ratings (``selectors.ratings_export_rows``) and preference judgments
(``selectors.judgment_export_rows``, the judgment-file layout of docs/conventions.md sec. 17).

:func:`stream_export` is the one serialiser: pieces of text, the CSV header first, that a streaming response sends
as they come (the page and API downloads) and :func:`write_export` writes to a file (the commands); the rows are
read from the database as they are written (``selectors`` use ``QuerySet.iterator``), so an export of any size
holds a batch of rows in memory, never the whole file."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

from metaeval.core.io.fileio import spreadsheet_safe
from survey.selectors import EXPORT_COLUMNS, JUDGMENT_COLUMNS

if TYPE_CHECKING:
    from django.core.management.base import OutputWrapper

FORMATS = ("csv", "jsonl")
#: the HTTP content type of each format
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}
#: rows per piece of a streamed export
EXPORT_BATCH = 1000


def write_ratings(rows: Iterable[dict[str, object]], out: TextIO | OutputWrapper, fmt: str) -> int:
    """Write rows in ``fmt``; returns the number of rows written. CSV always has the header line and its text cells
    spreadsheet-safe (:func:`metaeval.core.io.fileio.spreadsheet_safe`); JSON Lines keep the values as they are."""
    return write_export(rows, out, fmt, list(EXPORT_COLUMNS))


def write_judgments(rows: Iterable[dict[str, object]], out: TextIO | OutputWrapper, fmt: str,
                    columns: Sequence[str] = JUDGMENT_COLUMNS) -> int:
    """:func:`write_ratings` for judgment rows (``columns``: ``JUDGMENT_COLUMNS``, or a sentence preference
    study's ``SENTENCE_JUDGMENT_COLUMNS``; ``selectors.study_judgment_file`` gives both rows and columns)."""
    return write_export(rows, out, fmt, list(columns))


class _Counted:
    """``rows``, counting what has been read."""

    def __init__(self, rows: Iterable[dict[str, object]]) -> None:
        self.rows = iter(rows)
        self.count = 0

    def __iter__(self) -> Iterator[dict[str, object]]:
        for row in self.rows:
            self.count += 1
            yield row


def write_export(rows: Iterable[dict[str, object]], out: TextIO | OutputWrapper, fmt: str,
                 columns: Sequence[str]) -> int:
    """Rows in ``fmt`` (CSV with the header line of ``columns``, or JSON Lines); returns how many were written."""
    counted = _Counted(rows)
    for piece in stream_export(counted, fmt, columns):
        out.write(piece)
    return counted.count


def write_rows(rows: Iterable[dict[str, object]], out: TextIO | OutputWrapper, columns: Sequence[str]) -> int:
    """CSV with a header line of ``columns`` and spreadsheet-safe text cells; returns the number of rows."""
    return write_export(rows, out, "csv", columns)


def stream_export(rows: Iterable[dict[str, object]], fmt: str, columns: Sequence[str],
                  batch: int = EXPORT_BATCH) -> Iterator[str]:
    """The export's text in pieces of ``batch`` rows (the CSV header line first, alone): CSV with ``"\\n"`` line
    ends and spreadsheet-safe text cells, or one JSON object a line. ``ValueError`` for another format."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    buffer = io.StringIO()

    def taken() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    if fmt == "csv":
        writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        yield taken()
    written = 0
    for row in rows:
        if fmt == "csv":
            writer.writerow({key: spreadsheet_safe(v) if isinstance(v, str) else v for key, v in row.items()})
        else:
            buffer.write(json.dumps(row, ensure_ascii=False) + "\n")
        written += 1
        if written % batch == 0:
            yield taken()
    rest = taken()
    if rest:
        yield rest
