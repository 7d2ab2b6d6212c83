"""Writes of the crowd review: participants approved, rejected, excluded from scoring or included again (the
participants page), and those below the gold threshold excluded."""
from __future__ import annotations

import logging

from django.utils import timezone

from survey import selectors
from survey.models import (
    Participant,
    Study,
)
from survey.services.errors import SurveyError

log = logging.getLogger(__name__)


REVIEW_ACTIONS: dict[str, tuple[dict[str, object], str]] = {
    # action: (fields set, words for the message)
    "approve": ({"review": Participant.Review.APPROVED}, "approved"),
    "reject": ({"review": Participant.Review.REJECTED, "excluded": True}, "rejected and excluded from scoring"),
    "exclude": ({"excluded": True}, "excluded from scoring"),
    "include": ({"excluded": False}, "included in scoring again"),
}


def participants_exclude_below_gold(*, study: Study, now=None) -> int:
    """Exclude from scoring every participant of a preference study below its gold threshold (recorded with a note
    naming their gold share; *Include in scoring* undoes it); returns how many. SurveyError without a threshold."""
    if study.kind != Study.Kind.PREFERENCE or study.gold_threshold is None:
        raise SurveyError("Set the study's gold threshold first (a preference study with gold pairs).")
    ids = selectors.below_gold_threshold(study=study)
    if not ids:
        return 0
    count, _words = participants_review(
        study=study, participant_ids=ids, action="exclude",
        note=f"gold share below the threshold {study.gold_threshold:g}", now=now,
    )
    return count


def participants_review(
    *, study: Study, participant_ids: list[int], action: str, note: str = "", now=None
) -> tuple[int, str]:
    """Record a crowd-work decision for participants of ``study``: approve, reject (also excludes: rejected work is
    not scored), exclude from or include in scoring (later runs leave excluded participants' ratings out and record
    them with the run). ``note``, when given, replaces the note. Returns (count, words for a message); raises
    SurveyError for an unknown action, no participant, or ids that are not participants of the study."""
    if action not in REVIEW_ACTIONS:
        raise SurveyError(f"unknown action {action!r}; choose one of {', '.join(REVIEW_ACTIONS)}")
    ids = sorted({pk for pk in participant_ids if 0 < pk < 2**63})
    if not ids:
        raise SurveyError("Select at least one participant.")
    known = set(study.participants.filter(pk__in=ids).values_list("pk", flat=True))
    unknown = [selectors.rater_id(pk) for pk in ids if pk not in known]
    if unknown:
        raise SurveyError(f"Not participants of {study.slug}: {', '.join(unknown)}; nothing was changed.")
    fields, words = REVIEW_ACTIONS[action]
    changes: dict[str, object] = {**fields, "reviewed_at": now or timezone.now()}
    if note.strip():
        changes["review_note"] = note.strip()[:500]
    count = study.participants.filter(pk__in=ids).update(**changes)
    log.info("participants reviewed", extra={"event": "participants.reviewed", "study": study.slug,
                                              "action": action, "participants": ids})
    return count, words
