"""The pairwise judgment table: one row per judgment of two systems on one case and criterion (conventions sec. 17).

File layout (FastChat's pairwise battle export, as a table): a CSV with a header, or JSON Lines / JSON objects
(chosen by the extension ``.jsonl`` / ``.json``; anything else is read as CSV), with the columns

    case_id,criterion,model_a,model_b,winner[,judge,judge_kind,run,shown_first,doc_id,reader_id]

``winner`` is ``model_a``, ``model_b``, ``tie`` or ``invalid`` (an unparseable judge answer, AuPEL sec. 3.4);
``shown_first`` (optional) is ``model_a`` or ``model_b``; ``run`` (optional) an integer from 1 to :data:`MAX_RUN`
(the repeat of an LLM judge); ``judge`` at most :data:`MAX_JUDGE` characters; ``judge_kind`` free text such as
``human`` or ``llm``. Other columns are ignored. ``invalid`` rows are kept
in the table and counted, and never enter a game (:mod:`metaeval.core.pairwise.games`).

Raters (:mod:`metaeval.core.io.exclusions`): a study export ends each row with ``review,excluded,review_note``; the
rows marked ``excluded`` = 1 are left out unless ``include_excluded``, and so are the judges named in ``exclude``
(by their ``judge`` cell); every row is checked all the same, and ``JudgmentTable.exclusions`` says whom it left out.
"""
from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from metaeval.core.io.exclusions import (
    DEFAULT_CHOICE,
    EXCLUDED_COLUMN,
    NOTE_COLUMN,
    REVIEW_COLUMN,
    Exclusions,
    RaterChoice,
    RaterFilter,
    review_of,
)
from metaeval.core.io.fileio import (
    Problems,
    csv_rows,
    decode_bytes,
    from_spreadsheet_safe,
    iter_json_values,
    json_type,
    read_text,
)

__all__ = [
    "OPTIONAL_COLUMNS",
    "OVERALL",
    "REQUIRED_COLUMNS",
    "WINNERS",
    "Judgment",
    "JudgmentTable",
    "judgments_from_bytes",
    "load_judgments",
    "parse_judgments",
    "with_judge_kind",
]

REQUIRED_COLUMNS = ("case_id", "criterion", "model_a", "model_b", "winner")
OPTIONAL_COLUMNS = ("judge", "judge_kind", "run", "shown_first", "doc_id", "reader_id")
WINNERS = ("model_a", "model_b", "tie", "invalid")
SIDES = ("model_a", "model_b")
#: the criterion that pools the games of every criterion; reserved, a file may not use it
OVERALL = "overall"
#: the largest repeat number (``run``) and the longest judge name a file may carry: what a study keeps of a file
#: judge's judgments (``survey.models.JudgeJudgment.run``, a smallint, and ``JudgeRun.name``)
MAX_RUN = 32_767
MAX_JUDGE = 200
JSON_SUFFIXES = (".jsonl", ".json")


@dataclass(frozen=True, slots=True)
class Judgment:
    """One judgment: ``winner`` names the side that won (or ``tie`` / ``invalid``); ``line`` is its file line."""

    case_id: str
    criterion: str
    model_a: str
    model_b: str
    winner: str
    line: int
    judge: str = ""
    judge_kind: str = ""
    run: int | None = None
    shown_first: str = ""
    doc_id: str = ""
    reader_id: str = ""

    @property
    def is_valid(self) -> bool:
        return self.winner != "invalid"


@dataclass(frozen=True)
class JudgmentTable:
    """Every judgment of a file in file order, ``invalid`` ones included (``valid()`` leaves them out)."""

    judgments: tuple[Judgment, ...]
    source: str = ""
    #: the judges the reader left out of the file (``judgments`` holds only the kept ones)
    exclusions: Exclusions = field(default_factory=Exclusions)

    @property
    def invalid(self) -> int:
        """How many judgments are ``invalid`` (counted, never played)."""
        return sum(1 for judgment in self.judgments if not judgment.is_valid)

    def valid(self) -> list[Judgment]:
        return [judgment for judgment in self.judgments if judgment.is_valid]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while many small objects are built (it would rescan them again
    and again; none of them form cycles); restored afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def with_judge_kind(table: JudgmentTable, kinds: str | Iterable[str]) -> JudgmentTable:
    """The judgments whose ``judge_kind`` is one of ``kinds`` (a name or several), in file order."""
    wanted = {kinds} if isinstance(kinds, str) else set(kinds)
    return replace(table, judgments=tuple(j for j in table.judgments if j.judge_kind in wanted))


def load_judgments(path: str | Path, *, file: str | None = None,
                   raters: RaterChoice = DEFAULT_CHOICE) -> JudgmentTable:
    """Read a judgment file (CSV, or JSON Lines for ``.jsonl`` / ``.json``); every problem is reported at once as
    ``file:line: field ...`` in an ``ImportFileError``; a file without judgments is an error ("no judgments").
    ``raters`` chooses the judges (module docstring)."""
    path = Path(path)
    file = file or path.name
    return parse_judgments(read_text(path, file), file, json_lines=path.suffix.lower() in JSON_SUFFIXES,
                           raters=raters)


def judgments_from_bytes(data: bytes, file: str, *, raters: RaterChoice = DEFAULT_CHOICE) -> JudgmentTable:
    """:func:`load_judgments` on a file's bytes (an upload): ``file`` names it and its extension picks the format."""
    return parse_judgments(decode_bytes(data, file), file, json_lines=Path(file).suffix.lower() in JSON_SUFFIXES,
                           raters=raters)


def parse_judgments(text: str, file: str, *, json_lines: bool, raters: RaterChoice = DEFAULT_CHOICE
                    ) -> JudgmentTable:
    """:func:`load_judgments` on a file's text (``file`` names it in messages; ``json_lines`` as its extension
    would choose)."""
    problems = Problems()
    judgments: list[Judgment] = []
    chooser = RaterFilter(raters, file)
    if json_lines:
        records = _json_records(text, file, problems)
        has_judge = any("judge" in record for _, record in records)
        for line, record in records:
            judgment = _parse(record, line, file, problems)
            keep = chooser.keep(line, record.get("judge", ""), *review_of(record), problems=problems) \
                if (EXCLUDED_COLUMN in record or not chooser.idle) else True
            if judgment is not None and keep:
                judgments.append(judgment)
        found = len(records)
    else:
        with gc_paused():
            found, has_judge = _read_csv(text, file, problems, judgments, chooser)
    exclusions = chooser.finish(problems, has_raters=has_judge)
    if not found and not problems:
        problems.add(file, 1, "no judgments" + ("" if text.strip() else " (the file is empty)"))
    problems.raise_if_any()
    return JudgmentTable(judgments=tuple(judgments), source=file, exclusions=exclusions)


def _read_csv(text: str, file: str, problems: Problems, out: list[Judgment], chooser: RaterFilter
              ) -> tuple[int, bool]:
    """Parse the CSV rows into ``out`` (those ``chooser`` keeps); returns how many data rows there were and whether
    the header has a ``judge`` column. A row whose fields are all valid as they stand takes a fast path
    (:func:`_clean`); any other goes through :func:`_parse`, which names its problems."""
    header: list[str] | None = None
    positions: tuple[int | None, ...] = ()
    review_at: tuple[int | None, ...] | None = None  # judge, excluded, review, note
    rows = 0
    quoted = "'" in text  # a cell may need from_spreadsheet_safe only then
    for start, fields in csv_rows(text, file, problems):
        if header is None:
            header = [name.strip() for name in fields]
            _check_header(header, file, start, problems)
            problems.raise_if_any()
            positions = tuple(header.index(name) if name in header else None for name in _FIELDS)
            if EXCLUDED_COLUMN in header or not chooser.idle:
                review_at = tuple(header.index(name) if name in header else None
                                  for name in ("judge", EXCLUDED_COLUMN, REVIEW_COLUMN, NOTE_COLUMN))
            continue
        rows += 1
        if len(fields) != len(header):
            problems.add(file, start, f"expected {len(header)} fields as in the header, found {len(fields)}")
            continue
        if quoted and any(field[:1] == "'" for field in fields):
            fields = [from_spreadsheet_safe(field) for field in fields]
        judgment = _clean([fields[i] if i is not None else "" for i in positions], start)
        if judgment is None:
            judgment = _parse(dict(zip(header, fields, strict=True)), start, file, problems)
        if review_at is not None:
            judge, excluded, review, note = (fields[i] if i is not None else None for i in review_at)
            if not chooser.keep(start, judge, excluded, review, note, problems):
                continue
        if judgment is not None:
            out.append(judgment)
    return rows, header is not None and "judge" in header


_FIELDS = (*REQUIRED_COLUMNS, "judge", "judge_kind", "run", "shown_first", "doc_id", "reader_id")
_WINNERS = frozenset(WINNERS)


def _clean(values: list[str], line: int) -> Judgment | None:
    """The judgment when every field is valid as it stands, else None (the caller then reports the problems)."""
    case_id, criterion, model_a, model_b, winner, judge, judge_kind, run, shown_first, doc_id, reader_id = values
    if (winner not in _WINNERS or model_a == model_b or criterion == OVERALL
            or not (case_id.strip() and criterion.strip() and model_a.strip() and model_b.strip())
            or (shown_first and shown_first not in SIDES) or len(judge) > MAX_JUDGE):
        return None
    number: int | None = None
    if run:
        if not (run.isascii() and run.isdigit()) or len(run) > 5 or not 1 <= (number := int(run)) <= MAX_RUN:
            return None
    return Judgment(case_id, criterion, model_a, model_b, winner, line, judge, judge_kind, number, shown_first,
                    doc_id, reader_id)


def _check_header(header: list[str], file: str, line: int, problems: Problems) -> None:
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        names = ", ".join(f'"{name}"' for name in missing)
        problems.add(file, line, f"the header lacks the column{'s' if len(missing) > 1 else ''} {names} "
                     f"(expected at least {','.join(REQUIRED_COLUMNS)})")
    known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    for name in sorted({name for name in header if name in known and header.count(name) > 1}):
        problems.add(file, line, f'the header names the column "{name}" more than once')


def _json_records(text: str, file: str, problems: Problems) -> list[tuple[int, Mapping[str, object]]]:
    records: list[tuple[int, Mapping[str, object]]] = []
    for line, value in iter_json_values(text, file, problems):
        if isinstance(value, dict):
            records.append((line, value))
        else:
            problems.add(file, line, f"expected a JSON object (one judgment), found {json_type(value)}")
    return records


def _text(record: Mapping[str, object], key: str, *, required: bool) -> tuple[str, str | None]:
    """``(text, problem)``: a string field (a JSON integer is accepted as its decimal text)."""
    value = record.get(key)
    if value is None or value == "":
        return "", (f'field "{key}" is missing' if key not in record else f'field "{key}" must not be empty') \
            if required else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value), None
    if not isinstance(value, str):
        return "", f'field "{key}" must be a string, found {json_type(value)}'
    if required and not value.strip():
        return "", f'field "{key}" must not be empty'
    return value, None


def _run(value: object) -> tuple[int | None, str | None]:
    if value is None or value == "":
        return None, None
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and (digits := value.strip().lstrip("+")).isdigit() and len(digits) <= 18:
        number = int(digits)
    if number is None or not 1 <= number <= MAX_RUN:
        shown = repr(value)
        return None, f'field "run" must be an integer from 1 to {MAX_RUN}, found ' \
                     f'{shown if len(shown) <= 24 else shown[:20] + "..."}'
    return number, None


def _parse(record: Mapping[str, object], line: int, file: str, problems: Problems) -> Judgment | None:
    before = len(problems)
    fields: dict[str, str] = {}
    for key in (*REQUIRED_COLUMNS, *(name for name in OPTIONAL_COLUMNS if name != "run")):
        value, problem = _text(record, key, required=key in REQUIRED_COLUMNS)
        if problem:
            problems.add(file, line, problem)
        fields[key] = value
    if fields["winner"] and fields["winner"] not in WINNERS:
        problems.add(file, line, f'field "winner": unknown value "{fields["winner"]}" (expected {"|".join(WINNERS)})')
    if fields["model_a"] and fields["model_a"] == fields["model_b"]:
        problems.add(file, line, f'field "model_b": the same system as model_a ("{fields["model_a"]}"); '
                     "a system cannot play itself")
    if fields["criterion"] == OVERALL:
        problems.add(file, line, f'field "criterion": "{OVERALL}" is reserved (the games of every criterion)')
    if fields["shown_first"] and fields["shown_first"] not in SIDES:
        problems.add(file, line, f'field "shown_first": unknown value "{fields["shown_first"]}" '
                     f'(expected {"|".join(SIDES)} or empty)')
    if len(fields["judge"]) > MAX_JUDGE:
        problems.add(file, line, f'field "judge" is longer than {MAX_JUDGE} characters')
    run, problem = _run(record.get("run"))
    if problem:
        problems.add(file, line, problem)
    if len(problems) > before:
        return None
    return Judgment(line=line, run=run, **fields)
