"""Parse the consolidated JSON dataset format (docs/conventions.md section 2) into records.

One record per document: ``{"doc_id", "doc_text", "doc_summ", "m_summary_dict": {uid: {"user": text,
SYSTEM: text, ...}}}`` plus optional ``"category"`` and ``"topic"``; other keys are ignored. ``doc_summ`` is
the headline and ``doc_text`` the body. A ``null`` summary counts as missing.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from metaeval.core.fileio import Problems, iter_json_values, json_type, read_text, string_fields
from survey.importers.records import (
    MAX_KEY_LENGTH,
    DatasetRecords,
    DocumentRecord,
    ReaderRecord,
    SummaryRecord,
)
from survey.models import REFERENCE_SYSTEM as REFERENCE

MSD = 'field "m_summary_dict"'
Missing = Literal["error", "drop"]


def parse_consolidated(path: str | Path, *, missing: Missing = "error", file: str | None = None) -> DatasetRecords:
    """Read and validate a consolidated file; raise ``ImportFileError`` listing every problem.

    ``missing="error"``: every reader of a document needs a ``"user"`` summary and a summary from each system
    that any reader of that document has. ``missing="drop"``: import whatever is present.
    """
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', not {missing!r}")
    path = Path(path)
    file = file or path.name
    problems = Problems()
    text = read_text(path, file)
    out = DatasetRecords()
    readers: dict[str, ReaderRecord] = {}
    first_line: dict[str, int] = {}
    count = 0
    for line, value in iter_json_values(text, file, problems):
        count += 1
        _parse_record(value, line, file, missing, problems, out, readers, first_line)
    if count == 0 and not problems:
        problems.add(file, 1, "no records found" + ("" if text.strip() else " (the file is empty)"))
    problems.raise_if_any()
    out.readers = list(readers.values())
    return out


def _parse_record(
    value: object,
    line: int,
    file: str,
    missing: Missing,
    problems: Problems,
    out: DatasetRecords,
    readers: dict[str, ReaderRecord],
    first_line: dict[str, int],
) -> None:
    def error(message: str) -> None:
        problems.add(file, line, message)

    if not isinstance(value, dict):
        error(f"expected a JSON object (one document), found {json_type(value)}")
        return

    doc_id = value.get("doc_id")
    if "doc_id" not in value:
        error('field "doc_id" is missing')
        doc_id = None
    elif not isinstance(doc_id, str):
        error(f'field "doc_id" must be a string, found {json_type(doc_id)}')
        doc_id = None
    elif not doc_id.strip():
        error('field "doc_id" must not be empty')
        doc_id = None
    elif len(doc_id) > MAX_KEY_LENGTH:
        error(f'field "doc_id" is longer than {MAX_KEY_LENGTH} characters')
        doc_id = None
    elif doc_id in first_line:
        error(f'duplicate doc_id "{doc_id}" (first at line {first_line[doc_id]})')
    else:
        first_line[doc_id] = line
    ctx = f'doc "{doc_id}"' if doc_id is not None else "doc without a valid id"

    strings = string_fields(value, ("doc_text", "doc_summ"), ctx, error)
    for key in ("category", "topic"):
        item = value.get(key)
        if item is None:
            strings[key] = ""
        elif not isinstance(item, str):
            error(f'field "{key}" must be a string ({ctx}, found {json_type(item)})')
        elif len(item) > MAX_KEY_LENGTH:
            error(f'field "{key}" is longer than {MAX_KEY_LENGTH} characters ({ctx})')
        else:
            strings[key] = item

    msd = value.get("m_summary_dict")
    if not isinstance(msd, dict):
        found = "field is missing" if "m_summary_dict" not in value else f"found {json_type(msd)}"
        error(f"{MSD} must be an object mapping reader ids to {{system: text}} ({ctx}, {found})")
        return

    present: dict[str, dict[str, str]] = {}  # reader -> {system: text}
    for uid, entry in msd.items():
        if not uid.strip():
            error(f"{MSD} has an empty reader id ({ctx})")
            continue
        if len(uid) > MAX_KEY_LENGTH:
            error(f'{MSD} has a reader id longer than {MAX_KEY_LENGTH} characters: "{uid[:20]}..." ({ctx})')
            continue
        if not isinstance(entry, dict):
            error(
                f'{MSD} entry for reader "{uid}" must be an object mapping system names to texts '
                f"({ctx}, found {json_type(entry)})"
            )
            continue
        texts: dict[str, str] = {}
        for system, summary in entry.items():
            if not system.strip() or len(system) > MAX_KEY_LENGTH:
                error(
                    f'{MSD} entry for reader "{uid}" has an invalid system name "{system[:20]}" '
                    f"(empty or longer than {MAX_KEY_LENGTH} characters) ({ctx})"
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

    if problems or doc_id is None:
        return  # the import fails anyway; stop building records
    out.documents.append(
        DocumentRecord(
            external_id=doc_id,
            headline=strings["doc_summ"],
            body=strings["doc_text"],
            category=strings["category"],
            topic=strings["topic"],
        )
    )
    for uid, texts in present.items():
        readers.setdefault(uid, ReaderRecord(external_id=uid))
        for system, summary in texts.items():
            out.summaries.append(SummaryRecord(doc_id=doc_id, reader_id=uid, system=system, text=summary, line=line))

