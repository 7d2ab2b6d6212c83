"""Writes: scoring runs stored in the database.

Runs take minutes on large datasets: call :func:`run_execute` from a management command or a task, never from
a request (``manage.py metaeval_run``).
"""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from metaeval import selectors
from metaeval.cli import run_document
from metaeval.core.cache import DistanceCache
from metaeval.core.pipeline import Progress, RunOptions, run_scores
from metaeval.models import MetaevalRun
from survey.models import Dataset, Study


def run_execute(
    *,
    dataset: Dataset,
    study: Study | None = None,
    options: RunOptions,
    user: AbstractBaseUser | None = None,
    cache: DistanceCache | None = None,
    progress: Progress | None = None,
) -> MetaevalRun:
    """Score ``dataset`` (and the HJ variants from ``study``'s ratings when ``options.aux`` names measures) and
    store the run.

    The row is created first (status ``running``) and finished as ``done`` with everything
    :func:`metaeval.cli.run_document` records, or as ``failed`` with the error message, after which the
    exception is re-raised (with a note naming the run). The returned run also carries the in-memory
    :class:`~metaeval.core.pipeline.RunResult` as ``run.result`` (not stored), whose floats keep NaN.
    """
    if study is not None and study.dataset_id != dataset.pk:
        raise ValueError(f'study "{study.slug}" rates dataset "{study.dataset}", not "{dataset.name}"')
    run = MetaevalRun.objects.create(
        dataset=dataset,
        study=study,
        created_by=user if user is not None and user.is_authenticated else None,
        parameters=options.as_dict(),
    )
    try:
        corpus = selectors.corpus_from_dataset(dataset=dataset)
        ratings = selectors.ratings_for_study(study=study) if study is not None and options.aux else None
        run.data_hash = selectors.data_hash(corpus=corpus, ratings=ratings)
        result = run_scores(corpus, options, ratings=ratings, cache=cache, progress=progress)
    except BaseException as exc:
        run.status = MetaevalRun.Status.FAILED
        run.error = str(exc) or type(exc).__name__
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "data_hash", "finished_at"])
        exc.add_note(f"stored as failed metaeval run {run.pk}")
        raise
    document = run_document(result)
    for name in ("parameters", "versions", "timings", "scores", "hj_counts", "distances", "unavailable"):
        setattr(run, name, document[name])
    run.measure_models = document["models"]
    run.status = MetaevalRun.Status.DONE
    run.finished_at = timezone.now()
    run.save()
    run.result = result  # type: ignore[attr-defined]
    return run
