"""Which raters a ratings or judgment file's reader leaves out (docs/conventions.md sec. 2 and 17).

The survey's exports end every row with the rater's review on the study's participants page (``review``:
``pending``/``approved``/``rejected``, ``excluded``: 1 or 0, ``review_note``). A reader leaves out the rows marked
``excluded`` = 1 unless told to keep them (``include_excluded``), and the rows of the raters it is told to leave
out by name (``exclude``); :class:`Exclusions` says what it left out and why, for the command line to print. The
rule is per row (:meth:`RaterChoice.drops`); the export marks every row of a participant alike, so it leaves out
exactly the participants a run on the platform leaves out. No Django here.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from metaeval.core.io.fileio import Problems, from_spreadsheet_safe

__all__ = ["DEFAULT_CHOICE", "EXCLUDED_COLUMN", "REVIEW_COLUMNS", "Exclusions", "LeftOut", "RaterChoice", "RaterFilter",
           "excluded_cell", "review_of"]

#: the columns the survey's exports append to every row: the review, whether excluded (1/0), the note
REVIEW_COLUMNS = ("review", "excluded", "review_note")
REVIEW_COLUMN, EXCLUDED_COLUMN, NOTE_COLUMN = REVIEW_COLUMNS
#: why a row was left out
MARKED, NAMED = "marked", "named"
_KEPT = "kept"  # marked excluded, kept by include_excluded
_TRUE = frozenset({"1", "true", "yes"})
_FALSE = frozenset({"0", "false", "no", ""})
_NOT_EXCLUDED = ("0", "", None)  # the cells an export writes for a rater not excluded (0 in JSON: see excluded_cell)


def excluded_cell(value: object) -> bool | None:
    """An ``excluded`` cell as a flag: 1/true/yes is True, 0/false/no, empty or absent (an LLM judge's row) False;
    None for anything else (the reader reports it at its line)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return {1: True, 0: False}.get(value)
    if isinstance(value, str):
        text = value.strip().lower()
        return True if text in _TRUE else False if text in _FALSE else None
    return None


@dataclass(frozen=True)
class RaterChoice:
    """Whom a reader leaves out: the raters named in ``exclude`` (``--exclude-raters``, ids as the file writes them)
    and, unless ``include_excluded`` (``--include-excluded``), the rows the file marks excluded."""

    exclude: frozenset[str] = frozenset()
    include_excluded: bool = False

    @classmethod
    def of(cls, exclude: Iterable[str] = (), *, include_excluded: bool = False) -> RaterChoice:
        return cls(frozenset(name.strip() for name in exclude if name.strip()), include_excluded)

    def drops(self, rater: str, excluded: bool) -> str | None:
        """Why a row of ``rater`` marked ``excluded`` is left out (:data:`NAMED` or :data:`MARKED`), or None when it
        is kept: the one rule of every reader."""
        if rater in self.exclude:
            return NAMED
        if excluded and not self.include_excluded:
            return MARKED
        return None

    def keeps_cells(self, rater: str | None, excluded: str | None) -> bool:
        """Whether a CSV row whose rater and ``excluded`` cells read as written (spreadsheet-safe, or absent) is
        kept: :meth:`drops` on the cells as a reader reads them (a bad ``excluded`` cell counts as not excluded;
        the reader reports it)."""
        flag = excluded_cell(from_spreadsheet_safe(excluded or ""))
        return self.drops(from_spreadsheet_safe(rater or ""), bool(flag)) is None


#: what a reader does unless told otherwise: leave out the rows marked excluded, no rater named
DEFAULT_CHOICE = RaterChoice()


@dataclass(frozen=True)
class LeftOut:
    """A rater whose ``rows`` were left out (or kept though marked excluded), ``why`` (:data:`NAMED`: by name;
    :data:`MARKED`: the file marks them excluded), with the review and note of their first such row."""

    rater: str
    rows: int
    why: str
    review: str = ""
    note: str = ""

    def describe(self) -> str:
        unit = "row" if self.rows == 1 else "rows"
        if self.why == NAMED:
            return f"{self.rater or '(no rater)'} ({self.rows} {unit}; --exclude-raters)"
        review = f"{self.review}, " if self.review and self.review != "pending" else ""
        note = f'; note: "{self.note}"' if self.note else ""
        return f"{self.rater or '(no rater)'} ({self.rows} {unit}; {review}excluded on the participants page{note})"


@dataclass(frozen=True)
class Exclusions:
    """What a reader left out of a file of ``rows`` rows by ``raters`` raters: ``left_out`` in order of first row,
    and ``kept_excluded``, the raters the file marks excluded that ``include_excluded`` kept."""

    left_out: tuple[LeftOut, ...] = ()
    kept_excluded: tuple[LeftOut, ...] = ()
    rows: int = 0
    raters: int = 0

    @property
    def raters_left_out(self) -> list[str]:
        return [entry.rater for entry in self.left_out]

    @property
    def rows_left_out(self) -> int:
        return sum(entry.rows for entry in self.left_out)

    def lines(self, source: str) -> list[str]:
        """What to tell the user (stderr): one line for what was left out, one for what was kept though marked."""
        out = []
        if self.left_out:
            n = len(self.left_out)
            out.append(f"{source}: left out {n} of {self.raters} rater{'s' if self.raters != 1 else ''} "
                       f"({self.rows_left_out} of {self.rows} rows): "
                       + ", ".join(entry.describe() for entry in self.left_out)
                       + (" (--include-excluded keeps those excluded on the participants page)"
                          if any(entry.why == MARKED for entry in self.left_out) else ""))
        if self.kept_excluded:
            n = len(self.kept_excluded)
            out.append(f"{source}: kept {n} rater{'s' if n != 1 else ''} excluded on the participants page "
                       "(--include-excluded): " + ", ".join(entry.describe() for entry in self.kept_excluded))
        return out


@dataclass
class RaterFilter:
    """Applies a :class:`RaterChoice` to a file's rows as a reader reads them (:meth:`keep`), then checks the
    named raters against the file and gives the :class:`Exclusions` (:meth:`finish`)."""

    choice: RaterChoice
    file: str
    rows: int = 0
    #: what :meth:`finish` gave, for a reader that returns no table (the Zopf judgments)
    exclusions: Exclusions = field(default_factory=Exclusions)
    _raters: dict[str, None] = field(default_factory=dict)
    _counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (rater, why or "kept") -> rows
    _reviews: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # -> first (review, note)

    @property
    def idle(self) -> bool:
        """Nothing to choose: no rater named (a file without the ``excluded`` column is then read whole)."""
        return not self.choice.exclude

    def keep(self, line: int, rater: object, excluded: object, review: object = "", note: object = "",
             problems: Problems | None = None) -> bool:
        """Whether the row at ``line`` of ``rater`` with these review cells is kept; a bad ``excluded`` cell is a
        problem at ``line`` (the row is then not kept)."""
        flag = False if excluded in _NOT_EXCLUDED else excluded_cell(excluded)  # the common cells first
        if flag is None:
            if problems is not None:
                problems.add(self.file, line, f'field "{EXCLUDED_COLUMN}": expected 1 (excluded) or 0, or empty; '
                             f"found {excluded!r}")
            return False
        name = rater if isinstance(rater, str) else "" if rater is None else str(rater)
        self.rows += 1
        self._raters[name] = None
        if not flag and name not in self.choice.exclude:
            return True
        why = self.choice.drops(name, flag)
        key = (name, why or _KEPT)
        self._counts[key] = self._counts.get(key, 0) + 1
        self._reviews.setdefault(key, ("" if review is None else str(review), "" if note is None else str(note)))
        return why is None

    def finish(self, problems: Problems, line: int = 1, *, has_raters: bool = True) -> Exclusions:
        """The :class:`Exclusions` (also kept as ``exclusions``); a named rater who rated nothing in the file (or
        a file without a rater column, ``has_raters`` False) is a problem at ``line`` (the header)."""
        named = sorted(self.choice.exclude)
        if named and not has_raters:
            problems.add(self.file, line, f"--exclude-raters {','.join(named)}: the file has no rater column")
        elif named:
            unknown = [name for name in named if name not in self._raters]
            if unknown:
                known = sorted((name for name in self._raters if name), key=_natural)
                shown = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
                problems.add(self.file, line, f"--exclude-raters: no rater {', '.join(unknown)} in this file "
                             f"(its raters: {shown or 'none'})")
        entries = [LeftOut(rater, rows, MARKED if why == _KEPT else why, *self._reviews[rater, why])
                   for (rater, why), rows in self._counts.items()]
        self.exclusions = Exclusions(
            left_out=tuple(entry for entry, (_, why) in zip(entries, self._counts, strict=True) if why != _KEPT),
            kept_excluded=tuple(entry for entry, (_, why) in zip(entries, self._counts, strict=True) if why == _KEPT),
            rows=self.rows, raters=len(self._raters),
        )
        return self.exclusions


def _natural(name: str) -> list[object]:
    """Sort key: ``P2`` before ``P10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def review_of(row: Mapping[str, object]) -> tuple[object, object, object]:
    """The ``excluded``, ``review`` and ``review_note`` cells of a row read by column name (None when absent)."""
    return row.get(EXCLUDED_COLUMN), row.get(REVIEW_COLUMN), row.get(NOTE_COLUMN)
