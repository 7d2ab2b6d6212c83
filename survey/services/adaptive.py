"""Writes of adaptive preference studies and of stopping (conventions sec. 27.8): a new set drawn by the adaptive
policy when a claim finds no free questionnaire, and a study that stops itself when its goal is reached.

Concurrency: a new set is drawn with the study row locked (``select_for_update``), so two claims never draw from
the same state nor take the same questionnaire position; the claim that waited sees the other's set. The set, its
questionnaire and the participant's assignment are written in one transaction with the lock held.
"""
from __future__ import annotations

import numpy as np
from django.db import transaction
from django.db.models import Max

from metaeval.core.planning.study import StudyState, next_set, set_probabilities
from survey.models import PreferenceItem, Questionnaire, Study
from survey.selectors import adaptive as live
from survey.selectors.preference import PreferenceCases, preference_cases
from survey.services.errors import NoQuestionnaireAvailable, SurveyError

__all__ = ["COMPLETE", "adaptive_set_create", "is_adaptive", "stop_if_reached", "watches_stopping"]

#: what participants read once the study has stopped itself
COMPLETE = ("This study is complete: it has gathered all the answers it needs. Thank you for your interest in "
            "taking part!")


def is_adaptive(study: Study) -> bool:
    return study.kind == Study.Kind.PREFERENCE and study.assignment == Study.AssignmentPolicy.ADAPTIVE


def watches_stopping(study: Study) -> bool:
    return study.kind == Study.Kind.PREFERENCE and study.stop_rule != Study.StopRule.NONE


def stop_if_reached(study: Study, now) -> StudyState | None:
    """With a stopping rule: the study's live state; when the rule holds and the study's action is ``stop``, the
    study is marked complete (``completed_at``; no new set is handed out after that). None without a rule."""
    if not watches_stopping(study):
        return None
    state = live.study_live_state(study, live.study_systems(study))
    if state.stopped and study.stop_action == Study.StopAction.STOP and study.completed_at is None:
        Study.objects.filter(pk=study.pk, completed_at__isnull=True).update(completed_at=now)
        study.completed_at = now
    return state


def set_seed(study: Study, number: int) -> int:
    """The seed of the study's set ``number`` (0-based: the questionnaires drawn before it)."""
    return int(np.random.SeedSequence([int(study.seed) & (2**63 - 1), number]).generate_state(1)[0])


def adaptive_set_create(*, study: Study, cases: PreferenceCases | None = None) -> Questionnaire:
    """Draw the study's next set (:func:`metaeval.core.planning.study.next_set` with the adaptive policy's
    probabilities from the stored judgments) and store it as a questionnaire of one case. Call inside a
    transaction; the study row is locked here. NoQuestionnaireAvailable when the design's budget (pairs x
    cases_per_pair items) is spent or the study has stopped itself."""
    Study.objects.select_for_update().filter(pk=study.pk).first()
    cases = cases or preference_cases(study=study)
    if not cases.cases:
        raise SurveyError("no case: the study's documents have no reader with every system's text")
    n = len(cases.systems)
    state = live.study_live_state(study, cases.systems)
    history = live.planned_items(study)
    left = live.design_budget(study, n * (n - 1) // 2) - len(history)
    if left <= 0:
        raise NoQuestionnaireAvailable("Thank you! There are no more questionnaires for you in this study right now.")
    existing = Questionnaire.objects.filter(study=study)
    number = existing.count()
    drawn = next_set(set_probabilities(state), cases.systems, cases.cases, history,
                     k=min(study.pairs_per_questionnaire, left), seed=set_seed(study, number))
    doc_id, reader_id = drawn[0].doc_id, drawn[0].reader_id
    document, reader = cases.documents[doc_id], cases.readers[reader_id]
    position = (existing.aggregate(top=Max("position"))["top"] or 0) + 1 if number else 0
    group = existing.filter(document=document, reader_j=reader).count()
    questionnaire = Questionnaire.objects.create(study=study, position=position, document=document, reader_j=reader,
                                                 reader_k=reader, group=group)
    summaries = cases.summaries
    PreferenceItem.objects.bulk_create(
        PreferenceItem(questionnaire=questionnaire, position=i, system_a=summaries[(doc_id, reader_id, item.model_a)]
                       .system, system_b=summaries[(doc_id, reader_id, item.model_b)].system,
                       summary_a=summaries[(doc_id, reader_id, item.model_a)],
                       summary_b=summaries[(doc_id, reader_id, item.model_b)])
        for i, item in enumerate(drawn)
    )
    return questionnaire


def first_set(study: Study) -> Questionnaire:
    """*Generate questionnaires* of an adaptive study: its first set (every pair unjudged, so drawn evenly)."""
    with transaction.atomic():
        return adaptive_set_create(study=study)
