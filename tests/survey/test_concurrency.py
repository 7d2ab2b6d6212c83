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
