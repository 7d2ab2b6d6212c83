"""Simultaneous claims and submissions from many threads never over-assign a questionnaire.

Runs on whichever database DATABASE_URL selects; CI runs it on SQLite and on PostgreSQL, where the
claim's ``select_for_update`` row lock and the slot constraint are what keep the count right.
"""
from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection, connections

from survey import services
from survey.models import Assignment, Participant, Questionnaire, Rating
from survey.services import participation
from tests.conftest import build_dataset, build_study, full_answers

THREADS = 24


def run_in_threads(target, args_list):
    barrier = threading.Barrier(len(args_list))
    errors: list[BaseException] = []

    def runner(*args):
        try:
            barrier.wait(timeout=30)
            target(*args)
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=runner, args=a) for a in args_list]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    return errors


@pytest.mark.django_db(transaction=True)
def test_simultaneous_claims_never_exceed_capacity():
    study = build_study(build_dataset(name="conc", docs=1, readers=2), slug="conc", raters=2)
    # 1 document x 1 reader pair x 2 groups = 2 questionnaires x 2 slots = 4 sets for 24 people
    assert study.questionnaires.count() == 2
    participants = [services.participant_register(study=study) for _ in range(THREADS)]
    outcome = Counter()
    lock = threading.Lock()

    def claim_and_submit(participant: Participant) -> None:
        try:
            a = services.assignment_claim(participant=participant)
        except services.NoQuestionnaireAvailable:
            with lock:
                outcome["refused"] += 1
            return
        services.ratings_submit(assignment_public_id=a.public_id, participant=participant, values=full_answers(a))
        with lock:
            outcome["completed"] += 1

    errors = run_in_threads(claim_and_submit, [(p,) for p in participants])
    assert errors == []
    assert outcome == {"completed": 4, "refused": THREADS - 4}
    per_q = Counter(
        Assignment.objects.filter(completed_at__isnull=False).values_list("questionnaire_id", flat=True)
    )
    assert sorted(per_q.values()) == [2, 2]
    assert Rating.objects.count() == 4 * 6
    assert connection.vendor in {"sqlite", "postgresql"}


@pytest.mark.django_db(transaction=True)
def test_replayed_submissions_in_parallel_store_one_set():
    study = build_study(build_dataset(name="replay", docs=1, readers=2), slug="replay", raters=2)
    participant = services.participant_register(study=study)
    a = services.assignment_claim(participant=participant)
    values = full_answers(a, 3)

    def submit() -> None:
        services.ratings_submit(assignment_public_id=a.public_id, participant=participant, values=values)

    errors = run_in_threads(submit, [()] * 8)
    assert errors == []
    assert Rating.objects.filter(assignment=a).count() == len(a.presentation)
    assert Questionnaire.objects.get(pk=a.questionnaire_id).assignments.filter(completed_at__isnull=False).count() == 1


@pytest.mark.django_db(transaction=True)
def test_simultaneous_starts_of_one_participant_hold_one_slot():
    """A double (or 8-fold) click on Start: every claim returns the same assignment, and one slot is held."""
    study = build_study(build_dataset(name="dbl", docs=2, readers=2), slug="dbl", raters=2)
    participant = services.participant_register(study=study)
    got: list[str] = []
    lock = threading.Lock()

    def claim() -> None:
        assignment = services.assignment_claim(participant=participant)
        with lock:
            got.append(assignment.public_id)

    errors = run_in_threads(claim, [() for _ in range(8)])
    assert not errors, errors
    live = Assignment.objects.filter(participant=participant, completed_at__isnull=True, released_at__isnull=True)
    assert live.count() == 1
    assert set(got) == {live.get().public_id} and len(got) == 8


@pytest.mark.django_db
def test_the_database_refuses_a_second_live_assignment():
    """The constraint itself: a second unfinished, unreleased assignment of one participant is refused, a released
    or completed one is not in the way."""
    from django.db import IntegrityError, transaction

    study = build_study(build_dataset(name="one", docs=2, readers=2), slug="one", raters=2)
    participant = services.participant_register(study=study)
    first = services.assignment_claim(participant=participant)
    other = Questionnaire.objects.filter(study=study).exclude(pk=first.questionnaire_id).first()
    claim = {"study": study, "questionnaire": other, "participant": participant, "slot": 1, "now": first.claimed_at}
    with pytest.raises(IntegrityError), transaction.atomic():
        participation._new_assignment(**claim)
    Assignment.objects.filter(pk=first.pk).update(released_at=first.claimed_at)
    second = participation._new_assignment(**claim)
    assert second.pk != first.pk


def _adaptive_study(slug: str, per_pair: int):
    from tests.survey.test_preference import preference_study

    return preference_study(slug=slug, raters=1, per_pair=per_pair, per_q=3, docs=2, readers=2,
                            assignment="adaptive")


@pytest.mark.django_db(transaction=True)
def test_simultaneous_claims_of_an_adaptive_study_stay_within_its_budget():
    """24 people at once on an adaptive study whose budget is 3 sets (3 pairs x 3 cases, 3 per set): each set is
    drawn once under the study lock, at distinct positions, and three people get one each."""
    from survey.models import Judgment
    from tests.survey.test_preference import answers

    study = _adaptive_study("aconc", per_pair=3)
    participants = [services.participant_register(study=study) for _ in range(THREADS)]
    outcome: Counter[str] = Counter()
    lock = threading.Lock()

    def claim_and_submit(participant: Participant) -> None:
        try:
            a = services.assignment_claim(participant=participant)
        except services.NoQuestionnaireAvailable:
            with lock:
                outcome["refused"] += 1
            return
        services.judgments_submit(assignment_public_id=a.public_id, participant=participant, values=answers(a))
        with lock:
            outcome["done"] += 1

    errors = run_in_threads(claim_and_submit, [(p,) for p in participants])
    assert errors == []
    assert outcome == {"done": 3, "refused": THREADS - 3}
    positions = list(Questionnaire.objects.filter(study=study).values_list("position", flat=True))
    assert len(positions) == len(set(positions)) <= 3
    per_q = Counter(Assignment.objects.filter(completed_at__isnull=False).values_list("questionnaire_id", flat=True))
    assert set(per_q.values()) == {1} and len(per_q) == outcome["done"]
    assert Judgment.objects.count() == outcome["done"] * 3 * len(study.criteria)
    # afterwards every set is drawn and handed out: the rest of the budget goes to the next claims, then none
    while True:
        try:
            services.assignment_claim(participant=services.participant_register(study=study))
        except services.NoQuestionnaireAvailable:
            break
    assert Questionnaire.objects.filter(study=study).count() == 3


@pytest.mark.django_db(transaction=True)
def test_simultaneous_starts_of_one_participant_on_an_adaptive_study_draw_one_set():
    """The first set is held by someone else, so each of 8 simultaneous Starts of one participant would draw a new
    set: one is drawn, and every claim returns the one assignment."""
    study = _adaptive_study("adbl", per_pair=4)
    services.assignment_claim(participant=services.participant_register(study=study))
    participant = services.participant_register(study=study)
    got: list[str] = []
    lock = threading.Lock()

    def claim() -> None:
        assignment = services.assignment_claim(participant=participant)
        with lock:
            got.append(assignment.public_id)

    errors = run_in_threads(claim, [() for _ in range(8)])
    assert not errors, errors
    live = Assignment.objects.filter(participant=participant, completed_at__isnull=True, released_at__isnull=True)
    assert live.count() == 1 and set(got) == {live.get().public_id} and len(got) == 8
    assert Questionnaire.objects.filter(study=study).count() == 2
