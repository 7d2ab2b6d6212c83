"""Writes of a study's life: its questionnaires generated from the design (similarity, preference, sentence
preference), the iCOPERNICUS preset, opening, closing and reopening as a draft."""
from __future__ import annotations

import secrets
from collections.abc import Callable

from django.db import transaction

from survey import design, selectors
from survey.models import (
    Assignment,
    Item,
    PreferenceItem,
    Questionnaire,
    Study,
)
from survey.services.errors import SurveyError


def _token(nbytes: int = 18) -> str:
    return secrets.token_urlsafe(nbytes)


def _key_maker() -> Callable[[], str]:
    """A source of random field keys for one assignment's page, none repeated (they name the form fields, so they
    carry no ids)."""
    keys: set[str] = set()

    def fresh_key() -> str:
        key = _token(6)
        while key in keys:
            key = _token(6)
        keys.add(key)
        return key

    return fresh_key


@transaction.atomic
def questionnaires_generate(*, study: Study) -> design.DesignReport:
    """Materialise the study's design (``selectors.study_design_plan``) as Questionnaire and Item rows, each item
    flagged ``identical`` when its two texts are the same.

    Refuses to regenerate once any participant has claimed a questionnaire of the study, and unless the study is a
    draft (participants arriving meanwhile would find questionnaires vanishing).
    """
    if Assignment.objects.filter(questionnaire__study=study).exists():
        raise SurveyError(f"study {study.slug!r} already has assignments; its questionnaires cannot be regenerated")
    if study.status != Study.Status.DRAFT:
        raise SurveyError(
            f"study {study.slug!r} is {study.get_status_display().lower()}: questionnaires are generated while it is a "
            "draft (close it and reopen it as a draft first)"
        )
    Questionnaire.objects.filter(study=study).delete()
    if study.kind == Study.Kind.PREFERENCE and study.assignment == Study.AssignmentPolicy.ADAPTIVE:
        return _adaptive_first_set(study)
    if study.kind == Study.Kind.PREFERENCE:
        return _preference_questionnaires(study)
    if study.kind == Study.Kind.SENTENCE_PREFERENCE:
        return _sentence_questionnaires(study)
    try:
        plan = selectors.study_design_plan(study=study)
    except ValueError as exc:
        raise SurveyError(str(exc)) from None
    for position, planned in enumerate(plan.questionnaires):
        q = Questionnaire.objects.create(
            study=study,
            position=position,
            document=planned.document,
            reader_j=planned.reader_j,
            reader_k=planned.reader_k,
            group=planned.spec.group,
        )
        Item.objects.bulk_create(
            Item(questionnaire=q, position=i, system=a.system, summary_j=a, summary_k=b, identical=same)
            for i, ((a, b), same) in enumerate(zip(planned.pairs, planned.identical, strict=True))
        )
    return design.DesignReport([planned.spec for planned in plan.questionnaires], plan.skipped)


def _adaptive_first_set(study: Study) -> design.DesignReport:
    """An adaptive preference study's first set; the others are drawn as participants claim (conventions sec.
    27.8)."""
    from survey.services.adaptive import adaptive_set_create

    try:
        questionnaire = adaptive_set_create(study=study)
    except ValueError as exc:
        raise SurveyError(str(exc)) from None
    systems = tuple(dict.fromkeys(str(name) for pair in questionnaire.preference_items.order_by("position")
                                  .values_list("system_a__name", "system_b__name") for name in pair))
    reader = questionnaire.reader_j.external_id if questionnaire.reader_j else ""
    return design.DesignReport([design.QuestionnaireSpec(questionnaire.document.external_id, reader, reader, 0,
                                                         systems)], [])


def _preference_questionnaires(study: Study) -> design.DesignReport:
    """The preference study's questionnaires (``selectors.preference_plan``): one per case and group of pairs."""
    try:
        planned, skipped = selectors.preference_plan(study=study)
    except ValueError as exc:
        raise SurveyError(str(exc)) from None
    specs = []
    for position, plan in enumerate(planned):
        q = Questionnaire.objects.create(
            study=study, position=position, document=plan.document, reader_j=plan.reader, reader_k=plan.reader,
            group=plan.group,
        )
        PreferenceItem.objects.bulk_create(
            PreferenceItem(questionnaire=q, position=i, system_a=a.system, system_b=b.system, summary_a=a,
                           summary_b=b)
            for i, (a, b) in enumerate(plan.items)
        )
        systems = tuple(dict.fromkeys(name for a, b in plan.items for name in (a.system.name, b.system.name)))
        specs.append(design.QuestionnaireSpec(plan.document.external_id, plan.reader.external_id,
                                              plan.reader.external_id, plan.group, systems))
    return design.DesignReport(specs, skipped)


def _sentence_questionnaires(study: Study) -> design.DesignReport:
    """The sentence preference study's questionnaires (``selectors.sentence_plan``): one per topic and group."""
    try:
        planned, skipped = selectors.sentence_plan(study=study)
    except ValueError as exc:
        raise SurveyError(str(exc)) from None
    specs = []
    for position, plan in enumerate(planned):
        q = Questionnaire.objects.create(study=study, position=position, document=plan.document, group=plan.group)
        PreferenceItem.objects.bulk_create(
            PreferenceItem(questionnaire=q, position=i, sentence_a=a, sentence_b=b)
            for i, (a, b) in enumerate(plan.items)
        )
        specs.append(design.QuestionnaireSpec(plan.document.external_id, "", "", plan.group, ()))
    return design.DesignReport(specs, skipped)


#: iCOPERNICUS App. E.2: 3 sampled readers per document (3 pairs), the readers' pair and 9 systems' pairs per
#: questionnaire, 1 rater each, the 1-6 similarity scale
ICOPERNICUS_PRESET = {"kind": Study.Kind.SIMILARITY, "pair_mode": Study.PairMode.READERS, "pairs_per_document": 3,
                      "systems_per_questionnaire": 9, "raters_per_questionnaire": 1}


def study_apply_icopernicus_preset(*, study: Study, reference_first: bool = False) -> Study:
    """Set a draft study's design to the iCOPERNICUS survey (``ICOPERNICUS_PRESET``; the order shuffled per
    participant unless ``reference_first``); its questionnaires are then generated as usual. Scored as
    EGISES-HJ-JSD by a run with the study and aux ``jsd``."""
    if study.status != Study.Status.DRAFT:
        raise SurveyError(f"study {study.slug!r} is {study.get_status_display().lower()}: presets apply to drafts")
    if Assignment.objects.filter(questionnaire__study=study).exists():
        raise SurveyError(f"study {study.slug!r} already has assignments; its design cannot change")
    for field, value in ICOPERNICUS_PRESET.items():
        setattr(study, field, value)
    study.reference_first = reference_first
    study.save(update_fields=[*ICOPERNICUS_PRESET, "reference_first"])
    return study


def study_set_cases_per_pair(*, study: Study, value: object) -> Study:
    """A draft preference study's size, as picked from the design preview's power table (its questionnaires are
    then generated again as usual). SurveyError for a value that is not a whole number from 1 to 10000, a study
    that is not a draft or already has assignments."""
    if study.kind != Study.Kind.PREFERENCE:
        raise SurveyError("only a preference study has a number of cases per system pair")
    if study.status != Study.Status.DRAFT or Assignment.objects.filter(questionnaire__study=study).exists():
        raise SurveyError(f"study {study.slug!r} is not a draft without assignments: its size cannot change")
    try:
        number = int(str(value).strip())
    except ValueError:
        number = 0
    if not 1 <= number <= 10000:
        raise SurveyError(f"cases per system pair: give a whole number from 1 to 10000, not {value!r}")
    study.cases_per_pair = number
    study.save(update_fields=["cases_per_pair"])
    return study


def study_open(*, study: Study) -> None:
    if not study.questionnaires.exists():
        raise SurveyError(f"study {study.slug!r} has no questionnaires; generate them first")
    study.status = Study.Status.OPEN
    study.save(update_fields=["status"])


def study_close(*, study: Study) -> None:
    """No new questionnaires are handed out (``assignment_claim`` needs an open study)."""
    if study.status != Study.Status.OPEN:
        raise SurveyError(f"study {study.slug!r} is not open ({study.get_status_display().lower()}); nothing to close")
    study.status = Study.Status.CLOSED
    study.save(update_fields=["status"])


def study_reopen_draft(*, study: Study) -> None:
    """A closed study back to draft (an open one is closed first, so no one is handed a set meanwhile)."""
    if study.status != Study.Status.CLOSED:
        raise SurveyError(f"study {study.slug!r} is {study.get_status_display().lower()}; only a closed study goes "
                          "back to draft (close it first)")
    study.status = Study.Status.DRAFT
    study.save(update_fields=["status"])
