"""Style features of the texts behind a judgment file: lengths and other numeric features per (case, system), or
ready-made differences per (case, system pair) (conventions sec. 29).

A judgment file (sec. 17) may carry, beside its judgment columns, any of

- ``text_a``, ``text_b``: the texts of ``model_a`` and ``model_b``; a text's *length* is its number of
  whitespace-separated words (``len(text.split())``);
- ``length_a``, ``length_b``: the lengths as numbers >= 0 (they win over the texts' word counts where both are
  given);
- ``feature_<name>_a``, ``feature_<name>_b``: a numeric feature ``<name>`` of each side's text (e.g. the number of
  list items); its covariate is the difference a - b;
- ``style_<name>``: a covariate given directly as the value for ``model_a`` minus the value for ``model_b``.

A text belongs to a (case, system), so every row naming that system on that case must give it the same value
(``style_<name>``: the same per (case, pair), its sign following the row's sides); an empty cell is unknown.
A judge's cases file (sec. 20 item 1) gives the lengths of its ``text_a`` / ``text_b`` the same way
(:func:`style_data_from_cases`); :meth:`StyleData.merged` fills what the judgment file leaves unknown.

The covariate of a game between ``a`` and ``b`` (:meth:`StyleData.covariates`): for ``length`` the normalised
difference (len_a - len_b) / (len_a + len_b) (0 when both are 0; Chatbot Arena's style control), for a
``feature_`` the plain difference, for a ``style_`` column its value.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from metaeval.core.io.fileio import Problems, csv_rows, from_spreadsheet_safe, iter_json_values, json_type, read_text
from metaeval.core.pairwise.judgments import JSON_SUFFIXES

__all__ = ["LENGTH", "CaseTexts", "StyleData", "load_style_data", "parse_style_data", "style_data_from_cases",
           "word_count"]

#: the name of the length feature (from ``text_a``/``text_b`` or ``length_a``/``length_b``)
LENGTH = "length"
_SIDE_FEATURE = re.compile(r"^feature_(.+)_([ab])$")
_PAIR_FEATURE = re.compile(r"^style_(.+)$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def word_count(text: str) -> int:
    """A text's length: its number of whitespace-separated words."""
    return len(text.split())


@dataclass(frozen=True)
class StyleData:
    """Per-side features (name -> (case_id, system) -> value) and pair features (name -> (case_id, model_a,
    model_b) -> value for model_a minus model_b), with the line each value came from."""

    side: dict[str, dict[tuple[str, str], float]] = field(default_factory=dict)
    pair: dict[str, dict[tuple[str, str, str], float]] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """The covariates: ``length`` first, then the other per-side features, then the pair features (each in
        the order their columns first appear)."""
        side = sorted(self.side, key=lambda name: name != LENGTH)
        return [*side, *self.pair]

    def __bool__(self) -> bool:
        return any(self.side.values()) or any(self.pair.values())

    def length(self, case_id: str, system: str) -> float | None:
        """The length of ``system``'s text on ``case_id``, None when unknown."""
        return self.side.get(LENGTH, {}).get((case_id, system))

    def covariate(self, name: str, case_id: str, a: str, b: str) -> float | None:
        """The covariate ``name`` of a game of ``a`` against ``b`` on ``case_id`` (module docstring), or None."""
        if name in self.side:
            values = self.side[name]
            first, second = values.get((case_id, a)), values.get((case_id, b))
            if first is None or second is None:
                return None
            if name == LENGTH:
                total = first + second
                return 0.0 if total == 0 else (first - second) / total
            return first - second
        values_pair = self.pair.get(name, {})
        value = values_pair.get((case_id, a, b))
        if value is not None:
            return value
        value = values_pair.get((case_id, b, a))
        return None if value is None else -value

    def covariates(self, names: Sequence[str], case_id: str, a: str, b: str) -> list[float] | None:
        """Every covariate of ``names`` for the game, or None when one is unknown."""
        out: list[float] = []
        for name in names:
            value = self.covariate(name, case_id, a, b)
            if value is None:
                return None
            out.append(value)
        return out

    def merged(self, other: StyleData) -> StyleData:
        """These values, with ``other``'s where these have none."""
        side = {name: dict(values) for name, values in self.side.items()}
        for name, values in other.side.items():
            target = side.setdefault(name, {})
            for key, value in values.items():
                target.setdefault(key, value)
        pair = {name: dict(values) for name, values in self.pair.items()}
        for name, values_pair in other.pair.items():
            target_pair = pair.setdefault(name, {})
            for key_pair, value in values_pair.items():
                if key_pair not in target_pair and (key_pair[0], key_pair[2], key_pair[1]) not in target_pair:
                    target_pair[key_pair] = value
        return StyleData(side=side, pair=pair)


class _Collector:
    """Builds a :class:`StyleData`, reporting a value that contradicts an earlier one for the same text."""

    def __init__(self, file: str, problems: Problems) -> None:
        self.file, self.problems = file, problems
        self.side: dict[str, dict[tuple[str, str], tuple[float, int]]] = {}
        self.pair: dict[str, dict[tuple[str, str, str], tuple[float, int]]] = {}

    def add_side(self, name: str, column: str, case_id: str, system: str, value: float, line: int) -> None:
        values = self.side.setdefault(name, {})
        known = values.get((case_id, system))
        if known is None:
            values[(case_id, system)] = (value, line)
        elif known[0] != value:
            self.problems.add(self.file, line, f'field "{column}": {name} {value:g} of system "{system}" on case '
                              f'"{case_id}", but {known[0]:g} on line {known[1]} (one text, one value)')

    def add_pair(self, name: str, case_id: str, a: str, b: str, value: float, line: int) -> None:
        values = self.pair.setdefault(name, {})
        known = values.get((case_id, a, b))
        if known is None and (case_id, b, a) in values:
            other, where = values[(case_id, b, a)]
            known = (-other, where)
        if known is None:
            values[(case_id, a, b)] = (value, line)
        elif known[0] != value:
            self.problems.add(self.file, line, f'field "style_{name}": {value:g} for "{a}" against "{b}" on case '
                              f'"{case_id}", but {known[0]:g} on line {known[1]} (one pair of texts, one value)')

    def data(self) -> StyleData:
        return StyleData(side={name: {key: value for key, (value, _) in values.items()}
                               for name, values in self.side.items()},
                         pair={name: {key: value for key, (value, _) in values.items()}
                               for name, values in self.pair.items()})


@dataclass(frozen=True)
class _Columns:
    texts: bool
    lengths: bool
    side: tuple[str, ...]  # feature names with both _a and _b columns
    pair: tuple[str, ...]


def _columns(header: Iterable[str], file: str, line: int, problems: Problems) -> _Columns:
    names = list(header)
    present = set(names)
    for first, second in (("text_a", "text_b"), ("length_a", "length_b")):
        if (first in present) != (second in present):
            have, lack = (first, second) if first in present else (second, first)
            problems.add(file, line, f'the header has the column "{have}" but not "{lack}" (a pair of texts)')
    side: dict[str, set[str]] = {}
    pair: list[str] = []
    for column in names:
        if (match := _SIDE_FEATURE.match(column)) is not None:
            side.setdefault(match.group(1), set()).add(match.group(2))
        elif (match := _PAIR_FEATURE.match(column)) is not None:
            pair.append(match.group(1))
    for name, sides in side.items():
        if sides != {"a", "b"}:
            lack = "b" if "a" in sides else "a"
            problems.add(file, line, f'the header has the column "feature_{name}_{sorted(sides)[0]}" but not '
                         f'"feature_{name}_{lack}" (a feature of both texts)')
    for name in [*side, *pair]:
        if not _NAME.match(name):
            problems.add(file, line, f'style feature name "{name}": use letters, digits, "_", "." or "-"')
        elif name == LENGTH:
            problems.add(file, line, f'style feature name "{LENGTH}" is reserved: give lengths as length_a,length_b '
                         "(or texts as text_a,text_b)")
    for name in sorted(set(side) & set(pair)):
        problems.add(file, line, f'style feature "{name}" is given both as feature_{name}_a/_b and as style_{name}')
    for name in sorted({name for name in pair if pair.count(name) > 1}):
        problems.add(file, line, f'the header names the column "style_{name}" more than once')
    return _Columns(texts="text_a" in present and "text_b" in present,
                    lengths="length_a" in present and "length_b" in present,
                    side=tuple(name for name, sides in side.items() if sides == {"a", "b"}),
                    pair=tuple(dict.fromkeys(pair)))


def _number(value: object, column: str, file: str, line: int, problems: Problems, *,
            non_negative: bool = False) -> float | None:
    """A cell's number (None when empty); a problem when it is not a finite number."""
    if value is None or value == "":
        return None
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or (non_negative and number < 0):
        shown = repr(value) if isinstance(value, str) else json_type(value)
        problems.add(file, line, f'field "{column}" must be a {"number >= 0" if non_negative else "finite number"}'
                     f", found {shown}")
        return None
    return number


def _text(value: object, column: str, file: str, line: int, problems: Problems) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        problems.add(file, line, f'field "{column}" must be a string, found {json_type(value)}')
        return None
    return value


def _row(record: Mapping[str, object], columns: _Columns, line: int, collector: _Collector) -> None:
    file, problems = collector.file, collector.problems
    case_id, model_a, model_b = (record.get(key) for key in ("case_id", "model_a", "model_b"))
    if isinstance(case_id, int) and not isinstance(case_id, bool):
        case_id = str(case_id)
    if not (isinstance(case_id, str) and isinstance(model_a, str) and isinstance(model_b, str)
            and case_id and model_a and model_b):
        return  # the judgment loader reports it
    for side, system in (("a", model_a), ("b", model_b)):
        length = None
        if columns.lengths:
            length = _number(record.get(f"length_{side}"), f"length_{side}", file, line, problems, non_negative=True)
        if length is None and columns.texts:
            text = _text(record.get(f"text_{side}"), f"text_{side}", file, line, problems)
            length = None if text is None else float(word_count(text))
        if length is not None:
            collector.add_side(LENGTH, f"length_{side}" if columns.lengths else f"text_{side}", case_id, system,
                               length, line)
        for name in columns.side:
            column = f"feature_{name}_{side}"
            value = _number(record.get(column), column, file, line, problems)
            if value is not None:
                collector.add_side(name, column, case_id, system, value, line)
    for name in columns.pair:
        value = _number(record.get(f"style_{name}"), f"style_{name}", file, line, problems)
        if value is not None:
            collector.add_pair(name, case_id, model_a, model_b, value, line)


def load_style_data(path: str | Path, *, file: str | None = None) -> StyleData:
    """The style features of a judgment file (module docstring); empty when it has no such column. Every problem
    is reported at once as ``file:line: ...`` in an ``ImportFileError``. Read the file with
    :func:`~metaeval.core.pairwise.judgments.load_judgments` first: this reader trusts its judgment columns."""
    path = Path(path)
    file = file or path.name
    return parse_style_data(read_text(path, file), file, json_lines=path.suffix.lower() in JSON_SUFFIXES)


def parse_style_data(text: str, file: str, *, json_lines: bool) -> StyleData:
    """:func:`load_style_data` on a file's text."""
    problems = Problems()
    collector = _Collector(file, problems)
    if json_lines:
        records = [(line, value) for line, value in iter_json_values(text, file, problems) if isinstance(value, dict)]
        if records:  # the columns: every key of every record, in order of first appearance
            header = dict.fromkeys(key for _, record in records for key in record)
            columns = _columns(header, file, records[0][0], problems)
            for line, record in records:
                _row(record, columns, line, collector)
    else:
        _read_csv(text, file, problems, collector)
    problems.raise_if_any()
    return collector.data()


def _read_csv(text: str, file: str, problems: Problems, collector: _Collector) -> None:
    """The CSV rows with the judgment loader's line numbers (a row's first line; blank rows skipped)."""
    header: list[str] | None = None
    columns: _Columns | None = None
    for start, fields in csv_rows(text, file, None):  # a malformed record: the judgment loader reports it
        if header is None:
            header = [name.strip() for name in fields]
            columns = _columns(header, file, start, problems)
            if not (columns.texts or columns.lengths or columns.side or columns.pair):
                return
            continue
        if len(fields) != len(header) or columns is None:
            continue  # the judgment loader reports it
        record = {name: from_spreadsheet_safe(value) for name, value in zip(header, fields, strict=True)}
        _row(record, columns, start, collector)


class CaseTexts(Protocol):
    """What :func:`style_data_from_cases` reads of a judge case (:class:`metaeval.core.judges.cases.JudgeCase`)."""

    @property
    def case_id(self) -> str: ...
    @property
    def model_a(self) -> str: ...
    @property
    def model_b(self) -> str: ...
    @property
    def text_a(self) -> str: ...
    @property
    def text_b(self) -> str: ...
    @property
    def line(self) -> int: ...


def style_data_from_cases(cases: Iterable[CaseTexts], file: str = "cases") -> StyleData:
    """The lengths of a judge's cases' texts (``text_a`` of ``model_a``, ``text_b`` of ``model_b``); a system
    whose text on a case has two different lengths in two cases is an error naming the lines."""
    problems = Problems()
    collector = _Collector(file, problems)
    for case in cases:
        for side, system, text in (("a", case.model_a, case.text_a), ("b", case.model_b, case.text_b)):
            collector.add_side(LENGTH, f"text_{side}", case.case_id, system, float(word_count(text)), case.line)
    problems.raise_if_any()
    return collector.data()
