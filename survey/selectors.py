"""Reads: what a participant sees, study progress, and the ratings table for export."""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from survey.models import (
    REFERENCE_SYSTEM,
    Assignment,
    Dataset,
    Document,
    Item,
    Questionnaire,
    Rating,
    Study,
    Summary,
    System,
)

# The ratings layout of docs/conventions.md: these five columns first, so exports feed the CLI.
EXPORT_COLUMNS = [
    "doc_id",
    "system",
    "uid1",
    "uid2",
    "rating",
    "rater",
    "study",
    "questionnaire",
    "shown_position",
    "swapped",
    "claimed_at",
    "completed_at",
    "rated_at",
]


@dataclass(frozen=True)
class ShownPair:
    """One pair as a participant sees it: an opaque field key and two texts. Nothing else."""

    key: str
    number: int
    first: str
    second: str


def dataset_systems(*, dataset: Dataset) -> QuerySet[System]:
    """The systems with summaries in ``dataset`` (the reference ``user`` excluded), by name, each annotated with
    ``summary_count`` in that dataset."""
    return (
        System.objects.filter(summaries__document__dataset=dataset)
        .exclude(name=REFERENCE_SYSTEM)
        .annotate(summary_count=Count("summaries"))
        .order_by("name")
    )


def documents_with_completeness(documents: QuerySet[Document]) -> QuerySet[Document]:
    """``documents`` annotated with ``summary_count`` and ``summaries_expected``: every reader with a summary of the
    document needs their own ("user") one and one from each system of the dataset, as a run with "stop the run"
    for missing summaries requires (``metaeval.core.corpus.Document.readers_for``)."""
    systems_in_dataset = (
        Summary.objects.filter(document__dataset=OuterRef("dataset"))
        .order_by()
        .values("document__dataset")
        .annotate(n=Count("system", distinct=True))
        .values("n")
    )
    return documents.annotate(
        summary_count=Count("summaries", distinct=True),
        summary_readers=Count("summaries__reader", distinct=True),
        dataset_systems=Subquery(systems_in_dataset),
    ).annotate(summaries_expected=F("summary_readers") * F("dataset_systems"))


def assignment_pairs(assignment: Assignment) -> list[ShownPair]:
    """The assignment's pairs in its recorded order, sides as recorded; carries no ids or system names."""
    items = {
        i.pk: i
        for i in Item.objects.filter(questionnaire_id=assignment.questionnaire_id).select_related(
            "summary_j", "summary_k"
        )
    }
    pairs = []
    for number, entry in enumerate(assignment.presentation, start=1):
        item = items[entry["item"]]
        a, b = item.summary_j.text, item.summary_k.text
        if entry["swap"]:
            a, b = b, a
        pairs.append(ShownPair(key=entry["key"], number=number, first=a, second=b))
    return pairs


def scale_choices(study: Study) -> list[tuple[str, str]]:
    """The rating scale as (value, label) pairs, the value as the text a form sends ("1" ... "6")."""
    return [(str(n), label) for n, label in enumerate(study.scale_labels, start=1)]


@dataclass(frozen=True)
class StudyProgress:
    questionnaires: int
    complete: int  # every slot completed
    in_progress: int  # some slot held or completed, not all completed
    open: int  # nothing held
    ratings_sets: int  # completed assignments
    ratings_sets_needed: int
    participants: int
    ratings_per_system: dict[str, int]

    @property
    def percent(self) -> float:
        return 100.0 * self.ratings_sets / self.ratings_sets_needed if self.ratings_sets_needed else 0.0


def holds_a_slot(now) -> Q:
    """A questionnaire's condition on its assignments (``assignments__``) that hold a slot: unreleased, and either
    completed or still within their time. An expired unfinished hold is free even before it is released."""
    return Q(assignments__released_at__isnull=True) & (
        Q(assignments__completed_at__isnull=False) | Q(assignments__expires_at__gt=now)
    )


def study_progress(study: Study, now=None) -> StudyProgress:
    now = now or timezone.now()
    live = holds_a_slot(now)
    rows = Questionnaire.objects.filter(study=study).annotate(
        done=Count("assignments", filter=Q(assignments__completed_at__isnull=False)),
        held=Count("assignments", filter=live),
    )
    n = study.raters_per_questionnaire
    total = complete = in_progress = 0
    done_sets = 0
    for q in rows.values("done", "held"):
        total += 1
        done_sets += q["done"]
        if q["done"] >= n:
            complete += 1
        elif q["held"] > 0:
            in_progress += 1
    per_system = dict(
        Rating.objects.filter(assignment__questionnaire__study=study)
        .values_list("item__system__name")
        .annotate(c=Count("id"))
        .order_by("item__system__name")
    )
    return StudyProgress(
        questionnaires=total,
        complete=complete,
        in_progress=in_progress,
        open=total - complete - in_progress,
        ratings_sets=done_sets,
        ratings_sets_needed=total * n,
        participants=study.participants.filter(assignments__completed_at__isnull=False).distinct().count(),
        ratings_per_system=per_system,
    )


def rater_id(participant_id: int) -> str:
    """A participant's rater id in the ratings export ("P12")."""
    return f"P{participant_id}"


_RATER_ID = re.compile(r"^[Pp]?(\d+)$")


def participant_of_rater(name: str) -> int | None:
    """The participant id behind a rater id written ``P12`` or ``12`` (the inverse of :func:`rater_id`); ``None``
    when ``name`` is not a rater id."""
    match = _RATER_ID.match(name)
    return int(match.group(1)) if match else None


def ratings_export_rows(
    *, study: Study | None = None, exclude_participants: Iterable[int] = ()
) -> Iterator[dict[str, object]]:
    """One row per rating of a completed assignment, in the export layout (``EXPORT_COLUMNS``).

    ``uid1``/``uid2`` are the questionnaire's reader pair (j, k) in design order, independent of which
    side each summary was shown on; ``system`` is ``user`` for the reference pair. The ratings of the
    participants ``exclude_participants`` (primary keys) are left out in the query.
    """
    qs = Rating.objects.filter(assignment__completed_at__isnull=False).select_related(
        "item__system",
        "assignment__participant",
        "assignment__questionnaire__study",
        "assignment__questionnaire__document",
        "assignment__questionnaire__reader_j",
        "assignment__questionnaire__reader_k",
    )
    if study is not None:
        qs = qs.filter(assignment__questionnaire__study=study)
    excluded = list(exclude_participants)
    if excluded:
        qs = qs.exclude(assignment__participant_id__in=excluded)
    qs = qs.order_by(
        "assignment__questionnaire__study_id",
        "assignment__questionnaire__position",
        "assignment__slot",
        "assignment_id",
        "item__position",
    )
    for r in qs.iterator(chunk_size=2000):
        a = r.assignment
        q = a.questionnaire
        yield {
            "doc_id": q.document.external_id,
            "system": r.item.system.name,
            "uid1": q.reader_j.external_id,
            "uid2": q.reader_k.external_id,
            "rating": r.value,
            "rater": rater_id(a.participant_id),
            "study": q.study.slug,
            "questionnaire": q.position,
            "shown_position": r.shown_position,
            "swapped": int(r.swapped),
            "claimed_at": a.claimed_at.isoformat(),
            "completed_at": a.completed_at.isoformat() if a.completed_at else "",
            "rated_at": r.created_at.isoformat(),
        }

