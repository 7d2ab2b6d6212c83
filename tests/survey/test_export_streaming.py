"""Exports at any size: the ratings and judgment downloads (pages, API, ``manage.py export_*``) give byte for byte
what a plain reference (one ORM object at a time, written with ``csv``/``json`` as the exporter did before it
streamed) gives on the demo's studies, as a streaming response; and the number of queries of an export does not
grow with its rows. Every row ends with its participant's review (review, excluded, review_note; empty for an LLM
judge's row)."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import connection
from django.http import StreamingHttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from metaeval.core.io.fileio import spreadsheet_safe
from survey import services
from survey.models import Assignment, Document, JudgeRun, Rating, Study, System
from tests.survey.bulk_judgments import add_human_judgments, add_llm_judgments, bulk_preference_study
from tests.survey.test_sentence_preference import _answers, sentence_study

pytestmark = pytest.mark.django_db

REVIEW = ["review", "excluded", "review_note"]
JUDGMENT_COLUMNS = ["case_id", "criterion", "model_a", "model_b", "winner", "judge", "judge_kind", "run",
                    "shown_first", "doc_id", "reader_id", *REVIEW]
SENTENCE_COLUMNS = ["topic", "sentence_a", "sentence_b", "winner", "judge", "shown_first", "criterion", "judge_kind",
                    *REVIEW]
RATING_COLUMNS = ["doc_id", "system", "uid1", "uid2", "rating", "rater", "study", "questionnaire", "shown_position",
                  "swapped", "claimed_at", "completed_at", "rated_at", "automatic", *REVIEW]


# ------------------------------------------------------------------------------------ the reference, plainly


def reference_text(rows: Iterable[dict[str, object]], fmt: str, columns: list[str]) -> str:
    """The exporter's output before it streamed: csv.DictWriter with "\\n" line ends and spreadsheet-safe text
    cells, or one ``json.dumps`` a line."""
    out = io.StringIO()
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({key: spreadsheet_safe(v) if isinstance(v, str) else v for key, v in row.items()})
    else:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return out.getvalue()


def _review(participant) -> dict:
    """The review cells of a participant's rows, or of a judge run's (None): empty."""
    if participant is None:
        return {"review": "", "excluded": "", "review_note": ""}
    return {"review": participant.review, "excluded": 1 if participant.excluded else 0,
            "review_note": participant.review_note}


def _pair_row(item, criterion: str, winner: str, judge: str, judge_kind: str, run, shown_first: str,
              participant=None) -> dict:
    q = item.questionnaire
    doc_id, reader_id = q.document.external_id, q.reader_j.external_id
    return {"case_id": f"{doc_id}/{reader_id}", "criterion": criterion, "model_a": item.system_a.name,
            "model_b": item.system_b.name, "winner": winner, "judge": judge, "judge_kind": judge_kind, "run": run,
            "shown_first": shown_first, "doc_id": doc_id, "reader_id": reader_id, **_review(participant)}


def reference_judgments(study: Study, source: str = "all", exclude_excluded: bool = False) -> Iterator[dict]:
    """Participants' judgments (completed assignments by completion time, then by position on the page and the
    study's criterion order), then each judge run's (oldest first; item order, criterion order, repeat)."""
    order = {criterion["name"]: n for n, criterion in enumerate(study.criteria)}
    if source in ("all", "human"):
        assignments = Assignment.objects.filter(questionnaire__study=study, completed_at__isnull=False)
        if exclude_excluded:
            assignments = assignments.exclude(participant__excluded=True)
        for assignment in assignments.order_by("completed_at", "id"):
            judgments = sorted(assignment.judgments.order_by("shown_position", "id"),
                               key=lambda j: (j.shown_position, order.get(j.criterion, len(order))))
            for j in judgments:
                yield _pair_row(j.item, j.criterion, j.winner, f"P{assignment.participant_id}", "human", "",
                                j.shown_first, assignment.participant)
    if source in ("all", "llm"):
        for run in JudgeRun.objects.filter(study=study).order_by("created_at", "id"):
            items = sorted({j.item for j in run.judgments.all()},
                           key=lambda i: (i.questionnaire.position, i.questionnaire_id, i.position))
            for item in items:
                judgments = sorted(run.judgments.filter(item=item),
                                   key=lambda j: (order.get(j.criterion, len(order)), j.criterion, j.run))
                for j in judgments:
                    yield _pair_row(item, j.criterion, j.winner, run.name, "llm", j.run, j.shown_first)


def reference_sentence_judgments(study: Study) -> Iterator[dict]:
    side = {"model_a": "a", "model_b": "b"}
    for assignment in Assignment.objects.filter(questionnaire__study=study,
                                                completed_at__isnull=False).order_by("completed_at", "id"):
        for j in assignment.judgments.order_by("shown_position", "id"):
            yield {"topic": j.item.questionnaire.document.external_id, "sentence_a": j.item.sentence_a.position,
                   "sentence_b": j.item.sentence_b.position, "winner": side.get(j.winner, j.winner),
                   "judge": f"P{assignment.participant_id}", "shown_first": side[j.shown_first],
                   "criterion": j.criterion, "judge_kind": "human", **_review(assignment.participant)}


def reference_ratings(study: Study) -> Iterator[dict]:
    ratings = Rating.objects.filter(assignment__questionnaire__study=study, assignment__completed_at__isnull=False)
    for r in ratings.order_by("assignment__questionnaire__position", "assignment__slot", "assignment_id",
                              "item__position"):
        a, q = r.assignment, r.assignment.questionnaire
        yield {"doc_id": q.document.external_id, "system": r.item.system.name, "uid1": q.reader_j.external_id,
               "uid2": q.reader_k.external_id, "rating": r.value, "rater": f"P{a.participant_id}",
               "study": q.study.slug, "questionnaire": q.position, "shown_position": r.shown_position,
               "swapped": int(r.swapped), "claimed_at": a.claimed_at.isoformat(),
               "completed_at": a.completed_at.isoformat() if a.completed_at else "",
               "rated_at": r.created_at.isoformat(), "automatic": int(r.automatic), **_review(a.participant)}


# ---------------------------------------------------------------------------------------------- fixtures


def _researcher() -> User:
    user = User.objects.create_user("exporter", password="exporter-pass-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    return user


@pytest.fixture
def page_client(db) -> Client:
    client = Client()
    client.force_login(User.objects.filter(username="exporter").first() or _researcher())
    return client


@pytest.fixture
def api_client(db) -> APIClient:
    client = APIClient()
    user = User.objects.filter(username="exporter").first() or _researcher()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def awkward_demo(demo_loaded):
    """The demo with cells a spreadsheet would run or a CSV must quote: a formula as a judge's name and a system's
    name, a document id with a comma, quotes and accents; one participant rejected (so excluded) with a note that
    starts like a formula and needs quoting, another approved."""
    ab = Study.objects.get(slug="demo-ab")
    JudgeRun.objects.filter(study=ab).update(name='=HYPERLINK("http://evil.example","x")')
    item = ab.questionnaires.first().preference_items.first()
    System.objects.filter(pk=item.system_a_id).update(name="+SUM(A1) système")
    Document.objects.filter(pk=ab.questionnaires.first().document_id).update(external_id='N,1 "é"')
    first, second = ab.participants.order_by("pk")[:2]
    services.participants_review(study=ab, participant_ids=[first.pk], action="reject",
                                 note='=careless, "fast" é')
    services.participants_review(study=ab, participant_ids=[second.pk], action="approve")
    return ab


def _body(response) -> str:
    assert response.status_code == 200, response.content[:500]
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode("utf-8")


# -------------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_judgment_downloads_are_the_reference_to_the_byte(awkward_demo, page_client, api_client, fmt, tmp_path):
    study = awkward_demo
    for source in ("all", "human", "llm"):
        expected = reference_text(reference_judgments(study, source), fmt, JUDGMENT_COLUMNS)
        assert expected.count("\n") >= {"all": 590, "human": 160, "llm": 430}[source]  # the demo's 162 and 432
        page = page_client.get(f"/research/studies/{study.slug}/judgments.{fmt}?source={source}")
        assert page["Content-Type"].startswith("text/csv" if fmt == "csv" else "application/x-ndjson")
        assert _body(page) == expected
        assert _body(api_client.get(f"/api/studies/{study.slug}/judgments/?as={fmt}&source={source}")) == expected
        out = tmp_path / f"{source}.{fmt}"
        call_command("export_judgments", "--study", study.slug, "--format", fmt, "--source", source,
                     "--out", str(out), stderr=io.StringIO())
        assert out.read_text(encoding="utf-8") == expected
    assert "'=HYPERLINK" in reference_text(reference_judgments(study, "llm"), "csv", JUDGMENT_COLUMNS)
    human = reference_text(reference_judgments(study, "human"), "csv", JUDGMENT_COLUMNS)
    assert ',rejected,1,"\'=careless, ""fast"" é"\n' in human and ",approved,0,\n" in human
    assert reference_text(reference_judgments(study, "llm"), "csv", JUDGMENT_COLUMNS).endswith(",,,\n")
    stdout = io.StringIO()
    call_command("export_judgments", "--study", study.slug, "--format", fmt, "--without-excluded", stdout=stdout,
                 stderr=io.StringIO())
    assert stdout.getvalue() == reference_text(reference_judgments(study, "all", exclude_excluded=True), fmt,
                                               JUDGMENT_COLUMNS)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_rating_downloads_are_the_reference_to_the_byte(demo_loaded, page_client, api_client, fmt):
    study = Study.objects.get(slug="demo")
    first, second = study.participants.order_by("pk")[:2]
    services.participants_review(study=study, participant_ids=[first.pk], action="reject", note="-straight-lined")
    services.participants_review(study=study, participant_ids=[second.pk], action="exclude")
    expected = reference_text(reference_ratings(study), fmt, RATING_COLUMNS)
    assert expected.count("\n") > 1000
    if fmt == "csv":
        assert f",P{first.pk},demo," in expected and ",rejected,1,'-straight-lined\n" in expected
        assert ",pending,1,\n" in expected and ",pending,0,\n" in expected
    assert _body(page_client.get(f"/research/studies/{study.slug}/ratings.{fmt}")) == expected
    assert _body(api_client.get(f"/api/studies/{study.slug}/ratings/?as={fmt}")) == expected
    stdout = io.StringIO()
    call_command("export_ratings", "--study", study.slug, "--format", fmt, stdout=stdout, stderr=io.StringIO())
    assert stdout.getvalue() == expected


def test_a_sentence_study_download_is_the_reference_to_the_byte(tmp_path, page_client):
    study = sentence_study(tmp_path, raters=2)
    for _ in range(2):
        participant = services.participant_register(study=study)
        while True:
            try:
                assignment = services.assignment_claim(participant=participant)
            except services.NoQuestionnaireAvailable:
                break
            services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                      values=_answers(assignment))
    for fmt in ("csv", "jsonl"):
        expected = reference_text(reference_sentence_judgments(study), fmt, SENTENCE_COLUMNS)
        assert expected.count("\n") > 20
        assert _body(page_client.get(f"/research/studies/{study.slug}/judgments.{fmt}")) == expected


def _export_queries(client: Client, url: str) -> tuple[int, int]:
    """(queries, body lines) of streaming ``url`` to its end."""
    with CaptureQueriesContext(connection) as queries:
        lines = _body(client.get(url)).count("\n")
    return len(queries.captured_queries), lines


def test_the_queries_of_an_export_do_not_grow_with_its_rows(page_client, api_client):
    """10 judgments and 1,000 (participants' and judges') cost the same number of queries, on the page and the
    API; so do their ratings."""
    small, large = bulk_preference_study("small"), bulk_preference_study("large")
    add_human_judgments(small, 10)
    add_llm_judgments(small, 10)
    add_human_judgments(large, 1000)
    add_llm_judgments(large, 1000)
    for source in ("human", "llm", "all"):
        counted = {}
        for study, rows in ((small, 10), (large, 1000)):
            expected_lines = (rows if source != "all" else 2 * rows) + 1
            page = _export_queries(page_client, f"/research/studies/{study.slug}/judgments.csv?source={source}")
            api = _export_queries(api_client, f"/api/studies/{study.slug}/judgments/?source={source}")
            assert page[1] == api[1] == expected_lines
            counted[rows] = (page[0], api[0])
        assert counted[10] == counted[1000], (source, counted)
