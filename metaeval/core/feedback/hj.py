"""The OpenAI PerSEval-HJ variant (perseval-tmlr sec. 7, "Indirect Evaluation Method is Inadequate for
Meta-evaluation"; docs/conventions.md sec. 25).

On a surrogate dataset (:mod:`metaeval.core.feedback.surrogates`) rating differences play the divergences:
sigma(s_j, s_k) = |r_j(s) - r_k(s)|, sigma(u_j, u_k) = |rbar_j - rbar_k| (rbar: the mean rating of the summaries in
the annotator's combined gold), and the accuracy distance sigma(s_j, u_j) = |r_j(s) - rbar_j|, each divided by
r_max - 1 (our choice, so that they lie in [0, 1]; ``scale="raw"`` skips it). sigma(., d), the DEGRESS
normalisation by the document, comes from an auxiliary measure X on the dataset texts, as in the HJ path of sec.
7. The scoring is the distance path's (:func:`metaeval.core.perseval.measure.score_system` on :class:`DocPairs`).

For a system S and an article, the readers are the annotators with a rating of S, in dataset order; every
ordered pair of them is a row (as the distance path with ``--missing drop``).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import permutations
from pathlib import Path
from typing import Literal

from metaeval.core.io.corpus import REFERENCE, Corpus, DataError
from metaeval.core.io.fileio import Problems, csv_rows, from_spreadsheet_safe, listed, read_text
from metaeval.core.perseval.human import HumanCounts
from metaeval.core.perseval.measure import DocPairs

__all__ = ["DEFAULT_SCALE_MAX", "FEEDBACK_RATING_COLUMNS", "FEEDBACK_RATING_FILE_COLUMNS", "FeedbackPlan",
           "FeedbackRating", "FeedbackTable", "feedback_doc_pairs", "load_feedback_ratings", "plan_feedback"]

#: the columns a ratings file must have
FEEDBACK_RATING_COLUMNS = ("doc_id", "reader", "system", "rating", "gold_mean")
#: the columns of the ratings file ``python -m metaeval surrogates`` writes: the required ones and the scale's top
FEEDBACK_RATING_FILE_COLUMNS = (*FEEDBACK_RATING_COLUMNS, "scale_max")
#: r_max when neither the file's ``scale_max`` column nor the caller gives it
DEFAULT_SCALE_MAX = 7
FeedbackScale = Literal["normalised", "raw"]


@dataclass(frozen=True)
class FeedbackRating:
    """Annotator ``reader`` rated ``system``'s summary of ``doc_id`` with ``rating``; ``gold_mean`` is the mean
    rating of the summaries in the reader's combined gold of that document."""

    doc_id: str
    reader: str
    system: str
    rating: float
    gold_mean: float
    line: int = 0


@dataclass(frozen=True)
class FeedbackTable:
    rows: tuple[FeedbackRating, ...]
    source: str = ""
    scale_max: float = 7

    @property
    def systems(self) -> list[str]:
        """Every rated system, sorted."""
        return sorted({row.system for row in self.rows})


def load_feedback_ratings(path: str | Path, *, scale_max: float | None = None, file: str | None = None
                          ) -> FeedbackTable:
    """Read ``doc_id,reader,system,rating,gold_mean`` (columns found by name; others ignored). The scale's top
    r_max is the file's ``scale_max`` column when it has one (``surrogates`` writes it; the same on every line,
    and equal to ``scale_max`` when that is given too), else ``scale_max``, else :data:`DEFAULT_SCALE_MAX`.
    Ratings and gold means are numbers in 1..r_max (a mean need not be a scale point); a (doc_id, reader, system)
    given twice, or one reader with two gold means for a document, is an error. Raises ``ImportFileError``
    listing every problem as ``file:line: field``."""
    path = Path(path)
    file = file or path.name
    problems = Problems()
    header: list[str] | None = None
    rows: list[FeedbackRating] = []
    first: dict[tuple[str, str, str], int] = {}
    gold: dict[tuple[str, str], tuple[float, int]] = {}
    for line, fields in csv_rows(read_text(path, file), file, problems):
        if header is None:
            header = [name.strip() for name in fields]
            missing = [name for name in FEEDBACK_RATING_COLUMNS if name not in header]
            if missing:
                problems.add(file, line, "the header lacks " + ", ".join(f'"{name}"' for name in missing)
                             + f" (expected {','.join(FEEDBACK_RATING_COLUMNS)})")
                problems.raise_if_any()
            continue
        if len(fields) != len(header):
            problems.add(file, line, f"expected {len(header)} fields as in the header, found {len(fields)}")
            continue
        row = dict(zip(header, map(from_spreadsheet_safe, fields), strict=True))
        if "scale_max" in row:
            scale_max = _file_scale(row["scale_max"], line, file, scale_max, problems)
            if scale_max is None:
                problems.raise_if_any()
        parsed = _row(row, line, file, scale_max or DEFAULT_SCALE_MAX, problems)
        if parsed is None:
            continue
        key = (parsed.doc_id, parsed.reader, parsed.system)
        if key in first:
            problems.add(file, line, f'field "system": "{parsed.system}" rated again by reader "{parsed.reader}" '
                         f'for doc_id "{parsed.doc_id}" (first at line {first[key]})')
            continue
        first[key] = line
        earlier = gold.setdefault((parsed.doc_id, parsed.reader), (parsed.gold_mean, line))
        if earlier[0] != parsed.gold_mean:
            problems.add(file, line, f'field "gold_mean": {parsed.gold_mean!r} differs from {earlier[0]!r} at '
                         f'line {earlier[1]} (reader "{parsed.reader}", doc_id "{parsed.doc_id}")')
            continue
        rows.append(parsed)
    if header is None:
        problems.add(file, 1, "the file is empty (expected a header line " + ",".join(FEEDBACK_RATING_COLUMNS) + ")")
    elif not rows and not problems:
        problems.add(file, 1, "no ratings found after the header")
    problems.raise_if_any()
    return FeedbackTable(tuple(rows), file, scale_max or DEFAULT_SCALE_MAX)


def _file_scale(text: str, line: int, file: str, expected: float | None, problems: Problems) -> float | None:
    """A line's ``scale_max``: a whole number >= 2, equal to ``expected`` (the caller's or an earlier line's)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value >= 2 and value == int(value)):
        problems.add(file, line, f'field "scale_max": {text!r} is not a whole number >= 2')
        return None
    if expected is not None and value != expected:
        problems.add(file, line, f'field "scale_max": {value:g} differs from {expected:g} (the scale given with '
                     "--feedback-scale-max or on an earlier line)")
        return None
    return value


def _row(row: dict[str, str], line: int, file: str, scale_max: float, problems: Problems) -> FeedbackRating | None:
    before = len(problems)
    ids: dict[str, str] = {}
    for key in ("doc_id", "reader", "system"):
        value = row[key]
        if not value.strip():
            problems.add(file, line, f'field "{key}" must not be empty')
        ids[key] = value
    numbers: dict[str, float] = {}
    for key in ("rating", "gold_mean"):
        try:
            number = float(row[key])
        except ValueError:
            number = math.nan
        if not 1 <= number <= scale_max:
            problems.add(file, line, f'field "{key}": {row[key]!r} is not a number in 1..{scale_max:g}')
        numbers[key] = number
    if ids.get("system") == REFERENCE:
        problems.add(file, line, f'field "system": "{REFERENCE}" is the combined gold, not a system')
    if len(problems) > before:
        return None
    return FeedbackRating(ids["doc_id"], ids["reader"], ids["system"], numbers["rating"], numbers["gold_mean"], line)


@dataclass
class FeedbackPlan:
    """The ratings grouped per document (documents and readers in dataset order) and the texts X compares."""

    systems: list[str]
    #: doc -> system -> reader -> rating
    ratings: dict[str, dict[str, dict[str, float]]]
    #: doc -> reader -> gold mean
    gold_mean: dict[str, dict[str, float]]
    doc_text: dict[str, str]
    user_text: dict[tuple[str, str], str]
    system_text: dict[tuple[str, str, str], str]

    def text_pairs(self) -> list[tuple[str, str]]:
        """Auxiliary pairs: sigma(u_j, d) and sigma(s_j, d) for every rated reader (accuracy comes from ratings)."""
        seen: dict[tuple[str, str], None] = {}
        for doc_id, by_system in self.ratings.items():
            doc = self.doc_text[doc_id]
            for system, by_reader in by_system.items():
                for reader in by_reader:
                    seen.setdefault((self.user_text[(doc_id, reader)], doc))
                    seen.setdefault((self.system_text[(doc_id, system, reader)], doc))
        return list(seen)


def plan_feedback(corpus: Corpus, table: FeedbackTable, *, systems: Sequence[str] | None = None,
                  transform: Callable[[str], str] | None = None) -> FeedbackPlan:
    """Group the ratings; every rated document, reader and summary must be in the dataset (a ``DataError``
    naming every ratings line where one is not, in file order)."""
    documents = corpus.by_id()
    where = table.source or "feedback ratings"
    chosen = list(systems) if systems is not None else table.systems
    apply = transform or (lambda text: text)
    found: dict[str, dict[str, dict[str, float]]] = {}
    gold: dict[str, dict[str, float]] = {}
    problems: list[str] = []
    for row in table.rows:
        document = documents.get(row.doc_id)
        if document is None:
            problems.append(f'{where}:{row.line}: document "{row.doc_id}" is not in the dataset')
            continue
        for name in (REFERENCE, row.system):
            if document.summary(row.reader, name) is None:
                problems.append(f'{where}:{row.line}: document "{row.doc_id}", reader "{row.reader}" has no "{name}" '
                                "summary in the dataset")
        gold.setdefault(row.doc_id, {})[row.reader] = row.gold_mean
        if row.system in chosen:
            found.setdefault(row.doc_id, {}).setdefault(row.system, {})[row.reader] = row.rating
    if problems:
        raise DataError(listed(problems))
    ratings: dict[str, dict[str, dict[str, float]]] = {}
    doc_text: dict[str, str] = {}
    user_text: dict[tuple[str, str], str] = {}
    system_text: dict[tuple[str, str, str], str] = {}
    for document in corpus.documents:  # dataset order for documents and readers
        by_system = found.get(document.doc_id)
        if not by_system:
            continue
        doc_id = document.doc_id
        doc_text[doc_id] = apply(document.text)
        ordered: dict[str, dict[str, float]] = {}
        for system in sorted(by_system):
            by_reader = by_system[system]
            ordered[system] = {reader: by_reader[reader] for reader in document.summaries if reader in by_reader}
            for reader in ordered[system]:
                user_text[(doc_id, reader)] = apply(document.summary(reader, REFERENCE) or "")
                system_text[(doc_id, system, reader)] = apply(document.summary(reader, system) or "")
        ratings[doc_id] = ordered
    gold_mean = {doc_id: gold[doc_id] for doc_id in ratings}
    return FeedbackPlan(chosen, ratings, gold_mean, doc_text, user_text, system_text)


def feedback_doc_pairs(plan: FeedbackPlan, system: str, aux: dict[tuple[str, str], float], *, scale_max: float,
                       scale: FeedbackScale = "normalised") -> tuple[list[DocPairs], HumanCounts]:
    """The :class:`DocPairs` of one system: rating differences (divided by r_max - 1 unless ``scale="raw"``) for
    the reader and system pairs and the accuracy, X's sigma(u_j, d) and sigma(s_j, d)."""
    if scale not in ("normalised", "raw"):
        raise ValueError(f"scale must be normalised or raw, not {scale!r}")
    unit = 1.0 if scale == "raw" else scale_max - 1.0
    counts = HumanCounts()
    out: list[DocPairs] = []
    for doc_id, by_system in plan.ratings.items():
        rated = by_system.get(system)
        if not rated:
            continue
        doc = plan.doc_text[doc_id]
        gold = plan.gold_mean[doc_id]
        readers = list(rated)
        pairs = list(permutations(readers, 2))
        user_pairs = {(j, k): abs(gold[j] - gold[k]) / unit for j, k in pairs}
        system_pairs = {(j, k): abs(rated[j] - rated[k]) / unit for j, k in pairs}
        accuracy = {j: abs(rated[j] - gold[j]) / unit for j in readers}
        user_doc = {j: aux[(plan.user_text[(doc_id, j)], doc)] for j in readers}
        system_doc = {j: aux[(plan.system_text[(doc_id, system, j)], doc)] for j in readers}
        counts.rated_pairs += len(pairs)
        counts.rows += len(pairs)
        counts.documents.append(doc_id)
        out.append(DocPairs(doc_id, user_doc, system_doc, user_pairs, system_pairs, accuracy))
    return out, counts
