"""Input files of the Zopf model (``python -m metaeval zopf``; docs/conventions.md sec. 18).

* **Topics** (JSON Lines, concatenated objects or one array): ``{"topic": "t1", "sentences": ["...", ...]}`` with
  the source sentences S* pre-split, or ``"documents": ["text", ...]`` split by NLTK's Punkt (only where its data
  is installed). Optional ``"references"``: reference summaries, each a list of sentences or one text (Punkt), for
  simulated labels.
* **Judgments** (CSV with a header naming ``topic,sentence_a,sentence_b,winner``, other columns ignored):
  ``sentence_a`` / ``sentence_b`` are 0-based indices into the topic's sentences, ``winner`` is ``a`` or ``b``.
  A sentence preference study's export ends each row with ``review,excluded,review_note``: the rows marked
  ``excluded`` = 1 are left out as in every reader of rater files (:mod:`metaeval.core.io.exclusions`).
* **Summaries** (JSON Lines like topics): ``{"topic": "t1", "summary_id": "s1", "sentences": [...] | "text":
  "...", "human": 4}``; ``human`` (a number) is optional, only scored summaries enter the agreement.

Every problem is reported at once as ``<file>:<line>: <message>`` (an
:class:`~metaeval.core.io.fileio.ImportFileError`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from metaeval.core.io.exclusions import DEFAULT_CHOICE, EXCLUDED_COLUMN, RaterFilter, review_of
from metaeval.core.io.fileio import Problems, csv_rows, from_spreadsheet_safe, iter_json_values, json_type, read_text
from metaeval.core.pairwise.zopf import punkt_available, split_sentences

__all__ = ["JUDGMENT_COLUMNS", "SentenceJudgment", "Summary", "Topic", "load_judgments", "load_summaries",
           "load_topics"]

JUDGMENT_COLUMNS = ("topic", "sentence_a", "sentence_b", "winner")
PRE_SPLIT, PUNKT = "pre-split", "punkt"


@dataclass(frozen=True)
class Topic:
    topic: str
    sentences: list[str]
    splitting: str  # "pre-split" or "punkt"
    references: list[str]  # reference-summary sentences, all references together
    line: int


@dataclass(frozen=True)
class SentenceJudgment:
    topic: str
    winner: int
    loser: int
    line: int


@dataclass(frozen=True)
class Summary:
    topic: str
    summary_id: str
    sentences: list[str]
    splitting: str
    human: float | None
    line: int


def _texts(value: object, field: str, error: Callable[[str], None]) -> list[str] | None:
    """A list of non-empty strings, else None after reporting why."""
    if not isinstance(value, list) or not value:
        error(f'field "{field}" must be a non-empty array of strings (found {json_type(value)})')
        return None
    bad = [position for position, item in enumerate(value) if not isinstance(item, str) or not item.strip()]
    if bad:
        error(f'field "{field}": entry {bad[0]} is not a non-empty string')
        return None
    return list(value)


def _punkt(texts: list[str], field: str, error: Callable[[str], None]) -> list[str] | None:
    if not punkt_available():
        error(f'field "{field}": NLTK\'s Punkt data (tokenizers/punkt_tab) is not installed, so texts cannot be '
              'split here; give "sentences" pre-split, one sentence per entry')
        return None
    return [sentence for text in texts for sentence in split_sentences(text)]


def _sentences(
    record: dict, split_key: str, error: Callable[[str], None]
) -> tuple[list[str], str] | None:
    """("sentences" as given, "pre-split") or (the ``split_key`` texts split by Punkt, "punkt")."""
    if "sentences" in record:
        sentences = _texts(record["sentences"], "sentences", error)
        return None if sentences is None else (sentences, PRE_SPLIT)
    if split_key in record:
        value = record[split_key]
        texts = _texts([value] if isinstance(value, str) else value, split_key, error)
        split = None if texts is None else _punkt(texts, split_key, error)
        return None if split is None else (split, PUNKT)
    error(f'field "sentences" is missing (or give "{split_key}" to split with Punkt)')
    return None


def _name(record: dict, key: str, error: Callable[[str], None]) -> str | None:
    value = record.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        found = json_type(record[key]) if key in record else "nothing"
        error(f'field "{key}" must be a non-empty string (found {found})')
        return None
    return value


def _records(path: str | Path, file: str | None) -> tuple[str, Problems, list[tuple[int, dict, Callable[[str], None]]]]:
    path = Path(path)
    name = file or path.name
    problems = Problems()
    text = read_text(path, name)
    out: list[tuple[int, dict, Callable[[str], None]]] = []
    for line, value in iter_json_values(text, name, problems):
        def error(message: str, line: int = line) -> None:
            problems.add(name, line, message)

        if isinstance(value, dict):
            out.append((line, value, error))
        else:
            error(f"expected a JSON object, found {json_type(value)}")
    if not out and not problems:
        problems.add(name, 1, "no records found")
    return name, problems, out


def load_topics(path: str | Path, *, file: str | None = None) -> dict[str, Topic]:
    """Topics by name, in file order; a topic named twice is an error."""
    _, problems, records = _records(path, file)
    topics: dict[str, Topic] = {}
    for line, record, error in records:
        name = _name(record, "topic", error)
        if name is not None and name in topics:
            error(f'field "topic": duplicate topic "{name}" (first at line {topics[name].line})')
            continue
        sentences = _sentences(record, "documents", error)
        references: list[str] = []
        given = record.get("references")
        for position, reference in enumerate(given if isinstance(given, list) else []):
            field = f"references[{position}]"
            if isinstance(reference, str):
                split = _punkt([reference], field, error)
            else:
                split = _texts(reference, field, error)
            references.extend(split or [])
        if given is not None and not isinstance(given, list):
            error(f'field "references" must be an array (found {json_type(given)})')
        if name is not None and sentences is not None:
            topics[name] = Topic(name, sentences[0], sentences[1], references, line)
    problems.raise_if_any()
    return topics


def _index(text: str, size: int) -> int | None:
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if 0 <= value < size else None


def load_judgments(
    path: str | Path, topics: Mapping[str, Topic], *, file: str | None = None, raters: RaterFilter | None = None
) -> list[SentenceJudgment]:
    """Sentence preferences in file order, checked against the topics' sentence counts; the judges ``raters``
    chooses (by the ``judge`` column; default: the rows marked excluded left out), whose ``finish`` has then told
    whom it left out."""
    path = Path(path)
    name = file or path.name
    chooser = raters if raters is not None else RaterFilter(DEFAULT_CHOICE, name)
    choosing = False
    problems = Problems()
    header: list[str] | None = None
    judgments: list[SentenceJudgment] = []
    for line, fields in csv_rows(read_text(path, name), name, problems, strict=False):
        if header is None:
            header = [field.strip() for field in fields]
            missing = [column for column in JUDGMENT_COLUMNS if column not in header]
            if missing:
                problems.add(name, line, f"header lacks column(s) {', '.join(missing)} "
                             f"(expected {','.join(JUDGMENT_COLUMNS)})")
                break
            choosing = EXCLUDED_COLUMN in header or not chooser.idle
            continue
        row = dict(zip(header, fields, strict=False))
        kept = True
        if choosing:
            excluded, review, note = review_of(row)
            kept = chooser.keep(line, row.get("judge"), excluded, review,
                                from_spreadsheet_safe(note) if isinstance(note, str) else note, problems)
        values = {column: row.get(column, "") for column in JUDGMENT_COLUMNS}
        topic = topics.get(values["topic"])
        if topic is None:
            problems.add(name, line, f'topic: unknown topic "{values["topic"]}"')
            continue
        size = len(topic.sentences)
        a, b = _index(values["sentence_a"], size), _index(values["sentence_b"], size)
        for column, index in (("sentence_a", a), ("sentence_b", b)):
            if index is None:
                problems.add(name, line, f'{column}: "{values[column]}" is not a sentence index 0..{size - 1} '
                             f'of topic "{topic.topic}"')
        winner = values["winner"].strip()
        if winner not in ("a", "b"):
            problems.add(name, line, f'winner: "{winner}" is not a or b')
        if a is None or b is None or winner not in ("a", "b"):
            continue
        if a == b:
            problems.add(name, line, "sentence_b: the same sentence as sentence_a")
            continue
        if kept:
            judgments.append(SentenceJudgment(topic.topic, *((a, b) if winner == "a" else (b, a)), line))
    if header is None and not problems:
        problems.add(name, 1, "no header found (the file is empty)")
    chooser.finish(problems, has_raters=header is not None and "judge" in header)
    problems.raise_if_any()
    return judgments


def load_summaries(path: str | Path, topics: Mapping[str, Topic], *, file: str | None = None) -> list[Summary]:
    """Summaries in file order; a (topic, summary_id) given twice is an error."""
    _, problems, records = _records(path, file)
    seen: dict[tuple[str, str], int] = {}
    summaries: list[Summary] = []
    for line, record, error in records:
        topic = _name(record, "topic", error)
        if topic is not None and topic not in topics:
            error(f'field "topic": unknown topic "{topic}"')
            topic = None
        summary_id = _name(record, "summary_id", error)
        sentences = _sentences(record, "text", error)
        human = record.get("human")
        if human is not None and (
            isinstance(human, bool) or not isinstance(human, (int, float)) or not math.isfinite(human)
        ):
            error(f'field "human" must be a number or null (found {json_type(human)})')
            continue
        if topic is None or summary_id is None or sentences is None:
            continue
        if (topic, summary_id) in seen:
            error(f'field "summary_id": duplicate summary "{summary_id}" of topic "{topic}" '
                  f"(first at line {seen[topic, summary_id]})")
            continue
        seen[topic, summary_id] = line
        summaries.append(Summary(topic, summary_id, sentences[0], sentences[1],
                                 None if human is None else float(human), line))
    problems.raise_if_any()
    return summaries
