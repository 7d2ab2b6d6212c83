"""Judge cases: one (context Q, reader examples U_t, two systems' texts) to compare (AuPEL sec. 3.4; conventions
sec. 20).

File layout: JSON Lines (or concatenated / pretty-printed JSON objects, or one JSON array), one object per case::

    {"case_id": "c1", "model_a": "xl", "model_b": "base", "text_a": "...", "text_b": "...",
     "context": "the article or its headline", "examples": ["a past text of the reader", ...],
     "doc_id": "d1", "reader_id": "r7"}

``case_id``, ``model_a``, ``model_b`` are non-empty strings (a JSON integer is read as its decimal text);
``text_a``/``text_b`` are strings; ``context`` (default empty) a string; ``examples`` (default none) an array of
strings; ``doc_id``/``reader_id`` optional strings. Other fields are ignored. A system may not be compared with
itself and a (case_id, model_a, model_b) may occur once. Every problem is reported at once as ``file:line: ...``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from metaeval.core.io.fileio import Problems, iter_json_values, json_type, read_text

__all__ = ["JudgeCase", "load_cases", "parse_cases"]

_IDS = ("case_id", "model_a", "model_b")
_TEXTS = ("text_a", "text_b")
_OPTIONAL = ("context", "doc_id", "reader_id")


@dataclass(frozen=True, slots=True)
class JudgeCase:
    """One pair of texts to judge: ``text_a`` by system ``model_a``, ``text_b`` by ``model_b``; ``context`` is Q,
    ``examples`` the reader's example texts U_t; ``line`` its line in the file (0 when built in code)."""

    case_id: str
    model_a: str
    model_b: str
    text_a: str
    text_b: str
    context: str = ""
    examples: tuple[str, ...] = ()
    doc_id: str = ""
    reader_id: str = ""
    line: int = 0

    @property
    def key(self) -> tuple[str, str, str]:
        """``(case_id, model_a, model_b)``: unique in a cases file."""
        return self.case_id, self.model_a, self.model_b

    def text_of(self, side: str) -> str:
        """The text of ``side`` (``model_a`` or ``model_b``)."""
        if side == "model_a":
            return self.text_a
        if side == "model_b":
            return self.text_b
        raise ValueError(f"side must be model_a or model_b, not {side!r}")


def load_cases(path: str | Path, *, file: str | None = None) -> list[JudgeCase]:
    """The cases of a JSON Lines file in file order; every problem at once in an ``ImportFileError``."""
    path = Path(path)
    return parse_cases(read_text(path, file or path.name), file or path.name)


def parse_cases(text: str, file: str) -> list[JudgeCase]:
    """:func:`load_cases` on a file's text (``file`` names it in messages)."""
    problems = Problems()
    cases: list[JudgeCase] = []
    seen: dict[tuple[str, str, str], int] = {}
    found = 0
    for line, value in iter_json_values(text, file, problems):
        found += 1
        if not isinstance(value, dict):
            problems.add(file, line, f"expected a JSON object (one case), found {json_type(value)}")
            continue
        case = _parse(value, line, file, problems)
        if case is None:
            continue
        if case.key in seen:
            problems.add(file, line, f'field "model_b": the case ("{case.case_id}", "{case.model_a}", '
                         f'"{case.model_b}") is already on line {seen[case.key]}')
            continue
        seen[case.key] = line
        cases.append(case)
    if not found and not problems:
        problems.add(file, 1, "no cases" + ("" if text.strip() else " (the file is empty)"))
    problems.raise_if_any()
    return cases


def _string(record: Mapping[str, object], key: str, line: int, file: str, problems: Problems, *,
            required: bool, nonempty: bool) -> str:
    if key not in record or record[key] is None:
        if required:
            problems.add(file, line, f'field "{key}" is missing')
        return ""
    value = record[key]
    if isinstance(value, int) and not isinstance(value, bool) and key not in _TEXTS:
        return str(value)
    if not isinstance(value, str):
        problems.add(file, line, f'field "{key}" must be a string, found {json_type(value)}')
        return ""
    if nonempty and not value.strip():
        problems.add(file, line, f'field "{key}" must not be empty')
    return value


def _parse(record: Mapping[str, object], line: int, file: str, problems: Problems) -> JudgeCase | None:
    before = len(problems)
    ids = [_string(record, key, line, file, problems, required=True, nonempty=True) for key in _IDS]
    texts = [_string(record, key, line, file, problems, required=True, nonempty=False) for key in _TEXTS]
    context, doc_id, reader_id = (_string(record, key, line, file, problems, required=False, nonempty=False)
                                  for key in _OPTIONAL)
    examples: list[str] = []
    raw = record.get("examples")
    if raw is not None:
        if not isinstance(raw, list):
            problems.add(file, line, f'field "examples" must be an array of strings, found {json_type(raw)}')
        else:
            for number, item in enumerate(raw, 1):
                if isinstance(item, str):
                    examples.append(item)
                else:
                    problems.add(file, line, f'field "examples": item {number} must be a string, '
                                 f"found {json_type(item)}")
    case_id, model_a, model_b = ids
    if model_a and model_a == model_b:
        problems.add(file, line, f'field "model_b": the same system as model_a ("{model_a}"); '
                     "a system cannot be compared with itself")
    if len(problems) > before:
        return None
    return JudgeCase(case_id, model_a, model_b, texts[0], texts[1], context, tuple(examples), doc_id, reader_id,
                     line)
