"""Import the consolidated JSON dataset format (docs/conventions.md section 2) into records.

The file is read by the metaeval core's parser (:func:`metaeval.core.io.loaders.load_corpus`: the same rules and
messages as ``python -m metaeval``); this module adds only what the database needs: ids, names, category and
topic of at most ``MAX_KEY_LENGTH`` characters, summaries that are text (``null`` counts as missing), and with
``missing="error"`` every reader of a document having a ``"user"`` summary and one from each system that any
reader of that document has. Every problem of the file is reported at once.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from metaeval.core.io.corpus import Document
from metaeval.core.io.fileio import json_type
from metaeval.core.io.loaders import MSD, load_corpus
from survey.importers.records import (
    MAX_KEY_LENGTH,
    DatasetRecords,
    DocumentRecord,
    ReaderRecord,
    SummaryRecord,
)
from survey.models import REFERENCE_SYSTEM as REFERENCE

Missing = Literal["error", "drop"]


def parse_consolidated(path: str | Path, *, missing: Missing = "error", file: str | None = None) -> DatasetRecords:
    """Read and validate a consolidated file; raise ``ImportFileError`` listing every problem.

    ``missing="error"``: every reader of a document needs a ``"user"`` summary and a summary from each system
    that any reader of that document has. ``missing="drop"``: import whatever is present.
    """
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', not {missing!r}")
    texts: dict[str, dict[str, dict[str, str]]] = {}  # doc_id -> reader -> {system: text}

    def check(document: Document, error: Callable[[str], None]) -> None:
        texts[document.doc_id] = _database_checks(document, missing, error)

    corpus = load_corpus(path, file=file, check=check)
    out = DatasetRecords()
    readers: dict[str, ReaderRecord] = {}
    for document in corpus.documents:
        out.documents.append(
            DocumentRecord(
                external_id=document.doc_id, headline=document.headline, body=document.body,
                category=document.category, topic=document.topic,
            )
        )
        for uid, by_system in texts[document.doc_id].items():
            readers.setdefault(uid, ReaderRecord(external_id=uid))
            for system, summary in by_system.items():
                out.summaries.append(
                    SummaryRecord(doc_id=document.doc_id, reader_id=uid, system=system, text=summary,
                                  line=document.line)
                )
    out.readers = list(readers.values())
    return out


def _database_checks(document: Document, missing: Missing, error: Callable[[str], None]) -> dict[str, dict[str, str]]:
    """The summaries to store (reader -> {system: text}); problems of a parsed document the database refuses."""
    ctx = f'doc "{document.doc_id}"'
    if len(document.doc_id) > MAX_KEY_LENGTH:
        error(f'field "doc_id" is longer than {MAX_KEY_LENGTH} characters')
    for key in ("category", "topic"):
        if len(getattr(document, key)) > MAX_KEY_LENGTH:
            error(f'field "{key}" is longer than {MAX_KEY_LENGTH} characters ({ctx})')
    present: dict[str, dict[str, str]] = {}
    for uid, entry in document.summaries.items():
        if len(uid) > MAX_KEY_LENGTH:
            error(f'{MSD} has a reader id longer than {MAX_KEY_LENGTH} characters: "{uid[:20]}..." ({ctx})')
            continue
        texts: dict[str, str] = {}
        for system, summary in entry.items():
            if len(system) > MAX_KEY_LENGTH:
                error(
                    f'{MSD} entry for reader "{uid}" has an invalid system name "{system[:20]}" '
                    f"(longer than {MAX_KEY_LENGTH} characters) ({ctx})"
                )
            elif isinstance(summary, str):
                texts[system] = summary
            elif summary is not None:
                texts[system] = ""  # placeholder: reported as a wrong type, not again as missing
                error(
                    f'{MSD} summary of system "{system}" for reader "{uid}" must be a string '
                    f"({ctx}, found {json_type(summary)})"
                )
        present[uid] = texts
    if missing == "error":
        systems = list(dict.fromkeys(s for texts in present.values() for s in texts if s != REFERENCE))
        for uid, texts in present.items():
            if REFERENCE not in texts:
                error(f'reader "{uid}" has no "{REFERENCE}" summary in {MSD} ({ctx})')
            for system in systems:
                if system not in texts:
                    error(
                        f'reader "{uid}" has no summary from system "{system}", which other readers of this '
                        f"document have ({ctx})"
                    )
    return present
