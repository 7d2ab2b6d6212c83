"""metaeval.services.run_execute: a stored run holds what the CLI's run document holds; failures are recorded."""
from __future__ import annotations

import math

import pytest
from django.contrib.auth.models import AnonymousUser

from metaeval import selectors, services
from metaeval.core.io.corpus import DataError
from metaeval.core.io.records import run_document
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import COLUMNS, ProgressEvent, RunOptions
from metaeval.models import MetaevalRun
from survey.models import Summary
from tests.conftest import build_dataset, build_study, complete_questionnaires, full_answers

pytestmark = pytest.mark.django_db


def rate_all(study, value: int) -> None:
    """Two participants complete every questionnaire they can claim."""
    complete_questionnaires(study, lambda assignment, index: full_answers(assignment, value), 2)


def test_run_is_stored_with_everything(study, django_user_model):
    rate_all(study, 4)
    user = django_user_model.objects.create_user("researcher")
    options = RunOptions(
        measures=["rouge_l"], aux=["rouge_l"], params=Params(beta=1.7), systems=["SysnameA", "SysnameB"]
    )
    messages: list[str] = []
    run, result = services.run_execute_with_result(
        dataset=study.dataset, study=study, options=options, user=user, progress=messages.append
    )

    stored = MetaevalRun.objects.get(pk=run.pk)
    assert (stored.status, stored.error, stored.created_by, stored.study) == ("done", "", user, study)
    assert stored.finished_at >= stored.created_at and stored.seed is None
    document = run_document(result)
    for name in ("parameters", "versions", "timings", "scores", "hj_counts", "distances"):
        assert getattr(stored, name) == document[name], name
    assert stored.parameters["beta"] == 1.7 and stored.parameters["aux"] == ["rouge_l"]
    assert {"python", "numpy"} <= set(stored.versions) and "total" in stored.timings
    assert [(r["system"], r["measure"]) for r in stored.scores] == [
        ("SysnameA", "rouge_l"), ("SysnameB", "rouge_l"), ("SysnameA", "hj:rouge_l"), ("SysnameB", "hj:rouge_l")
    ]
    assert all(set(row) == set(COLUMNS) for row in stored.scores)  # (PostgreSQL jsonb does not keep key order)
    assert [d["measure"] for d in stored.distances] == ["rouge_l", "rouge_l"]
    assert set(stored.hj_counts["hj:rouge_l"]) == {"SysnameA", "SysnameB"}
    corpus = selectors.corpus_from_dataset(dataset=study.dataset)
    ratings = selectors.ratings_for_study(study=study)
    assert stored.data_hash == selectors.data_hash(corpus=corpus, ratings=ratings)
    assert messages  # progress was reported


def test_nan_is_stored_as_null(db):
    # one reader per document: no reader pairs, so no rows and NaN scores
    dataset = build_dataset(name="single", docs=2, readers=1, systems=["SysnameA"])
    run, result = services.run_execute_with_result(dataset=dataset, options=RunOptions(), user=AnonymousUser())
    row = result.table()[0]
    nan_columns = [key for key, value in row.items() if isinstance(value, float) and math.isnan(value)]
    stored = MetaevalRun.objects.get(pk=run.pk)
    assert stored.created_by is None and stored.data_hash
    assert nan_columns and all(stored.scores[0][key] is None for key in nan_columns)


def test_without_aux_the_study_ratings_are_not_read(study):
    run = services.run_execute(dataset=study.dataset, study=study, options=RunOptions(systems=["SysnameC"]))
    stored = MetaevalRun.objects.get(pk=run.pk)
    assert stored.hj_counts == {} and [r["measure"] for r in stored.scores] == ["rouge_l"]
    assert stored.data_hash == selectors.data_hash(corpus=selectors.corpus_from_dataset(dataset=study.dataset))


def test_unknown_measure_fails_and_is_recorded(dataset):
    before = Summary.objects.count()
    with pytest.raises(ValueError, match="unknown measure 'nope'") as caught:
        services.run_execute(dataset=dataset, options=RunOptions(measures=["rouge_l", "nope"]))
    run = MetaevalRun.objects.get()
    assert (run.status, run.scores, run.timings, run.hj_counts) == ("failed", [], {}, {})
    assert "unknown measure 'nope'" in run.error and run.finished_at is not None
    assert run.parameters["measures"] == ["rouge_l", "nope"] and run.data_hash
    assert f"stored as failed metaeval run {run.pk}" in caught.value.__notes__
    # nothing else is touched, and the next run works
    assert Summary.objects.count() == before
    assert services.run_execute(dataset=dataset, options=RunOptions(systems=["SysnameA"])).status == "done"


def test_missing_summary_fails_with_the_data_error(dataset):
    Summary.objects.filter(system__name="SysnameB", reader__external_id="R1", document__external_id="N2").delete()
    with pytest.raises(DataError, match='document "N2", reader "R1": no "SysnameB" summary'):
        services.run_execute(dataset=dataset, options=RunOptions(missing="error"))
    run = MetaevalRun.objects.get()
    # stored in the run form's words (the exception keeps the command line's fix)
    assert run.status == "failed" and 'document "N2" has no "SysnameB" summary for reader "R1"' in run.error
    assert "--missing" not in run.error
    dropped = services.run_execute(dataset=dataset, options=RunOptions(missing="drop", systems=["SysnameB"]))
    assert dropped.status == "done" and dropped.scores[0]["documents"] == 3
    assert dropped.scores[0]["readers"] == 3 + 3 + 2


def test_study_of_another_dataset_is_refused(study):
    other = build_dataset(name="other", docs=1)
    with pytest.raises(ValueError, match='study "study" rates dataset "tiny", not "other"'):
        services.run_execute(dataset=other, study=study, options=RunOptions())
    assert not MetaevalRun.objects.exists()


def test_ratings_from_another_study_stay_out(dataset):
    rated, other = build_study(dataset, slug="rated"), build_study(dataset, slug="other")
    rate_all(rated, 2)
    rate_all(other, 6)
    options = RunOptions(aux=["rouge_l"], systems=["SysnameD"])
    run = services.run_execute(dataset=dataset, study=rated, options=options)
    counts = run.hj_counts["hj:rouge_l"]["SysnameD"]
    assert counts["rated_pairs"] > 0
    assert run.data_hash == selectors.data_hash(
        corpus=selectors.corpus_from_dataset(dataset=dataset), ratings=selectors.ratings_for_study(study=rated)
    )


def test_progress_events_carry_kind_step_and_counts(study):
    """The pipeline reports typed events; the recorder counts ``finished`` events, whatever the words say."""
    rate_all(study, 4)
    events: list[ProgressEvent] = []
    options = RunOptions(measures=["rouge_l", "jsd"], aux=["rouge_l"], systems=["SysnameA"])
    run = services.run_execute(dataset=study.dataset, study=study, options=options, progress=events.append)
    assert [(event.kind, event.step) for event in events] == [
        ("info", "plan"), ("started", "rouge_l"), ("finished", "rouge_l"), ("started", "jsd"), ("finished", "jsd"),
        ("started", "hj:rouge_l"), ("finished", "hj:rouge_l"),
    ]
    finished = [event for event in events if event.kind == "finished"]
    assert all({"computed", "cached", "seconds"} <= set(event.counts) for event in finished)
    assert run.progress["done"] == run.progress["total"] == 1 + 3 and run.progress["step"] == "done"

    recorder = services.ProgressRecorder(run, total=3)
    recorder.data_loaded()
    recorder(ProgressEvent("info", "plan", "quite different words"))
    recorder(ProgressEvent("started", "x", "anything at all"))
    assert recorder.state["done"] == 1
    recorder(ProgressEvent("finished", "x", "no counting words here"))
    assert recorder.state["done"] == 2 and recorder.state["step"] == "no counting words here"


@pytest.mark.parametrize("outcome", ["done", "failed"])
def test_a_worker_whose_run_went_to_another_worker_writes_nothing_at_the_end(dataset, monkeypatch, outcome):
    """The last check of the lease and the final write are not one step: a worker whose run another worker took
    over in between (its heartbeat had not noticed yet) must not overwrite that worker's row, done or failed."""
    run = services.run_enqueue(dataset=dataset, options=RunOptions(measures=["rouge_l"], workers=1))
    monkeypatch.setattr(services.RunLease, "check", lambda self: None)  # the heartbeat has not noticed yet

    def taken_over(event: ProgressEvent) -> None:
        if event.kind == "finished" or outcome == "failed":
            MetaevalRun.objects.filter(pk=run.pk).update(worker="other:2", attempts=2)
        if outcome == "failed":
            raise RuntimeError("boom")

    with pytest.raises(services.RunLeaseLost, match="another worker has it"):
        services.run_process(run.pk, worker="first:1", use_cache=False, progress=taken_over)
    run.refresh_from_db()
    assert (run.status, run.worker, run.scores, run.error) == ("running", "other:2", [], "")
