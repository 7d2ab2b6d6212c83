"""Sentence preference (Zopf) studies: topics imported with their sentences, seeded distinct sentence pairs per
topic, the blind A/B page for sentences, forced choice, and the Zopf judgment file that ``python -m metaeval zopf``
reads."""
from __future__ import annotations

import io
import json
import math
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from metaeval.cli import main
from metaeval.core.pairwise.zopf_files import load_judgments, load_topics
from survey import exporting, selectors, services
from survey.models import (
    SENTENCE_CRITERION,
    Assignment,
    Dataset,
    Document,
    Judgment,
    PreferenceItem,
    Study,
    TopicSentence,
)

pytestmark = pytest.mark.django_db

TOPICS = [
    {"topic": "t1", "sentences": [f"Topic one sentence {i} with fact {i}." for i in range(6)]},
    {"topic": "t2", "sentences": [f"Topic two sentence {i} about event {i}." for i in range(4)]},
]


def topics_file(tmp_path: Path, topics=TOPICS, name="topics.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(t) + "\n" for t in topics), encoding="utf-8")
    return path


def sentence_study(tmp_path: Path, *, slug="zopf", per_topic=10, per_q=4, raters=1, **fields) -> Study:
    call_command("import_topics", str(topics_file(tmp_path)), dataset="zopf-data", stdout=io.StringIO())
    study = Study.objects.create(slug=slug, title=f"Study {slug}", dataset=Dataset.objects.get(name="zopf-data"),
                                 kind=Study.Kind.SENTENCE_PREFERENCE, pairs_per_topic=per_topic,
                                 pairs_per_questionnaire=per_q, raters_per_questionnaire=raters, seed=3, **fields)
    services.questionnaires_generate(study=study)
    services.study_open(study=study)
    return study


def test_import_topics_is_all_or_nothing_and_idempotent(tmp_path):
    out = io.StringIO()
    call_command("import_topics", str(topics_file(tmp_path)), dataset="zopf-data", stdout=out)
    assert "2 topics imported (10 sentences), 0 already there" in out.getvalue()
    t1 = Document.objects.get(external_id="t1")
    assert t1.topic == "t1" and list(t1.sentences.values_list("position", flat=True)) == list(range(6))
    assert t1.body.splitlines() == TOPICS[0]["sentences"]
    out = io.StringIO()
    call_command("import_topics", str(topics_file(tmp_path)), dataset="zopf-data", stdout=out)
    assert "0 topics imported (0 sentences), 2 already there unchanged" in out.getvalue()
    changed = [TOPICS[0], {"topic": "t2", "sentences": ["Another.", "Sentence."]},
               {"topic": "t3", "sentences": ["Alone."]}]
    with pytest.raises(CommandError) as error:
        call_command("import_topics", str(topics_file(tmp_path, changed, "changed.jsonl")), dataset="zopf-data")
    message = str(error.value)
    assert 'changed.jsonl:3: field "sentences": topic "t3" has 1 sentence(s)' in message
    assert 'changed.jsonl:2: field "topic": "t2" is already in dataset zopf-data with other sentences' in message
    assert TopicSentence.objects.count() == 10 and not Document.objects.filter(external_id="t3").exists()


def test_generation_draws_distinct_seeded_pairs_per_topic(tmp_path):
    study = sentence_study(tmp_path, per_topic=10, per_q=4)
    assert study.criteria == [SENTENCE_CRITERION]
    items = PreferenceItem.objects.filter(questionnaire__study=study).select_related(
        "sentence_a", "sentence_b", "questionnaire__document")
    per_topic: dict[str, list[tuple[int, int]]] = {}
    for item in items:
        assert item.sentence_a.document_id == item.sentence_b.document_id == item.questionnaire.document_id
        assert item.system_a is None and item.summary_a is None
        per_topic.setdefault(item.questionnaire.document.external_id, []).append(
            (item.sentence_a.position, item.sentence_b.position))
    assert len(per_topic["t1"]) == 10 and len(per_topic["t2"]) == math.comb(4, 2)  # all 6 pairs of t2
    for pairs in per_topic.values():
        assert len(set(pairs)) == len(pairs) and all(a < b for a, b in pairs)
    sizes = sorted(q.preference_items.count() for q in study.questionnaires.all())
    assert sizes == [2, 2, 4, 4, 4] and all(q.reader_j_id is None for q in study.questionnaires.all())
    # the same seed gives the same pairs
    again = Study.objects.create(slug="again", title="again", dataset=study.dataset, seed=3, pairs_per_topic=10,
                                 pairs_per_questionnaire=4, kind=Study.Kind.SENTENCE_PREFERENCE)
    services.questionnaires_generate(study=again)
    first = [(i.sentence_a_id, i.sentence_b_id) for i in items.order_by("questionnaire__position", "position")]
    second = [(i.sentence_a_id, i.sentence_b_id) for i in PreferenceItem.objects.filter(
        questionnaire__study=again).order_by("questionnaire__position", "position")]
    assert first == second


def test_generation_without_topics_is_a_clear_error(dataset):
    study = Study.objects.create(slug="none", title="none", dataset=dataset, kind=Study.Kind.SENTENCE_PREFERENCE)
    with pytest.raises(services.SurveyError, match="no topic with two sentences: import topics first"):
        services.questionnaires_generate(study=study)


def test_a_participant_answers_sentence_pairs_and_the_export_feeds_zopf(tmp_path, client: Client):
    study = sentence_study(tmp_path, allow_tie=True)  # a sentence preference is a forced choice all the same
    client.post(f"/s/{study.slug}/", {"consent": "on"})
    response = client.post(f"/s/{study.slug}/start/", follow=True)
    html = response.content.decode()
    assert response.status_code == 200 and "Which sentence is more important?" in html
    assert "Sentence A" in html and "Text A" not in html and 'value="tie"' not in html
    assert 'id="article"' not in html and "model_a" not in html and "pitem" not in html
    assert SENTENCE_CRITERION["question"] in html
    assignment = Assignment.objects.get()
    fields = {services.choice_field(e["key"], "importance"): "a" for e in assignment.presentation}
    tie = {**fields, next(iter(fields)): "tie"}
    refused = client.post(f"/q/{assignment.public_id}/", tie)
    assert refused.status_code == 400 and not Judgment.objects.exists()
    done = client.post(f"/q/{assignment.public_id}/", fields)
    assert done.status_code == 302 and Judgment.objects.filter(assignment=assignment).count() == len(fields)
    # "a" = the sentence shown first: the stored winner follows the sides this participant saw
    for judgment in Judgment.objects.filter(assignment=assignment):
        assert judgment.winner == judgment.shown_first
    out = io.StringIO()
    rows, columns = selectors.study_judgment_file(study=study)
    count = exporting.write_judgments(rows, out, "csv", columns)
    assert count == len(fields) and out.getvalue().splitlines()[0] == ",".join(selectors.SENTENCE_JUDGMENT_COLUMNS)
    path = tmp_path / "judgments.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    topics = load_topics(topics_file(tmp_path))
    loaded = load_judgments(path, topics)
    shown = {(row.item.questionnaire.document.external_id, row.item.sentence_a.position,
              row.item.sentence_b.position): row.shown_first
             for row in Judgment.objects.select_related("item__sentence_a", "item__sentence_b",
                                                        "item__questionnaire__document")}
    for judgment in loaded:  # the sentence shown first won each time
        pair = (judgment.topic, min(judgment.winner, judgment.loser), max(judgment.winner, judgment.loser))
        assert (judgment.winner == pair[1]) == (shown[pair] == "model_a")
    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = main(["zopf", str(topics_file(tmp_path)), "--judgments", str(path)])
    assert code == 0, stderr.getvalue()
    assert sum(topic["judgments"] for topic in json.loads(stdout.getvalue())["topics"]) == count


def test_the_study_and_design_pages_and_downloads(tmp_path, client: Client, django_user_model):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user("zopf-res", password="zopf-res-pass-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client.force_login(user)
    researcher_client = client
    study = sentence_study(tmp_path)
    page = researcher_client.get(f"/research/studies/{study.slug}/").content.decode()
    assert "sentence preference study: 10 sentence pairs per topic" in page and "Answers per topic" in page
    design = researcher_client.get(f"/research/studies/{study.slug}/design/").content.decode()
    assert 'data-design="cases">2<' in design and 'data-design="pairs">16<' in design
    download = researcher_client.get(f"/research/studies/{study.slug}/judgments.csv")
    assert download.status_code == 200
    assert download.getvalue().decode().splitlines() == [",".join(selectors.SENTENCE_JUDGMENT_COLUMNS)]
    judges = researcher_client.get(f"/research/studies/{study.slug}/judges/")  # LLM judges answer Zopf's question
    assert judges.status_code == 200 and "which sentence matters more to the topic" in judges.content.decode()


def solo_study(tmp_path: Path, slug: str) -> Study:
    """One topic of three sentences: three pairs in one questionnaire with one slot."""
    topics = [{"topic": "solo", "sentences": ["First fact.", "Second fact.", "Third fact."]}]
    call_command("import_topics", str(topics_file(tmp_path, topics)), dataset="solo-data", stdout=io.StringIO())
    study = Study.objects.create(slug=slug, title=slug, dataset=Dataset.objects.get(name="solo-data"),
                                 kind=Study.Kind.SENTENCE_PREFERENCE, pairs_per_questionnaire=3,
                                 raters_per_questionnaire=1)
    services.questionnaires_generate(study=study)
    services.study_open(study=study)
    return study


def _answers(assignment: Assignment) -> dict[str, str]:
    return {services.choice_field(e["key"], "importance"): "b" for e in assignment.presentation}


@pytest.mark.django_db(transaction=True)
def test_simultaneous_claims_and_double_submits_of_a_sentence_study(tmp_path):
    import threading
    from collections import Counter

    from django.db import connections

    from tests.survey.test_concurrency import run_in_threads

    study = solo_study(tmp_path, "zconc")
    assert study.questionnaires.count() == 1  # 3 pairs, one questionnaire, one slot, for 10 people at once
    participants = [services.participant_register(study=study) for _ in range(10)]
    outcome: Counter[str] = Counter()
    lock = threading.Lock()

    def claim_and_submit(participant) -> None:
        try:
            a = services.assignment_claim(participant=participant)
        except services.NoQuestionnaireAvailable:
            with lock:
                outcome["refused"] += 1
            return
        values = _answers(a)
        results = run_in_threads(lambda: services.judgments_submit(
            assignment_public_id=a.public_id, participant=participant, values=values), [(), ()])
        with lock:
            outcome["done"] += 1
            outcome["submit errors"] += len(results)

    errors = run_in_threads(claim_and_submit, [(p,) for p in participants])
    connections.close_all()
    assert errors == []
    assert outcome["done"] == 1 and outcome["refused"] == 9
    assert Judgment.objects.count() == 3  # the double submit stored one set


def test_expiry_holds_for_sentence_answers(tmp_path):
    from datetime import timedelta

    from django.utils import timezone

    study = solo_study(tmp_path, "zlate")
    now = timezone.now()
    first = services.participant_register(study=study)
    late = services.assignment_claim(participant=first, now=now)
    after = now + timedelta(minutes=study.assignment_timeout_minutes + 1)
    second = services.participant_register(study=study)
    taken = services.assignment_claim(participant=second, now=after)
    assert taken.questionnaire_id == late.questionnaire_id  # the expired slot went to someone else
    with pytest.raises(services.AssignmentExpired):
        services.judgments_submit(assignment_public_id=late.public_id, participant=first, values=_answers(late),
                                  now=after)
    assert not Judgment.objects.filter(assignment=late).exists()
