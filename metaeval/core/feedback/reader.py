"""Read OpenAI's summarize-from-feedback "axis evals" files (docs/conventions.md sec. 25; perseval-tmlr sec. 6.2).

One JSON object per line (JSON Lines; concatenated or pretty-printed objects and one array are read too, by the
project's one JSON reader :func:`~metaeval.core.io.fileio.iter_json_values`):

    {"info": {"id", "article" (CNN/DM) or "post" (TL;DR), "title", "site" or "subreddit"}, "split",
     "summary": {"text", "policy", "note", "axes": {"overall", "accuracy", "coverage", "coherence"}},
     "worker", "batch"}

Required: ``info.id`` (a string or an integer), the document text (``info.article``, else ``info.post``),
``summary.text``, ``summary.policy``, ``summary.axes.<axis>`` and ``worker``. ``title`` and ``site`` /
``subreddit`` are optional strings. An axis value ``null`` means "not rated on that axis": the record is kept
with ``rating=None`` (the builder skips and counts it). Any other value must be a whole number 1..r_max. The
same ``info.id`` must carry the same text and title on every line. Every problem is reported at once as
``<file>:<line>: field "<path>" ...`` in an :class:`~metaeval.core.io.fileio.ImportFileError`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from metaeval.core.io.fileio import Problems, iter_json_values, json_type, read_text

__all__ = ["AXES", "FeedbackRecord", "read_feedback"]

Report = Callable[[str], None]
#: the Likert axes of the public files (any other name is accepted when the file has it)
AXES = ("overall", "accuracy", "coverage", "coherence")


@dataclass(frozen=True)
class FeedbackRecord:
    """One rating line: ``worker`` rated ``policy``'s ``summary`` of document ``doc_id`` with ``rating`` on the
    chosen axis (``None``: not rated on it). ``text`` is the article or post, ``title`` its headline."""

    line: int
    doc_id: str
    title: str
    text: str
    site: str
    split: str
    worker: str
    policy: str
    summary: str
    rating: float | None


def read_feedback(path: str | Path, *, axis: str = "overall", scale_max: int = 7,
                  file: str | None = None) -> list[FeedbackRecord]:
    """Every record of an axis-evals file in file order, rated on ``axis`` (scale 1..``scale_max``).

    Raises ``ImportFileError`` listing every problem (``OSError`` for an unreadable path); an empty file is an
    error."""
    if scale_max < 2:
        raise ValueError(f"scale_max must be at least 2, not {scale_max}")
    path = Path(path)
    file = file or path.name
    problems = Problems()
    text = read_text(path, file)
    records: list[FeedbackRecord] = []
    documents: dict[str, tuple[int, str, str]] = {}  # id -> (first line, text, title)
    count = 0
    for line, value in iter_json_values(text, file, problems):
        count += 1
        record = _record(value, line, file, axis, scale_max, problems)
        if record is None:
            continue
        first = documents.setdefault(record.doc_id, (line, record.text, record.title))
        if first[1:] != (record.text, record.title):
            which = "info.article / info.post" if first[1] != record.text else "info.title"
            problems.add(file, line, f'field "{which}": document "{record.doc_id}" differs from its text at line '
                         f"{first[0]}")
            continue
        records.append(record)
    if count == 0 and not problems:
        problems.add(file, 1, "no records found" + ("" if text.strip() else " (the file is empty)"))
    problems.raise_if_any()
    return records


def _record(value: object, line: int, file: str, axis: str, scale_max: int,
            problems: Problems) -> FeedbackRecord | None:
    """One validated record; its problems are added and ``None`` returned when it has any."""
    before = len(problems)

    def error(message: str) -> None:
        problems.add(file, line, message)

    if not isinstance(value, dict):
        error(f"expected a JSON object (one rating), found {json_type(value)}")
        return None
    info = _object(value, "info", error)
    summary = _object(value, "summary", error)
    doc_id = ""
    if info is not None:
        raw = info.get("id")
        if isinstance(raw, int) and not isinstance(raw, bool):
            doc_id = str(raw)
        elif isinstance(raw, str) and raw.strip():
            doc_id = raw
        else:
            error('field "info.id" is missing' if raw is None else
                  f'field "info.id" must be a non-empty string or an integer, found {json_type(raw)}')
        if "article" not in info and "post" not in info:
            error('field "info.article" (or "info.post") is missing')
            document = ""
        else:
            key = "article" if "article" in info else "post"
            document = _string(info, key, f"info.{key}", error, required=True)
        title = _string(info, "title", "info.title", error)
        site = _string(info, "site", "info.site", error) or _string(info, "subreddit", "info.subreddit", error)
    worker = _string(value, "worker", "worker", error, required=True)
    split = _string(value, "split", "split", error)
    rating: float | None = None
    if summary is not None:
        summary_text = _string(summary, "text", "summary.text", error, required=True)
        policy = _string(summary, "policy", "summary.policy", error, required=True)
        axes = _object(summary, "axes", error, prefix="summary.")
        if axes is not None:
            rating = _rating(axes, axis, scale_max, error)
    if len(problems) > before or info is None or summary is None:
        return None
    return FeedbackRecord(line, doc_id, title, document, site, split, worker, policy, summary_text, rating)


def _object(value: dict, key: str, error: Report, prefix: str = "") -> dict | None:
    item = value.get(key)
    if isinstance(item, dict):
        return item
    error(f'field "{prefix}{key}" is missing' if item is None else
          f'field "{prefix}{key}" must be an object, found {json_type(item)}')
    return None


def _string(value: dict, key: str, name: str, error: Report, *, required: bool = False) -> str:
    """``value[key]`` as a string; "" when an optional field is absent or null. A required one must be non-blank."""
    item = value.get(key)
    if item is None:
        if required:
            error(f'field "{name}" is missing')
        return ""
    if not isinstance(item, str):
        error(f'field "{name}" must be a string, found {json_type(item)}')
        return ""
    if required and not item.strip():
        error(f'field "{name}" must not be empty')
    return item


def _rating(axes: dict, axis: str, scale_max: int, error: Report) -> float | None:
    name = f"summary.axes.{axis}"
    if axis not in axes:
        found = ", ".join(sorted(axes)) or "none"
        error(f'field "{name}" is missing (axes here: {found})')
        return None
    raw = axes[axis]
    if raw is None:
        return None  # not rated on this axis
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        error(f'field "{name}" must be a number 1..{scale_max} or null, found {json_type(raw)}')
        return None
    if not float(raw).is_integer() or not 1 <= raw <= scale_max:
        error(f'field "{name}": {raw} is not one of the scale points 1..{scale_max}')
        return None
    return float(raw)
