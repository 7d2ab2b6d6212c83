"""Pure study design: which summary pairs go into which questionnaire, and in which order they are shown.

The protocol follows PerSEval (TMLR) sec. 7.1 / Appendix D: for a document d and two of its readers (j, k)
a questionnaire holds the readers' own reference pair <u_j, u_k> and, for each system S of a group,
the pair <s_j, s_k>. The systems are split into groups (default 5 of 10) so that a few questionnaires
cover every system for that pair; each questionnaire is later served to N distinct participants.

Everything here is deterministic from an explicit seed and needs no database.
"""
from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

REFERENCE = "user"


@dataclass(frozen=True)
class QuestionnaireSpec:
    """One questionnaire: a document, an unordered reader pair (j before k in dataset order), a system group."""

    doc_id: str
    reader_j: str
    reader_k: str
    group: int
    systems: tuple[str, ...]  # the reference ``user`` first, then the group's systems

    @property
    def model_systems(self) -> tuple[str, ...]:
        return tuple(s for s in self.systems if s != REFERENCE)


@dataclass(frozen=True)
class DesignReport:
    questionnaires: list[QuestionnaireSpec]
    skipped: list[str] = field(default_factory=list)  # human-readable reasons for what was left out


def split_into_groups(systems: Sequence[str], size: int) -> list[list[str]]:
    """Split into ceil(n/size) groups whose sizes differ by at most one (10 by 5 -> 5+5, 10 by 4 -> 4+3+3)."""
    if size < 1:
        raise ValueError("systems per questionnaire must be at least 1")
    n = len(systems)
    if n == 0:
        return []
    count = math.ceil(n / size)
    base, extra = divmod(n, count)
    groups, start = [], 0
    for g in range(count):
        width = base + (1 if g < extra else 0)
        groups.append(list(systems[start : start + width]))
        start += width
    return groups


def reader_pairs(
    readers: Sequence[str], *, mode: str, per_document: int | None, rng: random.Random
) -> list[tuple[str, str]]:
    """Unordered reader pairs (j, k), j before k in the given order; ``sample`` draws ``per_document`` of them;
    ``readers`` draws ``per_document`` readers and takes all their pairs (iCOPERNICUS App. E.2: 3 readers give 3
    pairs; every reader when there are no more)."""
    pairs = list(itertools.combinations(readers, 2))
    if mode == "all":
        return pairs
    if mode not in ("sample", "readers"):
        raise ValueError(f"unknown pair mode {mode!r} (expected 'all', 'sample' or 'readers')")
    if not per_document or per_document < (2 if mode == "readers" else 1):
        raise ValueError(f"pair mode {mode!r} needs pairs_per_document >= {2 if mode == 'readers' else 1}")
    if mode == "readers":
        if per_document >= len(readers):
            return pairs
        kept = sorted(rng.sample(range(len(readers)), per_document))
        return list(itertools.combinations([readers[i] for i in kept], 2))
    if per_document >= len(pairs):
        return pairs
    chosen = sorted(rng.sample(range(len(pairs)), per_document))
    return [pairs[i] for i in chosen]


def design_study(
    documents: Mapping[str, Sequence[str]],
    systems: Sequence[str],
    has_summary: Callable[[str, str, str], bool],
    *,
    systems_per_questionnaire: int = 5,
    pair_mode: str = "all",
    pairs_per_document: int | None = None,
    seed: int = 0,
) -> DesignReport:
    """Build the questionnaires of a study.

    ``documents`` maps each doc id to its readers in dataset order; ``has_summary(doc, reader, system)``
    says whether a summary exists (``system`` may be ``user``). A reader pair is used only when both
    readers have a reference summary; a system is used for a pair only when it has both readers'
    summaries. For each pair the usable systems are shuffled (seeded) and split into balanced groups.
    """
    model_systems = [s for s in systems if s != REFERENCE]
    if len(set(model_systems)) != len(model_systems):
        raise ValueError("duplicate system names in the study")
    rng = random.Random(seed)
    out: list[QuestionnaireSpec] = []
    skipped: list[str] = []
    for doc_id, readers in documents.items():
        with_reference = [r for r in readers if has_summary(doc_id, r, REFERENCE)]
        for r in readers:
            if r not in with_reference:
                skipped.append(f"document {doc_id}: reader {r} has no reference summary")
        if len(with_reference) < 2:
            skipped.append(f"document {doc_id}: fewer than two readers with reference summaries")
            continue
        for j, k in reader_pairs(with_reference, mode=pair_mode, per_document=pairs_per_document, rng=rng):
            usable = []
            for s in model_systems:
                if has_summary(doc_id, j, s) and has_summary(doc_id, k, s):
                    usable.append(s)
                else:
                    skipped.append(f"document {doc_id}, readers ({j}, {k}): system {s} lacks a summary")
            if not usable:
                skipped.append(f"document {doc_id}, readers ({j}, {k}): no system has both summaries")
                continue
            shuffled = list(usable)
            rng.shuffle(shuffled)
            for g, group in enumerate(split_into_groups(shuffled, systems_per_questionnaire)):
                ordered = tuple(s for s in model_systems if s in group)  # stable, readable order
                out.append(QuestionnaireSpec(doc_id, j, k, g, (REFERENCE, *ordered)))
    return DesignReport(out, skipped)


@dataclass(frozen=True)
class PresentedItem:
    item: int  # an Item id (never shown to participants)
    swap: bool  # True: reader k's summary is shown first


def presentation_order(item_ids: Sequence[int], seed: int, *, shuffle: bool = True) -> list[PresentedItem]:
    """A per-participant shuffle of the items (kept in the given order when not ``shuffle``) and a random
    left/right side for each, from ``seed``."""
    rng = random.Random(seed)
    order = list(item_ids)
    if shuffle:
        rng.shuffle(order)
    return [PresentedItem(item=i, swap=rng.random() < 0.5) for i in order]
