"""LLM judge runs of a preference study (survey.judge_runs): a run against a local OpenAI-compatible stub stores R x
criteria judgments per item with balanced orders, its export scores with ``python -m metaeval pairwise``; resume,
cancel, reclaim, failures, and the file judge's import."""
from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from datetime import timedelta

import pytest
from django.utils import timezone

from metaeval.cli import main
from metaeval.core.io.fileio import ImportFileError
from metaeval.core.pairwise.judgments import parse_judgments
from survey import judge_runs, selectors
from survey.models import JudgeEndpoint, JudgeJudgment, JudgeRun, PreferenceItem, Study, Summary
from tests.metaeval.core.judges.stub_server import Stub
from tests.survey.test_preference import SYSTEMS, preference_study

pytestmark = pytest.mark.django_db
#: the stub prefers the text with the higher rank: SysnameA > SysnameB > SysnameC
RANK = {"SysnameA": 3, "SysnameB": 2, "SysnameC": 1}


class RankStub(Stub):
    @staticmethod
    def default_answer(payload: dict) -> str:
        first, second = (int(n) for n in re.findall(r"rank(\d)", payload["messages"][-1]["content"])[:2])
        return "A" if first > second else "B"


@pytest.fixture
def stub() -> Iterator[RankStub]:
    server = RankStub()
    yield server
    server.close()


def ranked_study(slug: str = "pref", **fields) -> Study:
    study = preference_study(slug=slug, **fields)
    for summary in Summary.objects.filter(document__dataset=study.dataset, system__name__in=SYSTEMS).select_related(
            "system"):
        summary.text = f"{summary.text} rank{RANK[summary.system.name]}"
        summary.save(update_fields=["text"])
    return study


def stub_endpoint(stub: Stub, name: str = "stub", **fields) -> JudgeEndpoint:
    """The operator's endpoint for the stub (on 127.0.0.1, so private addresses are allowed), made once."""
    defaults = {"kind": "openai", "base_url": stub.url, "model_choices": "stub-judge", "allow_private": True,
                **fields}
    endpoint, created = JudgeEndpoint.objects.get_or_create(name=name, defaults=defaults)
    if not created and fields:
        JudgeEndpoint.objects.filter(pk=endpoint.pk).update(**fields)
        endpoint.refresh_from_db()
    return endpoint


def run_settings(**extra) -> dict:
    """A researcher's settings for the stub: no waiting between retries, a short timeout."""
    return {"retries": 0, "backoff": 0, "timeout": 5, **extra}


def create(study: Study, stub: Stub, django_capture_on_commit_callbacks, **options) -> JudgeRun:
    settings = options.pop("settings", None) or run_settings()
    endpoint = options.pop("endpoint", None) or stub_endpoint(stub).name
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_runs.judge_run_create(study=study, endpoint=endpoint, settings=settings, **options)
    run.refresh_from_db()
    return run


def export_csv(study: Study, source: str = "all") -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=selectors.JUDGMENT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(selectors.judgment_export_rows(study=study, source=source))
    return out.getvalue()


def test_a_run_against_the_stub_is_balanced_and_its_export_scores(stub, django_capture_on_commit_callbacks,
                                                                   tmp_path):
    study = ranked_study()
    run = create(study, stub, django_capture_on_commit_callbacks, runs=4)
    items = PreferenceItem.objects.filter(questionnaire__study=study).select_related("system_a", "system_b")
    criteria = [c["name"] for c in study.criteria]
    assert run.status == JudgeRun.Status.DONE and run.error == ""
    assert run.total == run.done == items.count() * len(criteria) * 4 == len(stub.requests)
    stored = JudgeJudgment.objects.filter(judge_run=run)
    per_cell = Counter((j.item_id, j.criterion) for j in stored)
    assert set(per_cell.values()) == {4} and len(per_cell) == items.count() * len(criteria)
    shown = Counter((j.item_id, j.criterion, j.shown_first) for j in stored)
    assert set(shown.values()) == {2}  # half of the runs show each system first
    better = {item.pk: "model_a" if RANK[item.system_a.name] > RANK[item.system_b.name] else "model_b"
              for item in items}
    assert all(j.winner == better[j.item_id] for j in stored)
    assert all(j.raw in ("A", "B") and j.seconds is not None for j in stored)
    assert stub.requests[0]["json"]["model"] == "stub-judge"
    # the export: the llm rows only, as a judgment file the pairwise command reads unchanged
    text = export_csv(study, source="llm")
    table = parse_judgments(text, "judgments.csv", json_lines=False)
    assert len(table.judgments) == run.total and {j.judge_kind for j in table.judgments} == {"llm"}
    assert {j.judge for j in table.judgments} == {"stub-judge"} and {j.run for j in table.judgments} == {1, 2, 3, 4}
    path = tmp_path / "judgments.csv"
    path.write_text(text, encoding="utf-8")
    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = main(["pairwise", str(path), "--format", "json", "--n-boot", "20", "--seed", "1"])
    assert code == 0, stderr.getvalue()
    report = json.loads(stdout.getvalue())
    assert report["judgments"]["read"] == run.total and report["judgments"]["invalid"] == 0
    for criterion in criteria:  # the stub's order, on every criterion
        assert [row["system"] for row in report["rows"] if row["criterion"] == criterion] == SYSTEMS
    # a human-only export of the same study holds no llm row
    assert "llm" not in export_csv(study, source="human")


def test_resume_asks_only_what_is_not_stored(stub, django_capture_on_commit_callbacks):
    study = ranked_study()
    run = create(study, stub, django_capture_on_commit_callbacks, runs=2, criteria=["quality"])
    asked = len(stub.requests)
    gone = list(JudgeJudgment.objects.filter(judge_run=run).order_by("id").values_list("pk", flat=True)[:5])
    JudgeJudgment.objects.filter(pk__in=gone).delete()
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.FAILED)
    run.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        judge_runs.judge_run_resume(run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and run.done == run.total
    assert len(stub.requests) == asked + 5
    assert JudgeJudgment.objects.filter(judge_run=run).count() == run.total
    with pytest.raises(judge_runs.JudgeRunError, match="only a failed or cancelled run can resume"):
        judge_runs.judge_run_resume(run)


def test_retries_after_429_and_500_and_keeps_malformed_replies_as_invalid(stub, django_capture_on_commit_callbacks):
    study = ranked_study()
    stub.script.extend([("status", 429, {"Retry-After": "0"}, "slow down"), ("default",),
                        ("status", 500, {}, "oops"), ("status", 503, {}, "down"),
                        ("raw", "this is not json"), ("default",)])
    settings = run_settings(retries=1, concurrency=1)
    run = create(study, stub, django_capture_on_commit_callbacks, runs=2, criteria=["quality"], settings=settings)
    assert run.status == JudgeRun.Status.DONE
    stored = list(JudgeJudgment.objects.filter(judge_run=run).order_by("id"))
    assert stored[0].winner != "invalid" and stored[0].error == ""  # 429, then answered on the retry
    assert stored[1].winner == "invalid" and stored[1].error == "2 attempts failed; last: HTTP 503: down"
    assert stored[2].winner != "invalid"  # a reply that is not JSON, then answered on the retry
    assert sum(j.winner == "invalid" for j in stored) == 1 and len(stored) == run.total


def test_an_answer_that_is_not_a_or_b_is_invalid_with_its_text(stub, django_capture_on_commit_callbacks):
    study = ranked_study()
    stub.script.append(("answer", "Both are lovely."))
    run = create(study, stub, django_capture_on_commit_callbacks, runs=2, criteria=["quality"],
                 settings=run_settings(concurrency=1))
    first = JudgeJudgment.objects.filter(judge_run=run).order_by("id").first()
    assert first is not None and first.winner == "invalid" and first.raw == "Both are lovely." and not first.error
    rows = [row for row in selectors.judgment_export_rows(study=study, source="llm") if row["winner"] == "invalid"]
    assert len(rows) == 1


def test_a_missing_api_key_variable_fails_the_run_saying_how_to_set_it(stub, django_capture_on_commit_callbacks,
                                                                       monkeypatch):
    monkeypatch.delenv("JUDGE_TEST_API_KEY", raising=False)
    study = ranked_study()
    keyed = stub_endpoint(stub, name="keyed", api_key_env="JUDGE_TEST_API_KEY")
    run = create(study, stub, django_capture_on_commit_callbacks, runs=2, endpoint=keyed.name)
    assert run.status == JudgeRun.Status.FAILED and "JUDGE_TEST_API_KEY is not set" in run.error
    assert not stub.requests and not JudgeJudgment.objects.exists()
    monkeypatch.setenv("JUDGE_TEST_API_KEY", "sk-test-123")
    with django_capture_on_commit_callbacks(execute=True):
        judge_runs.judge_run_resume(run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE
    assert stub.requests[0]["headers"]["Authorization"] == "Bearer sk-test-123"
    assert "sk-test-123" not in json.dumps(run.judge_settings)


def test_every_call_failing_fails_the_run(stub, django_capture_on_commit_callbacks):
    study = ranked_study()
    stub.script.extend([("status", 401, {}, "no")] * 200)
    run = create(study, stub, django_capture_on_commit_callbacks, runs=2, criteria=["quality"])
    assert run.status == JudgeRun.Status.FAILED and "every one of the" in run.error
    assert JudgeJudgment.objects.filter(judge_run=run, winner="invalid").count() == run.total


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"runs": 3}, "runs must be an even number"),
        ({"criteria": ["fluency"]}, "fluency not asked by study"),
        ({"settings": {"base_url": "http://x"}}, "base_url: set by the operator on the judge endpoint"),
        ({"settings": {"api_key_env": "SECRET_KEY"}}, "api_key_env: set by the operator on the judge endpoint"),
        ({"settings": {"model_path": "/etc"}}, "model_path: set by the operator on the judge endpoint"),
        ({"settings": {"temperature": "hot"}}, "temperature: expected float"),
        ({"settings": {"model": "gpt-9"}}, "model: 'gpt-9' is not offered by endpoint stub (it offers stub-judge)"),
        ({"settings": {"concurrency": 9}}, "concurrency: at most 4 for endpoint stub"),
        ({"settings": {"name": "x" * 300}}, "name: at most 200 characters, not 300"),
        ({"settings": {"name": "a\x00b"}}, "name: must not contain NUL characters"),
        ({"settings": {"seed": 2**70}}, "seed: must be at most 2147483647"),
        ({"settings": {"timeout": 1e9}}, "timeout: must be at most 600"),
        ({"endpoint": "nope"}, "endpoint: no enabled judge endpoint 'nope'; choose one of: stub"),
        ({"kind": "transformers"}, "kind: endpoint stub is of kind openai, not transformers"),
        ({"templates": {"quality": {"system": "", "user": "{first} {stars}"}}, "criteria": ["quality"]},
         "stars"),
        ({"templates": {"quality": {"system": "", "user": "{first} {second}"}}}, "relevance"),
    ],
)
def test_bad_run_settings_are_refused_and_nothing_is_stored(options, message, stub):
    study = ranked_study()
    settings = options.pop("settings", run_settings())
    endpoint = options.pop("endpoint", stub_endpoint(stub).name)
    with pytest.raises(judge_runs.JudgeRunError, match=re.escape(message)):
        judge_runs.judge_run_create(study=study, endpoint=endpoint, settings=settings, launch=False, **options)
    assert not JudgeRun.objects.exists() and not stub.requests


def test_only_preference_and_sentence_studies_with_questionnaires_have_judges(stub):
    from tests.conftest import build_dataset, build_study

    similarity = build_study(build_dataset(name="sim"), slug="sim")
    with pytest.raises(judge_runs.JudgeRunError, match="judges answer preference and sentence preference studies"):
        judge_runs.judge_run_create(study=similarity, endpoint=stub_endpoint(stub).name, launch=False)


def test_cancel_and_reclaim(stub, django_capture_on_commit_callbacks):
    study = ranked_study()
    endpoint = stub_endpoint(stub).name
    queued = judge_runs.judge_run_create(study=study, endpoint=endpoint, settings=run_settings(), runs=2,
                                         launch=False)
    assert judge_runs.judge_run_cancel(queued).status == JudgeRun.Status.CANCELLED
    # a run whose worker vanished: requeued and finished by a new worker, keeping what was stored
    lost = judge_runs.judge_run_create(study=study, endpoint=endpoint, settings=run_settings(), runs=2,
                                       criteria=["quality"], launch=False)
    item = PreferenceItem.objects.filter(questionnaire__study=study).first()
    JudgeJudgment.objects.create(judge_run=lost, item=item, criterion="quality", run=1, winner="model_a",
                                 shown_first="model_a")
    JudgeRun.objects.filter(pk=lost.pk).update(status=JudgeRun.Status.RUNNING, worker="gone:1", attempts=1,
                                               lease_expires_at=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        outcome = judge_runs.judge_runs_reclaim_stale()
    lost.refresh_from_db()
    assert outcome["retried"] == [lost.pk] and lost.status == JudgeRun.Status.DONE and lost.attempts == 2
    assert len(stub.requests) == lost.total - 1
    # one that used every attempt fails, saying why
    JudgeRun.objects.filter(pk=lost.pk).update(status=JudgeRun.Status.RUNNING, attempts=3,
                                               lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert judge_runs.judge_runs_reclaim_stale()["failed"] == [lost.pk]
    lost.refresh_from_db()
    assert "tried 3 times" in lost.error


def cli_file(study: Study, *, swap: bool = False, judge: str = "gpt-x", extra: str = "") -> bytes:
    lines = ["case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,shown_first"]
    for _item_id, case in selectors.study_judge_cases(study=study):
        a, b = (case.model_b, case.model_a) if swap else (case.model_a, case.model_b)
        for run in (1, 2):
            lines.append(f"{case.case_id},quality,{a},{b},model_a,{judge},llm,{run},"
                         f"{'model_a' if run == 1 else 'model_b'}")
    return ("\n".join(lines) + "\n" + extra).encode()


def test_the_file_judge_imports_all_or_nothing():
    study = ranked_study()
    items = PreferenceItem.objects.filter(questionnaire__study=study).count()
    runs = judge_runs.judge_run_import(study=study, data=cli_file(study, swap=True), file_name="judged.csv")
    assert len(runs) == 1 and runs[0].kind == JudgeRun.Kind.FILE and runs[0].status == JudgeRun.Status.DONE
    stored = JudgeJudgment.objects.filter(judge_run=runs[0])
    assert stored.count() == runs[0].total == 2 * items and runs[0].name == "gpt-x"
    # the file's model_a was the item's system_b: the winner and the side shown first are turned round
    assert set(stored.values_list("winner", flat=True)) == {"model_b"}
    assert Counter(stored.values_list("shown_first", flat=True)) == {"model_b": items, "model_a": items}
    bad = cli_file(study, judge="other", extra="N9/R0,quality,SysnameA,SysnameB,model_a,other,llm,1,\n"
                   "N0/R0,fluency,SysnameA,SysnameB,model_a,other,llm,1,\n")
    with pytest.raises(ImportFileError) as error:
        judge_runs.judge_run_import(study=study, data=bad, file_name="bad.csv")
    lines = str(error.value).splitlines()
    total = 1 + 2 * items
    assert lines[0].startswith(f'bad.csv:{total + 1}: field "case_id": no item')
    assert any(line.startswith(f"bad.csv:{total + 2}:") for line in lines)
    assert JudgeRun.objects.count() == 1 and JudgeJudgment.objects.count() == 2 * items


def test_a_transformers_run_without_a_model_folder_fails_saying_how_to_provide_one(
        django_capture_on_commit_callbacks, tmp_path):
    study = ranked_study()
    local = JudgeEndpoint.objects.create(name="local", kind="transformers", model_path=str(tmp_path / "no-model"))
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_runs.judge_run_create(study=study, endpoint=local.name, runs=2, criteria=["quality"])
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and "not a model folder" in run.error
    assert run.name == "no-model" and not JudgeJudgment.objects.exists()
