"""Human-judgment variants: DEGRESS-HJ, EGISES-HJ and PerSEval-HJ-X (perseval-tmlr sec. 7.1; docs/conventions.md
sec. 7).

Ratings of summary pairs become distances and take the place of sigma(u_j, u_k) (``system="user"`` pairs)
and sigma(s_j, s_k) (the system's pairs). sigma(., d) and the accuracy distances are borrowed from an
auxiliary measure X computed on the dataset texts. Everything else is the distance path's pipeline
(:mod:`metaeval.core.perseval.measure`).

Modes:
* compat (the authors' code): r -> round(1 - (int(r) - 1) / 5, 5), averaged per (doc, system, uid1, uid2),
  ordered pairs used only as stored.
* default: r -> (r_max - r) / (r_max - r_min) unrounded, and a rating of {j, k} counts for (j, k) and (k, j).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from metaeval.core.io.corpus import REFERENCE, Corpus, DataError, RatingTable
from metaeval.core.io.fileio import listed
from metaeval.core.perseval.measure import DocPairs

PairKey = tuple[str, str, str, str]  # doc, system, uid1, uid2


def rating_distance(rating: float, *, compat: bool, scale: tuple[float, float] = (1, 6)) -> float:
    """A similarity rating as a distance in [0, 1] (sec. 7)."""
    if compat:
        return round(1 - (int(rating) - 1) / 5, 5)
    low, high = scale
    return (high - rating) / (high - low)


def pair_distances(ratings: RatingTable, *, compat: bool) -> dict[PairKey, float]:
    """Mean distance per (doc, system, uid1, uid2), keys sorted as pandas ``groupby`` orders them."""
    scale = (ratings.scale_min, ratings.scale_max)
    collected: dict[PairKey, list[float]] = {}
    for row in ratings.rows:
        value = rating_distance(row.rating, compat=compat, scale=scale)
        keys = [(row.doc_id, row.system, row.uid1, row.uid2)]
        if not compat:
            keys.append((row.doc_id, row.system, row.uid2, row.uid1))
        for key in keys:
            collected.setdefault(key, []).append(value)
    return {key: sum(values) / len(values) for key, values in sorted(collected.items())}


@dataclass
class HumanPlan:
    """Rated pairs per system and document, plus the texts the auxiliary measure must compare."""

    systems: list[str]
    #: doc -> system (incl. "user") -> {(uid1, uid2): distance}, docs and pairs sorted
    pairs: dict[str, dict[str, dict[tuple[str, str], float]]]
    doc_text: dict[str, str]
    #: (doc, uid) -> user text; (doc, system, uid) -> system text
    user_text: dict[tuple[str, str], str]
    system_text: dict[tuple[str, str, str], str]

    def text_pairs(self) -> list[tuple[str, str]]:
        """Auxiliary pairs: sigma(u_j, d), sigma(s_j, d) and sigma(s_j, u_j) for every rated reader."""
        seen: dict[tuple[str, str], None] = {}
        for doc_id, by_system in self.pairs.items():
            for system, pairs in by_system.items():
                for j in _readers(pairs):
                    user = self.user_text.get((doc_id, j))
                    if user is not None:
                        seen.setdefault((user, self.doc_text[doc_id]))
                    if system == REFERENCE:
                        continue
                    text = self.system_text.get((doc_id, system, j))
                    if text is not None:
                        seen.setdefault((text, self.doc_text[doc_id]))
                        if user is not None:
                            seen.setdefault((text, user))
        return list(seen)


def _readers(pairs: dict[tuple[str, str], float]) -> list[str]:
    return list(dict.fromkeys(uid for pair in pairs for uid in pair))


def plan_human(
    corpus: Corpus,
    ratings: RatingTable,
    *,
    compat: bool,
    systems: Sequence[str] | None = None,
    transform=None,
) -> HumanPlan:
    """Group the ratings and check every rated document and reader exists in the dataset (sec. 10; a
    ``DataError`` naming every ratings line that does not, in file order)."""
    documents = corpus.by_id()
    lines: dict[tuple[str, str], int] = {}
    problems: list[str] = []
    for row in ratings.rows:
        document = documents.get(row.doc_id)
        where = f"{ratings.source or 'ratings'}:{row.line}" if row.line else (ratings.source or "ratings")
        if document is None:
            problems.append(f'{where}: document "{row.doc_id}" is not in the dataset')
            continue
        for uid in (row.uid1, row.uid2):
            if uid not in document.summaries:
                problems.append(f'{where}: document "{row.doc_id}" has no reader "{uid}" in the dataset')
            lines.setdefault((row.doc_id, uid), row.line)
    if problems:
        raise DataError(listed(problems))
    chosen = list(systems) if systems is not None else ratings.systems
    apply = transform or (lambda text: text)
    grouped: dict[str, dict[str, dict[tuple[str, str], float]]] = {}
    for (doc_id, system, uid1, uid2), value in pair_distances(ratings, compat=compat).items():
        if system != REFERENCE and system not in chosen:
            continue
        grouped.setdefault(doc_id, {}).setdefault(system, {})[(uid1, uid2)] = value
    doc_text: dict[str, str] = {}
    user_text: dict[tuple[str, str], str] = {}
    system_text: dict[tuple[str, str, str], str] = {}
    for doc_id, by_system in grouped.items():
        document = documents[doc_id]
        doc_text[doc_id] = apply(document.text)
        for system, pairs in by_system.items():
            for uid in _readers(pairs):
                user = document.summary(uid, REFERENCE)
                if user is not None:
                    user_text[(doc_id, uid)] = apply(user)
                if system != REFERENCE:
                    text = document.summary(uid, system)
                    if text is not None:
                        system_text[(doc_id, system, uid)] = apply(text)
    return HumanPlan(chosen, grouped, doc_text, user_text, system_text)


@dataclass
class HumanCounts:
    """How many of a system's rated pairs became rows, and why the others did not."""

    rated_pairs: int = 0
    rows: int = 0
    skipped_no_user_pair: int = 0
    skipped_no_document_distance: int = 0
    documents: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {
            "rated_pairs": self.rated_pairs,
            "rows": self.rows,
            "skipped_no_user_pair": self.skipped_no_user_pair,
            "skipped_no_document_distance": self.skipped_no_document_distance,
        }


def human_doc_pairs(
    plan: HumanPlan, system: str, aux: dict[tuple[str, str], float]
) -> tuple[list[DocPairs], HumanCounts]:
    """The :class:`DocPairs` of one system: rated distances plus auxiliary sigma(., d) and accuracy."""
    counts = HumanCounts()
    out = []
    for doc_id, by_system in plan.pairs.items():
        system_pairs = by_system.get(system)
        if not system_pairs:
            continue
        user_pairs = by_system.get(REFERENCE, {})
        doc = plan.doc_text[doc_id]
        readers = set(_readers(system_pairs)) | set(_readers(user_pairs))
        user_doc, system_doc, accuracy = {}, {}, {}
        for j in readers:
            user = plan.user_text.get((doc_id, j))
            text = plan.system_text.get((doc_id, system, j))
            if user is not None:
                user_doc[j] = aux[(user, doc)]
            if text is not None:
                system_doc[j] = aux[(text, doc)]
                accuracy[j] = aux[(text, user)] if user is not None else float("nan")
        counts.rated_pairs += len(system_pairs)
        for (j, k) in system_pairs:
            if (j, k) not in user_pairs:
                counts.skipped_no_user_pair += 1
            elif j not in user_doc or j not in system_doc:
                counts.skipped_no_document_distance += 1
            else:
                counts.rows += 1
        counts.documents.append(doc_id)
        out.append(DocPairs(doc_id, user_doc, system_doc, user_pairs, system_pairs, accuracy))
    return out, counts
