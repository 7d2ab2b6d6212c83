"""Claiming, capacity, expiry and reclaim, submission validation and idempotency."""
from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from survey import services
from survey.models import Assignment, Item, Participant, Questionnaire, Rating, Study
from tests.conftest import build_dataset, build_study, full_answers

pytestmark = pytest.mark.django_db


def register(study: Study, n: int = 1) -> list[Participant]:
    return [services.participant_register(study=study) for _ in range(n)]


def test_generate_materialises_design(study):
    qs = list(study.questionnaires.all())
    # 3 docs x C(3,2) reader pairs x 2 groups of 5
    assert len(qs) == 3 * 3 * 2
    for q in qs:
        systems = list(q.items.values_list("system__name", flat=True))
        assert systems[0] == "user" and len(systems) == 6
        for item in q.items.select_related("summary_j", "summary_k"):
            assert item.summary_j.reader_id == q.reader_j_id and item.summary_k.reader_id == q.reader_k_id
            assert item.summary_j.system_id == item.system_id == item.summary_k.system_id


def test_regenerate_refused_once_claimed(study):
    p = register(study)[0]
    services.assignment_claim(participant=p)
    with pytest.raises(services.SurveyError, match="already has assignments"):
        services.questionnaires_generate(study=study)


def test_every_questionnaire_gets_exactly_n_distinct_raters(study):
    n = study.raters_per_questionnaire
    participants = register(study, 7)
    done = Counter()
    progress = True
    while progress:
        progress = False
        for p in participants:
            try:
                a = services.assignment_claim(participant=p)
            except services.NoQuestionnaireAvailable:
                continue
            services.ratings_submit(assignment_public_id=a.public_id, participant=p, values=full_answers(a))
            done[a.questionnaire_id] += 1
            progress = True
    assert set(done.values()) == {n}
    assert len(done) == study.questionnaires.count()
    pairs = Assignment.objects.values_list("questionnaire_id", "participant_id")
    assert len(pairs) == len(set(pairs))  # nobody got a questionnaire twice
    late = register(study)[0]
    with pytest.raises(services.NoQuestionnaireAvailable):
        services.assignment_claim(participant=late)


def test_claim_returns_live_assignment_until_finished(study):
    p = register(study)[0]
    first = services.assignment_claim(participant=p)
    assert services.assignment_claim(participant=p).pk == first.pk
    services.ratings_submit(assignment_public_id=first.public_id, participant=p, values=full_answers(first))
    second = services.assignment_claim(participant=p)
    assert second.pk != first.pk and second.questionnaire_id != first.questionnaire_id


def test_claims_spread_over_questionnaires(study):
    a, b = register(study, 2)
    qa = services.assignment_claim(participant=a).questionnaire_id
    qb = services.assignment_claim(participant=b).questionnaire_id
    assert qa != qb  # fewest-held first


def test_expired_assignment_is_released_and_reclaimed(dataset):
    study = build_study(dataset, slug="one", raters=1)
    Questionnaire.objects.filter(study=study).exclude(position=0).delete()
    p1, p2 = register(study, 2)
    t0 = timezone.now()
    a1 = services.assignment_claim(participant=p1, now=t0)
    with pytest.raises(services.NoQuestionnaireAvailable):
        services.assignment_claim(participant=p2, now=t0 + timedelta(minutes=5))
    later = t0 + timedelta(minutes=study.assignment_timeout_minutes + 1)
    a2 = services.assignment_claim(participant=p2, now=later)
    assert a2.questionnaire_id == a1.questionnaire_id and a2.slot == a1.slot
    a1.refresh_from_db()
    assert a1.released_at is not None
    # the first participant's late answers are refused: the slot went to someone else
    with pytest.raises(services.AssignmentExpired):
        services.ratings_submit(assignment_public_id=a1.public_id, participant=p1, values=full_answers(a1), now=later)
    assert not Rating.objects.filter(assignment=a1).exists()
    services.ratings_submit(assignment_public_id=a2.public_id, participant=p2, values=full_answers(a2), now=later)
    assert Assignment.objects.filter(completed_at__isnull=False).count() == 1


def test_participant_whose_hold_expired_claims_again(dataset):
    """Their own expired hold is let go on the next claim (the database allows one unfinished, unreleased
    assignment per participant), and it does not count as held when questionnaires are ranked."""
    study = build_study(dataset, slug="again", raters=2)
    p = register(study)[0]
    t0 = timezone.now()
    first = services.assignment_claim(participant=p, now=t0)
    later = t0 + timedelta(minutes=study.assignment_timeout_minutes + 1)
    second = services.assignment_claim(participant=p, now=later)
    first.refresh_from_db()
    assert first.released_at == later and second.pk != first.pk
    assert second.questionnaire_id != first.questionnaire_id  # never the same questionnaire twice
    # another participant: the expired (released) hold and the live one count 0 and 1, so the fewest-held first
    # rule sends them to the first questionnaire again, not to the live one
    other = register(study)[0]
    third = services.assignment_claim(participant=other, now=later)
    assert third.questionnaire_id == first.questionnaire_id


def test_late_submission_accepted_while_slot_still_free(dataset):
    study = build_study(dataset, slug="late", raters=1)
    p = register(study)[0]
    t0 = timezone.now()
    a = services.assignment_claim(participant=p, now=t0)
    late = t0 + timedelta(minutes=study.assignment_timeout_minutes + 30)
    services.assignments_release_expired(now=late)
    services.ratings_submit(assignment_public_id=a.public_id, participant=p, values=full_answers(a), now=late)
    a.refresh_from_db()
    assert a.completed_at == late and a.released_at is None
    assert a.ratings.count() == len(a.presentation)


def test_slot_constraint_refuses_a_second_holder_in_the_database(dataset):
    study = build_study(dataset, slug="cap", raters=1)
    p1, p2 = register(study, 2)
    a = services.assignment_claim(participant=p1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            questionnaire=a.questionnaire, participant=p2, public_id="x", slot=a.slot,
            presentation_seed=1, claimed_at=a.claimed_at, expires_at=a.expires_at,
        )


def test_double_submit_stores_one_set(study):
    p = register(study)[0]
    a = services.assignment_claim(participant=p)
    answers = full_answers(a, 5)
    first = services.ratings_submit(assignment_public_id=a.public_id, participant=p, values=answers)
    code = first.completion_code
    again = services.ratings_submit(
        assignment_public_id=a.public_id, participant=p, values=full_answers(a, 1)
    )
    assert again.completion_code == code
    assert list(Rating.objects.filter(assignment=a).values_list("value", flat=True)) == [5] * len(a.presentation)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda v, k: v.pop(k[0]), "1 of 6 pairs need a valid rating"),
        (lambda v, k: v.update({k[1]: "7"}), "1 of 6 pairs"),
        (lambda v, k: v.update({k[1]: "0"}), "1 of 6 pairs"),
        (lambda v, k: v.update({k[2]: "4.5"}), "1 of 6 pairs"),
        (lambda v, k: v.update({k[2]: "abc"}), "1 of 6 pairs"),
        (lambda v, k: v.update({k[0]: "", k[1]: ""}), "2 of 6 pairs"),
        (lambda v, k: v.update({"item-99": "3"}), "Unknown fields"),
    ],
)
def test_invalid_submissions_store_nothing(study, mutate, message):
    p = register(study)[0]
    a = services.assignment_claim(participant=p)
    values = full_answers(a)
    keys = [e["key"] for e in a.presentation]
    mutate(values, keys)
    with pytest.raises(services.SubmissionInvalid, match=message) as info:
        services.ratings_submit(assignment_public_id=a.public_id, participant=p, values=values)
    assert info.value.field_errors
    a.refresh_from_db()
    assert a.completed_at is None and not a.ratings.exists()


def test_out_of_range_value_refused_by_database_too(study):
    p = register(study)[0]
    a = services.assignment_claim(participant=p)
    item = Item.objects.filter(questionnaire=a.questionnaire).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Rating.objects.create(assignment=a, item=item, value=7, shown_position=0, swapped=False)


def test_submit_of_someone_elses_assignment_refused(study):
    p1, p2 = register(study, 2)
    a = services.assignment_claim(participant=p1)
    with pytest.raises(services.SurveyError, match="not valid for you"):
        services.ratings_submit(assignment_public_id=a.public_id, participant=p2, values=full_answers(a))


def test_ratings_record_position_and_side(study):
    p = register(study)[0]
    a = services.assignment_claim(participant=p)
    services.ratings_submit(assignment_public_id=a.public_id, participant=p, values=full_answers(a))
    for position, entry in enumerate(a.presentation):
        r = Rating.objects.get(assignment=a, item_id=entry["item"])
        assert r.shown_position == position and r.swapped == entry["swap"]


def test_closed_study_accepts_nobody(dataset):
    study = build_study(dataset, slug="closed")
    p = register(study)[0]
    study.status = Study.Status.CLOSED
    study.save()
    with pytest.raises(services.NoQuestionnaireAvailable):
        services.assignment_claim(participant=p)
    with pytest.raises(services.SurveyError):
        services.participant_register(study=study)


def test_study_without_systems_cannot_be_generated(db):
    dataset = build_dataset(name="nosys", systems=[])
    study = Study.objects.create(slug="empty", title="Empty", dataset=dataset)
    with pytest.raises(services.SurveyError, match="no systems"):
        services.questionnaires_generate(study=study)
