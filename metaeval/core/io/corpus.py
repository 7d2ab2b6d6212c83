"""Plain corpus types for the numeric core (docs/conventions.md sec. 2).

A dataset is a sequence of documents in file order; each document maps reader ids (in ``m_summary_dict``
order) to that reader's summaries keyed by system name, with ``"user"`` (:data:`REFERENCE`) for the reader's
own summary. Every id is a string. A summary that is not a string counts as missing.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from metaeval.core.io.exclusions import Exclusions
from metaeval.core.io.fileio import listed

REFERENCE = "user"
Missing = Literal["error", "drop"]


class DataError(ValueError):
    """Input that cannot be scored (missing summary, unknown id); the message names document and reader."""


class MissingSummary(DataError):
    """A reader of a document lacks their own ("user") summary or a system's; ``what`` names them. The message
    gives the command line's fix; ``metaeval.services`` words it for the run form."""

    HINT = "(use --missing drop to leave such readers out)"

    def __init__(self, doc_id: str, reader: str, lacking: list[str]) -> None:
        self.doc_id, self.reader, self.lacking = doc_id, reader, list(lacking)
        self.what = " and ".join(f'"{name}"' for name in lacking)
        self.problem = f'document "{doc_id}", reader "{reader}": no {self.what} summary'
        super().__init__(f"{self.problem} {self.HINT}")


class MissingSummaries(MissingSummary):
    """Every reader of a corpus lacking a summary a run needs (:func:`require_summaries`), one per line as
    ``file:line: document "D", reader "U": no "user" summary`` in file order, then the fix; ``doc_id``, ``reader``
    and ``what`` are the first one's."""

    def __init__(self, corpus: Corpus, found: Sequence[tuple[Document, MissingSummary]]) -> None:
        first = found[0][1]
        super().__init__(first.doc_id, first.reader, first.lacking)
        self.found = [item for _, item in found]
        lines = [f"{corpus.source}:{document.line}: {item.problem}" if corpus.source and document.line
                 else item.problem for document, item in found]
        separator = " " if len(lines) == 1 else "\n"  # one problem: one line, as MissingSummary
        DataError.__init__(self, f"{listed(lines)}{separator}{self.HINT}")


@dataclass(frozen=True)
class Document:
    """One document: ``headline`` is ``doc_summ``, ``body`` is ``doc_text``."""

    doc_id: str
    headline: str
    body: str
    summaries: Mapping[str, Mapping[str, object]]
    line: int = 0
    category: str = ""
    topic: str = ""

    @property
    def text(self) -> str:
        """The text summaries are compared with: ``f"{doc_summ} {doc_text}"`` (conventions sec. 3)."""
        return f"{self.headline} {self.body}"

    @property
    def readers(self) -> list[str]:
        return list(self.summaries)

    def summary(self, reader: str, system: str) -> str | None:
        """The summary text, or ``None`` when absent or not a string."""
        value = self.summaries.get(reader, {}).get(system)
        return value if isinstance(value, str) else None

    def pair_is_identical(self, system: str, reader_j: str, reader_k: str) -> bool | None:
        """Whether ``system``'s summaries for the two readers (their own ones for ``"user"``) are the same text
        (:func:`same_text`); ``None`` when either summary is missing."""
        a, b = self.summary(reader_j, system), self.summary(reader_k, system)
        return None if a is None or b is None else same_text(a, b)

    def lacking(self, reader: str, systems: Sequence[str]) -> list[str]:
        """What ``reader`` lacks to take part for ``systems``: ``"user"`` and each system without a summary."""
        return [name for name in (REFERENCE, *systems) if self.summary(reader, name) is None]

    def readers_for(self, system: str, missing: Missing = "error") -> list[str]:
        """Readers taking part for ``system``: those with both a ``"user"`` and a ``system`` summary (sec. 2).

        ``missing="error"`` raises :class:`DataError` naming the first reader lacking one of them
        (:func:`require_summaries` names them all); ``missing="drop"`` leaves that reader out.
        """
        kept: list[str] = []
        for reader in self.summaries:
            lacking = self.lacking(reader, [system])
            if not lacking:
                kept.append(reader)
            elif missing == "error":
                raise MissingSummary(self.doc_id, reader, lacking)
        return kept


@dataclass(frozen=True)
class Corpus:
    """Documents in file order; ``systems`` in first-seen order, ``"user"`` excluded."""

    documents: tuple[Document, ...]
    systems: tuple[str, ...]
    source: str = ""

    def document(self, doc_id: str) -> Document:
        for document in self.documents:
            if document.doc_id == doc_id:
                return document
        raise DataError(f'unknown document "{doc_id}"')

    def by_id(self) -> dict[str, Document]:
        return {document.doc_id: document for document in self.documents}


@dataclass(frozen=True)
class Rating:
    """One similarity rating of the pair (uid1, uid2) of ``system``'s summaries of ``doc_id``."""

    doc_id: str
    system: str
    uid1: str
    uid2: str
    rating: float
    rater: str = ""
    line: int = 0


@dataclass(frozen=True)
class RatingTable:
    """Ratings in file order, on the scale ``scale_min``..``scale_max`` (1..6 in the survey)."""

    rows: tuple[Rating, ...]
    source: str = ""
    scale_min: float = 1
    scale_max: float = 6
    extra: Mapping[str, object] = field(default_factory=dict)
    #: the raters the reader left out of the file (docs/conventions.md sec. 2; ``rows`` holds only the kept ones)
    exclusions: Exclusions = field(default_factory=Exclusions)

    @property
    def systems(self) -> list[str]:
        """Every rated system other than ``"user"``, sorted (sec. 7)."""
        return sorted({row.system for row in self.rows} - {REFERENCE})

    def __len__(self) -> int:
        return len(self.rows)


def require_summaries(corpus: Corpus, systems: Sequence[str] | None = None) -> None:
    """Raise :class:`MissingSummaries` naming every reader of every document who lacks their own summary or one
    of ``systems``' (default: every system of the corpus), in file order: all that a run with ``missing="error"``
    refuses (:meth:`Document.readers_for`), at once."""
    chosen = list(corpus.systems if systems is None else systems)
    found = [(document, MissingSummary(document.doc_id, reader, lacking))
             for document in corpus.documents for reader in document.summaries
             if (lacking := document.lacking(reader, chosen))]
    if found:
        raise MissingSummaries(corpus, found)


def same_text(a: str, b: str) -> bool:
    """Whether two summaries are the same text as a participant sees it: equal after collapsing runs of
    whitespace and trimming the ends (``a.split() == b.split()``; case and punctuation count). A rating of such a
    pair says nothing about the raters (docs/conventions.md, sec. 15)."""
    return a.split() == b.split()


def systems_in_order(documents: Sequence[Document]) -> tuple[str, ...]:
    """Every summary key other than ``"user"``, in the order first seen."""
    seen: dict[str, None] = {}
    for document in documents:
        for summaries in document.summaries.values():
            for name in summaries:
                if name != REFERENCE:
                    seen.setdefault(name, None)
    return tuple(seen)
