"""Researcher pages of a study: the design preview (and generation) and the participants page (crowd review)."""
from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from metaeval import services as metaeval_services
from metaeval.core.perseval.pipeline import RunOptions
from survey import selectors, services
from survey.models import Assignment, Participant, Study, Summary, System
from tests.conftest import build_dataset, complete_questionnaires, full_answers


@pytest.fixture
def researcher_client(db) -> Client:
    user = User.objects.create_user("res", password="pw-for-tests-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def _draft(dataset, **fields) -> Study:
    study = Study.objects.create(slug="draft", title="Draft", dataset=dataset, seed=5, **fields)
    study.systems.set(System.objects.exclude(name="user"))
    return study


def _cell(html: str, name: str) -> str:
    match = re.search(rf'data-design="{name}">([^<]+)<', html)
    assert match, name
    return match.group(1).strip()


def test_design_preview_counts_match_what_generation_creates(researcher_client, db):
    dataset = build_dataset()
    study = _draft(dataset, raters_per_questionnaire=3)
    html = researcher_client.get(f"/research/studies/{study.slug}/design/").content.decode()
    assert not study.questionnaires.exists()  # a preview writes nothing
    # 3 documents x 3 reader pairs x 2 groups of 5 systems; 6 pairs each (the readers' own pair first)
    assert _cell(html, "questionnaires") == "18" and _cell(html, "pairs") == "108"
    assert _cell(html, "shown_pairs") == "108" and _cell(html, "rating_sets") == "54"
    assert _cell(html, "ratings_needed") == "324"
    assert "assumed: no rating set has been completed yet" in html
    assert _cell(html, "participant_minutes") == "108"  # 324 ratings x 20 s
    r = researcher_client.post(f"/research/studies/{study.slug}/design/", follow=True)
    assert "Generated 18 questionnaires" in r.content.decode()
    assert study.questionnaires.count() == 18


def test_design_preview_uses_measured_time_and_prices_it(researcher_client, db):
    dataset = build_dataset()
    study = _draft(dataset)
    services.questionnaires_generate(study=study)
    services.study_open(study=study)
    participant = services.participant_register(study=study)
    start = timezone.now()
    for seconds in (60, 120, 600):  # 6 pairs each: 10, 20 and 100 s per pair -> median 20
        a = services.assignment_claim(participant=participant, now=start)
        services.ratings_submit(assignment_public_id=a.public_id, participant=participant,
                                values=full_answers(a), now=start + timedelta(seconds=seconds))
    timing = selectors.median_seconds_per_pair(study=study)
    assert (timing.seconds, timing.sets, timing.source) == (20.0, 3, "this study")
    html = researcher_client.get(f"/research/studies/{study.slug}/design/?price_per_hour=12.50").content.decode()
    # 18 questionnaires x 6 pairs x 2 raters = 216 ratings x 20 s = 72 minutes = 1.2 h -> 15.00
    assert _cell(html, "participant_minutes") == "72" and _cell(html, "cost") == "15.00"
    assert "median measured on 3 completed rating sets of this study" in html
    assert "cannot be regenerated" in html and 'id="design-generate"' not in html
    bad = researcher_client.get(f"/research/studies/{study.slug}/design/?price_per_hour=-3").content.decode()
    assert "greater than or equal to 0" in bad and 'data-design="cost"' not in bad


def test_design_preview_counts_attention_pairs_in_participant_time(researcher_client, db):
    study = _draft(build_dataset(), attention_checks=2)
    html = researcher_client.get(f"/research/studies/{study.slug}/design/").content.decode()
    # 36 rating sets x 2 attention pairs; (216 ratings + 72) x 20 s = 96 minutes
    assert _cell(html, "attention_pairs") == "72" and _cell(html, "participant_minutes") == "96"
    assert _cell(html, "minutes_per_set") == "2.7"  # (6 + 2) pairs x 20 s


def test_design_estimate_rounds_the_cost_to_the_cent():
    plan = selectors.DesignPlan([], [], "show", 2)
    timing = selectors.PairTiming(20.0, 0, "assumed")
    assert selectors.design_estimate(plan=plan, timing=timing, price=Decimal("10")).cost == Decimal("0.00")


def test_design_preview_of_a_study_without_systems_says_so(researcher_client, db):
    study = Study.objects.create(slug="empty", title="Empty", dataset=build_dataset())
    html = researcher_client.get(f"/research/studies/{study.slug}/design/").content.decode()
    assert "has no systems selected" in html


def _varied(assignment, index: int) -> dict[str, str]:
    """Ratings that vary over the pairs (by shown position and rater)."""
    return {e["key"]: str(1 + (n * (index + 2) + index) % 6) for n, e in enumerate(assignment.presentation)}


def _rated_study(participants: int = 3, answers=lambda a, i: full_answers(a, 2 + i)) -> Study:
    from tests.conftest import build_study

    study = build_study(build_dataset(), raters=3)
    complete_questionnaires(study, answers, participants=participants)
    return study


def test_participants_page_lists_codes_time_and_flags_and_records_decisions(researcher_client, db):
    study = _rated_study()
    p1, p2, p3 = study.participants.order_by("pk")
    html = researcher_client.get(f"/research/studies/{study.slug}/participants/").content.decode()
    for p in (p1, p2, p3):
        codes = Assignment.objects.filter(participant=p, completed_at__isnull=False).values_list(
            "completion_code", flat=True
        )
        assert f'data-rater="P{p.pk}"' in html and all(code in html for code in codes)
    assert "straight-lined 18 of 18 sets" in html  # every set rated with one value
    r = researcher_client.post(
        f"/research/studies/{study.slug}/participants/",
        {"participant": [p1.pk, p2.pk], "action": "approve", "note": "good work"}, follow=True,
    )
    assert "2 participants approved." in r.content.decode()
    researcher_client.post(f"/research/studies/{study.slug}/participants/", {"participant": [p3.pk],
                                                                              "action": "exclude"})
    p1.refresh_from_db(), p3.refresh_from_db()
    assert (p1.review, p1.review_note, p1.excluded) == ("approved", "good work", False)
    assert (p3.review, p3.excluded) == ("pending", True) and p3.reviewed_at is not None
    r = researcher_client.post(f"/research/studies/{study.slug}/participants/", {"action": "approve"}, follow=True)
    assert "Select at least one participant." in r.content.decode()
    r = researcher_client.post(f"/research/studies/{study.slug}/participants/",
                               {"action": "approve", "participant": str(10**30)}, follow=True)
    assert "Select at least one participant." in r.content.decode()
    approvals = researcher_client.get(f"/research/studies/{study.slug}/approvals.csv")
    rows = list(csv.DictReader(io.StringIO(approvals.content.decode())))
    assert [row["rater"] for row in rows] == [f"P{p.pk}" for p in (p1, p2, p3)]
    assert [(row["decision"], row["excluded"]) for row in rows] == [("approved", "0"), ("approved", "0"),
                                                                    ("pending", "1")]
    assert rows[0]["completion_codes"].split() == list(
        Assignment.objects.filter(participant=p1).order_by("completed_at").values_list("completion_code", flat=True)
    )


def test_review_refuses_participants_of_another_study_and_changes_nothing(db):
    study = _rated_study(participants=1)
    other = Study.objects.create(slug="other", title="Other", dataset=study.dataset, status="open")
    stranger = services.participant_register(study=other)
    mine = study.participants.get()
    with pytest.raises(services.SurveyError, match=f"Not participants of {study.slug}: P{stranger.pk}"):
        services.participants_review(study=study, participant_ids=[mine.pk, stranger.pk], action="approve")
    mine.refresh_from_db()
    assert mine.review == Participant.Review.PENDING
    with pytest.raises(services.SurveyError, match="unknown action"):
        services.participants_review(study=study, participant_ids=[mine.pk], action="pay")


def test_rejecting_also_excludes_and_include_undoes_the_exclusion(db):
    study = _rated_study(participants=1)
    p = study.participants.get()
    services.participants_review(study=study, participant_ids=[p.pk], action="reject")
    p.refresh_from_db()
    assert (p.review, p.excluded) == ("rejected", True)
    services.participants_review(study=study, participant_ids=[p.pk], action="include")
    p.refresh_from_db()
    assert (p.review, p.excluded) == ("rejected", False)


def test_runs_leave_excluded_participants_out_and_record_them(db):
    study = _rated_study(answers=_varied)
    p1, p2, p3 = study.participants.order_by("pk")
    services.participants_review(study=study, participant_ids=[p2.pk], action="exclude")
    run = metaeval_services.run_enqueue(dataset=study.dataset, study=study, options=RunOptions(aux=["rouge_l"]),
                                       exclude_raters=[f"P{p3.pk}"])
    assert run.excluded_raters == [f"P{p3.pk}", f"P{p2.pk}"]
    run = metaeval_services.run_process(run.pk)
    services.participants_review(study=study, participant_ids=[p2.pk], action="include")
    repeated = metaeval_services.run_repeat(run)  # reproduces the run: the same raters left out
    assert repeated.excluded_raters == run.excluded_raters
    later = metaeval_services.run_enqueue(dataset=study.dataset, study=study, options=RunOptions(aux=["rouge_l"]))
    with_p2 = metaeval_services.run_process(later.pk)
    alone = metaeval_services.run_enqueue(dataset=study.dataset, study=study, options=RunOptions(aux=["rouge_l"]),
                                         exclude_raters=[f"P{p3.pk}", f"P{p2.pk}"])
    alone = metaeval_services.run_process(alone.pk)
    assert run.status == alone.status == with_p2.status == "done"
    assert run.scores == alone.scores != with_p2.scores
    assert later.excluded_raters == []


def test_the_participants_pages_need_the_researcher_role(db):
    study = _rated_study(participants=1)
    plain = Client()
    plain.force_login(User.objects.create_user("plain", password="pw-for-tests-2"))
    for url in (f"/research/studies/{study.slug}/participants/", f"/research/studies/{study.slug}/approvals.csv",
                f"/research/studies/{study.slug}/design/"):
        assert plain.get(url).status_code == 403
    p = study.participants.get()
    assert plain.post(f"/research/studies/{study.slug}/participants/",
                      {"participant": [p.pk], "action": "approve"}).status_code == 403
    p.refresh_from_db()
    assert p.review == "pending"


def test_attention_pairs_are_shown_scored_and_never_exported(researcher_client, db):
    from tests.conftest import build_study

    study = build_study(build_dataset(), slug="attentive", attention_checks=2)
    careful, careless = services.participant_register(study=study), services.participant_register(study=study)
    for participant, answer in ((careful, None), (careless, "4")):
        a = services.assignment_claim(participant=participant)
        checks = [e for e in a.presentation if "attention" in e]
        assert sorted(e["attention"] for e in checks) == ["different", "same"] and len(a.presentation) == 8
        pairs = {p.key: p for p in selectors.assignment_pairs(a)}
        assert all((pairs[e["key"]].first == pairs[e["key"]].second) == (e["attention"] == "same") for e in checks)
        own = set(a.questionnaire.document.summaries.values_list("text", flat=True))
        others = set(Summary.objects.exclude(document=a.questionnaire.document).values_list("text", flat=True))
        for e in checks:  # a text of this set's own article, with itself or with another article's text
            texts = {pairs[e["key"]].first, pairs[e["key"]].second}
            assert texts & own and (e["attention"] == "same" or texts & others)
        values = full_answers(a, 3)
        for e in checks:
            values[e["key"]] = answer or ("6" if e["attention"] == "same" else "1")
        services.ratings_submit(assignment_public_id=a.public_id, participant=participant, values=values)
        a.refresh_from_db()
        assert a.ratings.count() == 6
        assert [c["passed"] for c in a.attention] == ([True, True] if answer is None else [False, False])
    assert len(list(selectors.ratings_export_rows(study=study))) == 12
    html = researcher_client.get(f"/research/studies/{study.slug}/participants/").content.decode()
    assert "failed 2 of 2 attention pairs" in html and "2 of 2" in html


def test_attention_pairs_never_show_identical_texts_when_identical_pairs_are_hidden(db):
    from tests.conftest import build_study

    study = build_study(build_dataset(), slug="hiding", attention_checks=3, identical_pairs="omit")
    a = services.assignment_claim(participant=services.participant_register(study=study))
    assert [e["attention"] for e in a.presentation if "attention" in e] == ["different"] * 3
    assert all(p.first.split() != p.second.split() for p in selectors.assignment_pairs(a))


def test_participants_page_numbers_are_the_reports(researcher_client, db):
    """Issue 29: one number format everywhere. The mean rating and the Spearman correlation with the others are
    written as the report writes them (metaeval.core.display.fmt_number), NaN as its missing mark."""
    import re

    from metaeval.core import display
    from survey.selectors import study_participants

    study = _rated_study(answers=_varied)
    html = researcher_client.get(f"/research/studies/{study.slug}/participants/").content.decode()
    rows = study_participants(study=study)
    assert rows
    for entry in rows:
        row = html.split(f'data-rater="{entry.rater}"')[1].split("</tr>")[0]
        assert re.search(r"data-mean-rating>([^<]*)<", row).group(1) == display.fmt_number(entry.quality.mean_rating)
        assert re.search(r"data-spearman>([^<]*)<", row).group(1) == \
            display.fmt_number(entry.quality.spearman_with_others)
        assert len(display.fmt_number(entry.quality.mean_rating).split(".")[1]) == 4
