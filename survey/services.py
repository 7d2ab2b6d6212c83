"""Writes: creating studies and questionnaires, registering participants, claiming and submitting.

Concurrency: a claim locks the questionnaire row (``select_for_update``) inside a transaction, releases
that questionnaire's expired slots and takes a free slot; the conditional unique constraint
``(questionnaire, slot) where released_at is null`` guarantees in the database that no questionnaire ever
holds more than ``raters_per_questionnaire`` live or completed assignments, whatever the isolation level.
"""
from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from survey import design, selectors
from survey.models import (
    RATING_MAX,
    RATING_MIN,
    REFERENCE_SYSTEM,
    Assignment,
    Item,
    Participant,
    Questionnaire,
    Rating,
    Study,
    Summary,
)

log = logging.getLogger(__name__)


class SurveyError(Exception):
    """A participant- or researcher-facing problem with a clear message."""


class NoQuestionnaireAvailable(SurveyError):
    pass


class AssignmentExpired(SurveyError):
    pass


class SubmissionInvalid(SurveyError):
    def __init__(self, message: str, field_errors: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.field_errors = dict(field_errors or {})


def _token(nbytes: int = 18) -> str:
    return secrets.token_urlsafe(nbytes)


# --------------------------------------------------------------------------------------------- design


@transaction.atomic
def questionnaires_generate(*, study: Study) -> design.DesignReport:
    """Materialise the study design (``survey.design.design_study``) as Questionnaire and Item rows.

    Refuses to regenerate once any participant has claimed a questionnaire of the study.
    """
    if Assignment.objects.filter(questionnaire__study=study).exists():
        raise SurveyError(f"study {study.slug!r} already has assignments; its questionnaires cannot be regenerated")
    Questionnaire.objects.filter(study=study).delete()
    systems = list(study.systems.exclude(name=REFERENCE_SYSTEM).order_by("name").values_list("name", flat=True))
    if not systems:
        raise SurveyError(f"study {study.slug!r} has no systems selected")
    summaries: dict[tuple[str, str, str], Summary] = {}
    for s in Summary.objects.filter(document__dataset=study.dataset).select_related("document", "reader", "system"):
        summaries[(s.document.external_id, s.reader.external_id, s.system.name)] = s
    docs_by_id = {doc.external_id: doc for doc in study.dataset.documents.order_by("id")}
    readers_by_id = {reader.external_id: reader for reader in study.dataset.readers.order_by("id")}
    has_any = {(doc_id, reader_id) for doc_id, reader_id, _system in summaries}
    # each document's readers in dataset order: those with at least one summary of it
    documents = {d: [r for r in readers_by_id if (d, r) in has_any] for d in docs_by_id}
    report = design.design_study(
        documents,
        systems,
        lambda d, r, s: (d, r, s) in summaries,
        systems_per_questionnaire=study.systems_per_questionnaire,
        pair_mode=study.pair_mode,
        pairs_per_document=study.pairs_per_document,
        seed=study.seed,
    )
    for position, spec in enumerate(report.questionnaires):
        q = Questionnaire.objects.create(
            study=study,
            position=position,
            document=docs_by_id[spec.doc_id],
            reader_j=readers_by_id[spec.reader_j],
            reader_k=readers_by_id[spec.reader_k],
            group=spec.group,
        )
        Item.objects.bulk_create(
            Item(
                questionnaire=q,
                position=i,
                system=summaries[(spec.doc_id, spec.reader_j, name)].system,
                summary_j=summaries[(spec.doc_id, spec.reader_j, name)],
                summary_k=summaries[(spec.doc_id, spec.reader_k, name)],
            )
            for i, name in enumerate(spec.systems)
        )
    return report


# --------------------------------------------------------------------------------------- participants


def participant_register(
    *, study: Study, external_id: str = "", external_source: str = "", now=None
) -> Participant:
    """A consenting participant; ``token`` is the opaque identity kept in the participant's session."""
    if study.status != Study.Status.OPEN:
        raise SurveyError("This study is not accepting participants at the moment.")
    return Participant.objects.create(
        study=study,
        token=_token(24),
        external_id=external_id[:200],
        external_source=external_source[:50],
        consent_at=now or timezone.now(),
    )


def participant_update_demographics(*, participant: Participant, name: str, gender: str, occupation: str) -> None:
    participant.name = name.strip()[:200]
    participant.gender = gender
    participant.occupation = occupation
    participant.save(update_fields=["name", "gender", "occupation"])


# ---------------------------------------------------------------------------------------- assignments


def assignments_release_expired(*, study: Study | None = None, now=None) -> int:
    """Release the slots of unfinished assignments whose time ran out; returns how many were released."""
    now = now or timezone.now()
    qs = Assignment.objects.filter(completed_at__isnull=True, released_at__isnull=True, expires_at__lte=now)
    if study is not None:
        qs = qs.filter(questionnaire__study=study)
    return qs.update(released_at=now)


def _free_slot(questionnaire: Questionnaire, capacity: int, now) -> int | None:
    """The lowest slot of ``questionnaire`` that no live assignment holds (``selectors.holds_a_slot``, here on the
    fetched rows; call with the questionnaire locked).

    Holds whose time ran out are released here, so their slots can be given again (the slot is unique among
    unreleased assignments)."""
    held: set[int] = set()
    expired: list[int] = []
    rows = (
        Assignment.objects.filter(questionnaire=questionnaire, released_at__isnull=True)
        .order_by()
        .values_list("pk", "slot", "completed_at", "expires_at")
    )
    for pk, slot, completed_at, expires_at in rows:
        if completed_at is None and expires_at <= now:
            expired.append(pk)
        else:
            held.add(slot)
    free = next((s for s in range(capacity) if s not in held), None)
    if free is not None and expired:
        Assignment.objects.filter(pk__in=expired).update(released_at=now)
    return free


def _new_assignment(
    *, study: Study, questionnaire: Questionnaire, participant: Participant, slot: int, now
) -> Assignment:
    seed = secrets.randbits(62)
    item_ids = list(questionnaire.items.order_by("position").values_list("id", flat=True))
    order = design.presentation_order(item_ids, seed)
    keys: set[str] = set()
    presentation = []
    for p in order:
        key = _token(6)
        while key in keys:
            key = _token(6)
        keys.add(key)
        presentation.append({"key": key, "item": p.item, "swap": p.swap})
    return Assignment.objects.create(
        questionnaire=questionnaire,
        participant=participant,
        public_id=_token(18),
        slot=slot,
        presentation_seed=seed,
        presentation=presentation,
        claimed_at=now,
        expires_at=now + timedelta(minutes=study.assignment_timeout_minutes),
    )


def _live_assignment(participant: Participant, now) -> Assignment | None:
    """The participant's unfinished, unreleased assignment whose time has not run out, if any.

    The database holds at most one unfinished, unreleased assignment per participant; one whose time ran out is
    released here, so that the participant can claim again."""
    current = (
        Assignment.objects.filter(participant=participant, completed_at__isnull=True, released_at__isnull=True)
        .order_by()
        .first()
    )
    if current is None or current.expires_at > now:
        return current
    Assignment.objects.filter(pk=current.pk, completed_at__isnull=True).update(released_at=now)
    return None


def assignment_claim(*, participant: Participant, now=None) -> Assignment:
    """Give the participant an open questionnaire they have never had, or their unfinished live one.

    Questionnaires with the fewest held slots come first (then design order), so ratings spread evenly.
    """
    study = participant.study
    if study.status != Study.Status.OPEN:
        raise NoQuestionnaireAvailable("This study is not accepting responses at the moment.")
    now = now or timezone.now()
    capacity = study.raters_per_questionnaire
    with transaction.atomic():
        current = _live_assignment(participant, now)
        if current is not None:
            return current
        # expired holds do not count; they are released when their questionnaire is claimed (_free_slot)
        live = selectors.holds_a_slot(now)
        candidates = list(
            Questionnaire.objects.filter(study=study)
            .exclude(assignments__participant=participant)
            .annotate(held=Count("assignments", filter=live))
            .filter(held__lt=capacity)
            .order_by("held", "position")
            .values_list("pk", flat=True)
        )
    for pk in candidates:
        try:
            with transaction.atomic():
                questionnaire = Questionnaire.objects.select_for_update().get(pk=pk)
                slot = _free_slot(questionnaire, capacity, now)
                if slot is None:
                    continue
                assignment = _new_assignment(
                    study=study, questionnaire=questionnaire, participant=participant, slot=slot, now=now
                )
                log.info("questionnaire claimed", extra={
                    "event": "assignment.claimed", "study": study.slug, "questionnaire": questionnaire.position,
                    "slot": slot, "participant": participant.pk,
                })
                return assignment
        except IntegrityError:
            # A concurrent claim of the same participant (a double click) won: the database holds one live
            # assignment per participant, so return that one. Otherwise another participant took the slot between
            # our read and write (possible only where row locks are not available): try the next questionnaire.
            current = _live_assignment(participant, now)
            if current is not None:
                return current
            continue
    raise NoQuestionnaireAvailable("Thank you! There are no more questionnaires for you in this study right now.")


def _validate_values(assignment: Assignment, raw: Mapping[str, object]) -> dict[str, int]:
    values: dict[str, int] = {}
    errors: dict[str, str] = {}
    for number, entry in enumerate(assignment.presentation, start=1):
        key = entry["key"]
        value = raw.get(key)
        if isinstance(value, (list, tuple)):
            errors[key] = f"Pair {number}: answered {len(value)} times in one submission; please choose one rating."
            continue
        if value in (None, ""):
            errors[key] = f"Pair {number}: please choose a rating from {RATING_MIN} to {RATING_MAX}."
            continue
        try:
            parsed = int(str(value).strip())
            if str(parsed) != str(value).strip():
                raise ValueError
        except ValueError:
            errors[key] = f"Pair {number}: {value!r} is not a whole number from {RATING_MIN} to {RATING_MAX}."
            continue
        if not RATING_MIN <= parsed <= RATING_MAX:
            errors[key] = f"Pair {number}: {parsed} is outside the scale {RATING_MIN}-{RATING_MAX}."
            continue
        values[key] = parsed
    unknown = sorted(set(raw) - {e["key"] for e in assignment.presentation})
    if unknown:
        errors["__all__"] = f"Unknown fields in the submission: {', '.join(unknown)}."
    if errors:
        missing = sum(1 for k in errors if k != "__all__")
        message = (
            f"{missing} of {len(assignment.presentation)} pairs need a valid rating; nothing was saved."
            if missing
            else errors["__all__"]
        )
        raise SubmissionInvalid(message, errors)
    return values


def ratings_submit(*, assignment_public_id: str, participant: Participant, values: Mapping[str, object], now=None):
    """Store one complete set of ratings for an assignment, all or nothing.

    Idempotent: a repeated submission of a completed assignment stores nothing and returns the
    assignment unchanged. A late submission after expiry is accepted only if its slot is still free
    (then the slot is taken back); otherwise ``AssignmentExpired``.
    """
    now = now or timezone.now()
    with transaction.atomic():
        try:
            assignment = (
                Assignment.objects.select_for_update()
                .select_related("questionnaire__study")
                .get(public_id=assignment_public_id, participant=participant)
            )
        except Assignment.DoesNotExist:
            raise SurveyError("This questionnaire link is not valid for you.") from None
        if assignment.completed_at is not None:
            return assignment
        cleaned = _validate_values(assignment, values)
        if assignment.released_at is not None or assignment.expires_at <= now:
            # Lock the questionnaire, then see whether our slot is still free.
            Questionnaire.objects.select_for_update().get(pk=assignment.questionnaire_id)
            taken = Assignment.objects.filter(
                questionnaire_id=assignment.questionnaire_id, slot=assignment.slot, released_at__isnull=True
            ).exclude(pk=assignment.pk)
            if taken.exists():
                raise AssignmentExpired(
                    "The time for this questionnaire ran out and it was given to someone else. "
                    "Nothing was saved; you can continue with another questionnaire."
                )
            assignment.released_at = None
        by_item = {e["key"]: (position, e) for position, e in enumerate(assignment.presentation)}
        Rating.objects.bulk_create(
            Rating(
                assignment=assignment,
                item_id=by_item[key][1]["item"],
                value=value,
                shown_position=by_item[key][0],
                swapped=bool(by_item[key][1]["swap"]),
            )
            for key, value in cleaned.items()
        )
        assignment.completed_at = now
        assignment.completion_code = secrets.token_hex(5).upper()
        assignment.save(update_fields=["completed_at", "completion_code", "released_at"])
        log.info("ratings submitted", extra={"event": "ratings.submitted", "assignment": assignment.pk,
                                             "participant": participant.pk, "ratings": len(cleaned)})
        return assignment


def study_open(*, study: Study) -> None:
    if not study.questionnaires.exists():
        raise SurveyError(f"study {study.slug!r} has no questionnaires; generate them first")
    study.status = Study.Status.OPEN
    study.save(update_fields=["status"])
