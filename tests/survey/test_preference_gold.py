"""Quality control of preference studies: gold pairs (the reader's own headline against another reader's) mixed in
and scored, position bias, and the gold threshold that excludes participants from every statistic, reversibly."""
from __future__ import annotations

import pytest
from django.test import Client

from survey import selectors, services
from survey.models import Assignment, Judgment, Participant, Study
from tests.survey.test_preference import answers, preference_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("rate", "pairs", "criteria", "expected"), [
    (0.0, 3, None, 0), (0.2, 3, None, 1), (0.5, 4, None, 2), (1.0, 3, None, 3),
    (0.5, 4, [{"name": "quality", "question": "Which reads better?"}], 0),
])
def test_how_many_gold_pairs(rate, pairs, criteria, expected):
    study = Study(gold_rate=rate, **({"criteria": criteria} if criteria else {}))
    assert services.gold_pair_count(study, pairs) == expected


def _claim(study: Study) -> tuple[Participant, Assignment]:
    participant = services.participant_register(study=study)
    return participant, services.assignment_claim(participant=participant)


def test_gold_pairs_are_mixed_in_and_look_like_the_others(client: Client):
    study = preference_study(gold_rate=0.34)
    client.post(f"/s/{study.slug}/", {"consent": "on"})
    html = client.post(f"/s/{study.slug}/start/", follow=True).content.decode()
    assignment = Assignment.objects.get()
    gold = [e for e in assignment.presentation if "gold" in e]
    real = [e for e in assignment.presentation if "pitem" in e]
    assert len(gold) == 1 and len(real) == 3
    entry = gold[0]
    q = assignment.questionnaire
    own = f"gold headline {q.document.external_id[1:]} written by reader {q.reader_j.external_id}"
    shown_own = entry["first"] if entry["answer"] == "a" else entry["second"]
    other = entry["second"] if entry["answer"] == "a" else entry["first"]
    assert shown_own == own and other != own and other.startswith(f"gold headline {q.document.external_id[1:]}")
    assert html.count("<fieldset class=\"pair choice") == 4  # the gold pair is one more pair like the others
    assert own in html and other in html
    assert 'name="' + services.choice_field(entry["key"], "quality") + '"' in html  # asked every criterion too


def test_gold_answers_are_scored_and_never_stored_as_judgments():
    study = preference_study(gold_rate=0.34)
    participant, assignment = _claim(study)
    gold = next(e for e in assignment.presentation if "gold" in e)
    wrong = "b" if gold["answer"] == "a" else "a"
    services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                              values=answers(assignment, lambda e, c: wrong if "gold" in e else "a"))
    assignment.refresh_from_db()
    assert assignment.attention == [{"kind": "gold", "criterion": "personalization", "value": wrong, "passed": False}]
    assert Judgment.objects.count() == 3 * 3  # the three real pairs only
    participant2, assignment2 = _claim(study)
    gold2 = next(e for e in assignment2.presentation if "gold" in e)
    services.judgments_submit(assignment_public_id=assignment2.public_id, participant=participant2,
                              values=answers(assignment2, lambda e, c: str(e.get("answer", "b"))))
    assignment2.refresh_from_db()
    assert assignment2.attention[0]["passed"] is True and assignment2.attention[0]["value"] == gold2["answer"]


def _researcher() -> Client:
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("gold-res", password="gold-res-pass-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def test_participants_page_flags_position_bias_and_the_gold_threshold():
    study = preference_study(gold_rate=0.34, gold_threshold=0.5, raters=2)
    people = {}
    index = {"quality": 0, "relevance": 1, "personalization": 2}
    # careful: the right gold answers, otherwise A then B then A... by criterion, flipped with the sides (at most
    # two thirds of one pair's answers pick the text shown first)
    for name, choose in (("careful", lambda e, c: str(e.get("answer", "ab"[(e.get("swap", 0) + index[c]) % 2]))),
                         ("always-first", lambda e, c: {"a": "b", "b": "a"}[e["answer"]] if "gold" in e else "a")):
        participant = services.participant_register(study=study, external_id=name)
        people[name] = participant
        while True:
            try:
                assignment = services.assignment_claim(participant=participant)
            except services.NoQuestionnaireAvailable:
                break
            services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                      values=answers(assignment, choose))
    rows = {row.participant.external_id: row for row in selectors.study_participants(study=study)}
    first = rows["always-first"]
    assert first.first_share == 1.0 and first.choices == 4 * 3 * 3
    assert any(flag.startswith("position bias: chose the text shown first in 100% of 36") for flag in first.flags)
    careful = rows["careful"]
    assert careful.attention_passed == careful.attention_total == 4
    assert not any("position bias" in f or "gold" in f for f in careful.flags)
    assert (first.attention_passed, first.attention_total) == (0, 4)  # every gold pair wrong
    assert "gold 0 of 4 right, below the study's threshold 0.5" in first.flags
    client = _researcher()
    page = client.get(f"/research/studies/{study.slug}/participants/").content.decode()
    assert "Text shown first chosen" in page and "Gold pairs right" in page and "100% of 36" in page
    assert "Exclude all below the gold threshold (1)" in page
    client.post(f"/research/studies/{study.slug}/participants/", {"action": "exclude-below-gold"})
    excluded = set(study.participants.filter(excluded=True).values_list("external_id", flat=True))
    assert excluded == {"always-first"}
    assert study.participants.get(external_id="always-first").review_note.startswith("gold share below")
    # the judgment set of the study leaves them out; including them again brings them back
    rows_out = list(selectors.judgment_export_rows(study=study, exclude_excluded=True))
    assert {r["judge"] for r in rows_out} == {selectors.rater_id(people["careful"].pk)}
    services.participants_review(study=study, participant_ids=[people["always-first"].pk], action="include")
    assert not study.participants.filter(excluded=True).exists()


def test_the_gold_exclusion_needs_a_threshold():
    study = preference_study()
    with pytest.raises(services.SurveyError, match="Set the study's gold threshold first"):
        services.participants_exclude_below_gold(study=study)


def test_a_second_gold_kind_the_readers_own_headline_against_an_unrelated_article():
    """Issue 32: gold pairs take turns between two kinds: on personalization another reader's headline of the same
    article, on relevance an unrelated article's headline (the reader's own is the more relevant); each scored on
    its own criterion. A study that asks only relevance gets only the second kind."""
    study = preference_study(slug="gold2", gold_rate=0.67)
    assert services.gold_kinds(study) == ["personalization", "relevance"]
    participant, assignment = _claim(study)
    gold = [e for e in assignment.presentation if "gold" in e]
    # one of each kind, wherever the shuffle put them
    assert sorted(e["gold"] for e in gold) == ["personalization", "relevance"]
    q = assignment.questionnaire
    own = f"gold headline {q.document.external_id[1:]} written by reader {q.reader_j.external_id}"
    unrelated = next(e for e in gold if e["gold"] == "relevance")
    shown_own = unrelated["first"] if unrelated["answer"] == "a" else unrelated["second"]
    other = unrelated["second"] if unrelated["answer"] == "a" else unrelated["first"]
    headlines = set(q.document.dataset.documents.exclude(pk=q.document_id).values_list("headline", flat=True))
    assert shown_own == own and other in headlines and other != q.document.headline
    # scored on its own criterion: right on relevance, wrong on personalization
    wrong = {"a": "b", "b": "a"}
    values = answers(assignment, lambda e, c: (str(e["answer"]) if e.get("gold") == "relevance"
                                               else wrong[str(e["answer"])]) if "gold" in e else "a")
    services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant, values=values)
    assignment.refresh_from_db()
    assert sorted((a["criterion"], a["passed"]) for a in assignment.attention) == [("personalization", False),
                                                                                  ("relevance", True)]
    only_relevance = preference_study(slug="gold-rel", gold_rate=0.34, criteria=[
        {"name": "relevance", "question": "Which fits the article better?"}])
    _participant, claimed = _claim(only_relevance)
    assert [e["gold"] for e in claimed.presentation if "gold" in e] == ["relevance"]
