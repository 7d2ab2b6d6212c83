"""LLM judges of a sentence preference study (issue 32): the pairs as judge cases, Zopf's question as the default
prompt, a run against a local stub, and the judges' rows in the Zopf judgment file that ``python -m metaeval zopf``
reads."""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout

import pytest

from metaeval.cli import main
from metaeval.core.judges.prompts import SENTENCE_CRITERION, SENTENCE_TEMPLATES, templates_sha256
from survey import exporting, judge_runs, selectors
from survey.models import SENTENCE_CRITERION as STUDY_SENTENCE_CRITERION
from survey.models import JudgeRun, PreferenceItem
from tests.metaeval.core.judges.stub_server import Stub
from tests.survey.test_judge_runs import run_settings, stub_endpoint
from tests.survey.test_sentence_preference import sentence_study, topics_file

pytestmark = pytest.mark.django_db


class LaterSentenceStub(Stub):
    """Prefers the sentence with the higher index (``sentence N`` in its text)."""

    @staticmethod
    def default_answer(payload: dict) -> str:
        shown = re.search(r"Text A:\n.*?sentence (\d).*?Text B:\n.*?sentence (\d)", payload["messages"][-1]["content"],
                          re.S)
        assert shown is not None
        first, second = int(shown.group(1)), int(shown.group(2))
        return "A" if first > second else "B"


@pytest.fixture
def stub() -> Iterator[LaterSentenceStub]:
    server = LaterSentenceStub()
    yield server
    server.close()


def test_the_core_criterion_is_the_studys():
    assert SENTENCE_CRITERION == STUDY_SENTENCE_CRITERION["name"] and set(SENTENCE_TEMPLATES) == {SENTENCE_CRITERION}


def test_the_pairs_are_judge_cases(tmp_path):
    study = sentence_study(tmp_path)
    cases = selectors.study_judge_cases(study=study)
    items = PreferenceItem.objects.filter(questionnaire__study=study).select_related(
        "sentence_a", "sentence_b", "questionnaire__document")
    assert len(cases) == items.count() == 16
    by_item = {item.pk: item for item in items}
    for item_id, case in cases:
        item = by_item[item_id]
        assert case.case_id == item.questionnaire.document.external_id
        assert (case.model_a, case.model_b) == (f"s{item.sentence_a.position}", f"s{item.sentence_b.position}")
        assert (case.text_a, case.text_b) == (item.sentence_a.text, item.sentence_b.text)
        assert case.context.startswith(f"{case.case_id}\n\n") and item.sentence_a.text in case.context


def test_a_run_asks_zopfs_question_and_its_rows_feed_zopf(tmp_path, stub, django_capture_on_commit_callbacks):
    study = sentence_study(tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_runs.judge_run_create(study=study, endpoint=stub_endpoint(stub).name, settings=run_settings(),
                                          runs=2)
    run.refresh_from_db()
    assert (run.status, run.criteria, run.total, run.done) == (JudgeRun.Status.DONE, ["importance"], 32, 32)
    assert run.templates_sha256 == templates_sha256(SENTENCE_TEMPLATES)
    prompt = stub.requests[0]["json"]["messages"][-1]["content"]
    assert "Criterion: importance to the topic" in prompt and "Topic:\nt" in prompt
    rows, columns = selectors.study_judgment_file(study=study, source="llm")
    out = io.StringIO()
    count = exporting.write_judgments(rows, out, "csv", columns)
    assert count == 32
    parsed = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert {(row["judge"], row["judge_kind"], row["criterion"]) for row in parsed} == {
        ("stub-judge", "llm", "importance")}
    # the later sentence wins every time, whichever was shown first; half the runs show each first
    assert all(row["winner"] == "b" for row in parsed)  # sentence_b is the higher index
    assert sorted(row["shown_first"] for row in parsed).count("a") == 16
    path = tmp_path / "llm.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = main(["zopf", str(topics_file(tmp_path)), "--judgments", str(path)])
    assert code == 0, stderr.getvalue()
    # the participants' file alone has no LLM row
    human, _ = selectors.study_judgment_file(study=study, source="human")
    assert list(human) == []
