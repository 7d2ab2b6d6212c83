"""Writes: creating studies and questionnaires, registering participants, claiming and submitting.

Concurrency: a claim locks the questionnaire row (``select_for_update``) inside a transaction, releases
that questionnaire's expired slots and takes a free slot; the conditional unique constraint
``(questionnaire, slot) where released_at is null`` guarantees in the database that no questionnaire ever
holds more than ``raters_per_questionnaire`` live or completed assignments, whatever the isolation level.

Split by concern: ``errors``, ``studies``, ``participation``, ``submissions``, ``review``."""
from __future__ import annotations

from survey.services.errors import (
    AssignmentExpired,
    NoQuestionnaireAvailable,
    SubmissionInvalid,
    SurveyError,
)
from survey.services.participation import (
    ATTENTION_PASS,
    GOLD_CRITERION,
    GOLD_KINDS,
    GOLD_RELEVANCE_CRITERION,
    assignment_claim,
    assignments_release_expired,
    gold_kinds,
    gold_pair_count,
    participant_register,
    participant_update_demographics,
)
from survey.services.review import (
    REVIEW_ACTIONS,
    participants_exclude_below_gold,
    participants_review,
)
from survey.services.studies import (
    ICOPERNICUS_PRESET,
    questionnaires_generate,
    study_apply_icopernicus_preset,
    study_close,
    study_open,
    study_reopen_draft,
    study_set_cases_per_pair,
)
from survey.services.submissions import (
    CHOICES,
    choice_field,
    judgments_submit,
    ratings_submit,
)

__all__ = [
    "ATTENTION_PASS",
    "AssignmentExpired",
    "CHOICES",
    "GOLD_CRITERION",
    "GOLD_KINDS",
    "GOLD_RELEVANCE_CRITERION",
    "ICOPERNICUS_PRESET",
    "NoQuestionnaireAvailable",
    "REVIEW_ACTIONS",
    "SubmissionInvalid",
    "SurveyError",
    "assignment_claim",
    "assignments_release_expired",
    "choice_field",
    "gold_kinds",
    "gold_pair_count",
    "judgments_submit",
    "participant_register",
    "participant_update_demographics",
    "participants_exclude_below_gold",
    "participants_review",
    "questionnaires_generate",
    "ratings_submit",
    "study_apply_icopernicus_preset",
    "study_close",
    "study_open",
    "study_reopen_draft",
    "study_set_cases_per_pair",
]
