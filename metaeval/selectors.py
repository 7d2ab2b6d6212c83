"""Reads: the database as core types (one selector each way, ARCHITECTURE.md), and stored runs."""
from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Sequence

from django.db.models import QuerySet

from metaeval.core.io.corpus import Corpus, Document, RatingTable, systems_in_order
from metaeval.core.io.fileio import decode_bytes
from metaeval.core.io.loaders import ratings_from_rows
from metaeval.core.pairwise.features import StyleData, parse_style_data
from metaeval.core.pairwise.judgments import JSON_SUFFIXES, JudgmentTable, judgments_from_bytes
from metaeval.models import JudgmentSet, MetaevalRun
from survey.models import RATING_MAX, RATING_MIN, Assignment, Dataset, Study, Summary
from survey.selectors import dataset_systems, participant_of_rater, rater_id, ratings_export_rows


def corpus_from_dataset(*, dataset: Dataset) -> Corpus:
    """The dataset as a :class:`Corpus`: documents in import order (pk), each document's readers in the order
    their first summary was imported, summaries keyed by system name (``"user"`` for the reader's own); every
    id is the external id. Same shape as ``load_corpus`` gives for the file the dataset was imported from.
    """
    summaries: dict[int, dict[str, dict[str, object]]] = {}
    rows = (
        Summary.objects.filter(document__dataset=dataset)
        .order_by("pk")
        .values_list("document_id", "reader__external_id", "system__name", "text")
    )
    for document_id, reader, system, text in rows.iterator(chunk_size=5000):
        summaries.setdefault(document_id, {}).setdefault(reader, {})[system] = text
    documents = tuple(
        Document(doc_id=external_id, headline=headline, body=body, summaries=summaries.get(pk, {}))
        for pk, external_id, headline, body in dataset.documents.order_by("pk").values_list(
            "pk", "external_id", "headline", "body"
        )
    )
    return Corpus(documents=documents, systems=systems_in_order(documents), source=f"dataset {dataset.name}")


def study_scale(*, study: Study) -> tuple[int, int]:
    """The rating scale of every study: RATING_MIN..RATING_MAX (1..6). A study's ``scale_labels`` are validated
    to be one label per point of it (``survey.models.validate_scale_labels``), so the labels never change it."""
    return RATING_MIN, RATING_MAX


def study_rating_rows(*, study: Study, exclude_raters: Iterable[str] = ()) -> list[dict[str, object]]:
    """The study's ratings in the export layout (rater ids, times; completed assignments, export order),
    without those of the raters in ``exclude_raters`` (ids as exported, ``"P12"``, or ``"12"``)."""
    names = list(exclude_raters)
    participants = [participant_of_rater(name) for name in names]
    bad = [name for name, participant in zip(names, participants, strict=True) if participant is None]
    if bad:
        raise ValueError(f"not a rater id: {', '.join(bad)} (write P12 or 12)")
    return list(ratings_export_rows(study=study, exclude_participants=[p for p in participants if p is not None]))


def ratings_for_study(
    *, study: Study, exclude_raters: Iterable[str] = (), rows: Iterable[dict[str, object]] | None = None
) -> RatingTable:
    """The study's ratings as a :class:`RatingTable`: from ``rows`` when the caller already read them with
    :func:`study_rating_rows`, else read here (without ``exclude_raters``)."""
    if rows is None:
        rows = study_rating_rows(study=study, exclude_raters=exclude_raters)
    return ratings_from_rows(rows, source=f"study {study.slug}", scale=study_scale(study=study))


def study_raters(*, study: Study) -> list[str]:
    """Ids (as exported: ``"P12"``) of the study's raters with at least one completed questionnaire, in id order."""
    ids = (
        Assignment.objects.filter(questionnaire__study=study, completed_at__isnull=False)
        .values_list("participant_id", flat=True)
        .distinct()
        .order_by("participant_id")
    )
    return [rater_id(pk) for pk in ids]


def parse_rater_ids(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """``(ids, bad)``: each name written ``P12`` or ``12`` as its export id (first occurrence kept), and the
    names that are not rater ids."""
    ids: list[str] = []
    bad: list[str] = []
    for name in names:
        participant = participant_of_rater(name)
        if participant is None:
            bad.append(name)
        else:
            ids.append(rater_id(participant))
    return list(dict.fromkeys(ids)), bad


def run_request_errors(
    *, dataset: Dataset | None, study: Study | None, aux: Sequence[str], exclude_raters: Sequence[str],
    systems: Sequence[str] = (),
) -> dict[str, str]:
    """Field -> message for a run request whose parts do not fit together: a study of another dataset, auxiliary
    measures or excluded raters without a study, excluded raters who did not rate the study, systems the dataset
    does not have. The run form and the API report these on their fields (``services.run_enqueue`` refuses the
    same requests)."""
    errors: dict[str, str] = {}
    if dataset is not None and systems:
        known = set(dataset_systems(dataset=dataset).values_list("name", flat=True))
        unknown = [name for name in systems if name not in known]
        if unknown:
            errors["systems"] = (f"Not a system of dataset {dataset.name}: {', '.join(unknown)} "
                                 f"(its systems: {', '.join(sorted(known))}).")
    if dataset is not None and study is not None and study.dataset_id != dataset.pk:
        errors["study"] = f'Study "{study.slug}" rates dataset "{study.dataset.name}", not "{dataset.name}".'
    if aux and study is None:
        errors["aux"] = "Aux measures (HJ) need a study whose ratings they use."
    if exclude_raters and study is None:
        errors["exclude_raters"] = "Excluding raters needs a study."
    elif exclude_raters and "study" not in errors:
        known = set(study_raters(study=study))  # type: ignore[arg-type]
        unknown = [rater for rater in exclude_raters if rater not in known]
        if unknown:
            errors["exclude_raters"] = f"Not a rater of {study.slug}: {', '.join(unknown)}."  # type: ignore[union-attr]
    return errors


def data_hash(*, corpus: Corpus, ratings: RatingTable | None = None, judgments_sha256: str | None = None) -> str:
    """SHA-256 (hex) of what a run reads: every document's id, headline, body and summaries in corpus order,
    and the ratings' scale and (doc_id, system, uid1, uid2, rating) rows in order, then the SHA-256 of a
    report's pairwise judgment file when it has one. Rater ids are left out (they are database ids, and no score
    depends on them), so the same data gives the same hash on any database and from the CLI's files.
    """
    digest = hashlib.sha256()

    def add(value: object) -> None:
        digest.update(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        digest.update(b"\n")

    for document in corpus.documents:
        add([document.doc_id, document.headline, document.body, document.summaries])
    if ratings is not None:
        add(["ratings", ratings.scale_min, ratings.scale_max])
        for row in ratings.rows:
            add([row.doc_id, row.system, row.uid1, row.uid2, row.rating])
    if judgments_sha256 is not None:
        add(["judgments", judgments_sha256])
    return digest.hexdigest()


def judgment_table(judgment_set: JudgmentSet) -> JudgmentTable:
    """The stored judgment file of ``judgment_set``, parsed as when it was imported."""
    return judgments_from_bytes(gzip.decompress(bytes(judgment_set.content)), judgment_set.file_name)


def judgment_style(judgment_set: JudgmentSet) -> StyleData:
    """The texts' lengths and other style features the stored judgment file carries (conventions sec. 29; empty
    when it has none). Raises ``ImporterError`` naming the lines where a (case, system) has two values."""
    name = judgment_set.file_name
    text = decode_bytes(gzip.decompress(bytes(judgment_set.content)), name)
    return parse_style_data(text, name, json_lines=name.lower().endswith(JSON_SUFFIXES))


def judgment_sets() -> QuerySet[JudgmentSet]:
    """Every judgment set, by name, without the file's bytes."""
    return JudgmentSet.objects.defer("content").select_related("created_by")


def run_list(
    *, dataset: Dataset | None = None, study: Study | None = None, status: str | None = None
) -> QuerySet[MetaevalRun]:
    """Stored runs, newest first, optionally of one dataset, study or status."""
    runs = MetaevalRun.objects.select_related("dataset", "study", "created_by")
    if dataset is not None:
        runs = runs.filter(dataset=dataset)
    if study is not None:
        runs = runs.filter(study=study)
    if status is not None:
        runs = runs.filter(status=status)
    return runs


def run_get(*, pk: int) -> MetaevalRun:
    """One stored run; raises ``MetaevalRun.DoesNotExist``."""
    return run_list().get(pk=pk)


def run_progress(run: MetaevalRun) -> dict[str, object]:
    """What the run page polls: status, step, done/total (and percent), the last messages, error, times."""
    progress = run.progress if isinstance(run.progress, dict) else {}
    done, total = int(progress.get("done") or 0), int(progress.get("total") or 0)
    if run.status == MetaevalRun.Status.DONE:
        percent = 100.0
    else:
        percent = round(100.0 * min(done, total) / total, 1) if total else 0.0
    return {
        "id": run.pk,
        "status": run.status,
        "finished": not run.is_live,
        "cancel_requested": run.cancel_requested,
        "attempts": run.attempts,
        "step": str(progress.get("step") or ""),
        "done": done,
        "total": total,
        "percent": percent,
        "messages": list(progress.get("messages") or []),
        "error": run.error,
        "created_at": _iso(run.created_at),
        "started_at": _iso(run.started_at),
        "finished_at": _iso(run.finished_at),
    }


def run_record(run: MetaevalRun) -> dict[str, object]:
    """Everything stored about a run as JSON-ready data: who/what/when, then the fields of
    :func:`metaeval.core.io.records.run_document` (``models`` for the measure models) and the data hash."""
    return {
        "id": run.pk,
        "kind": run.kind,
        "status": run.status,
        "dataset": run.dataset.name,
        "study": run.study.slug if run.study is not None else None,
        "created_by": run.created_by.get_username() if run.created_by is not None else None,
        "created_at": _iso(run.created_at),
        "started_at": _iso(run.started_at),
        "finished_at": _iso(run.finished_at),
        "seed": run.seed,
        "excluded_raters": list(run.excluded_raters or []),
        "data_hash": run.data_hash,
        "error": run.error,
        "parameters": run.parameters,
        "versions": run.versions,
        "timings": run.timings,
        "distances": run.distances,
        "scores": run.scores,
        "hj_counts": run.hj_counts,
        "models": run.measure_models,
        "unavailable": run.unavailable,
    }


def _iso(moment) -> str | None:
    return moment.isoformat() if moment is not None else None


def static_text(path: str) -> str:
    """The text of a static file (:func:`metaeval.report_page.static_text`, where the offline report uses it)."""
    from metaeval.report_page import static_text as text

    return text(path)
