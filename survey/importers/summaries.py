"""Parse model summaries (CSV or JSON Lines with ``doc_id, reader_id, system, text`` and an optional ``variant``)
into records.

A ``variant`` (e.g. an iCOPERNICUS prompt style such as ``c-0-shot``) makes the stored system ``MODEL:VARIANT``
(``records.variant_system``) with the variant recorded on the system; ``parse_summaries(variant=...)`` gives every
row without one that variant (``import_summaries --variant``). A system or variant may not contain ``:``.

The format follows the extension (``.csv``, ``.jsonl``, ``.json``), otherwise the first character decides
(``{`` or ``[`` means JSON). Reference summaries (system ``user``) come from dataset imports, not from here.
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Set
from pathlib import Path
from typing import Literal

from metaeval.core import jsonsafe
from metaeval.core.io.fileio import Problems, iter_json_values, json_type, read_text
from survey.importers.records import MAX_KEY_LENGTH, VARIANT_SEPARATOR, SummaryRecord, variant_system
from survey.models import REFERENCE_SYSTEM

COLUMNS = ("doc_id", "reader_id", "system", "text")
Format = Literal["csv", "jsonl", "json"]


def detect_format(path: Path, text: str) -> Format:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".jsonl", ".json"):
        return suffix[1:]  # type: ignore[return-value]
    return "json" if text.lstrip()[:1] in ("{", "[") else "csv"


def parse_summaries(path: str | Path, *, file: str | None = None, variant: str = "") -> list[SummaryRecord]:
    """Read and validate a summaries file; raise ``ImportFileError`` listing every problem. ``variant`` is the
    variant of the rows that name none."""
    path = Path(path)
    file = file or path.name
    text = read_text(path, file)
    problems = Problems()
    fmt = detect_format(path, text)
    rows = _csv_rows(text, file, problems) if fmt == "csv" else _json_rows(text, file, fmt, problems)
    records: list[SummaryRecord] = []
    first_line: dict[tuple[str, str, str], int] = {}
    for line, row in rows:
        record = _record(row, line, file, problems, variant)
        if record is None:
            continue
        key = (record.doc_id, record.reader_id, record.system)
        if key in first_line:
            problems.add(
                file,
                line,
                f'duplicate summary for doc_id "{key[0]}", reader_id "{key[1]}", system "{key[2]}" '
                f"(first at line {first_line[key]})",
            )
            continue
        first_line[key] = line
        records.append(record)
    if not records and not problems:
        problems.add(file, 1, "no summaries found" + ("" if text.strip() else " (the file is empty)"))
    problems.raise_if_any()
    return records


def check_references(
    records: list[SummaryRecord], *, file: str, dataset: str, doc_ids: Set[str], reader_ids: Set[str]
) -> None:
    """Raise ``ImportFileError`` for each summary whose doc_id or reader_id is not in the dataset."""
    problems = Problems()
    for record in records:
        if record.doc_id not in doc_ids:
            problems.add(file, record.line, f'unknown doc_id "{record.doc_id}" in dataset "{dataset}"')
        if record.reader_id not in reader_ids:
            problems.add(file, record.line, f'unknown reader_id "{record.reader_id}" in dataset "{dataset}"')
    problems.raise_if_any()


def _record(row: dict[str, object], line: int, file: str, problems: Problems,
            default_variant: str = "") -> SummaryRecord | None:
    values: dict[str, str] = {}
    variant = row.get("variant")
    if variant is None or variant == "":
        variant = default_variant
    if not isinstance(variant, str):
        problems.add(file, line, f'field "variant" must be a string, found {json_type(variant)}')
        return None
    variant = variant.strip()
    if VARIANT_SEPARATOR in variant:
        problems.add(file, line, f'field "variant" may not contain "{VARIANT_SEPARATOR}"')
        return None
    for key in COLUMNS:
        value = row.get(key)
        if key not in row:
            problems.add(file, line, f'field "{key}" is missing')
        elif not isinstance(value, str):
            problems.add(file, line, f'field "{key}" must be a string, found {json_type(value)}')
        elif not value.strip():
            problems.add(file, line, f'field "{key}" is empty')
        elif key != "text" and len(value) > MAX_KEY_LENGTH:
            problems.add(file, line, f'field "{key}" is longer than {MAX_KEY_LENGTH} characters')
        elif key == "system" and variant and VARIANT_SEPARATOR in value:
            problems.add(file, line, f'field "system" may not contain "{VARIANT_SEPARATOR}" when a variant is given '
                         "(the stored name is SYSTEM:VARIANT)")
        elif key == "system" and variant and len(variant_system(value, variant)) > MAX_KEY_LENGTH:
            problems.add(file, line, f'fields "system" and "variant": "{value}:{variant}" is longer than '
                         f"{MAX_KEY_LENGTH} characters")
        elif key == "system" and value == REFERENCE_SYSTEM:
            problems.add(
                file,
                line,
                f'field "system" is "{REFERENCE_SYSTEM}", which is reserved for the readers\' own summaries '
                "(import those with the dataset)",
            )
        else:
            values[key] = value
    if len(values) < len(COLUMNS):
        return None
    return SummaryRecord(values["doc_id"], values["reader_id"], variant_system(values["system"], variant),
                         values["text"], line=line, variant=variant)


def _csv_rows(text: str, file: str, problems: Problems) -> Iterator[tuple[int, dict[str, object]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.add(file, reader.line_num, f"invalid CSV: {exc}")
            return
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if header is None:
            header = [column.strip() for column in row]
            absent = [column for column in COLUMNS if column not in header]
            repeated = [column for column in COLUMNS if header.count(column) > 1]
            if absent:
                names = ", ".join(f'"{column}"' for column in absent)
                problems.add(file, start, f"header lacks column(s) {names} (needs {','.join(COLUMNS)})")
            if repeated:
                problems.add(file, start, "header repeats column(s) " + ", ".join(f'"{c}"' for c in repeated))
            if absent or repeated:
                return
            continue
        if len(row) != len(header):
            problems.add(file, start, f"expected {len(header)} comma-separated columns, found {len(row)}")
            continue
        yield start, {key: value.strip() if key != "text" else value for key, value in zip(header, row, strict=True)}


def _json_rows(text: str, file: str, fmt: Format, problems: Problems) -> Iterator[tuple[int, dict[str, object]]]:
    if fmt == "jsonl":  # strictly one value per line: a bad line does not hide the following ones
        values: Iterator[tuple[int, object]] = _jsonl_values(text, file, problems)
    else:
        values = iter_json_values(text, file, problems)
    for line, value in values:
        if isinstance(value, dict):
            yield line, value
        else:
            problems.add(file, line, f"expected a JSON object, found {json_type(value)}")


def _jsonl_values(text: str, file: str, problems: Problems) -> Iterator[tuple[int, object]]:
    for line, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            yield line, jsonsafe.loads(raw)
        except json.JSONDecodeError as exc:
            problems.add(file, line, f"invalid JSON: {exc.msg} (column {exc.colno})")
        except jsonsafe.JSONInputError as exc:  # nested too deeply, or a NUL character
            problems.add(file, line, str(exc))

