"""Reading input files with line numbers, and errors that name ``<file>:<line>: <what is wrong>``; the one rule
for CSV text cells a spreadsheet would run as formulas.

Shared by the survey importers and exports and the metaeval loaders and writers (no Django here).
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from metaeval.core import jsonsafe

MAX_PROBLEMS = 20

#: a CSV text cell starting with one of these is a formula to a spreadsheet (OWASP "CSV injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """``text`` for a CSV cell: with a leading ``'`` when it starts like a formula (``=HYPERLINK(...)``), so a
    spreadsheet shows it as text; :func:`from_spreadsheet_safe` undoes it."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def from_spreadsheet_safe(text: str) -> str:
    """The inverse of :func:`spreadsheet_safe`: a leading ``'`` before a formula start is removed."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_STARTS) else text


class ImporterError(Exception):
    """An import that cannot proceed (bad input, unknown dataset); nothing has been written."""


class ImportFileError(ImporterError):
    """One or more problems in input files; the message lists them one per line."""

    def __init__(self, problems: Sequence[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class Problems:
    """Collects ``file:line: message`` problems; raises once ``limit`` is reached or on :meth:`raise_if_any`, with
    the problems in line order (files in the order first named; one line's problems in the order found), however
    the checks found them (a reader may check a row's shape while reading and its values after)."""

    def __init__(self, limit: int = MAX_PROBLEMS) -> None:
        self.limit = limit
        self.items: list[str] = []
        self._keys: list[tuple[int, int]] = []  # (file's rank, line) of each item
        self._files: dict[str, int] = {}

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, file: str, line: int, message: str) -> None:
        self.items.append(f"{file}:{line}: {message}")
        self._keys.append((self._files.setdefault(file, len(self._files)), line))
        if len(self.items) >= self.limit:
            raise ImportFileError([*self.in_order(), f"(stopped after {self.limit} problems; fix these and run again)"])

    def in_order(self) -> list[str]:
        """The problems by file and line."""
        order = sorted(range(len(self.items)), key=lambda index: (self._keys[index], index))
        return [self.items[index] for index in order]

    def raise_if_any(self) -> None:
        if self.items:
            raise ImportFileError(self.in_order())


def listed(problems: Sequence[str], limit: int = MAX_PROBLEMS) -> str:
    """Problems found all at once, one per line, at most ``limit`` of them (then how many more)."""
    shown = list(problems[:limit])
    if len(problems) > limit:
        shown.append(f"(and {len(problems) - limit} more; fix these and run again)")
    return "\n".join(shown)


_JSON_WS = re.compile(r"[ \t\n\r]*")


#: what a NUL character in an input file is called (no text file of this project has one; the databases refuse it)
NUL_PROBLEM = "NUL character (a text file has none: is it a binary file?)"


def decode_bytes(data: bytes, file: str, first_line: int = 1) -> str:
    """Decode UTF-8 (a leading BOM is dropped); an undecodable byte or a NUL character is reported with its
    line."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        raise ImportFileError(f"{file}:{line}: not valid UTF-8 text (byte {data[exc.start]:#04x})") from None
    _refuse_nul(text, file, first_line)
    return text


def _refuse_nul(text: str, file: str, first_line: int) -> None:
    at = text.find("\x00")
    if at >= 0:
        raise ImportFileError(f"{file}:{first_line + text.count(chr(10), 0, at)}: {NUL_PROBLEM}")


def read_text(path: Path, file: str) -> str:
    """The whole file as text (OSError propagates to the caller)."""
    return decode_bytes(path.read_bytes(), file)


def csv_rows(text: str, file: str, problems: Problems | None, *, strict: bool = True, fatal: bool = False
             ) -> Iterator[tuple[int, list[str]]]:
    """``(line, fields)`` for each record of CSV ``text``, ``line`` the line the record starts on (a quoted cell may
    span lines), blank lines skipped. The CSV readers of every file format share it; each checks the header and the
    fields itself. A record the csv module cannot read ends the reading with ``file:line: invalid CSV: ...`` added
    to ``problems`` (with ``problems`` None, silently: another reader reports it); ``fatal``: every problem so far
    is raised then (:meth:`Problems.raise_if_any`)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=strict)
    last = 0  # the line where the previous record ended
    try:
        for fields in reader:
            start, last = last + 1, reader.line_num
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            yield start, fields
    except csv.Error as exc:
        if problems is not None:
            problems.add(file, reader.line_num, f"invalid CSV: {exc}")
            if fatal:
                problems.raise_if_any()


def iter_lines(path: Path, file: str) -> Iterator[tuple[int, str]]:
    """``(line number, line without its end-of-line)`` for each line, decoded one line at a time."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            text = decode_bytes(raw, file, number) if number == 1 else _decode_line(raw, file, number)
            yield number, text.rstrip("\r\n")


def _decode_line(raw: bytes, file: str, number: int) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{file}:{number}: not valid UTF-8 text (byte {raw[exc.start]:#04x})") from None
    _refuse_nul(text, file, number)
    return text


def string_fields(
    value: dict, keys: Sequence[str], ctx: str, error: Callable[[str], None]
) -> dict[str, str]:
    """The ``keys`` of a JSON object that are present strings; ``error`` gets a message for each that is not."""
    strings: dict[str, str] = {}
    for key in keys:
        if key not in value:
            error(f'field "{key}" is missing ({ctx})')
        elif not isinstance(value[key], str):
            error(f'field "{key}" must be a string ({ctx}, found {json_type(value[key])})')
        else:
            strings[key] = value[key]
    return strings


def json_type(value: object) -> str:
    """JSON's name for the type of a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class _Lines:
    """Incremental position -> 1-based line number (positions must not decrease)."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line = text, 0, 1

    def at(self, pos: int) -> int:
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def iter_json_values(text: str, file: str, problems: Problems) -> Iterator[tuple[int, object]]:
    """``(start line, value)`` for each top-level value: JSON Lines, concatenated or pretty-printed values,
    or the elements of one top-level array. A syntax error is added to ``problems`` and ends the stream; a value
    nested too deeply or holding a NUL character (:mod:`metaeval.core.jsonsafe`) is added to ``problems`` and
    left out."""
    decoder = json.JSONDecoder()
    lines = _Lines(text)
    end = len(text)

    def skip(pos: int) -> int:
        return _JSON_WS.match(text, pos).end()  # type: ignore[union-attr]  # the pattern matches the empty string

    def decode(pos: int) -> tuple[object, int] | None:
        try:
            return decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            problems.add(file, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})")
        except RecursionError:
            problems.add(file, lines.at(pos), jsonsafe.TOO_DEEP)
        except ValueError:  # not a JSONDecodeError: an integer too long to convert
            problems.add(file, lines.at(pos), f"invalid JSON: {jsonsafe.too_long_number()}")
        return None

    def refused(pos: int, decoded: tuple[object, int]) -> bool:
        problem = jsonsafe.problem(decoded[0], text[pos:decoded[1]])
        if problem is not None:
            problems.add(file, lines.at(pos), problem)
        return problem is not None

    pos = skip(0)
    if pos < end and text[pos] == "[":
        pos = skip(pos + 1)
        if pos < end and text[pos] == "]":
            pos += 1
        else:
            while True:
                decoded = decode(pos)
                if decoded is None:
                    return
                if not refused(pos, decoded):
                    yield lines.at(pos), decoded[0]
                pos = skip(decoded[1])
                if pos < end and text[pos] == ",":
                    pos = skip(pos + 1)
                    continue
                if pos < end and text[pos] == "]":
                    pos += 1
                    break
                problems.add(file, lines.at(pos), "invalid JSON: expected ',' or ']' after an array element")
                return
        pos = skip(pos)
        if pos < end:
            problems.add(file, lines.at(pos), "unexpected content after the top-level JSON array")
        return
    while pos < end:
        decoded = decode(pos)
        if decoded is None:
            return
        if not refused(pos, decoded):
            yield lines.at(pos), decoded[0]
        pos = skip(decoded[1])
