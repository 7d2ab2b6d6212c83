"""What a participant is shown and how far a study has come: the pairs of an assignment, the scale, the study's
progress (held slots, sets done)."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q
from django.utils import timezone

from survey.models import (
    Assignment,
    Item,
    Judgment,
    PreferenceItem,
    Questionnaire,
    Rating,
    Study,
)


@dataclass(frozen=True)
class ShownPair:
    """One pair as a participant sees it: an opaque field key and two texts. Nothing else."""

    key: str
    number: int
    first: str
    second: str


def assignment_pairs(assignment: Assignment) -> list[ShownPair]:
    """The assignment's pairs in its recorded order, sides as recorded, attention (known-answer) pairs among them;
    carries no ids or system names."""
    items = {
        i.pk: i
        for i in Item.objects.filter(questionnaire_id=assignment.questionnaire_id).select_related(
            "summary_j", "summary_k"
        )
    }
    pairs = []
    for number, entry in enumerate(assignment.presentation, start=1):
        if "attention" in entry:  # a known-answer pair, looking like any other; its texts stored with it
            pairs.append(ShownPair(key=entry["key"], number=number, first=entry["first"], second=entry["second"]))
            continue
        item = items[entry["item"]]
        a, b = item.summary_j.text, item.summary_k.text
        if entry.get("swap"):
            a, b = b, a
        pairs.append(ShownPair(key=entry["key"], number=number, first=a, second=b))
    return pairs


def scale_choices(study: Study) -> list[tuple[str, str]]:
    """The rating scale as (value, label) pairs, the value as the text a form sends ("1" ... "6")."""
    return [(str(n), label) for n, label in enumerate(study.scale_labels, start=1)]


@dataclass(frozen=True)
class StudyProgress:
    """Questionnaires by slot state (``complete + all_slots_taken + with_free_slot == questionnaires``) and sets.

    A slot is held by a live or completed assignment (:func:`holds_a_slot`); a questionnaire has
    ``raters_per_questionnaire`` slots.
    """

    questionnaires: int
    complete: int  # every slot completed
    all_slots_taken: int  # every slot held, some still being rated: nothing to hand out until one expires
    with_free_slot: int  # fewer holds than slots: a participant can be given it now
    free_slots: int  # slots free over all questionnaires (how many more sets can be handed out now)
    ratings_sets: int  # completed assignments
    ratings_sets_needed: int
    participants: int
    ratings_per_system: dict[str, int]
    automatic_ratings: int = 0  # identical texts recorded at the top of the scale (identical_pairs=auto)
    hidden_pairs: int = 0  # identical-text pairs of the design that participants are not shown (auto/omit)

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
    total = complete = all_taken = free_slots = 0
    done_sets = 0
    for q in rows.values("done", "held"):
        total += 1
        done_sets += q["done"]
        if q["done"] >= n:
            complete += 1
        elif q["held"] >= n:
            all_taken += 1
        else:
            free_slots += n - q["held"]
    automatic = Rating.objects.filter(assignment__questionnaire__study=study, automatic=True).count()
    hidden = (
        Item.objects.filter(questionnaire__study=study, identical=True).count()
        if study.identical_pairs != Study.IdenticalPairs.SHOW
        else 0
    )
    per_system: dict[str, int]
    if study.kind == Study.Kind.SENTENCE_PREFERENCE:  # answers per topic
        per_system = dict(
            Judgment.objects.filter(assignment__questionnaire__study=study)
            .values_list("item__questionnaire__document__external_id").annotate(c=Count("id"))
            .order_by("item__questionnaire__document__external_id")
        )
    elif study.kind == Study.Kind.PREFERENCE:  # answers in which the system's text took part
        per_system = {}
        for side in ("item__system_a__name", "item__system_b__name"):
            for name, count in (Judgment.objects.filter(assignment__questionnaire__study=study)
                                .values_list(side).annotate(c=Count("id")).order_by()):
                per_system[name] = per_system.get(name, 0) + count
        per_system = dict(sorted(per_system.items()))
    else:
        per_system = dict(
            Rating.objects.filter(assignment__questionnaire__study=study)
            .values_list("item__system__name")
            .annotate(c=Count("id"))
            .order_by("item__system__name")
        )
    return StudyProgress(
        questionnaires=total,
        complete=complete,
        all_slots_taken=all_taken,
        with_free_slot=total - complete - all_taken,
        free_slots=free_slots,
        ratings_sets=done_sets,
        ratings_sets_needed=total * n,
        participants=study.participants.filter(assignments__completed_at__isnull=False).distinct().count(),
        ratings_per_system=per_system,
        automatic_ratings=automatic,
        hidden_pairs=hidden,
    )


def assignment_choices(assignment: Assignment) -> list[ShownPair]:
    """The assignment's preference pairs in its recorded order and sides; carries no ids or system names."""
    items = {
        item.pk: item
        for item in PreferenceItem.objects.filter(questionnaire_id=assignment.questionnaire_id).select_related(
            "summary_a", "summary_b", "sentence_a", "sentence_b"
        )
    }
    shown = []
    for number, entry in enumerate(assignment.presentation, start=1):
        if "gold" in entry:  # a known-answer pair, looking like any other; its texts stored with it
            shown.append(ShownPair(key=entry["key"], number=number, first=entry["first"], second=entry["second"]))
            continue
        item = items[entry["pitem"]]
        first, second = item.texts
        if entry.get("swap"):
            first, second = second, first
        shown.append(ShownPair(key=entry["key"], number=number, first=first, second=second))
    return shown
