"""Writes of answers: a rating set or a preference set submitted, whole and once (the values checked, identical pairs
rated automatically, an expired set taken back)."""
from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping

from django.db import transaction
from django.utils import timezone

from survey.models import (
    RATING_MAX,
    RATING_MIN,
    Assignment,
    Item,
    Judgment,
    Participant,
    Questionnaire,
    Rating,
    Study,
)
from survey.services.errors import AssignmentExpired, SubmissionInvalid, SurveyError
from survey.services.participation import ATTENTION_PASS

log = logging.getLogger(__name__)


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


def _automatic_ratings(assignment: Assignment) -> int:
    """With ``identical_pairs=auto``, the questionnaire's identical pairs that were not shown get the top of the
    scale (RATING_MAX), flagged ``automatic``, with no shown position; returns how many were stored. ``omit`` and
    ``show`` store none (omitted pairs stay missing; shown ones were rated)."""
    if assignment.questionnaire.study.identical_pairs != Study.IdenticalPairs.AUTO:
        return 0
    shown = {entry["item"] for entry in assignment.presentation if "item" in entry}
    hidden = Item.objects.filter(questionnaire_id=assignment.questionnaire_id, identical=True).exclude(pk__in=shown)
    created = Rating.objects.bulk_create(
        Rating(assignment=assignment, item_id=pk, value=RATING_MAX, shown_position=None, swapped=False, automatic=True)
        for pk in hidden.values_list("pk", flat=True)
    )
    return len(created)


def _locked_assignment(public_id: str, participant: Participant) -> Assignment:
    """The participant's assignment, locked for the submission's transaction."""
    try:
        return (
            Assignment.objects.select_for_update()
            .select_related("questionnaire__study")
            .get(public_id=public_id, participant=participant)
        )
    except Assignment.DoesNotExist:
        raise SurveyError("This questionnaire link is not valid for you.") from None


def _take_back_if_expired(assignment: Assignment, now) -> None:
    """A late submission keeps its slot only if nobody took it meanwhile (``AssignmentExpired`` otherwise)."""
    if assignment.released_at is None and assignment.expires_at > now:
        return
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


def ratings_submit(*, assignment_public_id: str, participant: Participant, values: Mapping[str, object], now=None):
    """Store one complete set of ratings for an assignment, all or nothing.

    Idempotent: a repeated submission of a completed assignment stores nothing and returns the
    assignment unchanged. A late submission after expiry is accepted only if its slot is still free
    (then the slot is taken back); otherwise ``AssignmentExpired``.
    """
    now = now or timezone.now()
    with transaction.atomic():
        assignment = _locked_assignment(assignment_public_id, participant)
        if assignment.completed_at is not None:
            return assignment
        cleaned = _validate_values(assignment, values)
        _take_back_if_expired(assignment, now)
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
            if "item" in by_item[key][1]
        )
        assignment.attention = [
            {"kind": e["attention"], "value": cleaned[e["key"]],
             "passed": ATTENTION_PASS[e["attention"]](cleaned[e["key"]])}
            for e in assignment.presentation
            if "attention" in e
        ]
        automatic = _automatic_ratings(assignment)
        assignment.completed_at = now
        assignment.completion_code = secrets.token_hex(5).upper()
        assignment.save(update_fields=["completed_at", "completion_code", "released_at", "attention"])
        log.info("ratings submitted", extra={"event": "ratings.submitted", "assignment": assignment.pk,
                                             "participant": participant.pk, "ratings": len(cleaned),
                                             "automatic": automatic})
        return assignment


#: a preference answer as the form sends it: the text shown first (A), second (B), or about the same
CHOICES = ("a", "b", "tie")


def choice_field(key: str, criterion: str) -> str:
    """The form field of one pair's answer on one criterion."""
    return f"{key}-{criterion}"


def _validate_choices(assignment: Assignment, raw: Mapping[str, object]) -> dict[tuple[str, str], str]:
    study = assignment.questionnaire.study
    allowed = CHOICES if study.offers_tie else CHOICES[:2]
    words = "A, B or about the same" if study.offers_tie else "A or B"
    criteria = [criterion["name"] for criterion in study.criteria]
    values: dict[tuple[str, str], str] = {}
    errors: dict[str, str] = {}
    for number, entry in enumerate(assignment.presentation, start=1):
        for criterion in criteria:
            field = choice_field(str(entry["key"]), criterion)
            value = raw.get(field)
            if isinstance(value, (list, tuple)):
                errors[field] = f"Pair {number}, {criterion}: answered {len(value)} times; please choose once."
            elif value in (None, ""):
                errors[field] = f"Pair {number}, {criterion}: please choose {words}."
            elif value not in allowed:
                errors[field] = f"Pair {number}, {criterion}: {value!r} is not {words}."
            else:
                values[(str(entry["key"]), criterion)] = str(value)
    expected = {choice_field(str(e["key"]), c) for e in assignment.presentation for c in criteria}
    unknown = sorted(set(raw) - expected)
    if unknown:
        errors["__all__"] = f"Unknown fields in the submission: {', '.join(unknown)}."
    if errors:
        missing = sum(1 for k in errors if k != "__all__")
        total = len(assignment.presentation) * len(criteria)
        raise SubmissionInvalid(
            f"{missing} of {total} questions need an answer; nothing was saved." if missing else errors["__all__"],
            errors,
        )
    return values


def judgments_submit(*, assignment_public_id: str, participant: Participant, values: Mapping[str, object],
                     now=None) -> Assignment:
    """Store one complete set of preference answers (one per pair and criterion), all or nothing; the same
    idempotency and expiry rules as :func:`ratings_submit`. "a" names the text shown first: the stored ``winner``
    is that system (``model_a`` or ``model_b`` of the item) and ``shown_first`` records which one it was."""
    now = now or timezone.now()
    with transaction.atomic():
        assignment = _locked_assignment(assignment_public_id, participant)
        if assignment.completed_at is not None:
            return assignment
        if not assignment.questionnaire.study.is_pairwise:
            raise SurveyError("This questionnaire asks for ratings, not preferences.")
        cleaned = _validate_choices(assignment, values)
        _take_back_if_expired(assignment, now)
        rows = []
        gold: list[dict[str, object]] = []
        for position, entry in enumerate(assignment.presentation):
            if "gold" in entry:  # a known-answer pair: scored, never stored as a judgment
                value = cleaned[(str(entry["key"]), str(entry["gold"]))]
                gold.append({"kind": "gold", "criterion": entry["gold"], "value": value,
                             "passed": value == entry["answer"]})
                continue
            first = "model_b" if entry.get("swap") else "model_a"
            second = "model_a" if first == "model_b" else "model_b"
            for criterion in (c["name"] for c in assignment.questionnaire.study.criteria):
                answer = cleaned[(str(entry["key"]), criterion)]
                winner = {"a": first, "b": second, "tie": "tie"}[answer]
                rows.append(Judgment(assignment=assignment, item_id=entry["pitem"], criterion=criterion,
                                     winner=winner, shown_first=first, shown_position=position))
        Judgment.objects.bulk_create(rows)
        assignment.attention = gold
        assignment.completed_at = now
        assignment.completion_code = secrets.token_hex(5).upper()
        assignment.save(update_fields=["completed_at", "completion_code", "released_at", "attention"])
        log.info("judgments submitted", extra={"event": "judgments.submitted", "assignment": assignment.pk,
                                               "participant": participant.pk, "judgments": len(rows)})
        return assignment
