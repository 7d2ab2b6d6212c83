"""Preference studies (AuPEL): generation from the pairwise design, the blind page with its context pane, all-or-
nothing submission with sides mapped back to systems, the judgment export, and the claim guarantees."""
from __future__ import annotations

import io
import itertools
import threading
from collections import Counter

import pytest
from django.db import connections
from django.test import Client

from metaeval.core.pairwise.judgments import parse_judgments
from survey import selectors, services
from survey.models import Assignment, Judgment, PreferenceItem, Study, System
from tests.conftest import build_dataset
from tests.survey.test_concurrency import run_in_threads

pytestmark = pytest.mark.django_db
SYSTEMS = ["SysnameA", "SysnameB", "SysnameC"]


def preference_study(*, slug="pref", raters=2, per_pair=4, per_q=3, allow_tie=False, docs=3, readers=3,
                     **fields) -> Study:
    dataset = build_dataset(name=f"{slug}-data", docs=docs, readers=readers, systems=SYSTEMS)
    study = Study.objects.create(slug=slug, title=f"Study {slug}", dataset=dataset, kind=Study.Kind.PREFERENCE,
                                 raters_per_questionnaire=raters, cases_per_pair=per_pair,
                                 pairs_per_questionnaire=per_q, allow_tie=allow_tie, seed=5, **fields)
    study.systems.set(System.objects.filter(name__in=SYSTEMS))
    services.questionnaires_generate(study=study)
    services.study_open(study=study)
    return study


def answers(assignment: Assignment, choose=lambda entry, criterion: "a") -> dict[str, str]:
    study = assignment.questionnaire.study
    return {services.choice_field(e["key"], c["name"]): choose(e, c["name"])
            for e in assignment.presentation for c in study.criteria}


def test_generation_follows_the_design():
    study = preference_study(per_pair=4, per_q=3)
    items = PreferenceItem.objects.filter(questionnaire__study=study).select_related(
        "questionnaire", "summary_a", "summary_b", "system_a", "system_b")
    pairs = Counter(frozenset((i.system_a.name, i.system_b.name)) for i in items)
    assert pairs == {frozenset(p): 4 for p in itertools.combinations(SYSTEMS, 2)}
    for item in items:
        q = item.questionnaire
        assert q.reader_j_id == q.reader_k_id  # one case: one reader
        for summary, system in ((item.summary_a, item.system_a), (item.summary_b, item.system_b)):
            assert (summary.document_id, summary.reader_id, summary.system_id) == (q.document_id, q.reader_j_id,
                                                                                 system.pk)
    sizes = Counter(q.preference_items.count() for q in study.questionnaires.all())
    assert max(sizes) <= 3 and not study.questionnaires.filter(items__isnull=False).exists()


def test_too_many_cases_per_pair_is_a_clear_error():
    with pytest.raises(services.SurveyError, match=r"between 1 and the number of cases \(9\)"):
        preference_study(per_pair=10)


def test_the_page_is_blind_and_has_the_context(client: Client):
    study = preference_study()
    client.post(f"/s/{study.slug}/", {"consent": "on"})
    response = client.post(f"/s/{study.slug}/start/", follow=True)
    html = response.content.decode()
    assert response.status_code == 200 and "Which text is better?" in html
    assignment = Assignment.objects.get()
    for name in [*SYSTEMS, "user"]:
        assert name not in html
    assert "pitem" not in html and "model_a" not in html and "model_b" not in html
    for entry in assignment.presentation:
        for criterion in study.criteria:
            assert f'name="{services.choice_field(entry["key"], criterion["name"])}"' in html
    assert 'value="tie"' not in html  # forced choice by default
    # the reader's own headlines on other documents, never the case's own
    q = assignment.questionnaire
    own = f"gold headline {q.document.external_id[1:]} written by reader {q.reader_j.external_id}"
    assert own not in html
    assert html.count("written by reader " + q.reader_j.external_id) == 2  # the other two documents
    assert q.document.body[:40] in html


def test_submission_maps_sides_back_to_systems():
    study = preference_study()
    participant = services.participant_register(study=study)
    assignment = services.assignment_claim(participant=participant)
    services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                              values=answers(assignment))  # always the text shown first
    judgments = list(Judgment.objects.filter(assignment=assignment).select_related("item"))
    assert len(judgments) == len(assignment.presentation) * 3
    swaps = {e["pitem"]: e["swap"] for e in assignment.presentation}
    for judgment in judgments:
        first = "model_b" if swaps[judgment.item_id] else "model_a"
        assert judgment.shown_first == first and judgment.winner == first
    assert {j.criterion for j in judgments} == {"quality", "relevance", "personalization"}
    assignment.refresh_from_db()
    assert assignment.completed_at is not None and assignment.completion_code
    # a second submission stores nothing
    services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                              values=answers(assignment, lambda e, c: "b"))
    assert Judgment.objects.count() == len(judgments)


def test_incomplete_or_bad_answers_store_nothing():
    study = preference_study()
    participant = services.participant_register(study=study)
    assignment = services.assignment_claim(participant=participant)
    values = answers(assignment)
    first_field = next(iter(values))
    with pytest.raises(services.SubmissionInvalid) as missing:
        services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                  values={**values, first_field: ""})
    assert missing.value.field_errors[first_field].startswith("Pair 1, quality: please choose A or B")
    with pytest.raises(services.SubmissionInvalid, match="1 of"):
        services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                  values={**values, first_field: "tie"})  # no tie offered
    with pytest.raises(services.SubmissionInvalid, match="Unknown fields"):
        services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                  values={**values, "sneaky": "a"})
    assert not Judgment.objects.exists()
    assert Assignment.objects.get().completed_at is None


def test_ties_when_offered():
    study = preference_study(slug="ties", allow_tie=True)
    participant = services.participant_register(study=study)
    assignment = services.assignment_claim(participant=participant)
    services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                              values=answers(assignment, lambda e, c: "tie" if c == "quality" else "b"))
    winners = Counter((j.criterion, j.winner == "tie") for j in Judgment.objects.all())
    n = len(assignment.presentation)
    assert winners == {("quality", True): n, ("relevance", False): n, ("personalization", False): n}


def test_export_is_a_judgment_file_the_pairwise_command_reads(tmp_path):
    from metaeval.core.io.records import write_csv

    study = preference_study(raters=2)
    for index in range(2):
        participant = services.participant_register(study=study)
        while True:
            try:
                assignment = services.assignment_claim(participant=participant)
            except services.NoQuestionnaireAvailable:
                break
            services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                      values=answers(assignment, lambda e, c, i=index: "ab"[(i + len(c)) % 2]))
    rows = list(selectors.judgment_export_rows(study=study))
    assert len(rows) == Judgment.objects.count() == 2 * 12 * 3
    assert list(rows[0]) == list(selectors.JUDGMENT_COLUMNS)
    raters = {selectors.rater_id(pk) for pk in study.participants.values_list("pk", flat=True)}
    assert {r["judge_kind"] for r in rows} == {"human"} and {r["judge"] for r in rows} == raters and len(raters) == 2
    out = io.StringIO()
    write_csv(rows, selectors.JUDGMENT_COLUMNS, out)
    table = parse_judgments(out.getvalue(), "export.csv", json_lines=False)
    assert len(table.judgments) == len(rows) and table.invalid == 0
    assert all(j.case_id == f"{j.doc_id}/{j.reader_id}" for j in table.judgments)


@pytest.mark.django_db(transaction=True)
def test_simultaneous_claims_of_a_preference_study_never_exceed_capacity():
    study = preference_study(slug="pconc", raters=1, per_pair=1, per_q=3, docs=1, readers=1)
    # 3 pairs x 1 case, 3 per questionnaire: one questionnaire, one slot, for 12 people at once
    assert study.questionnaires.count() == 1
    participants = [services.participant_register(study=study) for _ in range(12)]
    outcome: Counter[str] = Counter()
    lock = threading.Lock()

    def claim_and_submit(participant) -> None:
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
    connections.close_all()
    assert errors == []
    assert outcome == {"done": 1, "refused": 11}
    assert Judgment.objects.count() == 3 * 3


def _complete_all(study: Study, participants: int = 2) -> None:
    for index in range(participants):
        participant = services.participant_register(study=study)
        while True:
            try:
                assignment = services.assignment_claim(participant=participant)
            except services.NoQuestionnaireAvailable:
                break
            services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                      values=answers(assignment, lambda e, c, i=index: "ab"[(i + e["swap"]) % 2]))


@pytest.fixture
def researcher_client(db) -> Client:
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("pref-res", password="pref-res-pass-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def test_research_pages_of_a_preference_study(researcher_client):
    study = preference_study()
    _complete_all(study)
    page = researcher_client.get(f"/research/studies/{study.slug}/").content.decode()
    assert "preference study: 4 cases per system pair" in page and "Answers per system" in page
    assert f"/research/studies/{study.slug}/judgments.csv" in page and "ratings.csv" not in page
    progress = researcher_client.get(f"/research/studies/{study.slug}/progress.json").json()
    # every pair of every questionnaire, both raters, 3 criteria; each answer counts for both systems of the pair
    assert progress["ratings_per_system"] == {name: 2 * 8 * 3 for name in SYSTEMS}
    assert progress["complete"] == progress["questionnaires"] == study.questionnaires.count()
    download = researcher_client.get(f"/research/studies/{study.slug}/judgments.csv")
    lines = download.getvalue().decode().splitlines()
    assert lines[0] == ",".join(selectors.JUDGMENT_COLUMNS) and len(lines) == 1 + Judgment.objects.count()
    assert researcher_client.get(f"/research/studies/{study.slug}/judgments.xml").status_code == 400
    design = researcher_client.get(f"/research/studies/{study.slug}/design/").content.decode()
    assert 'data-design="pairs">12<' in design and 'data-design="answers">72<' in design  # 12 pairs x 3 x 2
    assert "cannot be regenerated" in design
    participants = researcher_client.get(f"/research/studies/{study.slug}/participants/")
    listed = participants.content.decode()
    assert participants.status_code == 200
    assert all(selectors.rater_id(pk) in listed for pk in study.participants.values_list("pk", flat=True))


def test_export_command_and_api(tmp_path, capsys):
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.core.management.base import CommandError
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    study = preference_study()
    _complete_all(study)
    out = tmp_path / "j.csv"
    call_command("export_judgments", "--study", study.slug, "--out", str(out))
    text = out.read_text()
    table = parse_judgments(text, "j.csv", json_lines=False)
    assert len(table.judgments) == Judgment.objects.count() == 72
    with pytest.raises(CommandError, match="unknown study 'nope' \\(A/B studies: pref\\)"):
        call_command("export_judgments", "--study", "nope")
    user = User.objects.create_user("api-pref")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    response = api.get(f"/api/studies/{study.slug}/judgments/")
    assert response.status_code == 200 and b"".join(response.streaming_content).decode() == text
    jsonl = b"".join(api.get(f"/api/studies/{study.slug}/judgments/?as=jsonl").streaming_content).decode()
    assert len(jsonl.splitlines()) == 72
    from tests.conftest import build_study

    similarity = build_study(build_dataset(name="simdata"), slug="sim")
    assert api.get(f"/api/studies/{similarity.slug}/judgments/").status_code == 409


def test_a_study_becomes_a_judgment_set_for_a_report(researcher_client):
    from metaeval.models import JudgmentSet

    study = preference_study()
    empty = researcher_client.post("/research/runs/judgments/", {"set_name": "too-early", "study": study.slug})
    assert empty.status_code == 400 and "has no participants&#x27; judgments yet" in empty.content.decode()
    _complete_all(study)
    no_llm = researcher_client.post("/research/runs/judgments/", {"set_name": "llm", "study": study.slug,
                                                                  "source": "llm"})
    assert no_llm.status_code == 400 and "has no LLM judges&#x27; judgments yet" in no_llm.content.decode()
    page = researcher_client.get(f"/research/runs/judgments/?study={study.slug}").content.decode()
    assert f'<option value="{study.slug}" selected>' in page
    response = researcher_client.post("/research/runs/judgments/", {"set_name": "pref-set", "study": study.slug})
    assert response.status_code == 302
    stored = JudgmentSet.objects.get(name="pref-set")
    assert (stored.judgments, stored.invalid) == (72, 0) and stored.games == 12 * 3
    assert sorted(stored.systems) == SYSTEMS and stored.file_name == "pref-judgments.csv"


def test_expiry_rules_hold_for_preference_answers():
    """A late set keeps its slot while nobody took it; once another participant holds the slot, nothing is saved."""
    from datetime import timedelta

    from django.utils import timezone

    study = preference_study(slug="late", raters=1, per_pair=1, per_q=3, docs=1, readers=1)
    now = timezone.now()
    first = services.participant_register(study=study)
    late = services.assignment_claim(participant=first, now=now)
    after = now + timedelta(minutes=study.assignment_timeout_minutes + 1)
    saved = services.judgments_submit(assignment_public_id=late.public_id, participant=first,
                                      values=answers(late), now=after)
    assert saved.completed_at == after and saved.released_at is None  # the slot was still free: taken back
    study2 = preference_study(slug="later", raters=1, per_pair=1, per_q=3, docs=1, readers=1)
    slow, quick = services.participant_register(study=study2), services.participant_register(study=study2)
    lost = services.assignment_claim(participant=slow, now=now)
    services.assignment_claim(participant=quick, now=after)  # the expired hold is released and its slot given away
    with pytest.raises(services.AssignmentExpired, match="given to someone else"):
        services.judgments_submit(assignment_public_id=lost.public_id, participant=slow, values=answers(lost),
                                  now=after)
    assert not Judgment.objects.filter(assignment=lost).exists()
