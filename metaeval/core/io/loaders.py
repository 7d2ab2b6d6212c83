"""Load the consolidated dataset and the ratings CSV into the plain corpus types (docs/conventions.md sec. 2).

Every problem found in a file is collected and reported at once as ``<file>:<line>: <message>`` in an
:class:`~metaeval.core.io.fileio.ImportFileError`; nothing is returned partially. The messages follow the survey's
importer (``survey/importers/consolidated.py``), so the same bad file reads the same on both sides.

Choices (documented for users):

* **Ids are strings** (conventions sec. 10). A ``doc_id`` written as a JSON *integer* is accepted and converted
  with ``str()`` (``7`` -> ``"7"``), so it matches a ratings CSV that says ``7``. A non-integer number is rejected
  (``str(1e3)`` is ``"1000.0"``, not what the file says; quote such ids). Reader ids and system names are JSON
  object keys, which are always strings. Ids are not stripped; an empty or blank id is an error.
* **Summaries are kept as given.** A summary that is not a string (``null``, a number) is not rejected here; it
  counts as missing when scored (:meth:`Document.readers_for` with ``missing="error"|"drop"``).
* **Order.** Documents in file order, readers in ``m_summary_dict`` order, systems (every key other than
  ``"user"``) in first-seen order (:func:`systems_in_order`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path

from metaeval.core.io.corpus import Corpus, Document, Rating, RatingTable, systems_in_order
from metaeval.core.io.exclusions import DEFAULT_CHOICE, EXCLUDED_COLUMN, RaterChoice, RaterFilter, review_of
from metaeval.core.io.fileio import (
    Problems,
    csv_rows,
    from_spreadsheet_safe,
    iter_json_values,
    json_type,
    read_text,
    string_fields,
)

__all__ = ["RATING_COLUMNS", "load_corpus", "load_ratings", "ratings_from_rows"]

MSD = 'field "m_summary_dict"'
RATING_COLUMNS = ("doc_id", "system", "uid1", "uid2", "rating")
RATER_COLUMN = "rater"


# --------------------------------------------------------------------------------------------------------------
# Dataset
# --------------------------------------------------------------------------------------------------------------


def load_corpus(
    path: str | Path | Corpus,
    *,
    file: str | None = None,
    check: Callable[[Document, Callable[[str], None]], None] | None = None,
) -> Corpus:
    """Read a consolidated JSON dataset: JSON Lines, concatenated or pretty-printed objects, or one JSON array.

    ``file`` is the name used in messages (default: the file's name). ``check(document, error)``, when given,
    is called for every valid document and may report more problems at its line (the survey importer adds the
    database's limits this way), so every problem of the file is still reported at once. Raises
    ``ImportFileError`` listing every problem (``OSError`` for an unreadable path). A :class:`Corpus` (the notebook
    API's in-memory dataset) is returned as it is.
    """
    if isinstance(path, Corpus):
        return path
    path = Path(path)
    file = file or path.name
    problems = Problems()
    text = read_text(path, file)
    documents: list[Document] = []
    first_line: dict[str, int] = {}
    count = 0
    for line, value in iter_json_values(text, file, problems):
        count += 1
        document = _parse_document(value, line, file, problems, first_line)
        if document is not None:
            documents.append(document)
            if check is not None:
                check(document, _reporter(problems, file, line))
    if count == 0 and not problems:
        problems.add(file, 1, "no records found" + ("" if text.strip() else " (the file is empty)"))
    problems.raise_if_any()
    return Corpus(documents=tuple(documents), systems=systems_in_order(documents), source=file)


def _reporter(problems: Problems, file: str, line: int) -> Callable[[str], None]:
    """``error(message)``: a problem at ``file:line`` (the parser's and the ``check`` hook's)."""

    def error(message: str) -> None:
        problems.add(file, line, message)

    return error


def _doc_id(value: object) -> tuple[str | None, str | None]:
    """``(id, None)`` or ``(None, problem)`` for the raw ``doc_id`` value."""
    if isinstance(value, str):
        return (value, None) if value.strip() else (None, 'field "doc_id" must not be empty')
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value), None
    if isinstance(value, float):
        return None, 'field "doc_id" must be a string or an integer, found a non-integer number (quote the id)'
    return None, f'field "doc_id" must be a string, found {json_type(value)}'


def _parse_document(
    value: object, line: int, file: str, problems: Problems, first_line: dict[str, int]
) -> Document | None:
    """Validate one record; add its problems and return ``None`` when it has any."""
    before = len(problems)
    error = _reporter(problems, file, line)
    if not isinstance(value, dict):
        error(f"expected a JSON object (one document), found {json_type(value)}")
        return None

    doc_id: str | None = None
    if "doc_id" not in value:
        error('field "doc_id" is missing')
    else:
        doc_id, problem = _doc_id(value["doc_id"])
        if problem:
            error(problem)
        elif doc_id is not None and doc_id in first_line:
            first = first_line[doc_id]
            error(f'field "doc_id": duplicate doc_id "{doc_id}" (first at line {first}, again at line {line})')
        elif doc_id is not None:
            first_line[doc_id] = line
    ctx = f'doc "{doc_id}"' if doc_id is not None else "doc without a valid id"

    strings = string_fields(value, ("doc_text", "doc_summ"), ctx, error)
    for key in ("category", "topic"):  # optional labels of the document
        item = value.get(key)
        if item is None:
            strings[key] = ""
        elif isinstance(item, str):
            strings[key] = item
        else:
            error(f'field "{key}" must be a string ({ctx}, found {json_type(item)})')

    msd = value.get("m_summary_dict")
    if not isinstance(msd, dict):
        found = "field is missing" if "m_summary_dict" not in value else f"found {json_type(msd)}"
        error(f"{MSD} must be an object mapping reader ids to {{system: text}} ({ctx}, {found})")
        return None

    summaries: dict[str, dict[str, object]] = {}
    for uid, entry in msd.items():
        if not uid.strip():
            error(f"{MSD} has an empty reader id ({ctx})")
            continue
        if not isinstance(entry, dict):
            error(
                f'{MSD} entry for reader "{uid}" must be an object mapping system names to texts '
                f"({ctx}, found {json_type(entry)})"
            )
            continue
        for system in entry:
            if not system.strip():
                error(f'{MSD} entry for reader "{uid}" has an empty system name ({ctx})')
        summaries[uid] = dict(entry)  # values kept as given: non-strings count as missing when scored

    if len(problems) > before or doc_id is None:
        return None
    return Document(
        doc_id=doc_id,
        headline=strings["doc_summ"],
        body=strings["doc_text"],
        summaries=summaries,
        line=line,
        category=strings["category"],
        topic=strings["topic"],
    )


# --------------------------------------------------------------------------------------------------------------
# Ratings
# --------------------------------------------------------------------------------------------------------------


def load_ratings(path: str | Path, *, file: str | None = None, scale: tuple[float, float] = (1, 6),
                 raters: RaterChoice = DEFAULT_CHOICE) -> RatingTable:
    """Read a ratings CSV whose header names at least ``doc_id,system,uid1,uid2,rating``.

    Columns are found by name, so their order does not matter and other columns may appear anywhere (the
    survey export puts its extra columns after the five). An optional ``rater`` column is kept in
    :attr:`Rating.rater`. A UTF-8 BOM is accepted; blank lines are skipped. Each :class:`Rating` carries the
    line its record starts on. Raises ``ImportFileError`` listing every problem; a file with a header and no
    rows is an error. On a scale of whole numbers (1..6) a rating must be one of its points (3.5 is refused). A
    row with a rater that repeats an earlier row field for field is refused with both lines named (a copy; the
    same rater rating the same pair again in another questionnaire differs in its ``questionnaire`` column).

    Raters (:mod:`metaeval.core.io.exclusions`): the rows the file marks ``excluded`` = 1 (the survey export's review
    columns) are left out unless ``raters.include_excluded``, and so are the rows of the raters named in
    ``raters.exclude`` (a name the file lacks is a problem); every row is checked all the same. The table's
    ``exclusions`` says whom it left out.
    """
    low, high = _check_scale(scale)
    path = Path(path)
    file = file or path.name
    problems = Problems()
    text = read_text(path, file)
    header: list[str] | None = None
    header_line = 1
    numbered: list[tuple[int, dict[str, str]]] = []
    for start, fields in csv_rows(text, file, problems, fatal=True):
        if header is None:
            header, header_line = [name.strip() for name in fields], start
            if not _check_header(header, file, start, problems):
                problems.raise_if_any()
            continue
        if len(fields) != len(header):
            problems.add(file, start, f"expected {len(header)} fields as in the header, found {len(fields)}")
            continue
        numbered.append((start, dict(zip(header, map(from_spreadsheet_safe, fields), strict=True))))
    if header is None:
        problems.add(file, 1, "the file is empty (expected a header line " + ",".join(RATING_COLUMNS) + ")")
    elif not numbered and not problems:
        problems.add(file, header_line, "no ratings found after the header")
    first: dict[tuple[tuple[str, str], ...], int] = {}
    for line, row in numbered:
        if (row.get(RATER_COLUMN) or "").strip():
            earlier = first.setdefault(tuple(row.items()), line)
            if earlier != line:
                problems.add(file, line, f'repeats line {earlier} field for field (rater "{row[RATER_COLUMN]}", '
                             f'doc_id "{row["doc_id"]}", system "{row["system"]}"): remove the copy')
    chooser = RaterFilter(raters, file)
    dropped: set[int] = set()
    if header is not None and (EXCLUDED_COLUMN in header or not chooser.idle):
        for line, row in numbered:
            excluded, review, note = review_of(row)
            if not chooser.keep(line, row.get(RATER_COLUMN), excluded, review, note, problems):
                dropped.add(line)
    exclusions = chooser.finish(problems, header_line, has_raters=header is not None and RATER_COLUMN in header)
    rows = _collect_ratings(numbered, file, low, high, problems)
    problems.raise_if_any()
    return RatingTable(rows=tuple(row for row in rows if row.line not in dropped), source=file, scale_min=low,
                       scale_max=high, exclusions=exclusions)


def ratings_from_rows(
    rows: Iterable[Mapping[str, object]],
    *,
    source: str = "",
    scale: tuple[float, float] = (1, 6),
    lines: Sequence[int] | None = None,
) -> RatingTable:
    """Build a :class:`RatingTable` from mappings with the keys ``doc_id, system, uid1, uid2, rating`` (and
    optionally ``rater``); other keys are ignored. This is how a caller with ratings in a database (the survey's
    ``ratings_export_rows``) gets the same validation as the CSV path, without a file.

    Ids may be strings or integers (converted with ``str()``); the rating may be a number or a numeric string.
    Problems are reported as ``<source>:<n>: ...`` where n is ``lines[i]`` when given, else the 1-based row
    number. Raises ``ImportFileError`` listing every problem. An empty ``rows`` gives an empty table. On a scale
    of whole numbers a rating must be one of its points, as in :func:`load_ratings`.
    """
    low, high = _check_scale(scale)
    rows = list(rows)
    if lines is None:
        numbers: Sequence[int] = range(1, len(rows) + 1)
    else:
        numbers = list(lines)
        if len(numbers) != len(rows):
            raise ValueError(f"lines has {len(numbers)} entries for {len(rows)} rows")
    problems = Problems()
    name = source or "<rows>"
    ratings = _collect_ratings(zip(numbers, rows, strict=True), name, low, high, problems)
    problems.raise_if_any()
    return RatingTable(rows=tuple(ratings), source=source, scale_min=low, scale_max=high)


def _check_scale(scale: tuple[float, float]) -> tuple[float, float]:
    low, high = scale
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"scale must be (min, max) with min < max, not {scale!r}")
    return low, high


def _check_header(header: list[str], file: str, line: int, problems: Problems) -> bool:
    ok = True
    missing = [name for name in RATING_COLUMNS if name not in header]
    if missing:
        names = ", ".join(f'"{name}"' for name in missing)
        problems.add(
            file, line, f"the header lacks the column{'s' if len(missing) > 1 else ''} {names} "
            f"(expected at least {','.join(RATING_COLUMNS)})"
        )
        ok = False
    seen: set[str] = set()
    for name in header:
        if name in seen and (name in RATING_COLUMNS or name == RATER_COLUMN):
            problems.add(file, line, f'the header names the column "{name}" more than once')
            ok = False
        seen.add(name)
    return ok


def _collect_ratings(
    numbered: Iterable[tuple[int, Mapping[str, object]]], file: str, low: float, high: float, problems: Problems
) -> list[Rating]:
    out: list[Rating] = []
    for line, row in numbered:
        rating = _parse_rating(row, line, file, low, high, problems)
        if rating is not None:
            out.append(rating)
    return out


def _id_field(row: Mapping[str, object], key: str) -> tuple[str | None, str | None]:
    if key not in row or row[key] is None:
        return None, f'field "{key}" is missing'
    value = row[key]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value), None
    if not isinstance(value, str):
        return None, f'field "{key}" must be a string, found {type(value).__name__}'
    if not value.strip():
        return None, f'field "{key}" must not be empty'
    return value, None


def _rating_value(raw: object, low: float, high: float) -> tuple[float | None, str | None]:
    if raw is None:
        return None, 'field "rating" is missing'
    if isinstance(raw, bool):
        return None, f'field "rating": not a number: {raw!r}'
    if isinstance(raw, str):
        if not raw.strip():
            return None, 'field "rating" must not be empty'
        try:
            value = float(raw)
        except ValueError:
            return None, f'field "rating": not a number: "{raw}"'
    elif isinstance(raw, (int, float, Decimal)):
        value = float(raw)
    else:
        return None, f'field "rating": not a number: {raw!r}'
    if not math.isfinite(value):
        return None, f'field "rating": must be a finite number, found "{raw}"'
    if not low <= value <= high:
        return None, f'field "rating": {raw} is outside the scale {_num(low)}..{_num(high)}'
    if float(low).is_integer() and float(high).is_integer() and not value.is_integer():
        return None, f'field "rating": {raw} is not one of the scale points {_num(low)}..{_num(high)} (whole numbers)'
    return value, None


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _parse_rating(
    row: Mapping[str, object], line: int, file: str, low: float, high: float, problems: Problems
) -> Rating | None:
    before = len(problems)
    ids: dict[str, str] = {}
    for key in ("doc_id", "system", "uid1", "uid2"):
        value, problem = _id_field(row, key)
        if value is None:
            problems.add(file, line, problem or f'field "{key}" is missing')
        else:
            ids[key] = value
    if "uid1" in ids and ids.get("uid1") == ids.get("uid2"):
        problems.add(file, line, f'field "uid2": the same reader as uid1 ("{ids["uid1"]}"); a pair needs two readers')
    rating, problem = _rating_value(row.get("rating"), low, high)
    if problem:
        problems.add(file, line, problem)
    rater = row.get(RATER_COLUMN)
    if rating is None or len(problems) > before:
        return None
    return Rating(
        doc_id=ids["doc_id"],
        system=ids["system"],
        uid1=ids["uid1"],
        uid2=ids["uid2"],
        rating=rating,
        rater="" if rater is None else str(rater),
        line=line,
    )
