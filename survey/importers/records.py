"""Validated plain records produced by the parsers and consumed by :mod:`survey.importers.store`."""
from __future__ import annotations

from dataclasses import dataclass, field

# max_length of Document/Reader.external_id, System.name, Document.category/topic (checked by a test).
MAX_KEY_LENGTH = 100


@dataclass(slots=True)
class DocumentRecord:
    external_id: str
    headline: str
    body: str
    category: str = ""
    topic: str = ""


@dataclass(slots=True)
class ReaderRecord:
    """``None`` for history or profile means the source does not carry it: a stored value is kept."""

    external_id: str
    history: list[str] | None = None
    profile: str | None = None


#: how a system's name carries its variant (a prompt style): ``MODEL:VARIANT`` (docs/conventions.md sec. 2)
VARIANT_SEPARATOR = ":"


def variant_system(system: str, variant: str) -> str:
    """The stored name of ``system`` run as ``variant``: ``MODEL:VARIANT`` (``system`` itself without a variant)."""
    return f"{system}{VARIANT_SEPARATOR}{variant}" if variant else system


@dataclass(slots=True)
class SummaryRecord:
    doc_id: str
    reader_id: str
    system: str  # the stored name: MODEL:VARIANT when the summary has a variant
    text: str
    line: int = field(default=0, compare=False)  # where it came from, for error messages
    variant: str = ""


@dataclass(slots=True)
class DatasetRecords:
    """Everything one import writes; ``system_kinds`` sets kinds explicitly (others get defaults); a summary's
    ``variant`` is stored on its system."""

    documents: list[DocumentRecord] = field(default_factory=list)
    readers: list[ReaderRecord] = field(default_factory=list)
    summaries: list[SummaryRecord] = field(default_factory=list)
    system_kinds: dict[str, str] = field(default_factory=dict)

    @property
    def systems(self) -> list[str]:
        """System names in first-seen order (summaries first, then ``system_kinds``)."""
        names = dict.fromkeys(s.system for s in self.summaries)
        names.update(dict.fromkeys(self.system_kinds))
        return list(names)
